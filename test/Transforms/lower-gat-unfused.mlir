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

// A bipartite layer: 6 sources, 4 destinations with their own projection
// (a_dst from x_dst's), scores and statistics over the 4 destinations;
// E' = 10 CSR edges + min(6, 4) self loops.
// CHECK-LABEL: func @bipartite
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.+}} : tensor<6x3xf32>, tensor<3x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg6, %{{.+}} : tensor<4x5xf32>, tensor<5x8xf32>)
// CHECK: ins(%{{.+}}, %arg2 : tensor<6x2x4xf32>, tensor<2x4xf32>)
// CHECK: ins(%{{.+}}, %arg3 : tensor<4x2x4xf32>, tensor<2x4xf32>)
// CHECK: %[[S:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<14x2xf32>)
// CHECK: scf.forall (%{{.+}}) in (4) shared_outs({{.*}}) -> (tensor<4x2xf32>, tensor<4x2xf32>)
// CHECK: scf.forall (%{{.+}}) in (4) shared_outs({{.*}}) -> (tensor<4x2x4xf32>)
// CHECK: return %{{.+}} : tensor<4x8xf32>
func.func @bipartite(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<5xi64>, %ci: tensor<10xi64>, %xd: tensor<4x5xf32>, %wd: tensor<8x5xf32>) -> tensor<4x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) target(%xd, %wd)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi64>, tensor<10xi64>, tensor<4x5xf32>, tensor<8x5xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// More destinations (5) than sources (3): the self loop is added under
// i < 3 only.
// CHECK-LABEL: func @bipartite_partial_loops
// CHECK: arith.cmpi slt, %{{.+}}, %c3
// CHECK: scf.if
// CHECK: return %{{.+}} : tensor<5x8xf32>
func.func @bipartite_partial_loops(%x: tensor<3x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<6xi64>, %ci: tensor<10xi64>, %xd: tensor<5x3xf32>) -> tensor<5x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) target(%xd, %w)
      : (tensor<3x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<6xi64>, tensor<10xi64>, tensor<5x3xf32>, tensor<8x3xf32>) -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}
