// RUN: attn-opt %s --attn-align-workgroup-buffers | FileCheck %s
// RUN: attn-opt %s --attn-align-workgroup-buffers="alignment=64" | FileCheck %s --check-prefix=A64
// RUN: attn-opt %s --attn-align-workgroup-buffers --convert-gpu-to-nvvm | FileCheck %s --check-prefix=NVVM
// RUN: not attn-opt %s --attn-align-workgroup-buffers="alignment=24" 2>&1 | FileCheck %s --check-prefix=POW2
// POW2: error: attn-align-workgroup-buffers: alignment must be a power of two up to 4096, got 24

// Every workgroup attribution of a kernel gets llvm.align = 16 (ldmatrix
// and 16-byte cp.async need 16-byte aligned shared memory); a larger one
// stays; what is not a kernel is left alone. convert-gpu-to-nvvm then
// aligns the .shared globals.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: workgroup(%{{.+}} : memref<64x72xf16, 3> {llvm.align = 16 : i64}, %{{.+}} : memref<8xf32, 3> {llvm.align = 32 : i64})
// CHECK-LABEL: gpu.func @helper
// CHECK-SAME: workgroup(%{{.+}} : memref<4xf16, 3>)
// A64: workgroup(%{{.+}} : memref<64x72xf16, 3> {llvm.align = 64 : i64}, %{{.+}} : memref<8xf32, 3> {llvm.align = 64 : i64})
// NVVM: llvm.mlir.global internal @__wg_k_0() {addr_space = 3 : i32, alignment = 16 : i64}
// NVVM: llvm.mlir.global internal @__wg_k_1() {addr_space = 3 : i32, alignment = 32 : i64}
gpu.module @m {
  gpu.func @k(%out: memref<2xf16>) workgroup(%a: memref<64x72xf16, 3>, %b: memref<8xf32, 3> {llvm.align = 32 : i64}) kernel {
    %c0 = arith.constant 0 : index
    %x = memref.load %a[%c0, %c0] : memref<64x72xf16, 3>
    memref.store %x, %out[%c0] : memref<2xf16>
    gpu.return
  }
  gpu.func @helper() workgroup(%a: memref<4xf16, 3>) {
    gpu.return
  }
}
