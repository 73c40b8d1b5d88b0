// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One test per attn.gat verifier message.

func.func @f(%x: tensor<10xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects x to be rank 2 (N x F), got rank 1}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6x1xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects weight to be rank 2 (H*C x F), got rank 3}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xf32>, tensor<8x6x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<8xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects att_src to be rank 2 (H x C), got rank 1}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<8xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xi32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects a floating-point element type, got 'i32'}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xi32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf64>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects att_dst to have element type 'f32', got 'f64'}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf64>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<4x2xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects att_dst of shape H x C = 2x4, got 4x2}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<4x2xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x5xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects weight of shape H*C x F = 8x6, got 8x5}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xf32>, tensor<8x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<10xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects row_ptr of shape N+1 = 11, got 10}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<10xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<3x10xi32>) {
  // expected-error @+1 {{expects col_idx to be rank 1 (nnz), got rank 2}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<3x10xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi64>) {
  // expected-error @+1 {{expects row_ptr and col_idx of one integer type}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi64>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{expects bias of shape H*C = 8, got 4}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>, tensor<4xf32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expects bias of shape C = 4, got 8}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) {combine = #attn.heads<mean>} : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>, tensor<8xf32>) -> tensor<10x4xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects output of shape N x H*C = 10x8, got 10x4}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x4xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{expects output of shape N x C = 10x4, got 10x8}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) {combine = #attn.heads<mean>} : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{'negative_slope' must be finite in f32 (|slope| <= 3.4e38: the kernels compute in f32), got INF}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) {negative_slope = 0x7FF0000000000000 : f64} : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{'negative_slope' must be finite in f32 (|slope| <= 3.4e38: the kernels compute in f32), got -1.000000e+300}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) {negative_slope = -1.0e300 : f64} : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @f(%x: tensor<10x6xf32>, %w: tensor<8x6xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi32>, %ci: tensor<30xi32>) {
  // expected-error @+1 {{unknown head combination 'average'; expected one of concat, mean}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) {combine = #attn.heads<average>} : (tensor<10x6xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi32>, tensor<30xi32>) -> tensor<10x4xf32>
  return
}

// -----

func.func @f(%x: tensor<0x4xf32>, %w: tensor<8x4xf32>, %a: tensor<2x4xf32>, %rp: tensor<1xi32>, %ci: tensor<0xi32>) -> tensor<0x8xf32> {
  // expected-error @+1 {{'attn.gat' op expects x without zero-size dimensions (empty attention is not supported), got 'tensor<0x4xf32>'}}
  %y = attn.gat %x, %w, %a, %a graph(%rp, %ci)
      : (tensor<0x4xf32>, tensor<8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1xi32>, tensor<0xi32>) -> tensor<0x8xf32>
  return %y : tensor<0x8xf32>
}

// -----

// H*C = 274177 * 67280421310721 is 1 modulo 2^64: it matched a 1-row weight.
func.func @f(%x: tensor<4x2xf32>, %w: tensor<1x2xf32>, %a: tensor<274177x67280421310721xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{H*C = 274177 * 67280421310721 overflows int64}}
  %y = attn.gat %x, %w, %a, %a graph(%rp, %ci)
      : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<274177x67280421310721xf32>, tensor<274177x67280421310721xf32>, tensor<5xi32>, tensor<4xi32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

func.func @f(%x: tensor<9223372036854775807x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>) -> tensor<9223372036854775807x8xf32> {
  // expected-error @+1 {{N + 1 (row_ptr's length) overflows int64 for N = 9223372036854775807}}
  %y = attn.gat %x, %w, %a, %a graph(%rp, %ci)
      : (tensor<9223372036854775807x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>) -> tensor<9223372036854775807x8xf32>
  return %y : tensor<9223372036854775807x8xf32>
}

// -----

// alpha: one row per CSR edge and per added self loop (nnz + N = 4 + 4).
func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>) -> (tensor<4x8xf32>, tensor<4x2xf32>) {
  // expected-error @+1 {{'attn.gat' op expects alpha of shape nnz+N x H = 8x2, got 4x2}}
  %y, %alpha = attn.gat %x, %w, %a, %a graph(%rp, %ci)
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>) -> (tensor<4x8xf32>, tensor<4x2xf32>)
  return %y, %alpha : tensor<4x8xf32>, tensor<4x2xf32>
}

// -----

func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>) -> (tensor<4x8xf32>, tensor<8x2xf32>) {
  // expected-error @+1 {{'attn.gat' op expects alpha of shape nnz x H = 4x2, got 8x2}}
  %y, %alpha = attn.gat %x, %w, %a, %a graph(%rp, %ci) {add_self_loops = false}
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>) -> (tensor<4x8xf32>, tensor<8x2xf32>)
  return %y, %alpha : tensor<4x8xf32>, tensor<8x2xf32>
}

// -----

func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>) -> (tensor<4x8xf32>, tensor<8x2xf16>) {
  // expected-error @+1 {{'attn.gat' op expects alpha to have element type 'f32', got 'f16'}}
  %y, %alpha = attn.gat %x, %w, %a, %a graph(%rp, %ci)
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>) -> (tensor<4x8xf32>, tensor<8x2xf16>)
  return %y, %alpha : tensor<4x8xf32>, tensor<8x2xf16>
}

// -----

// attn.gatv2 shares attn.gat's checks, and checks both projections.
func.func @f(%x: tensor<4x2xf32>, %wl: tensor<8x2xf32>, %wr: tensor<8x3xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gatv2' op expects weight_dst of shape H*C x F = 8x2, got 8x3}}
  %y = attn.gatv2 %x, %wl, %wr, %a graph(%rp, %ci)
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %b: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gatv2' op expects bias_dst of shape H*C = 8, got 4}}
  %y = attn.gatv2 %x, %w, %w, %a graph(%rp, %ci) bias_dst(%b)
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<6xi32>, %ci: tensor<4xi32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gatv2' op expects row_ptr of shape N+1 = 5, got 6}}
  %y = attn.gatv2 %x, %w, %w, %a graph(%rp, %ci)
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<6xi32>, tensor<4xi32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>) -> (tensor<4x4xf32>, tensor<4x2xf32>) {
  // expected-error @+1 {{'attn.gatv2' op expects alpha of shape nnz+N x H = 8x2, got 4x2}}
  %y, %alpha = attn.gatv2 %x, %w, %w, %a graph(%rp, %ci) {combine = #attn.heads<mean>}
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>) -> (tensor<4x4xf32>, tensor<4x2xf32>)
  return %y, %alpha : tensor<4x4xf32>, tensor<4x2xf32>
}

// -----

// edge(...): the three operands together, edge_attr one row per CSR edge.
func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %ea: tensor<3x5xf32>, %we: tensor<8x5xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gat' op expects edge_attr of shape nnz x D = 4x5, got 3x5}}
  %y = attn.gat %x, %w, %a, %a graph(%rp, %ci) edge(%ea, %we, %a)
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<3x5xf32>, tensor<8x5xf32>, tensor<2x4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %ea: tensor<4x5xf32>, %we: tensor<8x3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gat' op expects weight_edge of shape H*C x D = 8x5, got 8x3}}
  %y = attn.gat %x, %w, %a, %a graph(%rp, %ci) edge(%ea, %we, %a)
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<4x5xf32>, tensor<8x3xf32>, tensor<2x4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %ea: tensor<4x5xf32>, %we: tensor<8x5xf32>, %ae: tensor<2x3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gat' op expects att_edge of shape H x C = 2x4, got 2x3}}
  %y = attn.gat %x, %w, %a, %a graph(%rp, %ci) edge(%ea, %we, %ae)
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<4x5xf32>, tensor<8x5xf32>, tensor<2x3xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Bipartite layers: the CSR has one row per destination (x_dst's rows).
func.func @f(%x: tensor<6x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<4xi32>, %xd: tensor<4x3xf32>, %wd: tensor<8x3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gat' op expects row_ptr of shape Nd+1 = 5, got 7}}
  %y = attn.gat %x, %w, %a, %a graph(%rp, %ci) target(%xd, %wd)
      : (tensor<6x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<4xi32>, tensor<4x3xf32>, tensor<8x3xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<6x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %xd: tensor<4x3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gat' op expects weight_dst of shape H*C x Fd = 8x3, got 8x2}}
  %y = attn.gat %x, %w, %a, %a graph(%rp, %ci) target(%xd, %w)
      : (tensor<6x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<4x3xf32>, tensor<8x2xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<6x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %xd: tensor<4x2xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{'attn.gat' op expects output of shape Nd x H*C = 4x8, got 6x8}}
  %y = attn.gat %x, %w, %a, %a graph(%rp, %ci) target(%xd, %w)
      : (tensor<6x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<4x2xf32>, tensor<8x2xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

// alpha: the CSR edges, then one self loop per node that is both source and
// destination (4 + min(6, 4)).
func.func @f(%x: tensor<6x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %xd: tensor<4x2xf32>) -> (tensor<4x8xf32>, tensor<10x2xf32>) {
  // expected-error @+1 {{'attn.gatv2' op expects alpha of shape nnz+min(Ns,Nd) x H = 8x2, got 10x2}}
  %y, %alpha = attn.gatv2 %x, %w, %w, %a graph(%rp, %ci) target(%xd)
      : (tensor<6x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<4x2xf32>) -> (tensor<4x8xf32>, tensor<10x2xf32>)
  return %y, %alpha : tensor<4x8xf32>, tensor<10x2xf32>
}

// -----

func.func @f(%x: tensor<6x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %xd: tensor<4x2xf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gatv2' op expects x_dst to have element type 'f32', got 'f16'}}
  %y = attn.gatv2 %x, %w, %w, %a graph(%rp, %ci) target(%xd)
      : (tensor<6x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<4x2xf16>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// attn.gatv2's edge(...): edge_attr and its projection lin_edge (H*C x D).
func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %ea: tensor<4x5xf32>, %we: tensor<4x5xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gatv2' op expects weight_edge of shape H*C x D = 8x5, got 4x5}}
  %y = attn.gatv2 %x, %w, %w, %a graph(%rp, %ci) edge(%ea, %we)
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The generic form can give one of target's two operands: refused.
func.func @f(%x: tensor<6x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<4xi32>, %xd: tensor<6x2xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{'attn.gat' op expects x_dst and weight_dst together}}
  %y = "attn.gat"(%x, %w, %a, %a, %rp, %ci, %xd) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}
      : (tensor<6x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<4xi32>, tensor<6x2xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

func.func @f(%x: tensor<6x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<4xi32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{'attn.gat' op expects x_dst and weight_dst together}}
  %y = "attn.gat"(%x, %w, %a, %a, %rp, %ci, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1>}
      : (tensor<6x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<4xi32>, tensor<8x2xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

func.func @f(%x: tensor<4x2xf32>, %w: tensor<8x2xf32>, %a: tensor<2x4xf32>, %rp: tensor<5xi32>, %ci: tensor<4xi32>, %ea: tensor<4x5xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.gatv2' op expects edge_attr and weight_edge together}}
  %y = "attn.gatv2"(%x, %w, %w, %a, %rp, %ci, %ea) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}
      : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<4xi32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
