//===- attn-opt.cpp - opt-style driver for attn IR ------------------------===//
//
// mlir-opt with the attn dialect, its passes and pipelines added to every
// upstream dialect, extension and pass. `--help` leads with the attn passes
// and pipelines; LLVM's backend options (several hundred, registered by the
// code generators linked in for the JIT) are hidden there but still accepted,
// and `--help-hidden` lists them.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "dialect/IrNesting.h"
#include "lib/Pipelines/Pipelines.h"
#include "lib/Runtime/Budget.h"
#include "lib/Transforms/Passes.h"
#include "test/lib/TestPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

/// The project's pipelines and passes, in the order a reader meets them
/// (test/tools/attn-opt/help.test checks that every pass of
/// docs/reference/AttnPasses.md is listed).
static constexpr const char *kAttnPipelines[] = {"attn-cpu-pipeline",
                                                 "attn-gpu-pipeline",
                                                 "attn-reference-pipeline"};
static constexpr const char *kAttnPasses[] = {
    "attn-set-target",      "attn-decompose-mha",   "attn-raise-mods",
    "attn-simplify-masks",
    "attn-fold-scale",      "attn-lower-to-linalg", "attn-tile",
    "attn-lower-gat",       "attn-lower-gat-unfused", "attn-vectorize",
    "attn-lower-vectors",   "attn-lower-amx",       "attn-lower-strided-copies",
    "attn-stack-tile-buffers", "attn-merge-parallel-regions",
    "attn-elide-result-copies",
    "attn-distinct-results",
    "attn-expand-bf16",     "attn-sdpa-to-gpu",
    "attn-prepare-spirv-kernels", "attn-nest-spirv-modules",
    "attn-subgroup-reduce-to-shuffles", "attn-align-workgroup-buffers",
    "attn-gat-to-gpu",
    "attn-runtime-checks"};

/// The --help overview: what attn-opt adds to mlir-opt, with each pipeline's
/// and pass's one-line description from its registration.
static std::string buildOverview() {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "attn-mlir optimizer driver: mlir-opt with the attn dialect, its "
        "passes and pipelines\n\n";
  auto line = [&](llvm::StringRef name, llvm::StringRef description) {
    os << "  --" << name;
    os.indent(name.size() < 26 ? 26 - name.size() : 1);
    os << "- " << description << "\n";
  };
  os << "attn pipelines (options: --pass-pipeline='builtin.module("
        "attn-cpu-pipeline{threads=2})'):\n";
  for (const char *name : kAttnPipelines)
    if (const mlir::PassPipelineInfo *info = mlir::PassPipelineInfo::lookup(name))
      line(name, info->getPassDescription());
  os << "\nattn passes:\n";
  for (const char *name : kAttnPasses)
    if (const mlir::PassInfo *info = mlir::PassInfo::lookup(name))
      line(name, info->getPassDescription());
  os << "\nEvery upstream MLIR pass and dialect is available too (listed "
        "below); LLVM backend options are hidden: --help-hidden lists them.\n";
  return text;
}

// The input file is checked against the memory budget before it is read.
// Registered before main, so hidden from --help like LLVM's options.
static llvm::cl::opt<std::string> memoryBudgetOption(
    "memory-budget",
    llvm::cl::desc("Largest input file read (e.g. 8G, 512M; default: "
                   "$ATTN_MEMORY_BUDGET or half of the memory this process "
                   "may use)"),
    llvm::cl::value_desc("SIZE"));

int main(int argc, char **argv) {
  // Everything registered before main (LLVM's backend and codegen options)
  // is hidden from --help; MLIR's own options and the pass list are
  // registered later, by MlirOptMain, and stay visible.
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::StringRef name = entry.first;
    if (name != "help" && name != "help-list" && name != "version" &&
        name != "color" && !name.starts_with("help-"))
      entry.second->setHiddenFlag(llvm::cl::Hidden);
  }

  mlir::registerAllPasses();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnPipelines();
  mlir::attn::registerAttnTestPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::attn::AttnDialect>();

  std::string overview = buildOverview();
  auto [inputFilename, outputFilename] =
      mlir::registerAndParseCLIOptions(argc, argv, overview, registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  // Listings read no input: mlir-opt's own handling.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
  // The input is read once (stdin too) and its nesting bounded before
  // MLIR's recursive parser sees it.
  // A device or a pipe (/dev/zero) would be read without end, a file past
  // the memory budget read whole: refused first (stdin is read as it is).
  if (llvm::Error err = mlir::attn::configureMemoryBudget(memoryBudgetOption)) {
    llvm::errs() << "attn-opt: error: " << llvm::toString(std::move(err))
                 << "\n";
    return 1;
  }
  if (inputFilename != "-")
    if (llvm::Error err = mlir::attn::checkInputFile(inputFilename)) {
      llvm::errs() << "attn-opt: error: " << llvm::toString(std::move(err))
                   << "\n";
      return 1;
    }
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << "attn-opt: error: " << error << "\n";
    return 1;
  }
  if (llvm::Error err =
          mlir::attn::checkIrNesting(file->getBuffer(), inputFilename)) {
    llvm::errs() << "attn-opt: error: " << llvm::toString(std::move(err))
                 << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "attn-opt: error: " << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
