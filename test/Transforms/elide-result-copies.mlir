// RUN: attn-opt %s --split-input-file --attn-elide-result-copies | FileCheck %s

// A layer computed on [6, 4] and returned as [2, 3, 4]: its buffer becomes
// the out-parameter's collapse, the copy goes, and the caller's buffer gets
// the function's alignment.
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%[[X:.+]]: memref<2x3x4xf32>, %[[OUT:.+]]: memref<2x3x4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[BUF:.+]] = memref.collapse_shape %[[OUT]] {{\[\[}}0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[XC:.+]] = memref.collapse_shape %[[X]]
// CHECK-NOT: memref.alloc
// CHECK: memref.copy %[[XC]], %[[BUF]]
// CHECK: linalg.fill {{.+}} outs(%[[BUF]] : memref<6x4xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
// CHECK-LABEL: func.func @caller
// CHECK: %[[B1:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x4xf32>
// CHECK: call @layer(%arg0, %[[B1]])
// CHECK: %[[B2:.+]] = memref.alloc() {alignment = 128 : i64} : memref<2x3x4xf32>
// CHECK: call @layer(%[[B1]], %[[B2]])
func.func private @layer(%x: memref<2x3x4xf32>, %out: memref<2x3x4xf32>) {
  %buf = memref.alloc() {alignment = 64 : i64} : memref<6x4xf32>
  %xc = memref.collapse_shape %x [[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
  // Scratch first, then the result: both now in the out-parameter.
  memref.copy %xc, %buf : memref<6x4xf32> to memref<6x4xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<6x4xf32>)
  %view = memref.expand_shape %buf [[0, 1], [2]] output_shape [2, 3, 4] : memref<6x4xf32> into memref<2x3x4xf32>
  memref.copy %view, %out : memref<2x3x4xf32> to memref<2x3x4xf32>
  return
}
func.func @caller(%x: memref<2x3x4xf32>) -> f32 {
  %b1 = memref.alloc() : memref<2x3x4xf32>
  call @layer(%x, %b1) : (memref<2x3x4xf32>, memref<2x3x4xf32>) -> ()
  %b2 = memref.alloc() {alignment = 128 : i64} : memref<2x3x4xf32>
  call @layer(%b1, %b2) : (memref<2x3x4xf32>, memref<2x3x4xf32>) -> ()
  %c0 = arith.constant 0 : index
  %v = memref.load %b2[%c0, %c0, %c0] : memref<2x3x4xf32>
  return %v : f32
}

// -----

// A collapse then an expand (the inverse of each, in reverse order), and a
// plain buffer (no view at all) into a second out-parameter.
// CHECK-LABEL: func.func private @reshaped
// CHECK-SAME: %[[OUT:[^:]+]]: memref<4x6xf32>, %[[OUT2:[^:]+]]: memref<8xf32>
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[E:.+]] = memref.collapse_shape %[[OUT]] {{\[\[}}0, 1]] : memref<4x6xf32> into memref<24xf32>
// CHECK-DAG: %[[B:.+]] = memref.expand_shape %[[E]] {{\[\[}}0, 1, 2]] output_shape [2, 3, 4] : memref<24xf32> into memref<2x3x4xf32>
// CHECK-DAG: linalg.fill {{.+}} outs(%[[B]] : memref<2x3x4xf32>)
// CHECK-DAG: linalg.fill {{.+}} outs(%[[OUT2]] : memref<8xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func private @reshaped(%out: memref<4x6xf32>, %out2: memref<8xf32>) {
  %buf = memref.alloc() : memref<2x3x4xf32>
  %small = memref.alloc() : memref<8xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<2x3x4xf32>)
  linalg.fill ins(%c : f32) outs(%small : memref<8xf32>)
  %flat = memref.collapse_shape %buf [[0, 1, 2]] : memref<2x3x4xf32> into memref<24xf32>
  %view = memref.expand_shape %flat [[0, 1]] output_shape [4, 6] : memref<24xf32> into memref<4x6xf32>
  memref.copy %view, %out : memref<4x6xf32> to memref<4x6xf32>
  memref.copy %small, %out2 : memref<8xf32> to memref<8xf32>
  return
}
func.func @caller() {
  %b = memref.alloc() : memref<4x6xf32>
  %s = memref.alloc() : memref<8xf32>
  call @reshaped(%b, %s) : (memref<4x6xf32>, memref<8xf32>) -> ()
  return
}

// -----

// One buffer copied into two out-parameters: the last copy's becomes the
// buffer, the other copy then reads it from there. A view with another use
// (a load) stays, over the out-parameter. A function nobody calls is
// rewritten too.
// CHECK-LABEL: func.func private @two_outs
// CHECK-SAME: %[[A:[^:]+]]: memref<2x2xf32>, %[[B:[^:]+]]: memref<2x2xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[BUF:.+]] = memref.collapse_shape %[[B]] {{\[\[}}0, 1]] : memref<2x2xf32> into memref<4xf32>
// CHECK: linalg.fill {{.+}} outs(%[[BUF]] : memref<4xf32>)
// CHECK: %[[VIEW:.+]] = memref.expand_shape %[[BUF]]
// CHECK: memref.load %[[VIEW]]
// CHECK: memref.copy %[[VIEW]], %[[A]]
// CHECK-NOT: memref.copy
// CHECK: return
// CHECK-LABEL: func.func private @uncalled
// CHECK-NOT: memref.copy
func.func private @two_outs(%a: memref<2x2xf32>, %b: memref<2x2xf32>) -> f32 {
  %buf = memref.alloc() : memref<4xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<4xf32>)
  %view = memref.expand_shape %buf [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %view[%c0, %c0] : memref<2x2xf32>
  memref.copy %view, %a : memref<2x2xf32> to memref<2x2xf32>
  memref.copy %view, %b : memref<2x2xf32> to memref<2x2xf32>
  return %v : f32
}
func.func private @uncalled(%out: memref<4xf32>) {
  %buf = memref.alloc() : memref<4xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<4xf32>)
  memref.copy %buf, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func @caller() -> f32 {
  %a = memref.alloc() : memref<2x2xf32>
  %b = memref.alloc() : memref<2x2xf32>
  %v = call @two_outs(%a, %b) : (memref<2x2xf32>, memref<2x2xf32>) -> f32
  return %v : f32
}

// -----

// Left alone: a public function (its callers may pass an output that
// aliases an input).
// CHECK-LABEL: func.func @public_layer
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @public_layer(%out: memref<2x3xf32>) {
  %buf = memref.alloc() : memref<6xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<6xf32>)
  %view = memref.expand_shape %buf [[0, 1]] output_shape [2, 3] : memref<6xf32> into memref<2x3xf32>
  memref.copy %view, %out : memref<2x3xf32> to memref<2x3xf32>
  return
}

// -----

// Left alone, for what their callers pass: a view of the buffer as another
// operand, the buffer itself as another operand, an argument, a buffer
// filled before the call, a buffer carried around a loop into the next
// call's input, and a function whose symbol has a use other than a call.
// CHECK-LABEL: func.func private @aliased_view
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func private @aliased_twice
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func private @from_argument
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func private @filled_before
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func private @in_loop
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func private @referenced
// CHECK: memref.alloc
// CHECK: memref.copy
func.func private @aliased_view(%x: memref<2xf32>, %out: memref<4xf32>) {
  %buf = memref.alloc() : memref<4xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<4xf32>)
  memref.copy %buf, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func private @aliased_twice(%x: memref<4xf32>, %out: memref<4xf32>) {
  %buf = memref.alloc() : memref<4xf32>
  memref.copy %x, %buf : memref<4xf32> to memref<4xf32>
  memref.copy %buf, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func private @from_argument(%out: memref<4xf32>) {
  %buf = memref.alloc() : memref<4xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<4xf32>)
  memref.copy %buf, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func private @filled_before(%out: memref<4xf32>) {
  %buf = memref.alloc() : memref<4xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<4xf32>)
  memref.copy %buf, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func private @in_loop(%x: memref<4xf32>, %out: memref<4xf32>) {
  %buf = memref.alloc() : memref<4xf32>
  memref.copy %x, %buf : memref<4xf32> to memref<4xf32>
  memref.copy %buf, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func private @referenced(%out: memref<4xf32>) {
  %buf = memref.alloc() : memref<4xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<4xf32>)
  memref.copy %buf, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func @callers(%arg: memref<4xf32>) -> ((memref<4xf32>) -> ()) {
  %b = memref.alloc() : memref<4xf32>
  %view = memref.subview %b[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  %cast = memref.cast %view : memref<2xf32, strided<[1]>> to memref<2xf32>
  call @aliased_view(%cast, %b) : (memref<2xf32>, memref<4xf32>) -> ()
  %t = memref.alloc() : memref<4xf32>
  call @aliased_twice(%t, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  call @from_argument(%arg) : (memref<4xf32>) -> ()
  %f = memref.alloc() : memref<4xf32>
  %c = arith.constant 0.0 : f32
  linalg.fill ins(%c : f32) outs(%f : memref<4xf32>)
  call @filled_before(%f) : (memref<4xf32>) -> ()
  %l = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%cur = %arg) -> (memref<4xf32>) {
    func.call @in_loop(%cur, %l) : (memref<4xf32>, memref<4xf32>) -> ()
    scf.yield %l : memref<4xf32>
  }
  %s = memref.alloc() : memref<4xf32>
  call @referenced(%s) : (memref<4xf32>) -> ()
  %fn = func.constant @referenced : (memref<4xf32>) -> ()
  return %fn : (memref<4xf32>) -> ()
}

// -----

// Left alone, for the function itself: its out-parameter has another use,
// its copy is not at its end, or its copy reads a part of its buffer (a
// subview, cast to the out-parameter's type).
// CHECK-LABEL: func.func private @out_read
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func private @not_last
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func private @sliced
// CHECK: memref.alloc
// CHECK: memref.copy
func.func private @out_read(%out: memref<4xf32>) -> f32 {
  %buf = memref.alloc() : memref<4xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<4xf32>)
  %c0 = arith.constant 0 : index
  %v = memref.load %out[%c0] : memref<4xf32>
  memref.copy %buf, %out : memref<4xf32> to memref<4xf32>
  return %v : f32
}
func.func private @not_last(%out: memref<4xf32>) {
  %buf = memref.alloc() : memref<4xf32>
  %c = arith.constant 1.0 : f32
  memref.copy %buf, %out : memref<4xf32> to memref<4xf32>
  linalg.fill ins(%c : f32) outs(%buf : memref<4xf32>)
  return
}
func.func private @sliced(%out: memref<4xf32>) {
  %buf = memref.alloc() : memref<8xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%buf : memref<8xf32>)
  %part = memref.subview %buf[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %cast = memref.cast %part : memref<4xf32, strided<[1]>> to memref<4xf32>
  memref.copy %cast, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func @callers() -> f32 {
  %r = memref.alloc() : memref<4xf32>
  %v = call @out_read(%r) : (memref<4xf32>) -> f32
  %n = memref.alloc() : memref<4xf32>
  call @not_last(%n) : (memref<4xf32>) -> ()
  %s = memref.alloc() : memref<4xf32>
  call @sliced(%s) : (memref<4xf32>) -> ()
  return %v : f32
}
