//===- RaiseMaskMods.cpp - mask_mod regions that are built-in kinds -------===//
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
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEMASKMODS
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
    int64_t lq = op.getQuery().getType().getDimSize(2);
    int64_t lk = op.getKey().getType().getDimSize(2);
    // The region sees the row i; the kinds the position ia. They agree
    // top-left, and bottom-right when Lq == Lk.
    bool samePositions =
        op.getAlign() == Align::top_left ||
        (op.getAlign() == Align::bottom_right && !ShapedType::isDynamic(lq) &&
         lq == lk);
    if (!samePositions)
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
    rewriter.modifyOpInPlace(op, [&] {
      op.setMask(kind);
      if (left)
        op.setWindowLeftAttr(rewriter.getI64IntegerAttr(*left));
      if (right)
        op.setWindowRightAttr(rewriter.getI64IntegerAttr(*right));
    });
    rewriter.eraseBlock(&body);
    return success();
  }
};

struct AttnRaiseMaskMods
    : attn::impl::AttnRaiseMaskModsBase<AttnRaiseMaskMods> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MaskModAsKind>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
