//===- SdpaRows.cpp - attn.sdpa over short key sequences, a row at a time -===//
//
// Per (batch, head): query rows in blocks of one register's lanes, a row in
// each lane (each key's scores a vector over the rows, Q^T transposed in
// registers, K's and V's elements broadcast, max and sum elementwise across
// the keys, O^T transposed back into rows; Q K^T and P V as loops over
// register tiles, with Q^T and P in scratch tiles), and the rows left over
// one at a time (the row's scores against every key as a few vectors:
// Q[i, e] broadcast times rows of K^T; the row max and sum as vector
// reductions; P V as P's elements broadcast times rows of V; K^T and P in
// scratch tiles, both products loops). No online-softmax state is carried
// (one pass over the keys), and no vector is wider than the target's
// registers: the tiled path would make a 17-key tile a 17-lane vector,
// which LLVM splits lane by lane.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/SdpaRows.h"

#include "dialect/MaskKinds.h"

#include "lib/Target/CpuTarget.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/SdpaScore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

/// The largest head dim the lowering takes: the scratch tiles of a unit
/// (Q^T of a lane block, E x lanes; K^T for the rows left over, E x up to
/// kMaxRowVectors vectors of keys) stay within a few KB of stack.
static constexpr int64_t kMaxHeadDim = 128;

bool mlir::attn::takesRegisterRows(SdpaOp op) {
  if (!hasStaticTensorOperands(op))
    return false;
  for (Value v : {op.getQuery(), op.getKey(), op.getValue()})
    if (!getElementType(v).isF32())
      return false;
  // The kinds whose allowed keys of one row are an interval (dilated
  // windows are not; graph masks are data).
  MaskKind kind = op.getMask();
  if (kind != MaskKind::dense && kind != MaskKind::causal &&
      kind != MaskKind::local && kind != MaskKind::causal_local)
    return false;
  if (op.getRowPtr() || !op.getMaskMod().empty())
    return false;
  if (!SdpaScoreEmitter(op).isPlainScore())
    return false;
  ArrayRef<int64_t> q = getShape(op.getQuery()), k = getShape(op.getKey()),
                    v = getShape(op.getValue());
  int64_t lanes = getCpuTarget(op).f32Lanes();
  return q[2] >= 1 && k[2] >= 1 && q[3] >= 1 && q[3] <= kMaxHeadDim &&
         v[3] >= 1 && llvm::divideCeilSigned(k[2], lanes) <= kMaxRowVectors &&
         llvm::divideCeilSigned(v[3], lanes) <= kMaxRowVectors;
}

namespace {

/// The transpose of `rows` (n vectors of n lanes, n a power of two) as
/// log2(n) stages of two-vector shuffles: the stage of stride h swaps bit
/// log2(h) of the row index with that of the lane index, pairing rows i and
/// i + h. (Built as one 2-d vector and vector.transpose, the rows would be
/// concatenated into one n*n-lane vector first, through the stack.)
SmallVector<Value> transposeSquare(OpBuilder &b, Location loc,
                                   SmallVector<Value> rows) {
  int64_t n = rows.size();
  for (int64_t h = 1; h < n; h *= 2) {
    SmallVector<int64_t> lowMask(n), highMask(n);
    for (int64_t k = 0; k < n; ++k) {
      bool bit = k & h;
      lowMask[k] = bit ? n + k - h : k;
      highMask[k] = bit ? n + k : k + h;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (i & h)
        continue;
      Value lo = rows[i], hi = rows[i + h];
      rows[i] = vector::ShuffleOp::create(b, loc, lo, hi, lowMask);
      rows[i + h] = vector::ShuffleOp::create(b, loc, lo, hi, highMask);
    }
  }
  return rows;
}

/// What one query row leaves: its output row (one vector per chunk of Ev)
/// and, for the lse, m and l.
struct RowResult {
  SmallVector<Value> out;
  Value m, l, seen;
};

class SdpaRowLowering {
public:
  explicit SdpaRowLowering(SdpaOp op)
      : op(op), emitter(op), target(getCpuTarget(op)),
        lanes(target.f32Lanes()) {
    ArrayRef<int64_t> q = getShape(op.getQuery()), k = getShape(op.getKey());
    batch = q[0];
    heads = q[1];
    lq = q[2];
    e = q[3];
    group = heads / k[1];
    lk = k[2];
    ev = getShape(op.getValue())[3];
    f = getElementType(op.getQuery());
    // Whole vectors of keys, and the rest in the narrowest power-of-two
    // vector that holds it: a 17th key costs scalar ops, not a 16-lane
    // vector of padding.
    for (int64_t c = 0; c < lk; c += lanes)
      keyChunks.push_back(
          {c, std::min<int64_t>(lanes, llvm::PowerOf2Ceil(lk - c))});
    for (int64_t c = 0; c < ev; c += lanes)
      valueChunks.push_back({c, std::min(lanes, ev - c)});
    // Rows in flight: their Q K^T accumulators take at most half of the
    // registers (the K^T rows and Q broadcasts need the rest).
    rowsPerStep =
        std::clamp<int64_t>(target.vectorRegisters / 2 /
                                static_cast<int64_t>(std::max(
                                    keyChunks.size(), valueChunks.size())),
                            1, kMaxRowsPerStep);
    // Query rows per parallel unit: the whole head when it is short, else
    // a divisor of Lq near kUnitRows.
    unitRows = lq;
    if (lq > 2 * kUnitRows)
      for (int64_t r = kUnitRows; r <= 2 * kUnitRows; ++r)
        if (lq % r == 0) {
          unitRows = r;
          break;
        }
  }

  SmallVector<Value> build(OpBuilder &b) {
    Location loc = op.getLoc();
    bool withLse = op->getNumResults() > 1;
    SmallVector<Value> inits{
        tensor::EmptyOp::create(b, loc, {batch, heads, lq, ev}, f)};
    if (withLse)
      inits.push_back(tensor::EmptyOp::create(b, loc, {batch, heads, lq}, f));
    auto forall = scf::ForallOp::create(
        b, loc,
        ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(heads),
                               b.getIndexAttr(lq / unitRows)},
        inits, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forall.getBody());
      buildUnit(b, loc, forall, withLse);
    }
    return SmallVector<Value>(forall.getResults());
  }

private:
  /// Most query rows computed side by side (independent dependency chains
  /// through the reductions and exp of a row).
  static constexpr int64_t kMaxRowsPerStep = 4;
  /// Query rows per parallel unit on long queries.
  static constexpr int64_t kUnitRows = 64;

  Value broadcast(OpBuilder &b, Location loc, VectorType t, Value scalar) {
    return vector::BroadcastOp::create(b, loc, t, scalar);
  }
  Value index(OpBuilder &b, Location loc, int64_t i) {
    return buildIndexConstant(b, loc, i);
  }
  /// A `t`-long vector of `tensor` at `indices` (in bounds).
  Value read(OpBuilder &b, Location loc, VectorType t, Value tensor,
             ValueRange indices) {
    return vector::TransferReadOp::create(b, loc, t, tensor, indices,
                                          buildFloatConstant(b, loc, f, 0.0),
                                          ArrayRef<bool>{true});
  }

  /// Rows [first, first + count) of `src` (B x H x L x E) at (bIdx, head),
  /// transposed: E x count, head dim d in row d. Blocks of up to lanes head
  /// dims are read and transposed in registers (lanes x lanes blocks become
  /// attn-lower-vectors' shuffle sequences) and put together as one vector,
  /// so that its scratch tile takes one 2-d write (a chain of a write per
  /// block or row slowed bufferization's analysis quadratically in its
  /// length). Rows past L read as 0 unless `rowsInBounds`.
  Value transposedRows(OpBuilder &b, Location loc, Value src, Value head,
                       Value first, int64_t count, bool rowsInBounds) {
    Value rowsT =
        buildFloatConstant(b, loc, VectorType::get({e, count}, f), 0.0);
    for (int64_t d0 = 0; d0 < e; d0 += lanes) {
      int64_t dims = std::min(lanes, e - d0);
      Value block = vector::TransferReadOp::create(
          b, loc, VectorType::get({count, dims}, f), src,
          ValueRange{bIdx, head, first, index(b, loc, d0)},
          buildFloatConstant(b, loc, f, 0.0),
          ArrayRef<bool>{rowsInBounds, true});
      Value blockT =
          vector::TransposeOp::create(b, loc, block, ArrayRef<int64_t>{1, 0});
      rowsT = vector::InsertStridedSliceOp::create(b, loc, blockT, rowsT,
                                                   ArrayRef<int64_t>{d0, 0},
                                                   ArrayRef<int64_t>{1, 1});
    }
    return rowsT;
  }
  /// `rows` (1-d vectors of one length) as the rows of one 2-d vector, for
  /// a single 2-d write (see transposedRows).
  Value stackRows(OpBuilder &b, Location loc, ArrayRef<Value> rows) {
    auto rowType = cast<VectorType>(rows.front().getType());
    Value stacked = buildFloatConstant(
        b, loc,
        VectorType::get({int64_t(rows.size()), rowType.getDimSize(0)}, f), 0.0);
    for (auto [r, row] : llvm::enumerate(rows))
      stacked = vector::InsertOp::create(b, loc, row, stacked,
                                         static_cast<int64_t>(r));
    return stacked;
  }
  /// A scratch tile holding `v` (a tensor of its shape, written whole).
  Value scratchTile(OpBuilder &b, Location loc, Value v) {
    auto type = cast<VectorType>(v.getType());
    SmallVector<Value> zeros(type.getRank(), index(b, loc, 0));
    return vector::TransferWriteOp::create(
               b, loc, v, tensor::EmptyOp::create(b, loc, type.getShape(), f),
               zeros, SmallVector<bool>(type.getRank(), true))
        .getResult();
  }

  /// K^T of the unit's (batch, kv head) in a scratch tile `keysT` (E x
  /// the keys of the chunks that are not a single key), a chunk at a time
  /// (transposedRows); keys past Lk in the last chunk read as 0 (and are
  /// masked). A single last key's row is `lastKeyRow`.
  void buildKeyRows(OpBuilder &b, Location loc) {
    int64_t cols = 0;
    for (auto [c, chunk] : llvm::enumerate(keyChunks))
      if (!singleKey(c))
        cols = chunk.first + chunk.second;
    if (cols > 0)
      keysT = tensor::EmptyOp::create(b, loc, {e, cols}, f);
    for (auto [c, chunk] : llvm::enumerate(keyChunks)) {
      auto [k0, width] = chunk;
      if (singleKey(c)) {
        // Dot products with the query rows (buildRows), not K^T rows.
        lastKeyRow = read(b, loc, VectorType::get({e}, f), op.getKey(),
                          ValueRange{bIdx, kvHead, index(b, loc, k0),
                                     index(b, loc, 0)});
        continue;
      }
      keysT = vector::TransferWriteOp::create(
                  b, loc,
                  transposedRows(b, loc, op.getKey(), kvHead, index(b, loc, k0),
                                 width, k0 + width <= lk),
                  keysT, ValueRange{index(b, loc, 0), index(b, loc, k0)},
                  ArrayRef<bool>{true, true})
                  .getResult();
    }
  }

  /// One step of a loop of FMAs: the accumulators after step `i`.
  using StepFn = function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                                 ValueRange)>;
  /// `step` over [0, extent) from `inits` as a loop. With few
  /// accumulators (both sets within half the registers), two steps per
  /// iteration into two sets of them (even and odd steps: two chains of
  /// FMAs where there is one per accumulator), the odd last step after the
  /// loop, the sets added at the end.
  SmallVector<Value> pairedLoop(OpBuilder &b, Location loc, int64_t extent,
                                ArrayRef<Value> inits, StepFn step) {
    size_t k = inits.size();
    if (k == 0)
      return {};
    SmallVector<Value> even(inits), odd;
    if (4 * static_cast<int64_t>(k) > target.vectorRegisters) {
      auto loop = scf::ForOp::create(
          b, loc, index(b, loc, 0), index(b, loc, extent), index(b, loc, 1),
          inits, [&](OpBuilder &lb, Location ll, Value i, ValueRange accs) {
            scf::YieldOp::create(lb, ll, step(lb, ll, i, accs));
          });
      return SmallVector<Value>(loop.getResults());
    }
    if (int64_t pairs = extent / 2) {
      SmallVector<Value> both(inits);
      both.append(inits.begin(), inits.end());
      auto loop = scf::ForOp::create(
          b, loc, index(b, loc, 0), index(b, loc, 2 * pairs), index(b, loc, 2),
          both, [&](OpBuilder &lb, Location ll, Value i, ValueRange accs) {
            SmallVector<Value> next = step(lb, ll, i, accs.take_front(k));
            llvm::append_range(
                next,
                step(lb, ll, arith::AddIOp::create(lb, ll, i, index(lb, ll, 1)),
                     accs.drop_front(k)));
            scf::YieldOp::create(lb, ll, next);
          });
      even.assign(loop.getResults().begin(), loop.getResults().begin() + k);
      odd.assign(loop.getResults().begin() + k, loop.getResults().end());
    }
    if (extent % 2)
      even = step(b, loc, index(b, loc, extent - 1), even);
    for (auto [x, y] : llvm::zip(even, odd))
      x = arith::AddFOp::create(b, loc, x, y);
    return even;
  }

  /// Whether key chunk `c` is a single key (the rest after whole vectors).
  bool singleKey(size_t c) const { return keyChunks[c].second == 1; }

  /// `x` (index) clamped into [-1, Lk], as i32: the same lane comparisons
  /// against keys in [0, Lk), and no i32 wrap of positions past 2^31.
  Value keyBound(OpBuilder &b, Location loc, Value x) {
    Value clamped = arith::MaxSIOp::create(
        b, loc, arith::MinSIOp::create(b, loc, x, index(b, loc, lk)),
        index(b, loc, -1));
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), clamped);
  }

  /// Where keys `keys` (i32 lanes) satisfy first <= key <= last and
  /// key < length (i32 lanes each; null: no such bound), and-ed into
  /// `allowed` (null: none yet); null when nothing constrains them.
  static Value keysWithin(OpBuilder &b, Location loc, Value keys, Value first,
                          Value last, Value length, Value allowed) {
    auto require = [&](arith::CmpIPredicate pred, Value bound) {
      if (!bound)
        return;
      Value c = arith::CmpIOp::create(b, loc, pred, keys, bound);
      allowed = allowed ? arith::AndIOp::create(b, loc, allowed, c) : c;
    };
    require(arith::CmpIPredicate::sge, first);
    require(arith::CmpIPredicate::sle, last);
    require(arith::CmpIPredicate::slt, length);
    return allowed;
  }

  /// The softmax's pieces after the max `m` and the sum `l` (f32 scalars
  /// or vectors of rows), shared by rows and lane blocks. The exp offset:
  /// m, or 0 when every key is masked (m = -inf), so that P = exp(-inf) =
  /// 0 there.
  static Value expOffset(OpBuilder &b, Location loc, Value m) {
    Type t = m.getType();
    return arith::SelectOp::create(
        b, loc,
        arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OEQ, m,
            buildFloatConstant(b, loc, t,
                               -std::numeric_limits<double>::infinity())),
        buildFloatConstant(b, loc, t, 0.0), m);
  }
  /// Whether a row saw an allowed key (l > 0), and 1 / l there (0 where
  /// not: the row's output is 0).
  static std::pair<Value, Value> inverseSum(OpBuilder &b, Location loc,
                                            Value l) {
    Type t = l.getType();
    Value zero = buildFloatConstant(b, loc, t, 0.0);
    Value seen =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zero);
    Value inv = arith::SelectOp::create(
        b, loc, seen,
        arith::DivFOp::create(b, loc, buildFloatConstant(b, loc, t, 1.0), l),
        zero);
    return {seen, inv};
  }
  /// lse = m + log l, -inf on a row without allowed keys.
  static Value logSumExp(OpBuilder &b, Location loc, Value m, Value l,
                         Value seen) {
    return arith::SelectOp::create(
        b, loc, seen,
        arith::AddFOp::create(b, loc, m, math::LogOp::create(b, loc, l)),
        buildFloatConstant(b, loc, m.getType(),
                           -std::numeric_limits<double>::infinity()));
  }

  /// Where the lanes of the key chunk at `k0` (`width` keys) are allowed
  /// for the query at absolute position `ia` and exist (j < Lk): the mask
  /// kind's key span of the row (exact for one row of the interval kinds:
  /// causal j <= ia, local and causal_local windows) and the batch's
  /// kv_length (`kvLength`, i32, when the op has padding); null when all
  /// are.
  Value allowedLanes(OpBuilder &b, Location loc, int64_t k0, int64_t width,
                     const KeySpan &span) {
    auto maskType = VectorType::get({width}, b.getI32Type());
    SmallVector<int32_t> keys;
    for (int64_t l = 0; l < width; ++l)
      keys.push_back(static_cast<int32_t>(k0 + l));
    Value keyIdx = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(maskType, ArrayRef<int32_t>(keys)));
    Value allowed;
    if (k0 + width > lk)
      allowed = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::slt, keyIdx,
          arith::ConstantOp::create(
              b, loc,
              DenseElementsAttr::get(maskType, static_cast<int32_t>(lk))));
    auto lanesOf = [&](Value bound) -> Value {
      return bound ? vector::BroadcastOp::create(b, loc, maskType, bound)
                   : Value();
    };
    return keysWithin(b, loc, keyIdx, lanesOf(span.first),
                      lanesOf(span.last), lanesOf(kvLength), allowed);
  }

  /// The query rows `rows` (of head hIdx, batch bIdx) side by side, each
  /// phase for every row before the next: scores, max, sum and output rows
  /// in registers, K^T and P read from scratch tiles by the products' loops.
  SmallVector<RowResult> buildRows(OpBuilder &b, Location loc,
                                   ArrayRef<Value> rows) {
    int64_t n = rows.size();
    // S = Q[i] K^T: a loop over the head dims, Q[i, d] broadcast times the
    // d-th row of K^T's scratch tile (each read once for all the rows);
    // the accumulators (rows x whole chunks) within half the registers.
    SmallVector<VectorType> chunkTypes;
    SmallVector<size_t> wholeChunks;
    for (auto [c, chunk] : llvm::enumerate(keyChunks)) {
      chunkTypes.push_back(VectorType::get({chunk.second}, f));
      if (!singleKey(c))
        wholeChunks.push_back(c);
    }
    SmallVector<Value> inits;
    for (int64_t r = 0; r < n; ++r)
      for (size_t c : wholeChunks)
        inits.push_back(buildFloatConstant(b, loc, chunkTypes[c], 0.0));
    SmallVector<Value> sums = pairedLoop(
        b, loc, e, inits,
        [&](OpBuilder &lb, Location ll, Value d, ValueRange accs) {
          SmallVector<Value> kRows;
          for (size_t c : wholeChunks)
            kRows.push_back(vector::TransferReadOp::create(
                lb, ll, chunkTypes[c], keysT,
                ValueRange{d, index(lb, ll, keyChunks[c].first)},
                buildFloatConstant(lb, ll, f, 0.0), ArrayRef<bool>{true}));
          SmallVector<Value> next;
          for (int64_t r = 0; r < n; ++r) {
            Value qe = tensor::ExtractOp::create(
                lb, ll, op.getQuery(), ValueRange{bIdx, hIdx, rows[r], d});
            for (auto [i, c] : llvm::enumerate(wholeChunks))
              next.push_back(vector::FMAOp::create(
                  lb, ll, broadcast(lb, ll, chunkTypes[c], qe), kRows[i],
                  accs[next.size()]));
          }
          return next;
        });
    SmallVector<SmallVector<Value>> scores(n);
    size_t nextSum = 0;
    for (int64_t r = 0; r < n; ++r)
      for (auto [c, t] : llvm::enumerate(chunkTypes)) {
        if (!singleKey(c)) {
          scores[r].push_back(sums[nextSum++]);
          continue;
        }
        // A last key alone (the 17th of 17): its score is one dot product
        // of the query row with the key's row and a vector sum, not E
        // scalar FMAs in a chain.
        Value qRow = read(b, loc, VectorType::get({e}, f), op.getQuery(),
                          ValueRange{bIdx, hIdx, rows[r], index(b, loc, 0)});
        Value dot = vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD,
            arith::MulFOp::create(b, loc, qRow, lastKeyRow));
        scores[r].push_back(broadcast(b, loc, t, dot));
      }
    SmallVector<RowResult> results(n);
    SmallVector<SmallVector<Value>> probs(n);
    for (int64_t r = 0; r < n; ++r) {
      Value ia = emitter.queryPosition(b, loc, bIdx, rows[r]);
      KeySpan keys = buildMaskKeySpan(b, loc, emitter.maskParams(), ia, ia);
      KeySpan span{keys.first ? keyBound(b, loc, keys.first) : Value(),
                   keys.last ? keyBound(b, loc, keys.last) : Value()};
      for (auto [c, chunk] : llvm::enumerate(keyChunks)) {
        Value &s = scores[r][c];
        s = arith::MulFOp::create(
            b, loc, s,
            buildFloatConstant(b, loc, chunkTypes[c], op.getEffectiveScale()));
        if (Value allowed =
                allowedLanes(b, loc, chunk.first, chunk.second, span))
          s = arith::SelectOp::create(
              b, loc, allowed, s,
              buildFloatConstant(b, loc, chunkTypes[c],
                                 -std::numeric_limits<double>::infinity()));
      }
    }
    // Reduces a row's chunks (the whole vectors elementwise first) to one
    // scalar.
    auto reduceRow = [&](ArrayRef<Value> chunks, vector::CombiningKind kind) {
      auto combine = [&](Value x, Value y) -> Value {
        if (kind == vector::CombiningKind::ADD)
          return arith::AddFOp::create(b, loc, x, y);
        return arith::MaxNumFOp::create(b, loc, x, y);
      };
      Value whole = chunks.front();
      size_t c = 1;
      for (; c < chunks.size() && chunks[c].getType() == whole.getType(); ++c)
        whole = combine(whole, chunks[c]);
      Value total = vector::ReductionOp::create(b, loc, kind, whole);
      for (; c < chunks.size(); ++c)
        total = combine(total,
                        vector::ReductionOp::create(b, loc, kind, chunks[c]));
      return total;
    };
    // m = max S (maxnum: the max only stabilises exp; a NaN score still
    // reaches the output through exp(NaN - m)); the exp offset is m, or 0
    // when every key is masked (m = -inf), so that P = exp(-inf) = 0 there.
    for (int64_t r = 0; r < n; ++r)
      results[r].m = reduceRow(scores[r], vector::CombiningKind::MAXNUMF);
    for (int64_t r = 0; r < n; ++r) {
      Value offset = expOffset(b, loc, results[r].m);
      for (auto [c, s] : llvm::enumerate(scores[r]))
        probs[r].push_back(buildExpOfNonPositive(
            b, loc,
            arith::SubFOp::create(b, loc, s,
                                  broadcast(b, loc, chunkTypes[c], offset))));
    }
    for (int64_t r = 0; r < n; ++r)
      results[r].l = reduceRow(probs[r], vector::CombiningKind::ADD);

    // O = P V / l: a loop over the keys, P[i, j] broadcast (from P's
    // scratch tile) times the rows of V (each read once for all the rows),
    // per chunk of the output row; 0 on a row without allowed keys (l = 0).
    int64_t probCols = keyChunks.back().first + keyChunks.back().second;
    Value probTile = tensor::EmptyOp::create(b, loc, {n, probCols}, f);
    for (int64_t r = 0; r < n; ++r)
      for (auto [c, chunk] : llvm::enumerate(keyChunks))
        probTile = vector::TransferWriteOp::create(
                       b, loc, probs[r][c], probTile,
                       ValueRange{index(b, loc, r), index(b, loc, chunk.first)},
                       ArrayRef<bool>{true})
                       .getResult();
    SmallVector<VectorType> outTypes;
    for (auto [c0, width] : valueChunks)
      outTypes.push_back(VectorType::get({width}, f));
    SmallVector<Value> outInits;
    for (int64_t r = 0; r < n; ++r)
      for (VectorType t : outTypes)
        outInits.push_back(buildFloatConstant(b, loc, t, 0.0));
    SmallVector<Value> outs = pairedLoop(
        b, loc, lk, outInits,
        [&](OpBuilder &lb, Location ll, Value j, ValueRange accs) {
          SmallVector<Value> vRows;
          for (auto [t, chunk] : llvm::zip(outTypes, valueChunks))
            vRows.push_back(
                read(lb, ll, t, op.getValue(),
                     ValueRange{bIdx, kvHead, j, index(lb, ll, chunk.first)}));
          SmallVector<Value> next;
          for (int64_t r = 0; r < n; ++r) {
            Value pj = tensor::ExtractOp::create(
                lb, ll, probTile, ValueRange{index(lb, ll, r), j});
            for (auto [t, vRow] : llvm::zip(outTypes, vRows))
              next.push_back(vector::FMAOp::create(
                  lb, ll, broadcast(lb, ll, t, pj), vRow, accs[next.size()]));
          }
          return next;
        });
    for (int64_t r = 0; r < n; ++r)
      results[r].out.assign(outs.begin() + r * outTypes.size(),
                            outs.begin() + (r + 1) * outTypes.size());
    for (int64_t r = 0; r < n; ++r) {
      RowResult &res = results[r];
      Value inv;
      std::tie(res.seen, inv) = inverseSum(b, loc, res.l);
      for (auto [c, chunk] : llvm::enumerate(valueChunks)) {
        Value &out = res.out[c];
        out = arith::MulFOp::create(
            b, loc, out,
            broadcast(b, loc, cast<VectorType>(out.getType()), inv));
      }
    }
    return results;
  }

  /// `lanes` query rows at once, one row per lane: local rows [first,
  /// first + lanes) of the unit (global rows from `q0`). Q^T of the block
  /// is transposed in registers (head dim d: a vector over the rows) and
  /// kept in a scratch tile; key j's scores are a vector over the rows,
  /// sum_d Q^T[d] K[j, d], computed by register tiles (tileLoops) of keys
  /// with K's elements broadcast from memory; the mask is lane compares of
  /// each row's key span; max and sum over keys are elementwise across the
  /// Lk score vectors (no shuffles); O^T[c] = sum_j P[j] V[j, c] likewise
  /// (register tiles of value dims over P's scratch tile), then transposed
  /// back into rows. Writes the rows into `outTile` (and their lse into
  /// `lseTile`).
  void buildLaneBlock(OpBuilder &b, Location loc, Value first, Value q0,
                      Value &outTile, Value &lseTile) {
    auto rowType = VectorType::get({lanes}, f);
    Value zero = buildFloatConstant(b, loc, rowType, 0.0);
    Value negInf = buildFloatConstant(
        b, loc, rowType, -std::numeric_limits<double>::infinity());
    Value row0 = arith::AddIOp::create(b, loc, q0, first);
    // Q^T into a scratch tile (qT[d] holds head dim d of the block's rows):
    // as values live across the whole block, E vectors beside the
    // accumulators, LLVM spilled and reloaded them all over the block.
    Value qT = scratchTile(
        b, loc, transposedRows(b, loc, op.getQuery(), hIdx, row0, lanes, true));
    // A register tile as a loop over `extent` steps, as a GEMM's: `tile`
    // accumulators over the rows, per step the row `step` of `rowsOf` (an
    // extent x lanes scratch tile) times `tile` broadcasts
    // (`element(step, i)`). Each tile takes at most three quarters of the
    // registers (the row and the broadcast need the rest); a loop, not the
    // steps unrolled, so that each tile's values are all it holds.
    int64_t tileAccs = std::max<int64_t>(1, target.vectorRegisters * 3 / 4);
    auto tileLoops =
        [&](int64_t n, int64_t extent, Value rowsOf,
            function_ref<Value(OpBuilder &, Location, Value, int64_t)>
                element) {
          SmallVector<Value> results;
          int64_t tile =
              llvm::divideCeilSigned(n, llvm::divideCeilSigned(n, tileAccs));
          for (int64_t i0 = 0; i0 < n; i0 += tile) {
            auto loop = scf::ForOp::create(
                b, loc, index(b, loc, 0), index(b, loc, extent),
                index(b, loc, 1),
                SmallVector<Value>(std::min(tile, n - i0), zero),
                [&](OpBuilder &lb, Location ll, Value step, ValueRange accs) {
                  Value row = vector::TransferReadOp::create(
                      lb, ll, rowType, rowsOf,
                      ValueRange{step, index(lb, ll, 0)},
                      buildFloatConstant(lb, ll, f, 0.0), ArrayRef<bool>{true});
                  SmallVector<Value> next;
                  for (auto [i, acc] : llvm::enumerate(accs))
                    next.push_back(vector::FMAOp::create(
                        lb, ll, row,
                        broadcast(lb, ll, rowType,
                                  element(lb, ll, step, i0 + i)),
                        acc));
                  scf::YieldOp::create(lb, ll, next);
                });
            llvm::append_range(results, loop.getResults());
          }
          return results;
        };
    // S^T: scores[j] over the rows.
    SmallVector<Value> scores =
        tileLoops(lk, e, qT,
                  [&](OpBuilder &lb, Location ll, Value d, int64_t j) -> Value {
                    return tensor::ExtractOp::create(
                        lb, ll, op.getKey(),
                        ValueRange{bIdx, kvHead, index(lb, ll, j), d});
                  });
    // Each row's key span as i32 lanes (clamped into [-1, Lk]), and the
    // batch's kv_length.
    auto maskType = VectorType::get({lanes}, b.getI32Type());
    SmallVector<Value> firsts, lasts;
    for (int64_t r = 0; r < lanes; ++r) {
      Value ia = emitter.queryPosition(
          b, loc, bIdx, arith::AddIOp::create(b, loc, row0, index(b, loc, r)));
      KeySpan keys = buildMaskKeySpan(b, loc, emitter.maskParams(), ia, ia);
      if (keys.first)
        firsts.push_back(keyBound(b, loc, keys.first));
      if (keys.last)
        lasts.push_back(keyBound(b, loc, keys.last));
    }
    Value firstLanes, lastLanes, lengthLanes;
    if (!firsts.empty())
      firstLanes = vector::FromElementsOp::create(b, loc, maskType, firsts);
    if (!lasts.empty())
      lastLanes = vector::FromElementsOp::create(b, loc, maskType, lasts);
    if (kvLength)
      lengthLanes = vector::BroadcastOp::create(b, loc, maskType, kvLength);
    Value scale =
        buildFloatConstant(b, loc, rowType, op.getEffectiveScale());
    for (int64_t j = 0; j < lk; ++j) {
      Value &s = scores[j];
      s = arith::MulFOp::create(b, loc, s, scale);
      Value key = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(maskType, static_cast<int32_t>(j)));
      if (Value allowed = keysWithin(b, loc, key, firstLanes, lastLanes,
                                     lengthLanes, Value()))
        s = arith::SelectOp::create(b, loc, allowed, s, negInf);
    }
    // Elementwise trees over the keys. The max as x > y ? x : y (one
    // vmaxps, where maxnumf's NaN rule costs a compare and a blend more): a
    // NaN score still reaches the output through its own exp(NaN - m),
    // whichever operand the compare keeps.
    auto tree = [&](SmallVector<Value> values, bool add) {
      while (values.size() > 1) {
        SmallVector<Value> next;
        for (size_t i = 0; i + 1 < values.size(); i += 2)
          next.push_back(
              add ? arith::AddFOp::create(b, loc, values[i], values[i + 1])
                        .getResult()
                  : arith::SelectOp::create(
                        b, loc,
                        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                              values[i], values[i + 1]),
                        values[i], values[i + 1])
                        .getResult());
        if (values.size() % 2)
          next.push_back(values.back());
        values = std::move(next);
      }
      return values.front();
    };
    // m = max S (maxnum, as buildRows); exp offset m, or 0 on rows without
    // an allowed key.
    Value m = tree(scores, /*add=*/false);
    Value offset = expOffset(b, loc, m);
    SmallVector<Value> probs;
    for (Value s : scores)
      probs.push_back(buildExpOfNonPositive(
          b, loc, arith::SubFOp::create(b, loc, s, offset)));
    Value l = tree(probs, /*add=*/true);
    auto [seen, inv] = inverseSum(b, loc, l);
    // P into a scratch tile (P[j] over the rows) for P V's register tiles.
    Value probTile = scratchTile(b, loc, stackRows(b, loc, probs));
    // O^T per chunk of output dims (padded with zero vectors to a square),
    // transposed back into rows.
    for (auto [c0, width] : valueChunks) {
      int64_t col0 = c0;
      SmallVector<Value> acc = tileLoops(
          width, lk, probTile,
          [&](OpBuilder &lb, Location ll, Value j, int64_t c) -> Value {
            return tensor::ExtractOp::create(
                lb, ll, op.getValue(),
                ValueRange{bIdx, kvHead, j, index(lb, ll, col0 + c)});
          });
      SmallVector<Value> square(lanes, zero);
      for (int64_t c = 0; c < width; ++c)
        square[c] = arith::MulFOp::create(b, loc, acc[c], inv);
      SmallVector<Value> rows = transposeSquare(b, loc, square);
      if (width < lanes)
        for (Value &row : rows)
          row = vector::ExtractStridedSliceOp::create(
              b, loc, row, ArrayRef<int64_t>{0}, ArrayRef<int64_t>{width},
              ArrayRef<int64_t>{1});
      // The chunk's rows as one 2-d write.
      outTile =
          vector::TransferWriteOp::create(
              b, loc, stackRows(b, loc, rows), outTile,
              ValueRange{first, index(b, loc, c0)}, ArrayRef<bool>{true, true})
              .getResult();
    }
    if (lseTile) {
      Value lse = logSumExp(b, loc, m, l, seen);
      lseTile = vector::TransferWriteOp::create(b, loc, lse, lseTile,
                                                ValueRange{first},
                                                ArrayRef<bool>{true})
                    .getResult();
    }
  }

  /// Writes the rows `rows` (indices into the unit's tiles) of `results`
  /// into the output tile and, with `lseTile`, their lse.
  void writeRows(OpBuilder &b, Location loc, ArrayRef<Value> rows,
                 ArrayRef<RowResult> results, Value &outTile, Value &lseTile) {
    for (auto [row, res] : llvm::zip(rows, results)) {
      for (auto [c, chunk] : llvm::enumerate(valueChunks))
        outTile = vector::TransferWriteOp::create(
                      b, loc, res.out[c], outTile,
                      ValueRange{row, index(b, loc, chunk.first)},
                      ArrayRef<bool>{true})
                      .getResult();
      if (!lseTile)
        continue;
      lseTile = tensor::InsertOp::create(
          b, loc, logSumExp(b, loc, res.m, res.l, res.seen), lseTile, row);
    }
  }

  /// One parallel unit: unitRows query rows of one (batch, head),
  /// rowsPerStep at a time, then the remainder.
  void buildUnit(OpBuilder &b, Location loc, scf::ForallOp forall,
                 bool withLse) {
    SmallVector<Value> ivs = forall.getInductionVars();
    bIdx = ivs[0];
    hIdx = ivs[1];
    Value q0 = arith::MulIOp::create(b, loc, ivs[2], index(b, loc, unitRows));
    kvHead = arith::DivUIOp::create(b, loc, hIdx, index(b, loc, group));
    if (Value lengths = op.getKvLengths())
      kvLength = keyBound(
          b, loc,
          arith::IndexCastOp::create(
              b, loc, b.getIndexType(),
              tensor::ExtractOp::create(b, loc, lengths, ValueRange{bIdx})));
    Value outTile = tensor::EmptyOp::create(b, loc, {unitRows, ev}, f);
    Value lseTile;
    if (withLse)
      lseTile = tensor::EmptyOp::create(b, loc, {unitRows}, f);
    // A loop over rows [begin, end) in steps of `step` whose body writes
    // the step's rows into the tiles (carried through the loop).
    auto rowLoop = [&](int64_t begin, int64_t end, int64_t step,
                       function_ref<void(OpBuilder &, Location, Value,
                                         Value &, Value &)>
                           body) {
      SmallVector<Value> iterInits{outTile};
      if (lseTile)
        iterInits.push_back(lseTile);
      auto loop = scf::ForOp::create(
          b, loc, index(b, loc, begin), index(b, loc, end),
          index(b, loc, step), iterInits,
          [&](OpBuilder &lb, Location lloc, Value first, ValueRange args) {
            Value out = args[0], lse = lseTile ? args[1] : Value();
            body(lb, lloc, first, out, lse);
            SmallVector<Value> yields{out};
            if (lse)
              yields.push_back(lse);
            scf::YieldOp::create(lb, lloc, yields);
          });
      outTile = loop.getResult(0);
      if (lseTile)
        lseTile = loop.getResult(1);
    };
    // Rows [0, blockRows) in blocks of rows in lanes, the rest row by row.
    int64_t blockRows = unitRows / lanes * lanes;
    if (blockRows > 0)
      rowLoop(0, blockRows, lanes,
              [&](OpBuilder &lb, Location lloc, Value first, Value &out,
                  Value &lse) {
                buildLaneBlock(lb, lloc, first, q0, out, lse);
              });
    if (blockRows < unitRows)
      buildKeyRows(b, loc);

    // The rest rowsPerStep at a time in a loop, the last few after it.
    auto rowsAt = [&](OpBuilder &rb, Value first, int64_t n) {
      SmallVector<Value> local, global;
      for (int64_t r = 0; r < n; ++r) {
        local.push_back(
            arith::AddIOp::create(rb, loc, first, index(rb, loc, r)));
        global.push_back(arith::AddIOp::create(rb, loc, q0, local.back()));
      }
      return std::make_pair(local, global);
    };
    int64_t steps = (unitRows - blockRows) / rowsPerStep;
    if (steps > 0)
      rowLoop(blockRows, blockRows + steps * rowsPerStep, rowsPerStep,
              [&](OpBuilder &lb, Location lloc, Value first, Value &out,
                  Value &lse) {
                auto [local, global] = rowsAt(lb, first, rowsPerStep);
                writeRows(lb, lloc, local, buildRows(lb, lloc, global), out,
                          lse);
              });
    if (int64_t rest = unitRows - blockRows - steps * rowsPerStep) {
      auto [local, global] =
          rowsAt(b, index(b, loc, blockRows + steps * rowsPerStep), rest);
      writeRows(b, loc, local, buildRows(b, loc, global), outTile, lseTile);
    }

    buildInsertAttentionRows(b, loc, forall, bIdx, hIdx, q0, unitRows, ev,
                             outTile, lseTile);
  }

  SdpaOp op;
  SdpaScoreEmitter emitter;
  const CpuTarget &target;
  /// f32 lanes of the target's vector registers.
  int64_t lanes;
  int64_t batch, heads, lq, lk, e, ev, group;
  int64_t rowsPerStep, unitRows;
  Type f;
  /// (first key, width) of each vector of a row's scores, and (first
  /// element, width) of each vector of an output row.
  SmallVector<std::pair<int64_t, int64_t>> keyChunks, valueChunks;
  // Per parallel unit: its indices and K^T (keysT[head dim, key]).
  Value bIdx, hIdx, kvHead, kvLength;
  Value keysT;
  // A last key alone in its chunk: its row of K (E lanes).
  Value lastKeyRow;
};

} // namespace

SmallVector<Value> mlir::attn::buildRegisterRowAttention(OpBuilder &b,
                                                         SdpaOp op) {
  return SdpaRowLowering(op).build(b);
}
