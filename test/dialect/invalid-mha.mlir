// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One test per attn.mha verifier message (the mask options are shared with
// attn.sdpa and tested in invalid-sdpa.mlir; one case shows the head dim).

func.func @f(%x: tensor<8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects query to be rank 3 (B x Lq x D), got rank 2}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64} : (tensor<8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x?xf32>, %kv: tensor<2x8x?xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects a static model dim D (query dim 2)}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64} : (tensor<2x8x?xf32>, tensor<2x8x?xf32>, tensor<2x8x?xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x?xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x6x12xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects key of shape B x Lk x D = 2x6x16, got 2x6x12}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64} : (tensor<2x8x16xf32>, tensor<2x6x12xf32>, tensor<2x6x12xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects num_heads and num_kv_heads > 0, got 0 and 0}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 0 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects num_heads (3) to divide the model dim D (16)}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 3 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects num_kv_heads (3) to divide num_heads (4)}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64, num_kv_heads = 3 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<40x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects in_proj_weight of shape (D + 2*Hkv*hd) x D = 48x16, got 40x16}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<40x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects in_proj_bias of shape D + 2*Hkv*hd = 32, got 48}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64, num_kv_heads = 2 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<32x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x8xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects out_proj_weight of shape D x D = 16x16, got 16x8}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<8xf32>) {
  // expected-error @+1 {{expects out_proj_bias of shape D = 16, got 8}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<8xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{expects output of shape B x Lq x D = 2x8x16, got 2x8x8}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %wo: tensor<16x16xf16>) {
  // expected-error @+1 {{expects out_proj_weight to have element type 'f32', got 'f16'}}
  %y = attn.mha %x, %kv, %kv in_proj(%w) out_proj(%wo) {num_heads = 4 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<16x16xf16>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x16xf32>, %kv: tensor<2x8x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>, %a0: tensor<5x16xf32>) {
  // expected-error @+1 {{expects rel_key of shape (2*rel_clip+1) x E = 5x4, got 5x16}}
  %y = attn.mha %x, %kv, %kv in_proj(%w, %b) out_proj(%wo, %bo) rel_key(%a0) {num_heads = 4 : i64, rel_clip = 2 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<5x16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<1x0x8xf32>, %w: tensor<24x8xf32>, %wo: tensor<8x8xf32>) -> tensor<1x0x8xf32> {
  // expected-error @+1 {{'attn.mha' op expects query without zero-size dimensions (empty attention is not supported), got 'tensor<1x0x8xf32>'}}
  %y = attn.mha %x, %x, %x in_proj(%w) out_proj(%wo) {num_heads = 2 : i64}
      : (tensor<1x0x8xf32>, tensor<1x0x8xf32>, tensor<1x0x8xf32>, tensor<24x8xf32>, tensor<8x8xf32>) -> tensor<1x0x8xf32>
  return %y : tensor<1x0x8xf32>
}

// -----

// D + 2*Hkv*hd past int64 (D = 2^62, one head: 3 * 2^62).
func.func @f(%x: tensor<2x8x4611686018427387904xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) {
  // expected-error @+1 {{D + 2*Hkv*hd overflows int64 for D = 4611686018427387904, Hkv = 1}}
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 1 : i64} : (tensor<2x8x4611686018427387904xf32>, tensor<2x8x4611686018427387904xf32>, tensor<2x8x4611686018427387904xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x4611686018427387904xf32>
  return
}
