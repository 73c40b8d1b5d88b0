//===- Passes.h - passes on attn IR -----------------------------*- C++ -*-===//

#ifndef ATTN_LIB_TRANSFORMS_PASSES_H
#define ATTN_LIB_TRANSFORMS_PASSES_H

// Only what the declarations need: each pass's .cpp includes the dialects it
// creates (and lists them in Passes.td's dependentDialects).
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace linalg {
class FillOp;
} // namespace linalg

namespace attn {

#define GEN_PASS_DECL
#include "lib/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lib/Transforms/Passes.h.inc"

/// A bf16 pair contraction AMX tiles compute (attn-lower-amx): a
/// linalg.generic `C[m, n] += extf(A[m, k, p]) * extf(B[k, n, p])` with bf16
/// A and B, f32 C, p the pair (extent 2), and m, n, k static multiples of 16.
/// attn-vectorize leaves these to attn-lower-amx on AMX-BF16 targets.
bool isAmxContraction(Operation *op);

/// Whether attn-tile's bf16 mode with `blockQ` x `blockK` tiles of a head
/// dim `e` and value dim `ev` makes whole-tile products that AMX computes
/// (isAmxContraction): Q K^T (blockQ x blockK over e / 2 pairs) and P V
/// (blockQ x ev over blockK / 2 pairs), every extent a multiple of 16.
bool amxTakesAttentionTiles(int64_t blockQ, int64_t blockK, int64_t e,
                            int64_t ev);

/// Whether `fill` writes +0 (a constant): what AMX's tilezero is, so that
/// attn-lower-amx starts an accumulator filled so from it.
bool isPosZeroFill(linalg::FillOp fill);

/// Whether `type`'s innermost dimension has stride 1 (its rows are read as
/// contiguous elements): attn-lower-strided-copies' vector rows,
/// attn-lower-amx's tile rows.
bool hasUnitInnerStride(MemRefType type);

/// attn ops on f16/bf16 tensors -> the same ops on f32 copies, results
/// rounded back (every lowering includes these: softmax and sums in f32).
void populateWidenPrecisionPatterns(RewritePatternSet &patterns);
/// Only attn.mha's widening.
void populateWidenMhaPatterns(RewritePatternSet &patterns);
/// `value` (a ranked float tensor) with every element converted to `elem`
/// (arith.extf or arith.truncf in a linalg.generic).
Value buildConvertedElements(OpBuilder &b, Location loc, Value value,
                             Type elem);
/// A clone of attn op `op` (inserted before it) whose f16/bf16 float
/// operands are f32 copies and whose f16/bf16 results are f32: what the
/// widening patterns compute on.
Operation *buildWidenedClone(RewriterBase &rewriter, Operation *op);
/// `op`'s results from `wideResults` (a widened clone's, or values of the
/// same shapes in f32): each rounded back to `op`'s result type.
SmallVector<Value> narrowResults(RewriterBase &rewriter, Operation *op,
                                 ValueRange wideResults);
/// attn.mha -> projections + attn.sdpa.
void populateDecomposeMhaPatterns(RewritePatternSet &patterns);
/// attn.sdpa -> linalg (materialised scores; the reference lowering).
void populateLowerSdpaToLinalgPatterns(RewritePatternSet &patterns);
/// attn.gat -> linalg (dense N x N scores; the reference lowering).
void populateLowerGatToLinalgPatterns(RewritePatternSet &patterns);
/// The unfused (SDDMM, edge softmax, SpMM) lowering of attn.gat.
void populateLowerGatUnfusedPatterns(RewritePatternSet &patterns,
                                     PatternBenefit benefit = 1);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_TRANSFORMS_PASSES_H
