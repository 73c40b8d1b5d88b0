// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of every attn op and of every optional part of its syntax.

// CHECK-LABEL: func @sdpa_dense
// CHECK: attn.sdpa %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32>
func.func @sdpa_dense(%q: tensor<2x8x16x32xf32>, %k: tensor<2x8x16x32xf32>, %v: tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32>
  return %o : tensor<2x8x16x32xf32>
}

// CHECK-LABEL: func @sdpa_causal_gqa_lse
// CHECK: %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = attn.sdpa %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} kv_lengths(%{{[a-z0-9_]+}}) {mask = #attn.mask<causal>, scale = 1.250000e-01 : f64}
// CHECK-SAME: -> (tensor<2x8x4x16xf32>, tensor<2x8x4xf32>)
func.func @sdpa_causal_gqa_lse(%q: tensor<2x8x4x16xf32>, %k: tensor<2x2x9x16xf32>, %v: tensor<2x2x9x16xf32>, %len: tensor<2xi32>) -> (tensor<2x8x4x16xf32>, tensor<2x8x4xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<causal>, scale = 0.125 : f64}
      : (tensor<2x8x4x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>, tensor<2xi32>) -> (tensor<2x8x4x16xf32>, tensor<2x8x4xf32>)
  return %o, %lse : tensor<2x8x4x16xf32>, tensor<2x8x4xf32>
}

// CHECK-LABEL: func @sdpa_local_all_mods
// CHECK: attn.sdpa %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} bias(%{{[a-z0-9_]+}}) rel_bias(%{{[a-z0-9_]+}}) rel_key(%{{[a-z0-9_]+}}) alibi(%{{[a-z0-9_]+}})
// CHECK-SAME: {mask = #attn.mask<local>, rel_clip = 2 : i64, window_left = 3 : i64, window_right = 1 : i64}
func.func @sdpa_local_all_mods(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>,
    %bias: tensor<1x1x8x8xf32>, %rb: tensor<4x5xf32>, %rk: tensor<5x16xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x8x16xf32> {
  %o = attn.sdpa %q, %k, %v bias(%bias) rel_bias(%rb) rel_key(%rk) alibi(%slopes)
      {mask = #attn.mask<local>, window_left = 3 : i64, window_right = 1 : i64, rel_clip = 2 : i64}
      : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x1x8x8xf32>, tensor<4x5xf32>, tensor<5x16xf32>, tensor<4xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// CHECK-LABEL: func @sdpa_causal_local
// CHECK: {mask = #attn.mask<causal_local>, window_left = 4 : i64}
func.func @sdpa_causal_local(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal_local>, window_left = 4 : i64}
      : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}

// CHECK-LABEL: func @sdpa_dilated
// CHECK: {dilation = 3 : i64, mask = #attn.mask<dilated>, window_left = 4 : i64, window_right = 2 : i64}
func.func @sdpa_dilated(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<dilated>, window_left = 4 : i64, window_right = 2 : i64, dilation = 3 : i64}
      : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}

// Regions round-trip, reading a captured tensor.
// CHECK-LABEL: func @sdpa_regions
// CHECK: attn.sdpa {{.*}} -> tensor<1x2x8x4xf32> score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index):
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[S]] : f32
// CHECK-NEXT: attn.yield %[[T]] : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[DI:.+]] = tensor.extract %{{.+}}[%[[I]]] : tensor<8xi32>
// CHECK-NEXT: %[[DJ:.+]] = tensor.extract %{{.+}}[%[[J]]] : tensor<8xi32>
// CHECK-NEXT: %[[EQ:.+]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK-NEXT: attn.yield %[[EQ]] : i1
func.func @sdpa_regions(%q: tensor<1x2x8x4xf32>, %doc: tensor<8xi32>) -> tensor<1x2x8x4xf32> {
  %o = attn.sdpa %q, %q, %q {mask = #attn.mask<causal>} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %t = math.tanh %s : f32
      attn.yield %t : f32
    } mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %doc[%i] : tensor<8xi32>
      %dj = tensor.extract %doc[%j] : tensor<8xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    }
  return %o : tensor<1x2x8x4xf32>
}

// CHECK-LABEL: func @mha_mask_mod
// CHECK: attn.mha {{.*}} mask_mod {
// CHECK: attn.yield %{{.+}} : i1
func.func @mha_mask_mod(%x: tensor<1x4x8xf32>, %w: tensor<24x8xf32>, %wo: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w) out_proj(%wo) {num_heads = 2 : i64}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<24x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi sle, %j, %i : index
      attn.yield %c : i1
    }
  return %y : tensor<1x4x8xf32>
}

// CHECK-LABEL: func @sdpa_align
// CHECK: {align = #attn.align<top_left>, mask = #attn.mask<causal>}
// CHECK: {align = #attn.align<per_sequence>, mask = #attn.mask<causal>}
// CHECK-NOT: align
// CHECK: return
func.func @sdpa_align(%q: tensor<2x1x4x4xf32>, %k: tensor<2x1x8x4xf32>, %len: tensor<2xi32>) -> (tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>) {
  %o1 = attn.sdpa %q, %k, %k {mask = #attn.mask<causal>, align = #attn.align<top_left>}
      : (tensor<2x1x4x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>) -> tensor<2x1x4x4xf32>
  %o2 = attn.sdpa %q, %k, %k kv_lengths(%len) {mask = #attn.mask<causal>, align = #attn.align<per_sequence>}
      : (tensor<2x1x4x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2xi32>) -> tensor<2x1x4x4xf32>
  // The default is not printed.
  %o3 = attn.sdpa %q, %k, %k {align = #attn.align<bottom_right>}
      : (tensor<2x1x4x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>) -> tensor<2x1x4x4xf32>
  return %o1, %o2, %o3 : tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>
}

// CHECK-LABEL: func @sdpa_graph_dynamic
// CHECK: attn.sdpa %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} graph(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {mask = #attn.mask<graph>} : (tensor<1x2x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<?xi64>, tensor<?xi64>)
func.func @sdpa_graph_dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x1x?x8xf32>, %v: tensor<1x1x?x8xf32>, %rp: tensor<?xi64>, %ci: tensor<?xi64>) -> tensor<1x2x?x8xf32> {
  %o = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x2x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// CHECK-LABEL: func @mha
// CHECK: attn.mha %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} in_proj(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) out_proj(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) kv_lengths(%{{[a-z0-9_]+}}) {mask = #attn.mask<causal>, num_heads = 4 : i64, num_kv_heads = 2 : i64}
func.func @mha(%x: tensor<2x16x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>, %wo: tensor<32x32xf32>, %bo: tensor<32xf32>, %len: tensor<2xi32>) -> tensor<2x16x32xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) kv_lengths(%len)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, mask = #attn.mask<causal>}
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<2xi32>) -> tensor<2x16x32xf32>
  return %y : tensor<2x16x32xf32>
}

// CHECK-LABEL: func @mha_no_bias
// CHECK: attn.mha %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} in_proj(%{{[a-z0-9_]+}}) out_proj(%{{[a-z0-9_]+}}) {num_heads = 2 : i64}
func.func @mha_no_bias(%x: tensor<1x4x8xf32>, %w: tensor<24x8xf32>, %wo: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w) out_proj(%wo) {num_heads = 2 : i64}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<24x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// CHECK-LABEL: func @gat_concat
// CHECK: attn.gat %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} graph(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) bias(%{{[a-z0-9_]+}}) : (tensor<34x16xf32>
func.func @gat_concat(%x: tensor<34x16xf32>, %w: tensor<32x16xf32>, %as: tensor<4x8xf32>, %ad: tensor<4x8xf32>, %rp: tensor<35xi32>, %ci: tensor<156xi32>, %b: tensor<32xf32>) -> tensor<34x32xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b)
      : (tensor<34x16xf32>, tensor<32x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<35xi32>, tensor<156xi32>, tensor<32xf32>) -> tensor<34x32xf32>
  return %y : tensor<34x32xf32>
}

// CHECK-LABEL: func @gat_alpha
// CHECK: %{{.+}}, %{{.+}} = attn.gat {{.*}} -> (tensor<10x8xf32>, tensor<30x2xf32>)
func.func @gat_alpha(%x: tensor<10x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi64>, %ci: tensor<20xi64>) -> tensor<30x2xf32> {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<10x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi64>, tensor<20xi64>) -> (tensor<10x8xf32>, tensor<30x2xf32>)
  return %alpha : tensor<30x2xf32>
}

// CHECK-LABEL: func @gat_edge
// CHECK: attn.gat %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} graph(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) edge(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<10x3xf32>
func.func @gat_edge(%x: tensor<10x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi64>, %ci: tensor<20xi64>, %ea: tensor<20x5xf32>, %we: tensor<8x5xf32>) -> tensor<10x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) edge(%ea, %we, %as)
      : (tensor<10x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi64>, tensor<20xi64>, tensor<20x5xf32>, tensor<8x5xf32>, tensor<2x4xf32>) -> tensor<10x8xf32>
  return %y : tensor<10x8xf32>
}

// A bipartite layer: sources x, destinations x_dst with weight_dst.
// CHECK-LABEL: func @gat_bipartite
// CHECK: attn.gat %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} graph(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) target(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<10x3xf32>
// CHECK: attn.gatv2 {{.*}} target(%{{[a-z0-9_]+}}) : (tensor<10x3xf32>
// CHECK: attn.gatv2 {{.*}} target(%{{[a-z0-9_]+}}) edge(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<10x3xf32>
func.func @gat_bipartite(%x: tensor<10x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<5xi64>, %ci: tensor<20xi64>, %xd: tensor<4x6xf32>, %wd: tensor<8x6xf32>, %ea: tensor<20x2xf32>, %we: tensor<8x2xf32>) -> (tensor<4x8xf32>, tensor<24x2xf32>) {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) target(%xd, %wd)
      : (tensor<10x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi64>, tensor<20xi64>, tensor<4x6xf32>, tensor<8x6xf32>) -> tensor<4x8xf32>
  %v, %alpha = attn.gatv2 %x, %w, %wd, %as graph(%rp, %ci) target(%xd)
      : (tensor<10x3xf32>, tensor<8x3xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<5xi64>, tensor<20xi64>, tensor<4x6xf32>) -> (tensor<4x8xf32>, tensor<24x2xf32>)
  %e = attn.gatv2 %x, %w, %wd, %as graph(%rp, %ci) target(%xd) edge(%ea, %we)
      : (tensor<10x3xf32>, tensor<8x3xf32>, tensor<8x6xf32>, tensor<2x4xf32>, tensor<5xi64>, tensor<20xi64>, tensor<4x6xf32>, tensor<20x2xf32>, tensor<8x2xf32>) -> tensor<4x8xf32>
  return %y, %alpha : tensor<4x8xf32>, tensor<24x2xf32>
}

// CHECK-LABEL: func @gatv2
// CHECK: attn.gatv2 %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} graph(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) bias_src(%{{[a-z0-9_]+}}) bias_dst(%{{[a-z0-9_]+}}) bias(%{{[a-z0-9_]+}}) : (tensor<10x3xf32>
// CHECK: attn.gatv2 %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} graph(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {combine = #attn.heads<mean>}
func.func @gatv2(%x: tensor<10x3xf32>, %wl: tensor<8x3xf32>, %wr: tensor<8x3xf32>, %att: tensor<2x4xf32>, %rp: tensor<11xi64>, %ci: tensor<20xi64>, %bl: tensor<8xf32>, %br: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<10x8xf32>, tensor<10x4xf32>) {
  %y = attn.gatv2 %x, %wl, %wr, %att graph(%rp, %ci) bias_src(%bl) bias_dst(%br) bias(%b)
      : (tensor<10x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<11xi64>, tensor<20xi64>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<10x8xf32>
  %m = attn.gatv2 %x, %wl, %wr, %att graph(%rp, %ci) {combine = #attn.heads<mean>}
      : (tensor<10x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<11xi64>, tensor<20xi64>) -> tensor<10x4xf32>
  return %y, %m : tensor<10x8xf32>, tensor<10x4xf32>
}

// CHECK-LABEL: func @gat_mean
// CHECK: attn.gat {{.*}} {add_self_loops = false, combine = #attn.heads<mean>, negative_slope = 1.000000e-01 : f64}
func.func @gat_mean(%x: tensor<10x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<11xi64>, %ci: tensor<20xi64>) -> tensor<10x4xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      {combine = #attn.heads<mean>, negative_slope = 0.1 : f64, add_self_loops = false}
      : (tensor<10x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<11xi64>, tensor<20xi64>) -> tensor<10x4xf32>
  return %y : tensor<10x4xf32>
}
