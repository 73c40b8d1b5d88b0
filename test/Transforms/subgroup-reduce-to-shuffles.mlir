// RUN: attn-opt %s --attn-subgroup-reduce-to-shuffles="subgroup-size=32" | FileCheck %s
// RUN: not attn-opt %s --attn-subgroup-reduce-to-shuffles="subgroup-size=24" 2>&1 | FileCheck %s --check-prefix=POW2
// POW2: error: attn-subgroup-reduce-to-shuffles: subgroup-size must be a power of two up to 128, got 24

// An f32 subgroup sum and maximum over 32 lanes: five butterfly steps each
// (xor 1, 2, 4, 8, 16), combined with addf / maxnumf.
// CHECK-LABEL: gpu.func @k
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: gpu.shuffle xor %{{.+}}, %c1_i32, %c32_i32 : f32
// CHECK: arith.addf
// CHECK: gpu.shuffle xor %{{.+}}, %c2_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c4_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c8_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c16_i32, %c32_i32 : f32
// CHECK: arith.addf
// CHECK: gpu.shuffle xor %{{.+}}, %c1_i32, %c32_i32 : f32
// CHECK: arith.maxnumf
// CHECK-NOT: gpu.subgroup_reduce
gpu.module @m {
  gpu.func @k(%x: f32, %out: memref<2xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s = gpu.subgroup_reduce add %x : (f32) -> f32
    %m = gpu.subgroup_reduce maxnumf %x : (f32) -> f32
    memref.store %s, %out[%c0] : memref<2xf32>
    memref.store %m, %out[%c1] : memref<2xf32>
    gpu.return
  }
}
