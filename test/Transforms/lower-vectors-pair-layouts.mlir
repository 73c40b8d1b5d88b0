// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-lower-vectors | FileCheck %s

// The bf16 pair layouts attn-tile builds once per call for the dot
// products (docs/Design.md, "bf16 dot products"), as attn-vectorize leaves
// them: reads and writes of whole rows of pairs, and the transposes on
// integer lanes. Element by element (one 32-bit load or store per pair, bf16
// shuffles that LLVM assembles value by value) the layouts took 7 % of bf16
// attention on AMX tiles at L = 1024.

// K^T: a block of 16 keys x 16 pairs into 16 pairs x 16 keys is a 16 x 16
// transpose of 32-bit lanes, read and written as 16 rows of 32 values.
// CHECK-LABEL: func @keys
// CHECK: %[[KIN:.+]] = memref.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : memref<1x64x32x2xbf16> into memref<1x64x64xbf16>
// CHECK: vector.transfer_read %[[KIN]]{{.+}} : memref<1x64x64xbf16>, vector<1x16x32xbf16>
// CHECK: vector.bitcast %{{.+}} : vector<16x32xbf16> to vector<16x16xi32>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29] : vector<16xi32>, vector<16xi32>
// CHECK-NOT: vector<2xbf16>
// CHECK: vector.bitcast %{{.+}} : vector<16x16xi32> to vector<16x32xbf16>
// CHECK: %[[KOUT:.+]] = memref.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : memref<1x32x64x2xbf16> into memref<1x32x128xbf16>
// CHECK: vector.transfer_write %{{.+}}, %[[KOUT]]{{.+}} : vector<1x16x32xbf16>, memref<1x32x128xbf16>
func.func @keys(%k: memref<1x64x32x2xbf16>, %out: memref<1x32x64x2xbf16>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %block = vector.transfer_read %k[%c0, %c0, %c0, %c0], %pad {in_bounds = [true, true, true, true]} : memref<1x64x32x2xbf16>, vector<1x16x16x2xbf16>
  %t = vector.transpose %block, [0, 2, 1, 3] : vector<1x16x16x2xbf16> to vector<1x16x16x2xbf16>
  vector.transfer_write %t, %out[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x16x16x2xbf16>, memref<1x32x64x2xbf16>
  return
}

// -----

// V: rows 2t and 2t + 1 interleaved into pairs, one i16 shuffle, written
// as one row of 32 values.
// CHECK-LABEL: func @values
// CHECK: %[[ROWS:.+]] = arith.bitcast %{{.+}} : vector<32xbf16> to vector<32xi16>
// CHECK: %[[PAIRS:.+]] = vector.shuffle %[[ROWS]], %[[ROWS]] [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31] : vector<32xi16>, vector<32xi16>
// CHECK: arith.bitcast %[[PAIRS]] : vector<32xi16> to vector<32xbf16>
// CHECK-NOT: vector<2xbf16>
// CHECK: %[[VOUT:.+]] = memref.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : memref<1x32x64x2xbf16> into memref<1x32x128xbf16>
// CHECK: vector.transfer_write %{{.+}}, %[[VOUT]]{{.+}} : vector<1x1x32xbf16>, memref<1x32x128xbf16>
func.func @values(%v: memref<1x32x2x64xbf16>, %out: memref<1x32x64x2xbf16>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %rows = vector.transfer_read %v[%c0, %c0, %c0, %c0], %pad {in_bounds = [true, true, true, true]} : memref<1x32x2x64xbf16>, vector<1x1x2x16xbf16>
  %t = vector.transpose %rows, [0, 1, 3, 2] : vector<1x1x2x16xbf16> to vector<1x1x16x2xbf16>
  vector.transfer_write %t, %out[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x1x16x2xbf16>, memref<1x32x64x2xbf16>
  return
}

// -----

// A read whose pairs are not contiguous rows (pairs 4 values apart) is left
// as it is; the write into contiguous rows is still whole rows.
// CHECK-LABEL: func @strided
// CHECK-NOT: memref.collapse_shape
// CHECK: vector.transfer_read %{{.+}} : memref<64x32x2xbf16, strided<[128, 4, 1]>>, vector<16x16x2xbf16>
// CHECK: memref.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : memref<32x64x2xbf16> into memref<32x128xbf16>
// CHECK: return
func.func @strided(%k: memref<64x32x2xbf16, strided<[128, 4, 1]>>, %out: memref<32x64x2xbf16>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %block = vector.transfer_read %k[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<64x32x2xbf16, strided<[128, 4, 1]>>, vector<16x16x2xbf16>
  %t = vector.transpose %block, [1, 0, 2] : vector<16x16x2xbf16> to vector<16x16x2xbf16>
  vector.transfer_write %t, %out[%c0, %c0, %c0] {in_bounds = [true, true, true]} : vector<16x16x2xbf16>, memref<32x64x2xbf16>
  return
}

// -----

// Any other transpose of bf16 values runs on i16 lanes; a masked read of
// pairs is not made rows.
// CHECK-LABEL: func @other
// CHECK: vector.transfer_read %{{.+}} : memref<4x8x2xbf16>, vector<4x8x2xbf16>
// CHECK: arith.bitcast %{{.+}} : vector<4x8x2xbf16> to vector<4x8x2xi16>
// CHECK: arith.bitcast %{{.+}} : vector<8x2x4xi16> to vector<8x2x4xbf16>
// CHECK: return
func.func @other(%a: memref<4x8x2xbf16>, %mask: vector<4x8x2xi1>) -> vector<8x2x4xbf16> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %v = vector.transfer_read %a[%c0, %c0, %c0], %pad, %mask {in_bounds = [true, true, true]} : memref<4x8x2xbf16>, vector<4x8x2xbf16>
  %t = vector.transpose %v, [1, 2, 0] : vector<4x8x2xbf16> to vector<8x2x4xbf16>
  return %t : vector<8x2x4xbf16>
}
