// RUN: attn-opt %s --split-input-file --attn-gat-to-gpu="subgroup-size=8 rows=4" | FileCheck %s

// The projection stays a contraction on tensors; the kernel: grid
// ceil(34 / 4) nodes, workgroups of 8 lanes x 4 nodes; per head a loop over
// the node's CSR entries with subgroup sums of the scores and an online
// softmax; heads concatenated into a 34 x 32 buffer read back as a tensor.
// CHECK-LABEL: func @concat
// CHECK: linalg.generic
// CHECK: %[[Z:.+]] = bufferization.to_buffer {{.*}} read_only : tensor<34x32xf32>
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<34x32xf32>
// CHECK: %[[G:.+]] = arith.constant 9 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[G]],
// CHECK: scf.for {{.*}} iter_args
// CHECK: gpu.subgroup_reduce add
// CHECK: scf.for
// CHECK: memref.load %[[Z]]
// CHECK: gpu.subgroup_reduce add
// CHECK: math.exp
// CHECK: memref.store {{.*}}, %[[OUT]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @concat(%x: tensor<34x16xf32>, %w: tensor<32x16xf32>, %as: tensor<4x8xf32>, %ad: tensor<4x8xf32>, %rp: tensor<35xi32>, %ci: tensor<156xi32>, %b: tensor<32xf32>) -> tensor<34x32xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b)
      : (tensor<34x16xf32>, tensor<32x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<35xi32>, tensor<156xi32>, tensor<32xf32>) -> tensor<34x32xf32>
  return %y : tensor<34x32xf32>
}

// -----

// Averaged heads: the head loop carries the mean; one store after it.
// CHECK-LABEL: func @mean
// CHECK: memref.alloc() : memref<10x8xf32>
// CHECK: gpu.launch
// CHECK: %[[MEAN:.+]] = scf.for {{.*}} -> (f32)
// CHECK: scf.if
// CHECK: memref.store %[[MEAN]]
func.func @mean(%x: tensor<10x8xf32>, %w: tensor<16x8xf32>, %as: tensor<2x8xf32>, %ad: tensor<2x8xf32>, %rp: tensor<11xi64>, %ci: tensor<30xi64>) -> tensor<10x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<11xi64>, tensor<30xi64>) -> tensor<10x8xf32>
  return %y : tensor<10x8xf32>
}

// -----

// A layer that returns its per-edge coefficients stays on the CPU (the
// unfused lowering of attn-lower-to-linalg, after this pass).
// CHECK-LABEL: func @returns_alpha
// CHECK-NOT: gpu.launch
// CHECK: attn.gat
func.func @returns_alpha(%x: tensor<10x8xf32>, %w: tensor<16x8xf32>, %as: tensor<2x8xf32>, %ad: tensor<2x8xf32>, %rp: tensor<11xi64>, %ci: tensor<30xi64>) -> (tensor<10x16xf32>, tensor<40x2xf32>) {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<11xi64>, tensor<30xi64>) -> (tensor<10x16xf32>, tensor<40x2xf32>)
  return %y, %alpha : tensor<10x16xf32>, tensor<40x2xf32>
}

// -----

// attn.gatv2 has no GPU kernel: it stays for the CPU lowering.
// CHECK-LABEL: func @gatv2
// CHECK-NOT: gpu.launch
// CHECK: attn.gatv2
func.func @gatv2(%x: tensor<10x8xf32>, %w: tensor<16x8xf32>, %att: tensor<2x8xf32>, %rp: tensor<11xi64>, %ci: tensor<30xi64>) -> tensor<10x16xf32> {
  %y = attn.gatv2 %x, %w, %w, %att graph(%rp, %ci)
      : (tensor<10x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<11xi64>, tensor<30xi64>) -> tensor<10x16xf32>
  return %y : tensor<10x16xf32>
}


// -----

// Edge attributes: no GPU kernel; the layer stays for the CPU lowering.
// CHECK-LABEL: func @edge_attributes
// CHECK-NOT: gpu.launch
// CHECK: attn.gat
func.func @edge_attributes(%x: tensor<10x8xf32>, %w: tensor<16x8xf32>, %as: tensor<2x8xf32>, %ad: tensor<2x8xf32>, %rp: tensor<11xi64>, %ci: tensor<30xi64>, %ea: tensor<30x3xf32>, %we: tensor<16x3xf32>) -> tensor<10x16xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) edge(%ea, %we, %as)
      : (tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<11xi64>, tensor<30xi64>, tensor<30x3xf32>, tensor<16x3xf32>, tensor<2x8xf32>) -> tensor<10x16xf32>
  return %y : tensor<10x16xf32>
}
