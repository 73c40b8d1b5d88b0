// attn-gpu-pipeline{target=vulkan}: the kernel leaves the function as a
// gpu.binary holding SPIR-V for a Vulkan 1.3 target; the host calls it with
// (buffer, size) pairs; the projections of attn.mha stay on the CPU.
// RUN: attn-opt %s --attn-gpu-pipeline="subgroup-size=8" | FileCheck %s

// CHECK-LABEL: llvm.func @mha
// CHECK: gpu.launch_func @mha_kernel::@mha_kernel
// CHECK-SAME: args(%{{.+}} : !llvm.ptr, %{{.+}} : i64, %{{.+}} : !llvm.ptr, %{{.+}} : i64, %{{.+}} : !llvm.ptr, %{{.+}} : i64, %{{.+}} : !llvm.ptr, %{{.+}} : i64)
// CHECK: gpu.binary @mha_kernel [#gpu.object<#spirv.target_env<#spirv.vce<v1.3, [Shader, GroupNonUniform, GroupNonUniformArithmetic, Float16, Int8, Int16, Int64, StorageBuffer16BitAccess]
// CHECK-SAME: api=Vulkan
func.func @mha(%x: tensor<2x24x32xf32>, %w: tensor<96x32xf32>, %b: tensor<96xf32>, %wo: tensor<32x32xf32>, %bo: tensor<32xf32>) -> tensor<2x24x32xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64, mask = #attn.mask<causal>} : (tensor<2x24x32xf32>, tensor<2x24x32xf32>, tensor<2x24x32xf32>, tensor<96x32xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<2x24x32xf32>
  return %y : tensor<2x24x32xf32>
}
