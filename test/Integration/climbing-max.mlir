// Row maxima that climb across key tiles: the online softmax's rescaling
// (buildOnlineSoftmaxStep: m' = max(m, tile max), l and acc times exp(m -
// m')) at every rate. ALiBi slopes make every causal row's scores climb
// toward the diagonal at a chosen rate per key: per tile of 64 keys, slope
// 0.05 climbs 3.2, 1.0 climbs 64 (without the rescale exp(S - m) of the
// first tile's m would overflow), -0.05 falls (m from the first tile
// alone), 0 is flat. Numerics against the C++ reference, f32 and bf16, on
// several tile shapes and threads. bf16 on AMX tiles (natively on AMX
// hosts, emulated on other AVX512-BF16 hosts) rescales lazily: a row's max
// moves only past 8 ln 2, which the slopes 1.0 and 0.05 pass every tile and
// every other tile.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python -c "import numpy as np; np.save('%t/s.npy', np.array([0.05, 1.0, -0.05, 0.0], np.float32))"
// RUN: attn-run %s --entry causal_alibi --check --input 3=%t/s.npy | FileCheck %s
// RUN: attn-run %s --entry causal_alibi --check --input 3=%t/s.npy --pipeline "attn-cpu-pipeline{block-q=16 block-k=32}" | FileCheck %s
// RUN: attn-run %s --entry causal_alibi --check --input 3=%t/s.npy --pipeline "attn-cpu-pipeline{threads=2 block-k=128}" | FileCheck %s
// RUN: attn-run %s --entry causal_alibi_bf16 --check --input 3=%t/s.npy | FileCheck %s
// RUN: attn-run %s --entry causal_alibi_bf16 --check --input 3=%t/s.npy --pipeline "attn-cpu-pipeline{block-q=32 block-k=32}" | FileCheck %s
// RUN: %if host-avx512bf16 && !host-amx %{ attn-run %s --entry causal_alibi_bf16 --check --input 3=%t/s.npy --target-cpu=x86-64-v4 --target-features=+avx512bf16,+amx-tile,+amx-bf16 --emulate-amx | FileCheck %s %}
// CHECK: CHECK PASSED

func.func @causal_alibi(%q: tensor<1x4x512x64xf32>, %k: tensor<1x4x512x64xf32>, %v: tensor<1x4x512x64xf32>, %s: tensor<4xf32>) -> tensor<1x4x512x64xf32> {
  %o = attn.sdpa %q, %k, %v alibi(%s) {mask = #attn.mask<causal>}
      : (tensor<1x4x512x64xf32>, tensor<1x4x512x64xf32>, tensor<1x4x512x64xf32>, tensor<4xf32>) -> tensor<1x4x512x64xf32>
  return %o : tensor<1x4x512x64xf32>
}

func.func @causal_alibi_bf16(%q: tensor<1x4x512x64xbf16>, %k: tensor<1x4x512x64xbf16>, %v: tensor<1x4x512x64xbf16>, %s: tensor<4xbf16>) -> tensor<1x4x512x64xbf16> {
  %o = attn.sdpa %q, %k, %v alibi(%s) {mask = #attn.mask<causal>}
      : (tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16>, tensor<4xbf16>) -> tensor<1x4x512x64xbf16>
  return %o : tensor<1x4x512x64xbf16>
}
