//===- LowerGatFused.cpp - single-pass attn.gat with online softmax ------===//
//
// Per destination node, one pass over its in-edges, edge-block edges at a
// time, with FlashAttention's online softmax kept in vector registers (per
// head max and sum, the H*C output row); nothing per edge is materialised.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/GatBuilders.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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

/// Builds the fused lowering of one attn.gat. Per destination node, the
/// online-softmax state lives in vector registers: the running max m and sum
/// l per head (vector<H>) and the unnormalised output acc (vector<H*C>, head
/// major). In-edges are taken `block` at a time: the block's scores, one max
/// and one rescale of acc per block, one exp per edge; invalid slots (past
/// the row's end, out-of-range sources, self loops that add_self_loops
/// replaces) get probability 0.
class GatFuser {
public:
  GatFuser(GatOp op, int64_t edgeBlock) : op(op), block(edgeBlock) {
    n = getShape(op.getX())[0];
    heads = getShape(op.getAttSrc())[0];
    ch = getShape(op.getAttSrc())[1];
    f = cast<RankedTensorType>(op.getX().getType()).getElementType();
    headVec = VectorType::get({heads}, f);
    rowVec = VectorType::get({heads * ch}, f);
  }

  Value build(OpBuilder &b) {
    Location loc = op.getLoc();
    proj = buildGatProjections(b, loc, op);
    zRows = buildCollapse(b, loc, proj.z3, {{0}, {1, 2}}); // N x H*C
    Value init = tensor::EmptyOp::create(b, loc, {n, heads * ch}, f);
    auto forall =
        scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
                              ValueRange{init}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forall.getBody());
      buildNode(b, loc, forall);
    }
    Value out3 = buildExpand(b, loc, forall.getResult(0), {n, heads, ch},
                             {{0}, {1, 2}});
    return buildGatCombine(b, loc, op, out3);
  }

private:
  Value index(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value splat(OpBuilder &b, Location loc, VectorType t, double v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(t, b.getFloatAttr(f, v)));
  }
  /// A row of `t`'s length from a rank-2 tensor at [row, 0].
  Value readRow(OpBuilder &b, Location loc, VectorType t, Value source,
                Value row) {
    Value pad = arith::ConstantOp::create(b, loc, b.getFloatAttr(f, 0.0));
    return vector::TransferReadOp::create(
        b, loc, t, source, ValueRange{row, index(b, loc, 0)}, pad,
        ArrayRef<bool>{true});
  }
  /// Each head's value repeated C times: vector<H> -> vector<H*C>.
  Value perHead(OpBuilder &b, Location loc, Value v) {
    SmallVector<int64_t> mask;
    for (int64_t h = 0; h < heads; ++h)
      mask.append(ch, h);
    return vector::ShuffleOp::create(b, loc, v, v, mask);
  }

  /// Source node of edge `e` and whether it is a real edge of the row.
  std::pair<Value, Value> edgeSource(OpBuilder &b, Location loc, Value e) {
    auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
      return arith::CmpIOp::create(b, loc, p, x, y).getResult();
    };
    Value inRow = cmp(arith::CmpIPredicate::slt, e, end);
    Value eSafe = arith::SelectOp::create(b, loc, inRow, e, begin);
    Value j = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        tensor::ExtractOp::create(b, loc, op.getColIdx(), eSafe));
    Value valid = arith::AndIOp::create(
        b, loc, inRow,
        arith::AndIOp::create(
            b, loc, cmp(arith::CmpIPredicate::sge, j, index(b, loc, 0)),
            cmp(arith::CmpIPredicate::slt, j, index(b, loc, n))));
    if (op.getAddSelfLoops())
      valid = arith::AndIOp::create(b, loc, valid,
                                    cmp(arith::CmpIPredicate::ne, j, node));
    return {arith::SelectOp::create(b, loc, valid, j, node), valid};
  }

  /// LeakyReLU(a_dst[i] + a_src[j]) per head, -inf where not `valid`.
  Value score(OpBuilder &b, Location loc, Value j, Value valid) {
    Value s = arith::AddFOp::create(b, loc, aDstNode,
                                    readRow(b, loc, headVec, proj.aSrc, j));
    Value slope = splat(b, loc, headVec, op.getNegativeSlope().convertToDouble());
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, s,
                                           splat(b, loc, headVec, 0.0));
    s = arith::SelectOp::create(b, loc, positive, s,
                                arith::MulFOp::create(b, loc, s, slope));
    Value negInf = splat(b, loc, headVec, -std::numeric_limits<double>::infinity());
    return arith::SelectOp::create(b, loc, valid, s, negInf);
  }

  struct State {
    Value m, l, acc;
  };

  /// One online-softmax step over edges with sources `js` (and validity):
  /// m' = max(m, max_k s_k), a = exp(m - m'), p_k = exp(s_k - m'),
  /// l' = a l + sum p_k, acc' = a acc + sum p_k z[j_k]. While m' = -inf (no
  /// valid edge yet) the exponent base is 0 instead, so a and p are 0, never
  /// exp(-inf - -inf).
  State step(OpBuilder &b, Location loc, ArrayRef<std::pair<Value, Value>> js,
             const State &state) {
    // All of the block's source rows first: their (random) loads are then in
    // flight together instead of one behind each exp.
    SmallVector<Value> rows;
    for (auto [j, valid] : js)
      rows.push_back(readRow(b, loc, rowVec, zRows, j));
    SmallVector<Value> scores;
    Value m = state.m;
    for (auto [j, valid] : js) {
      scores.push_back(score(b, loc, j, valid));
      m = arith::MaximumFOp::create(b, loc, m, scores.back());
    }
    Value negInf = splat(b, loc, headVec, -std::numeric_limits<double>::infinity());
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
    Value base = arith::SelectOp::create(b, loc, none, splat(b, loc, headVec, 0.0), m);
    Value a = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, state.m, base));
    Value l = arith::MulFOp::create(b, loc, a, state.l);
    Value acc = arith::MulFOp::create(b, loc, perHead(b, loc, a), state.acc);
    for (size_t k = 0; k < js.size(); ++k) {
      Value p = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, scores[k], base));
      l = arith::AddFOp::create(b, loc, l, p);
      acc = math::FmaOp::create(b, loc, perHead(b, loc, p), rows[k], acc);
    }
    return {m, l, acc};
  }

  /// The body of the parallel loop: one destination node.
  void buildNode(OpBuilder &b, Location loc, scf::ForallOp forall) {
    node = forall.getInductionVars()[0];
    auto rowPtr = [&](Value i) {
      return arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          tensor::ExtractOp::create(b, loc, op.getRowPtr(), ValueRange{i}));
    };
    begin = rowPtr(node);
    end = rowPtr(arith::AddIOp::create(b, loc, node, index(b, loc, 1)));
    aDstNode = readRow(b, loc, headVec, proj.aDst, node);
    Value blocks = arith::CeilDivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, end, begin), index(b, loc, block));

    State init{splat(b, loc, headVec, -std::numeric_limits<double>::infinity()),
               splat(b, loc, headVec, 0.0), splat(b, loc, rowVec, 0.0)};
    auto loop = scf::ForOp::create(
        b, loc, index(b, loc, 0), blocks, index(b, loc, 1),
        ValueRange{init.m, init.l, init.acc},
        [&](OpBuilder &lb, Location lloc, Value t, ValueRange args) {
          Value e0 = arith::AddIOp::create(
              lb, lloc, begin,
              arith::MulIOp::create(lb, lloc, t, index(lb, lloc, block)));
          SmallVector<std::pair<Value, Value>> js;
          for (int64_t k = 0; k < block; ++k)
            js.push_back(edgeSource(
                lb, lloc, arith::AddIOp::create(lb, lloc, e0, index(lb, lloc, k))));
          State next = step(lb, lloc, js, {args[0], args[1], args[2]});
          scf::YieldOp::create(lb, lloc, ValueRange{next.m, next.l, next.acc});
        });
    State state{loop.getResult(0), loop.getResult(1), loop.getResult(2)};
    if (op.getAddSelfLoops()) {
      Value yes = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      state = step(b, loc, {{node, yes}}, state);
    }
    // out = acc / l, and 0 for a node that saw no edge (l = 0).
    Value l = perHead(b, loc, state.l);
    Value zero = splat(b, loc, rowVec, 0.0);
    Value seen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zero);
    Value out = arith::SelectOp::create(
        b, loc, seen, arith::DivFOp::create(b, loc, state.acc, l), zero);

    Value dest = forall.getRegionIterArgs()[0];
    Value rowInit = tensor::EmptyOp::create(b, loc, {1, heads * ch}, f);
    Value row = vector::TransferWriteOp::create(
                    b, loc, out, rowInit,
                    ValueRange{index(b, loc, 0), index(b, loc, 0)},
                    ArrayRef<bool>{true})
                    .getResult();
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        b, loc, row, dest, ArrayRef<OpFoldResult>{node, b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(heads * ch)},
        SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));
  }

  GatOp op;
  int64_t block, n, heads, ch;
  Type f;
  VectorType headVec, rowVec;
  GatProjections proj;
  Value zRows;
  Value node, begin, end, aDstNode; // per node, inside the parallel loop
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
