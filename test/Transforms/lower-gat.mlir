// RUN: attn-opt %s --split-input-file --attn-lower-gat --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-lower-gat="edge-block=4" | FileCheck %s --check-prefix=BLOCK4

// Fused GAT: projections, then one parallel loop over destination nodes; each
// walks its in-edges a block at a time (16 edges unrolled) with the online
// softmax state in vector registers: per-head max and sum (vector<2>) and the
// head-major output row (vector<8>); the self loop is one more step; the row
// is written into the N x H*C result. No N x N or per-edge tensor.

// CHECK-LABEL: func @concat_self_loops
// CHECK-SAME: %[[RP:[a-z0-9]+]]: tensor<7xi32>, %[[CI:[a-z0-9]+]]: tensor<10xi32>
// CHECK-NOT: tensor<6x6xf32>
// CHECK-NOT: tensor<2x6x6xf32>
// CHECK: %[[Z:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<6x3xf32>, tensor<3x8xf32>)
// CHECK: %[[OUT:.+]] = scf.forall (%[[I:.+]]) in (6) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<6x8xf32>)
// CHECK:   tensor.extract %[[RP]][%[[I]]]
// CHECK:   %[[BLOCKS:.+]] = arith.ceildivsi %{{.+}}, %c16
// CHECK:   %[[STATE:.+]]:3 = scf.for %{{.+}} = %c0 to %[[BLOCKS]] step %c1 iter_args({{.*}}) -> (vector<2xf32>, vector<2xf32>, vector<8xf32>)
// CHECK-COUNT-16: tensor.extract %[[CI]]
// CHECK:     arith.cmpi ne
// CHECK:     vector.transfer_read %[[Z]][%{{.+}}, %c0]{{.*}} : tensor<6x8xf32>, vector<8xf32>
// CHECK:     arith.maximumf {{.*}} : vector<2xf32>
// CHECK:     math.exp {{.*}} : vector<2xf32>
// CHECK:     vector.shuffle %{{.+}}, %{{.+}} [0, 0, 0, 0, 1, 1, 1, 1] : vector<2xf32>, vector<2xf32>
// CHECK:     math.fma {{.*}} : vector<8xf32>
// CHECK:     scf.yield {{.*}} : vector<2xf32>, vector<2xf32>, vector<8xf32>
// CHECK:   math.exp
// CHECK:   arith.divf {{.*}} : vector<8xf32>
// CHECK:   vector.transfer_write {{.*}} : vector<8xf32>, tensor<1x8xf32>
// CHECK:   tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[I]], 0] [1, 8]
// CHECK: return %[[OUT]]

// BLOCK4-LABEL: func @concat_self_loops
// BLOCK4: arith.ceildivsi %{{.+}}, %c4
// BLOCK4-COUNT-4: tensor.extract %{{.+}}[%{{.+}}] : tensor<10xi32>
// BLOCK4-NOT: tensor.extract %{{.+}}[%{{.+}}] : tensor<10xi32>
// BLOCK4: scf.yield
func.func @concat_self_loops(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<10xi32>) -> tensor<6x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<10xi32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

// Without self loops there is no extra step and no j != i test; mean and
// bias follow the loop.

// CHECK-LABEL: func @mean_no_self_loops
// CHECK: scf.forall
// CHECK-NOT: arith.cmpi ne
// CHECK: scf.forall.in_parallel
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<6x4xf32>)
// CHECK: arith.addf
func.func @mean_no_self_loops(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>, %b: tensor<4xf32>) -> tensor<6x4xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>, tensor<4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}
