// RUN: attn-opt %s --split-input-file --attn-distinct-results | FileCheck %s

// A tensor returned twice: the second result is a copy in a tensor of its
// own (bufferization then gives each result its own buffer).
// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[Y:.*]] = arith.addf %[[X]], %[[X]]
// CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[Y]]) : tensor<4xf32>
// CHECK: return %[[Y]], %[[C]], %[[X]] :
func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y, %y, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Three times, one dynamic dim, and a scalar returned twice (not a tensor:
// left alone).
// CHECK-LABEL: func.func @thrice
// CHECK-SAME: (%[[X:.*]]: tensor<?x2xf32>, %[[S:.*]]: f32)
// CHECK: %[[A:.*]] = bufferization.alloc_tensor() copy(%[[X]]) : tensor<?x2xf32>
// CHECK: %[[B:.*]] = bufferization.alloc_tensor() copy(%[[X]]) : tensor<?x2xf32>
// CHECK: return %[[X]], %[[A]], %[[B]], %[[S]], %[[S]] :
func.func @thrice(%x: tensor<?x2xf32>, %s: f32) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, f32, f32) {
  return %x, %x, %x, %s, %s : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, f32, f32
}

// -----

// Every value returned once: unchanged.
// CHECK-LABEL: func.func @once
// CHECK-NOT: alloc_tensor
// CHECK: return %{{.*}}, %{{.*}} :
func.func @once(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %y, %x : tensor<4xf32>, tensor<4xf32>
}
