//===- DecomposeMha.cpp - attn.mha to projections + attn.sdpa -------------===//
//
// Projects with 2-d contractions over all B*L rows (one for Q, K and V
// together in self-attention, the packed weight transposed once so both
// operands are read along rows), splits heads into the B x H x L x hd layout
// of attn.sdpa, calls it with the op's mask options, merges heads and applies
// the out-projection as one more 2-d contraction.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "dialect/MaskKinds.h"
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

    // Projects x (B x L x D) with rows [offset, offset + n) of the packed
    // weight/bias: one 2-d contraction over all B*L rows, B x L x n.
    auto project = [&](Value x, int64_t offset, int64_t n) {
      Value w = sliceRows(rewriter, loc, op.getInProjWeight(), offset, n);
      Value bias;
      if (Value packedBias = op.getInProjBias())
        bias = sliceRows(rewriter, loc, packedBias, offset, n);
      return buildMatmul(rewriter, loc, x,
                         buildTranspose(rewriter, loc, w, {1, 0}), bias);
    };
    // Columns [offset, offset + nh*hd) of a projection y (B x L x n) as
    // B x nh x L x hd: the columns sliced and expanded to B x L x nh x hd,
    // then (b, h, l, c) reads (b, l, h, c). A permutation that keeps hd
    // innermost is copied in vector rows; the flattened column index
    // h*hd + c would be read one element at a time.
    auto splitHeads = [&](Value y, int64_t offset, int64_t nh, int64_t len) {
      Type elem = cast<RankedTensorType>(y.getType()).getElementType();
      Value cols = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get({b, len, nh * hd}, elem), y,
          ValueRange{}, ValueRange{}, ValueRange{},
          rewriter.getDenseI64ArrayAttr({0, 0, offset}),
          rewriter.getDenseI64ArrayAttr({b, len, nh * hd}),
          rewriter.getDenseI64ArrayAttr({1, 1, 1}));
      Value heads4 = buildExpand(rewriter, loc, cols, {b, len, nh, hd},
                                 {{0}, {1}, {2, 3}});
      AffineExpr bd, h, l, c;
      bindDims(ctx, bd, h, l, c);
      AffineMap read = AffineMap::get(4, 0, {bd, l, h, c}, ctx);
      Value init = tensor::EmptyOp::create(rewriter, loc, {b, nh, len, hd},
                                           elem);
      return buildElementwise(
          rewriter, loc, init, {heads4}, {read},
          [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    };
    Value qh, kh, vh;
    if (op.getQuery() == op.getKey() && op.getKey() == op.getValue()) {
      // Self-attention: one projection with the whole packed weight.
      Value y = project(op.getQuery(), 0, dim + 2 * kvDim);
      qh = splitHeads(y, 0, heads, lq);
      kh = splitHeads(y, dim, kvHeads, lk);
      vh = splitHeads(y, dim + kvDim, kvHeads, lk);
    } else {
      qh = splitHeads(project(op.getQuery(), 0, dim), 0, heads, lq);
      kh = splitHeads(project(op.getKey(), dim, kvDim), 0, kvHeads, lk);
      vh = splitHeads(project(op.getValue(), dim + kvDim, kvDim), 0, kvHeads,
                      lk);
    }

    Type f = cast<RankedTensorType>(op.getQuery().getType()).getElementType();
    auto attnType = RankedTensorType::get({b, heads, lq, hd}, f);
    auto sdpa = SdpaOp::create(
        rewriter, loc, attnType, /*lse=*/Type(), qh, kh, vh, op.getKvLengths(),
        op.getBias(), op.getRelBias(), op.getRelKey(), op.getAlibiSlopes(),
        op.getRowPtr(), op.getColIdx(), op.getMaskAttr(), op.getRelClipAttr(),
        op.getScaleAttr(),
        op.getAlignAttr());
    // Every mask parameter the kind's definition reads, whichever kind.
    MaskParams::of(op).applyTo(sdpa);
    // The score_mod / mask_mod regions move over: same block arguments.
    rewriter.inlineRegionBefore(op.getScoreMod(), sdpa.getScoreMod(),
                                sdpa.getScoreMod().end());
    rewriter.inlineRegionBefore(op.getMaskMod(), sdpa.getMaskMod(),
                                sdpa.getMaskMod().end());
    Value attn = sdpa.getOutput();

    // Merge heads (B x L x H x hd = B x L x D), then one 2-d contraction
    // with the out-projection.
    Value merged = buildCollapse(
        rewriter, loc, buildTranspose(rewriter, loc, attn, {0, 2, 1, 3}),
        {{0}, {1}, {2, 3}});
    Value out = buildMatmul(
        rewriter, loc, merged,
        buildTranspose(rewriter, loc, op.getOutProjWeight(), {1, 0}),
        op.getOutProjBias());
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct AttnDecomposeMha : attn::impl::AttnDecomposeMhaBase<AttnDecomposeMha> {
  using AttnDecomposeMhaBase::AttnDecomposeMhaBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    if (widenAttention)
      populateWidenPrecisionPatterns(patterns);
    else
      populateWidenMhaPatterns(patterns);
    populateDecomposeMhaPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateDecomposeMhaPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeMha>(patterns.getContext());
}
