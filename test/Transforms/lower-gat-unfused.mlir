// RUN: attn-opt %s --attn-lower-gat-unfused | FileCheck %s

// Unfused GAT: the edge destinations from the CSR, the E' x H score tensor
// (E' = 10 CSR edges + 6 self loops), per-node max and sum, the E' x H
// coefficients, then the per-node aggregation.

// CHECK-LABEL: func @gat
// CHECK: %[[DST:.+]] = scf.for {{.*}} -> (tensor<10xindex>)
// CHECK: %[[S:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<16x2xf32>)
// CHECK:   tensor.extract %[[DST]]
// CHECK: %[[STATS:.+]]:2 = scf.forall (%{{.+}}) in (6) shared_outs({{.*}}) -> (tensor<6x2xf32>, tensor<6x2xf32>)
// CHECK:   arith.maximumf
// CHECK:   math.exp
// CHECK: %[[ALPHA:.+]] = linalg.generic {{.*}} ins(%[[S]] : tensor<16x2xf32>) outs(%{{.+}} : tensor<16x2xf32>)
// CHECK:   tensor.extract %[[STATS]]#0
// CHECK:   tensor.extract %[[STATS]]#1
// CHECK:   arith.divf
// CHECK: scf.forall (%{{.+}}) in (6) shared_outs({{.*}}) -> (tensor<6x2x4xf32>)
// CHECK:   tensor.extract_slice %[[ALPHA]]
// CHECK: tensor.collapse_shape
func.func @gat(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<10xi32>) -> tensor<6x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<10xi32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// The coefficients as the op's second result.
// CHECK-LABEL: func @alpha
// CHECK: %[[S:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<16x2xf32>)
// CHECK: %[[ALPHA:.+]] = linalg.generic {{.*}} ins(%[[S]] : tensor<16x2xf32>) outs(%{{.+}} : tensor<16x2xf32>)
// CHECK: return %{{.+}}, %[[ALPHA]] : tensor<6x8xf32>, tensor<16x2xf32>
func.func @alpha(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>) -> (tensor<6x8xf32>, tensor<16x2xf32>) {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>) -> (tensor<6x8xf32>, tensor<16x2xf32>)
  return %y, %alpha : tensor<6x8xf32>, tensor<16x2xf32>
}
