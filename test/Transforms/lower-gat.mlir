// RUN: attn-opt %s --split-input-file --attn-lower-gat --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-lower-gat="edge-block=4" | FileCheck %s --check-prefix=BLOCK4

// Fused GAT: one projection of x to rows [z | a_src | a_dst] (x times
// [W^T | W^T A_src | W^T A_dst]), then one parallel loop over destination
// nodes; each walks its in-edges a block at a time (16 edges unrolled, the
// next block's source rows prefetched, reductions as trees) with the online
// softmax state in vector registers: per-head max and sum (vector<2>) and the
// head-major output row (vector<8>); the state starts with the self loop
// taken (m = its score, l = 1, acc = z[i]); the finished row is written into
// the N x H*C result. No N x N or per-edge tensor.

// CHECK-LABEL: func @concat_self_loops
// CHECK-SAME: %[[RP:[a-z0-9]+]]: tensor<7xi32>, %[[CI:[a-z0-9]+]]: tensor<10xi32>
// CHECK-NOT: tensor<6x6xf32>
// CHECK-NOT: tensor<2x6x6xf32>
// CHECK: %[[WT:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<8x3xf32>) outs(%{{.+}} : tensor<3x8xf32>)
// CHECK: %[[AS:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<2x4x3xf32>, tensor<2x4xf32>) outs(%{{.+}} : tensor<3x2xf32>)
// CHECK: %[[AD:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x4x3xf32>, tensor<2x4xf32>) outs(%{{.+}} : tensor<3x2xf32>)
// CHECK: tensor.insert_slice %[[WT]] into %{{.+}}[0, 0] [3, 8]
// CHECK: tensor.insert_slice %[[AS]] into %{{.+}}[0, 8] [3, 2]
// CHECK: %[[CAT:.+]] = tensor.insert_slice %[[AD]] into %{{.+}}[0, 10] [3, 2]
// CHECK: %[[P:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[CAT]] : tensor<6x3xf32>, tensor<3x12xf32>)
// CHECK: %[[PB:.+]] = bufferization.to_buffer %[[P]] read_only : tensor<6x12xf32> to memref<6x12xf32>
// CHECK: %[[OUT:.+]] = scf.forall (%[[I:.+]]) in (6) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<6x8xf32>)
// CHECK:   tensor.extract %[[RP]][%[[I]]]
// CHECK:   vector.transfer_read %[[P]][%[[I]], %c10]{{.*}} : tensor<6x12xf32>, vector<2xf32>
// CHECK:   %[[BLOCKS:.+]] = arith.ceildivsi %{{.+}}, %c16
// CHECK:   %[[SELF:.+]] = vector.transfer_read %[[P]][%[[I]], %c8]{{.*}} : tensor<6x12xf32>, vector<2xf32>
// CHECK:   %[[M0:.+]] = arith.select
// CHECK:   %[[Z0:.+]] = vector.transfer_read %[[P]][%[[I]], %c0]{{.*}} : tensor<6x12xf32>, vector<8xf32>
// CHECK:   %[[STATE:.+]]:3 = scf.for %{{.+}} = %c0 to %[[BLOCKS]] step %c1 iter_args(%{{.+}} = %[[M0]], %{{.+}} = %cst{{.*}}, %{{.+}} = %[[Z0]]) -> (vector<2xf32>, vector<2xf32>, vector<8xf32>)
// The next block's source rows are prefetched (one cache line per row here).
// CHECK-COUNT-16: memref.prefetch %[[PB]][%{{.+}}, %c0], read, locality<1>, data
// CHECK-COUNT-16: tensor.extract %[[CI]]
// CHECK:     arith.cmpi ne
// CHECK:     vector.transfer_read %[[P]][%{{.+}}, %c0]{{.*}} : tensor<6x12xf32>, vector<8xf32>
// CHECK:     vector.transfer_read %[[P]][%{{.+}}, %c8]{{.*}} : tensor<6x12xf32>, vector<2xf32>
// The block's max is a tree (8 + 4 + 2 + 1 maxima, then the running max),
// the exps are independent, the sum is a tree folded into l with one FMA,
// and the weighted rows go into 4 interleaved chains (4 products, then
// FMAs), added as a tree and folded into acc with one FMA.
// CHECK-COUNT-15: arith.maxnumf %{{[0-9]+}}, %{{[0-9]+}} fastmath<nnan> : vector<2xf32>
// CHECK:     arith.maxnumf %{{.+}}, %{{.+}} fastmath<nnan> : vector<2xf32>
// CHECK-COUNT-17: math.exp {{.*}} : vector<2xf32>
// CHECK:     math.fma {{.*}} : vector<2xf32>
// CHECK:     vector.shuffle %{{.+}}, %{{.+}} [0, 0, 0, 0, 1, 1, 1, 1] : vector<2xf32>, vector<2xf32>
// CHECK-COUNT-4: arith.mulf {{.*}} : vector<8xf32>
// CHECK-COUNT-12: math.fma {{.*}} : vector<8xf32>
// CHECK-COUNT-3: arith.addf {{.*}} : vector<8xf32>
// CHECK:     math.fma {{.*}} : vector<8xf32>
// CHECK:     scf.yield {{.*}} : vector<2xf32>, vector<2xf32>, vector<8xf32>
// CHECK-NOT: math.exp
// CHECK:   arith.divf {{.*}} : vector<2xf32>
// CHECK:   arith.mulf {{.*}} : vector<8xf32>
// CHECK:   vector.transfer_write {{.*}} : vector<8xf32>, tensor<1x8xf32>
// CHECK:   tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[I]], 0] [1, 8]
// CHECK: return %[[OUT]]

// BLOCK4-LABEL: func @concat_self_loops
// BLOCK4: arith.ceildivsi %{{.+}}, %c4
// BLOCK4-COUNT-8: tensor.extract %{{.+}}[%{{.+}}] : tensor<10xi32>
// BLOCK4-NOT: tensor.extract %{{.+}}[%{{.+}}] : tensor<10xi32>
// BLOCK4: scf.yield
func.func @concat_self_loops(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<10xi32>) -> tensor<6x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<10xi32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

// Without self loops there is no extra step and no j != i test; heads are
// averaged (sums of per-head slices) and the bias added in registers.

// CHECK-LABEL: func @mean_no_self_loops
// CHECK: %[[BIAS:.+]] = vector.transfer_read %{{.+}}[%c0]{{.*}} : tensor<4xf32>, vector<4xf32>
// CHECK: scf.forall
// CHECK-NOT: arith.cmpi ne
// CHECK: vector.extract_strided_slice %{{.+}} {offsets = [0], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
// CHECK: vector.extract_strided_slice %{{.+}} {offsets = [4], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
// CHECK: arith.mulf {{.*}} : vector<4xf32>
// CHECK: arith.addf %{{.+}}, %[[BIAS]] : vector<4xf32>
// CHECK: scf.forall.in_parallel
// CHECK: return
func.func @mean_no_self_loops(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>, %b: tensor<4xf32>) -> tensor<6x4xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>, tensor<4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

// H*C = 2 * 1024 is wider than the 1024 elements a fused node row may hold
// in registers (a vector<H*C> of hundreds of thousands of lanes took LLVM
// minutes): the layer takes the unfused lowering (per-edge scores, edge
// softmax, aggregation), with no wide vector.
// CHECK-LABEL: func @too_wide_for_registers
// CHECK-NOT: vector<2048xf32>
// CHECK: scf.forall (%{{.+}}) in (6) shared_outs({{.*}}) -> (tensor<6x2xf32>, tensor<6x2xf32>)
// CHECK: scf.forall (%{{.+}}) in (6) shared_outs({{.*}}) -> (tensor<6x2x1024xf32>)
// CHECK-NOT: vector<2048xf32>
// CHECK: return
func.func @too_wide_for_registers(%x: tensor<6x3xf32>, %w: tensor<2048x3xf32>, %as: tensor<2x1024xf32>, %ad: tensor<2x1024xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>) -> tensor<6x2048xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<2048x3xf32>, tensor<2x1024xf32>, tensor<2x1024xf32>, tensor<7xi64>, tensor<10xi64>) -> tensor<6x2048xf32>
  return %y : tensor<6x2048xf32>
}

// -----

// A layer that returns its per-edge coefficients (PyG's
// return_attention_weights) takes the unfused lowering, which materialises
// them: E' = 10 CSR edges + 6 self loops rows.
// CHECK-LABEL: func @returns_alpha
// CHECK-NOT: attn.gat
// CHECK: %[[S:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<16x2xf32>)
// CHECK: %[[ALPHA:.+]] = linalg.generic {{.*}} ins(%[[S]] : tensor<16x2xf32>) outs(%{{.+}} : tensor<16x2xf32>)
// CHECK: scf.forall (%{{.+}}) in (6) shared_outs({{.*}}) -> (tensor<6x2x4xf32>)
// CHECK: return %{{.+}}, %[[ALPHA]] : tensor<6x8xf32>, tensor<16x2xf32>
func.func @returns_alpha(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>) -> (tensor<6x8xf32>, tensor<16x2xf32>) {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>) -> (tensor<6x8xf32>, tensor<16x2xf32>)
  return %y, %alpha : tensor<6x8xf32>, tensor<16x2xf32>
}

// -----

// attn.gatv2 has no fused lowering: the unfused one takes it.
// CHECK-LABEL: func @gatv2
// CHECK-NOT: attn.gatv2
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: scf.forall (%{{.+}}) in (6) shared_outs({{.*}}) -> (tensor<6x2x4xf32>)
func.func @gatv2(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %att: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>) -> tensor<6x8xf32> {
  %y = attn.gatv2 %x, %w, %w, %att graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}


// -----

// Edge attributes (PyG's edge_dim) take the unfused lowering too: the
// per-edge terms, the self loops' mean terms, then the scores.
// CHECK-LABEL: func @edge_attributes
// CHECK-NOT: attn.gat
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<10x2xf32>)
// CHECK: scf.forall (%{{.+}}) in (6) shared_outs({{.*}}) -> (tensor<6x2xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<16x2xf32>)
func.func @edge_attributes(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>, %ea: tensor<10x5xf32>, %we: tensor<8x5xf32>) -> tensor<6x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) edge(%ea, %we, %as)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>, tensor<10x5xf32>, tensor<8x5xf32>, tensor<2x4xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}
