// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-lower-vectors | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=knl" --attn-lower-vectors | FileCheck %s --check-prefix=NODQ
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" --attn-lower-vectors | FileCheck %s --check-prefix=AVX2

// The 2^n of the softmax's exp (buildExpOfNonPositive: t + 1.5 * 2^23 +
// 127 rounds t to n in the low mantissa bits, shifted into the exponent of
// the factor p is multiplied by) on AVX-512: p 2^n as vscalefps, 16 lanes at
// a time; the rounding addition, its subtraction and the shift go away.
// With AVX512DQ (x86-64-v4) the fraction g = t - n is vreduceps of
// u = t + 1/2 (rounded down), minus 1/2, scalef takes u (its floor is n) and
// the underflow test moves to u; without it (Knights Landing) n =
// roundeven(t) (vrndscaleps). AVX2 keeps the integer form. The polynomial
// in g (here 1 + 0.693147 g) becomes the same polynomial in the reduction
// r = g + 1/2 (0.6534265 + 0.693147 r): no subtraction of 1/2.

// AVX512-LABEL: func @exp2_of_scores
// AVX512-NOT: 0x4B40007F
// AVX512-DAG: %[[BOUND:.+]] = arith.constant dense<-1.255000e+02> : vector<64xf32>
// AVX512-DAG: %[[HALF:.+]] = arith.constant dense<5.000000e-01> : vector<64xf32>
// AVX512-DAG: %[[C0:.+]] = arith.constant dense<0.653426528> : vector<64xf32>
// AVX512-DAG: %[[C1:.+]] = arith.constant dense<6.931470e-01> : vector<64xf32>
// AVX512: %[[U:.+]] = arith.addf %[[T:.+]], %[[HALF]] : vector<64xf32>
// AVX512-NOT: math.roundeven
// AVX512: %[[U0:.+]] = vector.extract_strided_slice %[[U]] {offsets = [0], sizes = [16], strides = [1]}
// AVX512: llvm.call_intrinsic "llvm.x86.avx512.mask.reduce.ps.512"(%[[U0]], %c9_i32, %[[U0]], %{{.+}}, %{{.+}})
// AVX512-COUNT-3: llvm.call_intrinsic "llvm.x86.avx512.mask.reduce.ps.512"
// AVX512-NOT: arith.subf
// AVX512: %[[R:.+]] = vector.insert_strided_slice %{{.+}}, %{{.+}} {offsets = [48], strides = [1]}
// AVX512-NOT: arith.subf
// AVX512: math.fma %[[C1]], %[[R]], %[[C0]] : vector<64xf32>
// AVX512-NOT: arith.shli
// MLIR 22 hands the op's operands in order to the intrinsic (a, b,
// passthrough, k, rounding): the factor, the exponents, the factor.
// AVX512: %[[P0:.+]] = vector.extract_strided_slice %{{.+}} {offsets = [0], sizes = [16], strides = [1]}
// AVX512: %[[E0:.+]] = vector.extract_strided_slice %[[U]] {offsets = [0], sizes = [16], strides = [1]}
// AVX512: x86vector.avx512.mask.scalef %[[P0]], %[[E0]], %[[P0]], %{{.+}}, %{{.+}} : vector<16xf32>
// AVX512-COUNT-3: x86vector.avx512.mask.scalef {{.*}} : vector<16xf32>
// AVX512: arith.cmpf olt, %[[U]], %[[BOUND]] : vector<64xf32>
// AVX512: arith.select
// NODQ-LABEL: func @exp2_of_scores
// NODQ: %[[N:.+]] = math.roundeven %[[T:.+]] : vector<64xf32>
// NODQ: arith.subf %[[T]], %[[N]] : vector<64xf32>
// NODQ-NOT: arith.shli
// NODQ-NOT: llvm.call_intrinsic
// NODQ: %[[P0:.+]] = vector.extract_strided_slice %{{.+}} {offsets = [0], sizes = [16], strides = [1]}
// NODQ: %[[N0:.+]] = vector.extract_strided_slice %[[N]] {offsets = [0], sizes = [16], strides = [1]}
// NODQ: x86vector.avx512.mask.scalef %[[P0]], %[[N0]], %[[P0]], %{{.+}}, %{{.+}} : vector<16xf32>
// NODQ: arith.cmpf olt, %[[T]], %{{.+}} : vector<64xf32>
// NODQ: arith.select
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

// t = x log2(e) (the softmax's exp): u = x log2(e) + 1/2 is one FMA.
// AVX512-LABEL: func @exp2_of_product
// AVX512: %[[U:.+]] = math.fma %[[X:.+]], %{{.+}}, %{{.+}} : vector<16xf32>
// AVX512: llvm.call_intrinsic "llvm.x86.avx512.mask.reduce.ps.512"(%[[U]],
// AVX512: x86vector.avx512.mask.scalef %{{.+}}, %[[U]], %{{.+}} : vector<16xf32>
// AVX512: arith.cmpf olt, %[[U]], %{{.+}} : vector<16xf32>
func.func @exp2_of_product(%x: vector<16xf32>) -> vector<16xf32> {
  %log2e = arith.constant dense<1.44269502> : vector<16xf32>
  %magic = arith.constant dense<12583039.0> : vector<16xf32>
  %c23 = arith.constant dense<23> : vector<16xi32>
  %c1 = arith.constant dense<1.0> : vector<16xf32>
  %c2 = arith.constant dense<0.693147> : vector<16xf32>
  %tinyBound = arith.constant dense<-126.0> : vector<16xf32>
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %t = arith.mulf %x, %log2e : vector<16xf32>
  %shifted = arith.addf %t, %magic : vector<16xf32>
  %n = arith.subf %shifted, %magic : vector<16xf32>
  %g = arith.subf %t, %n : vector<16xf32>
  %q = math.fma %c2, %g, %c1 : vector<16xf32>
  %bits = arith.bitcast %shifted : vector<16xf32> to vector<16xi32>
  %sh = arith.shli %bits, %c23 : vector<16xi32>
  %scale = arith.bitcast %sh : vector<16xi32> to vector<16xf32>
  %e = arith.mulf %q, %scale : vector<16xf32>
  %tiny = arith.cmpf olt, %t, %tinyBound : vector<16xf32>
  %r = arith.select %tiny, %zero, %e : vector<16xi1>, vector<16xf32>
  return %r : vector<16xf32>
}

// -----

// A polynomial not in g alone (g also returned here): g = r - 1/2 stays.
// AVX512-LABEL: func @fraction_used_otherwise
// AVX512: llvm.call_intrinsic "llvm.x86.avx512.mask.reduce.ps.512"
// AVX512: %[[G:.+]] = arith.subf %{{.+}}, %{{.+}} : vector<16xf32>
// AVX512: math.fma %{{.+}}, %[[G]], %{{.+}} : vector<16xf32>
// AVX512: return %{{.+}}, %[[G]]
func.func @fraction_used_otherwise(%t: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %magic = arith.constant dense<12583039.0> : vector<16xf32>
  %c23 = arith.constant dense<23> : vector<16xi32>
  %c1 = arith.constant dense<1.0> : vector<16xf32>
  %c2 = arith.constant dense<0.693147> : vector<16xf32>
  %shifted = arith.addf %t, %magic : vector<16xf32>
  %n = arith.subf %shifted, %magic : vector<16xf32>
  %g = arith.subf %t, %n : vector<16xf32>
  %q = math.fma %c2, %g, %c1 : vector<16xf32>
  %bits = arith.bitcast %shifted : vector<16xf32> to vector<16xi32>
  %sh = arith.shli %bits, %c23 : vector<16xi32>
  %scale = arith.bitcast %sh : vector<16xi32> to vector<16xf32>
  %e = arith.mulf %q, %scale : vector<16xf32>
  return %e, %g : vector<16xf32>, vector<16xf32>
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
