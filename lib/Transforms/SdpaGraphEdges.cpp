//===- SdpaGraphEdges.cpp - graph-masked attn.sdpa over edge lists -------===//
//
// Per (batch, head, query row), one pass over the row's CSR entries,
// `edge-block` at a time: the block's scores are dot products of the query
// row with the gathered key rows, then one online-softmax step in registers
// (running max and sum, the Ev-wide output row). Work is proportional to the
// edges, not to the 64 x 64 tiles they touch.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/SdpaGraphEdges.h"

#include "lib/Target/CpuTarget.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/SdpaScore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

/// Pieces of the CSR compaction's parallel loop.
static constexpr int64_t kCompactChunks = 8;

double mlir::attn::graphDensity(SdpaOp op) {
  if (op.getMask() != MaskKind::graph || !op.getColIdx())
    return 0.0;
  ArrayRef<int64_t> q = getShape(op.getQuery()), k = getShape(op.getKey());
  double pairs = static_cast<double>(q[2]) * static_cast<double>(k[2]);
  return pairs == 0 ? 0.0
                    : static_cast<double>(getShape(op.getColIdx())[0]) / pairs;
}

namespace {

class SdpaEdgeLowering {
public:
  SdpaEdgeLowering(SdpaOp op, int64_t edgeBlock)
      : op(op), emitter(op), lanes(getCpuTarget(op).f32Lanes()),
        block(edgeBlock > 0 ? edgeBlock : lanes) {
    ArrayRef<int64_t> q = getShape(op.getQuery()), v = getShape(op.getValue());
    batch = q[0];
    heads = q[1];
    lq = q[2];
    e = q[3];
    group = heads / getShape(op.getKey())[1];
    lk = getShape(op.getKey())[2];
    ev = v[3];
    nnz = getShape(op.getColIdx())[0];
    f = op.getQuery().getType().getElementType();
    qVec = VectorType::get({e}, f);
    vVec = VectorType::get({ev}, f);
    blockVec = VectorType::get({block}, f);
  }

  SmallVector<Value> build(OpBuilder &b) {
    Location loc = op.getLoc();
    buildCompactCsr(b, loc);
    scf::ForallOp forall = buildAttentionForall(
        b, loc, batch, heads, /*units=*/lq, /*rows=*/lq, ev, f,
        [&](OpBuilder &fb, scf::ForallOp loop) { buildRow(fb, loc, loop); });
    SmallVector<Value> results{forall.getResult(0)};
    if (op->getNumResults() > 1)
      results.push_back(forall.getResult(1));
    return results;
  }

private:
  Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate p, Value x,
            Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value floatConst(OpBuilder &b, Location loc, double v) {
    return buildFloatConstant(b, loc, f, v);
  }
  /// A `t`-long vector of `tensor` at [indices..., 0].
  Value readRow(OpBuilder &b, Location loc, VectorType t, Value tensor,
                ValueRange indices) {
    SmallVector<Value> at(indices);
    at.push_back(buildIndexConstant(b, loc, 0));
    return vector::TransferReadOp::create(
        b, loc, t, tensor, at, floatConst(b, loc, 0.0), ArrayRef<bool>{true});
  }
  /// sum(x * y) over a vector.
  Value dot(OpBuilder &b, Location loc, Value x, Value y) {
    return vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                       arith::MulFOp::create(b, loc, x, y));
  }

  /// The CSR compacted once per call, in place: row i keeps, from its own
  /// start row_ptr[i], the first occurrence of each key in [0, Lk), in
  /// order (`cols`: nnz i32 slots, the rest of the row stale), and `counts`
  /// holds how many. The graph mask is a set (duplicate entries are
  /// harmless), so a duplicate must not enter the softmax twice, and the
  /// kernel then checks nothing per entry but the row's end. Rows are split
  /// into kCompactChunks pieces of an scf.forall (the pipeline's threads);
  /// each walks its entries once with its own `last[j]`, the last row that
  /// took key j.
  void buildCompactCsr(OpBuilder &b, Location loc) {
    Type i32 = b.getI32Type(), indexType = b.getIndexType();
    int64_t chunks = std::max<int64_t>(1, std::min(kCompactChunks, lq));
    int64_t chunkRows =
        llvm::divideCeilSigned(std::max<int64_t>(lq, 1), chunks);
    Value rowPtr = op.getRowPtr(), colIdx = op.getColIdx();
    Value c0 = buildIndexConstant(b, loc, 0),
          c1 = buildIndexConstant(b, loc, 1);
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(chunks)},
        ValueRange{
            tensor::EmptyOp::create(b, loc, {nnz}, i32).getResult(),
            tensor::EmptyOp::create(b, loc, {lq}, indexType).getResult()},
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forall.getBody());
      Value chunk = forall.getInductionVars()[0];
      Value r0 = arith::MinSIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, chunk,
                                buildIndexConstant(b, loc, chunkRows)),
          buildIndexConstant(b, loc, lq));
      Value r1 = arith::MinSIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, r0,
                                buildIndexConstant(b, loc, chunkRows)),
          buildIndexConstant(b, loc, lq));
      Value e0 =
          buildIndexCast(b, loc, tensor::ExtractOp::create(b, loc, rowPtr, r0));
      Value e1 =
          buildIndexCast(b, loc, tensor::ExtractOp::create(b, loc, rowPtr, r1));
      Value entries = arith::SubIOp::create(b, loc, e1, e0);
      Value rowCount = arith::SubIOp::create(b, loc, r1, r0);
      Value none = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(-1));
      Value last =
          linalg::FillOp::create(
              b, loc, ValueRange{none},
              ValueRange{
                  tensor::EmptyOp::create(b, loc, {lk}, i32).getResult()})
              .getResult(0);
      Value segInit =
          tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{entries}, i32);
      Value countInit = tensor::EmptyOp::create(
          b, loc, ArrayRef<OpFoldResult>{rowCount}, indexType);
      auto rowLoop = scf::ForOp::create(
          b, loc, r0, r1, c1, ValueRange{last, segInit, countInit},
          [&](OpBuilder &rb, Location rloc, Value i, ValueRange rowArgs) {
            Value begin = buildIndexCast(
                rb, rloc, tensor::ExtractOp::create(rb, rloc, rowPtr, i));
            Value end = buildIndexCast(
                rb, rloc,
                tensor::ExtractOp::create(
                    rb, rloc, rowPtr,
                    ValueRange{arith::AddIOp::create(rb, rloc, i, c1)}));
            Value row = arith::IndexCastOp::create(rb, rloc, i32, i);
            Value start = arith::SubIOp::create(rb, rloc, begin, e0);
            auto entryLoop = scf::ForOp::create(
                rb, rloc, begin, end, c1,
                ValueRange{rowArgs[0], rowArgs[1], start},
                [&](OpBuilder &eb, Location eloc, Value en, ValueRange args) {
                  Value j = buildIndexCast(
                      eb, eloc,
                      tensor::ExtractOp::create(eb, eloc, colIdx, en));
                  Value inRange = arith::AndIOp::create(
                      eb, eloc, cmp(eb, eloc, arith::CmpIPredicate::sge, j, c0),
                      cmp(eb, eloc, arith::CmpIPredicate::slt, j,
                          buildIndexConstant(eb, eloc, lk)));
                  Value jSafe =
                      arith::SelectOp::create(eb, eloc, inRange, j, c0);
                  Value prev =
                      tensor::ExtractOp::create(eb, eloc, args[0], jSafe);
                  Value fresh = arith::AndIOp::create(
                      eb, eloc, inRange,
                      cmp(eb, eloc, arith::CmpIPredicate::ne, prev, row));
                  // Out-of-range keys write back what was there; a stale
                  // slot is overwritten by the next fresh key (or never
                  // read: past the row's count).
                  Value taken =
                      arith::SelectOp::create(eb, eloc, inRange, row, prev);
                  Value lastNext =
                      tensor::InsertOp::create(eb, eloc, taken, args[0], jSafe);
                  Value segNext = tensor::InsertOp::create(
                      eb, eloc,
                      arith::IndexCastOp::create(eb, eloc, i32, jSafe), args[1],
                      args[2]);
                  Value at = arith::AddIOp::create(
                      eb, eloc, args[2],
                      arith::SelectOp::create(eb, eloc, fresh, c1, c0));
                  scf::YieldOp::create(eb, eloc,
                                       ValueRange{lastNext, segNext, at});
                });
            Value kept =
                arith::SubIOp::create(rb, rloc, entryLoop.getResult(2), start);
            Value countNext = tensor::InsertOp::create(
                rb, rloc, kept, rowArgs[2],
                ValueRange{arith::SubIOp::create(rb, rloc, i, r0)});
            scf::YieldOp::create(rb, rloc,
                                 ValueRange{entryLoop.getResult(0),
                                            entryLoop.getResult(1), countNext});
          });
      ValueRange outs = forall.getRegionIterArgs();
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          b, loc, rowLoop.getResult(1), outs[0], ArrayRef<OpFoldResult>{e0},
          ArrayRef<OpFoldResult>{entries},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      tensor::ParallelInsertSliceOp::create(
          b, loc, rowLoop.getResult(2), outs[1], ArrayRef<OpFoldResult>{r0},
          ArrayRef<OpFoldResult>{rowCount},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    }
    cols = forall.getResult(0);
    counts = forall.getResult(1);
  }

  struct State {
    Value m, l, acc; // f32, f32, vector<Ev>
  };

  /// Whether scores need per-entry work beyond scale and the edge mask.
  bool hasEntryModifications() {
    return op.getBias() || op.getRelBias() || op.getRelKey() ||
           op.getAlibiSlopes() || op.getKvLengths() ||
           !op.getScoreMod().empty() || !op.getMaskMod().empty();
  }

  /// q . k for the block's keys, as one vector<block>. With E a multiple of
  /// the target's f32 lanes and blocks of that many entries (16 on AVX-512,
  /// 8 on AVX2), each product is first summed to one register's lanes and
  /// the partial vectors are reduced together by a butterfly (pairs of
  /// half-vector shuffles and adds: ~3 instructions per entry instead of a
  /// horizontal reduction each).
  Value dotProducts(OpBuilder &b, Location loc, ArrayRef<Value> keys) {
    SmallVector<Value> partial;
    bool butterfly = e % lanes == 0 && block == lanes;
    VectorType laneVec = VectorType::get({lanes}, f);
    for (Value j : keys) {
      if (!butterfly) {
        Value kRow =
            readRow(b, loc, qVec, op.getKey(), ValueRange{bIdx, kvHead, j});
        partial.push_back(dot(b, loc, qRow, kRow));
        continue;
      }
      // One register of the key row at a time, chained FMAs.
      Value sum;
      for (int64_t c = 0; c < e; c += lanes) {
        Value kChunk = vector::TransferReadOp::create(
            b, loc, laneVec, op.getKey(),
            ValueRange{bIdx, kvHead, j, buildIndexConstant(b, loc, c)},
            floatConst(b, loc, 0.0), ArrayRef<bool>{true});
        Value qChunk = qChunks[c / lanes];
        sum = sum ? math::FmaOp::create(b, loc, qChunk, kChunk, sum).getResult()
                  : arith::MulFOp::create(b, loc, qChunk, kChunk).getResult();
      }
      partial.push_back(sum);
    }
    if (!butterfly)
      return vector::FromElementsOp::create(b, loc, blockVec, partial);
    // Each vector holds `edges` entries of `width` partial sums; combining
    // two halves the width: lanes [low halves of x's and y's entries] +
    // [high halves].
    for (int64_t width = lanes; width > 1; width /= 2) {
      int64_t edges = lanes / width, half = width / 2;
      SmallVector<int64_t> lo, hi;
      for (int64_t v = 0; v < 2; ++v)
        for (int64_t k = 0; k < edges; ++k)
          for (int64_t l = 0; l < half; ++l) {
            lo.push_back(v * lanes + k * width + l);
            hi.push_back(v * lanes + k * width + half + l);
          }
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < partial.size(); i += 2) {
        Value x = partial[i], y = partial[i + 1];
        next.push_back(arith::AddFOp::create(
            b, loc, vector::ShuffleOp::create(b, loc, x, y, lo),
            vector::ShuffleOp::create(b, loc, x, y, hi)));
      }
      partial = std::move(next);
    }
    return partial.front();
  }

  /// The block's scores: q . k with the op's score modifications and padding
  /// mask, -inf where not `live` (past the row's end; those read key 0).
  Value blockScores(OpBuilder &b, Location loc, ArrayRef<Value> keys,
                    Value live) {
    Value qk = dotProducts(b, loc, keys);
    Value negInf = buildFloatConstant(b, loc, blockVec,
                                      -std::numeric_limits<double>::infinity());
    if (!hasEntryModifications()) {
      Value scaled = arith::MulFOp::create(
          b, loc, qk,
          buildFloatConstant(b, loc, blockVec, op.getEffectiveScale()));
      return arith::SelectOp::create(b, loc, live, scaled, negInf);
    }
    SmallVector<Value> scores;
    for (auto [k, j] : llvm::enumerate(keys)) {
      SmallVector<int64_t, 1> at{static_cast<int64_t>(k)};
      ScorePosition pos{bIdx, hIdx, row, j};
      Value shaw;
      if (Value relKey = op.getRelKey())
        shaw = dot(b, loc, qRow,
                   readRow(b, loc, qVec, relKey,
                           ValueRange{emitter.relativeIndex(b, loc, pos)}));
      Value biasElem;
      if (Value bias = op.getBias()) {
        ArrayRef<int64_t> shape = getShape(bias);
        Value zero = buildIndexConstant(b, loc, 0);
        biasElem = tensor::ExtractOp::create(
            b, loc, bias,
            ValueRange{shape[0] == 1 ? zero : bIdx, shape[1] == 1 ? zero : hIdx,
                       shape[2] == 1 ? zero : row, shape[3] == 1 ? zero : j});
      }
      Value s =
          emitter.modify(b, loc, pos, vector::ExtractOp::create(b, loc, qk, at),
                         shaw, biasElem);
      Value valid = vector::ExtractOp::create(b, loc, live, at);
      scores.push_back(emitter.mask(b, loc, pos, s, {valid}));
    }
    return vector::FromElementsOp::create(b, loc, blockVec, scores);
  }

  /// One online-softmax step over the block of entries from `e0`:
  /// m' = max(m, max_k s_k), a = exp(m - m'), p_k = exp(s_k - m'),
  /// l' = a l + sum p_k, acc' = a acc + sum p_k v[j_k]; while m' = -inf (no
  /// allowed key yet) the exponent base is 0, so a and p are 0, never
  /// exp(-inf - -inf).
  State step(OpBuilder &b, Location loc, Value e0, const State &state) {
    // The block's keys in one vector load (past the row's end: key 0, in
    // range, masked).
    Type i32 = b.getI32Type();
    VectorType keyVec = VectorType::get({block}, i32);
    Value zero32 = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
    Value raw = vector::TransferReadOp::create(
        b, loc, keyVec, cols, ValueRange{e0}, zero32, ArrayRef<bool>{false});
    Value live = vector::CreateMaskOp::create(
        b, loc, VectorType::get({block}, b.getI1Type()),
        ValueRange{arith::SubIOp::create(b, loc, end, e0)});
    Value keysVec = arith::SelectOp::create(
        b, loc, live, raw, vector::BroadcastOp::create(b, loc, keyVec, zero32));
    SmallVector<Value> keys;
    for (int64_t k = 0; k < block; ++k)
      keys.push_back(buildIndexCast(
          b, loc,
          vector::ExtractOp::create(b, loc, keysVec, ArrayRef<int64_t>{k})));
    Value s = blockScores(b, loc, keys, live);
    Value m = arith::MaxNumFOp::create(
        b, loc, state.m,
        vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXNUMF, s));
    Value negInf = floatConst(b, loc, -std::numeric_limits<double>::infinity());
    Value none =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
    Value base =
        arith::SelectOp::create(b, loc, none, floatConst(b, loc, 0.0), m);
    Value a = math::ExpOp::create(b, loc,
                                  arith::SubFOp::create(b, loc, state.m, base));
    Value p = math::ExpOp::create(
        b, loc,
        arith::SubFOp::create(
            b, loc, s, vector::BroadcastOp::create(b, loc, blockVec, base)));
    Value l = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, a, state.l),
        vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, p));
    Value acc = arith::MulFOp::create(
        b, loc, vector::BroadcastOp::create(b, loc, vVec, a), state.acc);
    for (int64_t k = 0; k < block; ++k) {
      Value pk = vector::ExtractOp::create(b, loc, p, ArrayRef<int64_t>{k});
      Value vRow = readRow(b, loc, vVec, op.getValue(),
                           ValueRange{bIdx, kvHead, keys[k]});
      acc = math::FmaOp::create(
          b, loc, vector::BroadcastOp::create(b, loc, vVec, pk), vRow, acc);
    }
    return {m, l, acc};
  }

  /// The body of the parallel loop: one query row of one (batch, head).
  void buildRow(OpBuilder &b, Location loc, scf::ForallOp forall) {
    SmallVector<Value> ivs = forall.getInductionVars();
    bIdx = ivs[0];
    hIdx = ivs[1];
    row = ivs[2];
    kvHead =
        arith::DivUIOp::create(b, loc, hIdx, buildIndexConstant(b, loc, group));
    qRow = readRow(b, loc, qVec, op.getQuery(), ValueRange{bIdx, hIdx, row});
    qChunks.clear();
    for (int64_t c = 0; c + lanes <= e; c += lanes)
      qChunks.push_back(vector::ExtractStridedSliceOp::create(
          b, loc, qRow, ArrayRef<int64_t>{c}, ArrayRef<int64_t>{lanes},
          ArrayRef<int64_t>{1}));
    begin = buildIndexCast(
        b, loc,
        tensor::ExtractOp::create(b, loc, op.getRowPtr(), ValueRange{row}));
    end = arith::AddIOp::create(
        b, loc, begin,
        tensor::ExtractOp::create(b, loc, counts, ValueRange{row}));
    Value blocks = arith::CeilDivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, end, begin),
        buildIndexConstant(b, loc, block));

    Value negInf = floatConst(b, loc, -std::numeric_limits<double>::infinity());
    auto loop = scf::ForOp::create(
        b, loc, buildIndexConstant(b, loc, 0), blocks,
        buildIndexConstant(b, loc, 1),
        ValueRange{negInf, floatConst(b, loc, 0.0),
                   buildFloatConstant(b, loc, vVec, 0.0)},
        [&](OpBuilder &lb, Location lloc, Value t, ValueRange args) {
          Value e0 = arith::AddIOp::create(
              lb, lloc, begin,
              arith::MulIOp::create(lb, lloc, t,
                                    buildIndexConstant(lb, lloc, block)));
          State next = step(lb, lloc, e0, {args[0], args[1], args[2]});
          scf::YieldOp::create(lb, lloc, ValueRange{next.m, next.l, next.acc});
        });
    Value m = loop.getResult(0), l = loop.getResult(1), acc = loop.getResult(2);

    // out = acc / l and lse = m + log l; 0 and -inf on a row that saw no
    // allowed key (l = 0).
    Value zero = floatConst(b, loc, 0.0);
    Value seen =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zero);
    Value out = arith::SelectOp::create(
        b, loc, seen,
        arith::DivFOp::create(b, loc, acc,
                              vector::BroadcastOp::create(b, loc, vVec, l)),
        buildFloatConstant(b, loc, vVec, 0.0));
    Value lse = arith::SelectOp::create(
        b, loc, seen,
        arith::AddFOp::create(b, loc, m, math::LogOp::create(b, loc, l)),
        negInf);

    Value outRow =
        vector::TransferWriteOp::create(
            b, loc, out, tensor::EmptyOp::create(b, loc, {1, 1, 1, ev}, f),
            ValueRange(SmallVector<Value>(4, buildIndexConstant(b, loc, 0))),
            ArrayRef<bool>{true})
            .getResult();
    Value lseRow = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({1, 1, 1}, f), ValueRange{lse});
    buildInsertAttentionRows(b, loc, forall, bIdx, hIdx, row, 1, ev, outRow,
                             lseRow);
  }

  SdpaOp op;
  SdpaScoreEmitter emitter;
  /// f32 lanes of the target's vector registers.
  int64_t lanes;
  int64_t block, batch, heads, lq, lk, e, ev, group, nnz;
  Type f;
  VectorType qVec, vVec, blockVec;
  Value cols,
      counts; // the compacted CSR (row i: cols[row_ptr[i]..] x counts[i])
  // Per query row (inside the parallel loop).
  Value bIdx, hIdx, row, kvHead, qRow, begin, end;
  SmallVector<Value> qChunks; // qRow, one register at a time
};

} // namespace

SmallVector<Value> mlir::attn::buildGraphEdgeAttention(OpBuilder &b, SdpaOp op,
                                                       int64_t edgeBlock) {
  return SdpaEdgeLowering(op, edgeBlock).build(b);
}
