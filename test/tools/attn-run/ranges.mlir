// Values past a 16-bit float's range are refused where they arise, not
// blamed on the input as infinities: a generated magnitude past f16's
// 65504, an f32 .npy value that rounds to an infinite bf16.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: not attn-run %s --entry half --input-magnitude 1e30 2>&1 | FileCheck %s --check-prefix=MAGNITUDE
// MAGNITUDE: attn-run: error: --input-magnitude 1e+30 is past the largest finite f16 (65504): @half argument 0 would be generated infinite
// RUN: %torch_python -c "import numpy as np; a = np.zeros((1, 1, 4, 8), np.float32); a.flat[3] = 3.4e38; np.save('%t/big.npy', a)"
// RUN: not attn-run %s --entry brain --input 0=%t/big.npy 2>&1 | FileCheck %s --check-prefix=ROUNDED
// ROUNDED: attn-run: error: {{.*}}big.npy: input 0 element 3 = 3.4e+38 is past bf16's range (largest finite 3.39e38): rounded it would be infinite
// Finite inputs whose scores would overflow f32 (q = k = 1e20: NaN on
// every compiled path, finite in the reference's doubles).
// RUN: %torch_python -c "import numpy as np; np.save('%t/q.npy', np.full((1, 1, 4, 8), 1e20, np.float32))"
// RUN: not attn-run %s --entry brainless --input 0=%t/q.npy 2>&1 | FileCheck %s --check-prefix=SCORES
// SCORES: attn-run: error: @brainless input 0 ({{.*}}q.npy) and input 0: |q| up to 1e+20 and |k| up to 1e+20 over E = 8 (scale 0.353553) allow scores up to 2.82843e+40, past f32's 3.4e38 where the kernels compute them
// A score_mod yielding NaN or +inf (log of a negative score): the kernels'
// softmax is NaN, the reference's sums skipped it. The run is an error;
// --check names the first such score.
// RUN: not attn-run %s --entry logscore 2>&1 | FileCheck %s --check-prefix=NANCALL
// NANCALL: attn-run: error: @logscore result 0 holds {{[0-9]+}} NaN or +inf values from finite inputs (a score_mod yielding NaN or +inf? --check names the first)
// RUN: not attn-run %s --entry logscore --check 2>&1 | FileCheck %s --check-prefix=NANCHECK
// NANCHECK: attn-run: error: attn.sdpa: score_mod: yields NaN at (b, h, q_idx, kv_idx) = ({{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}) for the score {{.*}}; a score must be finite or -inf (masked)
// In range, both run.
// RUN: attn-run %s --entry half --input-magnitude 2 --check | FileCheck %s --check-prefix=OK
// OK: CHECK PASSED

func.func @half(%q: tensor<1x2x4x8xf16>, %k: tensor<1x1x4x8xf16>, %v: tensor<1x1x4x8xf16>) -> tensor<1x2x4x8xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x4x8xf16>, tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>) -> tensor<1x2x4x8xf16>
  return %o : tensor<1x2x4x8xf16>
}
func.func @brain(%q: tensor<1x1x4x8xbf16>) -> tensor<1x1x4x8xbf16> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x8xbf16>, tensor<1x1x4x8xbf16>, tensor<1x1x4x8xbf16>) -> tensor<1x1x4x8xbf16>
  return %o : tensor<1x1x4x8xbf16>
}
func.func @brainless(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}
func.func @logscore(%q: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %l = math.log %s : f32
      attn.yield %l : f32
    }
  return %o : tensor<1x1x8x4xf32>
}
