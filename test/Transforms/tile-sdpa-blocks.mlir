// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile | FileCheck %s --check-prefix=V4
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" --attn-tile | FileCheck %s --check-prefix=V3
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=32 block-k=32" | FileCheck %s --check-prefix=GIVEN

// attn-tile's block sizes when none are given (the pass description): the
// query tiles of the parallel loop (B, H, Lq / block-q) and the Q tile's
// rows. Given options win over all of it.

// Every query tile visits every key (no mask kind, no mask_mod): 256 query
// rows per tile from Lq = 1024 when 256 divides Lq, on every target, so
// that each key tile fetched serves four times the rows.
// V4-LABEL: func @dense_long
// V4: scf.forall ({{.*}}) in (1, 2, 4)
// V4: tensor<1x2x1024x64xf32> to tensor<256x64xf32>
// V3-LABEL: func @dense_long
// V3: scf.forall ({{.*}}) in (1, 2, 4)
// GIVEN-LABEL: func @dense_long
// GIVEN: scf.forall ({{.*}}) in (1, 2, 32)
func.func @dense_long(%q: tensor<1x2x1024x64xf32>, %k: tensor<1x2x1024x64xf32>, %v: tensor<1x2x1024x64xf32>) -> tensor<1x2x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x1024x64xf32>, tensor<1x2x1024x64xf32>, tensor<1x2x1024x64xf32>) -> tensor<1x2x1024x64xf32>
  return %o : tensor<1x2x1024x64xf32>
}

// -----

// Causal query tiles skip the key tiles past their last row: the block
// stays near 64 (a 256-row tile would compute 4x more masked scores on the
// diagonal). AVX2's 60 does not divide 1024, so 64.
// V4-LABEL: func @causal_long
// V4: scf.forall ({{.*}}) in (1, 2, 16)
// V3-LABEL: func @causal_long
// V3: scf.forall ({{.*}}) in (1, 2, 16)
func.func @causal_long(%q: tensor<1x2x1024x64xf32>, %k: tensor<1x2x1024x64xf32>, %v: tensor<1x2x1024x64xf32>) -> tensor<1x2x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x2x1024x64xf32>, tensor<1x2x1024x64xf32>, tensor<1x2x1024x64xf32>) -> tensor<1x2x1024x64xf32>
  return %o : tensor<1x2x1024x64xf32>
}

// -----

// A mask_mod can skip key tiles too: 64 rows.
// V4-LABEL: func @mask_mod_long
// V4: scf.forall ({{.*}}) in (1, 1, 16)
func.func @mask_mod_long(%q: tensor<1x1x1024x64xf32>) -> tensor<1x1x1024x64xf32> {
  %o = attn.sdpa %q, %q, %q
      : (tensor<1x1x1024x64xf32>, tensor<1x1x1024x64xf32>, tensor<1x1x1024x64xf32>) -> tensor<1x1x1024x64xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi sle, %j, %i : index
      attn.yield %c : i1
    }
  return %o : tensor<1x1x1024x64xf32>
}

// -----

// Dense, but 256 does not divide Lq (960): the target's register-tile
// multiple near 64 when it divides Lq (60 on AVX2's 6-row tiles), else 64.
// V4-LABEL: func @dense_960
// V4: scf.forall ({{.*}}) in (1, 1, 15)
// V3-LABEL: func @dense_960
// V3: scf.forall ({{.*}}) in (1, 1, 16)
// V3: tensor<1x1x960x64xf32> to tensor<60x64xf32>
func.func @dense_960(%q: tensor<1x1x960x64xf32>, %k: tensor<1x1x960x64xf32>, %v: tensor<1x1x960x64xf32>) -> tensor<1x1x960x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x960x64xf32>, tensor<1x1x960x64xf32>, tensor<1x1x960x64xf32>) -> tensor<1x1x960x64xf32>
  return %o : tensor<1x1x960x64xf32>
}

// -----

// Dense and shorter than 1024: tiles near 64 (the key stream of one head
// stays in the caches, and more tiles feed the threads).
// V4-LABEL: func @dense_512
// V4: scf.forall ({{.*}}) in (1, 1, 8)
// V3-LABEL: func @dense_512
// V3: scf.forall ({{.*}}) in (1, 1, 8)
func.func @dense_512(%q: tensor<1x1x512x64xf32>, %k: tensor<1x1x512x64xf32>, %v: tensor<1x1x512x64xf32>) -> tensor<1x1x512x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x512x64xf32>, tensor<1x1x512x64xf32>, tensor<1x1x512x64xf32>) -> tensor<1x1x512x64xf32>
  return %o : tensor<1x1x512x64xf32>
}
