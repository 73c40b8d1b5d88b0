// RUN: attn-opt %s --split-input-file --attn-lower-gat --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-lower-gat="edge-block=4" | FileCheck %s --check-prefix=BLOCK4

// Fused GAT: projections, then one parallel loop over destination nodes; each
// walks its in-edges a block at a time with the online-softmax step; the self
// loop is one more step; heads are concatenated at the end. No N x N or
// per-edge tensor.

// CHECK-LABEL: func @concat_self_loops
// CHECK-SAME: %[[RP:[a-z0-9]+]]: tensor<7xi32>, %[[CI:[a-z0-9]+]]: tensor<10xi32>
// CHECK-NOT: tensor<6x6xf32>
// CHECK-NOT: tensor<2x6x6xf32>
// CHECK: %[[Z3:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [6, 2, 4]
// CHECK: %[[OUT:.+]] = scf.forall (%[[I:.+]]) in (6) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<6x2x4xf32>)
// CHECK:   tensor.extract %[[RP]][%[[I]]]
// CHECK:   %[[BLOCKS:.+]] = arith.ceildivsi %{{.+}}, %c16
// CHECK:   %[[STATE:.+]]:3 = scf.for %{{.+}} = %c0 to %[[BLOCKS]] step %c1 iter_args({{.*}}) -> (tensor<2xf32>, tensor<2xf32>, tensor<2x4xf32>)
// CHECK:     linalg.generic {{.*}} outs(%{{.+}} : tensor<2x16xf32>)
// CHECK:       tensor.extract %[[CI]]
// CHECK:       arith.cmpi ne
// CHECK:       arith.select
// CHECK:     linalg.generic {{.*}} outs(%{{.+}} : tensor<16x2x4xf32>)
// CHECK:       tensor.extract %[[Z3]]
// CHECK:     math.exp
// CHECK:     linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
// CHECK:   linalg.generic {{.*}} outs(%{{.+}} : tensor<2x1xf32>)
// CHECK:   tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[I]], 0, 0] [1, 2, 4]
// CHECK: %[[CAT:.+]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2]]
// CHECK: return %[[CAT]]

// BLOCK4-LABEL: func @concat_self_loops
// BLOCK4: arith.ceildivsi %{{.+}}, %c4
// BLOCK4: tensor<2x4xf32>
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
// CHECK-NOT: tensor<2x1xf32>
// CHECK: scf.forall.in_parallel
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<6x4xf32>)
// CHECK: arith.addf
func.func @mean_no_self_loops(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>, %b: tensor<4xf32>) -> tensor<6x4xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>, tensor<4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}
