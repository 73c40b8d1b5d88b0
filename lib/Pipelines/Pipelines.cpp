//===- Pipelines.cpp - named pipelines from attn IR to LLVM ---------------===//

#include "lib/Pipelines/Pipelines.h"
#include "lib/Target/CpuTarget.h"
#include "lib/Transforms/OptionBounds.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>

using namespace mlir;

/// Bufferizes (function boundaries with identity layouts, results as
/// out-parameters when asked) and lowers loops to the LLVM dialect. With
/// `threads` != 1, scf.forall loops become OpenMP parallel loops.
/// What a GPU pipeline adds: the device code's lowering (after
/// bufferization) and the host's launch lowering (before the rest of LLVM).
struct GpuLowering {
  std::function<void(OpPassManager &)> device, host;
};

static void addBufferizeAndLowerToLLVM(OpPassManager &pm, bool outParams,
                                       int64_t threads, bool vectorize,
                                       int64_t registerRows = 0,
                                       int64_t registerCols = 0,
                                       int64_t vectorWidth = 0,
                                       const GpuLowering *gpu = nullptr) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (vectorize) {
    attn::AttnVectorizeOptions tiles;
    tiles.registerRows = registerRows;
    tiles.registerCols = registerCols;
    tiles.vectorWidth = vectorWidth;
    pm.addNestedPass<func::FuncOp>(attn::createAttnVectorize(tiles));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    // Accumulators of reduction loops: the tile's transfer_read/write pair on
    // the loop-carried tensor moves out of the loop and the vector is carried
    // instead (on buffers, hoisting is defeated by any reshape of the result).
    pm.addPass(createLoopInvariantSubsetHoistingPass());
    pm.addPass(createCanonicalizerPass()); // drops pass-through iter_args
  }

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // One buffer per result (a tensor returned twice would be one buffer
  // returned twice, which buffer-results-to-out-params crashes on).
  pm.addPass(attn::createAttnDistinctResults());
  // Results written into tensor.empty and then inserted into a larger
  // tensor (a GAT node's output row) are written in place.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (outParams) {
    bufferization::BufferResultsToOutParamsPassOptions options;
    options.hoistStaticAllocs = true;
    options.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(options));
    // A layer function's result, a reshaped view of its own buffer, computed
    // in the out-parameter rather than copied there.
    if (!gpu)
      pm.addPass(attn::createAttnElideResultCopies());
  }
  // Temporaries of a loop body (a query tile's scores, probabilities and row
  // statistics, fresh buffers in every key tile) are allocated once before
  // the loop instead of a malloc and a free per iteration: buffer-hoisting
  // first lifts allocations out of conditional regions (a causal diagonal
  // tile's masked scores, a mask_mod tile's step), buffer-loop-hoisting then
  // out of the loops. Allocations stay inside scf.forall (each thread its
  // own) and yielded buffers stay put. Not for GPU kernels, whose buffers
  // are the device's.
  if (!gpu) {
    pm.addNestedPass<func::FuncOp>(bufferization::createBufferHoistingPass());
    pm.addNestedPass<func::FuncOp>(
        bufferization::createBufferLoopHoistingPass());
    // bf16 contractions as AMX tile products on targets with AMX-BF16
    // (attn-vectorize left them as linalg ops there).
    if (vectorize)
      pm.addNestedPass<func::FuncOp>(attn::createAttnLowerAmx());
  }
  // Kernels leave the functions before deallocation runs on them (it does
  // not know the effects of gpu ops such as subgroup reductions).
  if (gpu)
    gpu->device(pm);
  bufferization::buildBufferDeallocationPipeline(pm);
  // Copies of padded tiles and sliced heads: vector rows, not memrefCopy.
  pm.addNestedPass<func::FuncOp>(attn::createAttnLowerStridedCopies());
  if (vectorize) {
    // Fold subviews into transfers and hoist invariant code first, so that
    // accumulators of reduction loops are recognised and kept in registers.
    pm.addPass(memref::createFoldMemRefAliasOpsPass());
    pm.addPass(createCSEPass());
    pm.addPass(createLoopInvariantCodeMotionPass());
    pm.addNestedPass<func::FuncOp>(attn::createAttnLowerVectors());
    pm.addPass(createCanonicalizerPass());
  }

  bool parallel = threads != 1;
  pm.addPass(parallel ? createForallToParallelLoopPass()
                      : createForallToForLoopPass());
  // A parallel tile's temporaries on the stack, not a malloc and a free per
  // tile: once the forall is loops (scf.forall is an automatic allocation
  // scope itself, so the canonicalizer would drop an alloca_scope in it;
  // scf.for and scf.parallel are not).
  if (!gpu)
    pm.addNestedPass<func::FuncOp>(attn::createAttnStackTileBuffers());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  if (parallel) {
    ConvertSCFToOpenMPPassOptions openmp;
    openmp.numThreads = static_cast<unsigned>(threads);
    pm.addPass(createConvertSCFToOpenMPPass(openmp));
    // One thread team per run of consecutive parallel loops (the K^T / V
    // layouts and the query tiles of attention: one start per call).
    pm.addNestedPass<func::FuncOp>(attn::createAttnMergeParallelRegions());
  }
  // Vector ops come from attn-vectorize and from the fused GAT lowering
  // (which emits them in any case).
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // bf16 results (f16/bf16 attention computed in f32, rounded back): the
  // rounding as integer arithmetic, not LLVM's __truncsfbf2 calls.
  pm.addPass(attn::createAttnExpandBf16());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  if (parallel)
    pm.addPass(createConvertOpenMPToLLVMPass());
  ConvertVectorToLLVMPassOptions toLLVM;
  toLLVM.vectorContractLowering = vector::VectorContractLowering::OuterProduct;
  // attn-lower-vectors' bf16 dot products (x86vector.avx512.dot).
  toLLVM.x86Vector = true;
  // attn-lower-amx's tile products.
  toLLVM.amx = true;
  pm.addPass(createConvertVectorToLLVMPass(toLLVM));
  // Math ops with an LLVM intrinsic (exp, log, absi, ...) become it; the
  // rest (erf of GELU, tanh) libm calls, which math-to-libm would also make
  // of the former, but it rejects math.absi. The vectorized path has
  // already approximated exp, erf and tanh in registers.
  if (!vectorize) {
    pm.addPass(createConvertMathToLLVMPass());
    pm.addPass(createConvertMathToLibmPass());
  }
  if (gpu)
    gpu->host(pm);
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// Where a pipeline stops with `linalg-only`: the attn lowerings' output,
/// tidied.
static void addLinalgCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// The CPU target, chosen once and recorded on the module and its functions.
template <typename Options>
static void addSetTarget(OpPassManager &pm, const Options &options) {
  attn::AttnSetTargetOptions target;
  target.triple = options.targetTriple;
  target.cpu = options.targetCpu;
  target.features = options.targetFeatures;
  pm.addPass(attn::createAttnSetTarget(target));
}

void mlir::attn::buildReferencePipeline(
    OpPassManager &pm, const ReferencePipelineOptions &options) {
  addSetTarget(pm, options);
  pm.addPass(createAttnLowerToLinalg());
  if (options.linalgOnly)
    return addLinalgCleanup(pm);
  addBufferizeAndLowerToLLVM(pm, options.outParams, /*threads=*/1,
                             /*vectorize=*/false);
}

void mlir::attn::buildCpuPipeline(OpPassManager &pm,
                                  const CpuPipelineOptions &options) {
  addSetTarget(pm, options);
  // attn-tile widens f16/bf16 sdpa itself, or keeps bf16 for dot products.
  AttnDecomposeMhaOptions decompose;
  decompose.widenAttention = false;
  pm.addPass(createAttnDecomposeMha(decompose));
  pm.addPass(createAttnRaiseMods());
  AttnTileOptions tile;
  tile.blockQ = options.blockQ;
  tile.blockK = options.blockK;
  tile.graphEdgeDensity = options.graphEdgeDensity;
  tile.bf16DotProduct = options.bf16DotProduct;
  // The register rows are vector code: not with vectorize=false.
  tile.shortSequences = options.shortSequences && options.vectorize;
  tile.speculativeSoftmax = options.speculativeSoftmax;
  pm.addPass(createAttnTile(tile));
  AttnLowerGatOptions gat;
  gat.edgeBlock = options.gatEdgeBlock;
  pm.addPass(createAttnLowerGat(gat));
  // Nothing is left for it on static shapes; it reports any op that is.
  pm.addPass(createAttnLowerToLinalg());
  if (options.linalgOnly)
    return addLinalgCleanup(pm);
  addBufferizeAndLowerToLLVM(pm, options.outParams, options.threads,
                             options.vectorize, options.registerRows,
                             options.registerCols, options.vectorWidth);
}

void mlir::attn::buildGpuPipeline(OpPassManager &pm,
                                  const GpuPipelineOptions &options) {
  addSetTarget(pm, options);
  AttnSdpaToGpuOptions kernel;
  kernel.subgroupSize = options.subgroupSize;
  kernel.rows = options.rows;
  kernel.blockK = options.blockK;
  kernel.sharedMemory = options.sharedMemory;
  bool cuda = options.target == "cuda";
  kernel.workgroupAttributions = cuda;
  AttnSdpaToGpuOptions native = kernel;
  native.leaveUnsupported = true;
  // mma.sync.m16n8k16 with f16 / bf16 operands, ldmatrix and cp.async: sm_80.
  native.tensorCores =
      cuda && options.tensorCores && nvptxChipVersion(options.chip) >= 80;
  // f16 attention the kernel takes as it is keeps f16 storage (read as f32
  // in the kernel); what is left is widened by attn-decompose-mha's
  // patterns and lowered after it.
  pm.addPass(createAttnRaiseMods());
  pm.addPass(createAttnSdpaToGpu(native));
  pm.addPass(createAttnDecomposeMha());
  pm.addPass(createAttnRaiseMods());
  pm.addPass(createAttnSdpaToGpu(kernel));
  AttnGatToGpuOptions gatKernel;
  gatKernel.subgroupSize = options.subgroupSize;
  gatKernel.rows = options.rows;
  pm.addPass(createAttnGatToGpu(gatKernel));
  // What stays on the CPU: the linalg around attention (projections,
  // norms, MLPs).
  pm.addPass(createAttnLowerToLinalg());
  if (options.linalgOnly)
    return addLinalgCleanup(pm);

  GpuLowering gpu;
  std::string chip = options.chip;
  int64_t subgroupSize = options.subgroupSize;
  std::string toolkit = options.cudaToolkit;
  if (toolkit.empty()) {
    const char *home = std::getenv("CUDA_HOME");
    toolkit = home && *home ? home : "/usr/local/cuda";
  }
  gpu.device = [cuda, chip, subgroupSize, toolkit](OpPassManager &pm) {
    // Constants CSE merged with the host's go back into the kernels: their
    // arguments are buffers only.
    pm.addPass(createGpuLaunchSinkIndexComputationsPass());
    pm.addPass(createGpuKernelOutliningPass());
    if (cuda) {
      GpuNVVMAttachTargetOptions nvvm;
      nvvm.chip = chip;
      pm.addPass(createGpuNVVMAttachTarget(nvvm));
      OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
      attn::AttnSubgroupReduceToShufflesOptions shuffles;
      shuffles.subgroupSize = subgroupSize;
      device.addPass(attn::createAttnSubgroupReduceToShuffles(shuffles));
      device.addPass(attn::createAttnAlignWorkgroupBuffers());
      device.addPass(arith::createArithExpandOpsPass());
      device.addPass(createLowerAffinePass());
      device.addPass(createSCFToControlFlowPass());
      // The tensor-core kernel's ldmatrix / mma.sync / cp.async, and its
      // fragments (vectors of registers).
      device.addPass(createConvertNVGPUToNVVMPass());
      device.addPass(createConvertVectorToLLVMPass());
      ConvertGpuOpsToNVVMOpsOptions toNVVM;
      toNVVM.useBarePtrCallConv = true;
      device.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
      device.addPass(createReconcileUnrealizedCastsPass());
      GpuModuleToBinaryPassOptions binary;
      binary.compilationTarget = "isa";
      // libdevice (the kernels' exp, log and fma) is linked from here.
      binary.toolkitPath = toolkit;
      pm.addPass(createGpuModuleToBinaryPass(binary));
      return;
    }
    pm.addPass(attn::createAttnPrepareSpirvKernels());
    GpuSPIRVAttachTargetOptions spirv;
    spirv.spirvVersion = "v1.3";
    spirv.spirvCapabilities = {"Shader",
                               "GroupNonUniform",
                               "GroupNonUniformArithmetic",
                               "Float16",
                               "Int8",
                               "Int16",
                               "Int64",
                               "StorageBuffer16BitAccess"};
    spirv.spirvExtensions = {"SPV_KHR_storage_buffer_storage_class",
                             "SPV_KHR_16bit_storage"};
    spirv.clientApi = "Vulkan";
    spirv.deviceId = 0;
    pm.addPass(createGpuSPIRVAttachTarget(spirv));
    OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
    device.addPass(arith::createArithExpandOpsPass());
    device.addPass(createLowerAffinePass());
    device.addPass(memref::createFoldMemRefAliasOpsPass());
    device.addPass(createConvertMathToSPIRVPass());
    device.addPass(createCanonicalizerPass());
    // 64-bit index: positions and window bounds are index values of the
    // mask definitions (windows of 2^62 mean "unbounded"); 32 bits would
    // wrap them.
    std::unique_ptr<Pass> toSpirv = createConvertGPUToSPIRVPass();
    if (failed(toSpirv->initializeOptions(
            "use-64bit-index=true", [](const Twine &) { return failure(); })))
      llvm::report_fatal_error("attn-gpu-pipeline: convert-gpu-to-spirv has "
                               "no use-64bit-index option");
    pm.addPass(std::move(toSpirv));
    pm.addPass(attn::createAttnNestSpirvModules());
    OpPassManager &spv =
        pm.nest<gpu::GPUModuleOp>().nest<spirv::ModuleOp>();
    spv.addPass(spirv::createSPIRVLowerABIAttributesPass());
    spv.addPass(spirv::createSPIRVUpdateVCEPass());
    pm.addPass(createGpuModuleToBinaryPass());
  };
  gpu.host = [](OpPassManager &pm) {
    GpuToLLVMConversionPassOptions host;
    host.kernelBarePtrCallConv = true;
    host.kernelIntersperseSizeCallConv = true;
    pm.addPass(createGpuToLLVMConversionPass(host));
  };
  addBufferizeAndLowerToLLVM(pm, options.outParams, /*threads=*/1,
                             /*vectorize=*/true, 0, 0, 0, &gpu);
}

LogicalResult mlir::attn::checkCpuPipelineOptions(
    const CpuPipelineOptions &options,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  auto inRange = [&](StringRef name, int64_t value, int64_t min,
                     int64_t max, StringRef meaning) -> LogicalResult {
    if (value >= min && value <= max)
      return success();
    return errorHandler("attn-cpu-pipeline: " + name + " must be in [" +
                        Twine(min) + ", " + Twine(max) + "]" + meaning +
                        ", got " + Twine(value));
  };
  if (failed(inRange("threads", options.threads, 0, kMaxThreads,
                     " (0: the OpenMP runtime's choice)")) ||
      failed(inRange("block-q", options.blockQ, 0, kMaxTileRows,
                     " (0: from the target)")) ||
      failed(inRange("block-k", options.blockK, 0, kMaxTileRows,
                     " (0: from the target)")) ||
      failed(inRange("register-rows", options.registerRows, 0,
                     kMaxRegisterRows, " (0: from the target)")) ||
      failed(inRange("register-cols", options.registerCols, 0,
                     kMaxRegisterCols, " (0: from the target)")) ||
      failed(inRange("vector-width", options.vectorWidth, 0, kMaxVectorWidth,
                     " (0: from the target)")) ||
      failed(inRange("gat-edge-block", options.gatEdgeBlock, 1, kMaxEdgeBlock,
                     "")))
    return failure();
  std::string density = fractionRangeError(
      "attn-cpu-pipeline", "graph-edge-density", options.graphEdgeDensity);
  if (!density.empty())
    return errorHandler(density);
  return success();
}

LogicalResult mlir::attn::checkGpuPipelineOptions(
    const GpuPipelineOptions &options,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  if (options.target != "vulkan" && options.target != "cuda")
    return errorHandler("attn-gpu-pipeline: target must be vulkan or cuda, "
                        "got '" + options.target + "'");
  for (auto [name, value, max] :
       {std::tuple<StringRef, int64_t, int64_t>{
            "subgroup-size", options.subgroupSize, kMaxSubgroupSize},
        {"rows", options.rows, kMaxWorkgroupRows},
        {"shared-memory", options.sharedMemory, kMaxSharedMemory}})
    if (value < 1 || value > max)
      return errorHandler("attn-gpu-pipeline: " + name + " must be in [1, " +
                          Twine(max) + "], got " + Twine(value));
  if (options.target == "cuda" && options.subgroupSize != 32)
    return errorHandler("attn-gpu-pipeline: target=cuda runs one query row "
                        "per warp: subgroup-size must be 32, got " +
                        Twine(options.subgroupSize));
  if (options.blockK < 0 || options.blockK > kMaxTileRows)
    return errorHandler("attn-gpu-pipeline: block-k must be in [0, " +
                        Twine(kMaxTileRows) +
                        "] (0: from shared-memory), got " +
                        Twine(options.blockK));
  if (options.target == "cuda")
    if (llvm::Error err = checkNvptxChip(options.chip))
      return errorHandler("attn-gpu-pipeline: chip: " +
                          llvm::toString(std::move(err)));
  return success();
}

/// As PassPipelineRegistration, with the options checked before anything
/// is built: a negative thread count would become 2^32 - 1 OpenMP threads.
template <typename Options>
static void registerCheckedPipeline(
    StringRef name, StringRef description,
    LogicalResult (*check)(const Options &,
                           function_ref<LogicalResult(const Twine &)>),
    void (*build)(OpPassManager &, const Options &)) {
  registerPassPipeline(
      name, description,
      [check, build](OpPassManager &pm, StringRef text,
                     function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        if (failed(options.parseFromString(text)) ||
            failed(check(options, errorHandler)))
          return failure();
        build(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<ReferencePipelineOptions>(
      "attn-reference-pipeline",
      "Lower attn IR to the LLVM dialect through the reference lowering: "
      "attn-lower-to-linalg, one-shot bufferization (results become "
      "out-parameters), loops, LLVM",
      buildReferencePipeline);
  registerCheckedPipeline<CpuPipelineOptions>(
      "attn-cpu-pipeline",
      "Lower attn IR to the LLVM dialect through fused, tiled attention "
      "(attn-tile: online softmax, mask-aware key-tile ranges) and fused GAT "
      "(attn-lower-gat), vectorization, one-shot bufferization (results "
      "become out-parameters), parallel loops over OpenMP threads, LLVM",
      checkCpuPipelineOptions, buildCpuPipeline);
  registerCheckedPipeline<GpuPipelineOptions>(
      "attn-gpu-pipeline",
      "Lower attn IR to the LLVM dialect with the attention kernels on a GPU "
      "(attn-sdpa-to-gpu: a subgroup per query row, K/V tiles in workgroup "
      "memory, online softmax), compiled to SPIR-V (target=vulkan) or PTX "
      "(target=cuda) and embedded as gpu.binary; the rest on the CPU",
      checkGpuPipelineOptions, buildGpuPipeline);
}
