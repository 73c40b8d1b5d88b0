// RUN: attn-opt %s --split-input-file --attn-fold-scale --mlir-print-local-scope | FileCheck %s

// The default scale 1/sqrt(8) is folded: q is multiplied once by a
// linalg.generic, the op's scale becomes 1.
// CHECK-LABEL: func @default_scale
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x16x8xf32>, %[[K:.+]]: tensor<1x2x16x8xf32>, %[[V:.+]]: tensor<1x2x16x8xf32>)
// CHECK-DAG: %[[C:.+]] = arith.constant 0.35355{{[0-9]+}} : f32
// CHECK-DAG: %[[E:.+]] = tensor.empty() : tensor<1x2x16x8xf32>
// CHECK: %[[QS:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[Q]] : tensor<1x2x16x8xf32>) outs(%[[E]] : tensor<1x2x16x8xf32>)
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[M:.+]] = arith.mulf %[[X]], %[[C]] : f32
// CHECK: linalg.yield %[[M]] : f32
// CHECK: attn.sdpa %[[QS]], %[[K]], %[[V]] {scale = 1.000000e+00 : f64}
func.func @default_scale(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// An explicit scale, with a mask and a bias that stay as they are (the bias
// is added after scaling), in f64.
// CHECK-LABEL: func @explicit_scale_f64
// CHECK: arith.constant 1.250000e-01 : f64
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} bias(%{{.+}}) {mask = #attn.mask<causal>, scale = 1.000000e+00 : f64}
func.func @explicit_scale_f64(%q: tensor<1x1x4x8xf64>, %k: tensor<1x1x4x8xf64>, %v: tensor<1x1x4x8xf64>, %b: tensor<1x1x4x4xf64>) -> tensor<1x1x4x8xf64> {
  %o = attn.sdpa %q, %k, %v bias(%b) {mask = #attn.mask<causal>, scale = 0.125 : f64}
      : (tensor<1x1x4x8xf64>, tensor<1x1x4x8xf64>, tensor<1x1x4x8xf64>, tensor<1x1x4x4xf64>) -> tensor<1x1x4x8xf64>
  return %o : tensor<1x1x4x8xf64>
}

// -----

// The fixed point: a scale of 1 is left alone (the pattern stops matching
// its own output, so the greedy driver terminates).
// CHECK-LABEL: func @already_one
// CHECK-NOT: linalg.generic
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f64}
func.func @already_one(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 1.0 : f64}
      : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// bf16 is not folded: the scaled query would be rounded to bf16 before the
// lowering widens it to f32.
// CHECK-LABEL: func @bf16_untouched
// CHECK-NOT: linalg.generic
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} : (
func.func @bf16_untouched(%q: tensor<1x1x4x8xbf16>, %k: tensor<1x1x4x8xbf16>, %v: tensor<1x1x4x8xbf16>) -> tensor<1x1x4x8xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x4x8xbf16>, tensor<1x1x4x8xbf16>, tensor<1x1x4x8xbf16>) -> tensor<1x1x4x8xbf16>
  return %o : tensor<1x1x4x8xbf16>
}
