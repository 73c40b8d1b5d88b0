// One attention output returned twice (and two equal ops, which CSE
// merges into one): each result gets its own buffer and out-parameter
// (attn-distinct-results; buffer-results-to-out-params crashed on one buffer
// returned twice), and both match the C++ reference.
// RUN: attn-run %s --all --check | FileCheck %s
// RUN: attn-run %s --all --check --pipeline attn-reference-pipeline | FileCheck %s
// CHECK-COUNT-2: CHECK PASSED
func.func @twice(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o, %o : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
}

func.func @equal_ops(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) {
  %a = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  %b = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return %a, %b : tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>
}
