//===- SimplifyMasks.cpp - rewrite masks that mask nothing ----------------===//
//
// The worked example of docs/writing-a-pass.md.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSIMPLIFYMASKS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// local(left, right) covering all keys -> dense.
struct LocalCoveringAllKeys : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getMask() != MaskKind::local)
      return rewriter.notifyMatchFailure(op, "not a local mask");
    int64_t lq = op.getQuery().getType().getDimSize(2);
    int64_t lk = op.getKey().getType().getDimSize(2);
    if (ShapedType::isDynamic(lq) || ShapedType::isDynamic(lk))
      return rewriter.notifyMatchFailure(op, "dynamic lengths");
    // Query i sits at ia = i + (Lk - Lq), from Lk - Lq to Lk - 1; every row
    // must reach key 0 (left) and key Lk - 1 (right).
    auto left = static_cast<int64_t>(*op.getWindowLeft());
    auto right = static_cast<int64_t>(*op.getWindowRight());
    if (left < lk - 1 || right < lq - 1)
      return rewriter.notifyMatchFailure(op, "the window masks some keys");
    rewriter.modifyOpInPlace(op, [&] {
      op.setMask(MaskKind::dense);
      op.removeWindowLeftAttr();
      op.removeWindowRightAttr();
    });
    return success();
  }
};

struct AttnSimplifyMasks
    : attn::impl::AttnSimplifyMasksBase<AttnSimplifyMasks> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LocalCoveringAllKeys>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
