//===- LowerStridedCopies.cpp - strided memref.copy as vector rows --------===//
//
// memref.copy between buffers that are not both contiguous lowers to the
// generic memrefCopy runtime call (an element walk with one memcpy call per
// element); with a contiguous innermost dimension on both sides it is loops
// over the outer dimensions around vector loads / stores of the rows.
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

bool attn::hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

namespace {

/// The longest vector a row is copied in; longer rows are copied in chunks
/// of this many elements and one remainder.
constexpr int64_t kMaxChunk = 256;

/// Whether `type`'s innermost dimension has stride 1; `contiguous` tells
/// whether the whole buffer is (memref.copy of two contiguous buffers is
/// LLVM's memcpy).
bool innerUnitStride(MemRefType type, bool &contiguous) {
  if (!attn::hasUnitInnerStride(type))
    return false;
  contiguous = type.getLayout().isIdentity() ||
               memref::isStaticShapeAndContiguousRowMajor(type);
  return true;
}

/// Whole bytes per element: a vector of i1 (or i4) is packed in memory, a
/// memref of them is not.
bool byteSized(Type t) {
  if (t.isIndex())
    return true;
  return t.isIntOrFloat() && t.getIntOrFloatBitWidth() % 8 == 0;
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
    if (!VectorType::isValidElementType(src.getElementType()) ||
        !byteSized(src.getElementType()))
      return rewriter.notifyMatchFailure(op, "element type");
    bool srcContiguous = false, dstContiguous = false;
    if (!innerUnitStride(src, srcContiguous) ||
        !innerUnitStride(dst, dstContiguous))
      return rewriter.notifyMatchFailure(op, "strided innermost dimension");
    if (srcContiguous && dstContiguous)
      return rewriter.notifyMatchFailure(op, "a memcpy already");
    ArrayRef<int64_t> shape = src.getShape();
    int64_t row = shape.back();
    if (src.getNumElements() == 0)
      return rewriter.notifyMatchFailure(op, "empty");

    Location loc = op.getLoc();
    Type elem = src.getElementType();
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
    // One vector of `len` elements at column `col` of the row.
    auto copy = [&](Value col, int64_t len) {
      SmallVector<Value> at(indices);
      at.push_back(col);
      Value v = vector::LoadOp::create(
          rewriter, loc, VectorType::get({len}, elem), op.getSource(), at);
      vector::StoreOp::create(rewriter, loc, v, op.getTarget(), at);
    };
    int64_t chunks = row / kMaxChunk, rest = row % kMaxChunk;
    if (chunks > 1) {
      auto loop = scf::ForOp::create(
          rewriter, loc, zero,
          arith::ConstantIndexOp::create(rewriter, loc, chunks * kMaxChunk),
          arith::ConstantIndexOp::create(rewriter, loc, kMaxChunk));
      OpBuilder::InsertionGuard inner(rewriter);
      rewriter.setInsertionPointToStart(loop.getBody());
      copy(loop.getInductionVar(), kMaxChunk);
    } else if (chunks == 1) {
      copy(zero, kMaxChunk);
    }
    if (rest)
      copy(arith::ConstantIndexOp::create(rewriter, loc, chunks * kMaxChunk),
           rest);
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
