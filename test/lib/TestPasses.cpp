//===- TestPasses.cpp - passes that exist only for tests ------------------===//
//
// Registered in attn-opt under `test-` names, like mlir-opt's test passes;
// not part of any pipeline.
//
//===----------------------------------------------------------------------===//

#include "test/lib/TestPasses.h"

#include "lib/Transforms/LinalgBuilders.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

/// Calls the project's builders from a pass that declares no dependent
/// dialects (the mistake docs/writing-a-pass.md warns about): on input with
/// no linalg/arith/tensor ops those dialects are not loaded, and the builders
/// must stop with an error that names them instead of crashing.
struct TestBuildersUndeclaredDialects
    : PassWrapper<TestBuildersUndeclaredDialects,
                  OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestBuildersUndeclaredDialects)

  StringRef getArgument() const override {
    return "test-attn-builders-undeclared-dialects";
  }
  StringRef getDescription() const override {
    return "Test only: call attn::buildElementwise without declaring "
           "dependentDialects";
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    OpBuilder b(func.getBody());
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape())
        continue;
      Value init = attn::buildEmpty(b, func.getLoc(), type.getShape(),
                                    type.getElementType());
      attn::buildElementwise(
          b, func.getLoc(), init, arg,
          AffineMap::getMultiDimIdentityMap(type.getRank(), &getContext()),
          [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    }
  }
};

} // namespace

void mlir::attn::registerAttnTestPasses() {
  PassRegistration<TestBuildersUndeclaredDialects>();
}
