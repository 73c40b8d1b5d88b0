//===- LowerStridedCopies.cpp - strided memref.copy as vector rows --------===//
//
// memref.copy between buffers that are not both contiguous lowers to the
// generic memrefCopy runtime call (an element walk with a memmove per
// contiguous run); with a contiguous innermost dimension on both sides it
// is loops over the outer dimensions around one vector load / store.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERSTRIDEDCOPIES
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// The longest contiguous row copied as one vector (longer rows stay with
/// memrefCopy, whose memmove is then as good).
constexpr int64_t kMaxRow = 256;

/// Whether `type`'s innermost dimension has stride 1 and the buffer is not
/// contiguous as a whole (memref.copy of two contiguous buffers is a memcpy).
bool innerUnitStride(MemRefType type, bool &contiguous) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() ||
      strides.back() != 1)
    return false;
  contiguous = type.getLayout().isIdentity() ||
               memref::isStaticShapeAndContiguousRowMajor(type);
  return true;
}

struct StridedCopyToVectorRows : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    auto src = dyn_cast<MemRefType>(op.getSource().getType());
    auto dst = dyn_cast<MemRefType>(op.getTarget().getType());
    if (!src || !dst || !src.hasStaticShape() || src.getRank() == 0 ||
        src.getShape() != dst.getShape())
      return rewriter.notifyMatchFailure(op, "not a static ranked copy");
    if (!VectorType::isValidElementType(src.getElementType()))
      return rewriter.notifyMatchFailure(op, "element type");
    bool srcContiguous = false, dstContiguous = false;
    if (!innerUnitStride(src, srcContiguous) ||
        !innerUnitStride(dst, dstContiguous))
      return rewriter.notifyMatchFailure(op, "strided innermost dimension");
    if (srcContiguous && dstContiguous)
      return rewriter.notifyMatchFailure(op, "a memcpy already");
    ArrayRef<int64_t> shape = src.getShape();
    int64_t row = shape.back();
    if (row > kMaxRow || src.getNumElements() == 0)
      return rewriter.notifyMatchFailure(op, "row too long, or empty");

    Location loc = op.getLoc();
    auto rowType = VectorType::get({row}, src.getElementType());
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> indices;
    OpBuilder::InsertionGuard guard(rewriter);
    for (int64_t extent : shape.drop_back()) {
      auto loop = scf::ForOp::create(
          rewriter, loc, zero,
          arith::ConstantIndexOp::create(rewriter, loc, extent), one);
      indices.push_back(loop.getInductionVar());
      rewriter.setInsertionPointToStart(loop.getBody());
    }
    indices.push_back(zero);
    Value v =
        vector::LoadOp::create(rewriter, loc, rowType, op.getSource(), indices);
    vector::StoreOp::create(rewriter, loc, v, op.getTarget(), indices);
    rewriter.eraseOp(op);
    return success();
  }
};

struct AttnLowerStridedCopies
    : attn::impl::AttnLowerStridedCopiesBase<AttnLowerStridedCopies> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToVectorRows>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
