// RUN: attn-opt %s --split-input-file --attn-decompose-mha --mlir-print-local-scope | FileCheck %s

// The packed in-projection is split into row blocks; each projection writes
// B x heads x L x hd directly; the mask options reach the attn.sdpa; the
// out-projection contracts over (head, hd).

// CHECK-LABEL: func @gqa_causal
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x5x16xf32>, %[[W:[a-z0-9]+]]: tensor<32x16xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>, %[[WO:[a-z0-9]+]]: tensor<16x16xf32>, %[[BO:[a-z0-9]+]]: tensor<16xf32>, %[[LEN:[a-z0-9]+]]: tensor<2xi32>)
// CHECK: %[[WQ:.+]] = tensor.extract_slice %[[W]][0, 0] [16, 16] [1, 1]
// CHECK: %[[WQ3:.+]] = tensor.expand_shape %[[WQ]] {{\[}}[0, 1], [2]] output_shape [4, 4, 16]
// CHECK: %[[QP:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>]{{.*}} ins(%[[X]], %[[WQ3]] :
// CHECK: %[[BQ:.+]] = tensor.extract_slice %[[B]][0] [16] [1]
// CHECK: %[[Q:.+]] = linalg.generic {{.*}} ins(%[[QP]], %{{.+}} : tensor<2x4x5x4xf32>, tensor<4x4xf32>)
// CHECK: tensor.extract_slice %[[W]][16, 0] [8, 16] [1, 1]
// CHECK: %[[K:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x2x5x4xf32>, tensor<2x4xf32>)
// CHECK: tensor.extract_slice %[[W]][24, 0] [8, 16] [1, 1]
// CHECK: %[[V:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x2x5x4xf32>, tensor<2x4xf32>)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]] kv_lengths(%[[LEN]]) {mask = #attn.mask<causal>, scale = 5.000000e-01 : f64} : (tensor<2x4x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2xi32>) -> tensor<2x4x5x4xf32>
// CHECK: %[[WO3:.+]] = tensor.expand_shape %[[WO]] {{\[}}[0], [1, 2]] output_shape [16, 4, 4]
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[O]], %[[WO3]] :
// CHECK: %[[YB:.+]] = linalg.generic {{.*}} ins(%[[Y]], %[[BO]] :
// CHECK: return %[[YB]]
func.func @gqa_causal(%x: tensor<2x5x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>, %len: tensor<2xi32>) -> tensor<2x5x16xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) kv_lengths(%len)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, mask = #attn.mask<causal>, scale = 0.5 : f64}
      : (tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<32x16xf32>, tensor<32xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<2xi32>) -> tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}

// -----

// Cross-attention without biases (Lq != Lk): no bias generics.

// CHECK-LABEL: func @cross_no_bias
// CHECK-COUNT-3: tensor.extract_slice
// CHECK: attn.sdpa {{.*}} -> tensor<1x2x3x4xf32>
// CHECK: %[[Y:.+]] = linalg.generic
// CHECK: } -> tensor<1x3x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @cross_no_bias(%q: tensor<1x3x8xf32>, %kv: tensor<1x7x8xf32>, %w: tensor<24x8xf32>, %wo: tensor<8x8xf32>) -> tensor<1x3x8xf32> {
  %y = attn.mha %q, %kv, %kv in_proj(%w) out_proj(%wo) {num_heads = 2 : i64}
      : (tensor<1x3x8xf32>, tensor<1x7x8xf32>, tensor<1x7x8xf32>, tensor<24x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}
