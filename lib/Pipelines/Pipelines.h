//===- Pipelines.h - named pipelines from attn IR to LLVM -------*- C++ -*-===//

#ifndef ATTN_LIB_PIPELINES_PIPELINES_H
#define ATTN_LIB_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

/// Options of the reference pipeline.
struct ReferencePipelineOptions
    : public PassPipelineOptions<ReferencePipelineOptions> {
  Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("Turn memref results of every function into trailing "
                     "out-parameters (the JIT runtime's calling convention)"),
      llvm::cl::init(true)};
};

/// attn -> linalg (reference lowering) -> bufferized loops -> LLVM dialect.
/// Runs on a builtin.module.
void buildReferencePipeline(OpPassManager &pm,
                            const ReferencePipelineOptions &options = {});

/// Registers the named pipelines with the global pipeline registry
/// (`attn-reference-pipeline`).
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_LIB_PIPELINES_PIPELINES_H
