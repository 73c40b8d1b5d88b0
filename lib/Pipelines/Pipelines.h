//===- Pipelines.h - named pipelines from attn IR to LLVM -------*- C++ -*-===//

#ifndef ATTN_LIB_PIPELINES_PIPELINES_H
#define ATTN_LIB_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

/// Options every attn pipeline has: the CPU target (attn-set-target) and
/// how it ends. `Derived` is the pipeline's own option struct.
template <typename Derived>
struct CommonPipelineOptions : public PassPipelineOptions<Derived> {
  template <typename T>
  using Option = typename PassPipelineOptions<Derived>::template Option<T>;

  Option<std::string> targetTriple{
      *this, "target-triple",
      llvm::cl::desc("LLVM target triple (default: the host's)"),
      llvm::cl::init("")};
  Option<std::string> targetCpu{
      *this, "target-cpu",
      llvm::cl::desc("CPU to compile for, as llc's -mcpu (host: this "
                     "machine's name and features); recorded on every "
                     "function by attn-set-target"),
      llvm::cl::init("host")};
  Option<std::string> targetFeatures{
      *this, "target-features",
      llvm::cl::desc("Comma-separated +feature / -feature list, as llc's "
                     "-mattr"),
      llvm::cl::init("")};
  Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("Turn memref results of every function into trailing "
                     "out-parameters (the JIT runtime's calling convention)"),
      llvm::cl::init(true)};
  Option<bool> linalgOnly{
      *this, "linalg-only",
      llvm::cl::desc("Stop after the attn lowerings (linalg on tensors, "
                     "canonicalized): what attn-compile --emit=linalg shows"),
      llvm::cl::init(false)};
};

/// Options of the reference pipeline.
struct ReferencePipelineOptions
    : public CommonPipelineOptions<ReferencePipelineOptions> {};

/// attn -> linalg (reference lowering) -> bufferized loops -> LLVM dialect.
/// Runs on a builtin.module.
void buildReferencePipeline(OpPassManager &pm,
                            const ReferencePipelineOptions &options = {});

/// Options of the CPU pipeline.
struct CpuPipelineOptions
    : public CommonPipelineOptions<CpuPipelineOptions> {
  Option<int64_t> blockQ{
      *this, "block-q",
      llvm::cl::desc("Query rows per tile (attn-tile; 0: from the target)"),
      llvm::cl::init(0)};
  Option<int64_t> blockK{
      *this, "block-k",
      llvm::cl::desc("Key rows per tile (attn-tile; 0: from the target)"),
      llvm::cl::init(0)};
  Option<int64_t> registerRows{
      *this, "register-rows",
      llvm::cl::desc("Rows of a contraction's register tile (attn-vectorize; "
                     "0: from the target)"),
      llvm::cl::init(0)};
  Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Elements per vector of elementwise ops "
                     "(attn-vectorize; 0: from the target)"),
      llvm::cl::init(0)};
  Option<int64_t> registerCols{
      *this, "register-cols",
      llvm::cl::desc("Columns of a contraction's register tile "
                     "(attn-vectorize; 0: from the target)"),
      llvm::cl::init(0)};
  Option<double> graphEdgeDensity{
      *this, "graph-edge-density",
      llvm::cl::desc("Graph-masked sdpa with at most this fraction of the "
                     "Lq x Lk pairs in its CSR takes the edge-list lowering, "
                     "denser graphs block-mask tiles (attn-tile)"),
      llvm::cl::init(0.2)};
  Option<int64_t> gatEdgeBlock{
      *this, "gat-edge-block",
      llvm::cl::desc("In-edges per online-softmax step (attn-lower-gat)"),
      llvm::cl::init(16)};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads of the parallel tile loop: 1 runs it "
                     "sequentially, N > 1 uses N OpenMP threads, 0 lets the "
                     "OpenMP runtime choose (OMP_NUM_THREADS)"),
      llvm::cl::init(1)};
  Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Register-tile and vectorize the tile computations "
                     "(attn-vectorize, attn-lower-vectors)"),
      llvm::cl::init(true)};
  Option<bool> bf16DotProduct{
      *this, "bf16-dot-product",
      llvm::cl::desc("bf16 attention as bf16 pair dot products with f32 "
                     "accumulation where the target has them (AVX512-BF16; "
                     "attn-tile); false: computed in f32"),
      llvm::cl::init(true)};
  Option<bool> shortSequences{
      *this, "short-sequences",
      llvm::cl::desc("Attention whose keys fit in four vectors of the target "
                     "takes attn-tile's register-row lowering when no block "
                     "size is given; false: always tiles"),
      llvm::cl::init(true)};
  Option<bool> speculativeSoftmax{
      *this, "speculative-softmax",
      llvm::cl::desc("f32 key tiles whose scores need no mask or "
                     "modification compute P against the "
                     "earlier tiles' row max in Q K^T's register tiles, "
                     "with a conditional rescale (attn-tile); an "
                     "experiment, off by default"),
      llvm::cl::init(false)};
};

/// attn -> tiled attention with online softmax (attn-tile; mha decomposed
/// first) and fused single-pass GAT (attn-lower-gat) -> bufferized vector
/// code, the tile/node loops parallel over OpenMP threads -> LLVM dialect.
/// The JIT's default.
void buildCpuPipeline(OpPassManager &pm,
                      const CpuPipelineOptions &options = {});

/// Checks the options of attn-cpu-pipeline (non-negative sizes and threads,
/// a density in [0, 1]); reports the first bad one through `errorHandler`.
LogicalResult
checkCpuPipelineOptions(const CpuPipelineOptions &options,
                        function_ref<LogicalResult(const Twine &)> errorHandler);

/// Options of the GPU pipeline.
struct GpuPipelineOptions
    : public CommonPipelineOptions<GpuPipelineOptions> {
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("GPU to compile the attention kernels for: vulkan "
                     "(SPIR-V for any Vulkan 1.3 device) or cuda (PTX)"),
      llvm::cl::init("vulkan")};
  Option<int64_t> subgroupSize{
      *this, "subgroup-size",
      llvm::cl::desc("The device's subgroup size, lanes per query row "
                     "(lavapipe 8, NVIDIA 32; attn-run asks the device)"),
      llvm::cl::init(32)};
  Option<int64_t> rows{
      *this, "rows",
      llvm::cl::desc("Query rows (subgroups) per workgroup"),
      llvm::cl::init(4)};
  Option<int64_t> blockK{
      *this, "block-k",
      llvm::cl::desc("Keys per K/V tile staged in workgroup memory (0: as "
                     "many as fit shared-memory, at most 64)"),
      llvm::cl::init(0)};
  Option<int64_t> sharedMemory{
      *this, "shared-memory",
      llvm::cl::desc("Workgroup memory budget in bytes for the K/V tiles"),
      llvm::cl::init(16384)};
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVIDIA architecture of target=cuda (sm_80, sm_90a)"),
      llvm::cl::init("sm_80")};
  Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("target=cuda on sm_80 and newer: f16/bf16 attention on "
                     "tensor cores (mma.sync, ldmatrix, cp.async) where the "
                     "kernel takes it (head dims multiples of 16, at most "
                     "256; no Shaw keys, no graph mask)"),
      llvm::cl::init(true)};
  Option<std::string> cudaToolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("CUDA toolkit of target=cuda, for libdevice (exp, log, "
                     "fma of the kernels); default: $CUDA_HOME, else "
                     "/usr/local/cuda"),
      llvm::cl::init("")};
};

/// attn -> attention kernels as gpu.launch (attn-sdpa-to-gpu; mha
/// decomposed first), the rest of the function on the CPU (as the CPU
/// pipeline, one thread) -> kernels outlined and compiled for the target
/// (SPIR-V for Vulkan, PTX for CUDA), embedded as gpu.binary; host code
/// calls the mgpu* launch API (lib/Runtime/VulkanRuntime.cpp).
void buildGpuPipeline(OpPassManager &pm,
                      const GpuPipelineOptions &options = {});

/// Checks the options of attn-gpu-pipeline (a known target, positive sizes,
/// 32 lanes per row for CUDA); reports the first bad one through
/// `errorHandler`.
LogicalResult
checkGpuPipelineOptions(const GpuPipelineOptions &options,
                        function_ref<LogicalResult(const Twine &)> errorHandler);

/// Registers the named pipelines with the global pipeline registry
/// (`attn-reference-pipeline`, `attn-cpu-pipeline`, `attn-gpu-pipeline`).
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_LIB_PIPELINES_PIPELINES_H
