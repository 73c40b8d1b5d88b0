//===- ToolkitFuzzers.cpp - libFuzzer harnesses of the model loader and IR
//-===//
//
// Two harnesses over the toolkit's libraries, chosen by ATTN_FUZZ_TARGET and
// built in the sanitizer build (ATTN_SANITIZE: every library of the toolkit
// compiled with ASan, UBSan and libFuzzer's coverage; libMLIR.so is not):
//
//   model: the bytes are a model description: load (parse, check, read the
//          graph file it names), build the module and verify it, pack the
//          seeded weights and make the default inputs.
//   ir:    the bytes are MLIR: parse (which verifies) and, when it parses,
//          lower as attn-run does (attn-runtime-checks, then
//          attn-cpu-pipeline) to the LLVM dialect.
//
// Either must end in a value or a diagnostic, never a crash, a sanitizer
// report, a hang or an allocation past the (64 MiB) memory budget.
//
//===----------------------------------------------------------------------===//

#include "dialect/IrNesting.h"
#include "lib/Models/Model.h"
#include "lib/Runtime/Budget.h"
#include "lib/Runtime/Jit.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;

namespace {

MLIRContext &context() {
  static MLIRContext *ctx = [] {
    MLIRContext *c = createRuntimeContext().release();
    c->disableMultithreading();
    return c;
  }();
  return *ctx;
}

int fuzzModel(const uint8_t *data, size_t size) {
  std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  std::string path =
      dir + "/attn-fuzz-model-" + std::to_string(getpid()) + ".json";
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return 0;
  bool ok = std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !ok)
    return 0;
  llvm::Expected<std::unique_ptr<Model>> model = Model::load(path);
  std::remove(path.c_str());
  if (!model) {
    llvm::consumeError(model.takeError());
    return 0;
  }
  ScopedDiagnosticHandler quiet(&context(),
                                [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = (*model)->build(context());
  if (failed(verify(*module)))
    std::abort(); // a description that loads must build valid IR
  llvm::Expected<HostTensor> weights = packWeights(**model, nullptr, 1);
  if (!weights)
    llvm::consumeError(weights.takeError());
  for (size_t i = 0; i < (*model)->inputs().size(); ++i) {
    llvm::Expected<HostTensor> input = (*model)->defaultInput(i, 1);
    if (!input)
      llvm::consumeError(input.takeError());
  }
  return 0;
}

int fuzzIr(const uint8_t *data, size_t size) {
  MLIRContext &ctx = context();
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  // MLIR's lexer reads up to a terminating NUL (as a file's buffer has).
  std::string text(reinterpret_cast<const char *>(data), size);
  // As attn-opt and attn-run: nesting past the parser's stack is refused.
  if (llvm::Error err = checkIrNesting(text, "input")) {
    llvm::consumeError(std::move(err));
    return 0;
  }
  ParserConfig config(&ctx);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
  if (!module)
    return 0;
  PassManager pm(&ctx);
  if (failed(parsePassPipeline(
          "builtin.module(attn-runtime-checks,attn-cpu-pipeline)", pm)))
    std::abort();
  (void)pm.run(*module);
  return 0;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setMemoryBudget(64 << 20);
  initializeRuntime();
  (void)context();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string target = ATTN_FUZZ_TARGET;
  return target == "model" ? fuzzModel(data, size) : fuzzIr(data, size);
}
