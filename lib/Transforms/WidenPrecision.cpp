//===- WidenPrecision.cpp - f16/bf16 attention computed in f32 ------------===//
//
// attn ops on f16 or bf16 tensors compute their scores, softmax and sums in
// f32 (as FlashAttention does): every float operand is extended to f32 once,
// the op runs on f32 tensors, and its results are rounded back to the input
// type. Every lowering of the attn ops includes these patterns, so no
// lowering ever accumulates in 16 bits.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// f16 and bf16: the element types computed in f32.
bool isReduced(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && (tensor.getElementType().isF16() ||
                    tensor.getElementType().isBF16());
}

} // namespace

Value mlir::attn::buildConvertedElements(OpBuilder &b, Location loc,
                                         Value value, Type elem) {
  auto type = cast<RankedTensorType>(value.getType());
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), elem);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  bool widen = elem.getIntOrFloatBitWidth() >
               type.getElementType().getIntOrFloatBitWidth();
  return buildElementwise(b, loc, init, value, {id},
                          [&](OpBuilder &b, Location loc, ValueRange args) {
                            return widen ? arith::ExtFOp::create(b, loc, elem,
                                                                 args[0])
                                               .getResult()
                                         : arith::TruncFOp::create(b, loc, elem,
                                                                   args[0])
                                               .getResult();
                          });
}

namespace {

/// An attn op whose float operands are f16/bf16: the same op on f32 copies,
/// its results rounded back.
template <typename OpTy> struct WidenToF32 : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!llvm::any_of(op->getOperandTypes(), isReduced))
      return rewriter.notifyMatchFailure(op, "no f16/bf16 operand");
    Operation *wide = buildWidenedClone(rewriter, op);
    rewriter.replaceOp(op, narrowResults(rewriter, op, wide->getResults()));
    return success();
  }
};

} // namespace

Operation *mlir::attn::buildWidenedClone(RewriterBase &rewriter,
                                         Operation *op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  Type f32 = rewriter.getF32Type();
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(isReduced(v.getType())
                           ? buildConvertedElements(rewriter, loc, v, f32)
                           : v);
  Operation *wide = rewriter.clone(*op);
  wide->setOperands(operands);
  for (OpResult r : wide->getResults())
    if (isReduced(r.getType()))
      r.setType(cast<RankedTensorType>(r.getType()).clone(f32));
  return wide;
}

SmallVector<Value> mlir::attn::narrowResults(RewriterBase &rewriter,
                                             Operation *op,
                                             ValueRange wideResults) {
  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<Value> results;
  for (auto [oldResult, newResult] : llvm::zip(op->getResults(), wideResults)) {
    auto type = cast<RankedTensorType>(oldResult.getType());
    if (!isReduced(type)) {
      results.push_back(newResult);
      continue;
    }
    rewriter.setInsertionPointAfterValue(newResult);
    results.push_back(
        buildConvertedElements(rewriter, op->getLoc(), newResult,
                               type.getElementType()));
  }
  return results;
}

void mlir::attn::populateWidenPrecisionPatterns(RewritePatternSet &patterns) {
  patterns.add<WidenToF32<SdpaOp>, WidenToF32<MhaOp>, WidenToF32<GatOp>,
               WidenToF32<GatV2Op>>(
      patterns.getContext(), /*benefit=*/10);
}

void mlir::attn::populateWidenMhaPatterns(RewritePatternSet &patterns) {
  patterns.add<WidenToF32<MhaOp>>(patterns.getContext(), /*benefit=*/10);
}
