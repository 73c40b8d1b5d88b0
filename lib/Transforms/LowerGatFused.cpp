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
#include "lib/Transforms/OptionBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// Interleaved accumulator chains of a GAT edge block.
constexpr size_t kPartialSums = 4;

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
    buildProjection(b, loc);
    outDim = op.getCombine() == HeadCombine::concat ? heads * ch : ch;
    // A read-only view of the projection for software prefetches of the next
    // block's source rows (random gathers are latency-bound without them).
    nnz = getShape(op.getColIdx())[0];
    if (nnz > 0)
      projBuffer = bufferization::ToBufferOp::create(
          b, loc, MemRefType::get({n, width}, f), proj, b.getUnitAttr());
    if (Value bias = op.getBias()) {
      Value pad = arith::ConstantOp::create(b, loc, b.getFloatAttr(f, 0.0));
      biasVec = vector::TransferReadOp::create(
          b, loc, VectorType::get({outDim}, f), bias,
          ValueRange{buildIndexConstant(b, loc, 0)}, pad, ArrayRef<bool>{true});
    }
    Value init = tensor::EmptyOp::create(b, loc, {n, outDim}, f);
    auto forall =
        scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
                              ValueRange{init}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forall.getBody());
      buildNode(b, loc, forall);
    }
    return forall.getResult(0);
  }

private:
  /// One contraction gives, per node, the row [z | a_src | a_dst] of width
  /// H*C + 2H: x times [W^T | W^T A_src | W^T A_dst], where A_src (H*C x H)
  /// holds att_src[h] in rows h*C..h*C+C-1 of column h. The attention logits
  /// ride along with z (a gathered source row brings both), and x is read once.
  void buildProjection(OpBuilder &b, Location loc) {
    MLIRContext *ctx = b.getContext();
    int64_t in = getShape(op.getX())[1];
    width = heads * ch + 2 * heads;
    Value wt = buildTranspose(b, loc, op.getWeight(), {1, 0}); // F x H*C
    Value w3 =
        buildExpand(b, loc, op.getWeight(), {heads, ch, in}, {{0, 1}, {2}});
    // W^T A[f, h] = sum_c W[h*C + c, f] * att[h, c]; dims (f, h, c).
    auto fold = [&](Value att) {
      return buildContraction(b, loc, w3, dimsMap(ctx, 3, {1, 2, 0}), att,
                              dimsMap(ctx, 3, {1, 2}), {in, heads},
                              dimsMap(ctx, 3, {0, 1}));
    };
    Value cat = tensor::EmptyOp::create(b, loc, {in, width}, f);
    int64_t offset = 0;
    for (Value part : {wt, fold(op.getAttSrc()), fold(op.getAttDst())}) {
      int64_t cols = getShape(part)[1];
      cat = tensor::InsertSliceOp::create(
          b, loc, part, cat,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(in), b.getIndexAttr(cols)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
      offset += cols;
    }
    proj = buildMatmul(b, loc, op.getX(), cat, /*bias=*/Value());
  }

private:
  Value splat(OpBuilder &b, Location loc, VectorType t, double v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(t, b.getFloatAttr(f, v)));
  }
  /// `t`'s length of elements of the projection at [row, column].
  Value readRow(OpBuilder &b, Location loc, VectorType t, Value row,
                int64_t column) {
    Value pad = arith::ConstantOp::create(b, loc, b.getFloatAttr(f, 0.0));
    return vector::TransferReadOp::create(
        b, loc, t, proj, ValueRange{row, buildIndexConstant(b, loc, column)},
        pad, ArrayRef<bool>{true});
  }
  /// Each head's value repeated C times: vector<H> -> vector<H*C>.
  Value perHead(OpBuilder &b, Location loc, Value v) {
    SmallVector<int64_t> mask;
    for (int64_t h = 0; h < heads; ++h)
      mask.append(ch, h);
    return vector::ShuffleOp::create(b, loc, v, v, mask);
  }

  /// Prefetches the z rows of the sources of edges [e0, e0 + block) (by
  /// flat edge index, clamped to the edge list; they may belong to the next
  /// nodes, which is where the walk goes next).
  void prefetchRows(OpBuilder &b, Location loc, Value e0) {
    if (!projBuffer)
      return;
    int64_t rowBytes = (heads * ch + heads) * 4, lines = (rowBytes + 63) / 64;
    for (int64_t k = 0; k < block; ++k) {
      Value e = arith::MinSIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, e0, buildIndexConstant(b, loc, k)),
          buildIndexConstant(b, loc, nnz - 1));
      Value j = arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          tensor::ExtractOp::create(b, loc, op.getColIdx(), e));
      // Keep the address in bounds for malformed graphs.
      j = arith::MinSIOp::create(
          b, loc,
          arith::MaxSIOp::create(b, loc, j, buildIndexConstant(b, loc, 0)),
          buildIndexConstant(b, loc, n - 1));
      for (int64_t line = 0; line < lines; ++line)
        memref::PrefetchOp::create(
            b, loc, projBuffer,
            ValueRange{j, buildIndexConstant(b, loc, line * 16)},
            b.getBoolAttr(false), /*localityHint=*/b.getI32IntegerAttr(1),
            b.getBoolAttr(true));
    }
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
            b, loc,
            cmp(arith::CmpIPredicate::sge, j, buildIndexConstant(b, loc, 0)),
            cmp(arith::CmpIPredicate::slt, j, buildIndexConstant(b, loc, n))));
    if (op.getAddSelfLoops())
      valid = arith::AndIOp::create(b, loc, valid,
                                    cmp(arith::CmpIPredicate::ne, j, node));
    return {arith::SelectOp::create(b, loc, valid, j, node), valid};
  }

  /// LeakyReLU(a_dst[i] + a_src[j]) per head, -inf where not `valid`.
  Value score(OpBuilder &b, Location loc, Value j, Value valid) {
    Value s = arith::AddFOp::create(b, loc, aDstNode,
                                    readRow(b, loc, headVec, j, heads * ch));
    Value slope =
        splat(b, loc, headVec, op.getNegativeSlope().convertToDouble());
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, s,
                                           splat(b, loc, headVec, 0.0));
    s = arith::SelectOp::create(b, loc, positive, s,
                                arith::MulFOp::create(b, loc, s, slope));
    Value negInf =
        splat(b, loc, headVec, -std::numeric_limits<double>::infinity());
    return arith::SelectOp::create(b, loc, valid, s, negInf);
  }

  struct State {
    Value m, l, acc;
  };

  /// `values` combined pairwise with CombineOp (depth log2 n).
  template <typename CombineOp>
  Value treeReduce(OpBuilder &b, Location loc, ArrayRef<Value> values,
                   arith::FastMathFlags flags = arith::FastMathFlags::none) {
    SmallVector<Value> level(values);
    while (level.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2)
        next.push_back(
            CombineOp::create(b, loc, level[i], level[i + 1], flags));
      if (level.size() % 2)
        next.push_back(level.back());
      level = std::move(next);
    }
    return level.front();
  }

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
      rows.push_back(readRow(b, loc, rowVec, j, 0));
    // Max, sum and weighted rows of the block are reduced as trees and the
    // rows in kPartialSums interleaved chains: one chain through all of the
    // block's edges made the step latency-bound (16 dependent max, add and
    // FMA steps per block).
    SmallVector<Value> scores;
    for (auto [j, valid] : js)
      scores.push_back(score(b, loc, j, valid));
    // maxnum with nnan (one vmaxps): the max only stabilises exp, and a NaN
    // score still reaches the output through exp(NaN - m').
    Value m = arith::MaxNumFOp::create(
        b, loc, state.m,
        treeReduce<arith::MaxNumFOp>(b, loc, scores,
                                     arith::FastMathFlags::nnan),
        arith::FastMathFlags::nnan);
    Value negInf =
        splat(b, loc, headVec, -std::numeric_limits<double>::infinity());
    Value none =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
    Value base =
        arith::SelectOp::create(b, loc, none, splat(b, loc, headVec, 0.0), m);
    Value a = math::ExpOp::create(b, loc,
                                  arith::SubFOp::create(b, loc, state.m, base));
    SmallVector<Value> probs;
    for (Value s : scores)
      probs.push_back(
          math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, s, base)));
    Value l = math::FmaOp::create(b, loc, a, state.l,
                                  treeReduce<arith::AddFOp>(b, loc, probs));
    SmallVector<Value> partial;
    for (size_t k = 0; k < probs.size(); ++k) {
      Value p = perHead(b, loc, probs[k]);
      if (k < kPartialSums)
        partial.push_back(arith::MulFOp::create(b, loc, p, rows[k]));
      else
        partial[k % kPartialSums] =
            math::FmaOp::create(b, loc, p, rows[k], partial[k % kPartialSums]);
    }
    Value acc = math::FmaOp::create(b, loc, perHead(b, loc, a), state.acc,
                                    treeReduce<arith::AddFOp>(b, loc, partial));
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
    end = rowPtr(
        arith::AddIOp::create(b, loc, node, buildIndexConstant(b, loc, 1)));
    aDstNode = readRow(b, loc, headVec, node, heads * ch + heads);
    Value blocks = arith::CeilDivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, end, begin),
        buildIndexConstant(b, loc, block));

    // The softmax starts empty (m = -inf, l = 0, acc = 0), or with the self
    // loop that add_self_loops adds already taken: m = its score, l = 1,
    // acc = z[i] (a whole online-softmax step less per node).
    State init{splat(b, loc, headVec, -std::numeric_limits<double>::infinity()),
               splat(b, loc, headVec, 0.0), splat(b, loc, rowVec, 0.0)};
    if (op.getAddSelfLoops()) {
      Value yes = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      init = {score(b, loc, node, yes), splat(b, loc, headVec, 1.0),
              readRow(b, loc, rowVec, node, 0)};
    }
    auto loop = scf::ForOp::create(
        b, loc, buildIndexConstant(b, loc, 0), blocks,
        buildIndexConstant(b, loc, 1), ValueRange{init.m, init.l, init.acc},
        [&](OpBuilder &lb, Location lloc, Value t, ValueRange args) {
          Value e0 = arith::AddIOp::create(
              lb, lloc, begin,
              arith::MulIOp::create(lb, lloc, t,
                                    buildIndexConstant(lb, lloc, block)));
          prefetchRows(lb, lloc,
                       arith::AddIOp::create(
                           lb, lloc, e0, buildIndexConstant(lb, lloc, block)));
          SmallVector<std::pair<Value, Value>> js;
          for (int64_t k = 0; k < block; ++k)
            js.push_back(
                edgeSource(lb, lloc,
                           arith::AddIOp::create(
                               lb, lloc, e0, buildIndexConstant(lb, lloc, k))));
          State next = step(lb, lloc, js, {args[0], args[1], args[2]});
          scf::YieldOp::create(lb, lloc, ValueRange{next.m, next.l, next.acc});
        });
    State state{loop.getResult(0), loop.getResult(1), loop.getResult(2)};
    // out = acc / l, and 0 for a node that saw no edge (l = 0); heads
    // concatenated or averaged, plus bias, still in registers.
    // One division per head (vector<H>), then a multiply per channel.
    Value inv = perHead(
        b, loc,
        arith::DivFOp::create(b, loc, splat(b, loc, headVec, 1.0), state.l));
    Value zero = splat(b, loc, rowVec, 0.0);
    Value seen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                       perHead(b, loc, state.l), zero);
    Value out = arith::SelectOp::create(
        b, loc, seen, arith::MulFOp::create(b, loc, state.acc, inv), zero);
    if (op.getCombine() == HeadCombine::mean) {
      Value sum;
      for (int64_t h = 0; h < heads; ++h) {
        Value part = vector::ExtractStridedSliceOp::create(
            b, loc, out, ArrayRef<int64_t>{h * ch}, ArrayRef<int64_t>{ch},
            ArrayRef<int64_t>{1});
        sum = sum ? arith::AddFOp::create(b, loc, sum, part).getResult() : part;
      }
      out = arith::MulFOp::create(b, loc, sum,
                                  splat(b, loc, VectorType::get({ch}, f),
                                        1.0 / static_cast<double>(heads)));
    }
    if (biasVec)
      out = arith::AddFOp::create(b, loc, out, biasVec);

    Value dest = forall.getRegionIterArgs()[0];
    Value rowInit = tensor::EmptyOp::create(b, loc, {1, outDim}, f);
    Value row = vector::TransferWriteOp::create(
                    b, loc, out, rowInit,
                    ValueRange{buildIndexConstant(b, loc, 0),
                               buildIndexConstant(b, loc, 0)},
                    ArrayRef<bool>{true})
                    .getResult();
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        b, loc, row, dest, ArrayRef<OpFoldResult>{node, b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(outDim)},
        SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));
  }

  GatOp op;
  int64_t block, n, heads, ch;
  Type f;
  VectorType headVec, rowVec;
  Value proj, projBuffer, biasVec;
  int64_t width = 0, outDim = 0, nnz = 0;
  Value node, begin, end, aDstNode; // per node, inside the parallel loop
};

/// The widest head-major row (H*C elements) the fused lowering keeps in
/// registers.
constexpr int64_t kMaxFusedWidth = 1024;

struct LowerGatFused : OpRewritePattern<GatOp> {
  LowerGatFused(MLIRContext *ctx, int64_t edgeBlock)
      : OpRewritePattern(ctx), edgeBlock(edgeBlock) {}

  LogicalResult matchAndRewrite(GatOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticTensorOperands(op))
      return rewriter.notifyMatchFailure(op,
                                         "dynamic shapes are not supported");
    // The node's state is one vector<H*C>: past kMaxFusedWidth elements it
    // is no register row any more (and LLVM's time to legalise it grows
    // with it); the unfused lowering takes those layers.
    // Per-edge coefficients are never materialised here: the unfused
    // lowering returns them (and takes edge attributes, bipartite layers).
    if (op.needsUnfusedLowering())
      return rewriter.notifyMatchFailure(
          op, "returns per-edge alpha, has edge attributes or is bipartite");
    ArrayRef<int64_t> att = getShape(op.getAttSrc());
    if (att[0] * att[1] > kMaxFusedWidth)
      return rewriter.notifyMatchFailure(op, "H*C too wide for the fused row");
    rewriter.replaceOp(op, GatFuser(op, edgeBlock).build(rewriter));
    return success();
  }

  int64_t edgeBlock;
};

struct AttnLowerGat : attn::impl::AttnLowerGatBase<AttnLowerGat> {
  using AttnLowerGatBase::AttnLowerGatBase;

  void runOnOperation() override {
    if (failed(checkOptionRange(getOperation(), "attn-lower-gat",
                                "edge-block", edgeBlock, 1, kMaxEdgeBlock)))
      return signalPassFailure();
    if (failed(requireStaticShapes(
            getOperation(), [](Operation *op) { return isa<GatOp, GatV2Op>(op); },
            "cannot be lowered: attn-lower-gat needs static shapes")))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateWidenPrecisionPatterns(patterns);
    patterns.add<LowerGatFused>(&getContext(), edgeBlock);
    populateLowerGatUnfusedPatterns(patterns, /*benefit=*/0);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
