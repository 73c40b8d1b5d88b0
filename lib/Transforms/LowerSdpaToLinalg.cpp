//===- LowerSdpaToLinalg.cpp - reference lowering of attn.sdpa ------------===//
//
// Materialises the scores: S = QK^T, one elementwise generic applies the scale,
// the score modifications and the mask, a masked softmax normalises, and
// O = P V. Simple and obviously right: the plain path next to the fast ones
// (the tests' oracle is the independent lib/Runtime/Reference.cpp).
//
// Grouped-query attention is expressed without copies: the query is viewed as
// B x Hkv x G x Lq x E, so query head h = kh * G + g reads key/value head kh.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"
#include "lib/Transforms/SdpaScore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Iteration dims of the 5-d score space B x Hkv x G x Lq x Lk.
enum ScoreDim : unsigned { kB = 0, kKh, kG, kI, kJ };

/// Sizes of one attn.sdpa, with G = H / Hkv query heads per key/value head.
struct SdpaSizes {
  int64_t b, h, hkv, g, lq, lk, e, ev;
};

/// Builds the elementwise generic that turns raw q.k products into final
/// scores: scale, Shaw term, biases, ALiBi, then -inf where the mask forbids.
class ScoreBuilder {
public:
  ScoreBuilder(SdpaOp op, const SdpaSizes &sz, Value qk, Value shaw,
               Value graphMask)
      : op(op), sz(sz), qk(qk), shaw(shaw), graphMask(graphMask) {}

  Value build(OpBuilder &b, Location loc) {
    MLIRContext *ctx = b.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(5, ctx);
    SmallVector<Value> inputs{qk};
    SmallVector<AffineMap> maps{id};
    if (Value bias = op.getBias()) {
      biasArg = inputs.size();
      inputs.push_back(expandBias(b, loc, bias));
      maps.push_back(biasMap(ctx));
    }
    if (graphMask) {
      maskArg = inputs.size();
      inputs.push_back(graphMask);
      maps.push_back(dimsMap(ctx, 5, {kI, kJ}));
    }
    Type f = op.getQuery().getType().getElementType();
    Value init = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{sz.b, sz.hkv, sz.g, sz.lq, sz.lk}, f);
    return buildElementwise(b, loc, init, inputs, maps,
                            [&](OpBuilder &nb, Location nloc, ValueRange args) {
                              return body(nb, nloc, args);
                            });
  }

private:
  /// Views the B' x H' x Lq' x Lk' bias as B' x Hkv' x G' x Lq' x Lk'.
  Value expandBias(OpBuilder &b, Location loc, Value bias) {
    ArrayRef<int64_t> s = getShape(bias);
    bool fullHeads = s[1] != 1;
    return buildExpand(
        b, loc, bias,
        {s[0], fullHeads ? sz.hkv : 1, fullHeads ? sz.g : 1, s[2], s[3]},
        {{0}, {1, 2}, {3}, {4}});
  }

  /// Reads the expanded bias, broadcasting its size-1 dims.
  AffineMap biasMap(MLIRContext *ctx) {
    ArrayRef<int64_t> s = getShape(op.getBias());
    int64_t expanded[5] = {s[0], s[1] == 1 ? 1 : sz.hkv, s[1] == 1 ? 1 : sz.g,
                           s[2], s[3]};
    int64_t full[5] = {sz.b, sz.hkv, sz.g, sz.lq, sz.lk};
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < 5; ++d)
      exprs.push_back(expanded[d] == 1 && full[d] != 1
                          ? getAffineConstantExpr(0, ctx)
                          : getAffineDimExpr(d, ctx));
    return AffineMap::get(5, 0, exprs, ctx);
  }

  Value body(OpBuilder &b, Location loc, ValueRange args) {
    Value kh = linalg::IndexOp::create(b, loc, kKh);
    Value g = linalg::IndexOp::create(b, loc, kG);
    // Query head h = kh * G + g.
    Value h = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, kh,
                              arith::ConstantIndexOp::create(b, loc, sz.g)),
        g);
    ScorePosition pos{linalg::IndexOp::create(b, loc, kB), h,
                      linalg::IndexOp::create(b, loc, kI),
                      linalg::IndexOp::create(b, loc, kJ)};
    Value shawDot;
    if (shaw)
      shawDot = tensor::ExtractOp::create(
          b, loc, shaw,
          ValueRange{pos.b, kh, g, pos.i, emitter.relativeIndex(b, loc, pos)});
    Value s = emitter.modify(b, loc, pos, args[0], shawDot,
                             biasArg ? args[*biasArg] : Value());
    SmallVector<Value> extra;
    if (maskArg)
      extra.push_back(args[*maskArg]);
    return emitter.mask(b, loc, pos, s, extra);
  }

  SdpaOp op;
  SdpaScoreEmitter emitter{op};
  const SdpaSizes &sz;
  Value qk, shaw, graphMask;
  std::optional<unsigned> biasArg, maskArg;
};

struct LowerSdpaToLinalg : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticTensorOperands(op))
      return rewriter.notifyMatchFailure(op,
                                         "dynamic shapes are not supported");

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    ArrayRef<int64_t> q = getShape(op.getQuery()), k = getShape(op.getKey()),
                      v = getShape(op.getValue());
    SdpaSizes sz{q[0], q[1], k[1], q[1] / k[1], q[2], k[2], q[3], v[3]};

    // Q viewed as B x Hkv x G x Lq x E.
    Value q5 =
        buildExpand(rewriter, loc, op.getQuery(),
                    {sz.b, sz.hkv, sz.g, sz.lq, sz.e}, {{0}, {1, 2}, {3}, {4}});

    // QK[b,kh,g,i,j] = sum_e q5[b,kh,g,i,e] * k[b,kh,j,e]; dims (b,kh,g,i,j,e).
    Value qk = buildContraction(
        rewriter, loc, q5, dimsMap(ctx, 6, {kB, kKh, kG, kI, 5}), op.getKey(),
        dimsMap(ctx, 6, {kB, kKh, kJ, 5}), {sz.b, sz.hkv, sz.g, sz.lq, sz.lk},
        dimsMap(ctx, 6, {kB, kKh, kG, kI, kJ}));

    // Shaw: QA[b,kh,g,i,r] = sum_e q5[b,kh,g,i,e] * rel_key[r,e]; the score
    // generic gathers QA at r = clip(j - ia) + R.
    Value shaw;
    if (Value relKey = op.getRelKey()) {
      int64_t numRel = getShape(relKey)[0];
      shaw = buildContraction(
          rewriter, loc, q5, dimsMap(ctx, 6, {0, 1, 2, 3, 5}), relKey,
          dimsMap(ctx, 6, {4, 5}), {sz.b, sz.hkv, sz.g, sz.lq, numRel},
          dimsMap(ctx, 6, {0, 1, 2, 3, 4}));
    }

    Value graphMask;
    if (op.getMask() == MaskKind::graph)
      graphMask =
          buildDenseFromCsr(rewriter, loc, op.getRowPtr(), op.getColIdx(),
                            sz.lq, sz.lk, rewriter.getI1Type());

    Value scores =
        ScoreBuilder(op, sz, qk, shaw, graphMask).build(rewriter, loc);
    MaskedSoftmax sm = buildMaskedSoftmax(rewriter, loc, scores);

    // O[b,kh,g,i,d] = sum_j P[b,kh,g,i,j] * v[b,kh,j,d]; dims (b,kh,g,i,d,j).
    Value o5 = buildContraction(
        rewriter, loc, sm.probs, dimsMap(ctx, 6, {0, 1, 2, 3, 5}),
        op.getValue(), dimsMap(ctx, 6, {0, 1, 5, 4}),
        {sz.b, sz.hkv, sz.g, sz.lq, sz.ev}, dimsMap(ctx, 6, {0, 1, 2, 3, 4}));
    SmallVector<Value> results{
        buildCollapse(rewriter, loc, o5, {{0}, {1, 2}, {3}, {4}})};
    if (op.getLse())
      results.push_back(
          buildCollapse(rewriter, loc, sm.lse, {{0}, {1, 2}, {3}}));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::attn::populateLowerSdpaToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerSdpaToLinalg>(patterns.getContext());
}
