// RUN: attn-opt %s --split-input-file --attn-runtime-checks | FileCheck %s

// Accesses whose indices are known only at run time are checked first; a
// failed check calls the runtime's @attn_check_failed with a message at
// the op's location, in the form of the compile-time diagnostics.

// CHECK: func.func private @attn_check_failed(!llvm.ptr)
// CHECK-DAG: llvm.mlir.global internal constant @[[LOAD:attn_check_message[_0-9]*]]("{{.*}}runtime-checks.mlir:[[@LINE+25]]:10: error: memref.load: out-of-bounds access (a run-time check)\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[VLOAD:attn_check_message[_0-9]*]]("{{.*}}runtime-checks.mlir:[[@LINE+25]]:10: error: vector.load: out-of-bounds access (a run-time check)\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[ALOAD:attn_check_message[_0-9]*]]("{{.*}}runtime-checks.mlir:[[@LINE+27]]:10: error: affine.load: out-of-bounds access (a run-time check)\00")
// CHECK-LABEL: func.func @loops
// CHECK: scf.for %[[I:.*]] = %{{.*}} to
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[I]], %{{.*}} : index
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : index
// CHECK: %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[BAD:.*]] = arith.xori %[[OK]], %{{.*}} : i1
// CHECK: scf.if %[[BAD]] {
// CHECK:   %[[MSG:.*]] = llvm.mlir.addressof @[[LOAD]] : !llvm.ptr
// CHECK:   func.call @attn_check_failed(%[[MSG]]) : (!llvm.ptr) -> ()
// CHECK: }
// CHECK: memref.load
// The whole vector: i <= 8 - 4.
// CHECK: %[[LAST:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: arith.cmpi sle, %[[I]], %[[LAST]] : index
// CHECK: llvm.mlir.addressof @[[VLOAD]]
// CHECK: vector.load
// CHECK: llvm.mlir.addressof @[[ALOAD]]
// CHECK: affine.load
func.func @loops(%m: memref<4xf32>, %w: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %m[%i] : memref<4xf32>
    %v = vector.load %w[%i] : memref<8xf32>, vector<4xf32>
  }
  affine.for %j = 0 to 3 {
    %a = affine.load %m[%j * 2] : memref<4xf32>
  }
  return
}

// -----

// The user's cf.assert gets the same exit, with its own message; the attn
// op's region is the lowering's (it clamps its data-dependent indices) and
// is left alone.

// CHECK: llvm.mlir.global internal constant @[[USER:attn_check_message[_0-9]*]]("{{.*}}runtime-checks.mlir:[[@LINE+14]]:3: error: cf.assert failed: not positive\00")
// CHECK-LABEL: func.func @user_assert
// CHECK-NOT: cf.assert
// CHECK: scf.if
// CHECK: llvm.mlir.addressof @[[USER]]
// CHECK: attn.sdpa
// CHECK: mask_mod
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tensor.extract %{{.*}}[%{{.*}}] : tensor<4xi32>
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: attn.yield
func.func @user_assert(%q: tensor<1x1x4x4xf32>, %doc: tensor<4xi32>, %x: i32) -> tensor<1x1x4x4xf32> {
  %c0 = arith.constant 0 : i32
  %pos = arith.cmpi sgt, %x, %c0 : i32
  cf.assert %pos, "not positive"
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %d = tensor.extract %doc[%j] : tensor<4xi32>
      %same = arith.cmpi eq, %d, %x : i32
      attn.yield %same : i1
    }
  return %o : tensor<1x1x4x4xf32>
}

// -----

// Nothing to check: no declaration, no globals.

// CHECK-LABEL: module
// CHECK-NOT: attn_check
// CHECK: func.func @nothing
func.func @nothing(%m: memref<4xf32>) -> f32 {
  %c3 = arith.constant 3 : index
  %x = memref.load %m[%c3] : memref<4xf32>
  return %x : f32
}

// -----

// Linalg's checks sit inside an scf.if of their own: they call the runtime
// too, no cf.assert is left to abort.

// CHECK-LABEL: func.func @linalg_shapes
// CHECK-NOT: cf.assert
// CHECK: func.call @attn_check_failed
// CHECK-NOT: cf.assert
// CHECK: linalg.copy
func.func @linalg_shapes(%a: tensor<?xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.copy ins(%a : tensor<?xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// Integer division: a zero divisor, and for signed division the minimum
// integer over -1, would trap (SIGFPE); vectors are checked in every lane.
// Division by a nonzero constant needs no check.

// CHECK-LABEL: func.func @divide
// CHECK: arith.cmpi eq, %{{.+}}, %c0_i32 : i32
// CHECK: func.call @attn_check_failed
// CHECK: arith.cmpi eq, %{{.+}}, %c-2147483648_i32 : i32
// CHECK: arith.cmpi eq, %{{.+}}, %c-1_i32 : i32
// CHECK: func.call @attn_check_failed
// CHECK: arith.divsi
// CHECK: arith.cmpi eq, %{{.+}}, %c0 : index
// CHECK: func.call @attn_check_failed
// CHECK-NOT: arith.cmpi eq, %{{.+}}, %c-9223372036854775808
// CHECK: arith.remui
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : vector<4xi16>
// CHECK: vector.reduction <or>, %{{.+}} : vector<4xi1> into i1
// CHECK: func.call @attn_check_failed
// CHECK: arith.floordivsi %{{.+}} : vector<4xi16>
// CHECK-NOT: func.call @attn_check_failed
// CHECK: arith.divui %{{.+}}, %c3
// CHECK-NOT: func.call @attn_check_failed
// CHECK: arith.divsi %{{.+}}, %c-3_i32
// CHECK-NOT: func.call @attn_check_failed
// CHECK: arith.remsi %{{.+}}, %cst{{.*}} : vector<2xi16>
// Constant divisors with a zero or -1 lane are checked.
// CHECK: func.call @attn_check_failed
// CHECK: arith.divui %{{.+}}, %cst{{.*}} : vector<2xi16>
// CHECK: func.call @attn_check_failed
// CHECK: arith.divsi %{{.+}}, %c-1_i32
func.func @divide(%a: i32, %b: i32, %i: index, %n: index, %v: vector<4xi16>, %w: vector<4xi16>) -> (i32, index, vector<4xi16>, index, i32, vector<2xi16>, vector<2xi16>, i32) {
  %q = arith.divsi %a, %b : i32
  %r = arith.remui %i, %n : index
  %f = arith.floordivsi %v, %w : vector<4xi16>
  %c3 = arith.constant 3 : index
  %t = arith.divui %i, %c3 : index
  %cm3 = arith.constant -3 : i32
  %s = arith.divsi %a, %cm3 : i32
  %v2 = vector.extract_strided_slice %v {offsets = [0], sizes = [2], strides = [1]} : vector<4xi16> to vector<2xi16>
  %k = arith.constant dense<[5, 7]> : vector<2xi16>
  %u = arith.remsi %v2, %k : vector<2xi16>
  %z = arith.constant dense<[5, 0]> : vector<2xi16>
  %x = arith.divui %v2, %z : vector<2xi16>
  %cm1 = arith.constant -1 : i32
  %y = arith.divsi %a, %cm1 : i32
  return %q, %r, %f, %t, %s, %u, %x, %y : i32, index, vector<4xi16>, index, i32, vector<2xi16>, vector<2xi16>, i32
}
