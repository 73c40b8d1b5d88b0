//===- ExpandBf16.cpp - f32 <-> bf16 conversions as integer arithmetic ----===//
//
// attn-expand-bf16: MLIR's bf16 expansion patterns (arith.truncf to bf16 and
// arith.extf from bf16 on i32 bits), so that LLVM never emits a call of
// __truncsfbf2 for them; on AVX512-BF16 targets roundings stay truncf, which
// LLVM lowers to vcvtneps2bf16.
//
//===----------------------------------------------------------------------===//

#include "lib/Target/CpuTarget.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDBF16
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnExpandBf16 : attn::impl::AttnExpandBf16Base<AttnExpandBf16> {
  void runOnOperation() override {
    // Every bf16 extension, and the roundings to bf16 of functions whose
    // target lacks AVX512-BF16 (with it, LLVM selects vcvtneps2bf16).
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      auto isBf16 = [](Type t) { return getElementTypeOrSelf(t).isBF16(); };
      if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
        if (isBf16(ext.getIn().getType()))
          ops.push_back(op);
      } else if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        if (isBf16(trunc.getType()) &&
            !attn::getCpuTarget(op).hasBf16DotProduct())
          ops.push_back(op);
      }
    });
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
  }
};
} // namespace
