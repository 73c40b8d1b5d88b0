//===- DecomposeMha.cpp - attn.mha to projections + attn.sdpa -------------===//
//
// Splits the packed in-projection into its Q, K and V blocks and writes each
// projection straight into the head-split B x H x L x hd layout (one generic
// per projection, no transposes), calls attn.sdpa with the op's mask options,
// and merges heads inside the out-projection contraction.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEMHA
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Rows [offset, offset + rows) of a 2-d or 1-d packed tensor.
static Value sliceRows(OpBuilder &b, Location loc, Value packed, int64_t offset,
                       int64_t rows) {
  ArrayRef<int64_t> shape = getShape(packed);
  SmallVector<OpFoldResult> offsets{b.getIndexAttr(offset)},
      sizes{b.getIndexAttr(rows)}, strides{b.getIndexAttr(1)};
  if (shape.size() == 2) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(shape[1]));
    strides.push_back(b.getIndexAttr(1));
  }
  return tensor::ExtractSliceOp::create(b, loc, packed, offsets, sizes,
                                        strides);
}

struct DecomposeMha : OpRewritePattern<MhaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MhaOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticTensorOperands(op))
      return rewriter.notifyMatchFailure(op,
                                         "dynamic shapes are not supported");

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    ArrayRef<int64_t> q = getShape(op.getQuery());
    int64_t b = q[0], lq = q[1], dim = q[2], lk = getShape(op.getKey())[1];
    int64_t heads = op.getNumHeads(), kvHeads = op.getKvHeads();
    int64_t hd = dim / heads, kvDim = kvHeads * hd;

    // Projects x (B x L x D) with rows [offset, offset + nh*hd) of the packed
    // weight/bias into B x nh x L x hd; dims (b, h, l, c, d).
    auto project = [&](Value x, int64_t len, int64_t offset, int64_t nh) {
      Value w = sliceRows(rewriter, loc, op.getInProjWeight(), offset, nh * hd);
      Value w3 = buildExpand(rewriter, loc, w, {nh, hd, dim}, {{0, 1}, {2}});
      Value y =
          buildContraction(rewriter, loc, x, dimsMap(ctx, 5, {0, 2, 4}), w3,
                           dimsMap(ctx, 5, {1, 3, 4}), {b, nh, len, hd},
                           dimsMap(ctx, 5, {0, 1, 2, 3}));
      if (Value packedBias = op.getInProjBias()) {
        Value bias = sliceRows(rewriter, loc, packedBias, offset, nh * hd);
        Value bias2 = buildExpand(rewriter, loc, bias, {nh, hd}, {{0, 1}});
        y = buildBroadcastAdd(rewriter, loc, y, bias2, dimsMap(ctx, 4, {1, 3}));
      }
      return y;
    };
    Value qh = project(op.getQuery(), lq, 0, heads);
    Value kh = project(op.getKey(), lk, dim, kvHeads);
    Value vh = project(op.getValue(), lk, dim + kvDim, kvHeads);

    Type f = cast<RankedTensorType>(op.getQuery().getType()).getElementType();
    auto attnType = RankedTensorType::get({b, heads, lq, hd}, f);
    Value attn =
        SdpaOp::create(rewriter, loc, attnType, /*lse=*/Type(), qh, kh, vh,
                       op.getKvLengths(), op.getBias(), op.getRelBias(),
                       op.getRelKey(), op.getAlibiSlopes(), op.getRowPtr(),
                       op.getColIdx(), op.getMaskAttr(), op.getWindowLeftAttr(),
                       op.getWindowRightAttr(), op.getRelClipAttr(),
                       op.getScaleAttr())
            .getOutput();

    // out[b,l,o] = sum_{h,c} attn[b,h,l,c] * Wout[o, h*hd + c]; dims
    // (b,l,o,h,c).
    Value wOut = buildExpand(rewriter, loc, op.getOutProjWeight(),
                             {dim, heads, hd}, {{0}, {1, 2}});
    Value out = buildContraction(
        rewriter, loc, attn, dimsMap(ctx, 5, {0, 3, 1, 4}), wOut,
        dimsMap(ctx, 5, {2, 3, 4}), {b, lq, dim}, dimsMap(ctx, 5, {0, 1, 2}));
    if (Value bias = op.getOutProjBias())
      out = buildBroadcastAdd(rewriter, loc, out, bias, dimsMap(ctx, 3, {2}));
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct AttnDecomposeMha : attn::impl::AttnDecomposeMhaBase<AttnDecomposeMha> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeMhaPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateDecomposeMhaPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeMha>(patterns.getContext());
}
