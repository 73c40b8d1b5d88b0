//===- Jit.cpp - JIT-compile and call attn modules ------------------------===//

#include "lib/Runtime/Jit.h"

#include "lib/Runtime/Amx.h"
#include "lib/Runtime/Budget.h"

#include "dialect/AttnDialect.h"
#include "lib/Pipelines/Pipelines.h"
#include "lib/Target/CpuTarget.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <mutex>
#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;
using llvm::createStringError;

void mlir::attn::registerRuntimeDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<AttnDialect>();
}

std::optional<DType> mlir::attn::dtypeOf(Type t) {
  if (t.isF32())
    return DType::f32;
  if (t.isF16())
    return DType::f16;
  if (t.isBF16())
    return DType::bf16;
  if (t.isF64())
    return DType::f64;
  if (t.isSignlessInteger(32))
    return DType::i32;
  if (t.isSignlessInteger(64))
    return DType::i64;
  return std::nullopt;
}

std::string mlir::attn::runtimeLibraryPath(llvm::StringRef file,
                                           llvm::StringRef configuredDir) {
  // On Linux the executable is read from /proc/self/exe: no argv[0] needed.
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  if (!exe.empty()) {
    llvm::SmallString<256> lib(llvm::sys::path::parent_path(
        llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(lib, "lib");
    llvm::SmallString<256> beside(lib), marker(lib);
    llvm::sys::path::append(beside, file);
    llvm::sys::path::append(marker, "attn-bundle.txt");
    // The project's own runtimes beside any of its tools; LLVM's libraries
    // (libomp, the C runner utilities) only from a bundle, never from
    // another prefix's lib folder that happens to hold a libomp.so.
    if ((file.starts_with("libattn_") || llvm::sys::fs::exists(marker)) &&
        llvm::sys::fs::exists(beside))
      return std::string(beside);
  }
  llvm::SmallString<256> configured(configuredDir);
  llvm::sys::path::append(configured, file);
  return std::string(configured);
}

std::vector<std::string> JitOptions::defaultSharedLibs() {
  return {runtimeLibraryPath("libmlir_c_runner_utils.so", ATTN_LLVM_LIB_DIR),
          runtimeLibraryPath("libomp.so", ATTN_LLVM_LIB_DIR)};
}

/// Registers passes and pipelines once per process, and the native target.
/// Compiled code allocates its large temporaries with malloc on every call;
/// glibc would serve them with fresh mmap'd pages each time, and first touch
/// of fresh pages is slow in these VMs (measured ~2.9 GB/s; a 100k-node GAT
/// call went from 574 ms to 158 ms). Keeping freed memory in the heap makes
/// repeated calls reuse warm pages.
void mlir::attn::initializeRuntime() {
  static std::once_flag flag;
  std::call_once(flag, [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    registerAllPasses();
    registerAttnPasses();
    registerAttnPipelines();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// A failed check of attn-runtime-checks (or cf.assert) in compiled code:
/// its message, one line, and exit status 1. The first failing thread (of
/// a parallel loop) reports; the others wait for the exit.
static void attnCheckFailed(const char *message) {
  static std::atomic_flag reported = ATOMIC_FLAG_INIT;
  if (reported.test_and_set())
    for (;;)
      pause();
  llvm::outs().flush();
  llvm::errs() << message << "\n";
  llvm::errs().flush();
  std::fflush(nullptr);
  std::_Exit(1);
}

/// The `malloc` of compiled code (its buffers): a size within the memory
/// budget that the process still cannot get ends the run with the tool's
/// out-of-memory error (installOutOfMemoryError; LLVM's bad-alloc report
/// without one) instead of the code storing through a null pointer.
static void *attnMalloc(size_t bytes) {
  void *p = std::malloc(bytes);
  if (!p && bytes)
    llvm::report_bad_alloc_error("out of memory: a buffer of compiled code");
  return p;
}

static double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// Collects the diagnostics emitted while `fn` runs into one error message.
template <typename Fn>
static llvm::Error captureDiagnostics(MLIRContext *ctx, llvm::StringRef what,
                                      Fn fn) {
  std::string messages;
  llvm::raw_string_ostream os(messages);
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    os << "\n  " << diag.getLocation() << ": " << diag;
    return success();
  });
  if (failed(fn()))
    return createStringError("%s failed:%s", what.str().c_str(),
                             messages.c_str());
  return llvm::Error::success();
}

/// Bytes of one element of a shaped value (index: 8; sub-byte types: 1).
static uint64_t elementBytes(Type t) {
  if (t.isIntOrFloat())
    return std::max<uint64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
  return 8;
}

llvm::Error mlir::attn::checkStaticSizes(Operation *func) {
  auto describe = [](Value v, Location loc, const llvm::Twine &what) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (auto file = loc->findInstanceOf<FileLineColLoc>())
      os << file.getFilename().getValue() << ":" << file.getLine() << ":"
         << file.getColumn() << ": ";
    os << what << " of type " << v.getType();
    return text;
  };
  auto bytesOf = [](Value v) -> std::optional<llvm::ArrayRef<int64_t>> {
    auto shaped = dyn_cast<ShapedType>(v.getType());
    if (!shaped || !shaped.hasStaticShape())
      return std::nullopt;
    return shaped.getShape();
  };
  auto check = [&](Value v, Location loc,
                   const llvm::Twine &what) -> llvm::Expected<uint64_t> {
    std::optional<llvm::ArrayRef<int64_t>> shape = bytesOf(v);
    if (!shape)
      return 0;
    return checkedTensorBytes(
        *shape, elementBytes(cast<ShapedType>(v.getType()).getElementType()),
        describe(v, loc, what));
  };
  llvm::Error first = llvm::Error::success();
  func->walk([&](Operation *op) {
    if (first)
      return WalkResult::interrupt();
    for (OpResult r : op->getResults()) {
      llvm::Expected<uint64_t> bytes =
          check(r, op->getLoc(),
                "'" + op->getName().getStringRef() + "' result #" +
                    llvm::Twine(r.getResultNumber()));
      if (!bytes) {
        first = bytes.takeError();
        return WalkResult::interrupt();
      }
    }
    auto function = dyn_cast<FunctionOpInterface>(op);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments()) {
          llvm::Expected<uint64_t> bytes =
              check(arg, arg.getLoc(),
                    (function && block.isEntryBlock()
                         ? "argument #" + llvm::Twine(arg.getArgNumber()) +
                               " of @" + function.getName()
                         : "block argument #" + llvm::Twine(arg.getArgNumber()))
                        .str());
          if (!bytes) {
            first = bytes.takeError();
            return WalkResult::interrupt();
          }
        }
    return WalkResult::advance();
  });
  if (first)
    return first;
  // What a caller allocates: the arguments and the results, together.
  auto function = dyn_cast<FunctionOpInterface>(func);
  if (!function)
    return llvm::Error::success();
  uint64_t total = 0;
  for (Type t : llvm::concat<const Type>(function.getArgumentTypes(),
                                         function.getResultTypes())) {
    auto shaped = dyn_cast<ShapedType>(t);
    if (!shaped || !shaped.hasStaticShape())
      continue;
    llvm::Expected<uint64_t> bytes = checkedTensorBytes(
        shaped.getShape(), elementBytes(shaped.getElementType()), "a value");
    if (!bytes)
      return bytes.takeError();
    if (__builtin_add_overflow(total, *bytes, &total))
      total = UINT64_MAX;
  }
  return checkBudget(total, "@" + function.getName() +
                                "'s arguments and results together");
}

llvm::Error mlir::attn::checkCallable(Operation *op) {
  auto func = cast<FunctionOpInterface>(op);
  bool callable = llvm::all_of(
      llvm::concat<const Type>(func.getArgumentTypes(), func.getResultTypes()),
      [](Type t) {
        auto tensor = dyn_cast<RankedTensorType>(t);
        return tensor && tensor.hasStaticShape() &&
               dtypeOf(tensor.getElementType());
      });
  if (!callable)
    return createStringError(
        "function @%s: the runtime calls functions whose arguments and "
        "results are statically shaped tensors of f32, f64, f16, bf16, i32 "
        "or i64",
        func.getName().str().c_str());
  if (auto entry = dyn_cast<func::FuncOp>(op)) {
    for (func::FuncOp reached : reachedFunctions(entry))
      if (llvm::Error err = checkStaticSizes(reached))
        return err;
    return llvm::Error::success();
  }
  return checkStaticSizes(op);
}

SmallVector<func::FuncOp> mlir::attn::reachedFunctions(func::FuncOp entry) {
  SmallVector<func::FuncOp> order{entry};
  llvm::SmallPtrSet<Operation *, 8> seen{entry};
  SymbolTableCollection symbols;
  for (size_t i = 0; i < order.size(); ++i)
    order[i].walk([&](func::CallOp call) {
      auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (callee && !callee.isExternal() && seen.insert(callee).second)
        order.push_back(callee);
    });
  return order;
}

std::unique_ptr<MLIRContext> mlir::attn::createRuntimeContext() {
  DialectRegistry registry;
  registerRuntimeDialects(registry);
  auto ctx = std::make_unique<MLIRContext>(registry);
  ctx->loadAllAvailableDialects();
  return ctx;
}

llvm::Expected<std::unique_ptr<JitModule>>
JitModule::compile(ModuleOp module, const JitOptions &options) {
  initializeRuntime();
  std::unique_ptr<JitModule> jit(new JitModule());
  MLIRContext *ctx = module.getContext();

  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    // Not callable (a signature the runtime cannot pass, or over the memory
    // budget): compiled, but refused by invoke() with the reason; the other
    // functions of the module stay callable.
    if (llvm::Error err = checkCallable(func)) {
      jit->unsupported[func.getName()] = llvm::toString(std::move(err));
      continue;
    }
    jit->signatures[func.getName()] = func.getFunctionType();
    func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  UnitAttr::get(ctx));
  }

  auto t0 = std::chrono::steady_clock::now();
  llvm::Expected<CpuTarget> target =
      CpuTarget::get("", options.targetCpu, options.targetFeatures);
  if (!target)
    return target.takeError();
  setCpuTarget(module, *target);
  auto pm = PassManager::on<ModuleOp>(ctx);
  if (options.runtimeChecks)
    pm.addPass(createAttnRuntimeChecks());
  std::string pipelineErrors;
  llvm::raw_string_ostream pipelineErrorStream(pipelineErrors);
  if (failed(parsePassPipeline(options.pipeline, pm, pipelineErrorStream)))
    return createStringError("invalid pass pipeline '%s': %s",
                             options.pipeline.c_str(), pipelineErrors.c_str());
  if (options.configurePassManager)
    options.configurePassManager(pm);
  if (llvm::Error err =
          captureDiagnostics(ctx, "lowering with '" + options.pipeline + "'",
                             [&] { return pm.run(module); }))
    return std::move(err);
  jit->times.lowering = secondsSince(t0);
  // The pipeline must reach the LLVM dialect with the calling convention
  // invoke() uses: results written through trailing out-params (a
  // pipeline's out-params=false returned them, and the caller read zeros).
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      return createStringError(
          "the pipeline '%s' leaves @%s as a func.func: attn-run calls what "
          "attn-cpu-pipeline, attn-reference-pipeline or attn-gpu-pipeline "
          "make of it (the LLVM dialect)",
          options.pipeline.c_str(), func.getName().str().c_str());
  for (auto &entry : jit->signatures) {
    auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(entry.getKey());
    if (!func)
      continue;
    if (entry.getValue().getNumResults() > 0 &&
        !isa<LLVM::LLVMVoidType>(func.getFunctionType().getReturnType()))
      return createStringError(
          "the pipeline '%s' returns the results of @%s instead of writing "
          "them through out-params (attn-run's calling convention): drop "
          "out-params=false",
          options.pipeline.c_str(), entry.getKey().str().c_str());
  }
  // The JIT runs the code here: a target this machine cannot run (named by
  // --target-cpu / target_cpu) is an error, not a SIGILL.
  // Tile instructions need the kernel's permission first, or the emulator.
  bool amx = false;
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (!func.isExternal()) {
      const CpuTarget &target = getCpuTarget(func);
      amx = amx || target.hasFeature("amx-tile");
      if (llvm::Error err = target.checkRunsOnHost(options.emulateAmx))
        return createStringError("@%s: %s", func.getName().str().c_str(),
                                 llvm::toString(std::move(err)).c_str());
    }
  // On a host with AMX the tile instructions run natively (--emulate-amx
  // or not); elsewhere the emulator executes them.
  if (amx && CpuTarget::host().hasFeature("amx-tile")) {
    if (llvm::Error err = requestAmxPermission())
      return err;
  } else if (amx && options.emulateAmx) {
    installAmxEmulator();
  }

  t0 = std::chrono::steady_clock::now();
  auto transformer =
      makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0,
                                /*targetMachine=*/nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  SmallVector<StringRef> libs(options.sharedLibs.begin(),
                              options.sharedLibs.end());
  engineOptions.sharedLibPaths = libs;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // ATTN_PERF_JIT=1: the JIT's functions named for `perf record -k 1` +
  // `perf inject --jit` (LLVM's perf listener writes the jit-PID.dump).
  engineOptions.enablePerfNotificationListener =
      std::getenv("ATTN_PERF_JIT") != nullptr;
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return createStringError("JIT compilation failed: %s",
                             llvm::toString(engine.takeError()).c_str());
  jit->engine = std::move(*engine);
  // What compiled code allocates with (before anything is materialized:
  // these definitions win over the process's), and what attn-runtime-checks'
  // failed checks call (the pass refused a module that defines it).
  bool checks = options.runtimeChecks;
  jit->engine->registerSymbols([checks](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("malloc")] = {llvm::orc::ExecutorAddr::fromPtr(&attnMalloc),
                                   llvm::JITSymbolFlags::Exported};
    if (checks)
      symbols[interner("attn_check_failed")] = {
          llvm::orc::ExecutorAddr::fromPtr(&attnCheckFailed),
          llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  // Global constructors: a GPU module's kernels are loaded by one.
  jit->engine->initialize();
  for (auto &entry : jit->signatures) {
    auto fn =
        jit->engine->lookupPacked(("_mlir_ciface_" + entry.getKey()).str());
    if (!fn)
      return createStringError("JIT: no entry point for @%s: %s",
                               entry.getKey().str().c_str(),
                               llvm::toString(fn.takeError()).c_str());
    jit->entryPoints[entry.getKey()] = *fn;
  }
  jit->times.translation = secondsSince(t0);
  return jit;
}

JitModule::~JitModule() = default;

const FunctionType *JitModule::signature(llvm::StringRef name) const {
  auto it = signatures.find(name);
  return it == signatures.end() ? nullptr : &it->second;
}

/// Why `name` cannot be called: unsupported signature, or no such function.
static llvm::Error notCallable(const llvm::StringMap<std::string> &unsupported,
                               llvm::StringRef name) {
  auto it = unsupported.find(name);
  if (it != unsupported.end())
    return createStringError(it->second);
  return createStringError("no public function @%s", name.str().c_str());
}

llvm::Expected<std::vector<HostTensor>>
JitModule::allocateResults(llvm::StringRef name) const {
  const FunctionType *type = signature(name);
  if (!type)
    return notCallable(unsupported, name);
  std::vector<HostTensor> results;
  for (Type t : type->getResults()) {
    auto tensor = cast<RankedTensorType>(t);
    results.emplace_back(*dtypeOf(tensor.getElementType()), tensor.getShape());
  }
  return results;
}

llvm::Error mlir::attn::checkTensorType(const HostTensor &tensor, Type declared,
                                        llvm::StringRef what) {
  auto type = dyn_cast<RankedTensorType>(declared);
  std::optional<DType> dtype =
      type ? dtypeOf(type.getElementType()) : std::nullopt;
  if (dtype && tensor.dtype() == *dtype && tensor.shape() == type.getShape())
    return llvm::Error::success();
  std::string expected;
  llvm::raw_string_ostream os(expected);
  os << declared;
  return createStringError("%s: expected %s, got %s", what.str().c_str(),
                           expected.c_str(), tensor.typeString().c_str());
}

llvm::Error JitModule::invoke(llvm::StringRef name,
                              llvm::ArrayRef<HostTensor *> inputs,
                              llvm::ArrayRef<HostTensor *> outputs) {
  const FunctionType *type = signature(name);
  if (!type)
    return notCallable(unsupported, name);
  if (inputs.size() != type->getNumInputs() ||
      outputs.size() != type->getNumResults())
    return createStringError(
        "@%s takes %u inputs and %u results, got %zu and %zu",
        name.str().c_str(), type->getNumInputs(), type->getNumResults(),
        inputs.size(), outputs.size());
  for (auto [i, t] : llvm::enumerate(inputs))
    if (llvm::Error err =
            checkTensorType(*t, type->getInput(i),
                            "@" + name.str() + " input " + std::to_string(i)))
      return err;
  for (auto [i, t] : llvm::enumerate(outputs))
    if (llvm::Error err =
            checkTensorType(*t, type->getResult(i),
                            "@" + name.str() + " result " + std::to_string(i)))
      return err;

  // One ranked memref descriptor per tensor:
  // {allocated, aligned, offset, sizes[rank], strides[rank]}.
  std::vector<std::vector<int64_t>> descriptors;
  for (HostTensor *t : llvm::concat<HostTensor *const>(inputs, outputs)) {
    std::vector<int64_t> desc{reinterpret_cast<int64_t>(t->data()),
                              reinterpret_cast<int64_t>(t->data()), 0};
    llvm::ArrayRef<int64_t> shape = t->shape();
    desc.insert(desc.end(), shape.begin(), shape.end());
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    desc.insert(desc.end(), strides.begin(), strides.end());
    descriptors.push_back(std::move(desc));
  }
  std::vector<void *> descriptorPtrs;
  for (auto &d : descriptors)
    descriptorPtrs.push_back(d.data());
  llvm::SmallVector<void *> packedArgs;
  for (void *&p : descriptorPtrs)
    packedArgs.push_back(&p);

  entryPoints.lookup(name)(packedArgs.data());
  return llvm::Error::success();
}
