// RUN: attn-run %s --all --check --pipeline attn-reference-pipeline | FileCheck %s
// RUN: attn-run %s --all --check | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{gat-edge-block=3 threads=2}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{gat-edge-block=1 vectorize=false}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-lower-gat-unfused,attn-cpu-pipeline{threads=2}" | FileCheck %s

// attn.gat through the reference lowering (dense edge counts), the fused
// single-pass lowering of the CPU pipeline (edge blocks of 16, 3 and 1; OpenMP;
// scalar and vectorized) and the unfused SDDMM / edge softmax / SpMM lowering,
// against the C++ reference (per-node loops over the in-edge list).

// PyG defaults: concat, self loops (existing ones replaced), slope 0.2.
// Node 0 has no in-edges: its self loop is its only neighbour.
// CHECK-LABEL: attn-run: @concat_self_loops
// CHECK: CHECK PASSED
func.func @concat_self_loops(%x: tensor<20x6xf32>, %w: tensor<12x6xf32>, %as: tensor<3x4xf32>, %ad: tensor<3x4xf32>, %rp: tensor<21xi32>, %ci: tensor<50xi32>, %b: tensor<12xf32>) -> tensor<20x12xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b)
      : (tensor<20x6xf32>, tensor<12x6xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<21xi32>, tensor<50xi32>, tensor<12xf32>) -> tensor<20x12xf32>
  return %y : tensor<20x12xf32>
}

// Without self loops node 0 (and any node without in-edges) gets bias only.
// CHECK-LABEL: attn-run: @mean_no_self_loops
// CHECK: CHECK PASSED
func.func @mean_no_self_loops(%x: tensor<17x5xf32>, %w: tensor<12x5xf32>, %as: tensor<4x3xf32>, %ad: tensor<4x3xf32>, %rp: tensor<18xi32>, %ci: tensor<30xi32>, %b: tensor<3xf32>) -> tensor<17x3xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<17x5xf32>, tensor<12x5xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<18xi32>, tensor<30xi32>, tensor<3xf32>) -> tensor<17x3xf32>
  return %y : tensor<17x3xf32>
}

// A graph without edges (an empty col_idx): with self loops each node
// attends to itself only; without, every node gets the bias only.
// CHECK-LABEL: attn-run: @no_edges_self_loops
// CHECK: CHECK PASSED
func.func @no_edges_self_loops(%x: tensor<9x5xf32>, %w: tensor<8x5xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<10xi32>, %ci: tensor<0xi32>, %b: tensor<8xf32>) -> tensor<9x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b)
      : (tensor<9x5xf32>, tensor<8x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<10xi32>, tensor<0xi32>, tensor<8xf32>) -> tensor<9x8xf32>
  return %y : tensor<9x8xf32>
}

// CHECK-LABEL: attn-run: @no_edges_mean
// CHECK: CHECK PASSED
func.func @no_edges_mean(%x: tensor<9x5xf32>, %w: tensor<8x5xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<10xi64>, %ci: tensor<0xi64>, %b: tensor<4xf32>) -> tensor<9x4xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<9x5xf32>, tensor<8x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<10xi64>, tensor<0xi64>, tensor<4xf32>) -> tensor<9x4xf32>
  return %y : tensor<9x4xf32>
}

// 40 random edges on 6 nodes: many duplicate edges and self loops.
// CHECK-LABEL: attn-run: @dense_duplicates_i64
// CHECK: CHECK PASSED
func.func @dense_duplicates_i64(%x: tensor<6x4xf32>, %w: tensor<8x4xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<40xi64>, %b: tensor<8xf32>) -> tensor<6x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) {negative_slope = 0.1 : f64}
      : (tensor<6x4xf32>, tensor<8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<40xi64>, tensor<8xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// CHECK-LABEL: attn-run: @single_head_no_bias
// CHECK: CHECK PASSED
func.func @single_head_no_bias(%x: tensor<12x8xf32>, %w: tensor<8x8xf32>, %as: tensor<1x8xf32>, %ad: tensor<1x8xf32>, %rp: tensor<13xi32>, %ci: tensor<25xi32>) -> tensor<12x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) {add_self_loops = false}
      : (tensor<12x8xf32>, tensor<8x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<13xi32>, tensor<25xi32>) -> tensor<12x8xf32>
  return %y : tensor<12x8xf32>
}

// PyG's return_attention_weights: the per-edge coefficients as a second
// result (CSR edges, a dropped self loop as 0, then one self loop per node),
// through every pipeline (the fused one hands such a layer to the unfused
// lowering) against the reference.
// CHECK-LABEL: attn-run: @alpha_self_loops
// CHECK: CHECK PASSED
func.func @alpha_self_loops(%x: tensor<20x6xf32>, %w: tensor<12x6xf32>, %as: tensor<3x4xf32>, %ad: tensor<3x4xf32>, %rp: tensor<21xi32>, %ci: tensor<50xi32>) -> (tensor<20x12xf32>, tensor<70x3xf32>) {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<20x6xf32>, tensor<12x6xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<21xi32>, tensor<50xi32>) -> (tensor<20x12xf32>, tensor<70x3xf32>)
  return %y, %alpha : tensor<20x12xf32>, tensor<70x3xf32>
}

// CHECK-LABEL: attn-run: @alpha_mean_no_self_loops
// CHECK: CHECK PASSED
func.func @alpha_mean_no_self_loops(%x: tensor<17x5xf32>, %w: tensor<12x5xf32>, %as: tensor<4x3xf32>, %ad: tensor<4x3xf32>, %rp: tensor<18xi32>, %ci: tensor<30xi32>) -> (tensor<17x3xf32>, tensor<30x4xf32>) {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<17x5xf32>, tensor<12x5xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<18xi32>, tensor<30xi32>) -> (tensor<17x3xf32>, tensor<30x4xf32>)
  return %y, %alpha : tensor<17x3xf32>, tensor<30x4xf32>
}

// GATv2 (PyG's GATv2Conv: the attention after the nonlinearity, from both
// ends' projections with their biases), through every pipeline (the unfused
// lowering in each), with and without alpha.
// CHECK-LABEL: attn-run: @gatv2_concat
// CHECK: CHECK PASSED
func.func @gatv2_concat(%x: tensor<20x6xf32>, %wl: tensor<12x6xf32>, %wr: tensor<12x6xf32>, %att: tensor<3x4xf32>, %rp: tensor<21xi32>, %ci: tensor<50xi32>, %bl: tensor<12xf32>, %br: tensor<12xf32>, %b: tensor<12xf32>) -> (tensor<20x12xf32>, tensor<70x3xf32>) {
  %y, %alpha = attn.gatv2 %x, %wl, %wr, %att graph(%rp, %ci) bias_src(%bl) bias_dst(%br) bias(%b)
      : (tensor<20x6xf32>, tensor<12x6xf32>, tensor<12x6xf32>, tensor<3x4xf32>, tensor<21xi32>, tensor<50xi32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>) -> (tensor<20x12xf32>, tensor<70x3xf32>)
  return %y, %alpha : tensor<20x12xf32>, tensor<70x3xf32>
}

// CHECK-LABEL: attn-run: @gatv2_mean_no_self_loops
// CHECK: CHECK PASSED
func.func @gatv2_mean_no_self_loops(%x: tensor<17x5xf32>, %w: tensor<12x5xf32>, %att: tensor<4x3xf32>, %rp: tensor<18xi32>, %ci: tensor<30xi32>) -> tensor<17x3xf32> {
  %y = attn.gatv2 %x, %w, %w, %att graph(%rp, %ci) {combine = #attn.heads<mean>, add_self_loops = false, negative_slope = 0.1 : f64}
      : (tensor<17x5xf32>, tensor<12x5xf32>, tensor<12x5xf32>, tensor<4x3xf32>, tensor<18xi32>, tensor<30xi32>) -> tensor<17x3xf32>
  return %y : tensor<17x3xf32>
}

// PyG's edge_dim: each score gains its edge's term; added self loops take
// the mean of their node's incoming attributes. With alpha, through every
// pipeline.
// CHECK-LABEL: attn-run: @edge_attributes
// CHECK: CHECK PASSED
func.func @edge_attributes(%x: tensor<20x6xf32>, %w: tensor<12x6xf32>, %as: tensor<3x4xf32>, %ad: tensor<3x4xf32>, %rp: tensor<21xi32>, %ci: tensor<50xi32>, %ea: tensor<50x5xf32>, %we: tensor<12x5xf32>, %ae: tensor<3x4xf32>) -> (tensor<20x12xf32>, tensor<70x3xf32>) {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci) edge(%ea, %we, %ae)
      : (tensor<20x6xf32>, tensor<12x6xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<21xi32>, tensor<50xi32>, tensor<50x5xf32>, tensor<12x5xf32>, tensor<3x4xf32>) -> (tensor<20x12xf32>, tensor<70x3xf32>)
  return %y, %alpha : tensor<20x12xf32>, tensor<70x3xf32>
}

// CHECK-LABEL: attn-run: @edge_attributes_mean_no_self_loops
// CHECK: CHECK PASSED
func.func @edge_attributes_mean_no_self_loops(%x: tensor<17x5xf32>, %w: tensor<12x5xf32>, %as: tensor<4x3xf32>, %ad: tensor<4x3xf32>, %rp: tensor<18xi32>, %ci: tensor<30xi32>, %ea: tensor<30x2xf32>, %we: tensor<12x2xf32>, %ae: tensor<4x3xf32>) -> tensor<17x3xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) edge(%ea, %we, %ae) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<17x5xf32>, tensor<12x5xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<18xi32>, tensor<30xi32>, tensor<30x2xf32>, tensor<12x2xf32>, tensor<4x3xf32>) -> tensor<17x3xf32>
  return %y : tensor<17x3xf32>
}

// Bipartite layers (PyG's GATConv((in_src, in_dst), ...) called with
// (x_src, x_dst), as in sampled mini-batches): 20 sources, 8 destinations
// with their own projection; self loops for nodes 0..7, which are both.
// CHECK-LABEL: attn-run: @bipartite_alpha
// CHECK: CHECK PASSED
func.func @bipartite_alpha(%x: tensor<20x6xf32>, %w: tensor<12x6xf32>, %as: tensor<3x4xf32>, %ad: tensor<3x4xf32>, %rp: tensor<9xi32>, %ci: tensor<30xi32>, %b: tensor<12xf32>, %xd: tensor<8x5xf32>, %wd: tensor<12x5xf32>) -> (tensor<8x12xf32>, tensor<38x3xf32>) {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) target(%xd, %wd)
      : (tensor<20x6xf32>, tensor<12x6xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<9xi32>, tensor<30xi32>, tensor<12xf32>, tensor<8x5xf32>, tensor<12x5xf32>) -> (tensor<8x12xf32>, tensor<38x3xf32>)
  return %y, %alpha : tensor<8x12xf32>, tensor<38x3xf32>
}

// More destinations than sources: only nodes 0..5 get a self loop; a
// shared projection (weight_dst is weight), heads averaged, edge attributes.
// CHECK-LABEL: attn-run: @bipartite_more_destinations
// CHECK: CHECK PASSED
func.func @bipartite_more_destinations(%x: tensor<6x4xf32>, %w: tensor<8x4xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi64>, %ci: tensor<24xi64>, %ea: tensor<24x3xf32>, %we: tensor<8x3xf32>, %ae: tensor<2x4xf32>, %xd: tensor<10x4xf32>) -> (tensor<10x4xf32>, tensor<30x2xf32>) {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci) edge(%ea, %we, %ae) target(%xd, %w) {combine = #attn.heads<mean>}
      : (tensor<6x4xf32>, tensor<8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi64>, tensor<24xi64>, tensor<24x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<10x4xf32>, tensor<8x4xf32>) -> (tensor<10x4xf32>, tensor<30x2xf32>)
  return %y, %alpha : tensor<10x4xf32>, tensor<30x2xf32>
}

// CHECK-LABEL: attn-run: @bipartite_no_self_loops
// CHECK: CHECK PASSED
func.func @bipartite_no_self_loops(%x: tensor<20x6xf32>, %w: tensor<12x6xf32>, %as: tensor<3x4xf32>, %ad: tensor<3x4xf32>, %rp: tensor<9xi32>, %ci: tensor<30xi32>, %xd: tensor<8x6xf32>, %wd: tensor<12x6xf32>) -> tensor<8x12xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) target(%xd, %wd) {add_self_loops = false}
      : (tensor<20x6xf32>, tensor<12x6xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<9xi32>, tensor<30xi32>, tensor<8x6xf32>, tensor<12x6xf32>) -> tensor<8x12xf32>
  return %y : tensor<8x12xf32>
}

// CHECK-LABEL: attn-run: @gatv2_bipartite
// CHECK: CHECK PASSED
func.func @gatv2_bipartite(%x: tensor<20x6xf32>, %wl: tensor<12x6xf32>, %wr: tensor<12x5xf32>, %att: tensor<3x4xf32>, %rp: tensor<9xi32>, %ci: tensor<30xi32>, %bl: tensor<12xf32>, %br: tensor<12xf32>, %xd: tensor<8x5xf32>) -> (tensor<8x12xf32>, tensor<38x3xf32>) {
  %y, %alpha = attn.gatv2 %x, %wl, %wr, %att graph(%rp, %ci) bias_src(%bl) bias_dst(%br) target(%xd)
      : (tensor<20x6xf32>, tensor<12x6xf32>, tensor<12x5xf32>, tensor<3x4xf32>, tensor<9xi32>, tensor<30xi32>, tensor<12xf32>, tensor<12xf32>, tensor<8x5xf32>) -> (tensor<8x12xf32>, tensor<38x3xf32>)
  return %y, %alpha : tensor<8x12xf32>, tensor<38x3xf32>
}

// GATv2 with edge_dim: each edge's projection inside the nonlinearity, the
// added self loops with their node's mean attribute; with alpha, and a
// bipartite layer without self loops.
// CHECK-LABEL: attn-run: @gatv2_edge_attributes
// CHECK: CHECK PASSED
func.func @gatv2_edge_attributes(%x: tensor<20x6xf32>, %wl: tensor<12x6xf32>, %wr: tensor<12x6xf32>, %att: tensor<3x4xf32>, %rp: tensor<21xi32>, %ci: tensor<50xi32>, %ea: tensor<50x5xf32>, %we: tensor<12x5xf32>) -> (tensor<20x12xf32>, tensor<70x3xf32>) {
  %y, %alpha = attn.gatv2 %x, %wl, %wr, %att graph(%rp, %ci) edge(%ea, %we)
      : (tensor<20x6xf32>, tensor<12x6xf32>, tensor<12x6xf32>, tensor<3x4xf32>, tensor<21xi32>, tensor<50xi32>, tensor<50x5xf32>, tensor<12x5xf32>) -> (tensor<20x12xf32>, tensor<70x3xf32>)
  return %y, %alpha : tensor<20x12xf32>, tensor<70x3xf32>
}

// CHECK-LABEL: attn-run: @gatv2_edge_bipartite_no_self_loops
// CHECK: CHECK PASSED
func.func @gatv2_edge_bipartite_no_self_loops(%x: tensor<20x6xf32>, %wl: tensor<12x6xf32>, %wr: tensor<12x5xf32>, %att: tensor<3x4xf32>, %rp: tensor<9xi32>, %ci: tensor<30xi32>, %xd: tensor<8x5xf32>, %ea: tensor<30x2xf32>, %we: tensor<12x2xf32>) -> tensor<8x4xf32> {
  %y = attn.gatv2 %x, %wl, %wr, %att graph(%rp, %ci) target(%xd) edge(%ea, %we) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<20x6xf32>, tensor<12x6xf32>, tensor<12x5xf32>, tensor<3x4xf32>, tensor<9xi32>, tensor<30xi32>, tensor<8x5xf32>, tensor<30x2xf32>, tensor<12x2xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
