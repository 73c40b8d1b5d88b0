//===- NetBuilder.h - neural-network pieces as attn/linalg IR ---*- C++ -*-===//
//
// The layers the model builders compose, each emitted as linalg-on-tensors
// (contractions, elementwise generics, row reductions) or as an attn op, so
// that the attn pipelines tile and vectorize them like any other IR. Weights
// are slices of the packed `tensor<P x f32>` argument of @forward.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_MODELS_NETBUILDER_H
#define ATTN_LIB_MODELS_NETBUILDER_H

#include "dialect/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir::attn {

class Model;

/// Mask options of an attention layer (those of attn.sdpa a model uses).
struct AttentionMask {
  MaskKind kind = MaskKind::dense;
  std::optional<int64_t> windowLeft, windowRight, relClip;
  Value kvLengths; ///< B x i64 key lengths (padding), optional
  Value relBias;   ///< H x (2R+1) relative-position bias, optional
};

class NetBuilder {
public:
  NetBuilder(OpBuilder &b, Location loc, const Model &model, Value weights);

  OpBuilder &builder() { return b; }
  Location getLoc() const { return loc; }
  Type f32() const { return b.getF32Type(); }

  /// The weight named `name`, shaped as the model declares it.
  Value weight(llvm::StringRef name);
  /// `weight(name)` if the model declares it, else null.
  Value optionalWeight(llvm::StringRef name);

  /// An uninitialised f32 tensor.
  Value empty(ArrayRef<int64_t> shape);
  /// Reshapes (static shapes, row-major order preserved).
  Value reshape(Value x, ArrayRef<int64_t> shape);
  /// out[i_perm[0], ...] = x[i_0, ...]: dim `d` of the result is dim
  /// `perm[d]` of `x`.
  Value transpose(Value x, ArrayRef<unsigned> perm);
  /// The tensors stacked along dim 0 (equal trailing shapes).
  Value concat(ArrayRef<Value> parts);

  /// x @ w^T + bias over the last dim of `x` (torch.nn.Linear: w is
  /// out x in). `bias` may be null.
  Value linear(Value x, Value w, Value bias);
  /// linear() for a few rows (a decode step): w is read along its rows (a
  /// dot product per output) instead of transposed per call, which costs
  /// more than the product when x has few rows.
  Value linearFewRows(Value x, Value w, Value bias);
  /// x @ w + bias (GPT-2's Conv1D: w is in x out).
  Value conv1d(Value x, Value w, Value bias);
  /// LayerNorm over the last dim with gain and bias.
  Value layerNorm(Value x, Value gain, Value bias, double eps);

  Value add(Value a, Value c);
  /// x + bias[last dim] (bias shaped like the last dim), or with `biasDims`
  /// the dims of `x` that `bias` spans, in order.
  Value addBroadcast(Value x, Value bias, ArrayRef<unsigned> biasDims);
  Value gelu(Value x);     ///< exact (erf) GELU, torch's default
  Value geluTanh(Value x); ///< tanh approximation (GPT-2's gelu_new)
  Value relu(Value x);
  Value elu(Value x); ///< alpha = 1
  /// "gelu" (erf), "gelu_new" (tanh) or "relu", by the name a config uses.
  Value activation(llvm::StringRef name, Value x);

  /// Layer `index` of a stack of layers, as a call of a function of its
  /// own: `body` builds the layer with a NetBuilder of its own from `args`
  /// (every value of the caller it reads; it may not use others) and
  /// `prefix(index)`, the prefix of the weights it reads by name. A layer
  /// whose weights under its prefix have the same names, shapes and
  /// relative placement in the packed buffer as those of the layer that
  /// built the stack's current function, and whose `args` have the same
  /// types, calls that function (`@<caller>_<stack>`), passing the offset of
  /// its weights relative to that layer's and its index (`layerIndex()` in
  /// the body); a layer unlike it builds a function of its own
  /// (`@<caller>_<stack>_<index>`), which the layers after it may share.
  /// So the module a model compiles to does not grow with its depth
  /// (bufferization and the LLVM conversions are superlinear in the ops of
  /// a function and a module: a 32-layer GPT of width 16 took 13 s to lower
  /// with its layers inline, 64 layers 30 s).
  SmallVector<Value>
  layer(llvm::StringRef stack, int64_t index,
        llvm::function_ref<std::string(int64_t)> prefix, ValueRange args,
        llvm::function_ref<SmallVector<Value>(NetBuilder &, llvm::StringRef,
                                              ValueRange)>
            body);
  /// Inside a layer's body: the index of the layer being computed (the
  /// layer function's argument); 0 outside layers.
  OpFoldResult layerIndex() const { return layerIdx; }

  /// Self-attention as attn.mha (PyTorch in_proj/out_proj packing).
  Value selfAttention(Value x, Value inW, Value inB, Value outW, Value outB,
                      int64_t heads, const AttentionMask &mask);

private:
  /// Applies `fn(x)` elementwise.
  Value map(Value x, llvm::function_ref<Value(OpBuilder &, Location, Value)> fn);
  /// x as rows x last-dim.
  Value flatten(Value x);
  /// Sum over the last dim of the 2-d `x`, of `fn(x, rowInput)` per element
  /// (rowInput: an optional per-row value).
  Value rowSum(Value x, Value rowInput,
               llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> fn);

  /// The offset of layer `to`'s weights relative to layer `from`'s when
  /// both prefixes name the same weights (names after the prefix, shapes)
  /// at the same relative offsets; none otherwise.
  std::optional<int64_t> layerShift(llvm::StringRef from,
                                    llvm::StringRef to) const;

  OpBuilder &b;
  Location loc;
  const Model &model;
  Value weights;
  /// In a layer function: the prefix its body reads weights by, the offset
  /// added to theirs (the function's argument) and the layer's index.
  std::string layerPrefix;
  Value weightShift;
  OpFoldResult layerIdx;
  /// The layer functions built from this builder's function, by stack:
  /// the function and the prefix its body was built with.
  llvm::StringMap<std::pair<Operation *, std::string>> layerFunctions;
};

} // namespace mlir::attn

#endif // ATTN_LIB_MODELS_NETBUILDER_H
