// The SPIR-V the GPU pipeline embeds is valid Vulkan 1.3 SPIR-V (spirv-val),
// for a causal, a sliding-window with padding and lse, a GQA and a region
// example, at E = 64 and 128 (lavapipe's subgroup of 8, NVIDIA's 32):
// RUN: attn-opt %s --attn-gpu-pipeline="subgroup-size=8" | %python %S/../Inputs/gpu-binary.py %t | FileCheck %s --check-prefix=COUNT
// RUN: spirv-val --target-env vulkan1.3 %t.0
// RUN: spirv-val --target-env vulkan1.3 %t.1
// RUN: spirv-val --target-env vulkan1.3 %t.2
// RUN: spirv-val --target-env vulkan1.3 %t.3
// RUN: spirv-dis %t.0 | FileCheck %s
// RUN: spirv-dis %t.3 | FileCheck %s --check-prefix=F16
// RUN: attn-opt %s --attn-gpu-pipeline="subgroup-size=32 rows=2" | %python %S/../Inputs/gpu-binary.py %t32
// RUN: spirv-val --target-env vulkan1.3 %t32.1
// RUN: spirv-dis %t32.1 | FileCheck %s --check-prefix=SG32
// REQUIRES: spirv-tools

// Workgroup memory with two barriers per key tile, a subgroup sum per key,
// the workgroup size from the pipeline (subgroup x rows).
// CHECK-DAG: OpCapability GroupNonUniformArithmetic
// CHECK-DAG: OpExecutionMode %{{.*}} LocalSize 8 4 1
// CHECK-DAG: OpGroupNonUniformFAdd %float %uint_3 Reduce
// CHECK-DAG: OpControlBarrier
// CHECK-DAG: Workgroup
// COUNT: 4 object(s)
// f16 attention keeps f16 storage: the kernel loads halves from the
// buffers and computes in f32.
// F16: OpCapability StorageBuffer16BitAccess
// F16: OpLoad %half
// SG32: OpExecutionMode %{{.*}} LocalSize 32 2 1

func.func @causal(%q: tensor<1x4x96x64xf32>, %k: tensor<1x4x96x64xf32>, %v: tensor<1x4x96x64xf32>) -> tensor<1x4x96x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x4x96x64xf32>, tensor<1x4x96x64xf32>, tensor<1x4x96x64xf32>) -> tensor<1x4x96x64xf32>
  return %o : tensor<1x4x96x64xf32>
}

func.func @local_padding(%q: tensor<2x2x70x128xf32>, %k: tensor<2x1x90x128xf32>, %v: tensor<2x1x90x128xf32>, %len: tensor<2xi32>) -> (tensor<2x2x70x128xf32>, tensor<2x2x70xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<local>, window_left = 16 : i64, window_right = 16 : i64} : (tensor<2x2x70x128xf32>, tensor<2x1x90x128xf32>, tensor<2x1x90x128xf32>, tensor<2xi32>) -> (tensor<2x2x70x128xf32>, tensor<2x2x70xf32>)
  return %o, %l : tensor<2x2x70x128xf32>, tensor<2x2x70xf32>
}

func.func @softcap(%q: tensor<1x2x64x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x2x64x64xf32>
}

func.func @causal_f16(%q: tensor<1x2x96x64xf16>, %k: tensor<1x2x96x64xf16>, %v: tensor<1x2x96x64xf16>) -> tensor<1x2x96x64xf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x2x96x64xf16>, tensor<1x2x96x64xf16>, tensor<1x2x96x64xf16>) -> tensor<1x2x96x64xf16>
  return %o : tensor<1x2x96x64xf16>
}
