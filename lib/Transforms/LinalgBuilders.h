//===- LinalgBuilders.h - math pieces shared by the lowerings ---*- C++ -*-===//
//
// Small builders for the linalg-on-tensors pieces every attention lowering
// needs: contractions, masked stable softmax, CSR densification, broadcasts.
// Each lowering composes these rather than writing its own copy.
//
// A pass that calls them declares, in Passes.td's `dependentDialects`, the
// dialects they create: arith for the constants and casts, tensor for
// buildEmpty / buildExpand / buildCollapse, linalg and tensor (and arith)
// for the linalg builders, math as well for the softmax builders, scf as
// well for buildAttentionForall and buildDenseFromCsr. Each builder checks
// its dialects on entry and stops with an error naming the missing ones.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_LINALGBUILDERS_H
#define ATTN_LIB_TRANSFORMS_LINALGBUILDERS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::attn {

/// Returns the static shape of a ranked tensor value.
ArrayRef<int64_t> getShape(Value tensor);

/// Returns the element type of a ranked tensor value.
Type getElementType(Value tensor);

/// True when every operand and result of `op` is a statically shaped ranked
/// tensor (what the lowerings need).
bool hasStaticTensorOperands(Operation *op);

/// For each op under `root` accepted by `filter` whose operands are not all
/// statically shaped, emits "<message>, got <first dynamic type>"; failure if
/// any. The lowerings' shared up-front check (their patterns need static
/// shapes and would otherwise leave the op silently).
LogicalResult requireStaticShapes(Operation *root,
                                  llvm::function_ref<bool(Operation *)> filter,
                                  StringRef message);

/// A `tensor.empty` of `shape` and `elemType`: the init operand of a
/// linalg op that overwrites every element (buildElementwise's `init`).
Value buildEmpty(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                 Type elemType);

/// Builds the affine map (d0..d{numDims-1}) -> (d{results[0]}, ...).
AffineMap dimsMap(MLIRContext *ctx, unsigned numDims,
                  ArrayRef<unsigned> results);

/// out[outMap] = sum over the dims absent from `outMap` of
/// lhs[lhsMap] * rhs[rhsMap]. The output tensor is zero-initialised and has
/// the shape `outShape` and `accType` (null: lhs's element type); narrower
/// operands (bf16 into f32) are extended in the body, so the product and
/// the sum are in the accumulator's type.
Value buildContraction(OpBuilder &b, Location loc, Value lhs, AffineMap lhsMap,
                       Value rhs, AffineMap rhsMap, ArrayRef<int64_t> outShape,
                       AffineMap outMap, Type accType = {});

/// Like buildContraction, accumulating into `init` (its element type and
/// shape) instead of a zero-filled tensor.
Value buildContractionInto(OpBuilder &b, Location loc, Value lhs,
                           AffineMap lhsMap, Value rhs, AffineMap rhsMap,
                           Value init, AffineMap outMap);

/// An all-parallel linalg.generic that writes `init` (identity map over its
/// shape) from `inputs` read through `inputMaps`; `body` receives the block
/// arguments (inputs, then the current `init` element) and returns the
/// element to yield. The one elementwise builder every lowering uses.
Value buildElementwise(
    OpBuilder &b, Location loc, Value init, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// The transpose of `x`: dim `d` of the result is dim `perm[d]` of `x`.
Value buildTranspose(OpBuilder &b, Location loc, Value x,
                     ArrayRef<unsigned> perm);

/// `x @ rhs (+ bias)` over the last dim of `x` (any rank), with `rhs` of shape
/// in x out and `bias` (optional) of shape out. Computed as one 2-d
/// contraction over all rows of `x` (rows x in times in x out, the bias as
/// its initial value), so register tiles span rows of every batch and both
/// operands are read along contiguous rows.
Value buildMatmul(OpBuilder &b, Location loc, Value x, Value rhs, Value bias);

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

/// The running state of FlashAttention's online softmax over one block of
/// query rows: row max m, row sum l (of exp(s - m)) and the unnormalised
/// output acc (rows x Ev). l is `rows`, or `rows x lanes` partial sums
/// (buildOnlineSoftmaxInit's `sumLanes`): lane t sums the score columns
/// c = t mod lanes, one vector add per vector of P and no reduction across
/// lanes until the end (buildOnlineSoftmaxFinish); for bf16 P in tiles of
/// whole 32-column units, the pairs floor(c / 2) = t mod lanes instead (one
/// dot product of P with ones per unit).
struct OnlineSoftmaxState {
  Value rowMax, rowSum, acc;
};

/// Initial state: m = -inf, l = 0, acc = 0; l in `sumLanes` partial sums
/// per row when it is above 1 (every tile's columns a multiple of it).
OnlineSoftmaxState buildOnlineSoftmaxInit(OpBuilder &b, Location loc,
                                          int64_t rows, int64_t ev, Type f,
                                          int64_t sumLanes = 1);

/// One online-softmax step over a tile of scores (rows x cols, -inf =
/// masked) and its values (cols x Ev):
///   m' = max(m, rowmax(S)),  a = exp(m - m'),  P = exp(S - m'),
///   l' = a l + rowsum(P),    acc' = a acc + P V,
/// with a = 0 while m' = -inf (rows with no allowed key yet) and P = exp(S -
/// 0) on such rows (their scores are -inf: P = 0), so exp(-inf - -inf) is
/// never evaluated into the result; the offset is chosen once per row, not
/// guarded per score.
/// `valuesMap` reads the values over the iteration space (row i, value
/// column d, score column j) of `acc += P V`; by default values are a plain
/// `cols x Ev` matrix, (i, d, j) -> (j, d). GAT passes per-head values
/// (`cols x rows x Ev`, (i, d, j) -> (j, i, d)).
/// bf16 values of rank 3 are pair-packed for bf16 dot products
/// (`cols/2 x Ev x 2`: keys 2t and 2t + 1 of value column d side by side):
/// then P is rounded to bf16 as it is computed (as FlashAttention rounds P
/// to the input type before P V), paired the same way, and contracted over
/// (pair, element) with f32 accumulation; l sums the same rounded P in f32.
/// With `lazyRescale` (for accumulators in memory, as AMX's) a row's m
/// moves only where its tile's max passes it by more than 8 ln 2 (P <= 2^8,
/// a = 1 elsewhere), and acc is rescaled only in a step where some row's
/// moved (an scf.if): FlashAttention-4's conditional rescale.
/// With `base2` the scores are log2(e) times the logits (the caller folded
/// log2(e) into the query's scale, as FlashAttention's softmax_scale_log2
/// does): m is in those units and every exp(x) above is 2^x, one multiply
/// per score less (buildExpOfNonPositive's); the lazy bound is 8.
OnlineSoftmaxState buildOnlineSoftmaxStep(OpBuilder &b, Location loc,
                                          Value scores, Value values,
                                          const OnlineSoftmaxState &state,
                                          AffineMap valuesMap = {},
                                          bool lazyRescale = false,
                                          bool base2 = false);

/// Marks the elementwise op of buildSpeculativeSoftmaxStep for
/// attn-vectorize: computed in the register tiles of the contraction whose
/// product it reads.
inline constexpr llvm::StringLiteral kRegisterTileEpilogueAttr =
    "attn.register_tile_epilogue";

/// One online-softmax step over the f32 product `qk` (rows x cols, the
/// scores themselves: no mask or modification) of a query tile with a key
/// tile, as buildOnlineSoftmaxStep's lazy form computes it, with the
/// weights taken against the row maxima of the earlier tiles: one
/// elementwise op (kRegisterTileEpilogueAttr) reads `qk` and writes P =
/// exp(S - m), which attn-vectorize computes in Q K^T's register tiles
/// right after their reduction, beside the next tile's FMAs, instead of as
/// a pass of its own. Where no row's tile max passes its m + 8 ln 2 (so
/// P <= 2^8, as the lazy step keeps it), the step is l' = l + rowsum(P),
/// acc' = acc + P V with m as it was; otherwise (some row's first allowed
/// key, or a max that climbed) the lazy step runs on the scores instead
/// (an scf.if), the speculative P unused. attn-tile's speculative-softmax
/// (off by default): on AVX2 it measured no faster than the exact step
/// (docs/Rationale.md, "The softmax on AVX2"). `base2` as for
/// buildOnlineSoftmaxStep.
OnlineSoftmaxState buildSpeculativeSoftmaxStep(OpBuilder &b, Location loc,
                                               Value qk, Value values,
                                               const OnlineSoftmaxState &state,
                                               bool base2 = false);

/// The attention output of a finished online softmax.
struct AttentionRows {
  Value output; ///< acc / l, and 0 on rows that saw no allowed key.
  Value lse;    ///< m + log(l), and -inf on those rows.
};
/// With `base2` (m in log2(e) units, as the steps' `base2`), lse is
/// m ln(2) + log(l).
AttentionRows buildOnlineSoftmaxFinish(OpBuilder &b, Location loc,
                                       const OnlineSoftmaxState &state,
                                       bool base2 = false);

/// Dense tensor of `elemType` from a CSR (row_ptr, col_idx) over `rows x
/// cols`, at block granularity `rowBlock x colBlock` (shape
/// ceil(rows/rowBlock) x ceil(cols/colBlock)): with an integer element type,
/// entry (I, J) is true when some j in column block J appears in some row i of
/// row block I (an integer type other than i1 stores 1 for true: vectorized
/// code reads i8 masks correctly, where i1 memory is bit-packed in vectors);
/// with a float type it counts the entries. Entries outside [0, cols) are
/// ignored; with `skipDiagonal`, entries (i, i) are ignored too.
Value buildDenseFromCsr(OpBuilder &b, Location loc, Value rowPtr, Value colIdx,
                        int64_t rows, int64_t cols, Type elemType,
                        bool skipDiagonal = false, int64_t rowBlock = 1,
                        int64_t colBlock = 1);

/// The parallel loop of an attention lowering: an scf.forall over (batch,
/// head, `units`) whose shared outputs are an empty `batch x heads x rows x
/// ev` output and a `batch x heads x rows` lse of element type `f` (or
/// `outElem` / `lseElem` where given: results rounded by the body); `body`
/// builds the loop body (insertion point at its start).
scf::ForallOp
buildAttentionForall(OpBuilder &b, Location loc, int64_t batch, int64_t heads,
                     int64_t units, int64_t rows, int64_t ev, Type f,
                     llvm::function_ref<void(OpBuilder &, scf::ForallOp)> body,
                     Type outElem = {}, Type lseElem = {});

/// Inserts, from the terminator of an attention forall (buildAttentionForall
/// or one with the same shared outputs: the output, then the lse if any),
/// `rows` query rows starting at `row0` of (`batch`, `head`): `output`
/// (`rows x ev`, or with unit leading dims) into the first shared output
/// and, when not null, `lse` (`rows`, or with unit leading dims) into the
/// second.
void buildInsertAttentionRows(OpBuilder &b, Location loc,
                              scf::ForallOp forall, Value batch, Value head,
                              Value row0, int64_t rows, int64_t ev,
                              Value output, Value lse);

/// An `index` constant.
Value buildIndexConstant(OpBuilder &b, Location loc, int64_t value);

/// Integer `value` (a CSR entry, a length) cast to `index`.
Value buildIndexCast(OpBuilder &b, Location loc, Value value);

/// A float constant of type `type`: a scalar float type, or a vector of one
/// (a splat).
Value buildFloatConstant(OpBuilder &b, Location loc, Type type, double value);
/// exp(x) for x <= 0, -inf or NaN (a softmax's S - max; up to 8 ln 2 with
/// the lazy rescale's stale max, and right for x up to 88): arith ops, with
/// no range clamps (MLIR's polynomial math.exp needs them for any x),
/// exactly 0 below 2^-126 and at -inf, NaN for NaN; math.exp unless f32 or
/// a vector of f32. 2.0 ulp; where the caller rounds the result to
/// `roundedTo` = bf16, a shorter polynomial within a twentieth of bf16's
/// rounding (1.0e-4 relative).
/// attn-lower-vectors turns its 2^n into vrndscaleps + vscalefps on AVX-512
/// (vreduceps + vscalefps with AVX512DQ).
/// With `base2`, 2^x instead (x <= 0 or up to 8; the same steps without
/// the multiply by log2(e)).
Value buildExpOfNonPositive(OpBuilder &b, Location loc, Value x,
                            Type roundedTo = {}, bool base2 = false);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_LINALGBUILDERS_H
