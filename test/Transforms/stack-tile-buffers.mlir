// RUN: attn-opt %s --split-input-file --attn-stack-tile-buffers | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-stack-tile-buffers=max-bytes=4096 | FileCheck %s --check-prefix=SMALL
// RUN: not attn-opt %s --split-input-file --attn-stack-tile-buffers=max-bytes=2000000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANGE

// A parallel loop's temporaries (a query tile's scores and row sums): allocas
// in an alloca_scope around the body, their deallocations gone. With a
// 4 KB budget the 8 KB scores stay on the heap and the row sums still fit.
// CHECK-LABEL: func.func @parallel
// CHECK: scf.parallel
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: %[[S:.+]] = memref.alloca() {alignment = 64 : i64} : memref<32x64xf32>
// CHECK-NEXT: %[[L:.+]] = memref.alloca() {alignment = 64 : i64} : memref<32xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[S]] : memref<32x64xf32>)
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[L]] : memref<32xf32>)
// CHECK-NOT: memref.dealloc
// CHECK: scf.reduce
// SMALL-LABEL: func.func @parallel
// SMALL: memref.alloca_scope {
// SMALL-NEXT: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
// SMALL-NEXT: memref.alloca() {alignment = 64 : i64} : memref<32xf32>
// SMALL: memref.dealloc %[[S]]
// SMALL-NOT: memref.dealloc
// SMALL: scf.reduce
func.func @parallel(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %s = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
    %l = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
    linalg.fill ins(%zero : f32) outs(%s : memref<32x64xf32>)
    linalg.fill ins(%zero : f32) outs(%l : memref<32xf32>)
    %x = memref.load %s[%c0, %c0] : memref<32x64xf32>
    %y = memref.load %l[%c0] : memref<32xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %out[%i] : memref<8xf32>
    memref.dealloc %s : memref<32x64xf32>
    memref.dealloc %l : memref<32xf32>
    scf.reduce
  }
  return
}

// -----

// A sequential loop (a forall on one thread): the buffer moves into the
// function's frame, one for every iteration.
// CHECK-LABEL: func.func @sequential
// CHECK-NEXT: %[[S:.+]] = memref.alloca() {alignment = 64 : i64} : memref<16x16xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[S]] : memref<16x16xf32>)
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @sequential(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %s = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
    linalg.fill ins(%zero : f32) outs(%s : memref<16x16xf32>)
    %x = memref.load %s[%c0, %c0] : memref<16x16xf32>
    memref.store %x, %out[%i] : memref<8xf32>
    memref.dealloc %s : memref<16x16xf32>
  }
  return
}

// -----

// Left on the heap: a dynamic size, a buffer a call receives, one freed in a
// nested region, one whose element type has no byte size here, a buffer
// above the budget, and a sequential loop inside a parallel one (its
// buffers are the parallel iteration's).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.alloca
// CHECK: return
func.func private @use(memref<4xf32>)
func.func @kept(%n: index, %cond: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %d = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %d : memref<?xf32>
    %c = memref.alloc() : memref<4xf32>
    func.call @use(%c) : (memref<4xf32>) -> ()
    memref.dealloc %c : memref<4xf32>
    %f = memref.alloc() : memref<4xf32>
    scf.if %cond {
      memref.dealloc %f : memref<4xf32>
    }
    %v = memref.alloc() : memref<4xvector<4xf32>>
    memref.dealloc %v : memref<4xvector<4xf32>>
    %big = memref.alloc() : memref<1024x1024xf32>
    memref.dealloc %big : memref<1024x1024xf32>
  }
  scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
    scf.for %i = %c0 to %c8 step %c1 {
      %t = memref.alloc() : memref<4xf32>
      memref.dealloc %t : memref<4xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Left on the heap: a buffer a sequential loop yields (the next iteration
// frees it: one frame buffer would alias the previous iteration's), one
// passed to a nested loop as its iter_arg, a buffer without its own
// dealloc, one whose view is yielded, and the buffers of a loop under an
// scf.forall (its iterations run at once) or of a parallel loop nested in
// another (one budget per thread's stack).
// CHECK-LABEL: func.func @escapes
// CHECK-NOT: memref.alloca
// CHECK: return
func.func @escapes(%init: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (memref<4xf32>) {
    %new = memref.alloc() : memref<4xf32>
    memref.copy %acc, %new : memref<4xf32> to memref<4xf32>
    memref.dealloc %acc : memref<4xf32>
    scf.yield %new : memref<4xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %b = memref.alloc() : memref<4xf32>
    %inner = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %b) -> (memref<4xf32>) {
      scf.yield %x : memref<4xf32>
    }
    memref.dealloc %inner : memref<4xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %undeallocated = memref.alloc() : memref<4xf32>
    %one = arith.constant 1.0 : f32
    memref.store %one, %undeallocated[%c0] : memref<4xf32>
  }
  %v = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (memref<4xf32>) {
    %wide = memref.alloc() : memref<8xf32>
    %view = memref.subview %wide[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
    %cast = memref.cast %view : memref<4xf32, strided<[1]>> to memref<4xf32>
    memref.dealloc %wide : memref<8xf32>
    scf.yield %cast : memref<4xf32>
  }
  scf.forall (%k) in (8) {
    scf.for %i = %c0 to %c8 step %c1 {
      %t = memref.alloc() : memref<4xf32>
      memref.dealloc %t : memref<4xf32>
    }
  }
  scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
    scf.parallel (%k) = (%c0) to (%c8) step (%c1) {
      %t = memref.alloc() : memref<4xf32>
      memref.dealloc %t : memref<4xf32>
      scf.reduce
    }
    scf.reduce
  }
  return %r : memref<4xf32>
}

// -----

// The budget is bounded (thread stacks are a few MB).
// RANGE: error: attn-stack-tile-buffers: max-bytes must be in [0, 1048576], got 2000000
func.func @range() {
  return
}
