// attn-tile's speculative-softmax (P against the earlier key tiles' row
// max, computed in Q K^T's register tiles, and FlashAttention-4's
// conditional rescale where a row's max climbs: buildSpeculativeSoftmaxStep)
// against the C++ reference: generated inputs (every later tile within
// 8 ln 2 of the first's max: the speculative weights are kept), inputs
// whose scores climb 18 per 64-key tile (every tile falls back to the
// lazy step) or fall, padded lengths (the last key tile masked: the exact
// step there), grouped heads, the lse; default tiles,
// 16 x 32 tiles and two threads. The climbing and falling queries are
// one-hot (each score one product, up to 72 in size): f32 sums of 32
// products of that size round by ~1e-5 of the result, the check's bound.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python -c "import numpy as np; j = np.arange(256, dtype=np.float32); q = np.zeros((1, 2, 128, 32), np.float32); q[..., 0] = 1; np.save('%t/q.npy', q); np.save('%t/up.npy', np.broadcast_to((1.6 * j)[None, None, :, None], (1, 2, 256, 32)).astype(np.float32)); np.save('%t/down.npy', np.broadcast_to((-1.6 * j)[None, None, :, None], (1, 2, 256, 32)).astype(np.float32))"
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{speculative-softmax=true}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{speculative-softmax=true block-q=16 block-k=32}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{speculative-softmax=true threads=2}" | FileCheck %s
// RUN: attn-run %s --entry climbing --check --input 0=%t/q.npy --input 1=%t/up.npy --pipeline "attn-cpu-pipeline{speculative-softmax=true}" | FileCheck %s --check-prefix=ONE
// RUN: attn-run %s --entry climbing --check --input 0=%t/q.npy --input 1=%t/up.npy --pipeline "attn-cpu-pipeline{speculative-softmax=true block-q=16 block-k=32 threads=2}" | FileCheck %s --check-prefix=ONE
// RUN: attn-run %s --entry climbing --check --input 0=%t/q.npy --input 1=%t/down.npy --pipeline "attn-cpu-pipeline{speculative-softmax=true}" | FileCheck %s --check-prefix=ONE
// ONE: CHECK PASSED

// CHECK-LABEL: attn-run: @dense_lse
// CHECK: CHECK PASSED
func.func @dense_lse(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>, %v: tensor<1x4x256x64xf32>) -> (tensor<1x4x256x64xf32>, tensor<1x4x256xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32>) -> (tensor<1x4x256x64xf32>, tensor<1x4x256xf32>)
  return %o, %l : tensor<1x4x256x64xf32>, tensor<1x4x256xf32>
}

// CHECK-LABEL: attn-run: @padded_grouped
// CHECK: CHECK PASSED
func.func @padded_grouped(%q: tensor<2x4x100x32xf32>, %k: tensor<2x2x200x32xf32>, %v: tensor<2x2x200x48xf32>) -> tensor<2x4x100x48xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<2x4x100x32xf32>, tensor<2x2x200x32xf32>, tensor<2x2x200x48xf32>) -> tensor<2x4x100x48xf32>
  return %o : tensor<2x4x100x48xf32>
}

// CHECK-LABEL: attn-run: @climbing
// CHECK: CHECK PASSED
func.func @climbing(%q: tensor<1x2x128x32xf32>, %k: tensor<1x2x256x32xf32>, %v: tensor<1x2x256x32xf32>) -> (tensor<1x2x128x32xf32>, tensor<1x2x128xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x2x128x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>) -> (tensor<1x2x128x32xf32>, tensor<1x2x128xf32>)
  return %o, %l : tensor<1x2x128x32xf32>, tensor<1x2x128xf32>
}
