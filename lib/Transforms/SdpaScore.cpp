//===- SdpaScore.cpp - score modifications and masks of attn.sdpa ---------===//

#include "lib/Transforms/SdpaScore.h"
#include "lib/Transforms/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

static Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate p, Value x,
                 Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}

SdpaScoreEmitter::SdpaScoreEmitter(SdpaOp op)
    : op(op), lq(op.getQuery().getType().getDimSize(2)),
      lk(op.getKey().getType().getDimSize(2)),
      params(MaskParams::of(op.getOperation())) {}

Value SdpaScoreEmitter::queryPosition(OpBuilder &b, Location loc, Value batch,
                                      Value i) const {
  switch (op.getAlign()) {
  case Align::bottom_right:
    return arith::AddIOp::create(b, loc, i,
                                 buildIndexConstant(b, loc, lk - lq));
  case Align::top_left:
    return i;
  case Align::per_sequence: {
    Value len = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        tensor::ExtractOp::create(b, loc, op.getKvLengths(),
                                  ValueRange{batch}));
    Value offset =
        arith::SubIOp::create(b, loc, len, buildIndexConstant(b, loc, lq));
    return arith::AddIOp::create(b, loc, i, offset);
  }
  }
  llvm_unreachable("unknown alignment");
}

Value SdpaScoreEmitter::relativeIndex(OpBuilder &b, Location loc,
                                      const ScorePosition &p) const {
  int64_t r = static_cast<int64_t>(*op.getRelClip());
  Value dist =
      arith::SubIOp::create(b, loc, p.j, queryPosition(b, loc, p.b, p.i));
  Value clipped = arith::MaxSIOp::create(
      b, loc,
      arith::MinSIOp::create(b, loc, dist, buildIndexConstant(b, loc, r)),
      buildIndexConstant(b, loc, -r));
  return arith::AddIOp::create(b, loc, clipped, buildIndexConstant(b, loc, r));
}

bool SdpaScoreEmitter::isPlainScore() const {
  return !op.getRelKey() && !op.getBias() && !op.getRelBias() &&
         !op.getAlibiSlopes() && op.getScoreMod().empty();
}

std::pair<Value, Value>
SdpaScoreEmitter::regionIndices(OpBuilder &b, Location loc,
                                const ScorePosition &p) const {
  // Tiled lowerings evaluate padded rows (i >= Lq) and keys (j >= Lk) whose
  // results are discarded; the region must still index its captured tensors
  // in bounds.
  return {
      arith::MinSIOp::create(b, loc, p.i, buildIndexConstant(b, loc, lq - 1)),
      arith::MinSIOp::create(b, loc, p.j, buildIndexConstant(b, loc, lk - 1))};
}

bool SdpaScoreEmitter::hasMaskMod() const { return !op.getMaskMod().empty(); }

/// `idx` clamped into [0, size - 1] of dim `d` of `tensor`, unless it is a
/// constant already there. (The verifier refuses region reads of tensors
/// with a zero-size dimension.)
static Value clampIndex(OpBuilder &b, Location loc, Value idx, Value tensor,
                        unsigned d) {
  int64_t dim = cast<RankedTensorType>(tensor.getType()).getDimSize(d);
  std::optional<int64_t> known = getConstantIntValue(idx);
  if (!ShapedType::isDynamic(dim) && known && *known >= 0 && *known < dim)
    return idx;
  Value last = ShapedType::isDynamic(dim)
                   ? arith::SubIOp::create(
                         b, loc, tensor::DimOp::create(b, loc, tensor, d),
                         buildIndexConstant(b, loc, 1))
                         .getResult()
                   : buildIndexConstant(b, loc, dim - 1);
  Value hi = arith::MinSIOp::create(b, loc, idx, last);
  return arith::MaxSIOp::create(b, loc, hi, buildIndexConstant(b, loc, 0));
}

Value mlir::attn::buildClampedExtract(OpBuilder &b, Location loc, Value tensor,
                                      ValueRange indices) {
  SmallVector<Value> clamped;
  for (auto [d, idx] : llvm::enumerate(indices))
    clamped.push_back(clampIndex(b, loc, idx, tensor, d));
  return tensor::ExtractOp::create(b, loc, tensor, clamped);
}

Value mlir::attn::inlineModRegion(OpBuilder &b, Region &region,
                                  ValueRange args) {
  Block &block = region.front();
  IRMapping map;
  map.map(block.getArguments(), args);
  for (Operation &inner : block.without_terminator()) {
    if (auto abs = dyn_cast<math::AbsIOp>(inner)) {
      // |v| as max(v, 0 - v) (the same for the minimum value: both wrap to
      // it): MLIR 22 lowers math.absi neither on index nor, once vectorized,
      // on a vector of more than one dimension.
      Location loc = abs.getLoc();
      Value v = map.lookupOrDefault(abs.getOperand());
      Value zero =
          arith::ConstantOp::create(b, loc, b.getZeroAttr(v.getType()));
      Value neg = arith::SubIOp::create(b, loc, zero, v);
      map.map(abs.getResult(), arith::MaxSIOp::create(b, loc, v, neg));
      continue;
    }
    auto x = dyn_cast<tensor::ExtractOp>(inner);
    if (!x) {
      b.clone(inner, map);
      continue;
    }
    // A region's index into a captured tensor may come from data (another
    // input's values): it is clamped into the tensor, so that a bad value
    // reads the nearest element instead of outside the buffer (the
    // reference reports such a read as an error). The region's own
    // arguments (b, h, q_idx, kv_idx) are in bounds already: the emitter
    // clamps them to the op's sizes and the verifier requires the tensor to
    // be that large.
    Value source = map.lookupOrDefault(x.getTensor());
    SmallVector<Value> indices;
    for (auto [d, idx] : llvm::enumerate(x.getIndices())) {
      auto arg = dyn_cast<BlockArgument>(idx);
      Value mapped = map.lookupOrDefault(idx);
      indices.push_back(arg && arg.getOwner() == &block
                            ? mapped
                            : clampIndex(b, x.getLoc(), mapped, source, d));
    }
    map.map(x.getResult(),
            tensor::ExtractOp::create(b, x.getLoc(), source, indices));
  }
  return map.lookupOrDefault(cast<YieldOp>(block.getTerminator()).getValue());
}

Value SdpaScoreEmitter::modify(OpBuilder &b, Location loc,
                               const ScorePosition &p, Value qk, Value shaw,
                               Value bias, bool prescaled) const {
  Type f = qk.getType();
  Value s = qk;
  if (shaw)
    s = arith::AddFOp::create(b, loc, s, shaw);
  if (!prescaled)
    s = arith::MulFOp::create(
        b, loc, s, buildFloatConstant(b, loc, f, op.getEffectiveScale()));
  if (bias)
    s = arith::AddFOp::create(b, loc, s, bias);
  if (Value table = op.getRelBias())
    s = arith::AddFOp::create(
        b, loc, s,
        tensor::ExtractOp::create(b, loc, table,
                                  ValueRange{p.h, relativeIndex(b, loc, p)}));
  if (Value slopes = op.getAlibiSlopes()) {
    Value slope = tensor::ExtractOp::create(b, loc, slopes, ValueRange{p.h});
    Value dist =
        arith::SubIOp::create(b, loc, p.j, queryPosition(b, loc, p.b, p.i));
    Value absDist = arith::MaxSIOp::create(
        b, loc, dist,
        arith::SubIOp::create(b, loc, buildIndexConstant(b, loc, 0), dist));
    Value absF = arith::SIToFPOp::create(
        b, loc, f, arith::IndexCastOp::create(b, loc, b.getI64Type(), absDist));
    s = arith::SubFOp::create(b, loc, s,
                              arith::MulFOp::create(b, loc, slope, absF));
  }
  if (!op.getScoreMod().empty()) {
    auto [i, j] = regionIndices(b, loc, p);
    s = inlineModRegion(b, op.getScoreMod(), {s, p.b, p.h, i, j});
  }
  return s;
}

Value SdpaScoreEmitter::allowed(OpBuilder &b, Location loc,
                                const ScorePosition &p,
                                ArrayRef<Value> extra) const {
  SmallVector<Value> conds;
  if (Value kind = buildMaskAllowed(b, loc, params,
                                    queryPosition(b, loc, p.b, p.i), p.j))
    conds.push_back(kind);
  if (Value lengths = op.getKvLengths()) {
    Value len = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        tensor::ExtractOp::create(b, loc, lengths, ValueRange{p.b}));
    conds.push_back(cmp(b, loc, arith::CmpIPredicate::slt, p.j, len));
  }
  if (!op.getMaskMod().empty()) {
    auto [i, j] = regionIndices(b, loc, p);
    conds.push_back(inlineModRegion(b, op.getMaskMod(), {p.b, p.h, i, j}));
  }
  conds.append(extra.begin(), extra.end());
  if (conds.empty())
    return {};
  Value all = conds.front();
  for (Value c : ArrayRef<Value>(conds).drop_front())
    all = arith::AndIOp::create(b, loc, all, c);
  return all;
}

Value SdpaScoreEmitter::mask(OpBuilder &b, Location loc, const ScorePosition &p,
                             Value s, ArrayRef<Value> extra) const {
  Value ok = allowed(b, loc, p, extra);
  if (!ok)
    return s;
  Value negInf = buildFloatConstant(b, loc, s.getType(),
                                    -std::numeric_limits<double>::infinity());
  return arith::SelectOp::create(b, loc, ok, s, negInf);
}

std::optional<SmallVector<Value>>
SdpaScoreEmitter::fullTileConditions(OpBuilder &b, Location loc, Value iaLo,
                                     Value iaHi, Value j0, int64_t bk,
                                     Value maskModFull, Value kvLength) const {
  Value jLast =
      arith::AddIOp::create(b, loc, j0, buildIndexConstant(b, loc, bk - 1));
  Value jEnd =
      arith::AddIOp::create(b, loc, j0, buildIndexConstant(b, loc, bk));
  std::optional<Value> kindFull =
      buildMaskFull(b, loc, params, iaLo, iaHi, j0, jLast);
  if (!kindFull || (hasMaskMod() && !maskModFull))
    return std::nullopt;
  SmallVector<Value> conds;
  auto le = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, x, y)
        .getResult();
  };
  if (lk % bk != 0)
    conds.push_back(le(jEnd, buildIndexConstant(b, loc, lk)));
  if (*kindFull)
    conds.push_back(*kindFull);
  if (maskModFull)
    conds.push_back(maskModFull);
  if (kvLength)
    conds.push_back(le(jEnd, kvLength));
  return conds;
}
