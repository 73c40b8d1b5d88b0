//===- SetTarget.cpp - choose the CPU target and record it ----------------===//
//
// attn-set-target: resolves the CPU target once (the host by default) and
// records it on the module and its functions, where every CPU lowering and
// the LLVM translation read it.
//
//===----------------------------------------------------------------------===//

#include "lib/Target/CpuTarget.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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
    ModuleOp module = getOperation();
    // The module's triple, when it has one, is the target's: a pass option
    // that names another is an error, not a silent mix.
    std::string moduleTriple;
    if (auto attr = module->getAttrOfType<StringAttr>(
            LLVM::LLVMDialect::getTargetTripleAttrName()))
      moduleTriple = attr.str();
    if (!moduleTriple.empty() && !triple.empty() && moduleTriple != triple) {
      module.emitError() << "attn-set-target: the module targets '"
                         << moduleTriple << "', the pass was given triple '"
                         << triple << "'";
      return signalPassFailure();
    }
    std::string chosen = triple.empty() ? moduleTriple : std::string(triple);
    // Nothing to choose when the IR (or a tool) has chosen everything.
    bool needed = moduleTriple.empty();
    // Declarations (a runtime function's, such as attn-runtime-checks'
    // @attn_check_failed) have no code to compile: no target of their own.
    module.walk([&](func::FuncOp func) {
      needed |= !func.isExternal() && !func->hasAttr("target_cpu");
    });
    std::optional<attn::CpuTarget> target;
    if (needed) {
      llvm::Expected<attn::CpuTarget> resolved =
          attn::CpuTarget::get(chosen, cpu, features);
      if (!resolved) {
        module.emitError() << "attn-set-target: "
                           << llvm::toString(resolved.takeError());
        return signalPassFailure();
      }
      target = std::move(*resolved);
      chosen = target->triple;
    }
    // Functions that name their own CPU keep it; it must exist for the
    // module's triple.
    bool ok = true;
    module.walk([&](func::FuncOp func) {
      auto own = func->getAttrOfType<StringAttr>("target_cpu");
      if (!own)
        return;
      std::string ownFeatures;
      if (auto f = func->getAttrOfType<LLVM::TargetFeaturesAttr>(
              LLVM::TargetFeaturesAttr::getAttributeName()))
        ownFeatures = f.getFeaturesString();
      llvm::Expected<attn::CpuTarget> t =
          attn::CpuTarget::get(chosen, own.str(), ownFeatures);
      if (!t) {
        func.emitError() << "attn-set-target: function @" << func.getName()
                         << ": " << llvm::toString(t.takeError());
        ok = false;
      }
    });
    if (!ok)
      return signalPassFailure();
    if (target)
      attn::setCpuTarget(module, *target);
  }
};
} // namespace
