// RUN: attn-opt %s --split-input-file --attn-merge-parallel-regions | FileCheck %s

// Two regions of one team size: one region, the second's loop after the
// first's (whose implicit barrier separates them, so no omp.barrier), the
// constants between them (one used in the second body) before it.

// CHECK-LABEL: func @two_loops
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2.0{{.*}} : f32
// CHECK-DAG: llvm.mlir.constant(2 : i32)
// CHECK: omp.parallel num_threads
// CHECK-NEXT: omp.wsloop {
// CHECK: memref.store %{{.+}}, %[[A:.+]][
// CHECK-NOT: omp.barrier
// CHECK-NOT: omp.parallel
// CHECK: omp.wsloop {
// CHECK: %[[X:.+]] = memref.load %[[A]]
// CHECK: arith.mulf %[[X]], %[[TWO]]
// CHECK: omp.terminator
// CHECK-NOT: omp.parallel
// CHECK: return
func.func @two_loops(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  %n = llvm.mlir.constant(2 : i32) : i32
  omp.parallel num_threads(%n : i32) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.store %f, %a[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  %m = llvm.mlir.constant(2 : i32) : i32
  %two = arith.constant 2.0 : f32
  omp.parallel num_threads(%m : i32) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        %j = arith.subi %c8, %i : index
        %k = arith.subi %j, %c1 : index
        %x = memref.load %a[%k] : memref<8xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %b[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// A first body that does not end in a barrier (its loop is nowait): an
// omp.barrier between the bodies. Three regions become one, and an
// allocation between two of them moves before the region.

// CHECK-LABEL: func @nowait_and_alloc
// CHECK: memref.alloc
// CHECK: omp.parallel
// CHECK: omp.wsloop nowait
// CHECK: omp.barrier
// CHECK-NEXT: omp.wsloop {
// CHECK-NOT: omp.barrier
// CHECK: omp.wsloop {
// CHECK: omp.terminator
// CHECK-NOT: omp.parallel
// CHECK: return
func.func @nowait_and_alloc(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  %n = llvm.mlir.constant(2 : i32) : i32
  omp.parallel num_threads(%n : i32) {
    omp.wsloop nowait {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.store %f, %a[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel num_threads(%n : i32) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        %x = memref.load %a[%i] : memref<8xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %a[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  %t = memref.alloc() : memref<8xf32>
  omp.parallel num_threads(%n : i32) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        %x = memref.load %a[%i] : memref<8xf32>
        memref.store %x, %t[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  memref.dealloc %t : memref<8xf32>
  return
}

// -----

// Kept apart: another team size; an op with a memory effect between (a copy
// the second region's loop may read, made by the one thread between the
// regions); a clause other than num_threads (proc_bind).

// CHECK-LABEL: func @kept_apart
// CHECK-COUNT-4: omp.parallel
// CHECK: return
func.func @kept_apart(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  %n = llvm.mlir.constant(2 : i32) : i32
  %four = llvm.mlir.constant(4 : i32) : i32
  omp.parallel num_threads(%n : i32) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.store %f, %a[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel num_threads(%four : i32) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.store %f, %a[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  memref.copy %a, %b : memref<8xf32> to memref<8xf32>
  omp.parallel num_threads(%four : i32) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        %x = memref.load %b[%i] : memref<8xf32>
        memref.store %x, %a[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel num_threads(%four : i32) proc_bind(close) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.store %f, %b[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Regions without num_threads (the runtime's default team, as
// attn-cpu-pipeline{threads=0} makes them) merge with each other.

// CHECK-LABEL: func @default_team
// CHECK-COUNT-1: omp.parallel {
// CHECK-NOT: omp.parallel
// CHECK: return
func.func @default_team(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.store %f, %a[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        %x = memref.load %a[%i] : memref<8xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %a[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Kept apart as well: an op with a region between (it runs on one thread
// between the teams); a team size that is no constant; an if clause; a
// body that cancels its region (merged, the cancellation would skip the
// other body too).

// CHECK-LABEL: func @kept_apart_too
// CHECK-COUNT-7: omp.parallel
// CHECK: return
func.func @kept_apart_too(%a: memref<8xf32>, %n: i32, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  %two = llvm.mlir.constant(2 : i32) : i32
  omp.parallel num_threads(%two : i32) {
    omp.barrier
    omp.terminator
  }
  scf.if %c {
    memref.store %f, %a[%c0] : memref<8xf32>
  }
  omp.parallel num_threads(%two : i32) {
    omp.barrier
    omp.terminator
  }
  omp.parallel num_threads(%n : i32) {
    omp.barrier
    omp.terminator
  }
  omp.parallel num_threads(%two : i32) {
    omp.barrier
    omp.terminator
  }
  omp.parallel num_threads(%two : i32) {
    omp.cancel cancellation_construct_type(parallel)
    omp.terminator
  }
  omp.parallel num_threads(%two : i32) {
    omp.barrier
    omp.terminator
  }
  omp.parallel if(%c) num_threads(%two : i32) {
    omp.barrier
    omp.terminator
  }
  return
}
