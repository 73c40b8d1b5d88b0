// RUN: attn-run %s --all --check --input-magnitude 2 | FileCheck %s
// RUN: attn-run %s --all --check --input-magnitude 2 --pipeline attn-reference-pipeline | FileCheck %s
// The shapes of the tensor-core kernel (attn-sdpa-to-gpu{tensor-cores},
// docs/gpu.md): f16 / bf16 attention with head dims that are multiples of
// 16, at lengths that leave partial 64-row query tiles and 64-key tiles,
// through every part of the score the kernel takes (mask kinds, padding,
// alignment, GQA, bias, relative bias, ALiBi, score_mod, mask_mod tile
// skipping, fully masked rows, lse, Ev != E, E = 16 and 256). Here the CPU
// pipelines check them against the C++ reference; test/GPU/ptx-mma.mlir
// assembles their kernels for sm_80 / sm_90a; on an NVIDIA machine
// scripts/gpu-check.sh runs this file with --target=cuda, where each
// function is the mma.sync kernel.

// CHECK-LABEL: attn-run: @dense_f16_lse
// CHECK: CHECK PASSED
func.func @dense_f16_lse(%q: tensor<1x2x150x64xf16>, %k: tensor<1x2x150x64xf16>, %v: tensor<1x2x150x64xf16>) -> (tensor<1x2x150x64xf16>, tensor<1x2x150xf16>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>) -> (tensor<1x2x150x64xf16>, tensor<1x2x150xf16>)
  return %o, %l : tensor<1x2x150x64xf16>, tensor<1x2x150xf16>
}

// Causal GQA (4 query heads on 2 kv heads), E = 128, two batches.
// CHECK-LABEL: attn-run: @causal_gqa_bf16_e128
// CHECK: CHECK PASSED
func.func @causal_gqa_bf16_e128(%q: tensor<2x4x200x128xbf16>, %k: tensor<2x2x200x128xbf16>, %v: tensor<2x2x200x128xbf16>) -> tensor<2x4x200x128xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<2x4x200x128xbf16>, tensor<2x2x200x128xbf16>, tensor<2x2x200x128xbf16>) -> tensor<2x4x200x128xbf16>
  return %o : tensor<2x4x200x128xbf16>
}

// A sliding window over more keys than queries (bottom-right alignment:
// the last query sees the last key), f16.
// CHECK-LABEL: attn-run: @local_lq_ne_lk_f16
// CHECK: CHECK PASSED
func.func @local_lq_ne_lk_f16(%q: tensor<1x2x70x64xf16>, %k: tensor<1x2x190x64xf16>, %v: tensor<1x2x190x64xf16>) -> tensor<1x2x70x64xf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 40 : i64, window_right = 9 : i64}
      : (tensor<1x2x70x64xf16>, tensor<1x2x190x64xf16>, tensor<1x2x190x64xf16>) -> tensor<1x2x70x64xf16>
  return %o : tensor<1x2x70x64xf16>
}

// Padding: per-batch key lengths (attn-run draws them in [1, Lk] and pads
// the last batch fully: its rows give 0 and lse -inf), causal, lse in bf16.
// CHECK-LABEL: attn-run: @padding_causal_bf16
// CHECK: CHECK PASSED
func.func @padding_causal_bf16(%q: tensor<3x2x130x64xbf16>, %k: tensor<3x2x130x64xbf16>, %v: tensor<3x2x130x64xbf16>, %len: tensor<3xi32>) -> (tensor<3x2x130x64xbf16>, tensor<3x2x130xbf16>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<causal>}
      : (tensor<3x2x130x64xbf16>, tensor<3x2x130x64xbf16>, tensor<3x2x130x64xbf16>, tensor<3xi32>) -> (tensor<3x2x130x64xbf16>, tensor<3x2x130xbf16>)
  return %o, %l : tensor<3x2x130x64xbf16>, tensor<3x2x130xbf16>
}

// Additive bias (broadcast over the batch and heads), relative-position
// bias and ALiBi, all f16.
// CHECK-LABEL: attn-run: @mods_f16
// CHECK: CHECK PASSED
func.func @mods_f16(%q: tensor<1x4x130x64xf16>, %k: tensor<1x4x130x64xf16>, %v: tensor<1x4x130x64xf16>, %b: tensor<1x1x130x130xf16>, %rb: tensor<4x17xf16>, %s: tensor<4xf16>) -> tensor<1x4x130x64xf16> {
  %o = attn.sdpa %q, %k, %v bias(%b) rel_bias(%rb) alibi(%s) {mask = #attn.mask<causal>, rel_clip = 8 : i64}
      : (tensor<1x4x130x64xf16>, tensor<1x4x130x64xf16>, tensor<1x4x130x64xf16>, tensor<1x1x130x130xf16>, tensor<4x17xf16>, tensor<4xf16>) -> tensor<1x4x130x64xf16>
  return %o : tensor<1x4x130x64xf16>
}

// Tanh soft-capping (a score_mod region), bf16, scale 0.3.
// CHECK-LABEL: attn-run: @softcap_bf16
// CHECK: CHECK PASSED
func.func @softcap_bf16(%q: tensor<1x2x100x64xbf16>, %k: tensor<1x2x100x64xbf16>, %v: tensor<1x2x100x64xbf16>) -> tensor<1x2x100x64xbf16> {
  %o = attn.sdpa %q, %k, %v {scale = 0.3 : f64}
      : (tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>) -> tensor<1x2x100x64xbf16>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %cap = arith.constant 5.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x2x100x64xbf16>
}

// Document masking (a mask_mod region reading per-token ids: the key tiles
// it leaves empty for a whole query tile are skipped), causal, f16.
// CHECK-LABEL: attn-run: @documents_causal_f16
// CHECK: CHECK PASSED
func.func @documents_causal_f16(%q: tensor<2x2x300x64xf16>, %k: tensor<2x2x300x64xf16>, %v: tensor<2x2x300x64xf16>, %doc: tensor<2x300xi32>) -> tensor<2x2x300x64xf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<2x2x300x64xf16>, tensor<2x2x300x64xf16>, tensor<2x2x300x64xf16>) -> tensor<2x2x300x64xf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %doc[%b, %i] : tensor<2x300xi32>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x300xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    }
  return %o : tensor<2x2x300x64xf16>
}

// Ev != E, and the smallest head dim (E = 16: one k-step).
// CHECK-LABEL: attn-run: @narrow_f16
// CHECK: CHECK PASSED
func.func @narrow_f16(%q: tensor<1x2x90x16xf16>, %k: tensor<1x2x90x16xf16>, %v: tensor<1x2x90x48xf16>) -> tensor<1x2x90x48xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x90x16xf16>, tensor<1x2x90x16xf16>, tensor<1x2x90x48xf16>) -> tensor<1x2x90x48xf16>
  return %o : tensor<1x2x90x48xf16>
}

// E = 256: 32-key tiles (64 would not fit static shared memory).
// CHECK-LABEL: attn-run: @wide_bf16_e256
// CHECK: CHECK PASSED
func.func @wide_bf16_e256(%q: tensor<1x1x100x256xbf16>, %k: tensor<1x1x100x256xbf16>, %v: tensor<1x1x100x256xbf16>) -> tensor<1x1x100x256xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x1x100x256xbf16>, tensor<1x1x100x256xbf16>, tensor<1x1x100x256xbf16>) -> tensor<1x1x100x256xbf16>
  return %o : tensor<1x1x100x256xbf16>
}
