// RUN: attn-run %s --all --check --pipeline attn-reference-pipeline | FileCheck %s
// RUN: attn-run %s --all --check | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{block-q=4 block-k=3 threads=2}" | FileCheck %s

// attn.mha through attn-decompose-mha and the reference lowering or the tiled
// CPU pipeline, against the C++ reference (its own projections and sdpa loops).

// PyTorch MultiheadAttention layout (in_proj [3D, D]).
// CHECK-LABEL: attn-run: @self_dense
// CHECK: CHECK PASSED
func.func @self_dense(%x: tensor<2x9x24xf32>, %w: tensor<72x24xf32>, %b: tensor<72xf32>, %wo: tensor<24x24xf32>, %bo: tensor<24xf32>) -> tensor<2x9x24xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64}
      : (tensor<2x9x24xf32>, tensor<2x9x24xf32>, tensor<2x9x24xf32>, tensor<72x24xf32>, tensor<72xf32>, tensor<24x24xf32>, tensor<24xf32>) -> tensor<2x9x24xf32>
  return %y : tensor<2x9x24xf32>
}

// CHECK-LABEL: attn-run: @self_causal_gqa
// CHECK: CHECK PASSED
func.func @self_causal_gqa(%x: tensor<1x11x32xf32>, %w: tensor<48x32xf32>, %b: tensor<48xf32>, %wo: tensor<32x32xf32>, %bo: tensor<32xf32>) -> tensor<1x11x32xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 8 : i64, num_kv_heads = 2 : i64, mask = #attn.mask<causal>}
      : (tensor<1x11x32xf32>, tensor<1x11x32xf32>, tensor<1x11x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<1x11x32xf32>
  return %y : tensor<1x11x32xf32>
}

// CHECK-LABEL: attn-run: @cross_padding_no_bias
// CHECK: CHECK PASSED
func.func @cross_padding_no_bias(%x: tensor<3x5x16xf32>, %kv: tensor<3x13x16xf32>, %w: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %len: tensor<3xi32>) -> tensor<3x5x16xf32> {
  %y = attn.mha %x, %kv, %kv in_proj(%w) out_proj(%wo) kv_lengths(%len) {num_heads = 2 : i64}
      : (tensor<3x5x16xf32>, tensor<3x13x16xf32>, tensor<3x13x16xf32>, tensor<48x16xf32>, tensor<16x16xf32>, tensor<3xi32>) -> tensor<3x5x16xf32>
  return %y : tensor<3x5x16xf32>
}

// CHECK-LABEL: attn-run: @alibi_relbias_local
// CHECK: CHECK PASSED
func.func @alibi_relbias_local(%x: tensor<1x10x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>, %rb: tensor<4x5xf32>, %s: tensor<4xf32>) -> tensor<1x10x16xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) rel_bias(%rb) alibi(%s) {num_heads = 4 : i64, mask = #attn.mask<local>, window_left = 3 : i64, window_right = 1 : i64, rel_clip = 2 : i64}
      : (tensor<1x10x16xf32>, tensor<1x10x16xf32>, tensor<1x10x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<1x10x16xf32>
  return %y : tensor<1x10x16xf32>
}

// CHECK-LABEL: attn-run: @graph_mask
// CHECK: CHECK PASSED
func.func @graph_mask(%x: tensor<1x8x12xf32>, %w: tensor<36x12xf32>, %b: tensor<36xf32>, %wo: tensor<12x12xf32>, %bo: tensor<12xf32>, %rp: tensor<9xi32>, %ci: tensor<20xi32>) -> tensor<1x8x12xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) graph(%rp, %ci) {num_heads = 3 : i64, mask = #attn.mask<graph>}
      : (tensor<1x8x12xf32>, tensor<1x8x12xf32>, tensor<1x8x12xf32>, tensor<36x12xf32>, tensor<36xf32>, tensor<12x12xf32>, tensor<12xf32>, tensor<9xi32>, tensor<20xi32>) -> tensor<1x8x12xf32>
  return %y : tensor<1x8x12xf32>
}
