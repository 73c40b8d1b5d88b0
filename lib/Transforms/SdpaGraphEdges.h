//===- SdpaGraphEdges.h - graph-masked attn.sdpa over edge lists -*- C++
//-*-===//
//
// The edge-list lowering of a graph-masked attn.sdpa: per query row, one pass
// over the row's CSR entries with online softmax in registers. attn-tile
// picks it for sparse graphs (its block-mask tiles for dense ones).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_SDPAGRAPHEDGES_H
#define ATTN_LIB_TRANSFORMS_SDPAGRAPHEDGES_H

#include "dialect/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// The fraction of the Lq x Lk score matrix that a graph-masked sdpa's CSR
/// can allow (col_idx entries / (Lq * Lk), duplicates counted); 0 for other
/// masks.
double graphDensity(SdpaOp op);

/// Builds the edge-list lowering of a graph-masked, statically shaped `op`
/// (`edgeBlock` CSR entries per online-softmax step) and returns its results
/// (output, and lse when the op has it).
SmallVector<Value> buildGraphEdgeAttention(OpBuilder &b, SdpaOp op,
                                           int64_t edgeBlock);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_SDPAGRAPHEDGES_H
