// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-prepare-spirv-kernels | FileCheck %s

// The known block size becomes the SPIR-V workgroup size; sign extensions
// to 64 bits become zero extensions with the sign bias, i.e. the same value
// (lavapipe miscompiles OpSConvert feeding a comparison); narrower casts
// and the host's code are left alone.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [8, 4, 1]>
// CHECK: %[[Z:.+]] = arith.extui %{{.+}} : i32 to i64
// CHECK: %[[S:.+]] = arith.constant 2147483648 : i64
// CHECK: %[[X:.+]] = arith.xori %[[Z]], %[[S]] : i64
// CHECK: %[[V:.+]] = arith.subi %[[X]], %[[S]] : i64
// CHECK: arith.index_cast %[[V]] : i64 to index
// CHECK: %[[Z8:.+]] = arith.extui %{{.+}} : i8 to i64
// CHECK: arith.constant 128 : i64
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK-NOT: arith.extsi
// CHECK: func.func @host
// CHECK: arith.extsi %{{.+}} : i32 to i64
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%buf: memref<4xi32>, %out: memref<4xindex>, %out64: memref<4xi64>, %out32: memref<4xi32>) kernel attributes {known_block_size = array<i32: 8, 4, 1>} {
      %c0 = arith.constant 0 : index
      %x = memref.load %buf[%c0] : memref<4xi32>
      %i = arith.index_cast %x : i32 to index
      memref.store %i, %out[%c0] : memref<4xindex>
      %b = arith.trunci %x : i32 to i8
      %w = arith.extsi %b : i8 to i64
      memref.store %w, %out64[%c0] : memref<4xi64>
      %n = arith.extsi %b : i8 to i32
      memref.store %n, %out32[%c0] : memref<4xi32>
      gpu.return
    }
  }
  func.func @host(%x: i32) -> i64 {
    %w = arith.extsi %x : i32 to i64
    return %w : i64
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{attn-prepare-spirv-kernels: kernel has no known_block_size (launch it with a constant block size)}}
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

// A loop with results runs inside scf.if (lb < ub), yielding its init values
// otherwise; a uniform subgroup reduction loses the flag.
// CHECK-LABEL: gpu.func @loop
// CHECK: %[[RUNS:.+]] = arith.cmpi slt, %[[LB:.+]], %[[UB:.+]] : index
// CHECK: %[[R:.+]] = scf.if %[[RUNS]] -> (f32) {
// CHECK:   %[[F:.+]] = scf.for %{{.+}} = %[[LB]] to %[[UB]]
// CHECK:   scf.yield %[[F]] : f32
// CHECK: } else {
// CHECK:   scf.yield %[[INIT:.+]] : f32
// CHECK: }
// CHECK: gpu.subgroup_reduce add %[[R]] : (f32) -> f32
// CHECK-NOT: uniform
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @loop(%buf: memref<4xi32>, %out: memref<1xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %n32 = memref.load %buf[%c0] : memref<4xi32>
      %n = arith.index_castui %n32 : i32 to index
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
        %a = arith.addf %acc, %one : f32
        scf.yield %a : f32
      }
      %s = gpu.subgroup_reduce add %r uniform : (f32) -> f32
      memref.store %s, %out[%c0] : memref<1xf32>
      gpu.return
    }
  }
}

