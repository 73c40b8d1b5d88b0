// RUN: attn-opt %s --split-input-file --attn-simplify-masks | FileCheck %s

// A window wider than the sequence is dense.

// CHECK-LABEL: func @covering
// CHECK-NOT: #attn.mask
// CHECK-NOT: window_
// CHECK: return
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

// A causal window over 4 rows masks keys above the diagonal: unchanged.

// CHECK-LABEL: func @causal_local
// CHECK: mask = #attn.mask<causal_local>
func.func @causal_local(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q {mask = #attn.mask<causal_local>, window_left = 64 : i64}
      : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// Every positional kind asks its own definition: one causal query row (a
// decode step, at the last key position) sees every key, as does a causal
// window reaching back to key 0; a dilation of 1 is a plain window.

// CHECK-LABEL: func @decode_and_dilation_one
// CHECK-NOT: #attn.mask
// CHECK-NOT: window_
// CHECK-NOT: dilation
// CHECK: return
func.func @decode_and_dilation_one(%q: tensor<1x1x1x8xf32>, %k: tensor<1x1x10x8xf32>, %q4: tensor<1x1x4x8xf32>)
    -> (tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>, tensor<1x1x4x8xf32>) {
  %o1 = attn.sdpa %q, %k, %k {mask = #attn.mask<causal>}
      : (tensor<1x1x1x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>) -> tensor<1x1x1x8xf32>
  %o2 = attn.sdpa %q, %k, %k {mask = #attn.mask<causal_local>, window_left = 9 : i64}
      : (tensor<1x1x1x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>) -> tensor<1x1x1x8xf32>
  %o3 = attn.sdpa %q4, %k, %k {mask = #attn.mask<dilated>, window_left = 9 : i64, window_right = 3 : i64, dilation = 1 : i64}
      : (tensor<1x1x4x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>) -> tensor<1x1x4x8xf32>
  return %o1, %o2, %o3 : tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>, tensor<1x1x4x8xf32>
}

// -----

// A dilated window skips keys however wide it is; graph masks are data.

// CHECK-LABEL: func @dilated_and_graph
// CHECK: mask = #attn.mask<dilated>
// CHECK: mask = #attn.mask<graph>
func.func @dilated_and_graph(%q: tensor<1x1x4x8xf32>, %rp: tensor<5xi32>, %ci: tensor<16xi32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  %o1 = attn.sdpa %q, %q, %q {mask = #attn.mask<dilated>, window_left = 64 : i64, window_right = 64 : i64, dilation = 2 : i64}
      : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %o2 = attn.sdpa %q, %q, %q graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<5xi32>, tensor<16xi32>) -> tensor<1x1x4x8xf32>
  return %o1, %o2 : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// -----

// Top-left, 4 queries over 10 keys: causal row 3 sees keys 0..3 only, so
// nothing folds; a window reaching 9 keys right of row 0 and 3 left of row 3
// covers everything.

// CHECK-LABEL: func @top_left
// CHECK: {align = #attn.align<top_left>, mask = #attn.mask<causal>}
// CHECK-NOT: #attn.mask<local>
// CHECK: return
func.func @top_left(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x10x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  %o1 = attn.sdpa %q, %k, %k {mask = #attn.mask<causal>, align = #attn.align<top_left>}
      : (tensor<1x1x4x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>) -> tensor<1x1x4x8xf32>
  %o2 = attn.sdpa %q, %k, %k {mask = #attn.mask<local>, window_left = 3 : i64, window_right = 9 : i64, align = #attn.align<top_left>}
      : (tensor<1x1x4x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>) -> tensor<1x1x4x8xf32>
  return %o1, %o2 : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}
