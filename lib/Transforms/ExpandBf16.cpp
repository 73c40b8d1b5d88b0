//===- ExpandBf16.cpp - f32 <-> bf16 conversions as integer arithmetic ----===//
//
// attn-expand-bf16: MLIR's bf16 expansion patterns (arith.truncf to bf16 and
// arith.extf from bf16 on i32 bits), so that LLVM never emits a call of
// __truncsfbf2 for them.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDBF16
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnExpandBf16 : attn::impl::AttnExpandBf16Base<AttnExpandBf16> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
