// RUN: attn-run %s --all --check --pipeline attn-reference-pipeline | FileCheck %s
// RUN: attn-run %s --all --check | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{block-q=16 block-k=24 threads=2}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{vectorize=false}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{graph-edge-density=1}" | FileCheck %s
// RUN: attn-run %s --entry graph_bf16 --check --pipeline "attn-cpu-pipeline{graph-edge-density=0}" | FileCheck %s --check-prefix=TILES
// TILES: CHECK PASSED
// RUN: attn-run %s --all --check --pipeline "attn-lower-gat-unfused,attn-cpu-pipeline" | FileCheck %s
// bf16 tensors go out as exact f32 .npy files and come back in, rounded:
// RUN: rm -rf %t && mkdir -p %t/a %t/b
// RUN: attn-run %s --entry dense_bf16 --dump-dir %t/a > /dev/null
// RUN: attn-run %s --entry dense_bf16 --seed 9 --input 0=%t/a/arg0.npy --input 1=%t/a/arg1.npy --input 2=%t/a/arg2.npy --dump-dir %t/b --check | FileCheck %s --check-prefix=RELOAD
// RUN: %torch_python -c "import numpy as np; a, b = np.load('%t/a/result0.npy'), np.load('%t/b/result0.npy'); print('same', a.dtype, (a == b).all())" | FileCheck %s --check-prefix=SAME
// RELOAD: CHECK PASSED
// SAME: same float32 True

// f16 and bf16 attention: operands and results in the 16-bit type, scores,
// softmax and sums in f32 (every lowering widens the op first). The C++
// reference computes in double from the same rounded inputs and rounds its
// result once; attn-run allows two units in the last place of the result
// type (2^-6 of the result's scale for bf16, 2^-9 for f16). Sizes with full
// and partial tiles (L = 200, 130; E = 64, 128).

// Dense bf16 with lse, lengths the tiles do not divide.
// CHECK-LABEL: attn-run: @dense_bf16
// CHECK: CHECK PASSED
func.func @dense_bf16(%q: tensor<1x4x200x64xbf16>, %k: tensor<1x4x200x64xbf16>, %v: tensor<1x4x200x64xbf16>) -> (tensor<1x4x200x64xbf16>, tensor<1x4x200xbf16>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x4x200x64xbf16>, tensor<1x4x200x64xbf16>, tensor<1x4x200x64xbf16>) -> (tensor<1x4x200x64xbf16>, tensor<1x4x200xbf16>)
  return %o, %l : tensor<1x4x200x64xbf16>, tensor<1x4x200xbf16>
}

// f16, E = 128.
// CHECK-LABEL: attn-run: @dense_f16_e128
// CHECK: CHECK PASSED
func.func @dense_f16_e128(%q: tensor<1x2x130x128xf16>, %k: tensor<1x2x130x128xf16>, %v: tensor<1x2x130x128xf16>) -> tensor<1x2x130x128xf16> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x2x130x128xf16>, tensor<1x2x130x128xf16>, tensor<1x2x130x128xf16>) -> tensor<1x2x130x128xf16>
  return %o : tensor<1x2x130x128xf16>
}

// Causal GQA (4 query heads on 2 kv heads).
// CHECK-LABEL: attn-run: @causal_bf16_gqa
// CHECK: CHECK PASSED
func.func @causal_bf16_gqa(%q: tensor<2x4x200x64xbf16>, %k: tensor<2x2x200x64xbf16>, %v: tensor<2x2x200x64xbf16>) -> (tensor<2x4x200x64xbf16>, tensor<2x4x200xbf16>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<2x4x200x64xbf16>, tensor<2x2x200x64xbf16>, tensor<2x2x200x64xbf16>) -> (tensor<2x4x200x64xbf16>, tensor<2x4x200xbf16>)
  return %o, %l : tensor<2x4x200x64xbf16>, tensor<2x4x200xbf16>
}

// Causal with Lq != Lk (bottom-right aligned, a short query block against a long cache).
// CHECK-LABEL: attn-run: @causal_f16_decode
// CHECK: CHECK PASSED
func.func @causal_f16_decode(%q: tensor<1x2x7x64xf16>, %k: tensor<1x2x200x64xf16>, %v: tensor<1x2x200x64xf16>) -> tensor<1x2x7x64xf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x7x64xf16>, tensor<1x2x200x64xf16>, tensor<1x2x200x64xf16>) -> tensor<1x2x7x64xf16>
  return %o : tensor<1x2x7x64xf16>
}

// Sliding window.
// CHECK-LABEL: attn-run: @local_bf16
// CHECK: CHECK PASSED
func.func @local_bf16(%q: tensor<1x2x200x64xbf16>, %k: tensor<1x2x200x64xbf16>, %v: tensor<1x2x200x64xbf16>) -> tensor<1x2x200x64xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 40 : i64, window_right = 17 : i64}
      : (tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>) -> tensor<1x2x200x64xbf16>
  return %o : tensor<1x2x200x64xbf16>
}

// Padding (the last batch fully padded: o = 0, lse = -inf).
// CHECK-LABEL: attn-run: @padding_f16
// CHECK: CHECK PASSED
func.func @padding_f16(%q: tensor<2x2x130x64xf16>, %k: tensor<2x2x130x64xf16>, %v: tensor<2x2x130x64xf16>, %len: tensor<2xi32>) -> (tensor<2x2x130x64xf16>, tensor<2x2x130xf16>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len)
      : (tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16>, tensor<2xi32>) -> (tensor<2x2x130x64xf16>, tensor<2x2x130xf16>)
  return %o, %l : tensor<2x2x130x64xf16>, tensor<2x2x130xf16>
}

// Graph mask (CSR with empty rows and duplicates).
// CHECK-LABEL: attn-run: @graph_bf16
// CHECK: CHECK PASSED
func.func @graph_bf16(%q: tensor<1x2x130x64xbf16>, %k: tensor<1x2x130x64xbf16>, %v: tensor<1x2x130x64xbf16>, %rp: tensor<131xi32>, %ci: tensor<900xi32>) -> tensor<1x2x130x64xbf16> {
  %o = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x2x130x64xbf16>, tensor<1x2x130x64xbf16>, tensor<1x2x130x64xbf16>, tensor<131xi32>, tensor<900xi32>) -> tensor<1x2x130x64xbf16>
  return %o : tensor<1x2x130x64xbf16>
}

// Additive bias, relative bias and ALiBi in bf16.
// CHECK-LABEL: attn-run: @mods_bf16
// CHECK: CHECK PASSED
func.func @mods_bf16(%q: tensor<1x4x130x64xbf16>, %k: tensor<1x4x130x64xbf16>, %v: tensor<1x4x130x64xbf16>, %b: tensor<1x1x130x130xbf16>, %rb: tensor<4x17xbf16>, %s: tensor<4xbf16>) -> tensor<1x4x130x64xbf16> {
  %o = attn.sdpa %q, %k, %v bias(%b) rel_bias(%rb) alibi(%s) {mask = #attn.mask<causal>, rel_clip = 8 : i64}
      : (tensor<1x4x130x64xbf16>, tensor<1x4x130x64xbf16>, tensor<1x4x130x64xbf16>, tensor<1x1x130x130xbf16>, tensor<4x17xbf16>, tensor<4xbf16>) -> tensor<1x4x130x64xbf16>
  return %o : tensor<1x4x130x64xbf16>
}

// bf16 dot products (AVX512-BF16 targets: attn-tile keeps Q, K, V in bf16
// and rounds P to bf16; elsewhere widened like the rest): a scale that is
// not a power of two (E = 128, applied to the f32 scores), key lengths the
// 64-key tiles do not divide, an odd Lk below one tile (an 8-key tile with
// one padded key), and a score_mod region.
// CHECK-LABEL: attn-run: @scaled_bf16_e128
// CHECK: CHECK PASSED
func.func @scaled_bf16_e128(%q: tensor<1x2x67x128xbf16>, %k: tensor<1x2x131x128xbf16>, %v: tensor<1x2x131x128xbf16>) -> (tensor<1x2x67x128xbf16>, tensor<1x2x67xbf16>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x67x128xbf16>, tensor<1x2x131x128xbf16>, tensor<1x2x131x128xbf16>) -> (tensor<1x2x67x128xbf16>, tensor<1x2x67xbf16>)
  return %o, %l : tensor<1x2x67x128xbf16>, tensor<1x2x67xbf16>
}

// CHECK-LABEL: attn-run: @short_bf16
// CHECK: CHECK PASSED
func.func @short_bf16(%q: tensor<2x2x5x32xbf16>, %k: tensor<2x1x7x32xbf16>, %v: tensor<2x1x7x48xbf16>) -> tensor<2x2x5x48xbf16> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<2x2x5x32xbf16>, tensor<2x1x7x32xbf16>, tensor<2x1x7x48xbf16>) -> tensor<2x2x5x48xbf16>
  return %o : tensor<2x2x5x48xbf16>
}

// Small, odd shapes (Lk = 5 keys: one 16-key tile, 11 keys masked padding;
// Ev = 6 value columns: P V's tile is no whole dot product and is extended
// to f32), and an explicit scale (0.3 = 0.6 x 2^-1: Q times 2^-1 in bf16,
// the scores times 0.6 in f32).
// CHECK-LABEL: attn-run: @odd_bf16
// CHECK: CHECK PASSED
func.func @odd_bf16(%q: tensor<1x2x3x10xbf16>, %k: tensor<1x2x5x10xbf16>, %v: tensor<1x2x5x6xbf16>) -> (tensor<1x2x3x6xbf16>, tensor<1x2x3xbf16>) {
  %o, %l = attn.sdpa %q, %k, %v {scale = 0.3 : f64}
      : (tensor<1x2x3x10xbf16>, tensor<1x2x5x10xbf16>, tensor<1x2x5x6xbf16>) -> (tensor<1x2x3x6xbf16>, tensor<1x2x3xbf16>)
  return %o, %l : tensor<1x2x3x6xbf16>, tensor<1x2x3xbf16>
}

// CHECK-LABEL: attn-run: @softcap_bf16
// CHECK: CHECK PASSED
func.func @softcap_bf16(%q: tensor<1x2x96x64xbf16>, %k: tensor<1x2x96x64xbf16>, %v: tensor<1x2x96x64xbf16>) -> tensor<1x2x96x64xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x96x64xbf16>, tensor<1x2x96x64xbf16>, tensor<1x2x96x64xbf16>) -> tensor<1x2x96x64xbf16>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %cap = arith.constant 2.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x2x96x64xbf16>
}

// Multi-head attention with projections (bf16 weights): computed in f32.
// CHECK-LABEL: attn-run: @mha_bf16
// CHECK: CHECK PASSED
func.func @mha_bf16(%x: tensor<2x33x64xbf16>, %w: tensor<192x64xbf16>, %b: tensor<192xbf16>, %wo: tensor<64x64xbf16>, %bo: tensor<64xbf16>) -> tensor<2x33x64xbf16> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64, mask = #attn.mask<causal>}
      : (tensor<2x33x64xbf16>, tensor<2x33x64xbf16>, tensor<2x33x64xbf16>, tensor<192x64xbf16>, tensor<192xbf16>, tensor<64x64xbf16>, tensor<64xbf16>) -> tensor<2x33x64xbf16>
  return %y : tensor<2x33x64xbf16>
}

// GAT in f16 (fused, unfused and reference lowerings).
// CHECK-LABEL: attn-run: @gat_f16
// CHECK: CHECK PASSED
func.func @gat_f16(%x: tensor<40x16xf16>, %w: tensor<32x16xf16>, %as: tensor<4x8xf16>, %ad: tensor<4x8xf16>, %rp: tensor<41xi32>, %ci: tensor<200xi32>, %b: tensor<32xf16>) -> tensor<40x32xf16> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b)
      : (tensor<40x16xf16>, tensor<32x16xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<41xi32>, tensor<200xi32>, tensor<32xf16>) -> tensor<40x32xf16>
  return %y : tensor<40x32xf16>
}
