//===- TileSdpa.cpp - FlashAttention-style tiling of attn.sdpa -----------===//
//
// attn.sdpa -> scf.forall over (b, h, query tile) of an scf.for over key
// tiles with online softmax, on tensors. Key-tile ranges follow the mask
// kind's definition (MaskKinds.h), padding lengths and the graph block mask,
// and the element mask is applied only on tiles the definition cannot prove
// fully allowed.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "lib/Target/CpuTarget.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/MaskModTiles.h"
#include "lib/Transforms/OptionBounds.h"
#include "lib/Transforms/Passes.h"
#include "lib/Transforms/SdpaGraphEdges.h"
#include "lib/Transforms/SdpaRows.h"
#include "lib/Transforms/SdpaScore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The bf16 query, key and value of a widened attn.sdpa whose contractions
/// run as bf16 pair dot products (TileSdpaBf16Dot), and the element types
/// of the original op's results: each query tile's rows are rounded to them
/// as they are inserted (not the whole f32 result in a pass of its own).
struct Bf16Operands {
  Value query, key, value;
  Type outElem, lseElem;
  /// The accumulators live in memory between tile products (AMX): the
  /// online softmax rescales them lazily (buildOnlineSoftmaxStep).
  bool lazyRescale = false;
};

/// Builds the tiled form of one attn.sdpa.
class SdpaTiler {
public:
  /// With `bf16`, `op` is the f32 (widened) op and Q K^T and P V read the
  /// bf16 tensors instead, pair-packed: Q rows as (E/2, 2), K^T as
  /// (E/2, key, 2) per key tile, V as (keys/2, Ev, 2); P is rounded to bf16
  /// before P V. Scores, the softmax and the accumulators stay f32.
  SdpaTiler(SdpaOp op, int64_t blockQ, int64_t blockK,
            std::optional<Bf16Operands> bf16 = std::nullopt,
            bool speculativeSoftmax = false)
      : op(op), emitter(op), bf16(bf16) {
    ArrayRef<int64_t> q = getShape(op.getQuery()), k = getShape(op.getKey()),
                      v = getShape(op.getValue());
    batch = q[0];
    heads = q[1];
    lq = q[2];
    e = q[3];
    group = q[1] / k[1];
    lk = k[2];
    ev = v[3];
    bq = std::clamp<int64_t>(blockQ, 1, lq);
    // In bf16 mode the key tile is TileSdpaBf16Dot's (possibly past Lk, the
    // extra keys padding, masked like any other).
    bk = bf16 ? blockK : std::clamp<int64_t>(blockK, 1, lk);
    nqt = llvm::divideCeilSigned(lq, bq);
    nkt = llvm::divideCeilSigned(lk, bk);
    f = op.getQuery().getType().getElementType();
    queryScale = op.getEffectiveScale();
    speculative = speculativeSoftmax && !bf16 && f.isF32();
    // Scores that nothing modifies are the softmax's logits times log2(e)
    // when Q's scale carries it (FlashAttention's softmax_scale_log2): the
    // exp of every score is then 2^(S - m), a multiply per score less.
    // Modified scores (bias, ALiBi, Shaw, score_mod) stay in the logits'
    // units; a mask's -inf is -inf in both. So does a scale that log2(e)
    // would take past f32's range (the verifier allows up to its max).
    base2 = !bf16 && f.isF32() && emitter.isPlainScore() &&
            std::abs(queryScale) * llvm::numbers::log2e <=
                std::numeric_limits<float>::max();
    if (base2)
      queryScale *= llvm::numbers::log2e;
    if (bf16) {
      // bf16 Q is prescaled only exactly: scale = m 2^x (|m| in [0.5, 1)),
      // Q times 2^x in bf16 and the f32 scores times m; a scale of +-2^y
      // (|m| = 0.5) multiplies Q alone. The unscaled scores would overflow f32
      // where the scaled ones (which the tools bound) do not; these stay within
      // twice the scaled ones.
      int exp;
      double m = std::frexp(queryScale, &exp);
      if (std::abs(m) != 0.5) {
        queryScale = std::ldexp(1.0, exp);
        scoreScale = m;
      }
    }
  }

  SmallVector<Value> build(OpBuilder &b) {
    Location loc = op.getLoc();
    q = padRows(b, loc, bf16 ? bf16->query : op.getQuery(), nqt * bq);
    k = padRows(b, loc, bf16 ? bf16->key : op.getKey(), nkt * bk);
    v = padRows(b, loc, bf16 ? bf16->value : op.getValue(), nkt * bk);
    if (bf16)
      buildPackedKeysValues(b, loc);
    else
      buildKeysTransposed(b, loc);
    // The bias and the dense graph mask are padded like Q and K, so that
    // padded rows and keys index them in bounds and a tile's row is a
    // contiguous vector load (clamped indices would make it a gather).
    if (Value b0 = op.getBias())
      bias = padToTiles(b, loc, b0, buildFloatConstant(b, loc, f, 0.0));
    if (op.getMask() == MaskKind::graph) {
      // i8, not i1: vector loads of i1 memory would read packed bits.
      graphMask =
          padToTiles(b, loc,
                     buildDenseFromCsr(b, loc, op.getRowPtr(), op.getColIdx(),
                                       lq, lk, b.getI8Type()),
                     arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)));
      blockMask = buildDenseFromCsr(b, loc, op.getRowPtr(), op.getColIdx(), lq,
                                    lk, b.getI8Type(), false, bq, bk);
    }

    if (emitter.hasMaskMod())
      maskTiles.emplace(b, loc, op, bq, bk);

    scf::ForallOp forall = buildAttentionForall(
        b, loc, batch, heads, /*units=*/nqt, /*rows=*/nqt * bq, ev, f,
        [&](OpBuilder &fb, scf::ForallOp loop) {
          buildQueryTile(fb, loc, loop);
        },
        bf16 ? bf16->outElem : Type(), bf16 ? bf16->lseElem : Type());

    // One value per op result (output, and lse when asked), with padded query
    // rows sliced off.
    SmallVector<Value> results;
    for (auto [i, result] : llvm::enumerate(op->getResults())) {
      Value r = forall.getResult(i);
      if (nqt * bq != lq)
        r = sliceLeading(b, loc, r,
                         cast<RankedTensorType>(result.getType()).getShape());
      results.push_back(r);
    }
    return results;
  }

private:
  /// K^T once per call (B * Hkv * Lk * E moves), not once per (query tile,
  /// key tile) pair, so that QK^T reads contiguous key columns. Tile-major
  /// (B x Hkv x key tile x E x bk): one key tile's E rows are contiguous; as
  /// columns of an E x Lk matrix they would sit Lk floats apart, on the same
  /// few L1 sets.
  void buildKeysTransposed(OpBuilder &b, Location loc) {
    ArrayRef<int64_t> ks = getShape(k);
    Value kTiles = buildExpand(b, loc, k, {ks[0], ks[1], nkt, bk, e},
                               {{0}, {1}, {2, 3}, {4}});
    kT = linalg::TransposeOp::create(
             b, loc, kTiles,
             tensor::EmptyOp::create(b, loc, {ks[0], ks[1], nkt, e, bk}, f),
             ArrayRef<int64_t>{0, 1, 2, 4, 3})
             .getResult()[0];
  }

  /// The bf16 operands of the dot products, once per call: K^T tile-major
  /// with each key's elements 2t, 2t + 1 side by side (B x Hkv x key tile x
  /// E/2 x bk x 2: one 32-bit pair per key, a key tile's pairs of one t
  /// contiguous), and V with the values of keys 2t, 2t + 1 side by side
  /// (B x Hkv x Lk/2 x Ev x 2).
  void buildPackedKeysValues(OpBuilder &b, Location loc) {
    Type bf = getElementType(k);
    ArrayRef<int64_t> ks = getShape(k);
    Value kTiles = buildExpand(b, loc, k, {ks[0], ks[1], nkt, bk, e / 2, 2},
                               {{0}, {1}, {2, 3}, {4, 5}});
    kT = linalg::TransposeOp::create(
             b, loc, kTiles,
             tensor::EmptyOp::create(b, loc, {ks[0], ks[1], nkt, e / 2, bk, 2},
                                     bf),
             ArrayRef<int64_t>{0, 1, 2, 4, 3, 5})
             .getResult()[0];
    ArrayRef<int64_t> vs = getShape(v);
    Value vPairs = buildExpand(b, loc, v, {vs[0], vs[1], vs[2] / 2, 2, ev},
                               {{0}, {1}, {2, 3}, {4}});
    v = linalg::TransposeOp::create(
            b, loc, vPairs,
            tensor::EmptyOp::create(b, loc, {vs[0], vs[1], vs[2] / 2, ev, 2},
                                    bf),
            ArrayRef<int64_t>{0, 1, 2, 4, 3})
            .getResult()[0];
  }

  Value isNonZero(OpBuilder &b, Location loc, Value v) {
    Value zero =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(v.getType(), 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
  }

  /// Zero-pads dim 2 (the sequence) of a B x H x L x E tensor to `len`.
  Value padRows(OpBuilder &b, Location loc, Value t, int64_t len) {
    SmallVector<int64_t> shape(getShape(t));
    if (shape[2] == len)
      return t;
    shape[2] = len;
    Type elem = getElementType(t);
    Value zero = buildFloatConstant(b, loc, elem, 0.0);
    return tensor::createPadHighOp(RankedTensorType::get(shape, elem), t, zero,
                                   /*nofold=*/false, loc, b);
  }

  /// Pads the trailing (query, key) dims of a bias or mask with `pad` up to
  /// whole tiles; broadcast (size-1) dims stay.
  Value padToTiles(OpBuilder &b, Location loc, Value t, Value pad) {
    auto type = cast<RankedTensorType>(t.getType());
    SmallVector<int64_t> shape(type.getShape());
    unsigned r = shape.size();
    if (shape[r - 2] != 1)
      shape[r - 2] = nqt * bq;
    if (shape[r - 1] != 1)
      shape[r - 1] = nkt * bk;
    if (ArrayRef<int64_t>(shape) == type.getShape())
      return t;
    return tensor::createPadHighOp(
        RankedTensorType::get(shape, type.getElementType()), t, pad,
        /*nofold=*/false, loc, b);
  }

  /// The leading `shape` part of `t` (drops padded rows).
  Value sliceLeading(OpBuilder &b, Location loc, Value t,
                     ArrayRef<int64_t> shape) {
    SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)),
        strides(shape.size(), b.getIndexAttr(1)), sizes;
    for (int64_t d : shape)
      sizes.push_back(b.getIndexAttr(d));
    return tensor::ExtractSliceOp::create(b, loc, t, offsets, sizes, strides);
  }

  /// A rank-reduced slice of `t` at `at` for its leading dims (unit slices,
  /// dropped), except `rows` elements of the last of them when given (then
  /// kept as the first dim), and the trailing dims whole: (b, h, row0) of a
  /// B x H x L x C tensor with `rows` is `rows x C`.
  Value tile(OpBuilder &b, Location loc, Value t, ArrayRef<Value> at,
             std::optional<int64_t> rows) {
    ArrayRef<int64_t> shape = getShape(t);
    SmallVector<OpFoldResult> offsets, sizes;
    SmallVector<int64_t> resultShape;
    if (rows)
      resultShape.push_back(*rows);
    for (auto [d, extent] : llvm::enumerate(shape)) {
      if (d < at.size()) {
        offsets.push_back(at[d]);
        sizes.push_back(b.getIndexAttr(rows && d + 1 == at.size() ? *rows : 1));
        continue;
      }
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(extent));
      resultShape.push_back(extent);
    }
    SmallVector<OpFoldResult> strides(shape.size(), b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(resultShape, getElementType(t)), t,
        offsets, sizes, strides);
  }
  Value tile(OpBuilder &b, Location loc, Value t, Value bIdx, Value hIdx,
             Value row0, int64_t rows) {
    return tile(b, loc, t, {bIdx, hIdx, row0}, rows);
  }

  /// Key tile `kt` of the tile-major K^T: a rank-reduced E x bk slice (bf16
  /// pairs: E/2 x bk x 2).
  Value keyTileT(OpBuilder &b, Location loc, Value kt) {
    return tile(b, loc, kT, {bIdx, kvHead, kt}, std::nullopt);
  }

  /// The body of the parallel loop: one query tile of one (batch, head).
  void buildQueryTile(OpBuilder &b, Location loc, scf::ForallOp forall) {
    SmallVector<Value> ivs = forall.getInductionVars();
    bIdx = ivs[0];
    hIdx = ivs[1];
    Value qt = ivs[2];
    q0 = arith::MulIOp::create(b, loc, qt, buildIndexConstant(b, loc, bq));
    kvHead =
        arith::DivUIOp::create(b, loc, hIdx, buildIndexConstant(b, loc, group));
    // Q scaled once per query tile (bq x E multiplies) instead of every
    // bq x bk score tile: scale * (q . k + q . a) = (scale q) . k + ...
    qTile = tile(b, loc, q, bIdx, hIdx, q0, bq);
    Value scale = buildFloatConstant(b, loc, f, queryScale);
    Type qElem = getElementType(qTile);
    if (!bf16 || queryScale != 1.0)
      qTile = buildElementwise(
          b, loc, tensor::EmptyOp::create(b, loc, getShape(qTile), qElem),
          qTile, {b.getMultiDimIdentityMap(2)},
          [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
            if (qElem == f)
              return arith::MulFOp::create(nb, nloc, args[0], scale);
            // bf16 times a power of two: exact.
            Value wide = arith::ExtFOp::create(nb, nloc, f, args[0]);
            return arith::TruncFOp::create(
                nb, nloc, qElem, arith::MulFOp::create(nb, nloc, wide, scale));
          });
    if (bf16)
      qTile = buildExpand(b, loc, qTile, {bq, e / 2, 2}, {{0}, {1, 2}});
    if (Value relKey = op.getRelKey()) {
      // Shaw: q_i . rel_key[r] for every row of the tile; dims (i, r, e).
      MLIRContext *ctx = b.getContext();
      shawTile =
          buildContraction(b, loc, qTile, dimsMap(ctx, 3, {0, 2}), relKey,
                           dimsMap(ctx, 3, {1, 2}), {bq, getShape(relKey)[0]},
                           dimsMap(ctx, 3, {0, 1}));
    }

    auto [kvBegin, kvEnd] = keyTileRange(b, loc);
    // The row sums as partial sums in the target's f32 lanes where the key
    // tile is whole vectors of them (no reduction across lanes per tile).
    int64_t lanes = getCpuTarget(op).f32Lanes();
    OnlineSoftmaxState init = buildOnlineSoftmaxInit(
        b, loc, bq, ev, f, bk % lanes == 0 ? lanes : 1);
    auto loop = scf::ForOp::create(
        b, loc, kvBegin, kvEnd, buildIndexConstant(b, loc, 1),
        ValueRange{init.rowMax, init.rowSum, init.acc},
        [&](OpBuilder &lb, Location lloc, Value kt, ValueRange args) {
          OnlineSoftmaxState state{args[0], args[1], args[2]};
          scf::YieldOp::create(lb, lloc, buildKeyTile(lb, lloc, kt, state));
        });
    AttentionRows rows = buildOnlineSoftmaxFinish(
        b, loc, {loop.getResult(0), loop.getResult(1), loop.getResult(2)},
        base2);
    if (bf16) {
      if (bf16->outElem && bf16->outElem != f)
        rows.output = buildConvertedElements(b, loc, rows.output, bf16->outElem);
      if (rows.lse && bf16->lseElem && bf16->lseElem != f)
        rows.lse = buildConvertedElements(b, loc, rows.lse, bf16->lseElem);
    }

    buildInsertAttentionRows(b, loc, forall, bIdx, hIdx, q0, bq, ev,
                             rows.output, rows.lse);
  }

  /// Window/padding positions of the tile's first and last query rows.
  Value rowLo(OpBuilder &b, Location loc) {
    return emitter.queryPosition(b, loc, bIdx, q0);
  }
  Value rowHi(OpBuilder &b, Location loc) {
    return emitter.queryPosition(
        b, loc, bIdx,
        arith::AddIOp::create(b, loc, q0, buildIndexConstant(b, loc, bq - 1)));
  }

  /// [begin, end) of the key tiles this query tile can see: tiles wholly
  /// outside the mask kind's key span (MaskKinds.h) or past kv_lengths[b]
  /// are never visited.
  std::pair<Value, Value> keyTileRange(OpBuilder &b, Location loc) {
    Value cBk = buildIndexConstant(b, loc, bk);
    Value begin = buildIndexConstant(b, loc, 0),
          end = buildIndexConstant(b, loc, nkt);
    KeySpan span = buildMaskKeySpan(b, loc, emitter.maskParams(), rowLo(b, loc),
                                    rowHi(b, loc));
    if (span.first)
      begin = arith::MaxSIOp::create(
          b, loc, begin, arith::FloorDivSIOp::create(b, loc, span.first, cBk));
    if (span.last) {
      // The last key tile that holds column `last`, plus one.
      Value through = arith::AddIOp::create(
          b, loc, arith::FloorDivSIOp::create(b, loc, span.last, cBk),
          buildIndexConstant(b, loc, 1));
      end = arith::MinSIOp::create(b, loc, end, through);
    }
    if (Value lengths = op.getKvLengths()) {
      Value len = arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          tensor::ExtractOp::create(b, loc, lengths, ValueRange{bIdx}));
      end = arith::MinSIOp::create(
          b, loc, end, arith::CeilDivSIOp::create(b, loc, len, cBk));
    }
    return {begin, end};
  }

  /// Conditions under which every element of key tile [k0, k0 + bk) is
  /// allowed for every row of the query tile (the emitter's rule, with the
  /// mask_mod's tile class of this tile and the batch's kv_length).
  std::optional<SmallVector<Value>> fullTileConditions(OpBuilder &b,
                                                       Location loc, Value k0) {
    Value kvLength;
    if (Value lengths = op.getKvLengths())
      kvLength = arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          tensor::ExtractOp::create(b, loc, lengths, ValueRange{bIdx}));
    return emitter.fullTileConditions(b, loc, rowLo(b, loc), rowHi(b, loc), k0,
                                      bk, maskModFull, kvLength);
  }

  /// One key tile: scores, (boundary) mask, online-softmax step. Graph masks
  /// skip tiles without edges.
  SmallVector<Value> buildKeyTile(OpBuilder &b, Location loc, Value kt,
                                  const OnlineSoftmaxState &state) {
    Value k0 =
        arith::MulIOp::create(b, loc, kt, buildIndexConstant(b, loc, bk));
    auto step = [&](OpBuilder &sb, Location sloc) -> SmallVector<Value> {
      MLIRContext *ctx = sb.getContext();
      Value kTTile = keyTileT(sb, sloc, kt);
      Value qk, vTile;
      if (bf16) {
        // Dims (i, j, t, p): Q pairs (i, t, p), K^T pairs (t, j, p).
        Value pair0 = arith::DivUIOp::create(sb, sloc, k0,
                                             buildIndexConstant(sb, sloc, 2));
        vTile = tile(sb, sloc, v, {bIdx, kvHead, pair0}, bk / 2);
        qk = buildContraction(sb, sloc, qTile, dimsMap(ctx, 4, {0, 2, 3}),
                              kTTile, dimsMap(ctx, 4, {2, 1, 3}), {bq, bk},
                              dimsMap(ctx, 4, {0, 1}), f);
      } else {
        vTile = tile(sb, sloc, v, bIdx, kvHead, k0, bk);
        // Dims (i, j, e).
        qk = buildContraction(sb, sloc, qTile, dimsMap(ctx, 3, {0, 2}), kTTile,
                              dimsMap(ctx, 3, {2, 1}), {bq, bk},
                              dimsMap(ctx, 3, {0, 1}));
      }
      Value scores;
      std::optional<SmallVector<Value>> full = fullTileConditions(sb, sloc, k0);
      if (full && full->empty()) {
        scores = buildScores(sb, sloc, qk, k0, /*masked=*/false);
      } else if (!full) {
        scores = buildScores(sb, sloc, qk, k0, /*masked=*/true);
      } else {
        Value isFull = full->front();
        for (Value c : ArrayRef<Value>(*full).drop_front())
          isFull = arith::AndIOp::create(sb, sloc, isFull, c);
        scores = scf::IfOp::create(
                     sb, sloc, isFull,
                     [&](OpBuilder &tb, Location tloc) {
                       scf::YieldOp::create(
                           tb, tloc, buildScores(tb, tloc, qk, k0, false));
                     },
                     [&](OpBuilder &eb, Location eloc) {
                       scf::YieldOp::create(
                           eb, eloc, buildScores(eb, eloc, qk, k0, true));
                     })
                     .getResult(0);
      }
      if (speculative && scores == qk) {
        OnlineSoftmaxState next =
            buildSpeculativeSoftmaxStep(sb, sloc, qk, vTile, state, base2);
        return {next.rowMax, next.rowSum, next.acc};
      }
      OnlineSoftmaxState next = buildOnlineSoftmaxStep(
          sb, sloc, scores, vTile, state, {}, bf16 && bf16->lazyRescale, base2);
      return {next.rowMax, next.rowSum, next.acc};
    };
    // Tiles a mask_mod region leaves empty, and graph tiles without edges,
    // are skipped.
    Value visit;
    if (maskTiles) {
      auto [full, empty] = maskTiles->classify(b, loc, bIdx, hIdx, q0, k0);
      maskModFull = full;
      visit = arith::XOrIOp::create(b, loc, empty,
                                    arith::ConstantIntOp::create(b, loc, 1, 1));
    }
    if (blockMask) {
      Value qt =
          arith::DivUIOp::create(b, loc, q0, buildIndexConstant(b, loc, bq));
      Value edges = isNonZero(
          b, loc,
          tensor::ExtractOp::create(b, loc, blockMask, ValueRange{qt, kt}));
      visit = visit ? arith::AndIOp::create(b, loc, visit, edges) : edges;
    }
    if (!visit)
      return step(b, loc);
    return scf::IfOp::create(
               b, loc, visit,
               [&](OpBuilder &tb, Location tloc) {
                 scf::YieldOp::create(tb, tloc, step(tb, tloc));
               },
               [&](OpBuilder &eb, Location eloc) {
                 scf::YieldOp::create(
                     eb, eloc,
                     ValueRange{state.rowMax, state.rowSum, state.acc});
               })
        .getResults();
  }

  /// The bq x bk scores of one tile: modifications, and with `masked` the
  /// element mask (-inf where forbidden, including padded keys).
  Value buildScores(OpBuilder &b, Location loc, Value qk, Value k0,
                    bool masked) {
    // Q is prescaled: without modifications or a mask the scores are Q K^T.
    if (!masked && emitter.isPlainScore() && !scoreScale)
      return qk;
    Value init = tensor::EmptyOp::create(b, loc, {bq, bk}, f);
    return buildElementwise(
        b, loc, init, ValueRange{qk},
        {AffineMap::getMultiDimIdentityMap(2, b.getContext())},
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          return scoreBody(nb, nloc, args[0], k0, masked);
        });
  }

  Value scoreBody(OpBuilder &b, Location loc, Value qk, Value k0, bool masked) {
    Value li = linalg::IndexOp::create(b, loc, 0);
    Value lj = linalg::IndexOp::create(b, loc, 1);
    ScorePosition pos{bIdx, hIdx, arith::AddIOp::create(b, loc, q0, li),
                      arith::AddIOp::create(b, loc, k0, lj)};

    Value shaw;
    if (shawTile)
      shaw = tensor::ExtractOp::create(
          b, loc, shawTile, ValueRange{li, emitter.relativeIndex(b, loc, pos)});
    Value biasElem;
    if (bias) {
      ArrayRef<int64_t> s = getShape(bias);
      Value zero = buildIndexConstant(b, loc, 0);
      biasElem = tensor::ExtractOp::create(
          b, loc, bias,
          ValueRange{s[0] == 1 ? zero : bIdx, s[1] == 1 ? zero : hIdx,
                     s[2] == 1 ? zero : pos.i, s[3] == 1 ? zero : pos.j});
    }
    if (scoreScale)
      qk = arith::MulFOp::create(b, loc, qk,
                                 buildFloatConstant(b, loc, f, *scoreScale));
    Value s = emitter.modify(b, loc, pos, qk, shaw, biasElem,
                             /*prescaled=*/true);
    if (!masked)
      return s;

    SmallVector<Value> extra;
    if (lk % bk != 0)
      extra.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                            pos.j,
                                            buildIndexConstant(b, loc, lk)));
    if (graphMask)
      extra.push_back(
          isNonZero(b, loc,
                    tensor::ExtractOp::create(b, loc, graphMask,
                                              ValueRange{pos.i, pos.j})));
    return emitter.mask(b, loc, pos, s, extra);
  }

  SdpaOp op;
  SdpaScoreEmitter emitter;
  std::optional<Bf16Operands> bf16;
  /// What Q is multiplied by (the op's scale; a power of two for bf16 Q),
  /// and what the f32 scores are then (bf16 Q, a scale that is no power of
  /// two: the rest of it).
  double queryScale = 1.0;
  /// f32 tiles of plain scores take buildSpeculativeSoftmaxStep.
  bool speculative = false;
  /// The scores are log2(e) times the logits (in Q's scale), the online
  /// softmax's `base2`.
  bool base2 = false;
  std::optional<double> scoreScale;
  int64_t batch, heads, lq, lk, e, ev, group, bq, bk, nqt, nkt;
  Type f;
  // Padded operands and per-call masks.
  Value q, k, kT, v, bias, graphMask, blockMask;
  // Per query tile (inside the parallel loop).
  Value bIdx, hIdx, q0, kvHead, qTile, shawTile;
  // The mask_mod's tile classes (with a mask_mod region), and the current
  // key tile's "fully allowed" condition.
  std::optional<MaskModTiles> maskTiles;
  Value maskModFull;
};

/// The fewest query tiles (B x H x Lq / block-q) that 256-row tiles may
/// leave for the threads (defaultBlocks' `longRows`).
constexpr int64_t kMinLongTileUnits = 16;

/// Query and key rows per tile for `target` and `lq` query rows (see the
/// pass description): 64 keys; queries a multiple of attn-vectorize's
/// register-tile rows near 64 when that divides `lq`, else 64 or 32 when
/// they do (padding Q and copying the output out of the padded buffer cost
/// more than the smaller register tile: measured on AVX2 at L = 1024, 40 vs
/// 30 ms), else the multiple of the rows.
///
/// `longRows`: every query tile visits every key (no mask kind, graph or
/// mask_mod bounds the keys) of a long key sequence (Lk >= 1024), so each
/// query tile streams all of one head's K^T and V through the caches. Then
/// 256 query rows when Lq >= 1024 is a multiple of 256 (PyTorch's flash CPU
/// kernel takes 256 from Lq = 768) and that leaves at least
/// kMinLongTileUnits query tiles for the threads: four times the rows per
/// key tile fetched. Measured on Zen 4, one thread, B 1 H 8 E 128: L = 8192
/// 2.90-3.04 s against 3.34-3.46 (9-15 %; the x86-64-v3 target 2.91-2.98
/// against 3.39-3.48), L = 1024 and 4096 and E = 64 within noise either
/// way, and on two threads too. f32 only: the bf16 dot-product path
/// measured 64-row tiles best (docs/Rationale.md).
std::pair<int64_t, int64_t> defaultBlocks(const CpuTarget &target, int64_t lq,
                                          bool longRows) {
  int64_t rows = target.registerTileRows();
  if (longRows && lq >= 1024 && lq % 256 == 0)
    return {256, 64};
  int64_t whole = std::max<int64_t>(rows, 64 / rows * rows);
  if (lq <= whole || lq % whole == 0)
    return {whole, 64};
  for (int64_t bq : {64, 32})
    if (lq % bq == 0)
      return {bq, 64};
  return {whole, 64};
}

/// The L1 data cache of every AMX core (Golden Cove: Sapphire, Emerald and
/// Granite Rapids), in bytes.
constexpr int64_t kAmxL1Bytes = 48 * 1024;

/// The bytes one step of AMX attention touches for a `bq` x `bk` tile of a
/// head dim `e` and value dim `ev`: Q, K and V tiles in bf16, the scores and
/// the accumulators in f32, P in bf16.
int64_t amxStepBytes(int64_t bq, int64_t bk, int64_t e, int64_t ev) {
  return 2 * (bq * e + bk * e + bk * ev) + 4 * (bq * bk + bq * ev) +
         2 * bq * bk;
}

/// The default query tile of bf16 attention on AMX tiles with key tile `bk`:
/// 32 rows where a 64-row step's data overflows the AMX core's L1 and a
/// 32-row one's fits (E = Ev = 64: 40 KB against 64), else `bq` (the
/// target's default). Between the tile products the scores, P and the
/// accumulators go through memory (AMX has no elementwise operations), and
/// 32-row steps keep them in L1. Measured on a Sapphire Rapids-class Xeon
/// (twenty-fourth session), B 1 H 8 E 64, block-k 64: dense L = 4096 one
/// thread 49-51 ms against 64-65, two threads 25-26 against 32-33, causal
/// 27-29 against 35-36, L = 1024 3.3 against 4.3; at E = 128 (no 32-row
/// step fits) 64 rows stay faster on one thread (117-119 ms against 128).
int64_t amxDefaultBlockQ(int64_t bq, int64_t bk, int64_t lq, int64_t e,
                         int64_t ev) {
  if (lq % 32 != 0 || lq < 64 || amxStepBytes(64, bk, e, ev) <= kAmxL1Bytes ||
      amxStepBytes(32, bk, e, ev) > kAmxL1Bytes)
    return bq;
  return 32;
}

/// The bf16 key tile of `op` for block-k `bk`: when one tile holds every
/// key, Lk rounded up to whole vectors of the target's f32 lanes (at most
/// `bk`; the padded keys are masked). The key pairs need an even tile, and
/// a tile whose columns are no multiple of 4 takes no dot product (B = 100,
/// H = 4, 17 keys as in a ViT: a 32-key tile 0.87-1.09 ms, the 18-key one,
/// extended to f32, 1.36-1.46). In f32 the 32-key tile gained nothing over
/// the 17-key one (0.43 ms each at best, Zen 4, once the padding copies
/// were vector rows: attn-lower-strided-copies).
int64_t singleKeyTile(SdpaOp op, int64_t bk) {
  int64_t lk = getShape(op.getKey())[2];
  if (bk < lk)
    return bk;
  return std::min<int64_t>(bk, llvm::alignTo(lk, getCpuTarget(op).f32Lanes()));
}

/// Whether `op` takes the edge-list lowering of sparse graph masks.
bool takesEdgeList(SdpaOp op, double graphEdgeDensity) {
  // The edge-list lowering keeps keys and rows as i32.
  bool fitsI32 = getShape(op.getQuery())[2] < (int64_t(1) << 31) &&
                 getShape(op.getKey())[2] < (int64_t(1) << 31);
  double density = graphDensity(op);
  return density > 0 && density <= graphEdgeDensity && fitsI32;
}

/// The block sizes of `op`: the options where given, else the target's.
std::pair<int64_t, int64_t> blocksFor(SdpaOp op, int64_t blockQ,
                                      int64_t blockK) {
  ArrayRef<int64_t> q = getShape(op.getQuery());
  int64_t lq = q[2];
  bool longRows = op.getMask() == MaskKind::dense && op.getMaskMod().empty() &&
                  getElementType(op.getQuery()).isF32() &&
                  getShape(op.getKey())[2] >= 1024 &&
                  q[0] * q[1] * (lq / 256) >= kMinLongTileUnits;
  auto [targetQ, targetK] = defaultBlocks(getCpuTarget(op), lq, longRows);
  return {blockQ > 0 ? blockQ : targetQ, blockK > 0 ? blockK : targetK};
}

struct TileSdpa : OpRewritePattern<SdpaOp> {
  TileSdpa(MLIRContext *ctx, int64_t blockQ, int64_t blockK,
           double graphEdgeDensity, int64_t edgeBlock, bool shortSequences,
           bool speculativeSoftmax)
      : OpRewritePattern(ctx), blockQ(blockQ), blockK(blockK),
        graphEdgeDensity(graphEdgeDensity), edgeBlock(edgeBlock),
        shortSequences(shortSequences), speculativeSoftmax(speculativeSoftmax) {
  }

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticTensorOperands(op))
      return rewriter.notifyMatchFailure(op,
                                         "dynamic shapes are not supported");
    if (takesEdgeList(op, graphEdgeDensity)) {
      rewriter.replaceOp(op, buildGraphEdgeAttention(rewriter, op, edgeBlock));
      return success();
    }
    if (shortSequences && blockQ == 0 && blockK == 0 && takesRegisterRows(op)) {
      rewriter.replaceOp(op, buildRegisterRowAttention(rewriter, op));
      return success();
    }
    auto [bq, bk] = blocksFor(op, blockQ, blockK);
    SdpaTiler tiler(op, bq, bk, std::nullopt, speculativeSoftmax);
    rewriter.replaceOp(op, tiler.build(rewriter));
    return success();
  }

  int64_t blockQ, blockK;
  double graphEdgeDensity;
  int64_t edgeBlock;
  bool shortSequences;
  bool speculativeSoftmax;
};

/// bf16 attention on a target with bf16 dot products (AVX512-BF16): tiled
/// like the f32 op it widens to, with Q K^T and P V as bf16 pair dot
/// products accumulating in f32 (SdpaTiler's `bf16` mode). Ahead of the
/// widening patterns; what it does not take (the edge-list lowering, Shaw
/// keys, an odd head dim or key tile, and on targets whose dot products are
/// slower than their FMAs, tiles AMX does not compute) is widened and tiled
/// in f32.
struct TileSdpaBf16Dot : OpRewritePattern<SdpaOp> {
  TileSdpaBf16Dot(MLIRContext *ctx, int64_t blockQ, int64_t blockK,
                  double graphEdgeDensity)
      : OpRewritePattern(ctx, /*benefit=*/20), blockQ(blockQ), blockK(blockK),
        graphEdgeDensity(graphEdgeDensity) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    auto isBf16 = [](Value v) { return getElementType(v).isBF16(); };
    if (!isBf16(op.getQuery()) || !isBf16(op.getKey()) ||
        !isBf16(op.getValue()))
      return rewriter.notifyMatchFailure(op, "not bf16");
    if (!hasStaticTensorOperands(op))
      return rewriter.notifyMatchFailure(op,
                                         "dynamic shapes are not supported");
    if (!getCpuTarget(op).hasBf16DotProduct())
      return rewriter.notifyMatchFailure(op, "no bf16 dot products");
    if (op.getRelKey() || getShape(op.getQuery())[3] % 2 != 0 ||
        takesEdgeList(op, graphEdgeDensity))
      return rewriter.notifyMatchFailure(op, "computed in f32");
    auto [bq, bk] = blocksFor(op, blockQ, blockK);
    bk = singleKeyTile(op, bk);
    if (bk % 2 != 0)
      return rewriter.notifyMatchFailure(op, "odd key tile");
    const CpuTarget &target = getCpuTarget(op);
    ArrayRef<int64_t> q = getShape(op.getQuery());
    int64_t ev = getShape(op.getValue())[3];
    if (blockQ == 0 && target.hasAmxBf16() &&
        amxTakesAttentionTiles(32, bk, q[3], ev))
      bq = amxDefaultBlockQ(bq, bk, q[2], q[3], ev);
    // Where the dot products are slower than f32 FMAs (Intel's Xeon cores),
    // only AMX tiles make bf16 pay: tiles AMX would not take are computed
    // in f32. The query tile is block-q clamped to Lq, as SdpaTiler clamps
    // it (Lq past a multiple of it is padded: every tile has its rows).
    bool amxTiles =
        target.hasAmxBf16() &&
        amxTakesAttentionTiles(std::clamp<int64_t>(bq, 1, q[2]), bk, q[3], ev);
    if (target.hasSlowBf16DotProduct() && !amxTiles)
      return rewriter.notifyMatchFailure(
          op, "computed in f32: slow bf16 dot products and no AMX tiles");
    auto wide = cast<SdpaOp>(buildWidenedClone(rewriter, op));
    auto elementOf = [&](unsigned i) -> Type {
      return i < op->getNumResults()
                 ? cast<RankedTensorType>(op->getResult(i).getType())
                       .getElementType()
                 : Type();
    };
    SdpaTiler tiler(wide, bq, bk,
                    Bf16Operands{op.getQuery(), op.getKey(), op.getValue(),
                                 elementOf(0), elementOf(1), amxTiles});
    SmallVector<Value> results = tiler.build(rewriter);
    rewriter.eraseOp(wide);
    rewriter.replaceOp(op, results);
    return success();
  }

  int64_t blockQ, blockK;
  double graphEdgeDensity;
};

struct AttnTile : attn::impl::AttnTileBase<AttnTile> {
  using AttnTileBase::AttnTileBase;

  void runOnOperation() override {
    Operation *module = getOperation();
    if (failed(checkOptionRange(module, "attn-tile", "block-q", blockQ, 0,
                                kMaxTileRows, " (0: from the target)")) ||
        failed(checkOptionRange(module, "attn-tile", "block-k", blockK, 0,
                                kMaxTileRows, " (0: from the target)")) ||
        failed(checkOptionRange(module, "attn-tile", "edge-block", edgeBlock, 0,
                                kMaxEdgeBlock, " (0: the target's f32 lanes)")))
      return signalPassFailure();
    // A density, as attn-cpu-pipeline checks it.
    std::string density = fractionRangeError("attn-tile", "graph-edge-density",
                                              graphEdgeDensity);
    if (!density.empty()) {
      emitError(module->getLoc()) << density;
      return signalPassFailure();
    }
    if (failed(requireStaticShapes(
            getOperation(), [](Operation *op) { return isa<SdpaOp>(op); },
            "cannot be tiled: attn-tile needs static shapes")))
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    populateWidenPrecisionPatterns(patterns);
    patterns.add<TileSdpa>(&getContext(), blockQ, blockK, graphEdgeDensity,
                           edgeBlock, shortSequences, speculativeSoftmax);
    if (bf16DotProduct)
      patterns.add<TileSdpaBf16Dot>(&getContext(), blockQ, blockK,
                                    graphEdgeDensity);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
