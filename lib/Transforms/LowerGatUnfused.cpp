//===- LowerGatUnfused.cpp - attn.gat as SDDMM, edge softmax, SpMM -------===//
//
// The DGL/PyG structure with its per-edge tensors materialised: the
// baseline of the fused lowering and an O(E) second path.
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
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERGATUNFUSED
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

class GatUnfuser {
public:
  explicit GatUnfuser(GatLayer layer, GatV2Op v2 = nullptr)
      : op(layer), v2(v2) {
    n = layer.n;
    nSrc = layer.nSrc;
    loops = layer.loops;
    heads = layer.heads;
    ch = layer.ch;
    nnz = getShape(layer.colIdx)[0];
    edges = nnz + loops;
    f = layer.elemType;
  }

  /// The op's results: the output, and alpha (E' x H) when it has one.
  SmallVector<Value> build(OpBuilder &b) {
    Location loc = op.op->getLoc();
    if (v2) {
      // GATv2: both ends projected; the score needs them per edge.
      // A bipartite layer projects its sources x and its destinations x_dst.
      auto project = [&](Value x, Value w, Value bias) {
        Value z = buildMatmul(b, loc, x, buildTranspose(b, loc, w, {1, 0}),
                              bias);
        return buildExpand(b, loc, z, {getShape(x)[0], heads, ch},
                           {{0}, {1, 2}});
      };
      proj.z3 = project(v2.getX(), v2.getWeightSrc(), v2.getBiasSrc());
      zDst = project(v2.getXDst() ? v2.getXDst() : v2.getX(),
                     v2.getWeightDst(), v2.getBiasDst());
    } else {
      proj = buildGatProjections(b, loc, cast<GatOp>(op.op));
    }
    destinations = buildDestinations(b, loc);
    if (op.edgeAttr)
      buildEdgeTerms(b, loc);
    Value scores = v2 ? buildScoresV2(b, loc) : buildScores(b, loc); // E' x H
    auto [rowMax, rowSum] = buildEdgeSoftmax(b, loc, scores);
    Value alpha = buildCoefficients(b, loc, scores, rowMax, rowSum);
    SmallVector<Value> results{
        buildGatCombine(b, loc, op, buildAggregation(b, loc, alpha))};
    if (op.alpha)
      results.push_back(alpha);
    return results;
  }

private:
  Value negInf(OpBuilder &b, Location loc) {
    return buildFloatConstant(b, loc, f,
                              -std::numeric_limits<double>::infinity());
  }

  /// dst[e] for the CSR's edges: the row that holds e.
  Value buildDestinations(OpBuilder &b, Location loc) {
    Value init = tensor::EmptyOp::create(b, loc, {nnz}, b.getIndexType());
    auto rows = scf::ForOp::create(
        b, loc, buildIndexConstant(b, loc, 0), buildIndexConstant(b, loc, n),
        buildIndexConstant(b, loc, 1), ValueRange{init},
        [&](OpBuilder &rb, Location rloc, Value i, ValueRange rowArgs) {
          auto [begin, end] = row(rb, rloc, i);
          auto fill = scf::ForOp::create(
              rb, rloc, begin, end, buildIndexConstant(rb, rloc, 1), rowArgs,
              [&](OpBuilder &eb, Location eloc, Value e, ValueRange args) {
                scf::YieldOp::create(
                    eb, eloc,
                    tensor::InsertOp::create(eb, eloc, i, args[0], e)
                        .getResult());
              });
          scf::YieldOp::create(rb, rloc, fill.getResults());
        });
    return rows.getResult(0);
  }

  /// An scf.forall over the n destination nodes: `body(i)` computes node
  /// i's row of each result (shapes `rows`), inserted as row i of an
  /// n x rows[k] tensor.
  SmallVector<Value> perNodeForall(
      OpBuilder &b, Location loc, ArrayRef<SmallVector<int64_t, 2>> rows,
      llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, Value)>
          body) {
    SmallVector<Value> inits;
    for (ArrayRef<int64_t> r : rows) {
      SmallVector<int64_t> shape{n};
      shape.append(r.begin(), r.end());
      inits.push_back(tensor::EmptyOp::create(b, loc, shape, f));
    }
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(n)}, inits, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value i = forall.getInductionVars()[0];
    SmallVector<Value> values = body(b, loc, i);
    ValueRange outs = forall.getRegionIterArgs();
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    for (auto [k, r] : llvm::enumerate(rows)) {
      SmallVector<OpFoldResult> offsets(r.size() + 1, b.getIndexAttr(0)),
          sizes{b.getIndexAttr(1)}, strides(r.size() + 1, b.getIndexAttr(1));
      offsets[0] = i;
      for (int64_t d : r)
        sizes.push_back(b.getIndexAttr(d));
      tensor::ParallelInsertSliceOp::create(b, loc, values[k], outs[k], offsets,
                                            sizes, strides);
    }
    return SmallVector<Value>(forall.getResults());
  }

  std::pair<Value, Value> row(OpBuilder &b, Location loc, Value i) {
    Value next =
        arith::AddIOp::create(b, loc, i, buildIndexConstant(b, loc, 1));
    return {buildIndexCast(b, loc,
                           tensor::ExtractOp::create(b, loc, op.rowPtr,
                                                     ValueRange{i})),
            buildIndexCast(b, loc,
                           tensor::ExtractOp::create(b, loc, op.rowPtr,
                                                     ValueRange{next}))};
  }

  /// (src, dst, valid) of edge e: CSR edges first, then one self loop per
  /// node that is both source and destination (e = nnz + i, i < loops) with
  /// add_self_loops, which also drops the CSR's own self loops. Invalid
  /// edges (a source outside [0, nSrc)) read node 0.
  std::tuple<Value, Value, Value> endpoints(OpBuilder &b, Location loc,
                                            Value e) {
    Value cNnz = buildIndexConstant(b, loc, nnz);
    Value isCsr =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, e, cNnz);
    Value eCsr = arith::SelectOp::create(b, loc, isCsr, e,
                                         buildIndexConstant(b, loc, 0));
    Value loop = arith::SubIOp::create(b, loc, e, cNnz);
    Value src = nnz ? arith::SelectOp::create(
                          b, loc, isCsr,
                          buildIndexCast(b, loc,
                                         tensor::ExtractOp::create(
                                             b, loc, op.colIdx, eCsr)),
                          loop)
                          .getResult()
                    : loop;
    Value dst =
        nnz ? arith::SelectOp::create(
                  b, loc, isCsr,
                  tensor::ExtractOp::create(b, loc, destinations, eCsr), loop)
                  .getResult()
            : loop;
    auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
      return arith::CmpIOp::create(b, loc, p, x, y).getResult();
    };
    Value valid = arith::AndIOp::create(
        b, loc,
        cmp(arith::CmpIPredicate::sge, src, buildIndexConstant(b, loc, 0)),
        cmp(arith::CmpIPredicate::slt, src, buildIndexConstant(b, loc, nSrc)));
    if (op.selfLoops) {
      Value notSelf = cmp(arith::CmpIPredicate::ne, src, dst);
      valid = arith::AndIOp::create(
          b, loc, valid,
          arith::OrIOp::create(
              b, loc, notSelf,
              arith::XOrIOp::create(
                  b, loc, isCsr,
                  arith::ConstantOp::create(b, loc, b.getBoolAttr(true)))));
    }
    Value zero = buildIndexConstant(b, loc, 0);
    return {arith::SelectOp::create(b, loc, valid, src, zero),
            arith::SelectOp::create(b, loc, valid, dst, zero), valid};
  }

  /// PyG's edge_dim: each CSR edge's score term, edgeTerm[e, h] =
  /// edge_attr[e] . v[h] with v[h, d] = sum_c att_edge[h, c]
  /// weight_edge[h*C + c, d] (attn.gat), or its projection edgeTerm[e, h*C +
  /// c] = (edge_attr @ weight_edge^T)[e, h*C + c] that joins GATv2's sum
  /// before the nonlinearity; and each added self loop's, loopTerm[i, :],
  /// the mean of edgeTerm over node i's incoming edges that are not self
  /// loops (the term of the mean attribute, by linearity; 0 without any).
  void buildEdgeTerms(OpBuilder &b, Location loc) {
    MLIRContext *ctx = b.getContext();
    int64_t dim = getShape(op.edgeAttr)[1];
    int64_t width = v2 ? heads * ch : heads;
    if (v2) {
      // edgeTerm[e, o]: dims (e, o, d).
      edgeTerm = buildContraction(b, loc, op.edgeAttr, dimsMap(ctx, 3, {0, 2}),
                                  op.weightEdge, dimsMap(ctx, 3, {1, 2}),
                                  {nnz, width}, dimsMap(ctx, 3, {0, 1}));
    } else {
      Value w3 = buildExpand(b, loc, op.weightEdge, {heads, ch, dim},
                             {{0, 1}, {2}});
      // v[h, d]: dims (h, d, c).
      Value v = buildContraction(b, loc, op.attEdge, dimsMap(ctx, 3, {0, 2}),
                                 w3, dimsMap(ctx, 3, {0, 2, 1}), {heads, dim},
                                 dimsMap(ctx, 3, {0, 1}));
      // edgeTerm[e, h]: dims (e, h, d).
      edgeTerm = buildContraction(b, loc, op.edgeAttr, dimsMap(ctx, 3, {0, 2}),
                                  v, dimsMap(ctx, 3, {1, 2}), {nnz, heads},
                                  dimsMap(ctx, 3, {0, 1}));
    }
    if (!op.selfLoops)
      return;
    loopTerm = perNodeForall(
        b, loc, {{width}}, [&](OpBuilder &b, Location loc, Value i) {
          Value zero = buildFloatConstant(b, loc, f, 0.0);
          Value sum0 =
              linalg::FillOp::create(
                  b, loc, zero,
                  ValueRange{tensor::EmptyOp::create(b, loc, {width}, f)})
                  .getResult(0);
          Value count0 = buildFloatConstant(b, loc, f, 0.0);
          auto [begin, end] = row(b, loc, i);
          AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
          auto loop = scf::ForOp::create(
              b, loc, begin, end, buildIndexConstant(b, loc, 1),
              ValueRange{sum0, count0},
              [&](OpBuilder &lb, Location lloc, Value e, ValueRange args) {
                Value src = buildIndexCast(
                    lb, lloc,
                    tensor::ExtractOp::create(lb, lloc, op.colIdx, e));
                Value counted = arith::CmpIOp::create(
                    lb, lloc, arith::CmpIPredicate::ne, src, i);
                Value sum = buildElementwise(
                    lb, lloc, args[0],
                    ValueRange{edgeRow(lb, lloc, edgeTerm, e)}, {id},
                    [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                      Value added = arith::AddFOp::create(nb, nloc, a[1], a[0]);
                      return arith::SelectOp::create(nb, nloc, counted, added,
                                                     a[1]);
                    });
                Value one = buildFloatConstant(lb, lloc, f, 1.0);
                Value count = arith::SelectOp::create(
                    lb, lloc, counted,
                    arith::AddFOp::create(lb, lloc, args[1], one), args[1]);
                scf::YieldOp::create(lb, lloc, ValueRange{sum, count});
              });
          Value count = loop.getResult(1);
          Value mean = buildElementwise(
              b, loc, tensor::EmptyOp::create(b, loc, {width}, f),
              ValueRange{loop.getResult(0)}, {id},
              [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                Value has = arith::CmpFOp::create(
                    nb, nloc, arith::CmpFPredicate::OGT, count, zero);
                return arith::SelectOp::create(
                    nb, nloc, has, arith::DivFOp::create(nb, nloc, a[0], count),
                    zero);
              });
          return SmallVector<Value>{mean};
        })[0];
  }

  /// Edge e's term of the edge attributes (buildEdgeTerms), column h (a
  /// head; GATv2: h*C + c).
  Value edgeTermAt(OpBuilder &b, Location loc, Value e, Value h) {
    Value cNnz = buildIndexConstant(b, loc, nnz);
    Value zero = buildIndexConstant(b, loc, 0);
    if (nnz == 0) // only self loops
      return loopTerm ? tensor::ExtractOp::create(b, loc, loopTerm,
                                                  ValueRange{e, h})
                            .getResult()
                      : buildFloatConstant(b, loc, f, 0.0);
    Value isCsr =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, e, cNnz);
    Value eCsr = arith::SelectOp::create(b, loc, isCsr, e, zero);
    Value term = tensor::ExtractOp::create(b, loc, edgeTerm, ValueRange{eCsr, h});
    if (!loopTerm)
      return term;
    Value node = arith::SelectOp::create(
        b, loc, isCsr, zero, arith::SubIOp::create(b, loc, e, cNnz));
    Value loopValue =
        tensor::ExtractOp::create(b, loc, loopTerm, ValueRange{node, h});
    return arith::SelectOp::create(b, loc, isCsr, term, loopValue);
  }

  /// SDDMM: s[e, h] = LeakyReLU(a_dst[dst e, h] + a_src[src e, h]), or -inf.
  Value buildScores(OpBuilder &b, Location loc) {
    Value init = tensor::EmptyOp::create(b, loc, {edges, heads}, f);
    return buildElementwise(
        b, loc, init, {}, {},
        [&](OpBuilder &nb, Location nloc, ValueRange) -> Value {
          Value e = linalg::IndexOp::create(nb, nloc, 0);
          Value h = linalg::IndexOp::create(nb, nloc, 1);
          auto [src, dst, valid] = endpoints(nb, nloc, e);
          Value s = arith::AddFOp::create(
              nb, nloc,
              tensor::ExtractOp::create(nb, nloc, proj.aDst,
                                        ValueRange{dst, h}),
              tensor::ExtractOp::create(nb, nloc, proj.aSrc,
                                        ValueRange{src, h}));
          if (edgeTerm)
            s = arith::AddFOp::create(nb, nloc, s, edgeTermAt(nb, nloc, e, h));
          return arith::SelectOp::create(nb, nloc, valid,
                                         buildLeakyRelu(nb, nloc, op.slope, s),
                                         negInf(nb, nloc));
        });
  }

  /// GATv2's scores: s[e, h] = sum_c att[h, c] LeakyReLU(zd[dst e, h, c] +
  /// zs[src e, h, c] (+ edgeTerm[e, h*C + c] with edge attributes)) (a
  /// reduction over c), then -inf for invalid edges.
  Value buildScoresV2(OpBuilder &b, Location loc) {
    MLIRContext *ctx = b.getContext();
    Value zero = buildFloatConstant(b, loc, f, 0.0);
    Value init =
        linalg::FillOp::create(b, loc, zero,
                               ValueRange{tensor::EmptyOp::create(
                                   b, loc, {edges, heads}, f)})
            .getResult(0);
    Value raw =
        linalg::GenericOp::create(
            b, loc, init.getType(), ValueRange{v2.getAtt()}, ValueRange{init},
            {dimsMap(ctx, 3, {1, 2}), dimsMap(ctx, 3, {0, 1})},
            {utils::IteratorType::parallel, utils::IteratorType::parallel,
             utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              Value e = linalg::IndexOp::create(nb, nloc, 0);
              Value h = linalg::IndexOp::create(nb, nloc, 1);
              Value c = linalg::IndexOp::create(nb, nloc, 2);
              auto [src, dst, valid] = endpoints(nb, nloc, e);
              (void)valid;
              Value sum = arith::AddFOp::create(
                  nb, nloc,
                  tensor::ExtractOp::create(nb, nloc, zDst,
                                            ValueRange{dst, h, c}),
                  tensor::ExtractOp::create(nb, nloc, proj.z3,
                                            ValueRange{src, h, c}));
              if (edgeTerm) {
                // The edge's projection, column h*C + c.
                Value col = arith::AddIOp::create(
                    nb, nloc,
                    arith::MulIOp::create(nb, nloc, h,
                                          buildIndexConstant(nb, nloc, ch)),
                    c);
                sum = arith::AddFOp::create(nb, nloc, sum,
                                            edgeTermAt(nb, nloc, e, col));
              }
              Value term = arith::MulFOp::create(
                  nb, nloc, a[0], buildLeakyRelu(nb, nloc, op.slope, sum));
              linalg::YieldOp::create(
                  nb, nloc, arith::AddFOp::create(nb, nloc, a[1], term).getResult());
            })
            .getResult(0);
    return buildElementwise(
        b, loc, tensor::EmptyOp::create(b, loc, {edges, heads}, f), {raw},
        {AffineMap::getMultiDimIdentityMap(2, ctx)},
        [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
          Value e = linalg::IndexOp::create(nb, nloc, 0);
          Value valid = std::get<2>(endpoints(nb, nloc, e));
          return arith::SelectOp::create(nb, nloc, valid, a[0],
                                         negInf(nb, nloc));
        });
  }

  /// Runs `body(e, state)` over node i's edges: its CSR row, then its self
  /// loop with add_self_loops (a bipartite layer's nodes i < loops only).
  SmallVector<Value> forEachEdge(
      OpBuilder &b, Location loc, Value i, ValueRange init,
      const std::function<SmallVector<Value>(OpBuilder &, Location, Value,
                                             ValueRange)> &body) {
    auto [begin, end] = row(b, loc, i);
    auto loop = scf::ForOp::create(
        b, loc, begin, end, buildIndexConstant(b, loc, 1), init,
        [&](OpBuilder &lb, Location lloc, Value e, ValueRange args) {
          scf::YieldOp::create(lb, lloc, body(lb, lloc, e, args));
        });
    SmallVector<Value> state(loop.getResults());
    if (loops == 0)
      return state;
    auto selfLoop = [&](OpBuilder &lb, Location lloc, ValueRange args) {
      return body(
          lb, lloc,
          arith::AddIOp::create(lb, lloc, buildIndexConstant(lb, lloc, nnz), i),
          args);
    };
    if (loops == n)
      return selfLoop(b, loc, state);
    Value has = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                      buildIndexConstant(b, loc, loops));
    auto choice = scf::IfOp::create(
        b, loc, has,
        [&](OpBuilder &tb, Location tloc) {
          scf::YieldOp::create(tb, tloc, selfLoop(tb, tloc, state));
        },
        [&](OpBuilder &eb, Location eloc) {
          scf::YieldOp::create(eb, eloc, ValueRange(state));
        });
    return SmallVector<Value>(choice.getResults());
  }

  /// Row e of an E' x W tensor as a W vector.
  Value edgeRow(OpBuilder &b, Location loc, Value t, Value e) {
    int64_t width = getShape(t)[1];
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({width}, f), t,
        ArrayRef<OpFoldResult>{e, b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  }

  /// Edge softmax statistics per node: max and sum of exp(s - max) over its
  /// edges (N x H each).
  std::pair<Value, Value> buildEdgeSoftmax(OpBuilder &b, Location loc,
                                           Value scores) {
    MLIRContext *ctx = b.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
    SmallVector<Value> stats = perNodeForall(
        b, loc, {{heads}, {heads}}, [&](OpBuilder &b, Location loc, Value i) {
          Value zero = buildFloatConstant(b, loc, f, 0.0);
          auto filled = [&](Value v) {
            return linalg::FillOp::create(
                       b, loc, v,
                       ValueRange{tensor::EmptyOp::create(b, loc, {heads}, f)})
                .getResult(0);
          };
          Value m = forEachEdge(
              b, loc, i, ValueRange{filled(negInf(b, loc))},
              [&](OpBuilder &eb, Location eloc, Value e, ValueRange args) {
                return SmallVector<Value>{buildElementwise(
                    eb, eloc, args[0], ValueRange{edgeRow(eb, eloc, scores, e)},
                    {id},
                    [](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                      return arith::MaximumFOp::create(nb, nloc, a[0], a[1]);
                    })};
              })[0];
          Value l = forEachEdge(
              b, loc, i, ValueRange{filled(zero)},
              [&](OpBuilder &eb, Location eloc, Value e, ValueRange args) {
                return SmallVector<Value>{buildElementwise(
                    eb, eloc, args[0],
                    ValueRange{edgeRow(eb, eloc, scores, e), m}, {id, id},
                    [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                      Value p = math::ExpOp::create(
                          nb, nloc,
                          arith::SubFOp::create(nb, nloc, a[0], a[1]));
                      Value masked = arith::CmpFOp::create(
                          nb, nloc, arith::CmpFPredicate::OEQ, a[0],
                          negInf(nb, nloc));
                      return arith::AddFOp::create(
                          nb, nloc, a[2],
                          arith::SelectOp::create(nb, nloc, masked, zero, p));
                    })};
              })[0];
          return SmallVector<Value>{m, l};
        });
    return {stats[0], stats[1]};
  }

  /// alpha[e, h] = exp(s - m[dst e]) / l[dst e], 0 for masked edges.
  Value buildCoefficients(OpBuilder &b, Location loc, Value scores,
                          Value rowMax, Value rowSum) {
    MLIRContext *ctx = b.getContext();
    Value init = tensor::EmptyOp::create(b, loc, {edges, heads}, f);
    return buildElementwise(
        b, loc, init, ValueRange{scores},
        {AffineMap::getMultiDimIdentityMap(2, ctx)},
        [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
          Value e = linalg::IndexOp::create(nb, nloc, 0);
          Value h = linalg::IndexOp::create(nb, nloc, 1);
          Value dst = std::get<1>(endpoints(nb, nloc, e));
          Value m =
              tensor::ExtractOp::create(nb, nloc, rowMax, ValueRange{dst, h});
          Value l =
              tensor::ExtractOp::create(nb, nloc, rowSum, ValueRange{dst, h});
          Value p = math::ExpOp::create(
              nb, nloc, arith::SubFOp::create(nb, nloc, a[0], m));
          Value masked = arith::CmpFOp::create(
              nb, nloc, arith::CmpFPredicate::OEQ, a[0], negInf(nb, nloc));
          return arith::SelectOp::create(nb, nloc, masked,
                                         buildFloatConstant(nb, nloc, f, 0.0),
                                         arith::DivFOp::create(nb, nloc, p, l));
        });
  }

  /// SpMM: out[i, h, c] = sum over i's edges of alpha[e, h] z[src e, h, c].
  Value buildAggregation(OpBuilder &b, Location loc, Value alpha) {
    MLIRContext *ctx = b.getContext();
    return perNodeForall(
        b, loc, {{heads, ch}}, [&](OpBuilder &b, Location loc, Value i) {
          Value acc0 =
              linalg::FillOp::create(
                  b, loc, buildFloatConstant(b, loc, f, 0.0),
                  ValueRange{tensor::EmptyOp::create(b, loc, {heads, ch}, f)})
                  .getResult(0);
          Value acc = forEachEdge(
              b, loc, i, ValueRange{acc0},
              [&](OpBuilder &eb, Location eloc, Value e, ValueRange args) {
                Value src = std::get<0>(endpoints(eb, eloc, e));
                return SmallVector<Value>{buildElementwise(
                    eb, eloc, args[0], ValueRange{edgeRow(eb, eloc, alpha, e)},
                    {dimsMap(ctx, 2, {0})},
                    [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                      Value z = tensor::ExtractOp::create(
                          nb, nloc, proj.z3,
                          ValueRange{src, linalg::IndexOp::create(nb, nloc, 0),
                                     linalg::IndexOp::create(nb, nloc, 1)});
                      return arith::AddFOp::create(
                          nb, nloc, a[1],
                          arith::MulFOp::create(nb, nloc, a[0], z));
                    })};
              })[0];
          return SmallVector<Value>{acc};
        })[0];
  }

  GatLayer op;
  GatV2Op v2;
  /// n destinations, nSrc sources, `loops` added self loops, E' = `edges`.
  int64_t n, nSrc, loops, heads, ch, nnz, edges;
  Type f;
  /// proj.z3: the messages (GATv2: the source projection); zDst: GATv2's
  /// destination projection.
  GatProjections proj;
  Value zDst, destinations;
  /// edge_dim: per-CSR-edge and per-self-loop score terms (E x H, N x H;
  /// GATv2: E x H*C, N x H*C).
  Value edgeTerm, loopTerm;
};

template <typename OpTy> struct LowerGatUnfused : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticTensorOperands(op))
      return rewriter.notifyMatchFailure(op,
                                         "dynamic shapes are not supported");
    GatV2Op v2 = nullptr;
    if constexpr (std::is_same_v<OpTy, GatV2Op>)
      v2 = op;
    rewriter.replaceOp(op, GatUnfuser(GatLayer::of(op), v2).build(rewriter));
    return success();
  }
};

struct AttnLowerGatUnfused
    : attn::impl::AttnLowerGatUnfusedBase<AttnLowerGatUnfused> {
  void runOnOperation() override {
    if (failed(requireStaticShapes(
            getOperation(),
            [](Operation *op) { return isa<GatOp, GatV2Op>(op); },
            "cannot be lowered: attn-lower-gat-unfused needs static shapes")))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateWidenPrecisionPatterns(patterns);
    patterns.add<LowerGatUnfused<GatOp>, LowerGatUnfused<GatV2Op>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateLowerGatUnfusedPatterns(RewritePatternSet &patterns,
                                                 PatternBenefit benefit) {
  patterns.add<LowerGatUnfused<GatOp>, LowerGatUnfused<GatV2Op>>(
      patterns.getContext(), benefit);
}
