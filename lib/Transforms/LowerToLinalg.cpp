//===- LowerToLinalg.cpp - the attn-lower-to-linalg pass ------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOLINALG
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnLowerToLinalg
    : attn::impl::AttnLowerToLinalgBase<AttnLowerToLinalg> {
  void runOnOperation() override {
    if (failed(requireStaticShapes(
            getOperation(),
            [](Operation *op) { return isa<SdpaOp, MhaOp, GatOp, GatV2Op>(op); },
            "cannot be lowered: the reference lowering needs static shapes")))
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    populateWidenPrecisionPatterns(patterns);
    populateDecomposeMhaPatterns(patterns);
    populateLowerSdpaToLinalgPatterns(patterns);
    populateLowerGatToLinalgPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
