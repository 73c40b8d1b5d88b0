//===- Model.h - model descriptions and their MLIR builders -----*- C++ -*-===//
//
// A model description (JSON: vit, transformer-encoder, gpt, gat) parsed and
// checked into a Model, which knows its run-time inputs, the weights it reads
// (PyTorch state_dict names and shapes) and builds the `func` + `attn` +
// `linalg` module that computes it. The module's entry point is
//
//   func.func @forward(<inputs...>, %weights: tensor<P x f32>) -> <output>
//
// where `weights` packs every weight, in Model::weights() order, at
// Model::weightOffset(i) (64-byte aligned). docs/models.md documents every
// field of every kind.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_MODELS_MODEL_H
#define ATTN_LIB_MODELS_MODEL_H

#include "lib/Runtime/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::attn {

class NetBuilder;

/// A named tensor the model reads: a run-time input or a weight.
struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  llvm::SmallVector<int64_t, 4> shape;
  int64_t numElements() const;
  /// "[2, 3, 4]".
  std::string shapeString() const;
};

/// A function of a compiled model: its run-time inputs (the packed weights
/// follow them) and results.
struct EntryPoint {
  std::string name;
  std::vector<TensorSpec> inputs, results;
};

/// Settings given on the command line that override the description's.
struct ModelOverrides {
  /// Batch size compiled into the entry point (0: the description's).
  int64_t batch = 0;
  /// Sequence length compiled into gpt and transformer-encoder models (0:
  /// the description's `seq_len`; a Hugging Face GPT-2's `n_positions`).
  int64_t seqLen = 0;
};

class Model {
public:
  virtual ~Model();

  /// Parses and checks the description at `path`: a JSON description, or a
  /// Hugging Face model folder (or its config.json; GPT-2 and ViT). Errors
  /// name the file, the line and the key.
  static llvm::Expected<std::unique_ptr<Model>>
  load(llvm::StringRef path, const ModelOverrides &overrides = {});

  /// "vit", "transformer-encoder", "gpt" or "gat".
  llvm::StringRef kind() const { return kindName; }
  /// Run-time inputs, in argument order (before the weights).
  llvm::ArrayRef<TensorSpec> inputs() const { return inputSpecs; }
  /// Weights, in packing order.
  llvm::ArrayRef<TensorSpec> weights() const { return weightSpecs; }
  /// The index of the weight named `name` in weights(), if declared.
  std::optional<size_t> findWeight(llvm::StringRef name) const;
  /// Offset (in elements) of weight `i` in the packed buffer.
  int64_t weightOffset(size_t i) const { return offsets[i]; }
  /// Elements of the packed weight buffer.
  int64_t packedWeightElements() const { return packedElements; }
  const TensorSpec &output() const { return outputSpec; }
  /// @forward's results after the output: gat's per-edge attention weights
  /// (`attention_weights`, E' x H) when a layer returns them.
  llvm::ArrayRef<TensorSpec> extraOutputs() const { return extraOutputSpecs; }
  /// Puts extra output `k` in the caller's order (gat: PyG's edge order).
  virtual void finishExtraOutput(size_t k, HostTensor &tensor) const {}
  /// The edges of gat's attention weights, 2 x E' (PyG's edge_index with
  /// the self loops it adds), when a layer returns them.
  virtual std::optional<HostTensor> attentionEdges() const {
    return std::nullopt;
  }
  /// The checkpoint a Hugging Face folder carries (model.safetensors, or
  /// model.safetensors.index.json for shards), "" for a JSON description.
  llvm::StringRef folderCheckpoint() const { return checkpointFile; }
  /// The Hugging Face folder the model was read from, "" for a description.
  llvm::StringRef folder() const { return folderPath; }
  /// The name a checkpoint may use instead of weight `name`: Hugging Face
  /// checkpoints of a model with a head prefix the base model's weights
  /// ("transformer.", "vit."), those of the base model do not; "" when there
  /// is no alternative.
  std::string alternativeName(llvm::StringRef name) const;

  /// Items per call (images, sequences; nodes for gat) and what they are.
  int64_t batch() const { return batchSize; }
  llvm::StringRef itemName() const { return items; }
  /// True when inputs and the output share a leading batch dimension, so
  /// that a larger input can run in batch-sized chunks.
  bool chunkable() const { return chunks; }

  /// A sequence dimension inputs may be shorter in: they are right-padded to
  /// the compiled length and the output cut back (gpt: under causal
  /// attention a position never sees later ones, so the padding is exact).
  struct PaddedSequence {
    size_t input;
    unsigned inputDim, outputDim;
  };
  std::optional<PaddedSequence> paddedSequence() const { return padded; }
  /// After inputs of `length` positions were padded: the model's own
  /// adjustment (transformer-encoder: generated `lengths` become `length`,
  /// given ones must not exceed it). `given[i]`: input i came from a file.
  virtual llvm::Error fitToLength(std::vector<HostTensor> &inputs,
                                  const std::vector<bool> &given,
                                  int64_t length) const {
    return llvm::Error::success();
  }

  /// Builds the module with the entry point @forward.
  OwningOpRef<ModuleOp> build(MLIRContext &ctx) const;

  /// Token-by-token generation (gpt with a language-model head) over a K/V
  /// cache of cacheLength() positions:
  ///   @prefill(tokens: B x P i64, weights)
  ///       -> (logits: B x P x V, kv: layers x 2 x B x H x P x hd)
  ///   @decode(token: B x 1 i64, position: B i64,
  ///           cache: layers x 2 x B x H x cacheLength x hd, weights)
  ///       -> (logits: B x V, kv: layers x 2 x B x H x hd)
  /// `position[b]` is the new token's position, i.e. how many cache rows of
  /// sequence b are valid; the caller writes the returned kv rows there.
  /// Empty when the model cannot generate.
  virtual std::vector<EntryPoint> generationEntryPoints(int64_t prefillLength) const {
    return {};
  }
  /// Positions of the K/V cache @decode reads (the compiled length).
  virtual int64_t cacheLength() const { return 0; }
  /// Adds the generation entry points to `module` (a module from build(),
  /// or an empty one).
  void addGeneration(ModuleOp module, int64_t prefillLength) const;

  /// The input used when none is given: seeded data, or what the
  /// description names (gat: the graph's CSR). `seed` makes it repeatable.
  virtual llvm::Expected<HostTensor> defaultInput(size_t index,
                                                  uint64_t seed) const;
  /// Checks the values of input `index` (token ids in range, lengths in
  /// range, ...); shapes and dtypes are checked by the caller.
  virtual llvm::Error validateInput(size_t index,
                                    const HostTensor &tensor) const;
  /// Rewrites the whole inputs before a run (after validateInput accepted
  /// them): gat with `reorder: rcm` renumbers nodes here.
  virtual void prepareInputs(std::vector<HostTensor> &inputs) const;
  /// Undoes prepareInputs on the whole output (gat: back to the original
  /// node numbering).
  virtual void finishOutput(HostTensor &output) const;
  /// Lines worth printing about the compiled model (graph sizes, block
  /// densities before and after reordering, ...).
  virtual std::vector<std::string> notes() const { return {}; }

  /// The deterministic initial value of weight `index` (no checkpoint).
  virtual void initWeight(size_t index, float *data, uint64_t seed) const;

  /// Whether a checkpoint tensor `name` that no weight reads may stay unread
  /// (packWeights refuses other unread tensors): buffers Hugging Face
  /// checkpoints store (GPT-2's attention masks), and the head or pooler of
  /// the other model of a base model's checkpoints (either serves either).
  virtual bool ignoresUnreadTensor(llvm::StringRef name) const {
    return false;
  }

protected:
  Model() = default;
  /// Emits the body of @forward: `args` are the inputs, then the weights.
  virtual Value buildForward(NetBuilder &net, ValueRange inputs) const = 0;
  /// @forward's results: the output, then the extra outputs.
  virtual SmallVector<Value> buildForwardResults(NetBuilder &net,
                                                 ValueRange inputs) const {
    return {buildForward(net, inputs)};
  }
  /// Emits the body of generation entry point `entry` (its results).
  virtual SmallVector<Value> buildEntry(NetBuilder &net, const EntryPoint &entry,
                                        ValueRange inputs) const {
    return {};
  }
  /// Adds `entry` to `module`, its body from `body`.
  void addFunction(
      ModuleOp module, const EntryPoint &entry,
      llvm::function_ref<SmallVector<Value>(NetBuilder &, ValueRange)> body) const;

  std::string kindName, items = "items";
  std::vector<TensorSpec> inputSpecs, weightSpecs;
  TensorSpec outputSpec;
  std::vector<TensorSpec> extraOutputSpecs;
  int64_t batchSize = 1;
  bool chunks = true;
  std::string checkpointFile, folderPath;
  std::optional<PaddedSequence> padded;
  /// The base model's prefix in Hugging Face checkpoints ("" elsewhere).
  std::string basePrefix;

  /// Computes the packed layout of `weightSpecs`; called once they are set
  /// and checked.
  void setLayout();
  /// Checks the bytes of every input, weight and the output (checked
  /// products) and their sum against the memory budget.
  llvm::Error checkSizes(llvm::StringRef path) const;

private:
  std::vector<int64_t> offsets;
  llvm::StringMap<size_t> weightIndex;
  int64_t packedElements = 0;
};

struct Checkpoint;

/// The packed weight buffer of `model`: each weight from `checkpoint` (by its
/// PyTorch name), or, without a checkpoint, the model's seeded
/// initialisation. A missing tensor, or one with the wrong shape or dtype,
/// is an error naming the tensor and both shapes; so is a tensor no weight
/// reads (as PyTorch's load_state_dict(strict=True): a checkpoint of more
/// layers, or a final norm the description forgot), except those
/// Model::ignoresUnreadTensor allows.
llvm::Expected<HostTensor> packWeights(const Model &model,
                                       const Checkpoint *checkpoint,
                                       uint64_t seed);

} // namespace mlir::attn

#endif // ATTN_LIB_MODELS_MODEL_H
