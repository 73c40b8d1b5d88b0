// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=16 block-k=32" --mlir-print-local-scope | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" --attn-tile="block-q=16 block-k=32" --mlir-print-local-scope | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=16 block-k=24" --mlir-print-local-scope | FileCheck %s --check-prefix=ODD
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=znver4" --attn-tile="block-q=16 block-k=32" --mlir-print-local-scope | FileCheck %s --check-prefix=BF16
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=znver4" --attn-tile="block-q=16 block-k=16" --mlir-print-local-scope | FileCheck %s --check-prefix=BF16-K16

// attn-tile's online softmax keeps each row's sum l as partial sums in the
// target's f32 lanes (16 with AVX-512, 8 with AVX2) when the key tile is
// whole vectors of them: per key tile, P (rows x cols) is summed as rows x
// cols/lanes x lanes over its middle dim into rows x lanes, vector adds
// with no reduction across lanes, after the rescale of the partial sums by
// the row's factor; the lanes are added up once, after the key loop, for
// the output's 1/l and the lse. A key tile that is no whole number of
// vectors (24 keys with 16 lanes) keeps one sum per row.

// AVX512-LABEL: func @dense
// AVX512: %[[INIT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<16x16xf32>) -> tensor<16x16xf32>
// AVX512: %[[LOOP:.+]]:3 = scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}, %[[L:.+]] = %[[INIT]], %{{.+}} = %{{.+}}) -> (tensor<16xf32>, tensor<16x16xf32>, tensor<16x8xf32>)
// AVX512: %[[P:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
// AVX512: %[[SCALED:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%{{.+}} : tensor<16xf32>) outs(%[[L]] : tensor<16x16xf32>)
// AVX512: %[[SUM:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[P]] : tensor<16x2x16xf32>) outs(%[[SCALED]] : tensor<16x16xf32>)
// AVX512-NEXT: ^bb0(%[[X:.+]]: f32, %[[ACC:.+]]: f32):
// AVX512-NEXT:   %[[ADD:.+]] = arith.addf %[[X]], %[[ACC]] : f32
// AVX512-NEXT:   linalg.yield %[[ADD]]
// AVX512: scf.yield %{{.+}}, %[[SUM]], %{{.+}} : tensor<16xf32>, tensor<16x16xf32>, tensor<16x8xf32>
// AVX512: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[LOOP]]#1 : tensor<16x16xf32>) outs(%{{.+}} : tensor<16xf32>)

// AVX2-LABEL: func @dense
// AVX2: scf.for {{.*}} -> (tensor<16xf32>, tensor<16x8xf32>, tensor<16x8xf32>)
// AVX2: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [16, 4, 8] : tensor<16x32xf32> into tensor<16x4x8xf32>

// ODD-LABEL: func @dense
// ODD: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>)
// ODD-NOT: output_shape [16, {{[0-9]+}}, 16]
func.func @dense(%q: tensor<1x1x32x8xf32>, %k: tensor<1x1x64x8xf32>, %v: tensor<1x1x64x8xf32>) -> (tensor<1x1x32x8xf32>, tensor<1x1x32xf32>) {
  %o, %l = attn.sdpa %q, %k, %v : (tensor<1x1x32x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>) -> (tensor<1x1x32x8xf32>, tensor<1x1x32xf32>)
  return %o, %l : tensor<1x1x32x8xf32>, tensor<1x1x32xf32>
}

// -----

// bf16 dot products (AVX512-BF16): P is rounded to bf16 and its sums keep
// each lane's values in pairs, rows x cols/32 x 16 x 2 over the units and
// the pair, the form of a dot product with ones (attn-lower-vectors: one
// vdpbf16ps per 32 weights). Lane t adds weights 32u + 2t and 32u + 2t + 1.
// BF16-LABEL: func @dense_bf16
// BF16: scf.for {{.*}} -> (tensor<16xf32>, tensor<16x16xf32>, tensor<16x8xf32>)
// BF16: %[[P:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2, 3]] output_shape [16, 1, 16, 2] : tensor<16x32xbf16> into tensor<16x1x16x2xbf16>
// BF16: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins(%[[P]] : tensor<16x1x16x2xbf16>) outs(%{{.+}} : tensor<16x16xf32>)
// BF16-NEXT: ^bb0(%[[X:.+]]: bf16, %[[ACC:.+]]: f32):
// BF16-NEXT:   %[[W:.+]] = arith.extf %[[X]] : bf16 to f32
// BF16-NEXT:   arith.addf %[[W]], %[[ACC]] : f32
// A key tile of 16 (not whole pairs of vectors): lanes of single values.
// BF16-K16-LABEL: func @dense_bf16
// BF16-K16: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [16, 1, 16] : tensor<16x16xbf16> into tensor<16x1x16xbf16>
func.func @dense_bf16(%q: tensor<1x1x32x8xbf16>, %k: tensor<1x1x64x8xbf16>, %v: tensor<1x1x64x8xbf16>) -> tensor<1x1x32x8xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x32x8xbf16>, tensor<1x1x64x8xbf16>, tensor<1x1x64x8xbf16>) -> tensor<1x1x32x8xbf16>
  return %o : tensor<1x1x32x8xbf16>
}
