//===- SdpaRows.h - attn.sdpa over short key sequences, a row at a time -*-===//
//
// The register-row lowering of attn.sdpa with few keys (a small ViT's 17
// patches per head are the case it is for): per block of query rows (a row
// in each lane) or per query row, the scores of all keys, the softmax and
// the output rows stay in vector registers. attn-tile picks it when every
// key of a row fits in a few vectors of the target.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_SDPAROWS_H
#define ATTN_LIB_TRANSFORMS_SDPAROWS_H

#include "dialect/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// The most vectors of the target's f32 lanes that a row's keys (and,
/// separately, its output row) may take in the register-row lowering.
inline constexpr int64_t kMaxRowVectors = 4;

/// Whether `op` can take the register-row lowering on its function's CPU
/// target: statically shaped f32; a dense, causal, local or causal_local
/// mask (one row's allowed keys are an interval), with or without padding;
/// no bias, relative or graph terms or regions (plain scaled scores);
/// E <= 128; and Lk and Ev within kMaxRowVectors vectors of the target's
/// f32 lanes.
bool takesRegisterRows(SdpaOp op);

/// Builds the register-row lowering of `op` (takesRegisterRows) and returns
/// its results (output, and lse when the op has it).
SmallVector<Value> buildRegisterRowAttention(OpBuilder &b, SdpaOp op);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_SDPAROWS_H
