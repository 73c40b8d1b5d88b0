// attn-cpu-pipeline copies a query padded to whole tiles (17 rows into two
// 16-row tiles: Q into a zero-filled 32-row buffer, a copy into a strided
// view) as vector rows (attn-lower-strided-copies), not through the
// memrefCopy runtime function, whatever the target.
// RUN: attn-opt %s --attn-cpu-pipeline="block-q=16 target-cpu=x86-64-v3" | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="block-q=16 target-cpu=x86-64-v4" | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="block-q=16 target-cpu=x86-64-v3" --mlir-print-ir-after=attn-lower-strided-copies 2>&1 >/dev/null | FileCheck %s --check-prefix=ROWS
// CHECK-NOT: memrefCopy
// CHECK: llvm.func @attn
// CHECK-NOT: memrefCopy
// ROWS-NOT: memref.copy {{.+}} : memref<1x4x17x16xf32> to memref<1x4x17x16xf32, strided
// ROWS: vector.load %arg0[{{.+}}] : memref<1x4x17x16xf32>, vector<16xf32>
// ROWS: vector.store {{.+}} : memref<1x4x17x16xf32, strided<[2048, 512, 16, 1]>>, vector<16xf32>
func.func @attn(%q: tensor<1x4x17x16xf32>, %k: tensor<1x4x17x16xf32>, %v: tensor<1x4x17x16xf32>) -> tensor<1x4x17x16xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x17x16xf32>, tensor<1x4x17x16xf32>, tensor<1x4x17x16xf32>) -> tensor<1x4x17x16xf32>
  return %o : tensor<1x4x17x16xf32>
}
