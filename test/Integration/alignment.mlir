// Query positions (`align`): bottom-right (the default), top-left (PyTorch's
// is_causal) and per-sequence (against each batch's kv_lengths), with Lq !=
// Lk, through the reference lowering and the tiled CPU pipeline (default and
// odd tiles on two threads), against the C++ oracle.
//
// RUN: attn-run %s --all --check --pipeline attn-reference-pipeline | FileCheck %s
// RUN: attn-run %s --all --check | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{block-q=24 block-k=40 threads=2}" | FileCheck %s

// Top-left causal, fewer queries than keys: row i sees keys 0..i (PyTorch
// is_causal=True), not the last keys.
// CHECK-LABEL: attn-run: @causal_top_left_short
// CHECK: CHECK PASSED
func.func @causal_top_left_short(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x260x64xf32>, %v: tensor<1x2x260x64xf32>) -> (tensor<1x2x100x64xf32>, tensor<1x2x100xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>, align = #attn.align<top_left>}
      : (tensor<1x2x100x64xf32>, tensor<1x2x260x64xf32>, tensor<1x2x260x64xf32>) -> (tensor<1x2x100x64xf32>, tensor<1x2x100xf32>)
  return %o, %l : tensor<1x2x100x64xf32>, tensor<1x2x100xf32>
}

// Top-left causal, more queries than keys: the last rows see every key.
// CHECK-LABEL: attn-run: @causal_top_left_long
// CHECK: CHECK PASSED
func.func @causal_top_left_long(%q: tensor<1x2x230x64xf32>, %k: tensor<1x2x150x64xf32>, %v: tensor<1x2x150x64xf32>) -> tensor<1x2x230x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>, align = #attn.align<top_left>}
      : (tensor<1x2x230x64xf32>, tensor<1x2x150x64xf32>, tensor<1x2x150x64xf32>) -> tensor<1x2x230x64xf32>
  return %o : tensor<1x2x230x64xf32>
}

// Per-sequence: a padded batch of chunks, each the last rows of its own
// sequence (chunked prefill): row i of batch b sits at i + len[b] - Lq.
// CHECK-LABEL: attn-run: @causal_per_sequence
// CHECK: CHECK PASSED
func.func @causal_per_sequence(%q: tensor<3x2x64x128xf32>, %k: tensor<3x2x300x128xf32>, %v: tensor<3x2x300x128xf32>, %len: tensor<3xi32>) -> tensor<3x2x64x128xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<causal>, align = #attn.align<per_sequence>}
      : (tensor<3x2x64x128xf32>, tensor<3x2x300x128xf32>, tensor<3x2x300x128xf32>, tensor<3xi32>) -> tensor<3x2x64x128xf32>
  return %o : tensor<3x2x64x128xf32>
}

// Every positional term follows the alignment: a local window, relative
// bias and ALiBi, top-left.
// CHECK-LABEL: attn-run: @local_relbias_alibi_top_left
// CHECK: CHECK PASSED
func.func @local_relbias_alibi_top_left(%q: tensor<1x4x90x64xf32>, %k: tensor<1x4x210x64xf32>, %v: tensor<1x4x210x64xf32>, %rb: tensor<4x33xf32>, %s: tensor<4xf32>) -> tensor<1x4x90x64xf32> {
  %o = attn.sdpa %q, %k, %v rel_bias(%rb) alibi(%s) {mask = #attn.mask<local>, window_left = 40 : i64, window_right = 70 : i64, rel_clip = 16 : i64, align = #attn.align<top_left>}
      : (tensor<1x4x90x64xf32>, tensor<1x4x210x64xf32>, tensor<1x4x210x64xf32>, tensor<4x33xf32>, tensor<4xf32>) -> tensor<1x4x90x64xf32>
  return %o : tensor<1x4x90x64xf32>
}

// Per-sequence with a dilated window and attn.mha forwarding the alignment.
// CHECK-LABEL: attn-run: @mha_dilated_per_sequence
// CHECK: CHECK PASSED
func.func @mha_dilated_per_sequence(%x: tensor<2x48x64xf32>, %kv: tensor<2x160x64xf32>, %w: tensor<192x64xf32>, %wo: tensor<64x64xf32>, %len: tensor<2xi32>) -> tensor<2x48x64xf32> {
  %y = attn.mha %x, %kv, %kv in_proj(%w) out_proj(%wo) kv_lengths(%len) {num_heads = 4 : i64, mask = #attn.mask<dilated>, window_left = 60 : i64, window_right = 0 : i64, dilation = 2 : i64, align = #attn.align<per_sequence>}
      : (tensor<2x48x64xf32>, tensor<2x160x64xf32>, tensor<2x160x64xf32>, tensor<192x64xf32>, tensor<64x64xf32>, tensor<2xi32>) -> tensor<2x48x64xf32>
  return %y : tensor<2x48x64xf32>
}
