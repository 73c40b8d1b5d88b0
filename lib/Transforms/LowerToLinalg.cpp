//===- LowerToLinalg.cpp - the attn-lower-to-linalg pass ------------------===//

#include "dialect/AttnOps.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"

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
    // The patterns need static shapes; say so per op rather than leaving it.
    WalkResult shapes = getOperation()->walk([](Operation *op) {
      if (!isa<SdpaOp, MhaOp, GatOp>(op))
        return WalkResult::advance();
      if (hasStaticTensorOperands(op))
        return WalkResult::advance();
      for (Type t : op->getOperandTypes())
        if (!cast<RankedTensorType>(t).hasStaticShape()) {
          op->emitOpError("cannot be lowered: the reference lowering needs "
                          "static shapes, got ")
              << t;
          break;
        }
      return WalkResult::interrupt();
    });
    if (shapes.wasInterrupted())
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    populateDecomposeMhaPatterns(patterns);
    populateLowerSdpaToLinalgPatterns(patterns);
    populateLowerGatToLinalgPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
