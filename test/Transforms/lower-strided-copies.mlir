// RUN: attn-opt %s --split-input-file --attn-lower-strided-copies | FileCheck %s

// A head sliced out of a projection, copied into a padded tile: loops over
// the outer dimensions around one vector row (the innermost dimension is
// contiguous on both sides).
// CHECK-LABEL: func @sliced_to_padded
// CHECK: scf.for %[[I:.+]] = %c0 to %c4 step %c1
// CHECK: scf.for %[[J:.+]] = %c0 to %c17 step %c1
// CHECK: %[[V:.+]] = vector.load %arg0[%[[I]], %[[J]], %c0] : memref<4x17x16xf32, strided<[16, 192, 1], offset: ?>>, vector<16xf32>
// CHECK: vector.store %[[V]], %arg1[%[[I]], %[[J]], %c0] : memref<4x17x16xf32, strided<[512, 16, 1]>>, vector<16xf32>
// CHECK-NOT: memref.copy
// CHECK: return
func.func @sliced_to_padded(%src: memref<4x17x16xf32, strided<[16, 192, 1], offset: ?>>, %dst: memref<4x17x16xf32, strided<[512, 16, 1]>>) {
  memref.copy %src, %dst : memref<4x17x16xf32, strided<[16, 192, 1], offset: ?>> to memref<4x17x16xf32, strided<[512, 16, 1]>>
  return
}

// -----

// Both contiguous: LLVM's memcpy already; a strided innermost dimension, a
// dynamic shape, or i1 elements (a vector of i1 is packed in memory, a
// memref of i1 is not): left to memrefCopy.
// CHECK-LABEL: func @left
// CHECK-COUNT-4: memref.copy
// CHECK-NOT: vector.load
func.func @left(%a: memref<4x16xf32>, %b: memref<4x16xf32>,
                %c: memref<4x16xf32, strided<[1, 4]>>,
                %d: memref<?x16xf32, strided<[32, 1]>>, %e: memref<?x16xf32>,
                %f: memref<4x16xi1, strided<[32, 1]>>, %g: memref<4x16xi1>) {
  memref.copy %a, %b : memref<4x16xf32> to memref<4x16xf32>
  memref.copy %c, %b : memref<4x16xf32, strided<[1, 4]>> to memref<4x16xf32>
  memref.copy %d, %e : memref<?x16xf32, strided<[32, 1]>> to memref<?x16xf32>
  memref.copy %f, %g : memref<4x16xi1, strided<[32, 1]>> to memref<4x16xi1>
  return
}

// -----

// Long rows in chunks of 256 and one remainder: 300 = 256 + 44 (one chunk,
// no chunk loop), 600 = 2 x 256 (a loop) + 88; a contiguous source into a
// strided destination (a tile padded into a larger buffer).
// CHECK-LABEL: func @long_rows
// CHECK: scf.for %[[I:.+]] = %c0 to %c2 step %c1
// CHECK-NOT: scf.for
// CHECK: %[[A:.+]] = vector.load %arg0[%[[I]], %c0] : {{.+}}, vector<256xf32>
// CHECK: vector.store %[[A]], %arg1[%[[I]], %c0]
// CHECK: %[[B:.+]] = vector.load %arg0[%[[I]], %c256] : {{.+}}, vector<44xf32>
// CHECK: vector.store %[[B]], %arg1[%[[I]], %c256]
// CHECK: scf.for %[[K:.+]] = %c0 to %c2 step %c1
// CHECK: scf.for %[[C:.+]] = %c0 to %c512 step %c256
// CHECK: vector.load %arg2[%[[K]], %[[C]]] : {{.+}}, vector<256xf32>
// CHECK: vector.load %arg2[%[[K]], %c512] : {{.+}}, vector<88xf32>
// CHECK-NOT: memref.copy
// CHECK: return
func.func @long_rows(%a: memref<2x300xf32, strided<[600, 1]>>, %b: memref<2x300xf32>,
                     %c: memref<2x600xf32>, %d: memref<2x600xf32, strided<[1024, 1]>>) {
  memref.copy %a, %b : memref<2x300xf32, strided<[600, 1]>> to memref<2x300xf32>
  memref.copy %c, %d : memref<2x600xf32> to memref<2x600xf32, strided<[1024, 1]>>
  return
}

// -----

// Buffers contiguous at an offset (static or dynamic) are memcpys too.
// CHECK-LABEL: func @rows
// CHECK-COUNT-2: memref.copy
// CHECK-NOT: vector.load
func.func @rows(%a: memref<17xf32, strided<[1], offset: 3>>, %b: memref<17xf32>,
                %c: memref<17xf32, strided<[1], offset: ?>>, %d: memref<17xf32, strided<[1], offset: ?>>) {
  memref.copy %a, %b : memref<17xf32, strided<[1], offset: 3>> to memref<17xf32>
  memref.copy %c, %d : memref<17xf32, strided<[1], offset: ?>> to memref<17xf32, strided<[1], offset: ?>>
  return
}
