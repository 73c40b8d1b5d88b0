//===- SetTarget.cpp - choose the CPU target and record it ----------------===//
//
// attn-set-target: resolves the CPU target once (the host by default) and
// records it on the module and its functions, where every CPU lowering and
// the LLVM translation read it.
//
//===----------------------------------------------------------------------===//

#include "lib/Target/CpuTarget.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSETTARGET
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnSetTarget : attn::impl::AttnSetTargetBase<AttnSetTarget> {
  using AttnSetTargetBase::AttnSetTargetBase;

  void runOnOperation() override {
    llvm::Expected<attn::CpuTarget> target =
        attn::CpuTarget::get(triple, cpu, features);
    if (!target) {
      getOperation().emitError()
          << "attn-set-target: " << llvm::toString(target.takeError());
      return signalPassFailure();
    }
    attn::setCpuTarget(getOperation(), *target);
  }
};
} // namespace
