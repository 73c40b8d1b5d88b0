// attn-gpu-pipeline{target=cuda} chooses the tensor-core kernel for f16 /
// bf16 attention on sm_80 and newer (no CUDA toolkit needed up to the
// kernels: linalg-only stops after them; test/GPU/ptx-mma.mlir assembles
// their PTX where ptxas is).
// RUN: attn-opt %s --attn-gpu-pipeline="target=cuda chip=sm_80 linalg-only" | FileCheck %s --check-prefix=ON
// RUN: attn-opt %s --attn-gpu-pipeline="target=cuda chip=sm_90a linalg-only" | FileCheck %s --check-prefix=ON
// Without tensor cores (the option off, or a chip before sm_80) the same
// ops take the one-row-per-warp kernel (f16 read as f32, bf16 widened); so
// does Vulkan.
// RUN: attn-opt %s --attn-gpu-pipeline="target=cuda chip=sm_80 tensor-cores=false linalg-only" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s --attn-gpu-pipeline="target=cuda chip=sm_75 linalg-only" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s --attn-gpu-pipeline="target=vulkan subgroup-size=8 linalg-only" | FileCheck %s --check-prefix=OFF

// ON-LABEL: func.func @f16
// ON: threads({{.+}}) in ({{.+}} = %c32{{.*}}, {{.+}} = %c4{{.*}}, {{.+}} = %c1{{.*}}) workgroup({{.+}} : memref<64x72xf16, 3>, {{.+}} : memref<64x72xf16, 3>)
// ON: nvgpu.device_async_copy
// ON: nvgpu.ldmatrix
// ON: nvgpu.mma.sync
// ON-LABEL: func.func @bf16
// ON: workgroup({{.+}} : memref<64x136xbf16, 3>, {{.+}} : memref<64x136xbf16, 3>)
// ON: nvvm.mma.sync
// ON-LABEL: func.func @f32
// ON-NOT: nvgpu
// ON: gpu.subgroup_reduce
// OFF-NOT: nvgpu
// OFF-NOT: nvvm.mma.sync
// OFF: gpu.subgroup_reduce
func.func @f16(%q: tensor<1x2x100x64xf16>, %k: tensor<1x2x100x64xf16>, %v: tensor<1x2x100x64xf16>) -> tensor<1x2x100x64xf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x2x100x64xf16>, tensor<1x2x100x64xf16>, tensor<1x2x100x64xf16>) -> tensor<1x2x100x64xf16>
  return %o : tensor<1x2x100x64xf16>
}
func.func @bf16(%q: tensor<1x2x100x128xbf16>, %k: tensor<1x2x100x128xbf16>, %v: tensor<1x2x100x128xbf16>) -> tensor<1x2x100x128xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x100x128xbf16>, tensor<1x2x100x128xbf16>, tensor<1x2x100x128xbf16>) -> tensor<1x2x100x128xbf16>
  return %o : tensor<1x2x100x128xbf16>
}
func.func @f32(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x100x64xf32>, %v: tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32>
  return %o : tensor<1x2x100x64xf32>
}
