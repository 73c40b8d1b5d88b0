// RUN: attn-opt %s --split-input-file --attn-decompose-mha --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-decompose-mha="widen-attention=false" --mlir-print-local-scope | FileCheck %s --check-prefix=KEEP

// Self-attention projects Q, K and V with one 2-d contraction over all B*L
// rows against the transposed packed weight (its bias as the initial
// value); heads are split as column blocks (sliced, expanded to B x L x
// heads x hd, then permuted to B x heads x L x hd, hd innermost);
// the mask options reach the attn.sdpa; heads are merged and the
// out-projection is one more 2-d contraction.

// CHECK-LABEL: func @gqa_causal
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x5x16xf32>, %[[W:[a-z0-9]+]]: tensor<32x16xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>, %[[WO:[a-z0-9]+]]: tensor<16x16xf32>, %[[BO:[a-z0-9]+]]: tensor<16xf32>, %[[LEN:[a-z0-9]+]]: tensor<2xi32>)
// CHECK: %[[WT:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>]{{.*}} ins(%[[W]] : tensor<32x16xf32>) outs(%{{.+}} : tensor<16x32xf32>)
// CHECK: %[[XR:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x5x16xf32> into tensor<10x16xf32>
// CHECK: %[[BI:.+]] = linalg.generic {{.*}} ins(%[[B]] : tensor<32xf32>) outs(%{{.+}} : tensor<10x32xf32>)
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XR]], %[[WT]] : tensor<10x16xf32>, tensor<16x32xf32>) outs(%[[BI]] : tensor<10x32xf32>)
// CHECK: %[[P3:.+]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [2, 5, 32]
// CHECK: %[[QC:.+]] = tensor.extract_slice %[[P3]][0, 0, 0] [2, 5, 16] [1, 1, 1] : tensor<2x5x32xf32> to tensor<2x5x16xf32>
// CHECK: %[[Q4:.+]] = tensor.expand_shape %[[QC]] {{\[}}[0], [1], [2, 3]] output_shape [2, 5, 4, 4]
// CHECK: %[[Q:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, {{.*}} ins(%[[Q4]] : tensor<2x5x4x4xf32>) outs(%{{.+}} : tensor<2x4x5x4xf32>)
// CHECK: %[[KC:.+]] = tensor.extract_slice %[[P3]][0, 0, 16] [2, 5, 8] [1, 1, 1]
// CHECK: %[[K4:.+]] = tensor.expand_shape %[[KC]] {{\[}}[0], [1], [2, 3]] output_shape [2, 5, 2, 4]
// CHECK: %[[K:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, {{.*}} ins(%[[K4]] : tensor<2x5x2x4xf32>) outs(%{{.+}} : tensor<2x2x5x4xf32>)
// CHECK: %[[VC:.+]] = tensor.extract_slice %[[P3]][0, 0, 24] [2, 5, 8] [1, 1, 1]
// CHECK: %[[V4:.+]] = tensor.expand_shape %[[VC]] {{\[}}[0], [1], [2, 3]] output_shape [2, 5, 2, 4]
// CHECK: %[[V:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, {{.*}} ins(%[[V4]] : tensor<2x5x2x4xf32>) outs(%{{.+}} : tensor<2x2x5x4xf32>)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]] kv_lengths(%[[LEN]]) {mask = #attn.mask<causal>, scale = 5.000000e-01 : f64} : (tensor<2x4x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2xi32>) -> tensor<2x4x5x4xf32>
// CHECK: %[[M:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, {{.*}} ins(%[[O]] : tensor<2x4x5x4xf32>) outs(%{{.+}} : tensor<2x5x4x4xf32>)
// CHECK: %[[WOT:.+]] = linalg.generic {{.*}} ins(%[[WO]] : tensor<16x16xf32>)
// CHECK: %[[BOI:.+]] = linalg.generic {{.*}} ins(%[[BO]] : tensor<16xf32>) outs(%{{.+}} : tensor<10x16xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[WOT]] : tensor<10x16xf32>, tensor<16x16xf32>) outs(%[[BOI]] : tensor<10x16xf32>)
// CHECK: %[[Y3:.+]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 5, 16]
// CHECK: return %[[Y3]]
func.func @gqa_causal(%x: tensor<2x5x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>, %len: tensor<2xi32>) -> tensor<2x5x16xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) kv_lengths(%len)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, mask = #attn.mask<causal>, scale = 0.5 : f64}
      : (tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<32x16xf32>, tensor<32xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<2xi32>) -> tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}

// -----

// Cross-attention without biases (Lq != Lk): separate Q, K and V
// projections (each from its own row block), zero-filled accumulators.

// CHECK-LABEL: func @cross_no_bias
// CHECK-COUNT-3: tensor.extract_slice
// CHECK-NOT: tensor.extract_slice
// CHECK: attn.sdpa {{.*}} -> tensor<1x2x3x4xf32>
// CHECK: linalg.fill
// CHECK: %[[Y:.+]] = linalg.generic
// CHECK: } -> tensor<3x8xf32>
// CHECK-NEXT: %[[Y3:.+]] = tensor.expand_shape %[[Y]]
// CHECK-NEXT: return %[[Y3]]
func.func @cross_no_bias(%q: tensor<1x3x8xf32>, %kv: tensor<1x7x8xf32>, %w: tensor<24x8xf32>, %wo: tensor<8x8xf32>) -> tensor<1x3x8xf32> {
  %y = attn.mha %q, %kv, %kv in_proj(%w) out_proj(%wo) {num_heads = 2 : i64}
      : (tensor<1x3x8xf32>, tensor<1x7x8xf32>, tensor<1x7x8xf32>, tensor<24x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// f16/bf16 attn ops are widened to f32 (their inputs extended, their
// results rounded back) for lowerings that take f32 only; with
// widen-attention=false (the CPU pipeline: attn-tile decides) an attn.sdpa
// keeps its bf16 operands, while an attn.mha is widened and decomposed.

// CHECK-LABEL: func @reduced
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: attn.sdpa {{.*}} -> tensor<1x1x4x4xf32>
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// KEEP-LABEL: func @reduced
// KEEP: %[[O:.+]] = attn.sdpa %arg0, %arg1, %arg2 : (tensor<1x1x4x4xbf16>, tensor<1x1x4x4xbf16>, tensor<1x1x4x4xbf16>) -> tensor<1x1x4x4xbf16>
// KEEP: arith.extf %{{.+}} : bf16 to f32
// KEEP: attn.sdpa {{.*}} -> tensor<1x4x4x4xf32>
// KEEP: arith.truncf %{{.+}} : f32 to bf16
func.func @reduced(%q: tensor<1x1x4x4xbf16>, %k: tensor<1x1x4x4xbf16>, %v: tensor<1x1x4x4xbf16>, %x: tensor<1x4x16xbf16>, %w: tensor<48x16xbf16>, %wo: tensor<16x16xbf16>) -> (tensor<1x1x4x4xbf16>, tensor<1x4x16xbf16>) {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x1x4x4xbf16>, tensor<1x1x4x4xbf16>, tensor<1x1x4x4xbf16>) -> tensor<1x1x4x4xbf16>
  %y = attn.mha %x, %x, %x in_proj(%w) out_proj(%wo) {num_heads = 4 : i64}
      : (tensor<1x4x16xbf16>, tensor<1x4x16xbf16>, tensor<1x4x16xbf16>, tensor<48x16xbf16>, tensor<16x16xbf16>) -> tensor<1x4x16xbf16>
  return %o, %y : tensor<1x1x4x4xbf16>, tensor<1x4x16xbf16>
}
