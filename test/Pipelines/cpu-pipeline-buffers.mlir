// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=x86-64-v4 threads=1" --mlir-print-ir-after=buffer-loop-hoisting -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=x86-64-v4 threads=2" --mlir-print-ir-after=buffer-loop-hoisting -o /dev/null 2>&1 | FileCheck %s

// The buffers of a query tile's temporaries (scores, probabilities, row
// statistics) are allocated once per query tile, in the scf.forall body
// that its thread runs, not once per key tile: buffer-loop-hoisting moves
// them out of the key loop after bufferization (a malloc and a free per
// key tile otherwise), but not out of the scf.forall, whose iterations run
// on different threads.

// CHECK-LABEL: func.func @dense
// CHECK: scf.forall
// CHECK: memref.alloc() {{.*}} : memref<64x64xf32>
// The key loop: four key tiles, the running row max carried in registers.
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args({{.*}}) -> ({{.*}}vector<64xf32>)
// CHECK-NOT: memref.alloc
// CHECK: scf.yield {{.*}} : memref<64xf32>, memref<64x64xf32>, vector<64xf32>
func.func @dense(%q: tensor<1x1x256x64xf32>, %k: tensor<1x1x256x64xf32>,
                 %v: tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32>,
                               tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32>
  return %o : tensor<1x1x256x64xf32>
}
