// Indices known only at run time (a loop running past a dimension, an index
// read from an input) are checked by the compiled code (attn-runtime-checks):
// one error line at the op and exit status 1, never an access outside the
// buffer. A failing cf.assert of the user's ends the same way.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: not attn-run %t/loop.mlir 2>&1 | FileCheck %s --check-prefix=LOOP
// LOOP: attn-run: {{.*}}loop.mlir: lowering
// LOOP-NEXT: {{.*}}loop.mlir:7:10: error: memref.load: out-of-bounds access (a run-time check)
// LOOP-NOT: @f from
// RUN: not attn-run %t/vector.mlir 2>&1 | FileCheck %s --check-prefix=VECTOR
// VECTOR: {{.*}}vector.mlir:8:5: error: vector.store: out-of-bounds access (a run-time check)
// RUN: not attn-run %t/affine.mlir 2>&1 | FileCheck %s --check-prefix=AFFINE
// AFFINE: {{.*}}affine.mlir:4:10: error: affine.load: out-of-bounds access (a run-time check)
// RUN: not attn-run %t/assert.mlir 2>&1 | FileCheck %s --check-prefix=ASSERT
// ASSERT: {{.*}}assert.mlir:3:3: error: cf.assert failed: no
// An index from an input: in range it runs, past the end it is the error.
// RUN: %torch_python -c "import numpy as np; np.save('%t/ok.npy', np.array([3], np.int32)); np.save('%t/bad.npy', np.array([7], np.int32))"
// RUN: attn-run %t/gather.mlir --input 1=%t/ok.npy | FileCheck %s --check-prefix=GATHER-OK
// GATHER-OK: result 0: 1xf32
// RUN: not attn-run %t/gather.mlir --input 1=%t/bad.npy 2>&1 | FileCheck %s --check-prefix=GATHER
// GATHER: {{.*}}gather.mlir:5:8: error: tensor.extract: out-of-bounds access (a run-time check)
// Linalg's own checks (the shapes a dynamic slice gives it) end the same way.
// RUN: %torch_python -c "import numpy as np; np.save('%t/n4.npy', np.array([4], np.int32)); np.save('%t/n5.npy', np.array([5], np.int32))"
// RUN: attn-run %t/linalg.mlir --input 1=%t/n4.npy | FileCheck %s --check-prefix=LINALG-OK
// LINALG-OK: result 0: 4xf32
// RUN: not attn-run %t/linalg.mlir --input 1=%t/n5.npy 2>&1 | FileCheck %s --check-prefix=LINALG
// LINALG: {{.*}}linalg.mlir:7:8: error: linalg.copy: dimension #0 of input/output operand #1 is incompatible with inferred dimension size (a run-time check)
// Integer division by a zero input, and the minimum integer over -1 (x86's
// idiv traps on both: SIGFPE without the checks); other inputs run.
// RUN: %torch_python -c "import numpy as np; np.save('%t/num.npy', np.array([7, -2147483648, 5, 9], np.int32)); np.save('%t/zero.npy', np.array([2, 1, 0, 3], np.int32)); np.save('%t/minus1.npy', np.array([2, -1, 1, 3], np.int32)); np.save('%t/den.npy', np.array([2, 1, 1, 3], np.int32))"
// RUN: attn-run %t/divide.mlir --input 0=%t/num.npy --input 1=%t/den.npy | FileCheck %s --check-prefix=DIVIDE-OK
// DIVIDE-OK: result 0: 4xi32 {{.*}} first [1, 0, 0, 0]
// RUN: not attn-run %t/divide.mlir --input 0=%t/num.npy --input 1=%t/zero.npy 2>&1 | FileCheck %s --check-prefix=DIVIDE-ZERO
// DIVIDE-ZERO: {{.*}}divide.mlir:5:10: error: arith.remsi: integer division by zero (a run-time check)
// RUN: not attn-run %t/divide.mlir --input 0=%t/num.npy --input 1=%t/minus1.npy 2>&1 | FileCheck %s --check-prefix=DIVIDE-MIN
// DIVIDE-MIN: {{.*}}divide.mlir:5:10: error: arith.remsi: signed integer division overflow (the minimum integer divided by -1) (a run-time check)
// In a parallel loop on two threads: one error line, exit status 1.
// RUN: not attn-run %t/parallel.mlir --num-threads 2 2>&1 | FileCheck %s --check-prefix=PARALLEL
// PARALLEL: {{.*}}parallel.mlir:6:10: error: memref.load: out-of-bounds access (a run-time check)
// PARALLEL-NOT: error
// Without the checks, a cf.assert is refused before compiling (a failing
// one would abort).
// RUN: not attn-run %t/assert.mlir --runtime-checks=false 2>&1 | FileCheck %s --check-prefix=NOCHECKS
// NOCHECKS: {{.*}}assert.mlir:3:3: error: attn-run runs cf.assert only with --runtime-checks (a failing assertion would abort the process)
// The runtime's function is the runtime's.
// RUN: not attn-run %t/own.mlir 2>&1 | FileCheck %s --check-prefix=OWN
// OWN: attn-run: error: lowering with 'attn-cpu-pipeline{threads=1}' failed:
// OWN-NEXT: own.mlir":1:1): @attn_check_failed is attn-runtime-checks' runtime function: the module may only declare it, as func.func private @attn_check_failed(!llvm.ptr)
// The code around an attn op is checked, the attn op itself runs as always.
// RUN: attn-run %t/around.mlir | FileCheck %s --check-prefix=AROUND
// AROUND: result 0: 1x1x8x4xf32

//--- loop.mlir
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %m = bufferization.to_buffer %a : tensor<4xf32> to memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %s = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %a) -> tensor<4xf32> {
    %x = memref.load %m[%i] : memref<4xf32>
    %n = tensor.insert %x into %acc[%c0] : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %s : tensor<4xf32>
}
//--- vector.mlir
func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %m = memref.alloc() : memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    %v = vector.load %m[%i] : memref<8xf32>, vector<8xf32>
    %j = arith.addi %i, %c1 : index
    vector.store %v, %m[%j] : memref<8xf32>, vector<8xf32>
  }
  return %a : tensor<8xf32>
}
//--- affine.mlir
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  affine.for %i = 0 to 3 {
    %x = affine.load %m[%i * 2] : memref<4xf32>
    affine.store %x, %m[0] : memref<4xf32>
  }
  return %a : tensor<4xf32>
}
//--- assert.mlir
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %false = arith.constant false
  cf.assert %false, "no"
  return %a : tensor<4xf32>
}
//--- gather.mlir
func.func @f(%a: tensor<4xf32>, %i: tensor<1xi32>) -> tensor<1xf32> {
  %c0 = arith.constant 0 : index
  %j = tensor.extract %i[%c0] : tensor<1xi32>
  %k = arith.index_cast %j : i32 to index
  %x = tensor.extract %a[%k] : tensor<4xf32>
  %t = tensor.from_elements %x : tensor<1xf32>
  return %t : tensor<1xf32>
}
//--- around.mlir
func.func @f(%q: tensor<1x1x8x4xf32>, %doc: tensor<8xi32>) -> tensor<1x1x8x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %d = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %doc) -> tensor<8xi32> {
    %x = tensor.extract %doc[%i] : tensor<8xi32>
    %n = tensor.insert %x into %acc[%i] : tensor<8xi32>
    scf.yield %n : tensor<8xi32>
  }
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kj: index):
      %di = tensor.extract %d[%qi] : tensor<8xi32>
      %dj = tensor.extract %d[%kj] : tensor<8xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    }
  return %o : tensor<1x1x8x4xf32>
}
//--- linalg.mlir
func.func @f(%a: tensor<8xf32>, %n: tensor<1xi32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %j = tensor.extract %n[%c0] : tensor<1xi32>
  %k = arith.index_cast %j : i32 to index
  %s = tensor.extract_slice %a[0] [%k] [1] : tensor<8xf32> to tensor<?xf32>
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.copy ins(%s : tensor<?xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
//--- parallel.mlir
func.func @f(%a: tensor<64xf32>) -> tensor<64xf32> {
  %m = memref.alloc() : memref<64xf32>
  %c1 = arith.constant 1 : index
  scf.forall (%i) in (64) {
    %j = arith.addi %i, %c1 : index
    %x = memref.load %m[%j] : memref<64xf32>
    memref.store %x, %m[%i] : memref<64xf32>
  }
  return %a : tensor<64xf32>
}
//--- own.mlir
func.func private @attn_check_failed(%p: !llvm.ptr) {
  return
}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %p = llvm.mlir.zero : !llvm.ptr
  func.call @attn_check_failed(%p) : (!llvm.ptr) -> ()
  return %a : tensor<4xf32>
}

//--- divide.mlir
func.func @f(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %e = tensor.empty() : tensor<4xi32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<4xi32>, tensor<4xi32>) outs(%e : tensor<4xi32>) {
  ^bb0(%x: i32, %y: i32, %z: i32):
    %q = arith.remsi %x, %y : i32
    linalg.yield %q : i32
  } -> tensor<4xi32>
  return %o : tensor<4xi32>
}
