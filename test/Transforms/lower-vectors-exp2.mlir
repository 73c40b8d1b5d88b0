// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-lower-vectors | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" --attn-lower-vectors | FileCheck %s --check-prefix=AVX2

// The 2^n of the softmax's exp (buildExpOfNonPositive: t + 1.5 * 2^23 +
// 127 rounds t to n in the low mantissa bits, shifted into the exponent of
// the factor p is multiplied by) on AVX-512: n = roundeven(t)
// (vrndscaleps) and p 2^n as vscalefps, 16 lanes at a time; the rounding
// addition, its subtraction and the shift go away. AVX2 keeps the integer
// form.

// AVX512-LABEL: func @exp2_of_scores
// AVX512-NOT: 0x4B40007F
// AVX512: %[[N:.+]] = math.roundeven %[[T:.+]] : vector<64xf32>
// AVX512: arith.subf %[[T]], %[[N]] : vector<64xf32>
// AVX512-NOT: arith.shli
// MLIR 22 hands the op's operands in order to the intrinsic (a, b,
// passthrough, k, rounding): the factor, the exponents, the factor.
// AVX512: %[[P0:.+]] = vector.extract_strided_slice %{{.+}} {offsets = [0], sizes = [16], strides = [1]}
// AVX512: %[[N0:.+]] = vector.extract_strided_slice %[[N]] {offsets = [0], sizes = [16], strides = [1]}
// AVX512: x86vector.avx512.mask.scalef %[[P0]], %[[N0]], %[[P0]], %{{.+}}, %{{.+}} : vector<16xf32>
// AVX512-COUNT-3: x86vector.avx512.mask.scalef {{.*}} : vector<16xf32>
// AVX512: arith.select
// AVX2-LABEL: func @exp2_of_scores
// AVX2: arith.constant dense<0x4B40007F>
// AVX2: arith.addf %{{.+}}, %{{.+}} : vector<64xf32>
// AVX2: arith.shli
// AVX2-NOT: x86vector
// AVX2-NOT: math.roundeven
func.func @exp2_of_scores(%t: vector<64xf32>) -> vector<64xf32> {
  %magic = arith.constant dense<12583039.0> : vector<64xf32>
  %c23 = arith.constant dense<23> : vector<64xi32>
  %c1 = arith.constant dense<1.0> : vector<64xf32>
  %c2 = arith.constant dense<0.693147> : vector<64xf32>
  %tinyBound = arith.constant dense<-126.0> : vector<64xf32>
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %shifted = arith.addf %t, %magic : vector<64xf32>
  %n = arith.subf %shifted, %magic : vector<64xf32>
  %g = arith.subf %t, %n : vector<64xf32>
  %q = math.fma %c2, %g, %c1 : vector<64xf32>
  %bits = arith.bitcast %shifted : vector<64xf32> to vector<64xi32>
  %sh = arith.shli %bits, %c23 : vector<64xi32>
  %scale = arith.bitcast %sh : vector<64xi32> to vector<64xf32>
  %e = arith.mulf %q, %scale : vector<64xf32>
  %tiny = arith.cmpf olt, %t, %tinyBound : vector<64xf32>
  %r = arith.select %tiny, %zero, %e : vector<64xi1>, vector<64xf32>
  return %r : vector<64xf32>
}

// -----

// The rounded sum, or the 2^n factor, also used otherwise (here returned):
// left alone.
// AVX512-LABEL: func @other_use
// AVX512: arith.shli
// AVX512-NOT: x86vector
func.func @other_use(%t: vector<16xf32>, %q: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %magic = arith.constant dense<12583039.0> : vector<16xf32>
  %c23 = arith.constant dense<23> : vector<16xi32>
  %shifted = arith.addf %t, %magic : vector<16xf32>
  %bits = arith.bitcast %shifted : vector<16xf32> to vector<16xi32>
  %sh = arith.shli %bits, %c23 : vector<16xi32>
  %scale = arith.bitcast %sh : vector<16xi32> to vector<16xf32>
  %e = arith.mulf %q, %scale : vector<16xf32>
  return %e, %shifted : vector<16xf32>, vector<16xf32>
}
// AVX512-LABEL: func @factor_used_twice
// AVX512: arith.shli
// AVX512-NOT: x86vector
func.func @factor_used_twice(%t: vector<16xf32>, %q: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %magic = arith.constant dense<12583039.0> : vector<16xf32>
  %c23 = arith.constant dense<23> : vector<16xi32>
  %shifted = arith.addf %t, %magic : vector<16xf32>
  %bits = arith.bitcast %shifted : vector<16xf32> to vector<16xi32>
  %sh = arith.shli %bits, %c23 : vector<16xi32>
  %scale = arith.bitcast %sh : vector<16xi32> to vector<16xf32>
  %e = arith.mulf %q, %scale : vector<16xf32>
  return %e, %scale : vector<16xf32>, vector<16xf32>
}
