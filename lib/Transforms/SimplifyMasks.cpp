//===- SimplifyMasks.cpp - rewrite masks that mask nothing ----------------===//
//
// The worked example of docs/writing-a-pass.md.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "dialect/MaskKinds.h"
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

/// A mask kind that allows every (query, key) pair of this op -> dense.
struct MaskCoveringAllKeys : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    MaskParams mask = MaskParams::of(op);
    if (mask.kind == MaskKind::dense)
      return rewriter.notifyMatchFailure(op, "already dense");
    if (!isPositionalMask(mask.kind))
      return rewriter.notifyMatchFailure(op, "the mask is data (graph)");
    int64_t lq = op.getQuery().getType().getDimSize(2);
    int64_t lk = op.getKey().getType().getDimSize(2);
    if (ShapedType::isDynamic(lq) || ShapedType::isDynamic(lk))
      return rewriter.notifyMatchFailure(op, "dynamic lengths");
    // Query rows sit at ia = i + (Lk - Lq) (bottom-right) or ia = i
    // (top-left); the kind's definition (MaskKinds.h) must allow the whole
    // rectangle of those rows and keys 0 .. Lk - 1.
    if (op.getAlign() == Align::per_sequence)
      return rewriter.notifyMatchFailure(op, "positions depend on kv_lengths");
    int64_t first = op.getAlign() == Align::top_left ? 0 : lk - lq;
    if (!maskFull(mask, first, first + lq - 1, 0, lk - 1))
      return rewriter.notifyMatchFailure(op, "the mask masks some keys");
    rewriter.modifyOpInPlace(op, [&] {
      op.setMask(MaskKind::dense);
      for (StringRef name : maskParameterNames())
        op->removeAttr(name);
    });
    return success();
  }
};

struct AttnSimplifyMasks
    : attn::impl::AttnSimplifyMasksBase<AttnSimplifyMasks> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MaskCoveringAllKeys>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
