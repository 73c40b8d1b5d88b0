//===- GatBuilders.h - pieces shared by the GAT lowerings --------*- C++
//-*-===//

#ifndef ATTN_LIB_TRANSFORMS_GATBUILDERS_H
#define ATTN_LIB_TRANSFORMS_GATBUILDERS_H

#include "dialect/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// z = x W^T viewed as N x H x C, and the per-node attention logits
/// a_src[n, h] = att_src[h] . z[n, h] and a_dst likewise (N x H). A
/// bipartite op's a_dst comes from x_dst's projection by weight_dst (Nd x H).
struct GatProjections {
  Value z3, aSrc, aDst;
};
GatProjections buildGatProjections(OpBuilder &b, Location loc, GatOp op);

/// What attn.gat and attn.gatv2 share: the graph, sizes, head combination,
/// bias, slope and the optional alpha result.
struct GatLayer {
  Operation *op;
  Value x, rowPtr, colIdx, bias, alpha;
  /// n: the destinations (the CSR's rows, the output's); nSrc: the sources
  /// (x's rows, n unless bipartite); loops: the self loops added (min(n,
  /// nSrc) with add_self_loops, else 0), nodes 0 .. loops-1.
  int64_t n, heads, ch;
  bool concat, selfLoops;
  double slope;
  Type elemType;
  /// The edge(...) operands (PyG's edge_dim), null when absent; attn.gatv2
  /// has no attEdge (its edge projection joins the nonlinearity's sum).
  Value edgeAttr, weightEdge, attEdge;
  /// A bipartite layer's destination features, null otherwise.
  Value xDst;
  int64_t nSrc, loops;
  static GatLayer of(GatOp op);
  static GatLayer of(GatV2Op op);
};

/// LeakyReLU(x) with negative slope `slope` (the op's).
Value buildLeakyRelu(OpBuilder &b, Location loc, double slope, Value x);
Value buildLeakyRelu(OpBuilder &b, Location loc, GatOp op, Value x);

/// N x H x C per-head outputs -> N x H*C (concat) or N x C (mean), plus bias.
Value buildGatCombine(OpBuilder &b, Location loc, const GatLayer &layer,
                      Value out3);
Value buildGatCombine(OpBuilder &b, Location loc, GatOp op, Value out3);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_GATBUILDERS_H
