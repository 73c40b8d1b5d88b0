//===- Jit.h - JIT-compile and call attn modules ----------------*- C++ -*-===//
//
// Lowers a module with a named pipeline, JIT-compiles it with
// mlir::ExecutionEngine for the host CPU, and calls its functions on host
// tensors. Calling convention: the pipeline turns every tensor result into a
// trailing out-parameter, so a function `(inputs...) -> (results...)` is
// called with the inputs followed by caller-allocated result tensors, each as
// a pointer to a memref descriptor (`llvm.emit_c_interface`).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_JIT_H
#define ATTN_LIB_RUNTIME_JIT_H

#include "lib/Runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <memory>

namespace mlir {
class ExecutionEngine;
class PassManager;
class DialectRegistry;
} // namespace mlir

namespace mlir::attn {

/// Registers every dialect, extension and LLVM IR translation the runtime's
/// pipelines need, plus the attn dialect.
void registerRuntimeDialects(DialectRegistry &registry);

/// Registers the passes and pipelines (upstream and attn) and the native
/// target, once per process; makes freed memory stay in the heap. compile()
/// calls it; tools that run pipelines themselves call it first.
void initializeRuntime();

/// Maps a tensor element type to a host dtype, if supported.
std::optional<DType> dtypeOf(Type elementType);

/// Checks `tensor` against `declared` (a ranked tensor type): dtype and
/// shape. The error reads "WHAT: expected tensor<...>, got 2x3xf32".
llvm::Error checkTensorType(const HostTensor &tensor, Type declared,
                            llvm::StringRef what);

/// Checks the statically shaped values of `func` (arguments, results, every
/// op's results and block arguments) against the memory budget of Budget.h
/// before anything is allocated for them: each value, and the arguments and
/// results together (what a caller allocates), must fit. The error names
/// the value's location and type.
llvm::Error checkStaticSizes(Operation *func);

/// Whether the runtime can call `func` (a function op): arguments and
/// results statically shaped tensors of a host dtype, and checkStaticSizes
/// of it and of every function it reaches (reachedFunctions). The error
/// says which rule it breaks.
llvm::Error checkCallable(Operation *func);

/// `entry` and every function with a body it reaches through func.call,
/// each once, `entry` first (a model's layers are calls of private
/// functions: what holds for the entry point holds for them).
llvm::SmallVector<func::FuncOp> reachedFunctions(func::FuncOp entry);

/// A context with every dialect the runtime's pipelines need, loaded.
std::unique_ptr<MLIRContext> createRuntimeContext();

struct JitOptions {
  /// Pass pipeline (textual, on builtin.module) that lowers attn IR to LLVM.
  std::string pipeline = "attn-cpu-pipeline";
  /// LLVM optimisation level of the JIT-compiled code.
  unsigned optLevel = 3;
  /// Shared libraries the compiled code may call: MLIR's C runner utilities
  /// (memrefCopy) and the OpenMP runtime of the parallel tile loop.
  std::vector<std::string> sharedLibs = defaultSharedLibs();
  /// The CPU target recorded on functions that carry none (attn-set-target):
  /// an LLVM CPU name (`host`: this machine) and +/- features. It must run
  /// on this machine.
  std::string targetCpu = "host";
  std::string targetFeatures;
  /// Run attn-runtime-checks before the pipeline: the code around the attn
  /// ops checks its own accesses (indices known only at run time), and a
  /// failed check or cf.assert ends the process with its message and exit
  /// status 1 (attn_check_failed, below).
  bool runtimeChecks = false;
  /// Run AMX code (a target with AMX) on a host without AMX: the runtime's
  /// AMX emulator (Amx.h) executes the tile instructions. On a host with
  /// AMX they run natively either way.
  bool emulateAmx = false;
  /// Called on the pass manager before it runs (IR printing, timing).
  std::function<void(PassManager &)> configurePassManager;

  static std::vector<std::string> defaultSharedLibs();
};

/// Where the runtime library `file` is: in the `lib` folder beside this
/// executable's folder (`bin/../lib`) when it is there and is one of the
/// project's own runtimes (`libattn_*`: the build tree, or a relocated
/// bundle of the tools) or that folder is a bundle's (it holds
/// `attn-bundle.txt`, written by scripts/device-bundle.sh); else in
/// `configuredDir` (the build's or LLVM's library folder, fixed when the
/// project was configured).
std::string runtimeLibraryPath(llvm::StringRef file,
                               llvm::StringRef configuredDir);

/// Wall-clock seconds spent in each stage of compilation.
struct JitTimings {
  double lowering = 0, translation = 0;
};

class JitModule {
public:
  /// Lowers `module` in place with `options.pipeline` and JIT-compiles it.
  /// Records every public function's tensor signature before lowering;
  /// functions whose signature the runtime cannot call are compiled but
  /// refused by invoke() with the reason.
  static llvm::Expected<std::unique_ptr<JitModule>>
  compile(ModuleOp module, const JitOptions &options);
  ~JitModule();

  /// The pre-lowering signature of a public function, or null.
  const FunctionType *signature(llvm::StringRef name) const;

  /// Calls `name` with `inputs` and writes its results into `outputs`, whose
  /// dtypes and shapes must match the signature (checked; errors say which).
  llvm::Error invoke(llvm::StringRef name, llvm::ArrayRef<HostTensor *> inputs,
                     llvm::ArrayRef<HostTensor *> outputs);

  /// Allocates result tensors matching `name`'s signature.
  llvm::Expected<std::vector<HostTensor>>
  allocateResults(llvm::StringRef name) const;

  const JitTimings &timings() const { return times; }

private:
  JitModule() = default;
  std::unique_ptr<ExecutionEngine> engine;
  llvm::StringMap<FunctionType> signatures;
  /// Public functions the runtime cannot call, with the reason.
  llvm::StringMap<std::string> unsupported;
  /// Packed entry points (`void(void **)`), looked up eagerly at compile time
  /// so that the first call does not pay for code generation.
  llvm::StringMap<void (*)(void **)> entryPoints;
  JitTimings times;
};

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_JIT_H
