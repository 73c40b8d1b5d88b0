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

// A 16 x 16 transpose becomes shuffles, not 256 element moves.

// CHECK-LABEL: func @transpose16
// CHECK-NOT: vector.transpose
// CHECK: vector.shuffle
// CHECK-NOT: vector.extract %{{.+}}[0, 0] : f32
func.func @transpose16(%x: vector<16x16xf32>) -> vector<16x16xf32> {
  %t = vector.transpose %x, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
  return %t : vector<16x16xf32>
}
