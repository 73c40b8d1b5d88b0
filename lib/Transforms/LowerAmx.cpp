//===- LowerAmx.cpp - bf16 pair contractions as AMX tile products ---------===//
//
// attn-tile's bf16 mode packs K^T and V once per head in the pair layout
// (`[k, n, 2]`: reduction pairs innermost), which is also AMX's layout for
// the right-hand tile of `tdpbf16ps` (Intel calls it VNNI). On a target with
// AMX-BF16 attn-vectorize leaves those contractions (isAmxContraction) as
// linalg ops; after bufferization this pass rewrites each into loops over
// blocks of 16 x 16 f32 accumulator tiles, with the reduction unrolled into
// `amx.tile_load` / `amx.tile_mulf` steps of 32 bf16 factors (16 pairs).
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "lib/Target/CpuTarget.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERAMX
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// Rows and f32 columns of an accumulator tile; bf16 factors per tile row.
constexpr int64_t kTileRows = 16;
constexpr int64_t kTileCols = 16;
constexpr int64_t kTilePairs = 16;

} // namespace

/// Whether AMX tiles cover an m x n accumulator over `pairs` bf16 pairs.
static bool amxTakesShape(int64_t m, int64_t n, int64_t pairs) {
  return m % kTileRows == 0 && n % kTileCols == 0 && pairs % kTilePairs == 0;
}

bool attn::amxTakesAttentionTiles(int64_t blockQ, int64_t blockK, int64_t e,
                                  int64_t ev) {
  // Q K^T: blockQ x blockK over e / 2 pairs; P V: blockQ x ev over blockK / 2.
  return e % 2 == 0 && blockK % 2 == 0 &&
         amxTakesShape(blockQ, blockK, e / 2) &&
         amxTakesShape(blockQ, ev, blockK / 2);
}

bool attn::isPosZeroFill(linalg::FillOp fill) {
  FloatAttr value;
  return matchPattern(fill.getDpsInputs()[0], m_Constant(&value)) &&
         value.getValue().isPosZero();
}

bool attn::isAmxContraction(Operation *operation) {
  auto op = dyn_cast<linalg::GenericOp>(operation);
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 4)
    return false;
  auto elementType = [](Value v) { return getElementTypeOrSelf(v.getType()); };
  if (!elementType(op.getDpsInputs()[0]).isBF16() ||
      !elementType(op.getDpsInputs()[1]).isBF16() ||
      !elementType(op.getDpsInits()[0]).isF32())
    return false;
  // (m, n, k, pair): A[m, k, pair] * B[k, n, pair] summed into C[m, n].
  MLIRContext *ctx = op.getContext();
  AffineExpr m, n, k, p;
  bindDims(ctx, m, n, k, p);
  SmallVector<AffineMap> expected = {
      AffineMap::get(4, 0, {m, k, p}, ctx), AffineMap::get(4, 0, {k, n, p}, ctx),
      AffineMap::get(4, 0, {m, n}, ctx)};
  if (op.getIndexingMapsArray() != expected)
    return false;
  using utils::IteratorType;
  if (op.getIteratorTypesArray() !=
      SmallVector<IteratorType>{IteratorType::parallel, IteratorType::parallel,
                                IteratorType::reduction,
                                IteratorType::reduction})
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges) ||
      !amxTakesShape(ranges[0], ranges[1], ranges[2]) || ranges[3] != 2)
    return false;
  // The body: out + extf(a) * extf(b), nothing else.
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 5)
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add.getLhs() != body.getArgument(2))
    return false;
  auto mul = add.getRhs().getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  auto extended = [&](Value v, unsigned arg) {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    return ext && ext.getIn() == body.getArgument(arg);
  };
  return extended(mul.getLhs(), 0) && extended(mul.getRhs(), 1);
}

namespace {

struct ContractionToAmxTiles : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Whether a factor of `op` may be a view of `c` (through view-like ops
  /// to the same base): then the fill or copy before it is what the factor
  /// reads, and must stay.
  static bool readsFrom(linalg::GenericOp op, Value c) {
    auto base = [](Value v) {
      while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
        v = view.getViewSource();
      return v;
    };
    Value cBase = base(c);
    return llvm::any_of(op.getDpsInputs(),
                        [&](Value input) { return base(input) == cBase; });
  }

  /// The linalg.fill of +0.0 into `c` right before `op` (nothing between
  /// them), if there is one.
  static linalg::FillOp zeroFillOf(linalg::GenericOp op, Value c) {
    auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
    if (!fill || !fill.hasPureBufferSemantics() ||
        fill.getDpsInits()[0] != c || readsFrom(op, c) ||
        !attn::isPosZeroFill(fill))
      return nullptr;
    return fill;
  }

  /// The memref.copy into `c` right before `op` (nothing between them) whose
  /// source the accumulator tiles can be loaded from instead: `c` a buffer
  /// of its own (a memref.alloc, so no alias of the source), the source of
  /// the same shape with unit inner stride. Bufferization leaves such a copy
  /// where one buffer initialises every tile's accumulator (attn-vectorize
  /// gives a zero accumulator a fill of its own, which the case above takes).
  static memref::CopyOp initialCopyOf(linalg::GenericOp op, Value c) {
    auto copy = dyn_cast_or_null<memref::CopyOp>(op->getPrevNode());
    if (!copy || copy.getTarget() != c ||
        !c.getDefiningOp<memref::AllocOp>() || readsFrom(op, c))
      return nullptr;
    auto sourceType = dyn_cast<MemRefType>(copy.getSource().getType());
    if (!sourceType ||
        sourceType.getShape() != cast<MemRefType>(c.getType()).getShape() ||
        !attn::hasUnitInnerStride(sourceType))
      return nullptr;
    return copy;
  }

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics() || !attn::isAmxContraction(op))
      return rewriter.notifyMatchFailure(op, "not a bf16 pair contraction");
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
          c = op.getDpsInits()[0];
    // Each factor row-major with its pairs: [m, k, 2] as [m, 2k].
    SmallVector<ReassociationIndices> pairsInRow = {{0}, {1, 2}};
    auto aType = cast<MemRefType>(a.getType());
    auto bType = cast<MemRefType>(b.getType());
    auto rowsContiguous = [&](MemRefType type) {
      return memref::CollapseShapeOp::isGuaranteedCollapsible(type,
                                                              pairsInRow) &&
             attn::hasUnitInnerStride(
                 memref::CollapseShapeOp::computeCollapsedType(
                 type, pairsInRow));
    };
    if (!rowsContiguous(aType) || !rowsContiguous(bType) ||
        !attn::hasUnitInnerStride(cast<MemRefType>(c.getType())))
      return rewriter.notifyMatchFailure(op, "tile rows are not contiguous");

    // Where the accumulator tiles start: zero (tilezero) when C was just
    // filled with +0, the copy's source when C was just copied from one;
    // either way the fill or copy goes away (the contraction writes every
    // element of C). Else C itself.
    Value initial = c;
    linalg::FillOp zeroFill = zeroFillOf(op, c);
    if (zeroFill) {
      rewriter.eraseOp(zeroFill);
    } else if (memref::CopyOp copy = initialCopyOf(op, c)) {
      initial = copy.getSource();
      rewriter.eraseOp(copy);
    }

    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t rows = ranges[0], cols = ranges[1], pairs = ranges[2];
    // Blocks of up to 2 x 2 accumulator tiles: with their 2 + 2 factor
    // tiles, the eight tile registers.
    int64_t blockRows = rows % (2 * kTileRows) == 0 ? 2 : 1;
    int64_t blockCols = cols % (2 * kTileCols) == 0 ? 2 : 1;

    Location loc = op.getLoc();
    Type bf16 = rewriter.getBF16Type(), f32 = rewriter.getF32Type();
    auto factorTile = amx::TileType::get({kTileRows, 2 * kTilePairs}, bf16);
    auto accTile = amx::TileType::get({kTileRows, kTileCols}, f32);
    Value a2 = memref::CollapseShapeOp::create(rewriter, loc, a, pairsInRow);
    Value b2 = memref::CollapseShapeOp::create(rewriter, loc, b, pairsInRow);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    auto rowLoop = scf::ForOp::create(rewriter, loc, index(0), index(rows),
                                      index(blockRows * kTileRows));
    rewriter.setInsertionPointToStart(rowLoop.getBody());
    auto colLoop = scf::ForOp::create(rewriter, loc, index(0), index(cols),
                                      index(blockCols * kTileCols));
    rewriter.setInsertionPointToStart(colLoop.getBody());
    Value row0 = rowLoop.getInductionVar(), col0 = colLoop.getInductionVar();
    auto plus = [&](Value v, int64_t offset) -> Value {
      if (offset == 0)
        return v;
      return arith::AddIOp::create(rewriter, loc, v, index(offset));
    };
    SmallVector<Value> rowAt, colAt, factorColAt;
    for (int64_t i = 0; i < blockRows; ++i)
      rowAt.push_back(plus(row0, i * kTileRows));
    for (int64_t j = 0; j < blockCols; ++j) {
      colAt.push_back(plus(col0, j * kTileCols));
      // B's row holds the pairs of its columns: column n at 2n, 2n + 1.
      factorColAt.push_back(arith::MulIOp::create(rewriter, loc, colAt.back(),
                                                  index(2)));
    }
    SmallVector<Value> acc;
    for (int64_t i = 0; i < blockRows; ++i)
      for (int64_t j = 0; j < blockCols; ++j)
        acc.push_back(zeroFill ? amx::TileZeroOp::create(rewriter, loc, accTile)
                                     .getResult()
                               : amx::TileLoadOp::create(
                                     rewriter, loc, accTile, initial,
                                     ValueRange{rowAt[i], colAt[j]})
                                     .getResult());
    for (int64_t k = 0; k < pairs; k += kTilePairs) {
      SmallVector<Value> lhs, rhs;
      for (int64_t i = 0; i < blockRows; ++i)
        lhs.push_back(amx::TileLoadOp::create(
            rewriter, loc, factorTile, a2, ValueRange{rowAt[i], index(2 * k)}));
      for (int64_t j = 0; j < blockCols; ++j)
        rhs.push_back(amx::TileLoadOp::create(
            rewriter, loc, factorTile, b2, ValueRange{index(k), factorColAt[j]}));
      for (int64_t i = 0; i < blockRows; ++i)
        for (int64_t j = 0; j < blockCols; ++j) {
          Value &t = acc[i * blockCols + j];
          t = amx::TileMulFOp::create(rewriter, loc, accTile, lhs[i], rhs[j],
                                      t);
        }
    }
    for (int64_t i = 0; i < blockRows; ++i)
      for (int64_t j = 0; j < blockCols; ++j)
        amx::TileStoreOp::create(rewriter, loc, c,
                                 ValueRange{rowAt[i], colAt[j]},
                                 acc[i * blockCols + j]);
    rewriter.eraseOp(op);
    return success();
  }
};

struct AttnLowerAmx : attn::impl::AttnLowerAmxBase<AttnLowerAmx> {
  void runOnOperation() override {
    if (!attn::getCpuTarget(getOperation()).hasAmxBf16())
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<ContractionToAmxTiles>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
