//===- LinalgBuilders.h - math pieces shared by the lowerings ---*- C++ -*-===//
//
// Small builders for the linalg-on-tensors pieces every attention lowering
// needs: contractions, masked stable softmax, CSR densification, broadcasts.
// Each lowering composes these rather than writing its own copy.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_LINALGBUILDERS_H
#define ATTN_LIB_TRANSFORMS_LINALGBUILDERS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::attn {

/// Returns the static shape of a ranked tensor value.
ArrayRef<int64_t> getShape(Value tensor);

/// True when every operand of `op` is a statically shaped ranked tensor (what
/// the reference lowerings need).
bool hasStaticTensorOperands(Operation *op);

/// Builds the affine map (d0..d{numDims-1}) -> (d{results[0]}, ...).
AffineMap dimsMap(MLIRContext *ctx, unsigned numDims,
                  ArrayRef<unsigned> results);

/// out[outMap] = sum over the dims absent from `outMap` of
/// lhs[lhsMap] * rhs[rhsMap]. The output tensor is zero-initialised and has
/// the shape `outShape` and lhs's element type.
Value buildContraction(OpBuilder &b, Location loc, Value lhs, AffineMap lhsMap,
                       Value rhs, AffineMap rhsMap, ArrayRef<int64_t> outShape,
                       AffineMap outMap);

/// Returns `value + bias[biasMap]` elementwise over `value`'s shape.
Value buildBroadcastAdd(OpBuilder &b, Location loc, Value value, Value bias,
                        AffineMap biasMap);

/// Reshapes with tensor.expand_shape / tensor.collapse_shape (static shapes).
Value buildExpand(OpBuilder &b, Location loc, Value src,
                  ArrayRef<int64_t> shape,
                  ArrayRef<SmallVector<int64_t, 2>> reassociation);
Value buildCollapse(OpBuilder &b, Location loc, Value src,
                    ArrayRef<SmallVector<int64_t, 2>> reassociation);

/// The result of a masked softmax over the last dimension.
struct MaskedSoftmax {
  Value probs; ///< Same shape as the scores; rows without allowed keys are 0.
  Value lse;   ///< Scores' shape minus the last dim; -inf for such rows.
};

/// Stable softmax over the last dimension of `scores`, where -inf marks a
/// masked entry: p = w * exp(s - max), probs = p / sum(p). A row whose entries
/// are all -inf yields probs 0 and lse -inf (the exp(-inf - -inf) case is
/// guarded), never NaN. `weights` (optional, read through `weightsMap` over the
/// scores' iteration space) multiplies each exp term: an entry of weight w
/// counts as w identical entries (GAT's duplicate edges).
MaskedSoftmax buildMaskedSoftmax(OpBuilder &b, Location loc, Value scores,
                                 Value weights = {}, AffineMap weightsMap = {});

/// Dense `rows x cols` tensor of `elemType` from a CSR (row_ptr, col_idx):
/// with an i1 element type, entry (i, j) is true when j appears in row i; with
/// a float type it counts how often it appears. Entries outside [0, cols) are
/// ignored; with `skipDiagonal`, entries (i, i) are ignored too.
Value buildDenseFromCsr(OpBuilder &b, Location loc, Value rowPtr, Value colIdx,
                        int64_t rows, int64_t cols, Type elemType,
                        bool skipDiagonal = false);

/// A float constant of type `type` (scalar float types only).
Value buildFloatConstant(OpBuilder &b, Location loc, Type type, double value);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_LINALGBUILDERS_H
