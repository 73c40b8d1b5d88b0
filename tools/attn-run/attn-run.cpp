//===- attn-run.cpp - JIT-run attn functions and check them ---------------===//
//
// Parses an MLIR file, lowers it with a named pipeline, JIT-compiles it and
// calls one function on seeded (or .npy) inputs, printing the results and the
// time of each stage. With --check, the same function is evaluated by the
// naive C++ reference kernels and every result is compared element-wise.
//
//===----------------------------------------------------------------------===//

#include "dialect/IrNesting.h"
#include "lib/Runtime/Amx.h"
#include "lib/Runtime/Budget.h"
#include "lib/Runtime/Evaluate.h"
#include "lib/Runtime/GpuDevice.h"
#include "lib/Runtime/Jit.h"
#include "lib/Runtime/Tensor.h"
#include "lib/Runtime/Tuner.h"
#include "lib/Target/CpuTarget.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string>
    entry("entry",
          cl::desc("Function to call (default: the only "
                   "public function)"),
          cl::cat(category));
static cl::opt<bool> all("all",
                         cl::desc("Run (and check) every public function, each "
                                  "on its own generated inputs"),
                         cl::cat(category));
static cl::opt<std::string>
    pipeline("pipeline",
             cl::desc("Pass pipeline that lowers the module to LLVM"),
             cl::init("attn-cpu-pipeline"), cl::cat(category));
static cl::opt<std::string>
    gpuTarget("target",
              cl::desc("Where attention runs: cpu (default), vulkan (the "
                       "kernels as SPIR-V on a Vulkan 1.3 device: a GPU, or "
                       "Mesa's lavapipe on the CPU) or cuda (PTX on an NVIDIA "
                       "GPU), compiled by attn-gpu-pipeline for the device"),
              cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    targetCpu("target-cpu",
              cl::desc("CPU to compile for, as llc's -mcpu (default: this "
                       "machine); it must run here"),
              cl::init("host"), cl::cat(category));
static cl::opt<std::string>
    targetFeatures("target-features",
                   cl::desc("+feature / -feature list, as llc's -mattr "
                            "(e.g. -avx512f: AVX2 code on an AVX-512 host)"),
                   cl::cat(category));
static cl::opt<bool>
    tune("tune",
         cl::desc("Sweep attn-cpu-pipeline's block-q / block-k / register "
                  "tiles for the function on this machine and store the "
                  "fastest in the tuning cache; a later run with the plain "
                  "attn-cpu-pipeline uses it"),
         cl::cat(category));
static cl::opt<int64_t>
    threads("num-threads",
            cl::desc("OpenMP threads of the plain attn-cpu-pipeline, of "
                     "--tune and of the tuning cache lookup (1: sequential, "
                     "0: the OpenMP runtime's default)"),
            cl::init(1), cl::cat(category));
static cl::opt<std::string>
    tuningCache("tuning-cache",
                cl::desc("Tuning cache file (default: $ATTN_TUNING_CACHE or "
                         "~/.cache/attn-mlir/tuning.json)"),
                cl::value_desc("FILE.json"), cl::cat(category));
static cl::list<std::string> inputs(
    "input",
    cl::desc("Argument from a .npy file, as INDEX=FILE (repeatable; f32 "
             "files feed bf16 arguments, rounded); the other arguments are "
             "generated"),
    cl::cat(category));
static cl::opt<std::string> memoryBudgetOption(
    "memory-budget",
    cl::desc("Most bytes the inputs, results and any one value of the "
             "function may take (e.g. 8G, 512M; default: $ATTN_MEMORY_BUDGET "
             "or half of the memory this process may use), checked before "
             "allocating"),
    cl::value_desc("SIZE"), cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the generated inputs"),
                              cl::init(1), cl::cat(category));
static cl::opt<double> magnitude("input-magnitude",
                                 cl::desc("Generated floats are uniform in "
                                          "[-m, m] (large m: large logits)"),
                                 cl::init(1.0), cl::cat(category));
static cl::opt<unsigned> repeat("repeat", cl::desc("Number of timed calls"),
                                cl::init(1), cl::cat(category));
static cl::opt<bool>
    check("check",
          cl::desc("Compare every result with the C++ reference; "
                   "exit 1 on mismatch"),
          cl::cat(category));
static cl::opt<bool> runtimeChecks(
    "runtime-checks",
    cl::desc("Check the accesses of the code around attn ops whose indices "
             "are known only at run time, and its cf.asserts: a failure is "
             "one error line and exit status 1 (attn-runtime-checks; "
             "default on)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> emulateAmx(
    "emulate-amx",
    cl::desc("Run AMX code (--target-features=+amx-tile,+amx-bf16, or an AMX "
             "CPU) on a host without AMX: the tile instructions are executed "
             "in software from the SIGILL each raises, the rest natively; "
             "prints how many it executed. For tests: slow"),
    cl::cat(category));
static cl::opt<double> relTol("rtol", cl::desc("Relative tolerance of --check"),
                              cl::init(1e-5), cl::cat(category));
static cl::opt<double>
    absTol("atol",
           cl::desc("Absolute tolerance of --check (default: "
                    "rtol times the largest finite |expected| "
                    "of each result, i.e. relative to its scale)"),
           cl::init(-1.0), cl::cat(category));
static cl::opt<std::string>
    dumpDir("dump-dir",
            cl::desc("Write inputs (argN.npy), results (resultN.npy) and, with "
                     "--check, reference results (referenceN.npy) to DIR"),
            cl::cat(category));

/// Prints `message` as attn-run's one error line and returns exit code 1.
static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-run: error: " << message << "\n";
  return 1;
}

static int fail(llvm::Error err) {
  return fail(llvm::toString(std::move(err)));
}

/// Code attn-run would run to a signal rather than an error, found before
/// compiling: an index known at compile time (a constant, arith.addi /
/// subi / muli and index casts of constants, an affine.load / store map of
/// them) outside a static tensor or memref, read or written by
/// tensor.extract / insert, memref.load / store, affine.load / store or
/// vector.load / store (whose vector must fit too), a read outside the
/// buffer; a function that calls itself (the stack overflows); without
/// --runtime-checks, a cf.assert (a failing one aborts). One error at
/// the op; the rest of the IR is the pipelines' and the verifier's to
/// check. Indices computed at run time are checked by the compiled code
/// itself (attn-runtime-checks, --runtime-checks; docs/Design.md, "What
/// attn-run will not run").
static LogicalResult checkRunnable(ModuleOp module) {
  // The value of an integer computed from constants only (a short chain),
  // at its own width (index: 64 bits), wrapping as the arithmetic does;
  // index_cast sign-extends, index_castui zero-extends.
  std::function<std::optional<llvm::APInt>(Value, int)> constantInt =
      [&](Value v, int depth) -> std::optional<llvm::APInt> {
    unsigned width = v.getType().isIndex() ? 64
                     : v.getType().isInteger()
                         ? v.getType().getIntOrFloatBitWidth()
                         : 0;
    if (!width)
      return std::nullopt;
    llvm::APInt value;
    if (matchPattern(v, m_ConstantInt(&value)))
      return value.sextOrTrunc(width);
    Operation *def = v.getDefiningOp();
    if (!def || depth > 16)
      return std::nullopt;
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def)) {
      std::optional<llvm::APInt> from = constantInt(def->getOperand(0), depth + 1);
      if (!from)
        return std::nullopt;
      return isa<arith::IndexCastOp>(def) ? from->sextOrTrunc(width)
                                          : from->zextOrTrunc(width);
    }
    if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def))
      return std::nullopt;
    std::optional<llvm::APInt> x = constantInt(def->getOperand(0), depth + 1),
                               y = constantInt(def->getOperand(1), depth + 1);
    if (!x || !y)
      return std::nullopt;
    return isa<arith::AddIOp>(def)   ? *x + *y
           : isa<arith::SubIOp>(def) ? *x - *y
                                     : *x * *y;
  };
  auto constantIndex = [&](Value v, int depth) -> std::optional<int64_t> {
    std::optional<llvm::APInt> i = constantInt(v, depth);
    if (!i || i->getBitWidth() > 64)
      return std::nullopt;
    return i->getSExtValue();
  };
  // `indices` (known ones) into `type`; `extent[d]` elements from each (a
  // vector's trailing dims), 1 elsewhere.
  auto checkIndices = [&](Operation *op, Type type,
                          ArrayRef<std::optional<int64_t>> indices,
                          ArrayRef<int64_t> extent = {}) -> LogicalResult {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.hasRank())
      return success();
    size_t firstExtent = indices.size() - std::min(indices.size(), extent.size());
    for (auto [d, i] : llvm::enumerate(indices)) {
      if (!i || d >= size_t(shaped.getRank()) || shaped.isDynamicDim(d))
        continue;
      int64_t n = d >= firstExtent ? extent[d - firstExtent] : 1;
      if (*i < 0 || *i > shaped.getDimSize(d) - n) {
        InFlightDiagnostic diag = emitError(op->getLoc()) << "index " << *i;
        if (n > 1)
          diag << " (and the " << n - 1 << " after it)";
        return diag << " is outside dimension " << d << " of size "
                    << shaped.getDimSize(d)
                    << ": the compiled code would access memory outside the "
                       "buffer";
      }
    }
    return success();
  };
  // The elements a vector access spans from its indices: the vector's
  // shape, or one element of a memref of vectors.
  auto vectorExtent = [](MemRefType memref, VectorType vector) {
    return isa<VectorType>(memref.getElementType()) ? ArrayRef<int64_t>{}
                                                    : vector.getShape();
  };
  auto known = [&](ValueRange values) {
    SmallVector<std::optional<int64_t>> out;
    for (Value v : values)
      out.push_back(constantIndex(v, 0));
    return out;
  };
  // An affine access's indices: its map folded over known operands.
  auto affineIndices = [&](AffineMap map, ValueRange operands) {
    SmallVector<std::optional<int64_t>> out(map.getNumResults());
    SmallVector<Attribute> attrs;
    Builder b(map.getContext());
    for (Value v : operands) {
      std::optional<int64_t> i = constantIndex(v, 0);
      if (!i)
        return out;
      attrs.push_back(b.getIndexAttr(*i));
    }
    SmallVector<Attribute> results;
    if (succeeded(map.constantFold(attrs, results)) &&
        results.size() == out.size())
      for (auto [o, r] : llvm::zip_equal(out, results))
        if (auto i = dyn_cast<IntegerAttr>(r))
          o = i.getInt();
    return out;
  };
  WalkResult walk = module.walk([&](Operation *op) -> WalkResult {
    LogicalResult ok = success();
    if (auto e = dyn_cast<tensor::ExtractOp>(op))
      ok = checkIndices(op, e.getTensor().getType(), known(e.getIndices()));
    else if (auto e = dyn_cast<tensor::InsertOp>(op))
      ok = checkIndices(op, e.getDest().getType(), known(e.getIndices()));
    else if (auto l = dyn_cast<memref::LoadOp>(op))
      ok = checkIndices(op, l.getMemRef().getType(), known(l.getIndices()));
    else if (auto st = dyn_cast<memref::StoreOp>(op))
      ok = checkIndices(op, st.getMemRef().getType(), known(st.getIndices()));
    else if (auto l = dyn_cast<affine::AffineLoadOp>(op))
      ok = checkIndices(op, l.getMemRefType(),
                        affineIndices(l.getAffineMap(), l.getMapOperands()));
    else if (auto st = dyn_cast<affine::AffineStoreOp>(op))
      ok = checkIndices(op, st.getMemRefType(),
                        affineIndices(st.getAffineMap(), st.getMapOperands()));
    else if (auto l = dyn_cast<vector::LoadOp>(op))
      ok = checkIndices(op, l.getMemRefType(), known(l.getIndices()),
                        vectorExtent(l.getMemRefType(), l.getVectorType()));
    else if (auto st = dyn_cast<vector::StoreOp>(op))
      ok = checkIndices(op, st.getMemRefType(), known(st.getIndices()),
                        vectorExtent(st.getMemRefType(), st.getVectorType()));
    else if (isa<cf::AssertOp>(op) && !runtimeChecks)
      ok = emitError(op->getLoc(),
                     "attn-run runs cf.assert only with --runtime-checks (a "
                     "failing assertion would abort the process)");
    return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Calls between the module's functions: a cycle is unbounded recursion.
  llvm::StringMap<SmallVector<std::pair<std::string, Operation *>>> callees;
  for (auto func : module.getOps<func::FuncOp>())
    func.walk([&](func::CallOp call) {
      callees[func.getName()].push_back({call.getCallee().str(), call});
    });
  // Depth-first with an explicit stack (a chain of 30 000 calls overflowed
  // a recursive search): 1 on the path, 2 done.
  llvm::StringMap<int> state;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (state.lookup(func.getName()))
      continue;
    // (function, index of its next call to follow)
    SmallVector<std::pair<std::string, size_t>> path{
        {func.getName().str(), 0}};
    state[func.getName()] = 1;
    while (!path.empty()) {
      auto &[name, next] = path.back();
      auto it = callees.find(name);
      if (it == callees.end() || next == it->second.size()) {
        state[name] = 2;
        path.pop_back();
        continue;
      }
      auto &[callee, call] = it->second[next++];
      int s = state.lookup(callee);
      if (s == 1)
        return emitError(call->getLoc())
               << "@" << callee << " is called recursively: attn-run runs "
               << "no recursion (the stack would overflow)";
      if (s == 0) {
        state[callee] = 1;
        path.push_back({callee, 0});
      }
    }
  }
  return success();
}

/// The functions to run: --entry, every public function with --all, or the
/// only public function.
static FailureOr<SmallVector<std::string>> selectEntries(ModuleOp module) {
  SmallVector<std::string> names;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal() &&
        (entry.empty() || func.getName() == entry))
      names.push_back(func.getName().str());
  if (!entry.empty() && names.empty()) {
    fail("no public function @" + entry + " in " + inputFile);
    return failure();
  }
  if (!all && names.size() != 1) {
    fail(llvm::Twine(names.size()) + " public functions in " + inputFile +
         "; choose one with --entry, or run them all with --all");
    return failure();
  }
  return names;
}

/// The --input files, read once before anything is compiled (their shapes
/// specialize dynamic dimensions): tensors[i] is argument i's, sources[i]
/// its file ("" when generated).
struct GivenInputs {
  std::vector<std::optional<HostTensor>> tensors;
  std::vector<std::string> sources;
};
static GivenInputs given;

static llvm::Error readInputs(size_t numArgs) {
  given.tensors.clear();
  given.tensors.resize(numArgs);
  given.sources.assign(numArgs, "");
  for (const std::string &spec : inputs) {
    auto [indexStr, path] = llvm::StringRef(spec).split('=');
    unsigned index;
    if (path.empty() || indexStr.getAsInteger(10, index))
      return llvm::createStringError("--input expects INDEX=FILE.npy, got '%s'",
                                     spec.c_str());
    if (index >= numArgs)
      return llvm::createStringError(
          "--input %u: the function has %zu arguments", index, numArgs);
    if (!given.sources[index].empty())
      return llvm::createStringError("--input %u: given twice", index);
    given.sources[index] = path.str();
    llvm::Expected<HostTensor> t = readNpy(path);
    if (!t)
      return t.takeError();
    given.tensors[index] = std::move(*t);
  }
  return llvm::Error::success();
}

/// Replaces generated arguments with the --input files; `sources` gets each
/// argument's file ("" when generated). The files were read and checked by
/// readInputs before compiling; an f32 file feeding bf16 must round to
/// finite values.
static llvm::Error loadInputs(std::vector<HostTensor> &args,
                              std::vector<std::string> &sources,
                              bool lastUse) {
  sources.assign(args.size(), "");
  for (size_t index = 0; index < given.tensors.size() && index < args.size();
       ++index) {
    if (!given.tensors[index])
      continue;
    sources[index] = given.sources[index];
    // The last use takes the file's tensor (no second copy of it).
    HostTensor t = lastUse ? std::move(*given.tensors[index])
                           : given.tensors[index]->clone();
    // NumPy has no bfloat16: an f32 .npy feeds a bf16 argument, rounded
    // (--dump-dir writes bf16 tensors as their exact f32 values).
    if (args[index].dtype() == DType::bf16 && t.dtype() == DType::f32) {
      HostTensor rounded = t.converted(DType::bf16);
      // A finite value past bf16's range would become inf, and be blamed
      // on the input as if the file held it.
      for (int64_t i = 0, n = t.numElements(); i < n; ++i)
        if (std::isfinite(t.getDouble(i)) &&
            !std::isfinite(rounded.getDouble(i)))
          return llvm::createStringError(
              "%s: input %zu element %lld = %g is past bf16's range "
              "(largest finite 3.39e38): rounded it would be infinite",
              sources[index].c_str(), index, (long long)i, t.getDouble(i));
      t = std::move(rounded);
    }
    args[index] = std::move(t);
  }
  return llvm::Error::success();
}

/// The largest finite value of `type` (f16, bf16, f32, f64).
static double largestFinite(Type type) {
  if (auto f = dyn_cast<FloatType>(type))
    return llvm::APFloat::getLargest(f.getFloatSemantics()).convertToDouble();
  return std::numeric_limits<double>::infinity();
}

/// --input-magnitude within the range of every generated float argument of
/// `func` (one past f16's 65504 generated infinities, blamed on the input).
static llvm::Error checkMagnitude(func::FuncOp func) {
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    if (index < given.tensors.size() && given.tensors[index])
      continue;
    auto shaped = dyn_cast<ShapedType>(type);
    Type elem = shaped ? shaped.getElementType() : type;
    if (isa<FloatType>(elem) && magnitude > largestFinite(elem))
      return llvm::createStringError(
          "--input-magnitude %g is past the largest finite %s (%g): @%s "
          "argument %zu would be generated infinite",
          double(magnitude),
          elem.isF16() ? "f16" : elem.isBF16() ? "bf16" : "float",
          largestFinite(elem), func.getName().str().c_str(), index);
  }
  return llvm::Error::success();
}

static void printSummary(llvm::StringRef name, const HostTensor &t) {
  TensorSummary summary = summarize(t);
  llvm::outs() << llvm::format("  %s: %s  mean %.6g  absmax %.6g",
                               name.str().c_str(), t.typeString().c_str(),
                               summary.mean, summary.absMax);
  if (summary.nonFinite)
    llvm::outs() << "  non-finite " << summary.nonFinite;
  llvm::outs() << "  first [";
  for (int64_t i = 0, e = std::min<int64_t>(4, t.numElements()); i < e; ++i)
    llvm::outs() << (i ? ", " : "") << llvm::format("%.6g", t.getDouble(i));
  llvm::outs() << (t.numElements() > 4 ? ", ...]\n" : "]\n");
}

/// Element-wise |got - want| <= atol + rtol * |want|, where atol defaults to
/// rtol * max |want| (errors relative to the result's scale: an output that is
/// a cancelling sum of many terms is not held to 1e-5 of its own tiny value).
/// Infinities must match exactly and NaN never passes.
static bool compare(unsigned index, const HostTensor &got,
                    const HostTensor &want) {
  double scale = 0;
  for (int64_t i = 0; i < want.numElements(); ++i)
    if (std::isfinite(want.getDouble(i)))
      scale = std::max(scale, std::fabs(want.getDouble(i)));
  double rtol = referenceTolerance(got.dtype(), relTol);
  double atol = absTol >= 0 ? double(absTol) : rtol * scale;

  double maxAbs = 0;
  int64_t firstBad = -1, bad = 0;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    double a = got.getDouble(i), w = want.getDouble(i);
    bool ok;
    if (std::isnan(a) || std::isnan(w) || std::isinf(a) || std::isinf(w)) {
      ok = a == w;
    } else {
      double err = std::fabs(a - w);
      maxAbs = std::max(maxAbs, err);
      ok = err <= atol + rtol * std::fabs(w);
    }
    if (!ok && bad++ == 0)
      firstBad = i;
  }
  llvm::outs() << llvm::format(
      "  result %u: max abs err %.3g (%.3g of the result's "
      "scale %.3g), atol %.3g: ",
      index, maxAbs, scale > 0 ? maxAbs / scale : 0.0, scale, atol);
  if (!bad) {
    llvm::outs() << "OK\n";
    return true;
  }
  llvm::outs() << llvm::format(
      "MISMATCH in %lld of %lld elements; first at flat "
      "index %lld: got %.9g, expected %.9g\n",
      (long long)bad, (long long)want.numElements(), (long long)firstBad,
      got.getDouble(firstBad), want.getDouble(firstBad));
  return false;
}

static llvm::Error dump(llvm::StringRef prefix,
                        llvm::ArrayRef<const HostTensor *> ts) {
  for (auto [i, t] : llvm::enumerate(ts)) {
    llvm::SmallString<128> path(dumpDir);
    llvm::sys::path::append(path, prefix + llvm::Twine(i) + ".npy");
    if (llvm::Error err = writeNpy(path, *t))
      return err;
  }
  return llvm::Error::success();
}

template <typename T>
static std::vector<const T *> pointers(std::vector<T> &v) {
  std::vector<const T *> ps;
  for (T &t : v)
    ps.push_back(&t);
  return ps;
}

/// --tune: every tile candidate of `target` compiled and timed on the
/// function's inputs (generated, or --input); the fastest goes into the
/// tuning cache at `cachePath`.
static int tuneFunction(ModuleOp module, llvm::StringRef name,
                        const CpuTarget &target, const std::string &cachePath) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (llvm::Error err = checkMagnitude(func))
    return fail(std::move(err));
  std::vector<HostTensor> args = generateInputs(func, seed, magnitude);
  std::vector<std::string> sources;
  if (llvm::Error err = loadInputs(args, sources, /*lastUse=*/false))
    return fail(std::move(err));
  if (llvm::Error err = validateInputs(func, pointers(args), sources))
    return fail(std::move(err));
  std::vector<HostTensor> results;
  for (Type t : func.getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    std::optional<DType> dtype =
        tensor ? dtypeOf(tensor.getElementType()) : std::nullopt;
    if (!dtype || !tensor.hasStaticShape())
      return fail("--tune: @" + name +
                  " must return statically shaped tensors of f32, f64, f16, "
                  "bf16, i32 or i64");
    results.emplace_back(*dtype, tensor.getShape());
  }
  std::vector<HostTensor *> in, out;
  for (HostTensor &t : args)
    in.push_back(&t);
  for (HostTensor &t : results)
    out.push_back(&t);
  llvm::outs() << "attn-run: tuning @" << name << " for " << target.cpu << " ("
               << target.isaName() << "), " << threads << " thread(s)\n";
  llvm::Expected<TuneResult> best =
      tuneAndStore(module, func, in, out, threads, target,
                   std::max(3u, unsigned(repeat)), cachePath, llvm::outs());
  if (!best)
    return fail(best.takeError());
  llvm::outs() << llvm::format("  best: %s, %.3f ms (stored in %s)\n",
                               best->choice.pipelineOptions().c_str(), best->ms,
                               cachePath.c_str());
  return 0;
}

/// With --target=vulkan|cuda: the runtime's clock of the kernels alone
/// (GpuDevice::takeKernelMilliseconds), read after each timed call.
static double (*gpuKernelClock)() = nullptr;

/// Runs one function of the compiled module: inputs, timed calls, summary,
/// optional dump and check. Returns the process exit code for this function.
static int runFunction(JitModule &jit, func::FuncOp original) {
  std::string name = original.getName().str();

  // Result tensors first: this refuses signatures the runtime cannot call.
  auto results = jit.allocateResults(name);
  if (!results)
    return fail(results.takeError());

  // Inputs: generated by role, then replaced by --input files.
  if (llvm::Error err = checkMagnitude(original))
    return fail(std::move(err));
  std::vector<HostTensor> args = generateInputs(original, seed, magnitude);
  std::vector<std::string> sources;
  if (llvm::Error err = loadInputs(args, sources, /*lastUse=*/true))
    return fail(std::move(err));
  std::vector<const HostTensor *> argPtrs = pointers(args);
  if (llvm::Error err = validateInputs(original, argPtrs, sources))
    return fail(std::move(err));
  std::vector<HostTensor *> in, out;
  for (HostTensor &t : args)
    in.push_back(&t);
  for (HostTensor &t : *results)
    out.push_back(&t);
  std::vector<double> times, kernelTimes;
  // What was said so far comes before anything the compiled code or a GPU
  // runtime prints (a runtime's error exits the process).
  llvm::outs().flush();
  if (gpuKernelClock)
    (void)gpuKernelClock(); // earlier kernels (another function's)
  for (unsigned r = 0; r < std::max(1u, unsigned(repeat)); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (llvm::Error err = jit.invoke(name, in, out))
      return fail(std::move(err));
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count());
    if (gpuKernelClock)
      kernelTimes.push_back(gpuKernelClock());
  }
  std::sort(times.begin(), times.end());
  std::sort(kernelTimes.begin(), kernelTimes.end());

  llvm::outs() << "attn-run: @" << name << " from " << inputFile << "\n";
  llvm::outs() << llvm::format(
      "  run: best %.3f ms, median %.3f ms over %zu call(s)\n",
      times.front() * 1e3, times[times.size() / 2] * 1e3, times.size());
  // The kernels' own time (the device's clock), where the runtime has one:
  // the rest of a call is its copies between host and device, allocations
  // and set-up.
  if (!kernelTimes.empty() && kernelTimes.front() >= 0)
    llvm::outs() << llvm::format(
        "  kernels: best %.3f ms, median %.3f ms (the device's clock; the "
        "rest of a call is the runtime's copies and set-up)\n",
        kernelTimes.front(), kernelTimes[kernelTimes.size() / 2]);
  for (auto [i, t] : llvm::enumerate(*results))
    printSummary("result " + std::to_string(i), t);

  if (!dumpDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir))
      return fail(dumpDir + ": " + ec.message());
    if (llvm::Error err = dump("arg", argPtrs))
      return fail(std::move(err));
    if (llvm::Error err = dump("result", pointers(*results)))
      return fail(std::move(err));
  }
  // The inputs were finite: a NaN or +inf result is no attention's
  // (-inf is the lse of a row without allowed keys). --check reports the
  // reference's view of it (the first such score) instead.
  for (auto [i, t] : llvm::enumerate(*results)) {
    if (check || !isFloat(t.dtype()))
      continue;
    int64_t bad = 0;
    for (int64_t e = 0; e < t.numElements(); ++e) {
      double x = t.getDouble(e);
      bad += std::isnan(x) || x == std::numeric_limits<double>::infinity();
    }
    if (bad)
      return fail("@" + name + " result " + llvm::Twine(i) + " holds " +
                  llvm::Twine(bad) +
                  " NaN or +inf values from finite inputs (a score_mod "
                  "yielding NaN or +inf? --check names the first)");
  }
  if (!check)
    return 0;
  // Nothing to compare is not a pass.
  if (results->empty()) {
    llvm::outs() << "CHECK SKIPPED: @" << name
                 << " returns no result to compare\n";
    return 0;
  }

  auto expected = evaluateWithReference(original, argPtrs);
  if (!expected)
    return fail(expected.takeError());
  if (!dumpDir.empty())
    if (llvm::Error err = dump("reference", pointers(*expected)))
      return fail(std::move(err));
  llvm::outs() << llvm::format(
      "check against the C++ reference (rtol %g; two "
      "units in the last place of f16/bf16 results):\n",
      double(relTol));
  bool allOk = true;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(*results, *expected)))
    allOk &= compare(i, std::get<0>(pair), std::get<1>(pair));
  llvm::outs() << (allOk ? "CHECK PASSED\n" : "CHECK FAILED\n");
  return allOk ? 0 : 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::attn::installOutOfMemoryError("attn-run");
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: JIT-compile an MLIR file with attn ops, run its functions on "
      "seeded or .npy inputs and (--check) compare them with the C++ "
      "reference\n");
  if (all && (!inputs.empty() || !dumpDir.empty()))
    return fail("--input and --dump-dir need a single function, not --all");
  if (llvm::Error err = configureMemoryBudget(memoryBudgetOption))
    return fail(std::move(err));

  std::unique_ptr<MLIRContext> context = createRuntimeContext();

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, context.get());
  // A regular file within the memory budget, or stdin ("-"): /dev/zero was
  // read until the kernel killed the process, a FIFO blocked. (A missing
  // file is openInputFile's error below; MLIR's parser needs its
  // null-terminated buffer, not readInputFile's.)
  if (inputFile != "-" && llvm::sys::fs::exists(inputFile))
    if (llvm::Error err = checkInputFile(inputFile))
      return fail(std::move(err));
  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail(errorMessage);
  if (llvm::Error err = checkIrNesting(file->getBuffer(), inputFile))
    return fail(std::move(err));
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, context.get());
  if (!module)
    return 1; // The parser has printed the error with its location.
  if (failed(checkRunnable(*module)))
    return 1;

  FailureOr<SmallVector<std::string>> names = selectEntries(*module);
  if (failed(names))
    return 1;
  // A single function's signature and static sizes are checked before
  // anything (tuning, compiling, inputs); with --all, each function the
  // runtime cannot call fails on its own, through the JIT, while the others
  // run.
  // The --input files are read first: their shapes give a function's
  // dynamic dimensions (`?`), specialized before it is compiled.
  if (names->size() == 1) {
    // Only the chosen function and what it reaches is compiled: the others
    // may have dynamic dimensions of their own. One walk over the reached
    // functions' symbol uses (asking each function whether it is still used
    // took minutes on a module of 30 000 functions).
    SymbolTable table(*module);
    llvm::StringSet<> reached;
    SmallVector<Operation *> work;
    auto reach = [&](StringRef name) {
      if (reached.insert(name).second)
        if (Operation *op = table.lookup(name))
          work.push_back(op);
    };
    reach(names->front());
    for (Operation &op : module->getBody()->getOperations())
      if (!isa<func::FuncOp>(op))
        work.push_back(&op); // what a global or the like refers to stays
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (auto uses = SymbolTable::getSymbolUses(op))
        for (const SymbolTable::SymbolUse &use : *uses)
          reach(use.getSymbolRef().getRootReference());
    }
    for (auto other :
         llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
      if (!reached.contains(other.getName()))
        other.erase();
    auto func = module->lookupSymbol<func::FuncOp>(names->front());
    if (llvm::Error err = readInputs(func.getNumArguments()))
      return fail(std::move(err));
    std::vector<std::optional<std::vector<int64_t>>> shapes;
    for (const std::optional<HostTensor> &t : given.tensors)
      shapes.push_back(t ? std::optional<std::vector<int64_t>>(t->shape().vec())
                        : std::nullopt);
    if (llvm::Error err = specializeDynamicShapes(func, shapes))
      return fail(std::move(err));
    if (llvm::Error err = checkCallable(func))
      return fail(std::move(err));
  } else {
    for (const std::string &name : *names)
      for (Type t : module->lookupSymbol<func::FuncOp>(name).getArgumentTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(t);
            tensor && !tensor.hasStaticShape())
          return fail("@" + name + " has dynamic dimensions: run it alone " +
                      "(--entry " + name + ") with --input files, whose " +
                      "shapes set them");
  }

  std::string cachePath = tuningCache.empty() ? TuningCache::defaultPath()
                                              : std::string(tuningCache);
  llvm::Expected<CpuTarget> target =
      CpuTarget::get("", targetCpu, targetFeatures);
  if (!target)
    return fail(target.takeError());
  if (threads < 0)
    return fail("--num-threads must be >= 0 (0: the OpenMP runtime's "
                "default), got " +
                llvm::Twine(int64_t(threads)));
  // Every call's time is kept (for the median): a bound, not a budget.
  if (repeat < 1 || repeat > 1000000)
    return fail("--repeat must be in [1, 1000000], got " +
                llvm::Twine(unsigned(repeat)));
  if (!std::isfinite(magnitude) || !(magnitude > 0))
    return fail("--input-magnitude must be a finite number > 0, got " +
                llvm::Twine(std::to_string(double(magnitude))));
  if (!std::isfinite(relTol) || relTol < 0)
    return fail("--rtol must be a finite number >= 0, got " +
                llvm::Twine(std::to_string(double(relTol))));
  if (absTol.getNumOccurrences() && (!std::isfinite(absTol) || absTol < 0))
    return fail("--atol must be a finite number >= 0, got " +
                llvm::Twine(std::to_string(double(absTol))));
  bool plainPipeline = pipeline == "attn-cpu-pipeline";
  std::optional<GpuDevice> gpu;
  if (gpuTarget != "cpu") {
    llvm::Expected<GpuDevice> device = findGpuDevice(gpuTarget);
    if (!device)
      return fail(device.takeError());
    gpu = *device;
    if (tune)
      return fail("--tune tunes the CPU pipeline, not --target=" + gpuTarget);
    // The CPU's pipelines would run everything on the CPU while the run
    // names the device.
    for (llvm::StringRef cpuPipeline :
         {"attn-cpu-pipeline", "attn-reference-pipeline"})
      if (pipeline.getNumOccurrences() &&
          llvm::StringRef(pipeline).contains(cpuPipeline))
        return fail("--pipeline " + cpuPipeline +
                    " lowers for the CPU, not --target=" + gpuTarget +
                    " (its default is attn-gpu-pipeline)");
  }
  // A target the IR records wins over --target-cpu / --target-features: an
  // option that would be ignored is an error instead (before --tune, which
  // would store its tiles under the ignored target).
  if (targetCpu.getNumOccurrences() || targetFeatures.getNumOccurrences()) {
    std::string conflict;
    module->walk([&](func::FuncOp func) {
      auto cpu = func->getAttrOfType<StringAttr>("target_cpu");
      if (func.isExternal() || !cpu)
        return WalkResult::advance();
      auto features = func->getAttrOfType<LLVM::TargetFeaturesAttr>(
          LLVM::TargetFeaturesAttr::getAttributeName());
      std::string recorded = features ? features.getFeaturesString() : "";
      // The same target however its features are spelt.
      llvm::Expected<CpuTarget> same =
          CpuTarget::get(target->triple, cpu.getValue(), recorded);
      if (same && same->sameTarget(*target))
        return WalkResult::advance();
      if (!same)
        llvm::consumeError(same.takeError());
      conflict = "@" + func.getSymName().str() + " records target_cpu '" +
                 cpu.getValue().str() + "'" +
                 (recorded.empty() ? "" : " with features '" + recorded + "'");
      return WalkResult::interrupt();
    });
    if (!conflict.empty())
      return fail("--target-cpu / --target-features ('" + target->cpu +
                  (target->features.empty() ? "" : " " + target->features) +
                  "') conflict with the IR: " + conflict +
                  ", and a recorded target wins; drop the options or the "
                  "function's target attributes");
  }
  if (tune) {
    if (emulateAmx)
      return fail("--tune with --emulate-amx: the tuner times the tiles, and "
                  "emulated tile instructions (software, from a SIGILL each) "
                  "would make AMX tiles the slowest; tune on a host with AMX "
                  "or without --emulate-amx");
    if (!plainPipeline)
      return fail("--tune tunes the tiles of the plain attn-cpu-pipeline "
                  "(no --pipeline)");
    if (names->size() != 1)
      return fail("--tune tunes one function: choose it with --entry");
    if (int rc = tuneFunction(*module, (*names)[0], *target, cachePath))
      return rc;
  }
  // attn-run records its CPU target (--target-cpu, --target-features) in
  // the module before the pipeline runs, and a target already recorded
  // wins: the pipeline's own target options would be ignored silently.
  for (llvm::StringRef option :
       {"target-cpu=", "target-triple=", "target-features="})
    if (llvm::StringRef(pipeline).contains(option))
      return fail("--pipeline: give the CPU target with attn-run's "
                  "--target-cpu / --target-features, not the pipeline's " +
                  option.drop_back() +
                  " (attn-run records its target first, and a recorded "
                  "target wins)");
  // The plain CPU pipeline runs on --threads, with a single function's
  // tuned tiles when the cache has them for this target and thread count.
  std::string lowering = pipeline;
  if (gpu) {
    if (pipeline.getNumOccurrences() == 0)
      lowering = gpu->pipeline();
  } else if (plainPipeline) {
    std::string tiles;
    if (names->size() == 1)
      if (std::optional<TileChoice> tuned = TuningCache::find(
              cachePath, tuningTarget(*target),
              tuningKey(module->lookupSymbol<func::FuncOp>((*names)[0])),
              threads)) {
        tiles = " " + tuned->pipelineOptions();
        llvm::outs() << "attn-run: tuned tiles from " << cachePath << "\n";
      }
    lowering =
        "attn-cpu-pipeline{threads=" + std::to_string(threads) + tiles + "}";
  }

  // Inputs and the reference use an untouched clone: compile() lowers in place.
  OwningOpRef<ModuleOp> original = module->clone();
  JitOptions options;
  options.pipeline = lowering;
  options.targetCpu = targetCpu;
  options.targetFeatures = targetFeatures;
  options.runtimeChecks = runtimeChecks;
  options.emulateAmx = emulateAmx;
  if (gpu) {
    options.sharedLibs.push_back(gpu->library);
    gpuKernelClock = gpu->takeKernelMilliseconds;
    llvm::outs() << "attn-run: " << gpu->target << " device '" << gpu->name
                 << "', subgroup size " << gpu->subgroupSize << "\n";
    // Before the runtime loads the kernels (its errors exit the process).
    llvm::outs().flush();
  }
  auto jit = JitModule::compile(*module, options);
  if (!jit)
    return fail(jit.takeError());
  const CpuTarget &compiled = getCpuTarget(module->getOperation());
  llvm::outs() << llvm::format(
      "attn-run: %s: lowering (%s) %.1f ms, JIT compile "
      "(LLVM -O3) %.1f ms, target %s (%s)\n",
      inputFile.c_str(), lowering.c_str(), (*jit)->timings().lowering * 1e3,
      (*jit)->timings().translation * 1e3, compiled.cpu.c_str(),
      compiled.isaName().str().c_str());

  int status = 0;
  for (const std::string &name : *names)
    status |= runFunction(**jit, original->lookupSymbol<func::FuncOp>(name));
  if (emulateAmx)
    llvm::outs() << "attn-run: AMX emulator: " << amxEmulatedInstructions()
                 << " tile instructions executed"
                 << (amxEmulatorInstalled()
                         ? ""
                         : " (not installed: this host runs AMX natively, "
                           "or the code uses none)")
                 << "\n";
  return status;
}
