// RUN: attn-opt %s --split-input-file --attn-lower-vectors | FileCheck %s

// The accumulator of a reduction loop is hoisted into loop-carried registers,
// the loop unrolled by 4 (four outer-product steps per iteration keep both
// FMA units fed) and the contraction lowered to outer products (FMAs).

// CHECK-LABEL: func @accumulate
// CHECK-SAME: %[[C:[a-z0-9]+]]: memref<8x32xf32>
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[INIT:.+]] = vector.transfer_read %[[C]]
// CHECK: %[[RES:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C4]] iter_args(%[[ACC:.+]] = %[[INIT]]) -> (vector<8x32xf32>)
// CHECK-NOT: vector.transfer_read %[[C]]
// CHECK-NOT: vector.contract
// CHECK-COUNT-32: vector.fma
// CHECK-NOT: vector.fma
// CHECK-NOT: vector.transfer_write
// CHECK: }
// CHECK: vector.transfer_write %[[RES]], %[[C]]
func.func @accumulate(%a: memref<8x64xf32>, %b: memref<64x32xf32>, %c: memref<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c64 step %c1 {
    %lhs = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true, true]} : memref<8x64xf32>, vector<8x1xf32>
    %rhs = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true, true]} : memref<64x32xf32>, vector<1x32xf32>
    %acc = vector.transfer_read %c[%c0, %c0], %pad {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
    %r = vector.contract {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                          iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>}
        %lhs, %rhs, %acc : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
    vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
  }
  return
}

// -----

// exp and log on vectors become polynomial approximations (no libm call).

// CHECK-LABEL: func @exp_log
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK: math.fma
// CHECK: return
func.func @exp_log(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %e = math.exp %x : vector<16xf32>
  %l = math.log %x : vector<16xf32>
  return %e, %l : vector<16xf32>, vector<16xf32>
}

// -----

// Row sums may be reassociated (a tree, not 64 dependent adds) and the online
// softmax's maxnum row max may assume no NaN (plain max instructions); other
// reductions keep their semantics.

// CHECK-LABEL: func @reduction_flags
// CHECK: vector.reduction <add>, %{{.+}} fastmath<reassoc> : vector<64xf32> into f32
// CHECK: vector.reduction <maxnumf>, %{{.+}} fastmath<nnan> : vector<64xf32> into f32
// CHECK: vector.reduction <maximumf>, %{{.+}} : vector<64xf32> into f32
func.func @reduction_flags(%x: vector<64xf32>) -> (f32, f32, f32) {
  %s = vector.reduction <add>, %x : vector<64xf32> into f32
  %m = vector.reduction <maxnumf>, %x : vector<64xf32> into f32
  %n = vector.reduction <maximumf>, %x : vector<64xf32> into f32
  return %s, %m, %n : f32, f32, f32
}

// -----

// A reduction that keeps the innermost dim (row sums in lanes) is vector
// adds of its whole vectors; one along the vector stays a horizontal
// reduction.
// CHECK-LABEL: func @outer_and_inner
// CHECK-NOT: vector.reduction
// CHECK: %[[A0:.+]] = arith.addf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: %[[A1:.+]] = arith.addf %{{.+}}, %[[A0]] : vector<16xf32>
// CHECK: %[[A2:.+]] = arith.addf %{{.+}}, %[[A1]] : vector<16xf32>
// CHECK: %[[A3:.+]] = arith.addf %{{.+}}, %[[A2]] : vector<16xf32>
// CHECK-NOT: vector.extract %{{.+}}[{{.+}}] : f32
// CHECK: vector.reduction <add>, %{{.+}} : vector<64xf32> into f32
func.func @outer_and_inner(%x: vector<1x4x16xf32>, %acc: vector<1x16xf32>, %y: vector<64xf32>) -> (vector<1x16xf32>, f32) {
  %s = vector.multi_reduction <add>, %x, %acc [1] : vector<1x4x16xf32> to vector<1x16xf32>
  %zero = arith.constant 0.0 : f32
  %t = vector.multi_reduction <add>, %y, %zero [0] : vector<64xf32> to f32
  return %s, %t : vector<1x16xf32>, f32
}

// -----

// A 16 x 16 transpose becomes shuffles, not 256 element moves.

// CHECK-LABEL: func @transpose16
// CHECK-NOT: vector.transpose
// CHECK: vector.shuffle
// CHECK-NOT: vector.extract %{{.+}}[0, 0] : f32
func.func @transpose16(%x: vector<16x16xf32>) -> vector<16x16xf32> {
  %t = vector.transpose %x, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
  return %t : vector<16x16xf32>
}

// -----

// A register tile of bf16 pair dot products (attn-tile's bf16 mode) on an
// AVX512-BF16 target: per row, the row's pair broadcast as one 32-bit lane,
// against the 32 columns' pairs read as one contiguous vector (the pair
// dim alone would be read 32 bits at a time): 8 rows x 2 x 16 columns =
// 16 x86vector.avx512.dot (vdpbf16ps) per step, 4 steps per iteration.

// CHECK-LABEL: func @bf16_dot
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.for %{{.+}} step %[[C4]] iter_args(%{{.+}} = %{{.+}}) -> (vector<8x32xf32>)
// CHECK-NOT: vector.contract
// CHECK: memref.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : memref<16x32x2xbf16> into memref<16x64xbf16>
// CHECK: vector.transfer_read %{{.+}} : memref<16x64xbf16>, vector<64xbf16>
// CHECK: vector.bitcast %{{.+}} : vector<2xbf16> to vector<1xi32>
// CHECK: vector.broadcast %{{.+}} : i32 to vector<16xi32>
// CHECK: vector.bitcast %{{.+}} : vector<16xi32> to vector<32xbf16>
// CHECK-COUNT-64: x86vector.avx512.dot %{{.+}}, %{{.+}}, %{{.+}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: x86vector.avx512.dot
// CHECK: vector.transfer_write
func.func @bf16_dot(%a: memref<8x16x2xbf16>, %b: memref<16x32x2xbf16>, %c: memref<8x32xf32>) attributes {target_cpu = "znver4"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : bf16
  %padf = arith.constant 0.0 : f32
  scf.for %t = %c0 to %c16 step %c1 {
    %lhs = vector.transfer_read %a[%c0, %t, %c0], %pad {in_bounds = [true, true, true]} : memref<8x16x2xbf16>, vector<8x1x2xbf16>
    %rhs = vector.transfer_read %b[%t, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<16x32x2xbf16>, vector<1x32x2xbf16>
    %acc = vector.transfer_read %c[%c0, %c0], %padf {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
    %r = vector.contract {indexing_maps = [affine_map<(i, j, t, p) -> (i, t, p)>, affine_map<(i, j, t, p) -> (t, j, p)>, affine_map<(i, j, t, p) -> (i, j)>],
                          iterator_types = ["parallel", "parallel", "reduction", "reduction"], kind = #vector.kind<add>}
        %lhs, %rhs, %acc : vector<8x1x2xbf16>, vector<1x32x2xbf16> into vector<8x32xf32>
    vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
  }
  return
}

// -----

// The same tile for a target without AVX512-BF16 (attn-tile widens bf16
// attention to f32 there, but a hand-written bf16 contraction, or a tile
// whose columns are no multiple of 4, gets here): the factors are extended
// and MLIR's contraction lowering takes the f32 contraction (as products and
// two-element reductions: a fallback for rare shapes, not a fast path).

// CHECK-LABEL: func @bf16_fma
// CHECK-NOT: x86vector
// CHECK-NOT: memref.collapse_shape
// CHECK-NOT: vector.contract
// CHECK: arith.extf %{{.+}} : vector<8x1x2xbf16> to vector<8x1x2xf32>
// CHECK: arith.extf %{{.+}} : vector<1x32x2xbf16> to vector<1x32x2xf32>
// CHECK: arith.mulf
// CHECK-NOT: x86vector
// CHECK-NOT: vector.contract
func.func @bf16_fma(%a: memref<8x16x2xbf16>, %b: memref<16x32x2xbf16>, %c: memref<8x32xf32>) attributes {target_cpu = "x86-64-v4"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : bf16
  %padf = arith.constant 0.0 : f32
  scf.for %t = %c0 to %c16 step %c1 {
    %lhs = vector.transfer_read %a[%c0, %t, %c0], %pad {in_bounds = [true, true, true]} : memref<8x16x2xbf16>, vector<8x1x2xbf16>
    %rhs = vector.transfer_read %b[%t, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<16x32x2xbf16>, vector<1x32x2xbf16>
    %acc = vector.transfer_read %c[%c0, %c0], %padf {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
    %r = vector.contract {indexing_maps = [affine_map<(i, j, t, p) -> (i, t, p)>, affine_map<(i, j, t, p) -> (t, j, p)>, affine_map<(i, j, t, p) -> (i, j)>],
                          iterator_types = ["parallel", "parallel", "reduction", "reduction"], kind = #vector.kind<add>}
        %lhs, %rhs, %acc : vector<8x1x2xbf16>, vector<1x32x2xbf16> into vector<8x32xf32>
    vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
  }
  return
}

// -----

// f32 erf (GELU's) is one rational function of the argument clamped to
// [-4, 4]: two ordered compares and selects (NaN passes through), x P(x^2)
// with P of degree 6 and Q(x^2) of degree 4 in Horner form (10 FMAs), one
// division, the quotient clamped into [-1, 1] (it can round a few ulp past
// 1 near |x| = 4); none of MLIR's per-interval coefficient selects.

// CHECK-LABEL: func @erf_rational
// CHECK-SAME: %[[X:[a-z0-9]+]]: vector<16xf32>
// CHECK-NOT: math.erf
// CHECK: %[[HI:.+]] = arith.cmpf ogt, %[[X]], %{{.+}} : vector<16xf32>
// CHECK: %[[C1:.+]] = arith.select %[[HI]], %{{.+}}, %[[X]]
// CHECK: %[[LO:.+]] = arith.cmpf olt, %[[C1]], %{{.+}} : vector<16xf32>
// CHECK: %[[C2:.+]] = arith.select %[[LO]], %{{.+}}, %[[C1]]
// CHECK: %[[X2:.+]] = arith.mulf %[[C2]], %[[C2]]
// CHECK-COUNT-6: math.fma %{{.+}}, %[[X2]], %{{.+}} : vector<16xf32>
// CHECK-COUNT-4: math.fma %{{.+}}, %[[X2]], %{{.+}} : vector<16xf32>
// CHECK: %[[P:.+]] = arith.mulf %[[C2]], %{{.+}} : vector<16xf32>
// CHECK: %[[R:.+]] = arith.divf %[[P]], %{{.+}} : vector<16xf32>
// CHECK: %[[RHI:.+]] = arith.cmpf ogt, %[[R]], %{{.+}} : vector<16xf32>
// CHECK: %[[R1:.+]] = arith.select %[[RHI]], %{{.+}}, %[[R]]
// CHECK: %[[RLO:.+]] = arith.cmpf olt, %[[R1]], %{{.+}} : vector<16xf32>
// CHECK: %[[R2:.+]] = arith.select %[[RLO]], %{{.+}}, %[[R1]]
// CHECK-NOT: arith.select
// CHECK: return %[[R2]]
func.func @erf_rational(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.erf %x : vector<16xf32>
  return %e : vector<16xf32>
}
