// RUN: attn-run %s --all --check --pipeline "attn-simplify-masks,attn-reference-pipeline" | FileCheck %s

// The rewritten (dense) ops still compute what the original local masks mean:
// the C++ reference evaluates the original IR.

// CHECK-LABEL: attn-run: @exactly_covering_decode
// CHECK: CHECK PASSED
func.func @exactly_covering_decode(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x10x8xf32>, %v: tensor<1x2x10x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 9 : i64, window_right = 3 : i64}
      : (tensor<1x2x4x8xf32>, tensor<1x2x10x8xf32>, tensor<1x2x10x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// CHECK-LABEL: attn-run: @not_covering
// CHECK: CHECK PASSED
func.func @not_covering(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x10x8xf32>, %v: tensor<1x2x10x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 9 : i64, window_right = 2 : i64}
      : (tensor<1x2x4x8xf32>, tensor<1x2x10x8xf32>, tensor<1x2x10x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
