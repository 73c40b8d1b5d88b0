//===- GpuSpirv.cpp - glue around the GPU kernels: SPIR-V and NVVM -------===//

#include "lib/Transforms/Passes.h"
#include "lib/Transforms/OptionBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPREPARESPIRVKERNELS
#define GEN_PASS_DEF_ATTNNESTSPIRVMODULES
#define GEN_PASS_DEF_ATTNALIGNWORKGROUPBUFFERS
#define GEN_PASS_DEF_ATTNSUBGROUPREDUCETOSHUFFLES
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct AttnPrepareSpirvKernels
    : attn::impl::AttnPrepareSpirvKernelsBase<AttnPrepareSpirvKernels> {
  void runOnOperation() override {
    getOperation()->walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel() || func->hasAttr(spirv::getEntryPointABIAttrName()))
        return WalkResult::advance();
      DenseI32ArrayAttr size = func.getKnownBlockSizeAttr();
      if (!size || size.size() != 3) {
        func.emitOpError("attn-prepare-spirv-kernels: kernel has no "
                         "known_block_size (launch it with a constant "
                         "block size)");
        signalPassFailure();
        return WalkResult::interrupt();
      }
      func->setAttr(spirv::getEntryPointABIAttrName(),
                    spirv::getEntryPointABIAttr(&getContext(), size.asArrayRef()));
      return WalkResult::advance();
    });
    getOperation()->walk([&](gpu::GPUModuleOp module) {
      SmallVector<scf::ForOp> loops;
      module->walk([&](scf::ForOp loop) {
        if (loop.getNumResults())
          loops.push_back(loop);
      });
      for (scf::ForOp loop : loops)
        guardZeroTrips(loop);
      module->walk([&](Operation *op) {
        if (isa<arith::ExtSIOp, arith::IndexCastOp>(op)) {
          rewriteSignExtension(op); // may erase `op`
          return;
        }
        // `uniform` reductions (a canonicalization marks those outside
        // divergent control flow) lower to the Groups capability, which a
        // Vulkan shader does not have; the non-uniform form is the same
        // reduction when every lane takes part, as in these kernels.
        if (auto reduce = dyn_cast<gpu::SubgroupReduceOp>(op))
          reduce.setUniform(false);
      });
    });
  }

  /// `loop` inside `scf.if (lb < ub)`, its init values otherwise:
  /// convert-scf-to-spirv keeps a loop's results in function variables that
  /// only the loop body stores, so a loop that runs zero times returns
  /// undefined values (a GAT node without in-edges read garbage).
  static void guardZeroTrips(scf::ForOp loop) {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value runs = arith::CmpIOp::create(
        b, loc,
        loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                              : arith::CmpIPredicate::slt,
        loop.getLowerBound(), loop.getUpperBound());
    auto ifOp = scf::IfOp::create(b, loc, loop.getResultTypes(), runs,
                                  /*withElseRegion=*/true);
    loop->replaceAllUsesWith(ifOp.getResults());
    Block &thenBlock = ifOp.getThenRegion().front();
    loop->moveBefore(&thenBlock, thenBlock.end());
    b.setInsertionPointToEnd(&thenBlock);
    scf::YieldOp::create(b, loc, loop.getResults());
    b.setInsertionPointToEnd(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, loop.getInitArgs());
  }

  /// x (iN, N < 64) sign-extended to 64 bits, as (zext(x) ^ s) - s with
  /// s = 2^(N-1).
  static void rewriteSignExtension(Operation *op) {
    Value in = op->getOperand(0);
    Type to = op->getResult(0).getType();
    auto inType = dyn_cast<IntegerType>(in.getType());
    bool toIndex = to.isIndex();
    auto toType = dyn_cast<IntegerType>(to);
    if (!inType || inType.getWidth() >= 64 ||
        !(toIndex || (toType && toType.getWidth() == 64)))
      return;
    OpBuilder b(op);
    Location loc = op->getLoc();
    Type i64 = b.getI64Type();
    Value wide = arith::ExtUIOp::create(b, loc, i64, in);
    Value sign = arith::ConstantOp::create(
        b, loc, b.getI64IntegerAttr(int64_t(1) << (inType.getWidth() - 1)));
    Value r = arith::SubIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, wide, sign), sign);
    if (toIndex)
      r = arith::IndexCastOp::create(b, loc, to, r);
    op->getResult(0).replaceAllUsesWith(r);
    op->erase();
  }
};

struct AttnNestSpirvModules
    : attn::impl::AttnNestSpirvModulesBase<AttnNestSpirvModules> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<spirv::ModuleOp> spirvModules(
        module.getBody()->getOps<spirv::ModuleOp>());
    for (spirv::ModuleOp spv : spirvModules) {
      std::optional<StringRef> name = spv.getName();
      if (!name || !name->starts_with("__spv__"))
        continue;
      auto gpuModule =
          module.lookupSymbol<gpu::GPUModuleOp>(name->drop_front(7));
      if (!gpuModule) {
        spv.emitOpError("attn-nest-spirv-modules: no gpu.module @")
            << name->drop_front(7) << " for this SPIR-V module";
        return signalPassFailure();
      }
      spv->moveBefore(gpuModule.getBody(), gpuModule.getBody()->end());
    }
  }
};

struct AttnAlignWorkgroupBuffers
    : attn::impl::AttnAlignWorkgroupBuffersBase<AttnAlignWorkgroupBuffers> {
  using Base::Base;
  void runOnOperation() override {
    int64_t align = alignment;
    if (align < 1 || align > 4096 || !llvm::isPowerOf2_64(align)) {
      getOperation()->emitError("attn-align-workgroup-buffers: alignment "
                                "must be a power of two up to 4096, got ")
          << align;
      return signalPassFailure();
    }
    StringRef name = LLVM::LLVMDialect::getAlignAttrName();
    getOperation()->walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel())
        return;
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i) {
        auto old = dyn_cast_or_null<IntegerAttr>(
            func.getWorkgroupAttributionAttr(i, name));
        if (old && old.getInt() >= align)
          continue;
        func.setWorkgroupAttributionAttr(
            i, name,
            IntegerAttr::get(IntegerType::get(&getContext(), 64), align));
      }
    });
  }
};

struct AttnSubgroupReduceToShuffles
    : attn::impl::AttnSubgroupReduceToShufflesBase<
          AttnSubgroupReduceToShuffles> {
  using Base::Base;
  void runOnOperation() override {
    if (subgroupSize < 1 || subgroupSize > attn::kMaxSubgroupSize ||
        (subgroupSize & (subgroupSize - 1))) {
      getOperation()->emitError("attn-subgroup-reduce-to-shuffles: "
                                "subgroup-size must be a power of two up to 128, got ")
          << static_cast<int64_t>(subgroupSize);
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateGpuBreakDownSubgroupReducePatterns(patterns);
    populateGpuLowerSubgroupReduceToShufflePatterns(
        patterns, static_cast<unsigned>(subgroupSize));
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
