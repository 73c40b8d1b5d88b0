// RUN: attn-opt %s --attn-reference-pipeline | FileCheck %s
// RUN: attn-opt %s --attn-reference-pipeline="out-params=false" | FileCheck %s --check-prefix=RESULTS
// RUN: attn-opt %s --attn-reference-pipeline="linalg-only=true" | FileCheck %s --check-prefix=LINALG

// With linalg-only the pipeline stops after the reference lowering.
// LINALG-LABEL: func.func @causal
// LINALG-NOT: attn.sdpa
// LINALG: linalg.generic
// LINALG-NOT: llvm.

// The reference pipeline takes attn IR all the way to the LLVM dialect. By
// default tensor results become trailing out-parameters (the JIT runtime's
// calling convention); with out-params=false they stay results.

// CHECK-NOT: attn.
// CHECK-NOT: linalg.
// CHECK-NOT: scf.
// CHECK-NOT: memref.
// CHECK-LABEL: llvm.func @causal
// The three inputs and the output are rank-4 memref descriptors (2 pointers,
// offset, 4 sizes, 4 strides = 11 values) and the lse out-parameter a rank-3
// one (9 values): 53 arguments and no result.
// CHECK-SAME: (%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, {{.*}}, %arg44: !llvm.ptr, {{.*}}, %arg52: i64)
// CHECK-DAG: llvm.intr.exp
// CHECK-DAG: llvm.intr.log
// CHECK-DAG: llvm.fdiv
// CHECK: llvm.return
// CHECK-NOT: attn.

// RESULTS-LABEL: llvm.func @causal
// RESULTS-SAME: -> !llvm.struct<(struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)>, struct<(ptr, ptr, i64, array<3 x i64>, array<3 x i64>)>)>
func.func @causal(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %o, %l : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
}
