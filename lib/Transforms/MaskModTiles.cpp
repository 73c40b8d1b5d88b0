//===- MaskModTiles.cpp - tile classes of a mask_mod region ---------------===//

#include "lib/Transforms/MaskModTiles.h"
#include "lib/Transforms/SdpaScore.h"
#include "lib/Transforms/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// The positions of a mask_mod's block arguments.
enum ModArg : unsigned { kBatch = 0, kHead = 1, kQuery = 2, kKey = 3 };

/// Integer values over a tile: [lo, hi] as index values (null: unknown);
/// `single` when lo and hi are one value.
struct Interval {
  Value lo, hi;
  bool single = false;
  bool known() const { return lo && hi; }
};

/// An i1 over a tile: `isTrue` holds when it is true everywhere, `isFalse`
/// when false everywhere; a null Value is the constant false (unknown).
struct Truth {
  Value isTrue, isFalse;
};

/// Emits the interval / truth IR of one tile.
struct Interpreter {
  Interpreter(OpBuilder &b, Location loc) : b(b), loc(loc) {}
  OpBuilder &b;
  Location loc;
  llvm::DenseMap<Value, Interval> ints;
  llvm::DenseMap<Value, Truth> bools;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value toIndex(Value v) {
    if (v.getType().isIndex())
      return v;
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value both(Value x, Value y) {
    if (!x || !y)
      return {};
    return arith::AndIOp::create(b, loc, x, y);
  }
  Value either(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::OrIOp::create(b, loc, x, y);
  }
  Value minOf(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxOf(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }

  /// The constant value of `v`, if it is an integer constant.
  static std::optional<int64_t> constantOf(Value v) {
    IntegerAttr attr;
    if (auto c = v.getDefiningOp<arith::ConstantOp>())
      attr = dyn_cast<IntegerAttr>(c.getValue());
    if (!attr)
      return std::nullopt;
    return attr.getValue().getSExtValue();
  }

  /// A value's interval / truth; constants defined above the region (a
  /// greedy rewrite hoists them out of it) are read where they are.
  Interval interval(Value v) {
    auto it = ints.find(v);
    if (it != ints.end())
      return it->second;
    if (!v.getType().isInteger(1))
      if (std::optional<int64_t> c = constantOf(v)) {
        Value c0 = index(*c);
        return ints[v] = {c0, c0, true};
      }
    return {};
  }
  Truth truth(Value v) {
    auto it = bools.find(v);
    if (it != bools.end())
      return it->second;
    if (auto c = v.getDefiningOp<arith::ConstantOp>())
      if (c.getType().isInteger(1)) {
        Value t = arith::ConstantIntOp::create(b, loc, 1, 1);
        return bools[v] = cast<IntegerAttr>(c.getValue()).getInt() != 0
                              ? Truth{t, {}}
                              : Truth{{}, t};
      }
    return {};
  }

  Truth compare(arith::CmpIPredicate p, Interval x, Interval y) {
    using P = arith::CmpIPredicate;
    if (!x.known() || !y.known())
      return {};
    switch (p) {
    case P::slt:
      return {cmp(P::slt, x.hi, y.lo), cmp(P::sge, x.lo, y.hi)};
    case P::sle:
      return {cmp(P::sle, x.hi, y.lo), cmp(P::sgt, x.lo, y.hi)};
    case P::sgt:
      return compare(P::slt, y, x);
    case P::sge:
      return compare(P::sle, y, x);
    case P::eq: {
      Value isTrue;
      if (x.single && y.single)
        isTrue = cmp(P::eq, x.lo, y.lo);
      else
        isTrue = both(both(cmp(P::eq, x.lo, x.hi), cmp(P::eq, y.lo, y.hi)),
                      cmp(P::eq, x.lo, y.lo));
      Value isFalse =
          either(cmp(P::slt, x.hi, y.lo), cmp(P::slt, y.hi, x.lo));
      return {isTrue, isFalse};
    }
    case P::ne: {
      Truth eq = compare(P::eq, x, y);
      return {eq.isFalse, eq.isTrue};
    }
    default:
      return {}; // unsigned comparisons: unknown
    }
  }

  static unsigned bitsOf(Type t) {
    return t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
  }

  void visit(Operation &op, const std::function<Interval(tensor::ExtractOp)>
                                &readTable) {
    using namespace arith;
    Value result = op.getNumResults() == 1 ? op.getResult(0) : Value();
    if (!result)
      return;
    // Sums, differences and products of narrow integers wrap where the
    // intervals (computed on index) would not: unknown.
    if (isa<AddIOp, SubIOp, MulIOp, math::AbsIOp>(op) &&
        bitsOf(result.getType()) < 64)
      return;
    auto in = [&](unsigned k) { return interval(op.getOperand(k)); };
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](ConstantOp c) {
          if (c.getType().isInteger(1)) {
            bool value = cast<IntegerAttr>(c.getValue()).getInt() != 0;
            Value t = ConstantIntOp::create(b, loc, 1, 1);
            bools[result] = value ? Truth{t, {}} : Truth{{}, t};
          } else if (std::optional<int64_t> v = constantOf(result)) {
            Value c0 = index(*v);
            ints[result] = {c0, c0, true};
          }
        })
        .Case<IndexCastOp, ExtSIOp>([&](auto) {
          // Widening keeps the values; a truncating cast wraps them.
          if (bitsOf(result.getType()) >= bitsOf(op.getOperand(0).getType()))
            ints[result] = in(0);
        })
        .Case([&](AddIOp) {
          Interval x = in(0), y = in(1);
          if (x.known() && y.known())
            ints[result] = {AddIOp::create(b, loc, x.lo, y.lo),
                            AddIOp::create(b, loc, x.hi, y.hi),
                            x.single && y.single};
        })
        .Case([&](SubIOp) {
          Interval x = in(0), y = in(1);
          if (x.known() && y.known())
            ints[result] = {SubIOp::create(b, loc, x.lo, y.hi),
                            SubIOp::create(b, loc, x.hi, y.lo),
                            x.single && y.single};
        })
        .Case([&](MulIOp m) {
          // By a constant: scaled bounds, swapped when negative.
          for (unsigned k : {0u, 1u}) {
            std::optional<int64_t> c = constantOf(m->getOperand(k));
            Interval x = in(1 - k);
            if (!c || !x.known())
              continue;
            Value lo = MulIOp::create(b, loc, x.lo, index(*c));
            Value hi = MulIOp::create(b, loc, x.hi, index(*c));
            ints[result] = *c >= 0 ? Interval{lo, hi, x.single}
                                   : Interval{hi, lo, x.single};
            return;
          }
        })
        .Case<FloorDivSIOp, DivSIOp>([&](auto d) {
          // By a positive constant: monotone.
          std::optional<int64_t> c = constantOf(d->getOperand(1));
          Interval x = in(0);
          if (!c || *c <= 0 || !x.known())
            return;
          auto div = [&](Value v) -> Value {
            if (isa<FloorDivSIOp>(d.getOperation()))
              return FloorDivSIOp::create(b, loc, v, index(*c));
            return DivSIOp::create(b, loc, v, index(*c));
          };
          ints[result] = {div(x.lo), div(x.hi), x.single};
        })
        .Case([&](MinSIOp) {
          Interval x = in(0), y = in(1);
          if (x.known() && y.known())
            ints[result] = {minOf(x.lo, y.lo), minOf(x.hi, y.hi),
                            x.single && y.single};
        })
        .Case([&](MaxSIOp) {
          Interval x = in(0), y = in(1);
          if (x.known() && y.known())
            ints[result] = {maxOf(x.lo, y.lo), maxOf(x.hi, y.hi),
                            x.single && y.single};
        })
        .Case([&](math::AbsIOp) {
          // |x| over [lo, hi]: from max(lo, -hi, 0) (0 when the interval
          // spans it) to max(-lo, hi). A symmetric window |q_idx - kv_idx|
          // <= w then skips the key tiles beyond it.
          Interval x = in(0);
          if (!x.known())
            return;
          Value zero = index(0);
          Value negLo = SubIOp::create(b, loc, zero, x.lo);
          Value negHi = SubIOp::create(b, loc, zero, x.hi);
          ints[result] = {maxOf(maxOf(x.lo, negHi), zero), maxOf(negLo, x.hi),
                          x.single};
        })
        .Case([&](CmpIOp c) {
          bools[result] = compare(c.getPredicate(), in(0), in(1));
        })
        .Case([&](AndIOp) {
          if (!result.getType().isInteger(1))
            return;
          Truth x = truth(op.getOperand(0)), y = truth(op.getOperand(1));
          bools[result] = {both(x.isTrue, y.isTrue),
                           either(x.isFalse, y.isFalse)};
        })
        .Case([&](OrIOp) {
          if (!result.getType().isInteger(1))
            return;
          Truth x = truth(op.getOperand(0)), y = truth(op.getOperand(1));
          bools[result] = {either(x.isTrue, y.isTrue),
                           both(x.isFalse, y.isFalse)};
        })
        .Case([&](XOrIOp) {
          if (!result.getType().isInteger(1))
            return;
          Truth x = truth(op.getOperand(0)), y = truth(op.getOperand(1));
          bools[result] = {
              either(both(x.isTrue, y.isFalse), both(x.isFalse, y.isTrue)),
              either(both(x.isTrue, y.isTrue), both(x.isFalse, y.isFalse))};
        })
        .Case([&](SelectOp s) {
          Truth c = truth(s.getCondition());
          if (result.getType().isInteger(1)) {
            Truth x = truth(s.getTrueValue()), y = truth(s.getFalseValue());
            bools[result] = {
                either(either(both(c.isTrue, x.isTrue),
                              both(c.isFalse, y.isTrue)),
                       both(x.isTrue, y.isTrue)),
                either(either(both(c.isTrue, x.isFalse),
                              both(c.isFalse, y.isFalse)),
                       both(x.isFalse, y.isFalse))};
            return;
          }
          Interval x = interval(s.getTrueValue()),
                   y = interval(s.getFalseValue());
          if (x.known() && y.known())
            ints[result] = {minOf(x.lo, y.lo), maxOf(x.hi, y.hi), false};
        })
        .Case([&](tensor::ExtractOp x) {
          if (isa<IntegerType, IndexType>(result.getType()))
            ints[result] = readTable(x);
        });
  }
};

/// The index arguments of an extract: which one is q_idx or kv_idx itself
/// (std::nullopt: none, or more than one).
std::optional<std::pair<unsigned, bool>> rangedIndex(tensor::ExtractOp x,
                                                     Block &body) {
  std::optional<std::pair<unsigned, bool>> found;
  for (auto [d, idx] : llvm::enumerate(x.getIndices())) {
    auto arg = dyn_cast<BlockArgument>(idx);
    if (!arg || arg.getOwner() != &body ||
        (arg.getArgNumber() != kQuery && arg.getArgNumber() != kKey))
      continue;
    if (found)
      return std::nullopt;
    found = {static_cast<unsigned>(d), arg.getArgNumber() == kQuery};
  }
  return found;
}

} // namespace

MaskModTiles::MaskModTiles(OpBuilder &b, Location loc, SdpaOp op, int64_t bq,
                           int64_t bk)
    : op(op), bq(bq), bk(bk), lq(getShape(op.getQuery())[2]),
      lk(getShape(op.getKey())[2]) {
  Region &region = op.getMaskMod();
  Block &body = region.front();
  // Min / max per tile of every captured integer tensor read at q_idx or
  // kv_idx: pad the indexed dim to whole tiles (with the neutral element),
  // view it as (tiles, tile) and reduce the tile.
  body.walk([&](tensor::ExtractOp x) {
    Value t = x.getTensor();
    auto type = cast<RankedTensorType>(t.getType());
    std::optional<std::pair<unsigned, bool>> ranged = rangedIndex(x, body);
    if (region.isAncestor(t.getParentRegion()) || !ranged ||
        !type.hasStaticShape() || !isa<IntegerType>(type.getElementType()) ||
        findTable(t, ranged->first, ranged->second ? bq : bk))
      return;
    unsigned dim = ranged->first;
    bool byQuery = ranged->second;
    int64_t tile = byQuery ? bq : bk;
    SmallVector<int64_t> shape(type.getShape());
    int64_t tiles = llvm::divideCeilSigned(shape[dim], tile);
    unsigned width = type.getElementType().getIntOrFloatBitWidth();
    auto reduce = [&](bool isMin) -> Value {
      APInt extreme = isMin ? APInt::getSignedMaxValue(width)
                            : APInt::getSignedMinValue(width);
      Value neutral = arith::ConstantOp::create(
          b, loc, b.getIntegerAttr(type.getElementType(), extreme));
      SmallVector<int64_t> padded(shape);
      padded[dim] = tiles * tile;
      Value src = t;
      if (padded[dim] != shape[dim])
        src = tensor::createPadHighOp(
            RankedTensorType::get(padded, type.getElementType()), t, neutral,
            /*nofold=*/false, loc, b);
      SmallVector<int64_t> split(padded);
      split[dim] = tile;
      split.insert(split.begin() + dim, tiles);
      SmallVector<SmallVector<int64_t, 2>> groups;
      for (unsigned d = 0; d < padded.size(); ++d)
        groups.push_back(d == dim ? SmallVector<int64_t, 2>{d, d + 1}
                                  : SmallVector<int64_t, 2>{
                                        d < dim ? int64_t(d) : int64_t(d) + 1});
      Value view = buildExpand(b, loc, src, split, groups);
      SmallVector<int64_t> outShape(shape);
      outShape[dim] = tiles;
      Value init = linalg::FillOp::create(
                       b, loc, neutral,
                       ValueRange{buildEmpty(b, loc, outShape,
                                             type.getElementType())})
                       .getResult(0);
      unsigned rank = split.size();
      SmallVector<unsigned> outDims;
      SmallVector<utils::IteratorType> iters;
      for (unsigned d = 0; d < rank; ++d) {
        iters.push_back(d == dim + 1 ? utils::IteratorType::reduction
                                     : utils::IteratorType::parallel);
        if (d != dim + 1)
          outDims.push_back(d);
      }
      MLIRContext *ctx = b.getContext();
      return linalg::GenericOp::create(
                 b, loc, init.getType(), view, init,
                 ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                                     dimsMap(ctx, rank, outDims)},
                 iters,
                 [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   Value r =
                       isMin ? arith::MinSIOp::create(nb, nloc, args[0], args[1])
                                   .getResult()
                             : arith::MaxSIOp::create(nb, nloc, args[0], args[1])
                                   .getResult();
                   linalg::YieldOp::create(nb, nloc, r);
                 })
          .getResult(0);
    };
    tables.push_back({t, dim, tile, reduce(true), reduce(false)});
  });
}

const MaskModTiles::Table *MaskModTiles::findTable(Value tensor, unsigned dim,
                                                   int64_t tile) const {
  for (const Table &t : tables)
    if (t.tensor == tensor && t.dim == dim && t.tile == tile)
      return &t;
  return nullptr;
}

std::pair<Value, Value> MaskModTiles::classify(OpBuilder &b, Location loc,
                                               Value bIdx, Value hIdx,
                                               Value q0, Value k0) const {
  Block &body = op.getMaskMod().front();
  Interpreter in{b, loc};
  auto clampedEnd = [&](Value start, int64_t size, int64_t len) {
    return in.minOf(arith::AddIOp::create(b, loc, start, in.index(size - 1)),
                    in.index(len - 1));
  };
  in.ints[body.getArgument(kBatch)] = {bIdx, bIdx, true};
  in.ints[body.getArgument(kHead)] = {hIdx, hIdx, true};
  in.ints[body.getArgument(kQuery)] = {q0, clampedEnd(q0, bq, lq)};
  in.ints[body.getArgument(kKey)] = {k0, clampedEnd(k0, bk, lk)};
  Value qt = arith::DivUIOp::create(b, loc, q0, in.index(bq));
  Value kt = arith::DivUIOp::create(b, loc, k0, in.index(bk));

  auto readTable = [&](tensor::ExtractOp x) -> Interval {
    // Every index known; one of them may be q_idx / kv_idx itself (read from
    // the tables), the others single values.
    std::optional<std::pair<unsigned, bool>> ranged = rangedIndex(x, body);
    SmallVector<Value> at;
    for (auto [d, idx] : llvm::enumerate(x.getIndices())) {
      if (ranged && d == ranged->first) {
        at.push_back(ranged->second ? qt : kt);
        continue;
      }
      Interval iv = in.interval(idx);
      if (!iv.known() || !iv.single)
        return {};
      at.push_back(iv.lo);
    }
    if (!ranged) {
      // Only a tensor defined above the region can be read at the tile.
      if (op.getMaskMod().isAncestor(x.getTensor().getParentRegion()))
        return {};
      Value v = in.toIndex(buildClampedExtract(b, loc, x.getTensor(), at));
      return {v, v, true};
    }
    const Table *table =
        findTable(x.getTensor(), ranged->first, ranged->second ? bq : bk);
    if (!table)
      return {};
    return {in.toIndex(buildClampedExtract(b, loc, table->min, at)),
            in.toIndex(buildClampedExtract(b, loc, table->max, at)), false};
  };

  for (Operation &inner : body.without_terminator())
    in.visit(inner, readTable);
  Truth result = in.truth(cast<YieldOp>(body.getTerminator()).getValue());
  Value f = arith::ConstantIntOp::create(b, loc, 0, 1);
  return {result.isTrue ? result.isTrue : f,
          result.isFalse ? result.isFalse : f};
}
