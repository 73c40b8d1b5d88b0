//===- DistinctResults.cpp - every result a tensor of its own -------------===//
//
// A tensor returned twice by one function would be one buffer returned twice
// after bufferization, which buffer-results-to-out-params (with
// hoist-static-allocs) cannot take: each repetition becomes a copy in a
// tensor of its own.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDISTINCTRESULTS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnDistinctResults
    : attn::impl::AttnDistinctResultsBase<AttnDistinctResults> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 8> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type || seen.insert(v).second)
          continue;
        // A copy into a new tensor that bufferization cannot fold into the
        // original's buffer (it did with linalg.copy into a tensor.empty).
        // (The copy gives it its sizes, dynamic ones too.)
        operand.set(bufferization::AllocTensorOp::create(b, ret.getLoc(), type,
                                                         ValueRange(), v));
      }
    });
  }
};
} // namespace
