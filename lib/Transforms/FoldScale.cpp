//===- FoldScale.cpp - fold the softmax scale into the query --------------===//
//
// The second worked example of docs/writing-a-pass.md: a pattern that creates
// linalg and arith ops through the project's builders (LinalgBuilders.h).
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFOLDSCALE
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// sdpa(q, k, v) {scale = s} -> sdpa(s * q, k, v) {scale = 1}.
struct ScaleIntoQuery : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    // The rewritten op must stop matching, or the greedy driver rewrites it
    // again forever: a scale of 1 is the fixed point.
    double scale = op.getEffectiveScale();
    if (scale == 1.0)
      return rewriter.notifyMatchFailure(op, "the scale is already 1");
    auto queryType = cast<RankedTensorType>(op.getQuery().getType());
    Type elemType = queryType.getElementType();
    if (!elemType.isF32() && !elemType.isF64())
      return rewriter.notifyMatchFailure(
          op, "not f32/f64: the scaled query would be rounded");
    if (!queryType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic query shape");

    Location loc = op.getLoc();
    Value factor = buildFloatConstant(rewriter, loc, elemType, scale);
    Value init = buildEmpty(rewriter, loc, queryType.getShape(), elemType);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(
        queryType.getRank(), rewriter.getContext());
    Value scaled = buildElementwise(
        rewriter, loc, init, op.getQuery(), identity,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) -> Value {
          // args: the query element, then the (unused) init element.
          return arith::MulFOp::create(b, bodyLoc, args[0], factor);
        });
    rewriter.modifyOpInPlace(op, [&] {
      op.getQueryMutable().assign(scaled);
      op.setScaleAttr(rewriter.getF64FloatAttr(1.0));
    });
    return success();
  }
};

struct AttnFoldScale : attn::impl::AttnFoldScaleBase<AttnFoldScale> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ScaleIntoQuery>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
