//===- GatBuilders.h - pieces shared by the GAT lowerings --------*- C++
//-*-===//

#ifndef ATTN_LIB_TRANSFORMS_GATBUILDERS_H
#define ATTN_LIB_TRANSFORMS_GATBUILDERS_H

#include "dialect/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// z = x W^T viewed as N x H x C, and the per-node attention logits
/// a_src[n, h] = att_src[h] . z[n, h] and a_dst likewise (N x H).
struct GatProjections {
  Value z3, aSrc, aDst;
};
GatProjections buildGatProjections(OpBuilder &b, Location loc, GatOp op);

/// LeakyReLU(x) with the op's negative slope.
Value buildLeakyRelu(OpBuilder &b, Location loc, GatOp op, Value x);

/// N x H x C per-head outputs -> N x H*C (concat) or N x C (mean), plus bias.
Value buildGatCombine(OpBuilder &b, Location loc, GatOp op, Value out3);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_GATBUILDERS_H
