// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=x86-64-v4 threads=1" --mlir-disable-threading --mlir-print-ir-after=buffer-loop-hoisting -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=x86-64-v4 threads=2" --mlir-disable-threading --mlir-print-ir-after=buffer-loop-hoisting -o /dev/null 2>&1 | FileCheck %s

// The buffers of a query tile's temporaries (scores, probabilities, row
// statistics; a causal diagonal tile's masked scores) are allocated once
// per query tile, in the scf.forall body that its thread runs, not once per
// key tile: buffer-hoisting and buffer-loop-hoisting move them out of the
// key loop and its conditional regions after bufferization (a malloc and a
// free per key tile otherwise), but not out of the scf.forall, whose
// iterations run on different threads. (--mlir-disable-threading: the
// functions' dumps in source order.)

// CHECK-LABEL: func.func @dense
// CHECK-NOT: memref.alloc() {{.*}} : memref<64x64xf32>
// CHECK: scf.forall
// CHECK: memref.alloc() {{.*}} : memref<64x64xf32>
// The key loop, the running row max carried in registers, the row sums
// in 16 lanes per row (x86-64-v4's f32 vectors), the accumulator in the
// two parts of its rows that x86-64-v4's 6 x 64 register tiles split it
// into (60 + 4).
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> ({{.*}}vector<64xf32>{{.*}})
// CHECK-NOT: memref.alloc
// CHECK: scf.yield {{.*}} : memref<64x16xf32>, vector<64xf32>, memref<60x64xf32>, memref<4x64xf32, {{.*}}>
func.func @dense(%q: tensor<1x1x256x64xf32>, %k: tensor<1x1x256x64xf32>,
                 %v: tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32>,
                               tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32>
  return %o : tensor<1x1x256x64xf32>
}

// Causal: the key loop visits the tiles up to the diagonal, whose scores are
// masked in an scf.if; their buffer is allocated before the loop too.
// CHECK-LABEL: func.func @causal
// CHECK-NOT: memref.alloc() {{.*}} : memref<64x64xf32>
// CHECK: scf.forall
// CHECK: memref.alloc() {{.*}} : memref<64x64xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> ({{.*}}vector<64xf32>{{.*}})
// CHECK-NOT: memref.alloc
// CHECK: scf.if
// CHECK-NOT: memref.alloc
// CHECK: scf.yield {{.*}} : memref<64x16xf32>, vector<64xf32>, memref<60x64xf32>, memref<4x64xf32, {{.*}}>
func.func @causal(%q: tensor<1x1x256x64xf32>, %k: tensor<1x1x256x64xf32>,
                  %v: tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
       : (tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32>,
          tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32>
  return %o : tensor<1x1x256x64xf32>
}
