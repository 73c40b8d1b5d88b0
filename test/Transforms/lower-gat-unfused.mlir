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

// GATv2: both projections (with their biases), the scores as a reduction
// over C of att . LeakyReLU(zd[dst] + zs[src]), -inf for invalid edges, then
// the same edge softmax and aggregation of zs.
// CHECK-LABEL: func @gatv2
// CHECK-NOT: attn.gatv2
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.+}} : tensor<16x2xf32>)
// CHECK:   arith.select
// CHECK:   arith.mulf
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<16x2xf32>)
// CHECK: scf.forall (%{{.+}}) in (6) shared_outs({{.*}}) -> (tensor<6x2xf32>, tensor<6x2xf32>)
// CHECK: scf.forall (%{{.+}}) in (6) shared_outs({{.*}}) -> (tensor<6x2x4xf32>)
func.func @gatv2(%x: tensor<6x3xf32>, %wl: tensor<8x3xf32>, %wr: tensor<8x3xf32>, %att: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>, %bl: tensor<8xf32>, %br: tensor<8xf32>) -> tensor<6x8xf32> {
  %y = attn.gatv2 %x, %wl, %wr, %att graph(%rp, %ci) bias_src(%bl) bias_dst(%br)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>, tensor<8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}
