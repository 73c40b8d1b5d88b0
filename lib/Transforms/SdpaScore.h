//===- SdpaScore.h - score modifications and masks of attn.sdpa -*- C++ -*-===//
//
// The scalar math of one attention score, emitted once for every lowering:
// the reference lowering calls it inside its materialised score generic, the
// tiled lowering inside each tile's generic, so both compute the same thing.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_SDPASCORE_H
#define ATTN_LIB_TRANSFORMS_SDPASCORE_H

#include "dialect/AttnOps.h"
#include "dialect/MaskKinds.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// Global coordinates (index values) of one score element: batch, query head,
/// query row, key column.
struct ScorePosition {
  Value b, h, i, j;
};

/// Clones the body of a score_mod / mask_mod `region` at `b` with its block
/// arguments replaced by `args`; returns the yielded value.
Value inlineModRegion(OpBuilder &b, Region &region, ValueRange args);

/// tensor.extract of `tensor` at `indices`, each clamped into [0, dim - 1]
/// unless it is a constant already inside: a region's reads never leave the
/// captured tensor, whatever values its indices take.
Value buildClampedExtract(OpBuilder &b, Location loc, Value tensor,
                          ValueRange indices);

class SdpaScoreEmitter {
public:
  explicit SdpaScoreEmitter(SdpaOp op);

  /// The absolute position ia of query row `i` of batch `batch`, as the
  /// op's `align` says: i + (Lk - Lq) (bottom_right), i (top_left), or
  /// i + (kv_lengths[batch] - Lq) (per_sequence).
  Value queryPosition(OpBuilder &b, Location loc, Value batch, Value i) const;

  /// clip(j - ia, -R, R) + R, the row of the relative tables (needs rel_clip).
  Value relativeIndex(OpBuilder &b, Location loc, const ScorePosition &p) const;

  /// scale * (qk + shaw) + bias + rel_bias[h, r] - slope[h] * |j - ia|, then
  /// the score_mod region (if any) applied to it, where
  /// `shaw` (q . rel_key[r]) and `bias` (the bias element) may be null. With
  /// `prescaled` the caller has multiplied q by the scale already (qk and
  /// shaw are scaled).
  Value modify(OpBuilder &b, Location loc, const ScorePosition &p, Value qk,
               Value shaw, Value bias, bool prescaled = false) const;

  /// True when modify() with `prescaled` is just `qk` (no score
  /// modification at all, score_mod included).
  bool isPlainScore() const;

  /// True when the op has a mask_mod region (a predicate no tile
  /// classification knows: every tile applies the element mask).
  bool hasMaskMod() const;

  /// Conditions (i1 values, all to hold) under which every key of tile
  /// [j0, j0 + bk) is allowed for every query at positions [iaLo, iaHi]:
  /// the tile within Lk, the mask kind's full-tile rule, a mask_mod's
  /// tile class `maskModFull` (null without a mask_mod) and the tile
  /// within `kvLength` keys (null without padding). Empty when no mask
  /// applies; std::nullopt when the tile is never promised full (graph and
  /// dilated kinds, a mask_mod without tile classes): every element is
  /// masked then.
  std::optional<SmallVector<Value>>
  fullTileConditions(OpBuilder &b, Location loc, Value iaLo, Value iaHi,
                     Value j0, int64_t bk, Value maskModFull,
                     Value kvLength) const;

  /// The mask kind and its parameters (the definition in MaskKinds.h).
  const MaskParams &maskParams() const { return params; }

  /// The conjunction of the structural mask, the padding mask, the mask_mod
  /// region (if any) and `extra`
  /// conditions (e.g. a graph-mask element); null when nothing is masked.
  Value allowed(OpBuilder &b, Location loc, const ScorePosition &p,
                ArrayRef<Value> extra = {}) const;

  /// `s` where allowed(p, extra) holds, -inf elsewhere.
  Value mask(OpBuilder &b, Location loc, const ScorePosition &p, Value s,
             ArrayRef<Value> extra = {}) const;

private:
  /// (q_idx, kv_idx) for the regions: i and j clamped into [0, Lq) x [0, Lk).
  std::pair<Value, Value> regionIndices(OpBuilder &b, Location loc,
                                        const ScorePosition &p) const;

  // Op accessors are not const; the emitter does not modify the op.
  mutable SdpaOp op;
  int64_t lq, lk;
  MaskParams params;
};

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_SDPASCORE_H
