// RUN: attn-opt %s --split-input-file --attn-simplify-masks | FileCheck %s

// A window wider than the sequence is dense.

// CHECK-LABEL: func @covering
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} : (
// CHECK-NOT: window_
func.func @covering(%q: tensor<1x1x16x8xf32>, %k: tensor<1x1x16x8xf32>, %v: tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 64 : i64, window_right = 64 : i64}
      : (tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
  return %o : tensor<1x1x16x8xf32>
}

// -----

// Exactly covering with Lq = 4 < Lk = 10: rows sit at positions 6..9; left
// must reach key 0 from position 9 (9), right key 9 from position 6 (3).

// CHECK-LABEL: func @exactly_covering_decode
// CHECK-NOT: mask = #attn.mask<local>
func.func @exactly_covering_decode(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x10x8xf32>, %v: tensor<1x1x10x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 9 : i64, window_right = 3 : i64}
      : (tensor<1x1x4x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// One short of covering on either side: unchanged.

// CHECK-LABEL: func @not_covering
// CHECK: {mask = #attn.mask<local>, window_left = 8 : i64, window_right = 3 : i64}
// CHECK: {mask = #attn.mask<local>, window_left = 9 : i64, window_right = 2 : i64}
func.func @not_covering(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x10x8xf32>, %v: tensor<1x1x10x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  %o1 = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 8 : i64, window_right = 3 : i64}
      : (tensor<1x1x4x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>) -> tensor<1x1x4x8xf32>
  %o2 = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 9 : i64, window_right = 2 : i64}
      : (tensor<1x1x4x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>) -> tensor<1x1x4x8xf32>
  return %o1, %o2 : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// -----

// Other masks are left alone.

// CHECK-LABEL: func @causal_local
// CHECK: mask = #attn.mask<causal_local>
func.func @causal_local(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q {mask = #attn.mask<causal_local>, window_left = 64 : i64}
      : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}
