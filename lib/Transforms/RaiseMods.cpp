//===- RaiseMods.cpp - mask_mod regions that are built-in kinds -------===//
//
// A mask_mod that is a conjunction of bounds on kv_idx - q_idx (causal,
// sliding windows) is one of the built-in mask kinds written as a region:
// it is rewritten to the attribute form, which every lowering knows (the
// tiled lowering then bounds its key-tile loop instead of testing tiles).
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "dialect/MaskKinds.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEMODS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// a * q_idx + b * kv_idx + c.
struct Affine {
  int64_t a = 0, b = 0, c = 0;
};

/// `v` as an affine form of the region's q_idx (argument 2) and kv_idx
/// (argument 3), or std::nullopt.
std::optional<Affine> affineOf(Value v, Block &body) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != &body)
      return std::nullopt;
    if (arg.getArgNumber() == 2)
      return Affine{1, 0, 0};
    if (arg.getArgNumber() == 3)
      return Affine{0, 1, 0};
    return std::nullopt;
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto c = dyn_cast<arith::ConstantOp>(def)) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()); i && !c.getType().isInteger(1))
      return Affine{0, 0, i.getValue().getSExtValue()};
    return std::nullopt;
  }
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def)) {
    std::optional<Affine> x = affineOf(def->getOperand(0), body),
                          y = affineOf(def->getOperand(1), body);
    if (!x || !y)
      return std::nullopt;
    if (isa<arith::AddIOp>(def))
      return Affine{x->a + y->a, x->b + y->b, x->c + y->c};
    if (isa<arith::SubIOp>(def))
      return Affine{x->a - y->a, x->b - y->b, x->c - y->c};
    // A product is affine when one side is a constant.
    if (x->a == 0 && x->b == 0)
      return Affine{x->c * y->a, x->c * y->b, x->c * y->c};
    if (y->a == 0 && y->b == 0)
      return Affine{y->c * x->a, y->c * x->b, y->c * x->c};
  }
  return std::nullopt;
}

/// Bounds lo <= kv_idx - q_idx <= hi collected from a conjunction.
struct Bounds {
  std::optional<int64_t> lo, hi;
  void atMost(int64_t v) { hi = hi ? std::min(*hi, v) : v; }
  void atLeast(int64_t v) { lo = lo ? std::max(*lo, v) : v; }
};

/// Adds the bounds `cond` puts on kv_idx - q_idx; false when `cond` is not a
/// conjunction of such bounds.
bool collectBounds(Value cond, Block &body, Bounds &bounds) {
  Operation *def = cond.getDefiningOp();
  if (!def)
    return false;
  if (auto c = dyn_cast<arith::ConstantOp>(def))
    return cast<IntegerAttr>(c.getValue()).getInt() != 0; // `true`
  if (isa<arith::AndIOp>(def))
    return collectBounds(def->getOperand(0), body, bounds) &&
           collectBounds(def->getOperand(1), body, bounds);
  auto cmp = dyn_cast<arith::CmpIOp>(def);
  if (!cmp)
    return false;
  std::optional<Affine> x = affineOf(cmp.getLhs(), body),
                        y = affineOf(cmp.getRhs(), body);
  if (!x || !y)
    return false;
  // f = x - y = s * (kv_idx - q_idx) + c with s = +-1.
  Affine f{x->a - y->a, x->b - y->b, x->c - y->c};
  if (f.a != -f.b || (f.b != 1 && f.b != -1))
    return false;
  int64_t s = f.b;
  // f <= k  <=>  s * d <= k - c;  f >= k  <=>  s * d >= k - c (d = j - i).
  auto fAtMost = [&](int64_t k) {
    s == 1 ? bounds.atMost(k - f.c) : bounds.atLeast(f.c - k);
  };
  auto fAtLeast = [&](int64_t k) {
    s == 1 ? bounds.atLeast(k - f.c) : bounds.atMost(f.c - k);
  };
  using P = arith::CmpIPredicate;
  switch (cmp.getPredicate()) {
  case P::slt:
    fAtMost(-1);
    return true;
  case P::sle:
    fAtMost(0);
    return true;
  case P::sgt:
    fAtLeast(1);
    return true;
  case P::sge:
    fAtLeast(0);
    return true;
  case P::eq:
    fAtMost(0);
    fAtLeast(0);
    return true;
  default:
    return false;
  }
}

/// Whether the regions' row index q_idx is the kinds' position ia.
bool rowIsPosition(SdpaOp op) {
  int64_t lq = op.getQuery().getType().getDimSize(2);
  int64_t lk = op.getKey().getType().getDimSize(2);
  return op.getAlign() == Align::top_left ||
         (op.getAlign() == Align::bottom_right && !ShapedType::isDynamic(lq) &&
          lq == lk);
}

/// `v` is `arg` of `body` (one of its block arguments).
bool isArg(Value v, Block &body, unsigned arg) {
  auto a = dyn_cast<BlockArgument>(v);
  return a && a.getOwner() == &body && a.getArgNumber() == arg;
}

/// A score_mod's block arguments: (score, b, h, q_idx, kv_idx).
enum ScoreModArg : unsigned { kScore = 0, kHead = 2, kRow = 3, kKey = 4 };

/// `v` = kv_idx - q_idx (sign +1) or q_idx - kv_idx (sign -1) of a
/// score_mod; 0 otherwise.
int distanceSign(Value v, Block &body) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  auto sub = v.getDefiningOp<arith::SubIOp>();
  if (!sub)
    return 0;
  if (isArg(sub.getLhs(), body, kKey) && isArg(sub.getRhs(), body, kRow))
    return 1;
  if (isArg(sub.getLhs(), body, kRow) && isArg(sub.getRhs(), body, kKey))
    return -1;
  return 0;
}

/// `v` = |kv_idx - q_idx| (math.absi, or max(d, 0 - d); index casts on
/// either side): true; or the one-sided q_idx - kv_idx, which equals it
/// wherever the key is at or before the query (`oneSided`).
bool isDistance(Value v, Block &body, bool &oneSided) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  if (auto abs = v.getDefiningOp<math::AbsIOp>())
    return distanceSign(abs.getOperand(), body) != 0;
  if (auto max = v.getDefiningOp<arith::MaxSIOp>()) {
    for (auto [x, y] : {std::pair{max.getLhs(), max.getRhs()},
                        std::pair{max.getRhs(), max.getLhs()}}) {
      auto neg = y.getDefiningOp<arith::SubIOp>();
      std::optional<Affine> zero =
          neg ? affineOf(neg.getLhs(), body) : std::nullopt;
      if (distanceSign(x, body) != 0 && zero && zero->a == 0 &&
          zero->b == 0 && zero->c == 0 && neg.getRhs() == x)
        return true;
    }
    return false;
  }
  if (distanceSign(v, body) == -1) {
    oneSided = true;
    return true;
  }
  return false;
}

/// sdpa {mask = dense} mask_mod {bounds on kv_idx - q_idx} -> the kind.
struct MaskModAsKind : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Region &region = op.getMaskMod();
    if (region.empty())
      return rewriter.notifyMatchFailure(op, "no mask_mod");
    if (op.getMask() != MaskKind::dense)
      return rewriter.notifyMatchFailure(
          op, "the op has a mask kind already (left composed)");
    int64_t lk = op.getKey().getType().getDimSize(2);
    // The region sees the row i; the kinds the position ia. They agree
    // top-left, and bottom-right when Lq == Lk.
    if (!rowIsPosition(op))
      return rewriter.notifyMatchFailure(op, "q_idx is not the position ia");
    Block &body = region.front();
    Bounds bounds;
    if (!collectBounds(cast<YieldOp>(body.getTerminator()).getValue(), body,
                       bounds))
      return rewriter.notifyMatchFailure(
          op, "not a conjunction of bounds on kv_idx - q_idx");
    // j <= i + hi, j >= i + lo.
    MaskKind kind;
    std::optional<int64_t> left, right;
    if (!bounds.lo && !bounds.hi) {
      kind = MaskKind::dense;
    } else if (bounds.hi && !bounds.lo && *bounds.hi == 0) {
      kind = MaskKind::causal;
    } else if (bounds.lo && *bounds.lo <= 0 && bounds.hi && *bounds.hi == 0) {
      kind = MaskKind::causal_local;
      left = -*bounds.lo;
    } else if (bounds.lo && *bounds.lo <= 0 && (!bounds.hi || *bounds.hi >= 0)) {
      if (ShapedType::isDynamic(lk))
        return rewriter.notifyMatchFailure(op, "dynamic key length");
      kind = MaskKind::local;
      left = -*bounds.lo;
      // No upper bound: a right window that reaches every key.
      right = bounds.hi ? *bounds.hi : lk;
    } else {
      return rewriter.notifyMatchFailure(
          op, "the bounds are no built-in kind (a shifted diagonal)");
    }
    MaskParams params;
    params.kind = kind;
    if (left)
      params.set("window_left", *left);
    if (right)
      params.set("window_right", *right);
    rewriter.modifyOpInPlace(op, [&] { params.applyTo(op); });
    rewriter.eraseBlock(&body);
    return success();
  }
};

/// The value a score_mod yields, when the op has one whose row index is the
/// position ia (what the operand forms use); a match failure otherwise.
FailureOr<Value> raisableScoreMod(SdpaOp op, PatternRewriter &rewriter) {
  Region &region = op.getScoreMod();
  if (region.empty())
    return rewriter.notifyMatchFailure(op, "no score_mod");
  if (!rowIsPosition(op))
    return rewriter.notifyMatchFailure(op, "q_idx is not the position ia");
  return cast<YieldOp>(region.front().getTerminator()).getValue();
}

/// sdpa score_mod {s - slopes[h] * |kv_idx - q_idx|} -> alibi(slopes).
struct ScoreModAsAlibi : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getAlibiSlopes())
      return rewriter.notifyMatchFailure(op, "the op has ALiBi slopes already");
    FailureOr<Value> result = raisableScoreMod(op, rewriter);
    if (failed(result))
      return failure();
    Region &region = op.getScoreMod();
    Block &body = region.front();
    auto sub = result->getDefiningOp<arith::SubFOp>();
    if (!sub || !isArg(sub.getLhs(), body, kScore))
      return rewriter.notifyMatchFailure(op, "not score - penalty");
    auto mul = sub.getRhs().getDefiningOp<arith::MulFOp>();
    if (!mul)
      return rewriter.notifyMatchFailure(op, "the penalty is not a product");
    for (auto [slopeValue, distValue] : {std::pair{mul.getLhs(), mul.getRhs()},
                                         std::pair{mul.getRhs(), mul.getLhs()}}) {
      auto slope = slopeValue.getDefiningOp<tensor::ExtractOp>();
      auto toFloat = distValue.getDefiningOp<arith::SIToFPOp>();
      if (!slope || !toFloat || slope.getIndices().size() != 1 ||
          !isArg(slope.getIndices()[0], body, kHead))
        continue;
      Value slopes = slope.getTensor();
      auto slopesType = cast<RankedTensorType>(slopes.getType());
      Type elem = op.getQuery().getType().getElementType();
      int64_t heads = op.getQuery().getType().getDimSize(1);
      if (region.isAncestor(slopes.getParentRegion()) ||
          slopesType.getElementType() != elem ||
          slopesType.getShape() != ArrayRef<int64_t>{heads})
        continue;
      bool oneSided = false;
      if (!isDistance(toFloat.getIn(), body, oneSided))
        continue;
      // q_idx - kv_idx is |kv_idx - q_idx| only where keys are causal.
      MaskKind kind = op.getMask();
      if (oneSided && kind != MaskKind::causal &&
          kind != MaskKind::causal_local)
        continue;
      rewriter.modifyOpInPlace(op, [&] {
        op.getAlibiSlopesMutable().assign(slopes);
      });
      rewriter.eraseBlock(&body);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not slopes[h] * distance");
  }
};

/// `v` is an integer constant (defined anywhere: a greedy rewrite hoists
/// constants out of the region).
std::optional<int64_t> constantOf(Value v) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return c.getSExtValue();
  return std::nullopt;
}

/// `v` = clamp(kv_idx - q_idx, -R, R) + R (min/max in either order, the
/// offset on either side): R; std::nullopt otherwise.
std::optional<int64_t> clippedDistance(Value v, Block &body) {
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  for (auto [clamped, offset] : {std::pair{add.getLhs(), add.getRhs()},
                                 std::pair{add.getRhs(), add.getLhs()}}) {
    std::optional<int64_t> r = constantOf(offset);
    if (!r || *r < 0)
      continue;
    // outer(inner(d, x), y) with {x, y} = {-R, R} for min/max either way.
    Operation *outer = clamped.getDefiningOp();
    if (!isa_and_nonnull<arith::MinSIOp, arith::MaxSIOp>(outer))
      continue;
    for (auto [innerValue, outerBound] :
         {std::pair{outer->getOperand(0), outer->getOperand(1)},
          std::pair{outer->getOperand(1), outer->getOperand(0)}}) {
      Operation *inner = innerValue.getDefiningOp();
      if (!isa_and_nonnull<arith::MinSIOp, arith::MaxSIOp>(inner) ||
          inner->getName() == outer->getName())
        continue;
      std::optional<int64_t> ob = constantOf(outerBound);
      for (auto [d, innerBound] :
           {std::pair{inner->getOperand(0), inner->getOperand(1)},
            std::pair{inner->getOperand(1), inner->getOperand(0)}}) {
        std::optional<int64_t> ib = constantOf(innerBound);
        if (!ob || !ib || distanceSign(d, body) != 1 ||
            d.getType() != v.getType())
          continue;
        // min with +R and max with -R, whichever is applied first.
        bool minOuter = isa<arith::MinSIOp>(outer);
        int64_t hi = minOuter ? *ob : *ib, lo = minOuter ? *ib : *ob;
        if (hi == *r && lo == -*r)
          return *r;
      }
    }
  }
  return std::nullopt;
}

/// A score_mod `s + table[h, clamp(kv_idx - q_idx, -R, R) + R]` over a
/// captured H x (2R + 1) table is the rel_bias operand with rel_clip = R.
struct ScoreModAsRelBias : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getRelBias())
      return rewriter.notifyMatchFailure(op, "the op has a rel_bias already");
    FailureOr<Value> result = raisableScoreMod(op, rewriter);
    if (failed(result))
      return failure();
    Region &region = op.getScoreMod();
    Block &body = region.front();
    auto add = result->getDefiningOp<arith::AddFOp>();
    if (!add)
      return rewriter.notifyMatchFailure(op, "not score + bias");
    for (auto [score, biasValue] : {std::pair{add.getLhs(), add.getRhs()},
                                    std::pair{add.getRhs(), add.getLhs()}}) {
      auto bias = biasValue.getDefiningOp<tensor::ExtractOp>();
      if (!isArg(score, body, kScore) || !bias ||
          bias.getIndices().size() != 2 ||
          !isArg(bias.getIndices()[0], body, kHead))
        continue;
      std::optional<int64_t> clip = clippedDistance(bias.getIndices()[1], body);
      Value table = bias.getTensor();
      auto tableType = cast<RankedTensorType>(table.getType());
      Type elem = op.getQuery().getType().getElementType();
      int64_t heads = op.getQuery().getType().getDimSize(1);
      if (!clip || region.isAncestor(table.getParentRegion()) ||
          tableType.getElementType() != elem ||
          tableType.getShape() != ArrayRef<int64_t>{heads, 2 * *clip + 1})
        continue;
      // Shaw keys share rel_clip: only the same clip can join them.
      if (std::optional<int64_t> existing = op.getRelClip();
          existing && *existing != *clip)
        continue;
      rewriter.modifyOpInPlace(op, [&] {
        op.getRelBiasMutable().assign(table);
        op.setRelClipAttr(rewriter.getI64IntegerAttr(*clip));
      });
      rewriter.eraseBlock(&body);
      return success();
    }
    return rewriter.notifyMatchFailure(
        op, "not score + table[h, clamp(kv_idx - q_idx, -R, R) + R]");
  }
};

struct AttnRaiseMods
    : attn::impl::AttnRaiseModsBase<AttnRaiseMods> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MaskModAsKind, ScoreModAsAlibi, ScoreModAsRelBias>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
