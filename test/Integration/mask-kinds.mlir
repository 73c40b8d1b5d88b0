// Every positional mask kind at sizes where tiles are full, partial and
// empty (L in the hundreds, E = 64 and 128, lengths the tiles do not divide,
// Lq != Lk, padding), through the reference lowering and the tiled CPU
// pipeline (default and odd tiles on two threads), against the C++ oracle.
// The kinds' meaning comes from dialect/MaskKinds.cpp for every lowering and
// from lib/Runtime/Reference.cpp, independently, for the oracle.
//
// RUN: attn-run %s --all --check --pipeline attn-reference-pipeline | FileCheck %s
// RUN: attn-run %s --all --check | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{block-q=24 block-k=40 threads=2}" | FileCheck %s

// CHECK-LABEL: attn-run: @causal_300
// CHECK: CHECK PASSED
func.func @causal_300(%q: tensor<1x2x300x64xf32>, %k: tensor<1x2x300x64xf32>, %v: tensor<1x2x300x64xf32>) -> tensor<1x2x300x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32>) -> tensor<1x2x300x64xf32>
  return %o : tensor<1x2x300x64xf32>
}

// Chunked prefill: 130 new rows against 333 keys, bottom-right aligned.
// CHECK-LABEL: attn-run: @causal_chunk_e128
// CHECK: CHECK PASSED
func.func @causal_chunk_e128(%q: tensor<1x2x130x128xf32>, %k: tensor<1x2x333x128xf32>, %v: tensor<1x2x333x128xf32>) -> tensor<1x2x130x128xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x130x128xf32>, tensor<1x2x333x128xf32>, tensor<1x2x333x128xf32>) -> tensor<1x2x130x128xf32>
  return %o : tensor<1x2x130x128xf32>
}

// CHECK-LABEL: attn-run: @local_257_padding
// CHECK: CHECK PASSED
func.func @local_257_padding(%q: tensor<2x2x257x64xf32>, %k: tensor<2x2x257x64xf32>, %v: tensor<2x2x257x64xf32>, %len: tensor<2xi32>) -> tensor<2x2x257x64xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<local>, window_left = 70 : i64, window_right = 33 : i64}
      : (tensor<2x2x257x64xf32>, tensor<2x2x257x64xf32>, tensor<2x2x257x64xf32>, tensor<2xi32>) -> tensor<2x2x257x64xf32>
  return %o : tensor<2x2x257x64xf32>
}

// CHECK-LABEL: attn-run: @causal_local_e128
// CHECK: CHECK PASSED
func.func @causal_local_e128(%q: tensor<1x2x200x128xf32>, %k: tensor<1x2x200x128xf32>, %v: tensor<1x2x200x128xf32>) -> tensor<1x2x200x128xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal_local>, window_left = 96 : i64}
      : (tensor<1x2x200x128xf32>, tensor<1x2x200x128xf32>, tensor<1x2x200x128xf32>) -> tensor<1x2x200x128xf32>
  return %o : tensor<1x2x200x128xf32>
}

// Every third key of a +-90 window (LongNet / dilated sliding window).
// CHECK-LABEL: attn-run: @dilated_3
// CHECK: CHECK PASSED
func.func @dilated_3(%q: tensor<1x2x250x64xf32>, %k: tensor<1x2x250x64xf32>, %v: tensor<1x2x250x64xf32>) -> tensor<1x2x250x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<dilated>, window_left = 90 : i64, window_right = 90 : i64, dilation = 3 : i64}
      : (tensor<1x2x250x64xf32>, tensor<1x2x250x64xf32>, tensor<1x2x250x64xf32>) -> tensor<1x2x250x64xf32>
  return %o : tensor<1x2x250x64xf32>
}

// Dilated, one-sided (a causal dilated window), grouped-query heads, Lq < Lk,
// with the lse.
// CHECK-LABEL: attn-run: @dilated_causal_gqa_lse
// CHECK: CHECK PASSED
func.func @dilated_causal_gqa_lse(%q: tensor<1x4x96x128xf32>, %k: tensor<1x2x301x128xf32>, %v: tensor<1x2x301x128xf32>) -> (tensor<1x4x96x128xf32>, tensor<1x4x96xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<dilated>, window_left = 160 : i64, window_right = 0 : i64, dilation = 2 : i64}
      : (tensor<1x4x96x128xf32>, tensor<1x2x301x128xf32>, tensor<1x2x301x128xf32>) -> (tensor<1x4x96x128xf32>, tensor<1x4x96xf32>)
  return %o, %l : tensor<1x4x96x128xf32>, tensor<1x4x96xf32>
}

// A dilation of 1 is the plain window, with full tiles.
// CHECK-LABEL: attn-run: @dilated_1
// CHECK: CHECK PASSED
func.func @dilated_1(%q: tensor<1x1x190x64xf32>, %k: tensor<1x1x190x64xf32>, %v: tensor<1x1x190x64xf32>) -> tensor<1x1x190x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<dilated>, window_left = 64 : i64, window_right = 64 : i64, dilation = 1 : i64}
      : (tensor<1x1x190x64xf32>, tensor<1x1x190x64xf32>, tensor<1x1x190x64xf32>) -> tensor<1x1x190x64xf32>
  return %o : tensor<1x1x190x64xf32>
}

// attn.mha forwards every mask parameter to its attn.sdpa.
// CHECK-LABEL: attn-run: @mha_dilated
// CHECK: CHECK PASSED
func.func @mha_dilated(%x: tensor<2x150x64xf32>, %w: tensor<192x64xf32>, %b: tensor<192xf32>, %wo: tensor<64x64xf32>, %bo: tensor<64xf32>) -> tensor<2x150x64xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64, mask = #attn.mask<dilated>, window_left = 40 : i64, window_right = 40 : i64, dilation = 4 : i64}
      : (tensor<2x150x64xf32>, tensor<2x150x64xf32>, tensor<2x150x64xf32>, tensor<192x64xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x150x64xf32>
  return %y : tensor<2x150x64xf32>
}

// A window near 2^63 reaches every key (no wrap-around in the key span or
// the predicate), with Lq > Lk so positions are negative.
// CHECK-LABEL: attn-run: @huge_windows
// CHECK: CHECK PASSED
func.func @huge_windows(%q: tensor<1x1x150x64xf32>, %k: tensor<1x1x100x64xf32>, %v: tensor<1x1x100x64xf32>) -> tensor<1x1x150x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 9223372036854775807 : i64, window_right = 9223372036854775807 : i64}
      : (tensor<1x1x150x64xf32>, tensor<1x1x100x64xf32>, tensor<1x1x100x64xf32>) -> tensor<1x1x150x64xf32>
  return %o : tensor<1x1x150x64xf32>
}
