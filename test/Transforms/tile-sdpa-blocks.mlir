// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile | FileCheck %s --check-prefix=V4
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" --attn-tile | FileCheck %s --check-prefix=V3
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=32 block-k=32" | FileCheck %s --check-prefix=GIVEN
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=znver4" --attn-tile | FileCheck %s --check-prefix=BF16

// attn-tile's block sizes when none are given (the pass description): the
// query tiles of the parallel loop (B, H, Lq / block-q) and the Q tile's
// rows. Given options win over all of it.

// Every query tile visits every one of >= 1024 keys (no mask kind, no
// mask_mod): 256 query rows per tile from Lq = 1024 when 256 divides Lq and
// B H Lq / 256 >= 16 tiles remain for the threads, on every target, so
// that each key tile fetched serves four times the rows.
// V4-LABEL: func @dense_long
// V4: scf.forall ({{.*}}) in (1, 4, 4)
// V4: tensor<1x4x1024x64xf32> to tensor<256x64xf32>
// V3-LABEL: func @dense_long
// V3: scf.forall ({{.*}}) in (1, 4, 4)
// GIVEN-LABEL: func @dense_long
// GIVEN: scf.forall ({{.*}}) in (1, 4, 32)
func.func @dense_long(%q: tensor<1x4x1024x64xf32>, %k: tensor<1x4x1024x64xf32>, %v: tensor<1x4x1024x64xf32>) -> tensor<1x4x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1024x64xf32>, tensor<1x4x1024x64xf32>, tensor<1x4x1024x64xf32>) -> tensor<1x4x1024x64xf32>
  return %o : tensor<1x4x1024x64xf32>
}

// -----

// The same with two heads: 8 tiles of 256 rows would leave threads idle,
// so tiles near 64.
// V4-LABEL: func @dense_few_tiles
// V4: scf.forall ({{.*}}) in (1, 2, 16)
func.func @dense_few_tiles(%q: tensor<1x2x1024x64xf32>, %k: tensor<1x2x1024x64xf32>, %v: tensor<1x2x1024x64xf32>) -> tensor<1x2x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x1024x64xf32>, tensor<1x2x1024x64xf32>, tensor<1x2x1024x64xf32>) -> tensor<1x2x1024x64xf32>
  return %o : tensor<1x2x1024x64xf32>
}

// -----

// Few keys (cross-attention, Lk = 150): the key stream stays cached, so
// tiles near 64.
// V4-LABEL: func @dense_short_keys
// V4: scf.forall ({{.*}}) in (1, 4, 16)
func.func @dense_short_keys(%q: tensor<1x4x1024x64xf32>, %k: tensor<1x4x150x64xf32>, %v: tensor<1x4x150x64xf32>) -> tensor<1x4x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1024x64xf32>, tensor<1x4x150x64xf32>, tensor<1x4x150x64xf32>) -> tensor<1x4x1024x64xf32>
  return %o : tensor<1x4x1024x64xf32>
}

// -----

// Causal query tiles skip the key tiles past their last row: the block
// stays near 64 (a 256-row tile would compute 4x more masked scores on the
// diagonal). AVX2's 60 does not divide 1024, so 64.
// V4-LABEL: func @causal_long
// V4: scf.forall ({{.*}}) in (1, 4, 16)
// V3-LABEL: func @causal_long
// V3: scf.forall ({{.*}}) in (1, 4, 16)
func.func @causal_long(%q: tensor<1x4x1024x64xf32>, %k: tensor<1x4x1024x64xf32>, %v: tensor<1x4x1024x64xf32>) -> tensor<1x4x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x4x1024x64xf32>, tensor<1x4x1024x64xf32>, tensor<1x4x1024x64xf32>) -> tensor<1x4x1024x64xf32>
  return %o : tensor<1x4x1024x64xf32>
}

// -----

// A mask_mod can skip key tiles too: 64 rows.
// V4-LABEL: func @mask_mod_long
// V4: scf.forall ({{.*}}) in (1, 16, 16)
func.func @mask_mod_long(%q: tensor<1x16x1024x64xf32>) -> tensor<1x16x1024x64xf32> {
  %o = attn.sdpa %q, %q, %q
      : (tensor<1x16x1024x64xf32>, tensor<1x16x1024x64xf32>, tensor<1x16x1024x64xf32>) -> tensor<1x16x1024x64xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi sle, %j, %i : index
      attn.yield %c : i1
    }
  return %o : tensor<1x16x1024x64xf32>
}

// -----

// Dense, long, but 256 does not divide Lq (1152): the target's
// register-tile multiple near 64 when it divides Lq (AVX2's 60 does not
// here), else 64.
// V4-LABEL: func @dense_1152
// V4: scf.forall ({{.*}}) in (1, 4, 18)
// V3-LABEL: func @dense_1152
// V3: scf.forall ({{.*}}) in (1, 4, 18)
func.func @dense_1152(%q: tensor<1x4x1152x64xf32>, %k: tensor<1x4x1152x64xf32>, %v: tensor<1x4x1152x64xf32>) -> tensor<1x4x1152x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1152x64xf32>, tensor<1x4x1152x64xf32>, tensor<1x4x1152x64xf32>) -> tensor<1x4x1152x64xf32>
  return %o : tensor<1x4x1152x64xf32>
}

// -----

// Dense and shorter than 1024 queries (768, which 256 divides): tiles near
// 64. AVX2's 60-row tiles when 60 divides Lq (960).
// V4-LABEL: func @dense_768
// V4: scf.forall ({{.*}}) in (1, 8, 12)
// V3-LABEL: func @dense_768
// V3: scf.forall ({{.*}}) in (1, 8, 12)
func.func @dense_768(%q: tensor<1x8x768x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x768x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x8x768x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) -> tensor<1x8x768x64xf32>
  return %o : tensor<1x8x768x64xf32>
}

// -----

// V3-LABEL: func @dense_960
// V3: scf.forall ({{.*}}) in (1, 1, 16)
// V3: tensor<1x1x960x64xf32> to tensor<60x64xf32>
func.func @dense_960(%q: tensor<1x1x960x64xf32>, %k: tensor<1x1x960x64xf32>, %v: tensor<1x1x960x64xf32>) -> tensor<1x1x960x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x960x64xf32>, tensor<1x1x960x64xf32>, tensor<1x1x960x64xf32>) -> tensor<1x1x960x64xf32>
  return %o : tensor<1x1x960x64xf32>
}

// -----

// bf16 dot products (AVX512-BF16, Zen 4) keep 64 x 64 tiles: 256-row
// tiles were measured no faster there (docs/Rationale.md).
// BF16-LABEL: func @bf16_long
// BF16: scf.forall ({{.*}}) in (1, 4, 16)
func.func @bf16_long(%q: tensor<1x4x1024x64xbf16>, %k: tensor<1x4x1024x64xbf16>, %v: tensor<1x4x1024x64xbf16>) -> tensor<1x4x1024x64xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1024x64xbf16>, tensor<1x4x1024x64xbf16>, tensor<1x4x1024x64xbf16>) -> tensor<1x4x1024x64xbf16>
  return %o : tensor<1x4x1024x64xbf16>
}
