// The second worked example of docs/writing-a-pass.md, checked by numbers:
// attn-fold-scale ahead of both pipelines; the C++ reference evaluates the
// original (unfolded) IR.
//
// RUN: attn-run %s --all --check --pipeline "attn-fold-scale,attn-reference-pipeline" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-fold-scale,attn-cpu-pipeline" | FileCheck %s

// CHECK-LABEL: attn-run: @default_scale
// CHECK: CHECK PASSED
func.func @default_scale(%q: tensor<1x4x200x64xf32>, %k: tensor<1x4x200x64xf32>, %v: tensor<1x4x200x64xf32>) -> tensor<1x4x200x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x200x64xf32>, tensor<1x4x200x64xf32>, tensor<1x4x200x64xf32>) -> tensor<1x4x200x64xf32>
  return %o : tensor<1x4x200x64xf32>
}

// A bias (added after scaling, so not scaled) and a causal mask.
// CHECK-LABEL: attn-run: @causal_bias
// CHECK: CHECK PASSED
func.func @causal_bias(%q: tensor<2x2x96x128xf32>, %k: tensor<2x2x96x128xf32>, %v: tensor<2x2x96x128xf32>, %b: tensor<1x2x96x96xf32>) -> tensor<2x2x96x128xf32> {
  %o = attn.sdpa %q, %k, %v bias(%b) {mask = #attn.mask<causal>, scale = 0.3 : f64}
      : (tensor<2x2x96x128xf32>, tensor<2x2x96x128xf32>, tensor<2x2x96x128xf32>, tensor<1x2x96x96xf32>) -> tensor<2x2x96x128xf32>
  return %o : tensor<2x2x96x128xf32>
}

// Shaw relative keys: scale * q . (k + rel_key), scaled with q . k.
// CHECK-LABEL: attn-run: @shaw
// CHECK: CHECK PASSED
func.func @shaw(%q: tensor<1x2x70x32xf32>, %k: tensor<1x2x70x32xf32>, %v: tensor<1x2x70x32xf32>, %rk: tensor<9x32xf32>) -> tensor<1x2x70x32xf32> {
  %o = attn.sdpa %q, %k, %v rel_key(%rk) {rel_clip = 4 : i64, scale = 0.5 : f64}
      : (tensor<1x2x70x32xf32>, tensor<1x2x70x32xf32>, tensor<1x2x70x32xf32>, tensor<9x32xf32>) -> tensor<1x2x70x32xf32>
  return %o : tensor<1x2x70x32xf32>
}
