//===- attn-compile.cpp - the model driver --------------------------------===//
//
// Compiles a model description (vit, transformer-encoder, gpt, gat; see
// docs/models.md) through the attn pipelines. With --run it JIT-compiles the
// model, loads the weights (safetensors, PyTorch names) or a seeded
// initialisation, runs it on the inputs (.npy or IDX; larger inputs in
// batch-sized chunks), prints the time of each stage and the throughput, and
// with --labels the accuracy. With --emit it writes any stage of the road:
// attn IR, linalg IR, the LLVM dialect, LLVM IR, assembly, or an object file
// plus a C header declaring its entry point.
//
//===----------------------------------------------------------------------===//

#include "lib/Models/Model.h"
#include "lib/Models/SpecReader.h"
#include "lib/Runtime/Budget.h"
#include "lib/Transforms/OptionBounds.h"
#include "lib/Runtime/GpuDevice.h"
#include "lib/Runtime/Jit.h"
#include "lib/Runtime/Json.h"
#include "lib/Runtime/Tensor.h"
#include "lib/Runtime/Tuner.h"
#include "lib/Runtime/Weights.h"
#include "lib/Target/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-compile options");

static cl::opt<std::string> specFile(
    cl::Positional,
    cl::desc("<model description .json, or a Hugging Face model folder>"),
                                     cl::Required, cl::cat(category));
static cl::opt<bool> run("run",
                         cl::desc("JIT-compile and run the model, printing the "
                                  "time of each stage and the throughput"),
                         cl::cat(category));
static cl::opt<std::string>
    weightsFile("weights",
                cl::desc("Weights as a .safetensors file with the model's "
                         "PyTorch names, or a sharded checkpoint's "
                         "model.safetensors.index.json (default: a Hugging "
                         "Face folder's own, else a seeded initialisation)"),
                cl::value_desc("FILE.safetensors"), cl::cat(category));
static cl::list<std::string> inputFiles(
    "input",
    cl::desc("Input NAME from a .npy or IDX (-ubyte[.gz]) file; IDX bytes "
             "become floats in [0, 1]. A leading dimension larger than the "
             "batch runs in batch-sized chunks. Others are seeded"),
    cl::value_desc("NAME=FILE"), cl::cat(category));
static cl::opt<std::string>
    labelsFile("labels",
               cl::desc("Class labels (.npy or IDX): print the accuracy of "
                        "the argmax of the output's last dimension"),
               cl::value_desc("FILE"), cl::cat(category));
static cl::opt<std::string> attentionWeightsFile(
    "attention-weights",
    cl::desc("gat with a layer's return_attention_weights: write its "
             "coefficients (E' x heads, PyG's edge order, self loops "
             "included) as .npy"),
    cl::value_desc("FILE.npy"), cl::cat(category));
static cl::opt<std::string> attentionEdgesFile(
    "attention-edges",
    cl::desc("gat with return_attention_weights: write the coefficients' "
             "edges (2 x E' i64: PyG's edge_index with its self loops) as "
             ".npy"),
    cl::value_desc("FILE.npy"), cl::cat(category));
static cl::opt<std::string> outputFile("output",
                                       cl::desc("Write the output as .npy"),
                                       cl::value_desc("FILE.npy"),
                                       cl::cat(category));
enum class Emit {
  none,
  attn,
  linalg,
  llvm,
  llvmIR,
  obj,
  assembly,
  spirv,
  ptx,
  cubin
};
static cl::opt<Emit> emit(
    "emit", cl::desc("Write a stage of the compilation to -o"),
    cl::values(clEnumValN(Emit::attn, "attn", "the model as attn/linalg IR"),
               clEnumValN(Emit::linalg, "linalg",
                          "after the attn lowerings (linalg on tensors)"),
               clEnumValN(Emit::llvm, "llvm", "the LLVM dialect"),
               clEnumValN(Emit::llvmIR, "llvm-ir", "LLVM IR"),
               clEnumValN(Emit::obj, "obj",
                          "an object file for the host CPU, plus FILE.h "
                          "declaring its entry point and weight layout"),
               clEnumValN(Emit::assembly, "asm", "host assembly"),
               clEnumValN(Emit::spirv, "spirv",
                          "the attention kernels as SPIR-V binaries "
                          "(--target=vulkan)"),
               clEnumValN(Emit::ptx, "ptx",
                          "the attention kernels as PTX (--target=cuda)"),
               clEnumValN(Emit::cubin, "cubin",
                          "the attention kernels as CUDA binaries for "
                          "--gpu-chip (--target=cuda; the CUDA toolkit's "
                          "ptxas assembles the PTX)")),
    cl::init(Emit::none), cl::cat(category));
static cl::opt<std::string> outFile("o", cl::desc("Output file of --emit"),
                                    cl::value_desc("FILE"), cl::init("-"),
                                    cl::cat(category));
static cl::opt<std::string>
    packedWeightsFile("save-packed-weights",
                      cl::desc("Write the packed weight buffer (raw "
                               "little-endian f32, the layout of --emit=obj's "
                               "header) for an AOT caller"),
                      cl::value_desc("FILE.bin"), cl::cat(category));
static cl::opt<int64_t>
    seqLen("seq-len",
           cl::desc("Sequence length compiled into gpt and "
                    "transformer-encoder models (default: the description's "
                    "seq_len; a Hugging Face GPT-2's n_positions). Shorter gpt "
                    "token inputs are padded to it"),
           cl::init(0), cl::cat(category));
static cl::opt<int64_t> generate(
    "generate",
    cl::desc("gpt: generate N tokens greedily after the prompt (--prompt or "
             "--input tokens=FILE.npy) with the compiled @prefill and @decode "
             "entry points over a K/V cache of --seq-len positions; prints "
             "the tokens and the tokens/s of prefill and decode. With --emit, "
             "adds @prefill and @decode to the module and the header"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<std::string>
    prompt("prompt",
           cl::desc("The prompt of --generate: token ids, comma-separated "
                    "(one sequence)"),
           cl::value_desc("ID,ID,..."), cl::cat(category));
static cl::opt<std::string>
    scoresFile("scores",
               cl::desc("--generate: write the logits of every generated "
                        "position (B x N x vocab) as .npy"),
               cl::value_desc("FILE.npy"), cl::cat(category));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Batch size compiled into the model "
                                       "(default: the description's)"),
                              cl::init(0), cl::cat(category));
static cl::opt<std::string>
    gpuTarget("target",
              cl::desc("Where attention runs: cpu (default), vulkan (SPIR-V "
                       "on a Vulkan 1.3 device) or cuda (PTX on an NVIDIA "
                       "GPU), through attn-gpu-pipeline; the rest of the "
                       "model stays on the CPU"),
              cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    gpuChip("gpu-chip",
            cl::desc("NVIDIA architecture of --target=cuda without a device "
                     "(--emit=ptx; default: the device's, else sm_80)"),
            cl::cat(category));
static cl::opt<int64_t> gpuSubgroupSize(
    "gpu-subgroup-size",
    cl::desc("Subgroup size the kernels are compiled for (default: the "
             "device's; without one, 8 for vulkan (lavapipe) and 32 for "
             "cuda)"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string>
    pipelineName("pipeline",
                 cl::desc("attn-cpu-pipeline (fused, tiled, vectorized) or "
                          "attn-reference-pipeline (the reference lowering)"),
                 cl::init("attn-cpu-pipeline"), cl::cat(category));
static cl::opt<int64_t> blockQ("block-q",
                               cl::desc("Query rows per tile (0: from the "
                                        "target)"),
                               cl::init(0), cl::cat(category));
static cl::opt<int64_t> blockK("block-k",
                               cl::desc("Key rows per tile (0: from the "
                                        "target)"),
                               cl::init(0), cl::cat(category));
static cl::opt<bool>
    tune("tune",
         cl::desc("Sweep block-q / block-k / register tiles for this model, "
                  "target and --num-threads on this machine and store the "
                  "fastest in the tuning cache (used when no tile option is "
                  "given)"),
         cl::cat(category));
static cl::opt<std::string>
    tuningCache("tuning-cache",
                cl::desc("Tuning cache file (default: $ATTN_TUNING_CACHE or "
                         "~/.cache/attn-mlir/tuning.json)"),
                cl::value_desc("FILE.json"), cl::cat(category));
static cl::opt<std::string>
    targetTriple("target-triple",
                 cl::desc("LLVM target triple of --emit=asm|obj (default: "
                          "the host's), e.g. aarch64-linux-gnu"),
                 cl::cat(category));
static cl::opt<std::string>
    targetCpu("target-cpu",
              cl::desc("CPU to compile for, as llc's -mcpu (default: this "
                       "machine); --run needs one this machine runs"),
              cl::init("host"), cl::cat(category));
static cl::opt<std::string>
    targetFeatures("target-features",
                   cl::desc("+feature / -feature list, as llc's -mattr"),
                   cl::cat(category));
static cl::opt<int64_t> gatEdgeBlock("gat-edge-block",
                                     cl::desc("In-edges per GAT online-softmax "
                                              "step"),
                                     cl::init(16), cl::cat(category));
static cl::opt<int64_t>
    threads("num-threads",
            cl::desc("OpenMP threads of the parallel loops inside one call "
                     "(1: sequential, objects then need no OpenMP runtime; "
                     "0: the OpenMP runtime's default)"),
            cl::init(1), cl::cat(category));
static cl::opt<unsigned>
    workers("workers",
            cl::desc("Batch-sized chunks run concurrently, one per thread "
                     "(data-parallel inference)"),
            cl::init(1), cl::cat(category));
static cl::opt<bool> vectorize("vectorize",
                               cl::desc("Register-tile and vectorize "
                                        "(attn-cpu-pipeline)"),
                               cl::init(true), cl::cat(category));
static cl::opt<std::string> memoryBudgetOption(
    "memory-budget",
    cl::desc("Most bytes the model's inputs, weights and output of one call "
             "(and any one value of the compiled function) may take, checked "
             "before allocating (e.g. 8G, 512M; default: $ATTN_MEMORY_BUDGET "
             "or half of the memory this process may use)"),
    cl::value_desc("SIZE"), cl::cat(category));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed of the initialisation and of "
                                       "generated inputs"),
                              cl::init(1), cl::cat(category));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Timed runs over the inputs (the "
                                         "best is reported)"),
                                cl::init(1), cl::cat(category));
static cl::opt<std::string>
    reference("reference",
              cl::desc("A JSON file whose \"test_accuracy\" (recorded by "
                       "the training script) is printed next to the "
                       "accuracy"),
              cl::value_desc("FILE.json"), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-compile: error: " << message << "\n";
  return 1;
}
static int fail(llvm::Error err) {
  return fail(llvm::toString(std::move(err)));
}

/// Keeps `out`, written to `path`, once its bytes are out: a full disk or a
/// device that refuses writes is one error naming the file, not LLVM's
/// report when the stream closes. A regular file left half written is
/// removed (a device is not).
static llvm::Error keepOutput(llvm::ToolOutputFile &out, llvm::StringRef path) {
  out.os().flush();
  out.keep();
  if (!out.os().has_error())
    return llvm::Error::success();
  std::error_code ec = out.os().error();
  out.os().clear_error();
  if (llvm::sys::fs::is_regular_file(path))
    llvm::sys::fs::remove(path);
  return llvm::createStringError(ec, "%s: cannot write: %s", path.str().c_str(),
                                 ec.message().c_str());
}

/// The C header that --emit=obj writes beside FILE: FILE's stem + ".h".
static std::string headerPathFor(llvm::StringRef objectPath) {
  llvm::StringRef dir = llvm::sys::path::parent_path(objectPath);
  std::string stem = (llvm::sys::path::stem(objectPath) + ".h").str();
  return dir.empty() ? stem : (dir + "/" + stem).str();
}

/// Whether two output paths name one file (the same path once absolute and
/// without dots, or an existing file reached twice). A device such as
/// /dev/null keeps no bytes to overwrite: never one file.
static bool sameFile(llvm::StringRef a, llvm::StringRef b) {
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(a, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file)
    return false;
  auto normal = [](llvm::StringRef p) {
    llvm::SmallString<256> path(p);
    llvm::sys::fs::make_absolute(path);
    llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
    return std::string(path);
  };
  bool equivalent = false;
  return normal(a) == normal(b) ||
         (!llvm::sys::fs::equivalent(a, b, equivalent) && equivalent);
}

static double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// The textual pipeline that lowers the model to the LLVM dialect, or with
/// `linalgOnly` only through the attn lowerings (--emit=linalg).
/// Tile options of the CPU pipeline: --block-q / --block-k, else a tuning
/// cache entry for this model, target and thread count, else the target's
/// heuristic (zeros); `tilesFrom` says which.
static TileChoice tiles;
static std::string tilesFrom = "the target's heuristic";

/// The GPU of --target, when it is not the CPU: the device found (for --run)
/// or what --gpu-chip / --gpu-subgroup-size say (for --emit without one).
static std::optional<GpuDevice> gpuDevice;

static std::string pipelineText(bool linalgOnly = false) {
  if (gpuDevice) {
    std::string text = gpuDevice->pipeline();
    if (linalgOnly)
      text.insert(text.size() - 1, " linalg-only=true");
    return text;
  }
  if (pipelineName == "attn-reference-pipeline")
    return linalgOnly ? "attn-reference-pipeline{linalg-only=true}"
                      : "attn-reference-pipeline";
  return llvm::formatv("attn-cpu-pipeline{{{0} "
                       "gat-edge-block={1} threads={2} vectorize={3}{4}}",
                       tiles.pipelineOptions(), gatEdgeBlock, threads,
                       vectorize ? "true" : "false",
                       linalgOnly ? " linalg-only=true" : "")
      .str();
}

static std::string cachePath() {
  return tuningCache.empty() ? TuningCache::defaultPath()
                             : std::string(tuningCache);
}

/// Runs `pipeline` on `module` with the command line's pass-manager options
/// (--mlir-print-ir-*, --mlir-timing).
static LogicalResult runPipeline(ModuleOp module, llvm::StringRef pipeline) {
  auto pm = PassManager::on<ModuleOp>(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return failure();
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  return pm.run(module);
}

/// Per-item shape equality after dropping size-1 dims (an IDX image file
/// N x 28 x 28 feeds a B x 1 x 28 x 28 input).
static bool sameItemShape(llvm::ArrayRef<int64_t> a,
                          llvm::ArrayRef<int64_t> b) {
  auto squeeze = [](llvm::ArrayRef<int64_t> s) {
    llvm::SmallVector<int64_t> out;
    for (int64_t d : s)
      if (d != 1)
        out.push_back(d);
    return out;
  };
  return squeeze(a) == squeeze(b);
}

/// Loads a .npy or IDX file as `spec`'s dtype (floats to f32, integers to
/// i32/i64; IDX bytes to [0, 1] floats).
static llvm::Expected<HostTensor> loadData(llvm::StringRef path, DType want,
                                           llvm::StringRef what) {
  bool idx = isIdxPath(path);
  llvm::Expected<HostTensor> t = idx ? readIdx(path) : readNpy(path);
  if (!t)
    return t.takeError();
  bool srcFloat = t->dtype() == DType::f32 || t->dtype() == DType::f64 ||
                  t->dtype() == DType::f16 || t->dtype() == DType::bf16;
  bool dstFloat = want == DType::f32 || want == DType::f64;
  if (srcFloat && !dstFloat)
    return llvm::createStringError("%s: %s holds %s values, expected integers "
                                   "(%s)",
                                   path.str().c_str(), what.str().c_str(),
                                   dtypeName(t->dtype()).str().c_str(),
                                   dtypeName(want).str().c_str());
  if (t->dtype() == want && !(idx && dstFloat))
    return std::move(*t);
  // The converted copy and the file's tensor are held together.
  if (llvm::Error err =
          checkBudget(t->numBytes() + static_cast<uint64_t>(t->numElements()) *
                                          dtypeSize(want),
                      path + ": " + what + " (" + t->typeString() +
                          ", converted to " + dtypeName(want) + ")"))
    return std::move(err);
  HostTensor out(want, t->shape());
  for (int64_t i = 0; i < t->numElements(); ++i) {
    if (dstFloat)
      out.setDouble(i, idx ? t->getDouble(i) / 255.0 : t->getDouble(i));
    else
      out.setInt(i, t->getInt(i));
  }
  return out;
}

/// `t` with dim `dim` resized to `size`: cut, or zero-padded at the end.
static HostTensor resizeDim(const HostTensor &t, unsigned dim, int64_t size) {
  llvm::SmallVector<int64_t> shape(t.shape());
  int64_t outer = 1, inner = dtypeSize(t.dtype()); // inner: bytes
  for (unsigned d = 0; d < dim; ++d)
    outer *= shape[d];
  for (unsigned d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t from = shape[dim];
  shape[dim] = size;
  HostTensor out(t.dtype(), shape);
  std::memset(out.data(), 0, out.numBytes());
  int64_t keep = std::min(from, size) * inner;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(static_cast<char *>(out.data()) + o * size * inner,
                static_cast<const char *>(t.data()) + o * from * inner, keep);
  return out;
}

/// The inputs of the run: --input files or the model's defaults; `sources`
/// gets the file each came from ("" when generated). With a chunkable
/// model, every input holds the same number of items (>= 1). An input
/// shorter in the model's padded sequence dimension is padded to the
/// compiled length, and `length` gets its own (else -1).
static llvm::Error collectInputs(const Model &model,
                                 std::vector<HostTensor> &inputs,
                                 std::vector<std::string> &sources,
                                 int64_t &items, int64_t &length) {
  length = -1;
  std::optional<Model::PaddedSequence> padded = model.paddedSequence();
  llvm::ArrayRef<TensorSpec> specs = model.inputs();
  sources.assign(specs.size(), "");
  inputs.resize(specs.size());
  for (const std::string &arg : inputFiles) {
    auto [nameRef, path] = llvm::StringRef(arg).split('=');
    llvm::StringRef name = nameRef;
    auto it = llvm::find_if(
        specs, [&](const TensorSpec &s) { return s.name == name; });
    if (path.empty() || it == specs.end()) {
      std::string names;
      for (const TensorSpec &s : specs)
        names += (names.empty() ? "" : ", ") + s.name;
      return llvm::createStringError(
          "--input expects NAME=FILE with NAME one of the %s model's inputs "
          "(%s), got '%s'",
          model.kind().str().c_str(), names.c_str(), arg.c_str());
    }
    size_t i = it - specs.begin();
    if (!sources[i].empty())
      return llvm::createStringError("--input %s: given twice (once per input)",
                                     name.str().c_str());
    llvm::Expected<HostTensor> t =
        loadData(path, it->dtype, "input '" + name.str() + "'");
    if (!t)
      return t.takeError();
    llvm::ArrayRef<int64_t> want = it->shape, got = t->shape();
    if (padded && padded->input == i && got.size() == want.size() &&
        got[padded->inputDim] >= 1 &&
        got[padded->inputDim] < want[padded->inputDim]) {
      llvm::SmallVector<int64_t> paddedShape(got);
      paddedShape[padded->inputDim] = want[padded->inputDim];
      llvm::Expected<uint64_t> bytes = checkedTensorBytes(
          paddedShape, dtypeSize(t->dtype()),
          path + ": input '" + name + "' padded to the compiled length");
      if (!bytes)
        return bytes.takeError();
      if (llvm::Error err = checkBudget(
              *bytes + t->numBytes(),
              path + ": input '" + name + "' and its copy padded to the " +
                  "compiled length " +
                  llvm::Twine(want[padded->inputDim])))
        return err;
      length = got[padded->inputDim];
      *t = resizeDim(*t, padded->inputDim, want[padded->inputDim]);
      got = t->shape();
    }
    bool ok = model.chunkable()
                  ? got.size() >= 1 && got[0] >= 1 &&
                        sameItemShape(got.drop_front(), want.drop_front())
                  : got == want;
    if (!ok)
      return llvm::createStringError(
          "%s: input '%s' has shape %s, expected %s%s%s", path.str().c_str(),
          name.str().c_str(), t->typeString().c_str(),
          it->shapeString().c_str(),
          model.chunkable() ? " (any number of items in the first dimension)"
                            : "",
          padded && padded->input == i
              ? (", or shorter in dimension " +
                 std::to_string(padded->inputDim))
                    .c_str()
              : "");
    if (llvm::Error err = checkFinite(*t, path + ": input '" + name + "'"))
      return err;
    sources[i] = path.str();
    inputs[i] = std::move(*t);
  }
  items = -1;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (sources[i].empty()) {
      llvm::Expected<HostTensor> t = model.defaultInput(i, seed);
      if (!t)
        return t.takeError();
      inputs[i] = std::move(*t);
    }
    int64_t n = model.chunkable() ? inputs[i].shape()[0] : model.batch();
    if (items >= 0 && n != items)
      return llvm::createStringError(
          "input '%s'%s holds %lld items, input '%s'%s %lld: they must agree",
          specs[i].name.c_str(),
          sources[i].empty() ? " (generated: give it with --input)" : "",
          (long long)n, specs[0].name.c_str(),
          sources[0].empty() ? " (generated: give it with --input)" : "",
          (long long)items);
    items = n;
  }
  return llvm::Error::success();
}

/// The model's adjustment to padded inputs (Model::fitToLength).
static llvm::Error fitLength(const Model &model,
                             std::vector<HostTensor> &inputs,
                             llvm::ArrayRef<std::string> sources,
                             int64_t length) {
  if (length < 0)
    return llvm::Error::success();
  std::vector<bool> given;
  for (const std::string &s : sources)
    given.push_back(!s.empty());
  return model.fitToLength(inputs, given, length);
}

/// Copies items [first, first + count) of `src` into the first rows of
/// `dst` (zeroing the rest), or back.
static void copyItems(const HostTensor &src, int64_t srcFirst, HostTensor &dst,
                      int64_t dstFirst, int64_t count) {
  size_t itemBytes = src.numBytes() / src.shape()[0];
  std::memcpy(static_cast<char *>(dst.data()) + dstFirst * itemBytes,
              static_cast<const char *>(src.data()) + srcFirst * itemBytes,
              count * itemBytes);
}

/// The PyTorch accuracy recorded in --reference ("test_accuracy").
static llvm::Expected<double> readReferenceAccuracy() {
  auto buf = llvm::MemoryBuffer::getFile(reference);
  if (!buf)
    return llvm::createStringError("%s: cannot open: %s", reference.c_str(),
                                   buf.getError().message().c_str());
  llvm::Expected<llvm::json::Value> v = parseJson((*buf)->getBuffer());
  if (!v)
    return llvm::createStringError("%s: invalid JSON: %s", reference.c_str(),
                                   llvm::toString(v.takeError()).c_str());
  const llvm::json::Object *o = v->getAsObject();
  std::optional<double> acc = o ? o->getNumber("test_accuracy") : std::nullopt;
  if (!acc)
    return llvm::createStringError("%s: expected a JSON object with a number "
                                   "\"test_accuracy\"",
                                   reference.c_str());
  return *acc;
}

/// The checkpoint of the run: --weights, else a Hugging Face folder's; ""
/// for the seeded initialisation.
static std::string checkpointPath(const Model &model) {
  return weightsFile.empty() ? model.folderCheckpoint().str()
                             : std::string(weightsFile);
}

/// The packed weights: from the checkpoint, or the seeded initialisation
/// (never for a Hugging Face folder: its model is its weights).
static llvm::Expected<HostTensor> loadWeights(const Model &model) {
  std::string path = checkpointPath(model);
  if (path.empty() && !model.folder().empty())
    return llvm::createStringError(
        "%s: no model.safetensors or model.safetensors.index.json in the "
        "folder (save it with save_pretrained(..., safe_serialization=True), "
        "or give --weights FILE.safetensors)",
        model.folder().str().c_str());
  if (path.empty())
    return packWeights(model, /*checkpoint=*/nullptr, seed);
  llvm::Expected<Checkpoint> checkpoint = readCheckpoint(path);
  if (!checkpoint)
    return checkpoint.takeError();
  return packWeights(model, &*checkpoint, seed);
}

/// Values checked once over the whole inputs (zero-padded rows of a last
/// partial chunk are valid for every model), not per call; then the model's
/// own preparation of them.
static llvm::Error validateAndPrepare(const Model &model,
                                      std::vector<HostTensor> &inputs,
                                      llvm::ArrayRef<std::string> sources) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (llvm::Error err = model.validateInput(i, inputs[i])) {
      // Name the file the bad input came from (generated ones have none).
      if (!sources[i].empty())
        return llvm::createStringError("%s: %s", sources[i].c_str(),
                                       llvm::toString(std::move(err)).c_str());
      return err;
    }
  model.prepareInputs(inputs);
  return llvm::Error::success();
}

/// The model's inputs for items [first, first + count) of `inputs` into the
/// batch-sized tensors `chunk` (a partial last chunk zero-padded); models
/// that are not chunkable take their inputs whole.
static void copyChunk(const Model &model, const std::vector<HostTensor> &inputs,
                      int64_t first, int64_t count,
                      std::vector<HostTensor> &chunk) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!model.chunkable()) {
      std::memcpy(chunk[i].data(), inputs[i].data(), chunk[i].numBytes());
      continue;
    }
    if (count < model.batch()) // the last, partial chunk: zero the unused rows
      std::memset(chunk[i].data(), 0, chunk[i].numBytes());
    copyItems(inputs[i], first, chunk[i], 0, count);
  }
}

/// Progress of long work on a terminal: "\r  WHAT k/N" on stderr, at most
/// every 0.2 s, erased by done(); silent when stderr is not a terminal (logs,
/// pipes, tests).
class Progress {
public:
  Progress(std::string what, int64_t total)
      : what(std::move(what)), total(total),
        shown(llvm::sys::Process::StandardErrIsDisplayed() && total > 1),
        last(std::chrono::steady_clock::now()) {}
  ~Progress() { done(); }
  /// One more unit done (any thread).
  void step() {
    int64_t k = ++count;
    if (!shown)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    auto now = std::chrono::steady_clock::now();
    if (k < total && now - last < std::chrono::milliseconds(200))
      return;
    last = now;
    llvm::errs() << "\r  " << what << " " << k << "/" << total;
    llvm::errs().flush();
    printed = true;
  }
  void done() {
    if (printed)
      llvm::errs() << "\r\033[K";
    printed = false;
  }

private:
  std::string what;
  int64_t total;
  bool shown, printed = false;
  std::atomic<int64_t> count{0};
  std::mutex mutex;
  std::chrono::steady_clock::time_point last;
};

/// The JIT's options of a run: the command line's pipeline, target and
/// pass-manager options, and the GPU runtime when a GPU target is used.
static JitOptions jitOptions() {
  JitOptions options;
  options.pipeline = pipelineText();
  if (gpuDevice)
    options.sharedLibs.push_back(gpuDevice->library);
  options.targetCpu = targetCpu;
  options.targetFeatures = targetFeatures;
  options.configurePassManager = [](PassManager &pm) {
    (void)applyPassManagerCLOptions(pm);
    applyDefaultTimingPassManagerCLOptions(pm);
  };
  return options;
}

static int runModel(const Model &model, ModuleOp module, double buildSeconds) {
  // Extra outputs are whole-call results: only models that take their
  // inputs whole have them (one call, read from the first worker).
  assert((model.extraOutputs().empty() || !model.chunkable()) &&
         "a chunkable model with extra outputs");
  // Weights first: a bad checkpoint should fail before compiling.
  llvm::Expected<HostTensor> weights = loadWeights(model);
  if (!weights)
    return fail(weights.takeError());

  std::optional<double> referenceAccuracy;
  if (!reference.empty()) {
    llvm::Expected<double> acc = readReferenceAccuracy();
    if (!acc)
      return fail(acc.takeError());
    referenceAccuracy = *acc;
  }

  std::vector<HostTensor> inputs;
  std::vector<std::string> sources;
  int64_t items = 0, length = -1;
  if (llvm::Error err = collectInputs(model, inputs, sources, items, length))
    return fail(std::move(err));
  if (llvm::Error err = fitLength(model, inputs, sources, length))
    return fail(std::move(err));
  std::optional<HostTensor> labels;
  if (!labelsFile.empty()) {
    if (model.output().shape.size() != 2)
      return fail("--labels needs a model whose output is items x classes; "
                  "the " +
                  model.kind() + " model's '" + model.output().name + "' is " +
                  model.output().shapeString());
    llvm::Expected<HostTensor> l = loadData(labelsFile, DType::i64, "labels");
    if (!l)
      return fail(l.takeError());
    if (l->rank() != 1 || l->shape()[0] != items)
      return fail(labelsFile + ": labels of shape " + l->typeString() +
                  ", expected one per item (" + llvm::Twine(items) + ")");
    int64_t classes = model.output().shape.back();
    for (int64_t i = 0; i < items; ++i)
      if (l->getInt(i) < 0 || l->getInt(i) >= classes)
        return fail(labelsFile + ": label " + llvm::Twine(i) + " is " +
                    llvm::Twine(l->getInt(i)) + ", outside the model's " +
                    llvm::Twine(classes) + " classes [0, " +
                    llvm::Twine(classes) + ")");
    labels = std::move(*l);
  }

  if (llvm::Error err = validateAndPrepare(model, inputs, sources))
    return fail(std::move(err));

  // Chunks of `batch` items; each worker owns its input/output buffers. The
  // whole run's memory (the inputs and weights held, the output of every
  // item, each worker's batch buffers) is checked before compiling.
  int64_t b = model.batch();
  int64_t chunks = model.chunkable() ? items / b + (items % b != 0) : 1;
  const TensorSpec &outSpec = model.output();
  llvm::SmallVector<int64_t> fullShape(outSpec.shape.begin(),
                                       outSpec.shape.end());
  if (model.chunkable())
    fullShape[0] = items;
  unsigned numWorkers =
      std::max<unsigned>(1, std::min<int64_t>(workers, chunks));
  {
    uint64_t total = weights->numBytes(), perWorker = 0;
    for (const HostTensor &t : inputs)
      total += t.numBytes();
    for (const TensorSpec &s : model.inputs())
      perWorker += static_cast<uint64_t>(s.numElements()) * dtypeSize(s.dtype);
    perWorker +=
        static_cast<uint64_t>(outSpec.numElements()) * dtypeSize(outSpec.dtype);
    for (const TensorSpec &e : model.extraOutputs())
      perWorker += static_cast<uint64_t>(e.numElements()) * dtypeSize(e.dtype);
    llvm::Expected<uint64_t> outBytes = checkedTensorBytes(
        fullShape, dtypeSize(outSpec.dtype),
        "the output of " + llvm::Twine(items) + " " + model.itemName());
    if (!outBytes)
      return fail(outBytes.takeError());
    uint64_t workerBytes;
    if (__builtin_mul_overflow(uint64_t(numWorkers), perWorker, &workerBytes) ||
        __builtin_add_overflow(total, *outBytes, &total) ||
        __builtin_add_overflow(total, workerBytes, &total))
      total = UINT64_MAX; // past 2^64: over any budget
    if (llvm::Error err = checkBudget(
            total, "the run (" + llvm::Twine(items) + " " + model.itemName() +
                       ", " + llvm::Twine(numWorkers) +
                       " worker(s): inputs, weights, outputs)"))
      return fail(std::move(err));
  }

  JitOptions options = jitOptions();
  llvm::Expected<std::unique_ptr<JitModule>> jit =
      JitModule::compile(module, options);
  if (!jit)
    return fail(jit.takeError());

  HostTensor output(outSpec.dtype, fullShape);
  struct Worker {
    std::vector<HostTensor> in;
    HostTensor out;
    /// The extra outputs (models that are not chunkable: one call).
    std::vector<HostTensor> extra;
    std::string error;
  };
  std::vector<Worker> ws(numWorkers);
  for (Worker &w : ws) {
    for (const TensorSpec &s : model.inputs())
      w.in.emplace_back(s.dtype, s.shape);
    w.out = HostTensor(outSpec.dtype, outSpec.shape);
    for (const TensorSpec &s : model.extraOutputs())
      w.extra.emplace_back(s.dtype, s.shape);
  }
  unsigned repeats = std::max(1u, unsigned(repeat));
  Progress progress("batch", chunks * repeats);
  auto runChunks = [&](unsigned id) {
    Worker &w = ws[id];
    std::vector<HostTensor *> args, results{&w.out};
    for (HostTensor &t : w.extra)
      results.push_back(&t);
    for (HostTensor &t : w.in)
      args.push_back(&t);
    args.push_back(&*weights);
    for (int64_t c = id; c < chunks && w.error.empty(); c += numWorkers) {
      int64_t first = c * b,
              count = model.chunkable() ? std::min(b, items - first) : b;
      copyChunk(model, inputs, first, count, w.in);
      if (llvm::Error err = (*jit)->invoke("forward", args, results)) {
        w.error = llvm::toString(std::move(err));
        return;
      }
      if (model.chunkable())
        copyItems(w.out, 0, output, first, count);
      else
        std::memcpy(output.data(), w.out.data(), output.numBytes());
      progress.step();
    }
  };
  double best = INFINITY;
  for (unsigned r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned id = 1; id < numWorkers; ++id)
      pool.emplace_back(runChunks, id);
    runChunks(0);
    for (std::thread &t : pool)
      t.join();
    best = std::min(best, secondsSince(t0));
    for (Worker &w : ws)
      if (!w.error.empty())
        return fail(w.error);
  }

  progress.done();
  model.finishOutput(output);
  std::vector<HostTensor> &extra = ws[0].extra;
  for (size_t k = 0; k < extra.size(); ++k)
    model.finishExtraOutput(k, extra[k]);
  if (length >= 0) // the padded positions' rows dropped
    output = resizeDim(output, model.paddedSequence()->outputDim, length);
  const JitTimings &times = (*jit)->timings();
  int64_t parameters = 0;
  for (const TensorSpec &w : model.weights())
    parameters += w.numElements();
  llvm::outs() << llvm::format(
      "attn-compile: %s model %s (%zu weights, %lld parameters%s)\n",
      model.kind().str().c_str(), specFile.c_str(), model.weights().size(),
      (long long)parameters,
      checkpointPath(model).empty()
          ? ", seeded"
          : (" from " + checkpointPath(model)).c_str());
  for (const std::string &line : model.notes())
    llvm::outs() << "  " << line << "\n";
  llvm::outs() << llvm::format("  build IR  %8.3f s\n", buildSeconds);
  const CpuTarget &target = getCpuTarget(module.getOperation());
  llvm::outs() << llvm::format("  passes    %8.3f s  (%s)\n", times.lowering,
                               options.pipeline.c_str());
  llvm::outs() << "  target    " << target.cpu << " (" << target.isaName()
               << "), tiles from " << tilesFrom << "\n";
  llvm::outs() << llvm::format("  JIT       %8.3f s\n", times.translation);
  llvm::outs() << llvm::format(
      "  run       %8.3f s  %lld %s in %lld call(s) of %lld, %u worker(s): "
      "%.1f %s/s\n",
      best, (long long)items, model.itemName().str().c_str(), (long long)chunks,
      (long long)b, numWorkers, items / best, model.itemName().str().c_str());
  TensorSummary summary = summarize(output);
  llvm::outs() << llvm::format(
      "  %s: %s  mean %.6g  absmax %.6g  non-finite %lld\n",
      outSpec.name.c_str(), output.typeString().c_str(), summary.mean,
      summary.absMax, (long long)summary.nonFinite);
  if (labels) {
    int64_t classes = output.shape().back(), correct = 0;
    for (int64_t i = 0; i < items; ++i) {
      const float *row = output.as<float>() + i * classes;
      int64_t arg = std::max_element(row, row + classes) - row;
      correct += arg == labels->getInt(i);
    }
    llvm::outs() << llvm::format("  accuracy: %.4f (%lld/%lld)\n",
                                 double(correct) / items, (long long)correct,
                                 (long long)items);
  }
  if (referenceAccuracy)
    llvm::outs() << llvm::format("  PyTorch accuracy (recorded at training): "
                                 "%.4f\n",
                                 *referenceAccuracy);
  for (size_t k = 0; k < extra.size(); ++k) {
    TensorSummary e = summarize(extra[k]);
    llvm::outs() << llvm::format(
        "  %s: %s  mean %.6g  absmax %.6g  non-finite %lld\n",
        model.extraOutputs()[k].name.c_str(), extra[k].typeString().c_str(),
        e.mean, e.absMax, (long long)e.nonFinite);
  }
  if (!outputFile.empty())
    if (llvm::Error err = writeNpy(outputFile, output))
      return fail(std::move(err));
  if (!attentionWeightsFile.empty())
    if (llvm::Error err = writeNpy(attentionWeightsFile, extra[0]))
      return fail(std::move(err));
  if (!attentionEdgesFile.empty())
    if (llvm::Error err = writeNpy(attentionEdgesFile, *model.attentionEdges()))
      return fail(std::move(err));
  return summary.nonFinite ? fail("the output holds non-finite values") : 0;
}

/// C type names of a memref descriptor of rank `rank`.
static std::string descriptorName(const TensorSpec &t) {
  return "attn_memref_" + dtypeName(t.dtype).str() + "_" +
         std::to_string(t.shape.size()) + "d";
}

static const char *cType(DType t) {
  switch (t) {
  case DType::f32:
    return "float";
  case DType::f64:
    return "double";
  case DType::i32:
    return "int32_t";
  case DType::i64:
    return "int64_t";
  case DType::f16:
  case DType::bf16:
    return "uint16_t"; // the bits (model entry points take f32 and integers)
  }
  return "void";
}

/// The CUDA toolkit's ptxas for --emit=cubin: in $CUDA_HOME/bin, else
/// /usr/local/cuda/bin (where the pipeline finds libdevice), else on PATH.
static llvm::Expected<std::string> findPtxas() {
  std::string toolkit = "/usr/local/cuda";
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    toolkit = home;
  std::string inToolkit = toolkit + "/bin/ptxas";
  if (llvm::sys::fs::can_execute(inToolkit))
    return inToolkit;
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  return llvm::createStringError(
      "--emit=cubin needs the CUDA toolkit's ptxas: not in %s/bin "
      "($CUDA_HOME, else /usr/local/cuda) nor on PATH",
      toolkit.c_str());
}

/// findPtxas's answer, found before compiling.
static std::string ptxasPath;

/// Assembles `ptx` for `chip` with `ptxas` into the bytes of a cubin, or
/// says what ptxas reported.
static llvm::Expected<std::string> assemblePtx(const std::string &ptxas,
                                               llvm::StringRef ptx,
                                               llvm::StringRef chip,
                                               llvm::StringRef kernel) {
  llvm::SmallString<128> input, output, log;
  for (auto [path, suffix] : {std::pair{&input, "ptx"}, {&output, "cubin"},
                              {&log, "log"}})
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "attn-kernel", suffix, *path))
      return llvm::createStringError("cannot create a temporary file: %s",
                                     ec.message().c_str());
  llvm::scope_exit cleanup([&] {
    for (auto *path : {&input, &output, &log})
      llvm::sys::fs::remove(*path);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec)
      return llvm::createStringError("%s: %s", input.c_str(),
                                     ec.message().c_str());
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> args{ptxas, arch, "-o", output, input};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         /*SecondsToWait=*/0,
                                         /*MemoryLimit=*/0, &error);
  if (status != 0) {
    std::string said;
    if (auto buffer = llvm::MemoryBuffer::getFile(log))
      said = (*buffer)->getBuffer().trim().str();
    return llvm::createStringError(
        "ptxas -arch=%s failed on kernel %s (%s): %s", chip.str().c_str(),
        kernel.str().c_str(),
        error.empty() ? ("exit status " + std::to_string(status)).c_str()
                      : error.c_str(),
        said.c_str());
  }
  auto cubin = llvm::MemoryBuffer::getFile(output, /*IsText=*/false);
  if (!cubin)
    return llvm::createStringError("%s: %s", output.c_str(),
                                   cubin.getError().message().c_str());
  return (*cubin)->getBuffer().str();
}

/// --emit=spirv|ptx|cubin: the object of every gpu.binary (SPIR-V words, the
/// PTX text, or the cubin ptxas makes of it) to -o, or with several kernels
/// to FILE.NAME for each binary.
static int emitGpuObjects(ModuleOp module) {
  SmallVector<std::pair<std::string, std::string>> objects;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute attr : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(attr))
        objects.emplace_back(binary.getSymName().str(),
                             object.getObject().getValue().str());
  if (objects.empty())
    return fail("the model has no attention kernel to emit");
  if (objects.size() > 1 && outFile == "-")
    return fail("the model has " + llvm::Twine(objects.size()) +
                " kernels: give -o FILE (each goes to FILE.NAME)");
  for (auto &[name, bytes] : objects) {
    if (emit == Emit::cubin) {
      llvm::Expected<std::string> cubin =
          assemblePtx(ptxasPath, bytes, gpuDevice->chip, name);
      if (!cubin)
        return fail(cubin.takeError());
      bytes = std::move(*cubin);
    }
    std::string path =
        objects.size() == 1 ? std::string(outFile) : outFile + "." + name;
    std::string error;
    auto out = openOutputFile(path, &error);
    if (!out)
      return fail(error);
    out->os() << bytes;
    if (llvm::Error err = keepOutput(*out, path))
      return fail(std::move(err));
    if (objects.size() > 1)
      llvm::outs() << "attn-compile: kernel " << name << " -> " << path << "\n";
  }
  return 0;
}

/// The C header of --emit=obj: descriptor structs, the entry points (@forward;
/// with --generate also @prefill and @decode) and the packed weight layout.
static void writeHeader(const Model &model, bool needsRunnerUtils,
                        llvm::raw_ostream &os) {
  std::vector<EntryPoint> entries{
      {"forward", model.inputs().vec(), {model.output()}}};
  for (const TensorSpec &t : model.extraOutputs())
    entries[0].results.push_back(t);
  if (generate > 0)
    for (EntryPoint &e : model.generationEntryPoints(model.cacheLength()))
      entries.push_back(std::move(e));
  // Each entry's arguments: inputs, the weights, then its results.
  std::vector<std::vector<TensorSpec>> argLists;
  for (const EntryPoint &e : entries) {
    std::vector<TensorSpec> args(e.inputs);
    args.push_back({"weights", DType::f32, {model.packedWeightElements()}});
    args.insert(args.end(), e.results.begin(), e.results.end());
    argLists.push_back(std::move(args));
  }
  os << "/* Generated by attn-compile from " << specFile
     << ". Do not edit.\n"
        " * Entry points of the "
     << model.kind()
     << " model: every argument is a pointer to a memref descriptor;\n"
        " * the results (last) are written by the call."
     << (model.extraOutputs().empty()
             ? ""
             : "\n * attention_weights is attn.gat's alpha in CSR order (the "
               "CSR of the layer\n * that returns it): rows 0..nnz-1 the "
               "CSR's edges (0 for a self loop the\n * layer drops), then one "
               "row per added self loop (nodes 0, 1, ...;\n * attn-compile "
               "--run reorders it into PyG's edge order).")
     << " Link the object with -lm"
     << (needsRunnerUtils ? "\n * and MLIR's C runner utilities (memrefCopy): "
                            "-L" ATTN_LLVM_LIB_DIR " -lmlir_c_runner_utils"
                          : "")
     << (threads != 1 ? "\n * and the OpenMP runtime: -lomp" : "")
     << ". */\n"
        "#ifndef ATTN_MODEL_H\n#define ATTN_MODEL_H\n#include <stdint.h>\n\n";
  // Input names as C identifiers (a mini-batch GAT's conv1.row_ptr:
  // conv1_row_ptr).
  auto identifier = [](llvm::StringRef name) {
    std::string id = name.str();
    for (char &c : id)
      if (!llvm::isAlnum(c) && c != '_')
        c = '_';
    return id;
  };
  std::set<std::string> done;
  for (const std::vector<TensorSpec> &args : argLists)
    for (const TensorSpec &t : args) {
      std::string name = descriptorName(t);
      if (!done.insert(name).second)
        continue;
      size_t r = t.shape.size();
      os << "typedef struct {\n  " << cType(t.dtype) << " *allocated;\n  "
         << cType(t.dtype) << " *aligned;\n  int64_t offset;\n  int64_t sizes["
         << r << "];\n  int64_t strides[" << r << "];\n} " << name << ";\n\n";
    }
  for (size_t e = 0; e < entries.size(); ++e) {
    // @forward's shapes as ATTN_<NAME>_DIMd; the others' with the entry's
    // name first (ATTN_DECODE_CACHE_DIM4).
    std::string prefix =
        e == 0 ? "ATTN_"
               : "ATTN_" + llvm::StringRef(entries[e].name).upper() + "_";
    for (const TensorSpec &t : argLists[e]) {
      if (e > 0 && t.name == "weights")
        continue;
      os << "/* " << (e ? entries[e].name + " " : "") << t.name << ": "
         << cType(t.dtype) << " " << t.shapeString() << " */\n";
      std::string upper = prefix + llvm::StringRef(identifier(t.name)).upper();
      os << "#define " << upper << "_RANK " << t.shape.size() << "\n";
      for (size_t d = 0; d < t.shape.size(); ++d)
        os << "#define " << upper << "_DIM" << d << " " << t.shape[d] << "\n";
    }
  }
  for (size_t e = 0; e < entries.size(); ++e) {
    std::string head = "void _mlir_ciface_" + entries[e].name + "(";
    os << "\n" << head;
    const std::vector<TensorSpec> &args = argLists[e];
    for (size_t i = 0; i < args.size(); ++i)
      os << (i ? ",\n" + std::string(head.size(), ' ') : std::string())
         << descriptorName(args[i]) << " *" << identifier(args[i].name);
    os << ");\n";
  }
  os << "\n/* The packed weights: name, offset (floats), element count. "
        "*/\n"
        "typedef struct { const char *name; int64_t offset, count; } "
        "attn_weight_entry;\n"
        "#define ATTN_NUM_WEIGHTS "
     << model.weights().size()
     << "\n"
        "static const attn_weight_entry attn_weight_layout[] = {\n";
  for (size_t i = 0; i < model.weights().size(); ++i)
    os << "  {\"" << model.weights()[i].name << "\", " << model.weightOffset(i)
       << ", " << model.weights()[i].numElements() << "},\n";
  os << "};\n\n#endif /* ATTN_MODEL_H */\n";
}

/// LLVM IR, assembly or an object for the module's CPU target from the LLVM
/// dialect.
static int emitMachineCode(ModuleOp module, const Model &model) {
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  auto machine =
      getCpuTarget(module.getOperation()).createTargetMachine(/*pic=*/true);
  if (!machine)
    return fail(machine.takeError());
  ExecutionEngine::setupTargetTripleAndDataLayout(llvmModule.get(),
                                                  machine->get());
  if (emit == Emit::obj && outFile == "-")
    return fail("--emit=obj needs -o FILE (the header goes to FILE.h)");
  std::string error;
  auto out = openOutputFile(outFile, &error);
  if (!out)
    return fail(error);
  if (emit == Emit::llvmIR) {
    llvmModule->print(out->os(), nullptr);
    if (llvm::Error err = keepOutput(*out, outFile))
      return fail(std::move(err));
    return 0;
  }
  auto optimize = makeOptimizingTransformer(3, 0, machine->get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return fail(std::move(err));
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(
          codegen, out->os(), nullptr,
          emit == Emit::obj ? llvm::CodeGenFileType::ObjectFile
                            : llvm::CodeGenFileType::AssemblyFile))
    return fail("the target cannot emit this file type");
  codegen.run(*llvmModule);
  if (llvm::Error err = keepOutput(*out, outFile))
    return fail(std::move(err));
  if (emit == Emit::obj) {
    std::string headerPath = headerPathFor(outFile);
    auto header = openOutputFile(headerPath, &error);
    if (!header)
      return fail(error);
    writeHeader(model, llvmModule->getFunction("memrefCopy") != nullptr,
                header->os());
    if (llvm::Error err = keepOutput(*header, headerPath))
      return fail(std::move(err));
  }
  return 0;
}

/// The prompt of --generate: --prompt, else --input tokens=FILE (B x P).
static llvm::Expected<HostTensor> loadPrompt(const Model &model) {
  if (!prompt.empty()) {
    if (!inputFiles.empty())
      return llvm::createStringError(
          "--prompt and --input both give the prompt: use one");
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(prompt).split(parts, ',');
    std::vector<int64_t> ids;
    for (llvm::StringRef part : parts) {
      long long id;
      if (part.trim().getAsInteger(10, id))
        return llvm::createStringError(
            "--prompt: '%s' is not a token id (expected integers separated by "
            "commas)",
            part.str().c_str());
      ids.push_back(id);
    }
    if (model.batch() != 1)
      return llvm::createStringError(
          "--prompt is one sequence; the model's batch is %lld (give the "
          "prompts as --input tokens=FILE.npy, batch x length)",
          (long long)model.batch());
    HostTensor t(DType::i64, {1, static_cast<int64_t>(ids.size())});
    for (size_t i = 0; i < ids.size(); ++i)
      t.setInt(i, ids[i]);
    return t;
  }
  if (inputFiles.size() != 1 ||
      !llvm::StringRef(inputFiles[0]).starts_with("tokens="))
    return llvm::createStringError(
        "--generate needs a prompt: --prompt ID,ID,... or --input "
        "tokens=FILE.npy (batch x length)");
  std::string path = llvm::StringRef(inputFiles[0]).drop_front(7).str();
  llvm::Expected<HostTensor> t = loadData(path, DType::i64, "the prompt");
  if (!t)
    return t.takeError();
  if (t->rank() != 2 || t->shape()[0] != model.batch() || t->shape()[1] < 1)
    return llvm::createStringError(
        "%s: the prompt has shape %s, expected %lld (the batch) x length >= 1",
        path.c_str(), t->typeString().c_str(), (long long)model.batch());
  return t;
}

/// --generate: the prompt through @prefill (compiled for the prompt's length
/// rounded up to a power of two, at least 8: a padded causal prompt is
/// exact), then N - 1 @decode steps, each appending one K/V row per layer to
/// the cache; greedy (argmax) choice, as transformers' generate without
/// sampling.
static int generateTokens(const Model &model) {
  int64_t cache = model.cacheLength();
  if (!cache)
    return fail("--generate needs a gpt model with a language-model head; "
                "this " +
                model.kind() + " model's output is '" + model.output().name +
                "'");
  llvm::Expected<HostTensor> promptTokens = loadPrompt(model);
  if (!promptTokens)
    return fail(promptTokens.takeError());
  int64_t b = model.batch(), len = promptTokens->shape()[1];
  // The last generated token is not fed back: the prompt and N tokens take
  // len + N - 1 positions.
  if (generate > cache - len + 1)
    return fail("the prompt (" + llvm::Twine(len) + " tokens) and " +
                llvm::Twine(generate) + " generated tokens exceed the cache of " +
                llvm::Twine(cache) +
                " positions (--seq-len, at most n_positions; the prompt and "
                "N tokens take prompt + N - 1)");
  if (llvm::Error err = model.validateInput(0, *promptTokens))
    return fail(std::move(err));
  int64_t bucket = 8;
  while (bucket < len)
    bucket *= 2;
  bucket = std::min(bucket, cache);
  llvm::Expected<HostTensor> weights = loadWeights(model);
  if (!weights)
    return fail(weights.takeError());

  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<MLIRContext> ctx = createRuntimeContext();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(ctx.get()));
  model.addGeneration(*module, bucket);
  if (failed(verify(*module)))
    return fail("the generated module does not verify (a bug: please "
                "report it with the description)");
  double buildSeconds = secondsSince(t0);
  JitOptions options = jitOptions();
  llvm::Expected<std::unique_ptr<JitModule>> jit =
      JitModule::compile(*module, options);
  if (!jit)
    return fail(jit.takeError());

  std::vector<EntryPoint> entries = model.generationEntryPoints(bucket);
  const EntryPoint &pre = entries[0], &dec = entries[1];
  int64_t vocab = pre.results[0].shape[2];
  llvm::ArrayRef<int64_t> cacheShape = dec.inputs[2].shape;
  int64_t layers = cacheShape[0], heads = cacheShape[3], hd = cacheShape[5];
  HostTensor tokens = resizeDim(*promptTokens, 1, bucket);
  HostTensor preLogits(DType::f32, pre.results[0].shape),
      preKv(DType::f32, pre.results[1].shape);
  HostTensor kvCache(DType::f32, cacheShape);
  std::memset(kvCache.data(), 0, kvCache.numBytes());
  HostTensor token(DType::i64, {b, 1}), position(DType::i64, {b}),
      logits(DType::f32, {b, vocab}), kvRow(DType::f32, dec.results[1].shape);
  HostTensor sequences(DType::i64, {b, len + generate}),
      scores(DType::f32, {b, generate, vocab});
  for (int64_t i = 0; i < b; ++i)
    for (int64_t t = 0; t < len; ++t)
      sequences.setInt(i * (len + generate) + t, promptTokens->getInt(i * len + t));

  // Picks each sequence's next token from `rows` (b rows of `vocab`).
  auto choose = [&](const float *rows, int64_t rowStride, int64_t step) {
    for (int64_t i = 0; i < b; ++i) {
      const float *row = rows + i * rowStride;
      std::memcpy(scores.as<float>() + (i * generate + step) * vocab, row,
                  vocab * sizeof(float));
      int64_t next = std::max_element(row, row + vocab) - row;
      token.setInt(i, next);
      sequences.setInt(i * (len + generate) + len + step, next);
    }
  };
  float *cacheData = kvCache.as<float>();
  auto t1 = std::chrono::steady_clock::now();
  if (llvm::Error err = (*jit)->invoke("prefill", {&tokens, &*weights},
                                       {&preLogits, &preKv}))
    return fail(std::move(err));
  // The prompt's rows of every layer's K and V into the cache.
  for (int64_t lw = 0; lw < layers * 2; ++lw)
    for (int64_t ih = 0; ih < b * heads; ++ih)
      std::memcpy(cacheData + (lw * b * heads + ih) * cache * hd,
                  preKv.as<float>() + (lw * b * heads + ih) * bucket * hd,
                  len * hd * sizeof(float));
  choose(preLogits.as<float>() + (len - 1) * vocab, bucket * vocab, 0);
  double prefillSeconds = secondsSince(t1);
  auto t2 = std::chrono::steady_clock::now();
  Progress progress("token", generate - 1);
  for (int64_t step = 1; step < generate; ++step) {
    int64_t pos = len + step - 1;
    for (int64_t i = 0; i < b; ++i)
      position.setInt(i, pos);
    if (llvm::Error err = (*jit)->invoke(
            "decode", {&token, &position, &kvCache, &*weights}, {&logits, &kvRow}))
      return fail(std::move(err));
    for (int64_t lw = 0; lw < layers * 2; ++lw)
      for (int64_t ih = 0; ih < b * heads; ++ih)
        std::memcpy(cacheData + ((lw * b * heads + ih) * cache + pos) * hd,
                    kvRow.as<float>() + (lw * b * heads + ih) * hd,
                    hd * sizeof(float));
    choose(logits.as<float>(), vocab, step);
    progress.step();
  }
  progress.done();
  double decodeSeconds = secondsSince(t2);

  const JitTimings &times = (*jit)->timings();
  llvm::outs() << "attn-compile: " << model.kind() << " model " << specFile
               << ", generating " << generate << " token(s) after a prompt of "
               << len << " (" << b << " sequence(s), cache of " << cache
               << " positions, prefill compiled for " << bucket << ")\n";
  llvm::outs() << llvm::format("  build IR  %8.3f s\n", buildSeconds);
  llvm::outs() << llvm::format("  passes    %8.3f s  (%s)\n", times.lowering,
                               options.pipeline.c_str());
  llvm::outs() << llvm::format("  JIT       %8.3f s\n", times.translation);
  llvm::outs() << llvm::format("  prefill   %8.4f s  %lld token(s): %.1f "
                               "tokens/s\n",
                               prefillSeconds, (long long)(b * len),
                               b * len / prefillSeconds);
  if (generate > 1)
    llvm::outs() << llvm::format(
        "  decode    %8.4f s  %lld step(s): %.1f tokens/s (%.3f ms per "
        "step)\n",
        decodeSeconds, (long long)(generate - 1),
        b * (generate - 1) / decodeSeconds,
        1e3 * decodeSeconds / (generate - 1));
  for (int64_t i = 0; i < b; ++i) {
    llvm::outs() << "  tokens[" << i << "]:";
    for (int64_t t = 0; t < len + generate; ++t)
      llvm::outs() << (t == len ? " |" : "") << " "
                   << sequences.getInt(i * (len + generate) + t);
    llvm::outs() << "\n";
  }
  if (!outputFile.empty())
    if (llvm::Error err = writeNpy(outputFile, sequences))
      return fail(std::move(err));
  if (!scoresFile.empty())
    if (llvm::Error err = writeNpy(scoresFile, scores))
      return fail(std::move(err));
  return 0;
}

/// --tune: every tile candidate of the target compiled and timed on one
/// batch of the model's inputs; the fastest goes into the tuning cache.
static int tuneModel(const Model &model, ModuleOp module,
                     const CpuTarget &target) {
  llvm::Expected<HostTensor> weights = loadWeights(model);
  if (!weights)
    return fail(weights.takeError());
  std::vector<HostTensor> inputs;
  std::vector<std::string> sources;
  int64_t items = 0, length = -1;
  if (llvm::Error err = collectInputs(model, inputs, sources, items, length))
    return fail(std::move(err));
  if (llvm::Error err = fitLength(model, inputs, sources, length))
    return fail(std::move(err));
  if (llvm::Error err = validateAndPrepare(model, inputs, sources))
    return fail(std::move(err));
  std::vector<HostTensor> batchInputs;
  std::vector<HostTensor *> args;
  for (const TensorSpec &spec : model.inputs())
    batchInputs.emplace_back(spec.dtype, spec.shape);
  copyChunk(model, inputs, 0, std::min(model.batch(), items), batchInputs);
  for (HostTensor &t : batchInputs)
    args.push_back(&t);
  args.push_back(&*weights);
  HostTensor out(model.output().dtype, model.output().shape);
  std::vector<HostTensor> extra;
  for (const TensorSpec &t : model.extraOutputs())
    extra.emplace_back(t.dtype, t.shape);
  std::vector<HostTensor *> results{&out};
  for (HostTensor &t : extra)
    results.push_back(&t);

  llvm::outs() << "attn-compile: tuning " << specFile << " for " << target.cpu
               << " (" << target.isaName() << "), " << threads
               << " thread(s)\n";
  llvm::Expected<TuneResult> best = tuneAndStore(
      module, module.lookupSymbol<func::FuncOp>("forward"), args, results,
      threads, target, /*calls=*/5, cachePath(), llvm::outs());
  if (!best)
    return fail(best.takeError());
  llvm::outs() << llvm::format("  best: %s, %.3f ms per batch of %lld "
                               "(stored in %s)\n",
                               best->choice.pipelineOptions().c_str(), best->ms,
                               (long long)model.batch(), cachePath().c_str());
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::attn::installOutOfMemoryError("attn-compile");
  initializeRuntime();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // MLIR's pass-manager, timing and printing options (--mlir-print-ir-*,
  // --mlir-timing, ...) are attn-compile options too; LLVM's are hidden.
  static cl::OptionCategory mlirCategory("MLIR options (as in attn-opt)");
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.first.starts_with("mlir-"))
      entry.second->addCategory(mlirCategory);
  cl::HideUnrelatedOptions({&category, &mlirCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: compile a model description (vit, transformer-encoder, "
      "gpt, gat) or a Hugging Face model folder (GPT-2, ViT) through the "
      "attn pipelines; run it (--run) or write a stage of the compilation "
      "(--emit)\n");
  if (!run && !tune && emit == Emit::none && packedWeightsFile.empty() &&
      generate == 0)
    return fail("nothing to do: give --run, --emit=STAGE, --tune, --generate "
                "or --save-packed-weights");
  // Output paths that name one file would overwrite each other's bytes
  // (the object by its header, the header by the packed weights).
  {
    std::vector<std::pair<std::string, std::string>> outputs;
    if (emit != Emit::none && outFile != "-")
      outputs.push_back({"-o", outFile});
    if (emit == Emit::obj && outFile != "-")
      outputs.push_back({"the header of --emit=obj", headerPathFor(outFile)});
    if (!packedWeightsFile.empty())
      outputs.push_back({"--save-packed-weights", packedWeightsFile});
    for (size_t i = 0; i < outputs.size(); ++i)
      for (size_t j = i + 1; j < outputs.size(); ++j)
        if (sameFile(outputs[i].second, outputs[j].second))
          return fail(outputs[i].first + " and " + outputs[j].first +
                      " name one file, " + outputs[j].second +
                      ": give them different paths");
  }
  if (generate < 0 || (generate > 0 && (run || tune)))
    return fail("--generate N needs N >= 1 and runs by itself (not with "
                "--run or --tune)");
  if (generate == 0 && (!prompt.empty() || !scoresFile.empty()))
    return fail("--prompt and --scores need --generate N");
  if (generate > 0 && gpuTarget != "cpu")
    return fail("--generate runs on the CPU (--target=cpu); the GPU targets "
                "compile @forward");
  if (generate > 0 && emit != Emit::none &&
      (!prompt.empty() || !scoresFile.empty() || !inputFiles.empty() ||
       !outputFile.empty()))
    return fail("--generate with --emit only adds @prefill and @decode to the "
                "emitted module; --prompt, --input, --output and --scores "
                "belong to a generation run (without --emit)");
  if (llvm::Error err = configureMemoryBudget(memoryBudgetOption))
    return fail(std::move(err));
  if (!run) {
    // Options of a run given without --run would be silently ignored.
    for (cl::Option *o : std::initializer_list<cl::Option *>{
             std::addressof(inputFiles), &labelsFile, &outputFile, &reference,
             &workers, &repeat, &attentionWeightsFile, &attentionEdgesFile})
      // --tune times the model on --input too; --generate reads its prompt
      // from --input and writes the tokens to --output.
      if (o->getNumOccurrences() &&
          !((tune || generate > 0) &&
            o == static_cast<cl::Option *>(std::addressof(inputFiles))) &&
          !(generate > 0 && o == static_cast<cl::Option *>(&outputFile)))
        return fail("--" + o->ArgStr + " applies to a run: add --run");
  }
  if (workers < 1 || repeat < 1)
    return fail("--workers and --repeat must be >= 1");
  if (pipelineName != "attn-cpu-pipeline" &&
      pipelineName != "attn-reference-pipeline")
    return fail("--pipeline must be attn-cpu-pipeline or "
                "attn-reference-pipeline, got '" +
                pipelineName + "'");
  // Each integer option's range (0 where it means "the default").
  struct Range {
    const char *name;
    int64_t value, min, max;
    const char *meaning;
  };
  for (const Range &r : std::initializer_list<Range>{
           {"batch", batch, 0, SpecReader::kMaxInteger,
            " (0: the description's)"},
           {"seq-len", seqLen, 0, SpecReader::kMaxInteger,
            " (0: the description's)"},
           {"block-q", blockQ, 0, kMaxTileRows, " (0: from the target)"},
           {"block-k", blockK, 0, kMaxTileRows, " (0: from the target)"},
           {"gat-edge-block", gatEdgeBlock, 1, kMaxEdgeBlock, ""},
           {"num-threads", threads, 0, kMaxThreads,
            " (0: the OpenMP runtime's default)"},
           {"gpu-subgroup-size", gpuSubgroupSize, 0, kMaxSubgroupSize,
            " (0: the device's)"}})
    if (r.value < r.min || r.value > r.max)
      return fail("--" + llvm::Twine(r.name) + " must be in [" +
                  llvm::Twine(r.min) + ", " + llvm::Twine(r.max) + "]" +
                  r.meaning + ", got " + llvm::Twine(r.value));
  if (gpuTarget != "cpu") {
    if (gpuTarget != "vulkan" && gpuTarget != "cuda")
      return fail("--target must be cpu, vulkan or cuda, got '" + gpuTarget +
                  "'");
    if (tune)
      return fail("--tune tunes the CPU pipeline, not --target=" + gpuTarget);
    llvm::Expected<GpuDevice> device = findGpuDevice(gpuTarget);
    if (device) {
      gpuDevice = *device;
    } else if (run) {
      return fail(device.takeError());
    } else {
      // Compiling only: no device needed.
      llvm::consumeError(device.takeError());
      gpuDevice = GpuDevice();
      gpuDevice->target = gpuTarget;
      gpuDevice->subgroupSize = gpuTarget == "cuda" ? 32 : 8;
      if (gpuTarget == "cuda")
        gpuDevice->chip = "sm_80";
    }
    // The device runs only its own subgroup sizes: the runtime would refuse
    // the kernels at their first launch (compiling for another device with
    // --emit is fine).
    if (run && device && gpuSubgroupSize > 0 &&
        (gpuSubgroupSize < gpuDevice->minSubgroupSize ||
         gpuSubgroupSize > gpuDevice->maxSubgroupSize))
      return fail(
          "--gpu-subgroup-size=" + llvm::Twine(gpuSubgroupSize) +
          ": the " + gpuTarget + " device '" + gpuDevice->name + "' runs " +
          (gpuDevice->minSubgroupSize == gpuDevice->maxSubgroupSize
               ? "subgroups of " + llvm::Twine(gpuDevice->minSubgroupSize)
               : "subgroups of " + llvm::Twine(gpuDevice->minSubgroupSize) +
                     " to " + llvm::Twine(gpuDevice->maxSubgroupSize)) +
          " (0: its default, " + llvm::Twine(gpuDevice->subgroupSize) + ")");
    if (gpuSubgroupSize > 0)
      gpuDevice->subgroupSize = static_cast<int>(gpuSubgroupSize);
    if (!gpuChip.empty())
      gpuDevice->chip = gpuChip;
    if (gpuTarget == "cuda")
      if (llvm::Error err = checkNvptxChip(gpuDevice->chip))
        return fail("--gpu-chip: " + llvm::toString(std::move(err)));
  }
  if (gpuTarget != "cpu" &&
      (emit == Emit::obj || emit == Emit::assembly || emit == Emit::llvmIR))
    return fail("--emit=obj|asm|llvm-ir with --target=" + gpuTarget +
                ": the host code calls the mgpu* GPU runtime, which an AOT "
                "caller cannot link yet; use --emit=spirv|ptx|cubin for the "
                "kernels, or --run");
  if (gpuTarget != "cpu" && pipelineName.getNumOccurrences())
    return fail("--pipeline chooses a CPU lowering (" + pipelineName +
                "); --target=" + gpuTarget +
                " compiles with attn-gpu-pipeline: drop --pipeline");
  if (gpuTarget == "vulkan" && gpuSubgroupSize > 0 &&
      !llvm::isPowerOf2_64(uint64_t(gpuSubgroupSize)))
    return fail("--gpu-subgroup-size must be a power of two for "
                "--target=vulkan (Vulkan's subgroup sizes are), got " +
                llvm::Twine(gpuSubgroupSize));
  if (gpuTarget == "cuda" && gpuSubgroupSize > 0 && gpuSubgroupSize != 32)
    return fail("--gpu-subgroup-size must be 32 for --target=cuda (a query "
                "row per warp), got " +
                llvm::Twine(gpuSubgroupSize));
  if ((emit == Emit::spirv && gpuTarget != "vulkan") ||
      ((emit == Emit::ptx || emit == Emit::cubin) && gpuTarget != "cuda"))
    return fail(std::string("--emit=") +
                (emit == Emit::spirv  ? "spirv needs --target=vulkan"
                 : emit == Emit::ptx ? "ptx needs --target=cuda"
                                      : "cubin needs --target=cuda"));
  if (emit == Emit::cubin) {
    llvm::Expected<std::string> found = findPtxas();
    if (!found)
      return fail(found.takeError());
    ptxasPath = *found;
  }
  llvm::Expected<CpuTarget> target =
      CpuTarget::get(targetTriple, targetCpu, targetFeatures);
  if (!target)
    return fail(target.takeError());
  if ((run || tune) && !targetTriple.empty())
    if (llvm::Error err = target->checkRunsOnHost())
      return fail(std::move(err));

  auto t0 = std::chrono::steady_clock::now();
  ModelOverrides overrides;
  overrides.batch = batch;
  overrides.seqLen = seqLen;
  llvm::Expected<std::unique_ptr<Model>> model =
      Model::load(specFile, overrides);
  if (!model)
    return fail(model.takeError());
  if (batch > 0 && (*model)->kind() == "gat")
    return fail("--batch does not apply to the " + (*model)->kind() +
                " model (one call takes its inputs whole)");
  if ((!attentionWeightsFile.empty() || !attentionEdgesFile.empty()) &&
      (*model)->extraOutputs().empty())
    return fail("--attention-weights and --attention-edges need a gat model "
                "with a layer's \"return_attention_weights\": true");
  if (seqLen > 0 && (*model)->kind() != "gpt" &&
      (*model)->kind() != "transformer-encoder")
    return fail("--seq-len does not apply to the " + (*model)->kind() +
                " model (gpt and transformer-encoder only)");

  if (!packedWeightsFile.empty()) {
    llvm::Expected<HostTensor> packed = loadWeights(**model);
    if (!packed)
      return fail(packed.takeError());
    std::string error;
    auto os = openOutputFile(packedWeightsFile, &error);
    if (!os)
      return fail(error);
    os->os().write(static_cast<const char *>(packed->data()),
                   packed->numBytes());
    if (llvm::Error err = keepOutput(*os, packedWeightsFile))
      return fail(std::move(err));
  }

  DialectRegistry registry;
  registerRuntimeDialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = (*model)->build(ctx);
  if (failed(verify(*module)))
    return fail("the generated module does not verify (a bug: please "
                "report it with the description)");
  double buildSeconds = secondsSince(t0);

  if (tune) {
    if (pipelineName != "attn-cpu-pipeline")
      return fail("--tune tunes attn-cpu-pipeline's tiles");
    if (int rc = tuneModel(**model, *module, *target))
      return rc;
  }
  // Tiles: the command line's, else the cache's for this model, target and
  // thread count, else the target's heuristic.
  tiles.blockQ = blockQ;
  tiles.blockK = blockK;
  if (blockQ == 0 && blockK == 0) {
    if (std::optional<TileChoice> tuned = TuningCache::find(
            cachePath(), tuningTarget(*target),
            tuningKey(module->lookupSymbol<func::FuncOp>("forward")),
            threads)) {
      tiles = *tuned;
      tilesFrom = "tuned, from " + cachePath();
    }
  } else {
    tilesFrom = "--block-q / --block-k";
  }

  if (run) {
    OwningOpRef<ModuleOp> copy = module->clone();
    if (int rc = runModel(**model, *copy, buildSeconds))
      return rc;
  }
  if (generate > 0 && emit == Emit::none)
    return generateTokens(**model);
  if (emit == Emit::none)
    return 0;
  if (generate > 0) {
    if (!(*model)->cacheLength())
      return fail("--generate needs a gpt model with a language-model head");
    (*model)->addGeneration(*module, (*model)->cacheLength());
  }

  // The emitted entry point has the runtime's C interface; the target is
  // recorded before the pipeline so that every lowering and the code
  // generator use it.
  for (auto func : module->getOps<func::FuncOp>())
    if (func.isPublic()) // not the layer functions (NetBuilder::layer)
      func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(&ctx));
  setCpuTarget(*module, *target);
  if (emit != Emit::attn &&
      failed(runPipeline(*module, pipelineText(emit == Emit::linalg))))
    return fail("lowering failed (see the diagnostics above)");
  if (emit == Emit::spirv || emit == Emit::ptx || emit == Emit::cubin)
    return emitGpuObjects(*module);
  if (emit == Emit::attn || emit == Emit::linalg || emit == Emit::llvm) {
    std::string error;
    auto out = openOutputFile(outFile, &error);
    if (!out)
      return fail(error);
    module->print(out->os());
    if (llvm::Error err = keepOutput(*out, outFile))
      return fail(std::move(err));
    return 0;
  }
  return emitMachineCode(*module, **model);
}
