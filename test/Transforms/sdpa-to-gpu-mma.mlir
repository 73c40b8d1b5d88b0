// RUN: attn-opt %s --split-input-file --attn-sdpa-to-gpu="tensor-cores workgroup-attributions" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-sdpa-to-gpu="tensor-cores workgroup-attributions block-k=32" | FileCheck %s --check-prefix=BK32

// The tensor-core kernel (attn-sdpa-to-gpu{tensor-cores}): workgroups of
// 4 warps (32 x 4 threads) over 64 query rows, grid ceil(130 / 64) x H x B;
// K and V tiles of 64 keys (rows padded to E + 8) in shared memory, filled
// by cp.async (16 bytes, zero-filled past Lk); the first K copy before the
// key-tile loop; per tile: the V copy, a wait for all but the newest group
// (K), S = Q K^T on tensor cores from ldmatrix'ed K fragments, the masked
// scores (causal: the tiles the mask leaves full skip it), the row max
// over the quad (shuffle xor 1, 2), P rounded to f16, the wait for V, the
// next K copy, P V from transposed ldmatrix fragments of V.
// CHECK-LABEL: func @causal
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c32{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c1{{.*}}) workgroup(%[[KSH:.+]] : memref<64x72xf16, 3>, %[[VSH:.+]] : memref<64x72xf16, 3>)
// CHECK-COUNT-8: vector.load {{.+}} : memref<1x2x130x64xf16>, vector<2xf16>
// CHECK-COUNT-4: nvgpu.device_async_copy {{.+}}, %[[KSH]][{{.+}}], 8, {{.+}} {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK-COUNT-4: nvgpu.device_async_copy {{.+}}, %[[VSH]][{{.+}}], 8, {{.+}} {bypassL1}
// CHECK: %[[VG:.+]] = nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[VG]] {numGroups = 1 : i32}
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[KSH]][{{.+}}] {numTiles = 2 : i32, transpose = false} : memref<64x72xf16, 3> -> vector<2x2xf16>
// CHECK: nvgpu.mma.sync({{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: scf.if
// CHECK: gpu.shuffle xor {{.+}}, %c1_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK: gpu.shuffle xor {{.+}}, %c2_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK: math.exp
// CHECK: arith.truncf {{.+}} : f32 to f16
// CHECK: nvgpu.device_async_wait %[[VG]] {numGroups = 0 : i32}
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-4: nvgpu.device_async_copy {{.+}}, %[[KSH]]
// CHECK: nvgpu.ldmatrix %[[VSH]][{{.+}}] {numTiles = 2 : i32, transpose = true}
// CHECK: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait
// CHECK: vector.store {{.+}} : memref<1x2x130x64xf16>, vector<2xf16>
// BK32-LABEL: func @causal
// BK32: workgroup({{.+}} : memref<32x72xf16, 3>, {{.+}} : memref<32x72xf16, 3>)
func.func @causal(%q: tensor<1x2x130x64xf16>, %k: tensor<1x2x130x64xf16>, %v: tensor<1x2x130x64xf16>) -> tensor<1x2x130x64xf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x2x130x64xf16>, tensor<1x2x130x64xf16>, tensor<1x2x130x64xf16>) -> tensor<1x2x130x64xf16>
  return %o : tensor<1x2x130x64xf16>
}

// -----

// bf16: nvvm.mma.sync on the fragments' registers as i32 (MLIR 22's nvgpu
// lowering has no bf16); relative-bias tables read in f32; E = 128 with Ev
// = 64: tiles of 64 x 136 and 64 x 72.
// CHECK-LABEL: func @bf16_rel
// CHECK: linalg.generic
// CHECK: arith.extf {{.+}} : bf16 to f32
// CHECK: workgroup({{.+}} : memref<64x136xbf16, 3>, {{.+}} : memref<64x72xbf16, 3>)
// CHECK: nvgpu.ldmatrix {{.+}} : memref<64x136xbf16, 3> -> vector<2x2xbf16>
// CHECK: vector.bitcast {{.+}} : vector<2xbf16> to vector<1xi32>
// CHECK: nvvm.mma.sync A[{{.+}}] B[{{.+}}] C[{{.+}}] {{{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvgpu.mma.sync
// BK32-LABEL: func @bf16_rel
func.func @bf16_rel(%q: tensor<1x2x64x128xbf16>, %k: tensor<1x2x64x128xbf16>, %v: tensor<1x2x64x64xbf16>, %rb: tensor<2x9xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = attn.sdpa %q, %k, %v rel_bias(%rb) {rel_clip = 4 : i64} : (tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16>, tensor<1x2x64x64xbf16>, tensor<2x9xbf16>) -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// -----

// What the tensor-core kernel does not take keeps the one-row-per-subgroup
// kernel: f32; a head dim that is not a multiple of 16.
// CHECK-LABEL: func @f32
// CHECK: threads({{.*}}) in ({{.*}} = %c32{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c1{{.*}}) workgroup({{.+}} : memref<32x64xf32, 3>
// CHECK-NOT: nvgpu
// CHECK: gpu.subgroup_reduce add
func.func @f32(%q: tensor<1x2x130x64xf32>, %k: tensor<1x2x130x64xf32>, %v: tensor<1x2x130x64xf32>) -> tensor<1x2x130x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x130x64xf32>, tensor<1x2x130x64xf32>, tensor<1x2x130x64xf32>) -> tensor<1x2x130x64xf32>
  return %o : tensor<1x2x130x64xf32>
}

// -----

// CHECK-LABEL: func @e40
// CHECK-NOT: nvgpu
// CHECK: gpu.subgroup_reduce add
func.func @e40(%q: tensor<1x2x130x40xf16>, %k: tensor<1x2x130x40xf16>, %v: tensor<1x2x130x40xf16>) -> tensor<1x2x130x40xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x130x40xf16>, tensor<1x2x130x40xf16>, tensor<1x2x130x40xf16>) -> tensor<1x2x130x40xf16>
  return %o : tensor<1x2x130x40xf16>
}
