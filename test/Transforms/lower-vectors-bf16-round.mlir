// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=znver4" --attn-lower-vectors | FileCheck %s --check-prefix=BF16
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-lower-vectors | FileCheck %s --check-prefix=PLAIN

// f32 -> bf16 rounding on AVX512-BF16 targets: whole chunks of 32 values
// become one vcvtne2ps2bf16 each (LLVM would emit two vcvtneps2bf16 and a
// vinsertf64x4). The intrinsic takes the upper 16 values first
// (_mm512_cvtne2ps_pbh(a, b): lanes 0-15 from b). Without AVX512-BF16
// (x86-64-v4) the truncf stays, for attn-expand-bf16.

// BF16-LABEL: func @round_probabilities
// BF16-NOT: arith.truncf
// BF16: %[[HI0:.+]] = vector.extract_strided_slice %[[R0:.+]] {offsets = [16], sizes = [16], strides = [1]}
// BF16: %[[LO0:.+]] = vector.extract_strided_slice %[[R0]] {offsets = [0], sizes = [16], strides = [1]}
// BF16: llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%[[HI0]], %[[LO0]]) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
// BF16: %[[HI1:.+]] = vector.extract_strided_slice %[[R1:.+]] {offsets = [16], sizes = [16], strides = [1]}
// BF16: %[[LO1:.+]] = vector.extract_strided_slice %[[R1]] {offsets = [0], sizes = [16], strides = [1]}
// BF16: llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%[[HI1]], %[[LO1]])
// BF16-NOT: llvm.call_intrinsic
// BF16: return {{.*}} : vector<2x32xbf16>
// PLAIN-LABEL: func @round_probabilities
// PLAIN: arith.truncf %{{.+}} : vector<2x32xf32> to vector<2x32xbf16>
// PLAIN-NOT: llvm.call_intrinsic
func.func @round_probabilities(%p: vector<2x32xf32>) -> vector<2x32xbf16> {
  %b = arith.truncf %p : vector<2x32xf32> to vector<2x32xbf16>
  return %b : vector<2x32xbf16>
}

// -----

// 16 values (not a whole chunk of 32), a rounding mode, fastmath flags or
// f16: left alone.
// BF16-LABEL: func @left_alone
// BF16: arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// BF16: arith.truncf %{{.+}} to_nearest_away : vector<32xf32> to vector<32xbf16>
// BF16: arith.truncf %{{.+}} fastmath<afn> : vector<32xf32> to vector<32xbf16>
// BF16: arith.truncf %{{.+}} : vector<32xf32> to vector<32xf16>
// BF16-NOT: llvm.call_intrinsic
func.func @left_alone(%a: vector<16xf32>, %b: vector<32xf32>) -> (vector<16xbf16>, vector<32xbf16>, vector<32xbf16>, vector<32xf16>) {
  %x = arith.truncf %a : vector<16xf32> to vector<16xbf16>
  %y = arith.truncf %b to_nearest_away : vector<32xf32> to vector<32xbf16>
  %f = arith.truncf %b fastmath<afn> : vector<32xf32> to vector<32xbf16>
  %z = arith.truncf %b : vector<32xf32> to vector<32xf16>
  return %x, %y, %f, %z : vector<16xbf16>, vector<32xbf16>, vector<32xbf16>, vector<32xf16>
}
