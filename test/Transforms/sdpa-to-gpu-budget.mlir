// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-sdpa-to-gpu="subgroup-size=8 block-k=64 shared-memory=32768"

// 64 keys of E = Ev = 128 in f32 are 64 KiB of workgroup memory.
func.func @too_big(%q: tensor<1x1x64x128xf32>) -> tensor<1x1x64x128xf32> {
  // expected-error @+1 {{attn-sdpa-to-gpu: block-k = 64 needs 65536 bytes of workgroup memory for K and V, over shared-memory = 32768}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>) -> tensor<1x1x64x128xf32>
  return %o : tensor<1x1x64x128xf32>
}

// -----

// E near 2^61: the bytes of one key overflowed int64 (a division by zero,
// SIGFPE); it is one error.
func.func @huge_head(%q: tensor<1x1x4x2305843009213693952xf32>) -> tensor<1x1x4x2305843009213693952xf32> {
  // expected-error @+1 {{attn-sdpa-to-gpu: one key of K and V (E = 2305843009213693952, Ev = 2305843009213693952, 4 bytes each) does not fit shared-memory = 32768 bytes}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x2305843009213693952xf32>, tensor<1x1x4x2305843009213693952xf32>, tensor<1x1x4x2305843009213693952xf32>) -> tensor<1x1x4x2305843009213693952xf32>
  return %o : tensor<1x1x4x2305843009213693952xf32>
}
