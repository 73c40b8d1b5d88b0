// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=znver4" --attn-lower-vectors | FileCheck %s --check-prefix=BF16
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-lower-vectors | FileCheck %s --check-prefix=PLAIN

// Sums of bf16 values in lanes of pairs (the bf16 online softmax's row
// sums: rows x units x 16 x 2 over the units and the pair) on AVX512-BF16:
// one vdpbf16ps with a vector of ones per unit of 32 values, chained
// through the lanes' accumulator. The pairs are read as one flat vector.
// Without AVX512-BF16 (x86-64-v4) the values are widened and added.

// BF16-LABEL: func @pair_sums
// BF16-DAG: %[[ONES:.+]] = arith.constant dense<1.000000e+00> : vector<32xbf16>
// BF16-DAG: %[[X:.+]] = vector.transfer_read %{{.+}} : memref<4x64xbf16>, vector<64xbf16>
// BF16-DAG: %[[U0:.+]] = vector.extract_strided_slice %[[X]] {offsets = [0], sizes = [32], strides = [1]}
// BF16-DAG: %[[U1:.+]] = vector.extract_strided_slice %[[X]] {offsets = [32], sizes = [32], strides = [1]}
// BF16: %[[D0:.+]] = x86vector.avx512.dot %{{.+}}, %[[U0]], %[[ONES]] : vector<32xbf16> -> vector<16xf32>
// BF16: %[[D1:.+]] = x86vector.avx512.dot %[[D0]], %[[U1]], %[[ONES]] : vector<32xbf16> -> vector<16xf32>
// BF16-NOT: arith.extf
// PLAIN-LABEL: func @pair_sums
// PLAIN: arith.extf
// PLAIN-NOT: x86vector.avx512.dot
func.func @pair_sums(%p: memref<4x64xbf16>, %acc: vector<1x16xf32>, %i: index) -> vector<1x16xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %pairs = memref.expand_shape %p [[0], [1, 2, 3]] output_shape [4, 2, 16, 2] : memref<4x64xbf16> into memref<4x2x16x2xbf16>
  %x = vector.transfer_read %pairs[%i, %c0, %c0, %c0], %pad {in_bounds = [true, true, true, true]} : memref<4x2x16x2xbf16>, vector<1x2x16x2xbf16>
  %w = arith.extf %x : vector<1x2x16x2xbf16> to vector<1x2x16x2xf32>
  %s = vector.multi_reduction <add>, %w, %acc [1, 3] : vector<1x2x16x2xf32> to vector<1x16xf32>
  return %s : vector<1x16xf32>
}

// -----

// Two rows (outer dims): one chain of dot products per row's lanes.
// BF16-LABEL: func @two_rows
// BF16: %[[R0:.+]] = vector.extract %{{.+}}[0] : vector<16xf32> from vector<2x16xf32>
// BF16: %[[D0:.+]] = x86vector.avx512.dot %[[R0]], %{{.+}}, %{{.+}} : vector<32xbf16> -> vector<16xf32>
// BF16: vector.insert %[[D0]], %{{.+}} [0] : vector<16xf32> into vector<2x16xf32>
// BF16: %[[R1:.+]] = vector.extract %{{.+}}[1] : vector<16xf32> from vector<2x16xf32>
// BF16: %[[D1:.+]] = x86vector.avx512.dot %[[R1]], %{{.+}}, %{{.+}} : vector<32xbf16> -> vector<16xf32>
// BF16: vector.insert %[[D1]], %{{.+}} [1] : vector<16xf32> into vector<2x16xf32>
// BF16-NOT: x86vector.avx512.dot
func.func @two_rows(%x: vector<2x1x16x2xbf16>, %acc: vector<2x16xf32>) -> vector<2x16xf32> {
  %w = arith.extf %x : vector<2x1x16x2xbf16> to vector<2x1x16x2xf32>
  %s = vector.multi_reduction <add>, %w, %acc [1, 3] : vector<2x1x16x2xf32> to vector<2x16xf32>
  return %s : vector<2x16xf32>
}

// -----

// Summed over the units only, or f16 values: left to the generic lowering.
// BF16-LABEL: func @not_pair_sums
// BF16-NOT: x86vector.avx512.dot
func.func @not_pair_sums(%x: vector<2x16x2xbf16>, %acc: vector<16x2xf32>, %h: vector<2x16x2xf16>, %acc2: vector<16xf32>) -> (vector<16x2xf32>, vector<16xf32>) {
  %w = arith.extf %x : vector<2x16x2xbf16> to vector<2x16x2xf32>
  %s = vector.multi_reduction <add>, %w, %acc [0] : vector<2x16x2xf32> to vector<16x2xf32>
  %wh = arith.extf %h : vector<2x16x2xf16> to vector<2x16x2xf32>
  %sh = vector.multi_reduction <add>, %wh, %acc2 [0, 2] : vector<2x16x2xf32> to vector<16xf32>
  return %s, %sh : vector<16x2xf32>, vector<16xf32>
}
