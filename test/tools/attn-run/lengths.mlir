// kv_lengths from a file are checked against the key length: a length
// beyond Lk (or below 0) is one error naming the batch entry, as
// attn-compile does for a model's lengths.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python -c "import numpy as np; np.save('%t/long.npy', np.array([3, 99], np.int32)); np.save('%t/neg.npy', np.array([-1, 2], np.int32)); np.save('%t/ok.npy', np.array([6, 0], np.int32))"
// RUN: not attn-run %s --entry padded --input 3=%t/long.npy 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not attn-run %s --entry padded --input 3=%t/neg.npy 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: attn-run %s --entry padded --input 3=%t/ok.npy --check | FileCheck %s --check-prefix=OK
// LONG: attn-run: error: attn.sdpa: kv_lengths (@padded input 3 ({{.*}}long.npy)): entry 1 is 99, outside [0, Lk = 6]
// NEG: attn-run: error: attn.sdpa: kv_lengths (@padded input 3 ({{.*}}neg.npy)): entry 0 is -1, outside [0, Lk = 6]
// OK: CHECK PASSED
// The same through a private function (a model's layer): the lengths are
// traced through its calls to @layered's argument.
// RUN: not attn-run %s --entry layered --input 3=%t/long.npy 2>&1 | FileCheck %s --check-prefix=CALLED
// CALLED: attn-run: error: attn.sdpa: kv_lengths (@layered input 3 ({{.*}}long.npy)): entry 1 is 99, outside [0, Lk = 6]
// RUN: attn-run %s --entry layered --input 3=%t/ok.npy | FileCheck %s --check-prefix=CALLEDOK
// CALLEDOK: result 0: 2x1x5x4xf32

func.func @padded(%q: tensor<2x1x5x4xf32>, %k: tensor<2x1x6x4xf32>, %v: tensor<2x1x6x4xf32>, %len: tensor<2xi32>) -> tensor<2x1x5x4xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len)
      : (tensor<2x1x5x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x4xf32>, tensor<2xi32>) -> tensor<2x1x5x4xf32>
  return %o : tensor<2x1x5x4xf32>
}

func.func private @layer(%q: tensor<2x1x5x4xf32>, %k: tensor<2x1x6x4xf32>, %v: tensor<2x1x6x4xf32>, %len: tensor<2xi32>) -> tensor<2x1x5x4xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len)
      : (tensor<2x1x5x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x4xf32>, tensor<2xi32>) -> tensor<2x1x5x4xf32>
  return %o : tensor<2x1x5x4xf32>
}
func.func @layered(%q: tensor<2x1x5x4xf32>, %k: tensor<2x1x6x4xf32>, %v: tensor<2x1x6x4xf32>, %len: tensor<2xi32>) -> tensor<2x1x5x4xf32> {
  %a = call @layer(%q, %k, %v, %len) : (tensor<2x1x5x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x4xf32>, tensor<2xi32>) -> tensor<2x1x5x4xf32>
  %b = call @layer(%a, %k, %v, %len) : (tensor<2x1x5x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x4xf32>, tensor<2xi32>) -> tensor<2x1x5x4xf32>
  return %b : tensor<2x1x5x4xf32>
}
