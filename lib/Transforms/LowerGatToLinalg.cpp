//===- LowerGatToLinalg.cpp - reference lowering of attn.gat --------------===//
//
// Materialises a dense H x N x N score tensor from a dense edge-count matrix,
// so that duplicate edges and self loops are handled by plain arithmetic:
//
//   cnt[i,j] = number of edges j -> i          (self loops replaced by 1)
//   e[h,i,j] = LeakyReLU(a_dst[i,h] + a_src[j,h]), -inf where cnt = 0
//   alpha    = softmax_j with weights cnt      (an edge seen twice counts
//   twice) out[i,h] = sum_j alpha[h,i,j] * z[j,h]
//
// O(N^2) by design: the plain second path, not the fast one (the oracle is
// lib/Runtime/Reference.cpp).
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/GatBuilders.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

struct LowerGatToLinalg : OpRewritePattern<GatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticTensorOperands(op))
      return rewriter.notifyMatchFailure(op,
                                         "dynamic shapes are not supported");
    // Per-edge coefficients: the unfused lowering (added below) returns
    // them; the dense scores here have no edge order.
    if (op.needsUnfusedLowering())
      return rewriter.notifyMatchFailure(
          op, "returns per-edge alpha, has edge attributes or is bipartite");

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Type f = cast<RankedTensorType>(op.getX().getType()).getElementType();
    int64_t n = getShape(op.getX())[0];
    int64_t heads = getShape(op.getAttSrc())[0],
            ch = getShape(op.getAttSrc())[1];

    auto [z3, aSrc, aDst] = buildGatProjections(rewriter, loc, op);

    bool selfLoops = op.getAddSelfLoops();
    Value counts =
        buildDenseFromCsr(rewriter, loc, op.getRowPtr(), op.getColIdx(), n, n,
                          f, /*skipDiagonal=*/selfLoops);
    if (selfLoops) {
      Value one = buildFloatConstant(rewriter, loc, f, 1.0);
      counts = buildElementwise(
          rewriter, loc, tensor::EmptyOp::create(rewriter, loc, {n, n}, f),
          ValueRange{counts}, {AffineMap::getMultiDimIdentityMap(2, ctx)},
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value i = linalg::IndexOp::create(b, l, 0);
            Value j = linalg::IndexOp::create(b, l, 1);
            Value diag =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, i, j);
            return arith::SelectOp::create(b, l, diag, one, args[0]);
          });
    }

    // e[h,i,j] over dims (h, i, j).
    Value zero = buildFloatConstant(rewriter, loc, f, 0.0);
    Value negInf = buildFloatConstant(rewriter, loc, f,
                                      -std::numeric_limits<double>::infinity());
    Value scores = buildElementwise(
        rewriter, loc, tensor::EmptyOp::create(rewriter, loc, {heads, n, n}, f),
        ValueRange{aDst, aSrc, counts},
        {dimsMap(ctx, 3, {1, 0}), dimsMap(ctx, 3, {2, 0}),
         dimsMap(ctx, 3, {1, 2})},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value leaky = buildLeakyRelu(
              b, l, op, arith::AddFOp::create(b, l, args[0], args[1]));
          Value edge = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                             args[2], zero);
          return arith::SelectOp::create(b, l, edge, leaky, negInf);
        });
    MaskedSoftmax sm = buildMaskedSoftmax(rewriter, loc, scores, counts,
                                          dimsMap(ctx, 3, {1, 2}));

    // out[i,h,c] = sum_j alpha[h,i,j] * z[j,h,c]; dims (i, h, c, j).
    Value out = buildContraction(
        rewriter, loc, sm.probs, dimsMap(ctx, 4, {1, 0, 3}), z3,
        dimsMap(ctx, 4, {3, 1, 2}), {n, heads, ch}, dimsMap(ctx, 4, {0, 1, 2}));
    Value result = buildGatCombine(rewriter, loc, op, out);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

GatProjections mlir::attn::buildGatProjections(OpBuilder &rewriter,
                                               Location loc, GatOp op) {
  MLIRContext *ctx = rewriter.getContext();
  int64_t heads = getShape(op.getAttSrc())[0], ch = getShape(op.getAttSrc())[1];
  // z = x W^T viewed as N x H x C (W transposed once, so the contraction
  // reads both operands along rows).
  auto project = [&](Value x, Value w) {
    Value z = buildMatmul(rewriter, loc, x,
                          buildTranspose(rewriter, loc, w, {1, 0}),
                          /*bias=*/Value());
    return buildExpand(rewriter, loc, z, {getShape(x)[0], heads, ch},
                       {{0}, {1, 2}});
  };
  Value z3 = project(op.getX(), op.getWeight());
  Value zDst = op.getXDst() ? project(op.getXDst(), op.getWeightDst()) : z3;

  // a_src[n,h] = att_src[h] . z[n,h], a_dst likewise; dims (n, h, c).
  auto attend = [&](Value z, Value att) {
    return buildContraction(rewriter, loc, z, dimsMap(ctx, 3, {0, 1, 2}), att,
                            dimsMap(ctx, 3, {1, 2}), {getShape(z)[0], heads},
                            dimsMap(ctx, 3, {0, 1}));
  };
  Value aSrc = attend(z3, op.getAttSrc()), aDst = attend(zDst, op.getAttDst());
  return {z3, aSrc, aDst};
}

/// The fields attn.gat and attn.gatv2 share; `att` gives H x C.
template <typename OpTy> static GatLayer gatLayerOf(OpTy op, Value att) {
  ArrayRef<int64_t> shape = getShape(att);
  int64_t nSrc = getShape(op.getX())[0],
          n = op.getXDst() ? getShape(op.getXDst())[0] : nSrc;
  GatLayer layer{op,
                 op.getX(),
                 op.getRowPtr(),
                 op.getColIdx(),
                 op.getBias(),
                 op.getAlpha(),
                 n,
                 shape[0],
                 shape[1],
                 op.getCombine() == HeadCombine::concat,
                 op.getAddSelfLoops(),
                 op.getNegativeSlope().convertToDouble(),
                 cast<RankedTensorType>(op.getX().getType()).getElementType(),
                 /*edgeAttr=*/Value(),
                 /*weightEdge=*/Value(),
                 /*attEdge=*/Value(),
                 op.getXDst(),
                 nSrc,
                 op.getAddSelfLoops() ? std::min(n, nSrc) : 0};
  return layer;
}

GatLayer GatLayer::of(GatOp op) {
  GatLayer layer = gatLayerOf(op, op.getAttSrc());
  layer.edgeAttr = op.getEdgeAttr();
  layer.weightEdge = op.getWeightEdge();
  layer.attEdge = op.getAttEdge();
  return layer;
}

GatLayer GatLayer::of(GatV2Op op) {
  GatLayer layer = gatLayerOf(op, op.getAtt());
  layer.edgeAttr = op.getEdgeAttr();
  layer.weightEdge = op.getWeightEdge();
  return layer;
}

Value mlir::attn::buildLeakyRelu(OpBuilder &b, Location loc, double slope,
                                 Value x) {
  Type f = x.getType();
  Value zero = buildFloatConstant(b, loc, f, 0.0);
  Value s = buildFloatConstant(b, loc, f, slope);
  Value pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
  return arith::SelectOp::create(b, loc, pos, x,
                                 arith::MulFOp::create(b, loc, s, x));
}

Value mlir::attn::buildLeakyRelu(OpBuilder &b, Location loc, GatOp op,
                                 Value x) {
  return buildLeakyRelu(b, loc, op.getNegativeSlope().convertToDouble(), x);
}

Value mlir::attn::buildGatCombine(OpBuilder &rewriter, Location loc,
                                  const GatLayer &layer, Value out) {
  MLIRContext *ctx = rewriter.getContext();
  Type f = layer.elemType;
  int64_t n = layer.n, heads = layer.heads, ch = layer.ch;
  Value result;
  if (layer.concat) {
    result = buildCollapse(rewriter, loc, out, {{0}, {1, 2}});
  } else {
    // mean over heads: sum_h out[i,h,c] * (1/H); dims (i, c, h).
    Value inv = buildElementwise(
        rewriter, loc, tensor::EmptyOp::create(rewriter, loc, {heads}, f),
        ValueRange{}, {}, [&](OpBuilder &b, Location l, ValueRange) -> Value {
          return buildFloatConstant(b, l, f, 1.0 / static_cast<double>(heads));
        });
    result = buildContraction(rewriter, loc, out, dimsMap(ctx, 3, {0, 2, 1}),
                              inv, dimsMap(ctx, 3, {2}), {n, ch},
                              dimsMap(ctx, 3, {0, 1}));
  }
  if (Value bias = layer.bias)
    result =
        buildBroadcastAdd(rewriter, loc, result, bias, dimsMap(ctx, 2, {1}));
  return result;
}

Value mlir::attn::buildGatCombine(OpBuilder &rewriter, Location loc, GatOp op,
                                  Value out) {
  return buildGatCombine(rewriter, loc, GatLayer::of(op), out);
}

void mlir::attn::populateLowerGatToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerGatToLinalg>(patterns.getContext());
  // Layers that return alpha.
  populateLowerGatUnfusedPatterns(patterns, /*benefit=*/0);
}
