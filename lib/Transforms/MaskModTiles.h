//===- MaskModTiles.h - tile classes of a mask_mod region --------*- C++ -*-===//
//
// Classifies the tiles of an attn.sdpa's mask_mod region as full, empty or
// partial by interval analysis of its body: the indices range over the
// tile (q_idx over its rows, kv_idx over its keys; b and h are one value),
// integer ops propagate intervals, comparisons give true / false / unknown,
// and i1 logic is Kleene's. Affine masks (causal, windows, prefix-LM,
// sinks, block-diagonal with a constant block) are classified exactly from
// the indices alone; a captured tensor read at q_idx or kv_idx (document
// ids) contributes the interval of its values over the tile, from per-tile
// min / max tables built once per call (O(size of the tensor)). Ops the
// analysis does not know give "unknown": such tiles are partial, never
// skipped.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_MASKMODTILES_H
#define ATTN_LIB_TRANSFORMS_MASKMODTILES_H

#include "dialect/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {

class MaskModTiles {
public:
  /// Prepares the classification of `op`'s mask_mod (which must exist) for
  /// query tiles of `bq` rows and key tiles of `bk` keys; builds the min /
  /// max tables of the captured tensors it reads by index at `b` (outside
  /// the tiled loops).
  MaskModTiles(OpBuilder &b, Location loc, SdpaOp op, int64_t bq, int64_t bk);

  /// The tile class of rows [q0, q0 + bq) and keys [k0, k0 + bk) of batch
  /// `bIdx` and head `hIdx`: (every element allowed, no element allowed), as
  /// i1 values; both false when the analysis cannot tell. Rows and keys are
  /// clamped into [0, Lq) x [0, Lk) as the region sees them.
  std::pair<Value, Value> classify(OpBuilder &b, Location loc, Value bIdx,
                                   Value hIdx, Value q0, Value k0) const;

private:
  struct Table {
    Value tensor;  // the captured tensor
    unsigned dim;  // the dimension indexed by q_idx or kv_idx
    int64_t tile;  // rows per tile: bq (read at q_idx) or bk (at kv_idx);
                   // one table serves both when bq == bk
    Value min, max; // per-tile tables: `dim` replaced by the tile count
  };
  const Table *findTable(Value tensor, unsigned dim, int64_t tile) const;

  // Op accessors are not const; classify() does not modify the op.
  mutable SdpaOp op;
  int64_t bq, bk, lq, lk;
  SmallVector<Table> tables;
};

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_MASKMODTILES_H
