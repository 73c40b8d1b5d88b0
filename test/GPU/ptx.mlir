// attn-gpu-pipeline{target=cuda}: the kernels as PTX (NVVM), assembled by
// CUDA's ptxas for sm_80 and sm_90a within the budget of the launch
// configuration (32 x 4 threads: at most 255 registers a thread, no spills,
// the two staged tiles in the 48 KiB of static shared memory), at E = 64
// and 128, with padding, GQA and a region.
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-gpu-pipeline="target=cuda chip=sm_80" | %python %S/../Inputs/gpu-binary.py %t80 | FileCheck %s --check-prefix=COUNT
// RUN: %ptxas -arch=sm_80 -v %t80.0 -o %t80.0.cubin 2>&1 | FileCheck %s --check-prefix=E64
// RUN: %ptxas -arch=sm_80 -v %t80.1 -o %t80.1.cubin 2>&1 | FileCheck %s --check-prefix=E128
// RUN: %ptxas -arch=sm_80 -v %t80.2 -o %t80.2.cubin 2>&1 | FileCheck %s --check-prefix=E64
// RUN: attn-opt %s --attn-gpu-pipeline="target=cuda chip=sm_90a" | %python %S/../Inputs/gpu-binary.py %t90
// RUN: %ptxas -arch=sm_90a -v %t90.0 -o %t90.0.cubin 2>&1 | FileCheck %s --check-prefix=E64
// RUN: %ptxas -arch=sm_90a -v %t90.1 -o %t90.1.cubin 2>&1 | FileCheck %s --check-prefix=E128
// RUN: FileCheck %s --check-prefix=PTX < %t90.0
// The GAT kernels (concat with self loops and bias; mean without):
// RUN: attn-opt %S/../Integration/gat.mlir --attn-gpu-pipeline="target=cuda chip=sm_90a" | %python %S/../Inputs/gpu-binary.py %tgat
// RUN: %ptxas -arch=sm_90a -v %tgat.0 -o %tgat.0.cubin 2>&1 | FileCheck %s --check-prefix=GAT
// RUN: %ptxas -arch=sm_90a -v %tgat.1 -o %tgat.1.cubin 2>&1 | FileCheck %s --check-prefix=GAT
// GAT: stack frame, 0 bytes spill stores, 0 bytes spill loads
// GAT: Used {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers

// COUNT: 3 object(s)
// Shared memory: 2 x 32 keys x 64 x 4 bytes (E = 64), 2 x 16 x 128 x 4.
// E64: stack frame, 0 bytes spill stores, 0 bytes spill loads
// E64: Used {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, used 1 barriers, 16384 bytes smem
// E128: stack frame, 0 bytes spill stores, 0 bytes spill loads
// E128: Used {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, used 1 barriers, 16384 bytes smem
// The subgroup sums are warp shuffles; the K/V tiles live in shared memory.
// PTX: .target sm_90a
// PTX: .shared .align {{[0-9]+}} .b8 {{.*}}[8192];
// PTX: .shared .align {{[0-9]+}} .b8 {{.*}}[8192];
// PTX: bar.sync
// PTX: shfl.sync.bfly.b32

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
