// RUN: attn-run %s --all --check --pipeline attn-reference-pipeline | FileCheck %s
// RUN: attn-run %s --all --check | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{block-q=4 block-k=5}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{block-q=4 block-k=5 vectorize=false}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{block-q=3 block-k=8 threads=2}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{graph-edge-density=1}" | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{graph-edge-density=1 vectorize=false threads=2}" | FileCheck %s

// JIT-compiled attn.sdpa against the C++ reference, through the reference
// lowering and the tiled CPU pipeline (default tiles, tiles that do not
// divide the lengths, OpenMP threads; graph masks through block-mask tiles and
// through the edge-list lowering), for every mask kind and score
// modification (seeded inputs: kv_lengths with a fully padded last batch,
// random CSR graphs with empty rows, ALiBi slopes).
// attn-run exits 1 on any element off by more than 1e-5 of the result's scale
// (plus 1e-5 of its own value), and infinities (lse of fully masked rows) must
// match exactly.

// Dense, sizes that are not powers of two, Ev != E.
// CHECK-LABEL: attn-run: @dense_odd_shapes
// CHECK: CHECK PASSED
func.func @dense_odd_shapes(%q: tensor<2x3x13x7xf32>, %k: tensor<2x3x13x7xf32>, %v: tensor<2x3x13x5xf32>) -> (tensor<2x3x13x5xf32>, tensor<2x3x13xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<2x3x13x7xf32>, tensor<2x3x13x7xf32>, tensor<2x3x13x5xf32>) -> (tensor<2x3x13x5xf32>, tensor<2x3x13xf32>)
  return %o, %l : tensor<2x3x13x5xf32>, tensor<2x3x13xf32>
}

// Explicit scale, cross-attention shape (Lq != Lk).
// CHECK-LABEL: attn-run: @dense_scale
// CHECK: CHECK PASSED
func.func @dense_scale(%q: tensor<1x2x9x16xf32>, %k: tensor<1x2x21x16xf32>, %v: tensor<1x2x21x16xf32>) -> tensor<1x2x9x16xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 0.7 : f64}
      : (tensor<1x2x9x16xf32>, tensor<1x2x21x16xf32>, tensor<1x2x21x16xf32>) -> tensor<1x2x9x16xf32>
  return %o : tensor<1x2x9x16xf32>
}

// Dense, square, with the lse result.
// CHECK-LABEL: attn-run: @dense_square_lse
// CHECK: CHECK PASSED
func.func @dense_square_lse(%q: tensor<1x2x17x8xf32>, %k: tensor<1x2x17x8xf32>, %v: tensor<1x2x17x8xf32>) -> (tensor<1x2x17x8xf32>, tensor<1x2x17xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x2x17x8xf32>, tensor<1x2x17x8xf32>, tensor<1x2x17x8xf32>) -> (tensor<1x2x17x8xf32>, tensor<1x2x17xf32>)
  return %o, %l : tensor<1x2x17x8xf32>, tensor<1x2x17xf32>
}

// Dense with Lq = Lk = 1024 (and 24 query tiles): attn-tile's default query
// tile is 256 rows (every query tile visits every key); keys past the key
// tiles' multiple (1030) and per-batch kv_lengths (the last batch fully
// padded), with the lse.
// CHECK-LABEL: attn-run: @dense_long_query_tiles
// CHECK: CHECK PASSED
func.func @dense_long_query_tiles(%q: tensor<3x2x1024x16xf32>, %k: tensor<3x2x1030x16xf32>, %v: tensor<3x2x1030x8xf32>, %len: tensor<3xi32>) -> (tensor<3x2x1024x8xf32>, tensor<3x2x1024xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len)
      : (tensor<3x2x1024x16xf32>, tensor<3x2x1030x16xf32>, tensor<3x2x1030x8xf32>, tensor<3xi32>) -> (tensor<3x2x1024x8xf32>, tensor<3x2x1024xf32>)
  return %o, %l : tensor<3x2x1024x8xf32>, tensor<3x2x1024xf32>
}

// Lq < Lk: bottom-right aligned (KV-cache decoding).
// CHECK-LABEL: attn-run: @causal_decode
// CHECK: CHECK PASSED
func.func @causal_decode(%q: tensor<2x2x5x8xf32>, %k: tensor<2x2x19x8xf32>, %v: tensor<2x2x19x8xf32>) -> (tensor<2x2x5x8xf32>, tensor<2x2x5xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<2x2x5x8xf32>, tensor<2x2x19x8xf32>, tensor<2x2x19x8xf32>) -> (tensor<2x2x5x8xf32>, tensor<2x2x5xf32>)
  return %o, %l : tensor<2x2x5x8xf32>, tensor<2x2x5xf32>
}

// Lq > Lk: the first Lq - Lk rows see no key: output 0, lse -inf.
// CHECK-LABEL: attn-run: @causal_fully_masked_rows
// CHECK: CHECK PASSED
func.func @causal_fully_masked_rows(%q: tensor<1x2x11x4xf32>, %k: tensor<1x2x6x4xf32>, %v: tensor<1x2x6x4xf32>) -> (tensor<1x2x11x4xf32>, tensor<1x2x11xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x11x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>) -> (tensor<1x2x11x4xf32>, tensor<1x2x11xf32>)
  return %o, %l : tensor<1x2x11x4xf32>, tensor<1x2x11xf32>
}

// CHECK-LABEL: attn-run: @local
// CHECK: CHECK PASSED
func.func @local(%q: tensor<1x2x23x8xf32>, %k: tensor<1x2x23x8xf32>, %v: tensor<1x2x23x8xf32>) -> (tensor<1x2x23x8xf32>, tensor<1x2x23xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 3 : i64, window_right = 2 : i64}
      : (tensor<1x2x23x8xf32>, tensor<1x2x23x8xf32>, tensor<1x2x23x8xf32>) -> (tensor<1x2x23x8xf32>, tensor<1x2x23xf32>)
  return %o, %l : tensor<1x2x23x8xf32>, tensor<1x2x23xf32>
}

// CHECK-LABEL: attn-run: @local_diagonal_only
// CHECK: CHECK PASSED
func.func @local_diagonal_only(%q: tensor<1x1x9x4xf32>, %k: tensor<1x1x14x4xf32>, %v: tensor<1x1x14x4xf32>) -> (tensor<1x1x9x4xf32>, tensor<1x1x9xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 0 : i64, window_right = 0 : i64}
      : (tensor<1x1x9x4xf32>, tensor<1x1x14x4xf32>, tensor<1x1x14x4xf32>) -> (tensor<1x1x9x4xf32>, tensor<1x1x9xf32>)
  return %o, %l : tensor<1x1x9x4xf32>, tensor<1x1x9xf32>
}

// CHECK-LABEL: attn-run: @causal_local
// CHECK: CHECK PASSED
func.func @causal_local(%q: tensor<2x2x15x8xf32>, %k: tensor<2x1x15x8xf32>, %v: tensor<2x1x15x8xf32>) -> (tensor<2x2x15x8xf32>, tensor<2x2x15xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal_local>, window_left = 4 : i64}
      : (tensor<2x2x15x8xf32>, tensor<2x1x15x8xf32>, tensor<2x1x15x8xf32>) -> (tensor<2x2x15x8xf32>, tensor<2x2x15xf32>)
  return %o, %l : tensor<2x2x15x8xf32>, tensor<2x2x15xf32>
}

// CHECK-LABEL: attn-run: @causal_local_cross
// CHECK: CHECK PASSED
func.func @causal_local_cross(%q: tensor<1x2x6x8xf32>, %k: tensor<1x2x20x8xf32>, %v: tensor<1x2x20x8xf32>) -> (tensor<1x2x6x8xf32>, tensor<1x2x6xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal_local>, window_left = 5 : i64, window_right = 0 : i64}
      : (tensor<1x2x6x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>) -> (tensor<1x2x6x8xf32>, tensor<1x2x6xf32>)
  return %o, %l : tensor<1x2x6x8xf32>, tensor<1x2x6xf32>
}

// The last batch is fully padded (kv_length 0).
// CHECK-LABEL: attn-run: @padding
// CHECK: CHECK PASSED
func.func @padding(%q: tensor<3x2x7x8xf32>, %k: tensor<3x2x12x8xf32>, %v: tensor<3x2x12x8xf32>, %len: tensor<3xi32>) -> (tensor<3x2x7x8xf32>, tensor<3x2x7xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len)
      : (tensor<3x2x7x8xf32>, tensor<3x2x12x8xf32>, tensor<3x2x12x8xf32>, tensor<3xi32>) -> (tensor<3x2x7x8xf32>, tensor<3x2x7xf32>)
  return %o, %l : tensor<3x2x7x8xf32>, tensor<3x2x7xf32>
}

// CHECK-LABEL: attn-run: @padding_causal_i64
// CHECK: CHECK PASSED
func.func @padding_causal_i64(%q: tensor<2x2x10x8xf32>, %k: tensor<2x2x10x8xf32>, %v: tensor<2x2x10x8xf32>, %len: tensor<2xi64>) -> (tensor<2x2x10x8xf32>, tensor<2x2x10xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<causal>}
      : (tensor<2x2x10x8xf32>, tensor<2x2x10x8xf32>, tensor<2x2x10x8xf32>, tensor<2xi64>) -> (tensor<2x2x10x8xf32>, tensor<2x2x10xf32>)
  return %o, %l : tensor<2x2x10x8xf32>, tensor<2x2x10xf32>
}

// Random CSR: row 0 and other rows empty, duplicate edges.
// CHECK-LABEL: attn-run: @graph
// CHECK: CHECK PASSED
func.func @graph(%q: tensor<1x2x12x8xf32>, %k: tensor<1x2x15x8xf32>, %v: tensor<1x2x15x8xf32>, %rp: tensor<13xi32>, %ci: tensor<30xi32>) -> (tensor<1x2x12x8xf32>, tensor<1x2x12xf32>) {
  %o, %l = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x2x12x8xf32>, tensor<1x2x15x8xf32>, tensor<1x2x15x8xf32>, tensor<13xi32>, tensor<30xi32>) -> (tensor<1x2x12x8xf32>, tensor<1x2x12xf32>)
  return %o, %l : tensor<1x2x12x8xf32>, tensor<1x2x12xf32>
}

// A graph without edges (an empty col_idx): every row fully masked, output 0
// and lse -inf (SPIR-V has no zero-length arrays: the Vulkan kernel takes
// no col_idx then, test/GPU/vulkan.test).
// CHECK-LABEL: attn-run: @graph_no_edges
// CHECK: CHECK PASSED
func.func @graph_no_edges(%q: tensor<1x2x12x8xf32>, %k: tensor<1x2x15x8xf32>, %v: tensor<1x2x15x8xf32>, %rp: tensor<13xi32>, %ci: tensor<0xi32>) -> (tensor<1x2x12x8xf32>, tensor<1x2x12xf32>) {
  %o, %l = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x2x12x8xf32>, tensor<1x2x15x8xf32>, tensor<1x2x15x8xf32>, tensor<13xi32>, tensor<0xi32>) -> (tensor<1x2x12x8xf32>, tensor<1x2x12xf32>)
  return %o, %l : tensor<1x2x12x8xf32>, tensor<1x2x12xf32>
}

// CHECK-LABEL: attn-run: @graph_gqa_i64
// CHECK: CHECK PASSED
func.func @graph_gqa_i64(%q: tensor<2x4x9x4xf32>, %k: tensor<2x2x9x4xf32>, %v: tensor<2x2x9x4xf32>, %rp: tensor<10xi64>, %ci: tensor<40xi64>) -> tensor<2x4x9x4xf32> {
  %o = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<2x4x9x4xf32>, tensor<2x2x9x4xf32>, tensor<2x2x9x4xf32>, tensor<10xi64>, tensor<40xi64>) -> tensor<2x4x9x4xf32>
  return %o : tensor<2x4x9x4xf32>
}

// Graph with every score modification that composes with it: padding, a
// broadcast bias, relative bias, Shaw keys, ALiBi, GQA; Lq != Lk.
// CHECK-LABEL: attn-run: @graph_modified
// CHECK: CHECK PASSED
func.func @graph_modified(%q: tensor<2x4x9x8xf32>, %k: tensor<2x2x11x8xf32>, %v: tensor<2x2x11x6xf32>, %len: tensor<2xi32>, %b: tensor<1x4x9x11xf32>, %rb: tensor<4x5xf32>, %rk: tensor<5x8xf32>, %s: tensor<4xf32>, %rp: tensor<10xi32>, %ci: tensor<37xi32>) -> (tensor<2x4x9x6xf32>, tensor<2x4x9xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len) bias(%b) rel_bias(%rb) rel_key(%rk) alibi(%s) graph(%rp, %ci) {mask = #attn.mask<graph>, rel_clip = 2 : i64}
      : (tensor<2x4x9x8xf32>, tensor<2x2x11x8xf32>, tensor<2x2x11x6xf32>, tensor<2xi32>, tensor<1x4x9x11xf32>, tensor<4x5xf32>, tensor<5x8xf32>, tensor<4xf32>, tensor<10xi32>, tensor<37xi32>) -> (tensor<2x4x9x6xf32>, tensor<2x4x9xf32>)
  return %o, %l : tensor<2x4x9x6xf32>, tensor<2x4x9xf32>
}

// Graph rows longer than one 16-entry block with E = 16 (the edge-list
// lowering's butterfly of dot products), plain and with padding (per-entry
// modifications).
// CHECK-LABEL: attn-run: @graph_wide
// CHECK: CHECK PASSED
func.func @graph_wide(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x37x16xf32>, %v: tensor<1x2x37x16xf32>, %rp: tensor<41xi32>, %ci: tensor<900xi32>) -> (tensor<1x2x40x16xf32>, tensor<1x2x40xf32>) {
  %o, %l = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x2x40x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x16xf32>, tensor<41xi32>, tensor<900xi32>) -> (tensor<1x2x40x16xf32>, tensor<1x2x40xf32>)
  return %o, %l : tensor<1x2x40x16xf32>, tensor<1x2x40xf32>
}

// CHECK-LABEL: attn-run: @graph_wide_padding
// CHECK: CHECK PASSED
func.func @graph_wide_padding(%q: tensor<2x2x40x32xf32>, %k: tensor<2x2x37x32xf32>, %v: tensor<2x2x37x16xf32>, %len: tensor<2xi32>, %rp: tensor<41xi32>, %ci: tensor<900xi32>) -> tensor<2x2x40x16xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len) graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<2x2x40x32xf32>, tensor<2x2x37x32xf32>, tensor<2x2x37x16xf32>, tensor<2xi32>, tensor<41xi32>, tensor<900xi32>) -> tensor<2x2x40x16xf32>
  return %o : tensor<2x2x40x16xf32>
}

// CHECK-LABEL: attn-run: @bias_full
// CHECK: CHECK PASSED
func.func @bias_full(%q: tensor<2x2x6x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x8xf32>, %b: tensor<2x2x6x7xf32>) -> tensor<2x2x6x8xf32> {
  %o = attn.sdpa %q, %k, %v bias(%b)
      : (tensor<2x2x6x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x6x7xf32>) -> tensor<2x2x6x8xf32>
  return %o : tensor<2x2x6x8xf32>
}

// CHECK-LABEL: attn-run: @bias_broadcast_heads_rows
// CHECK: CHECK PASSED
func.func @bias_broadcast_heads_rows(%q: tensor<2x4x6x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x8xf32>, %b: tensor<1x4x1x7xf32>) -> tensor<2x4x6x8xf32> {
  %o = attn.sdpa %q, %k, %v bias(%b)
      : (tensor<2x4x6x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x8xf32>, tensor<1x4x1x7xf32>) -> tensor<2x4x6x8xf32>
  return %o : tensor<2x4x6x8xf32>
}

// CHECK-LABEL: attn-run: @bias_broadcast_batch_cols
// CHECK: CHECK PASSED
func.func @bias_broadcast_batch_cols(%q: tensor<2x2x6x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x8xf32>, %b: tensor<2x1x6x1xf32>) -> tensor<2x2x6x8xf32> {
  %o = attn.sdpa %q, %k, %v bias(%b)
      : (tensor<2x2x6x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x8xf32>, tensor<2x1x6x1xf32>) -> tensor<2x2x6x8xf32>
  return %o : tensor<2x2x6x8xf32>
}

// CHECK-LABEL: attn-run: @rel_bias_causal
// CHECK: CHECK PASSED
func.func @rel_bias_causal(%q: tensor<1x3x11x8xf32>, %k: tensor<1x3x11x8xf32>, %v: tensor<1x3x11x8xf32>, %rb: tensor<3x7xf32>) -> tensor<1x3x11x8xf32> {
  %o = attn.sdpa %q, %k, %v rel_bias(%rb) {mask = #attn.mask<causal>, rel_clip = 3 : i64}
      : (tensor<1x3x11x8xf32>, tensor<1x3x11x8xf32>, tensor<1x3x11x8xf32>, tensor<3x7xf32>) -> tensor<1x3x11x8xf32>
  return %o : tensor<1x3x11x8xf32>
}

// CHECK-LABEL: attn-run: @rel_key_shaw_gqa
// CHECK: CHECK PASSED
func.func @rel_key_shaw_gqa(%q: tensor<1x4x10x8xf32>, %k: tensor<1x2x13x8xf32>, %v: tensor<1x2x13x8xf32>, %rk: tensor<5x8xf32>) -> tensor<1x4x10x8xf32> {
  %o = attn.sdpa %q, %k, %v rel_key(%rk) {rel_clip = 2 : i64}
      : (tensor<1x4x10x8xf32>, tensor<1x2x13x8xf32>, tensor<1x2x13x8xf32>, tensor<5x8xf32>) -> tensor<1x4x10x8xf32>
  return %o : tensor<1x4x10x8xf32>
}

// CHECK-LABEL: attn-run: @alibi_causal
// CHECK: CHECK PASSED
func.func @alibi_causal(%q: tensor<1x4x12x8xf32>, %k: tensor<1x4x12x8xf32>, %v: tensor<1x4x12x8xf32>, %s: tensor<4xf32>) -> tensor<1x4x12x8xf32> {
  %o = attn.sdpa %q, %k, %v alibi(%s) {mask = #attn.mask<causal>}
      : (tensor<1x4x12x8xf32>, tensor<1x4x12x8xf32>, tensor<1x4x12x8xf32>, tensor<4xf32>) -> tensor<1x4x12x8xf32>
  return %o : tensor<1x4x12x8xf32>
}

// CHECK-LABEL: attn-run: @gqa
// CHECK: CHECK PASSED
func.func @gqa(%q: tensor<2x6x8x8xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x8xf32>) -> (tensor<2x6x8x8xf32>, tensor<2x6x8xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<2x6x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> (tensor<2x6x8x8xf32>, tensor<2x6x8xf32>)
  return %o, %l : tensor<2x6x8x8xf32>, tensor<2x6x8xf32>
}

// CHECK-LABEL: attn-run: @mqa
// CHECK: CHECK PASSED
func.func @mqa(%q: tensor<1x4x8x8xf32>, %k: tensor<1x1x11x8xf32>, %v: tensor<1x1x11x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x4x8x8xf32>, tensor<1x1x11x8xf32>, tensor<1x1x11x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8xf32>)
  return %o, %l : tensor<1x4x8x8xf32>, tensor<1x4x8xf32>
}

// GQA + local window + padding + bias + relative bias + Shaw + ALiBi + lse.
// CHECK-LABEL: attn-run: @everything
// CHECK: CHECK PASSED
func.func @everything(%q: tensor<2x4x9x8xf32>, %k: tensor<2x2x14x8xf32>, %v: tensor<2x2x14x8xf32>, %len: tensor<2xi32>, %b: tensor<2x1x9x14xf32>, %rb: tensor<4x9xf32>, %rk: tensor<9x8xf32>, %s: tensor<4xf32>) -> (tensor<2x4x9x8xf32>, tensor<2x4x9xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len) bias(%b) rel_bias(%rb) rel_key(%rk) alibi(%s) {mask = #attn.mask<local>, window_left = 6 : i64, window_right = 3 : i64, rel_clip = 4 : i64, scale = 0.3 : f64}
      : (tensor<2x4x9x8xf32>, tensor<2x2x14x8xf32>, tensor<2x2x14x8xf32>, tensor<2xi32>, tensor<2x1x9x14xf32>, tensor<4x9xf32>, tensor<9x8xf32>, tensor<4xf32>) -> (tensor<2x4x9x8xf32>, tensor<2x4x9xf32>)
  return %o, %l : tensor<2x4x9x8xf32>, tensor<2x4x9xf32>
}
