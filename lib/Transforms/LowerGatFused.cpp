//===- LowerGatFused.cpp - single-pass attn.gat with online softmax ------===//
//
// Per destination node, one pass over its in-edges, edge-block edges at a
// time, with the online-softmax step shared with the tiled sdpa lowering;
// nothing per edge is materialised beyond one block.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/GatBuilders.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERGAT
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Builds the fused lowering of one attn.gat.
class GatFuser {
public:
  GatFuser(GatOp op, int64_t edgeBlock) : op(op), block(edgeBlock) {
    n = getShape(op.getX())[0];
    heads = getShape(op.getAttSrc())[0];
    ch = getShape(op.getAttSrc())[1];
    f = cast<RankedTensorType>(op.getX().getType()).getElementType();
  }

  Value build(OpBuilder &b) {
    Location loc = op.getLoc();
    proj = buildGatProjections(b, loc, op);
    Value init = tensor::EmptyOp::create(b, loc, {n, heads, ch}, f);
    auto forall =
        scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
                              ValueRange{init}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forall.getBody());
      buildNode(b, loc, forall);
    }
    return buildGatCombine(b, loc, op, forall.getResult(0));
  }

private:
  Value index(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value toIndex(OpBuilder &b, Location loc, Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate p, Value x,
            Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }

  /// A new `shape` tensor whose elements `fn(indices)` computes.
  Value buildIndexed(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                     llvm::function_ref<Value(OpBuilder &, Location)> fn) {
    return buildElementwise(
        b, loc, tensor::EmptyOp::create(b, loc, shape, f), ValueRange{}, {},
        [&](OpBuilder &nb, Location nloc, ValueRange) { return fn(nb, nloc); });
  }

  /// The source of edge slot `k` of the block starting at `e0`, and whether
  /// the slot holds a real edge (in the row, source in range, and not a self
  /// loop that add_self_loops replaces). Invalid slots read node 0.
  std::pair<Value, Value> edgeSource(OpBuilder &b, Location loc, Value e0,
                                     Value k) {
    Value e = arith::AddIOp::create(b, loc, e0, k);
    Value inRow = cmp(b, loc, arith::CmpIPredicate::slt, e, end);
    Value eSafe = arith::SelectOp::create(b, loc, inRow, e, begin);
    Value j = toIndex(b, loc,
                      tensor::ExtractOp::create(b, loc, op.getColIdx(), eSafe));
    Value valid = arith::AndIOp::create(
        b, loc, inRow,
        arith::AndIOp::create(
            b, loc, cmp(b, loc, arith::CmpIPredicate::sge, j, index(b, loc, 0)),
            cmp(b, loc, arith::CmpIPredicate::slt, j, index(b, loc, n))));
    if (op.getAddSelfLoops())
      valid = arith::AndIOp::create(
          b, loc, valid, cmp(b, loc, arith::CmpIPredicate::ne, j, node));
    return {arith::SelectOp::create(b, loc, valid, j, index(b, loc, 0)), valid};
  }

  /// Scores (H x K) and values (K x H x C) of K edges with sources given by
  /// `source(k) -> (j, valid)`, then one online-softmax step.
  template <typename SourceFn>
  OnlineSoftmaxState step(OpBuilder &b, Location loc, int64_t k,
                          SourceFn source, const OnlineSoftmaxState &state) {
    MLIRContext *ctx = b.getContext();
    Value negInf =
        buildFloatConstant(b, loc, f, -std::numeric_limits<double>::infinity());
    Value scores =
        buildIndexed(b, loc, {heads, k}, [&](OpBuilder &nb, Location nloc) {
          Value h = linalg::IndexOp::create(nb, nloc, 0);
          auto [j, valid] =
              source(nb, nloc, linalg::IndexOp::create(nb, nloc, 1));
          Value s = arith::AddFOp::create(
              nb, nloc,
              tensor::ExtractOp::create(nb, nloc, proj.aDst,
                                        ValueRange{node, h}),
              tensor::ExtractOp::create(nb, nloc, proj.aSrc, ValueRange{j, h}));
          return arith::SelectOp::create(
                     nb, nloc, valid, buildLeakyRelu(nb, nloc, op, s), negInf)
              .getResult();
        });
    Value values =
        buildIndexed(b, loc, {k, heads, ch}, [&](OpBuilder &nb, Location nloc) {
          auto [j, valid] =
              source(nb, nloc, linalg::IndexOp::create(nb, nloc, 0));
          (void)valid; // invalid slots have probability 0
          return tensor::ExtractOp::create(
                     nb, nloc, proj.z3,
                     ValueRange{j, linalg::IndexOp::create(nb, nloc, 1),
                                linalg::IndexOp::create(nb, nloc, 2)})
              .getResult();
        });
    // acc[h, c] += P[h, k] * z[j_k, h, c]: dims (h, c, k).
    return buildOnlineSoftmaxStep(b, loc, scores, values, state,
                                  dimsMap(ctx, 3, {2, 0, 1}));
  }

  /// The body of the parallel loop: one destination node.
  void buildNode(OpBuilder &b, Location loc, scf::ForallOp forall) {
    node = forall.getInductionVars()[0];
    begin = toIndex(
        b, loc,
        tensor::ExtractOp::create(b, loc, op.getRowPtr(), ValueRange{node}));
    end = toIndex(
        b, loc,
        tensor::ExtractOp::create(
            b, loc, op.getRowPtr(),
            ValueRange{arith::AddIOp::create(b, loc, node, index(b, loc, 1))}));
    Value blocks = arith::CeilDivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, end, begin),
        index(b, loc, block));

    OnlineSoftmaxState init = buildOnlineSoftmaxInit(b, loc, heads, ch, f);
    auto loop = scf::ForOp::create(
        b, loc, index(b, loc, 0), blocks, index(b, loc, 1),
        ValueRange{init.rowMax, init.rowSum, init.acc},
        [&](OpBuilder &lb, Location lloc, Value t, ValueRange args) {
          Value e0 = arith::AddIOp::create(
              lb, lloc, begin,
              arith::MulIOp::create(lb, lloc, t, index(lb, lloc, block)));
          OnlineSoftmaxState next =
              step(lb, lloc, block,
                   [&](OpBuilder &sb, Location sloc, Value k) {
                     return edgeSource(sb, sloc, e0, k);
                   },
                   {args[0], args[1], args[2]});
          scf::YieldOp::create(lb, lloc,
                               ValueRange{next.rowMax, next.rowSum, next.acc});
        });
    OnlineSoftmaxState state{loop.getResult(0), loop.getResult(1),
                             loop.getResult(2)};
    if (op.getAddSelfLoops()) {
      Value yes = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      state = step(
          b, loc, 1,
          [&](OpBuilder &, Location, Value) { return std::pair(node, yes); },
          state);
    }
    AttentionRows rows = buildOnlineSoftmaxFinish(b, loc, state);

    Value out = forall.getRegionIterArgs()[0];
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        b, loc, rows.output, out,
        ArrayRef<OpFoldResult>{node, b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(heads),
                               b.getIndexAttr(ch)},
        SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
  }

  GatOp op;
  int64_t block, n, heads, ch;
  Type f;
  GatProjections proj;
  Value node, begin, end; // per node, inside the parallel loop
};

struct LowerGatFused : OpRewritePattern<GatOp> {
  LowerGatFused(MLIRContext *ctx, int64_t edgeBlock)
      : OpRewritePattern(ctx), edgeBlock(edgeBlock) {}

  LogicalResult matchAndRewrite(GatOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticTensorOperands(op))
      return rewriter.notifyMatchFailure(op,
                                         "dynamic shapes are not supported");
    rewriter.replaceOp(op, GatFuser(op, edgeBlock).build(rewriter));
    return success();
  }

  int64_t edgeBlock;
};

struct AttnLowerGat : attn::impl::AttnLowerGatBase<AttnLowerGat> {
  using AttnLowerGatBase::AttnLowerGatBase;

  void runOnOperation() override {
    if (edgeBlock < 1) {
      getOperation()->emitError()
          << "attn-lower-gat: edge-block must be >= 1, got "
          << static_cast<int64_t>(edgeBlock);
      return signalPassFailure();
    }
    if (failed(requireStaticShapes(
            getOperation(), [](Operation *op) { return isa<GatOp>(op); },
            "cannot be lowered: attn-lower-gat needs static shapes")))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerGatFused>(&getContext(), edgeBlock);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
