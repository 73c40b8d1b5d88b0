// RUN: attn-opt %s --split-input-file --attn-sdpa-to-gpu="subgroup-size=8 rows=4 block-k=32" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-sdpa-to-gpu="subgroup-size=32 rows=2 workgroup-attributions=true" | FileCheck %s --check-prefix=ATTR

// A sliding window on a gpu.launch: grid ceil(128 / 4) x H x B, block
// subgroup-size x rows; K and V tiles of 32 keys in workgroup memory
// (memory space 3) between two barriers; the key-tile loop starts and ends
// at the window's key span (floordiv of the span by the tile); per key the
// lanes' partial products (two per lane: E = 16, 8 lanes) are summed by a
// subgroup reduction; the online softmax exponentiates; the result is a
// buffer read back as a tensor.
// CHECK-LABEL: func @local
// CHECK-DAG: %[[Q:.+]] = bufferization.to_buffer %arg0 read_only
// CHECK-DAG: %[[K:.+]] = bufferization.to_buffer %arg1 read_only
// CHECK: %[[O:.+]] = memref.alloc() : memref<1x2x128x16xf32>
// CHECK: %[[GX:.+]] = arith.constant 32 : index
// CHECK: %[[GY:.+]] = arith.constant 2 : index
// CHECK: %[[SG:.+]] = arith.constant 8 : index
// CHECK: %[[ROWS:.+]] = arith.constant 4 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GX]], {{.*}} = %[[GY]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[SG]], {{.*}} = %[[ROWS]],
// CHECK: %[[KSH:.+]] = memref.alloc() : memref<32x16xf32, 3>
// CHECK: %[[VSH:.+]] = memref.alloc() : memref<32x16xf32, 3>
// CHECK: memref.load %[[Q]]
// CHECK: memref.load %[[Q]]
// CHECK: %[[FIRST:.+]] = arith.floordivsi
// CHECK: arith.floordivsi
// CHECK: %[[END:.+]] = arith.maxsi {{.*}}, %[[FIRST]]
// CHECK: scf.for %{{.+}} = %[[FIRST]] to %[[END]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[K]]
// CHECK: memref.store {{.*}}, %[[KSH]]
// CHECK: memref.store {{.*}}, %[[VSH]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load %[[KSH]]
// CHECK: math.fma
// CHECK: memref.load %[[KSH]]
// CHECK: math.fma
// CHECK: gpu.subgroup_reduce add
// CHECK: math.exp
// CHECK: math.exp
// CHECK: memref.load %[[VSH]]
// CHECK: gpu.terminator
// CHECK: bufferization.to_tensor %[[O]] restrict writable
// ATTR-LABEL: func @local
// ATTR: gpu.launch
// ATTR-SAME: workgroup(%{{.+}} : memref<64x16xf32, 3>, %{{.+}} : memref<64x16xf32, 3>)
// ATTR-NOT: memref.alloc() : memref<{{.*}}, 3>
// ATTR: gpu.subgroup_reduce add
func.func @local(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 8 : i64, window_right = 0 : i64} : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %o : tensor<1x2x128x16xf32>
}

// -----

// Tensors the score reads (padding lengths, a captured document-id tensor
// of a mask_mod) are read from buffers inside the kernel; the lse result is
// a second buffer, written by lane 0 of each row.
// CHECK-LABEL: func @padding_documents
// CHECK: memref.alloc() : memref<2x2x40xf32>
// CHECK-DAG: bufferization.to_buffer %arg3 read_only : tensor<2xi32>
// CHECK-DAG: bufferization.to_buffer %arg4 read_only : tensor<2x40xi32>
// CHECK: gpu.launch
// CHECK-NOT: tensor.extract
// CHECK: gpu.terminator
// CHECK: bufferization.to_tensor {{.*}} : memref<2x2x40x16xf32> to tensor<2x2x40x16xf32>
// CHECK: bufferization.to_tensor {{.*}} : memref<2x2x40xf32> to tensor<2x2x40xf32>
func.func @padding_documents(%q: tensor<2x2x40x16xf32>, %k: tensor<2x2x40x16xf32>, %v: tensor<2x2x40x16xf32>, %len: tensor<2xi32>, %doc: tensor<2x40xi32>) -> (tensor<2x2x40x16xf32>, tensor<2x2x40xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len) : (tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>, tensor<2xi32>) -> (tensor<2x2x40x16xf32>, tensor<2x2x40xf32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %doc[%b, %i] : tensor<2x40xi32>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x40xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    }
  return %o, %l : tensor<2x2x40x16xf32>, tensor<2x2x40xf32>
}

// -----

// A mask_mod region's tile classes (the same interval analysis as the CPU
// tiling): a key tile the region leaves empty for every row of the
// workgroup is skipped, barriers and all, the state passing through.
// CHECK-LABEL: func @causal_region
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: %[[VISIT:.+]] = arith.xori
// CHECK: scf.if %[[VISIT]]
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: gpu.subgroup_reduce add
// CHECK: } else {
// CHECK-NEXT: scf.yield
// CHECK: gpu.terminator
func.func @causal_region(%q: tensor<1x1x128x16xf32>, %k: tensor<1x1x128x16xf32>, %v: tensor<1x1x128x16xf32>) -> tensor<1x1x128x16xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x128x16xf32>, tensor<1x1x128x16xf32>, tensor<1x1x128x16xf32>) -> tensor<1x1x128x16xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %le = arith.cmpi ule, %j, %i : index
      attn.yield %le : i1
    }
  return %o : tensor<1x1x128x16xf32>
}
