//===- Passes.h - passes on attn IR -----------------------------*- C++ -*-===//

#ifndef ATTN_LIB_TRANSFORMS_PASSES_H
#define ATTN_LIB_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace attn {

#define GEN_PASS_DECL
#include "lib/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lib/Transforms/Passes.h.inc"

/// attn ops on f16/bf16 tensors -> the same ops on f32 copies, results
/// rounded back (every lowering includes these: softmax and sums in f32).
void populateWidenPrecisionPatterns(RewritePatternSet &patterns);
/// attn.mha -> projections + attn.sdpa.
void populateDecomposeMhaPatterns(RewritePatternSet &patterns);
/// attn.sdpa -> linalg (materialised scores; the reference lowering).
void populateLowerSdpaToLinalgPatterns(RewritePatternSet &patterns);
/// attn.gat -> linalg (dense N x N scores; the reference lowering).
void populateLowerGatToLinalgPatterns(RewritePatternSet &patterns);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_TRANSFORMS_PASSES_H
