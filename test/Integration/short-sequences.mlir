// RUN: attn-run %s --all --check | FileCheck %s
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{threads=2}" | FileCheck %s
// RUN: %if host-x86-64-v3 %{ attn-run %s --all --check --target-cpu=x86-64-v3 | FileCheck %s %}
// RUN: attn-run %s --all --check --pipeline "attn-cpu-pipeline{short-sequences=false}" | FileCheck %s

// attn-tile's register-row lowering (short key sequences: Lk and Ev within
// four vectors of the target, plain scores, dense, causal or window masks,
// padding) against the C++
// reference, on the host's target, with OpenMP threads and on AVX2 (8 lanes:
// other chunkings of the same shapes); the last run tiles the same functions
// for comparison. Shapes cover whole and partial key vectors, head dims
// below and above the lanes, output rows in several vectors, empty causal
// rows, grouped heads, a scale, long query sequences, padding (with
// per-sequence alignment) and sliding windows.
// A ViT head: 17 keys (one whole vector and a 1-key rest on AVX-512, two and a 1-key rest on AVX2), with lse.
// CHECK-LABEL: attn-run: @vit_17_keys
// CHECK: CHECK PASSED
func.func @vit_17_keys(%q: tensor<3x4x17x16xf32>, %k: tensor<3x4x17x16xf32>, %v: tensor<3x4x17x16xf32>) -> (tensor<3x4x17x16xf32>, tensor<3x4x17xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<3x4x17x16xf32>, tensor<3x4x17x16xf32>, tensor<3x4x17x16xf32>) -> (tensor<3x4x17x16xf32>, tensor<3x4x17xf32>)
  return %o, %l : tensor<3x4x17x16xf32>, tensor<3x4x17xf32>
}

// A 4-key rest, E = 24 (a lanes block and a narrower one), Ev = 40 (two whole output vectors and a rest).
// CHECK-LABEL: attn-run: @keys_20_ev_40
// CHECK: CHECK PASSED
func.func @keys_20_ev_40(%q: tensor<2x2x9x24xf32>, %k: tensor<2x2x20x24xf32>, %v: tensor<2x2x20x40xf32>) -> tensor<2x2x9x40xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<2x2x9x24xf32>, tensor<2x2x20x24xf32>, tensor<2x2x20x40xf32>) -> tensor<2x2x9x40xf32>
  return %o : tensor<2x2x9x40xf32>
}

// 64 keys: four whole vectors on AVX-512 (beyond four AVX2 vectors: tiled there).
// CHECK-LABEL: attn-run: @keys_64
// CHECK: CHECK PASSED
func.func @keys_64(%q: tensor<1x2x33x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>) -> (tensor<1x2x33x64xf32>, tensor<1x2x33xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x2x33x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> (tensor<1x2x33x64xf32>, tensor<1x2x33xf32>)
  return %o, %l : tensor<1x2x33x64xf32>, tensor<1x2x33xf32>
}

// Causal, Lq > Lk (bottom-right): the first rows see no key (output 0, lse -inf).
// CHECK-LABEL: attn-run: @causal_fully_masked_rows
// CHECK: CHECK PASSED
func.func @causal_fully_masked_rows(%q: tensor<1x2x23x16xf32>, %k: tensor<1x2x11x16xf32>, %v: tensor<1x2x11x16xf32>) -> (tensor<1x2x23x16xf32>, tensor<1x2x23xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x23x16xf32>, tensor<1x2x11x16xf32>, tensor<1x2x11x16xf32>) -> (tensor<1x2x23x16xf32>, tensor<1x2x23xf32>)
  return %o, %l : tensor<1x2x23x16xf32>, tensor<1x2x23xf32>
}

// Causal, top-left, E = 8 (fewer head dims than lanes), rows past Lk see every key.
// CHECK-LABEL: attn-run: @causal_top_left_small_head
// CHECK: CHECK PASSED
func.func @causal_top_left_small_head(%q: tensor<1x2x30x8xf32>, %k: tensor<1x2x19x8xf32>, %v: tensor<1x2x19x8xf32>) -> (tensor<1x2x30x8xf32>, tensor<1x2x30xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>, align = #attn.align<top_left>}
      : (tensor<1x2x30x8xf32>, tensor<1x2x19x8xf32>, tensor<1x2x19x8xf32>) -> (tensor<1x2x30x8xf32>, tensor<1x2x30xf32>)
  return %o, %l : tensor<1x2x30x8xf32>, tensor<1x2x30xf32>
}

// Grouped KV heads (4 query heads on 2) and an explicit scale.
// CHECK-LABEL: attn-run: @grouped_heads_scale
// CHECK: CHECK PASSED
func.func @grouped_heads_scale(%q: tensor<2x4x13x16xf32>, %k: tensor<2x2x13x16xf32>, %v: tensor<2x2x13x16xf32>) -> tensor<2x4x13x16xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 0.3 : f64}
      : (tensor<2x4x13x16xf32>, tensor<2x2x13x16xf32>, tensor<2x2x13x16xf32>) -> tensor<2x4x13x16xf32>
  return %o : tensor<2x4x13x16xf32>
}

// 300 query rows in parallel units of 75 (a divisor of Lq near 64).
// CHECK-LABEL: attn-run: @long_queries
// CHECK: CHECK PASSED
func.func @long_queries(%q: tensor<1x1x300x16xf32>, %k: tensor<1x1x40x16xf32>, %v: tensor<1x1x40x16xf32>) -> tensor<1x1x300x16xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x1x300x16xf32>, tensor<1x1x40x16xf32>, tensor<1x1x40x16xf32>) -> tensor<1x1x300x16xf32>
  return %o : tensor<1x1x300x16xf32>
}

// 257 query rows (no divisor near 64: one unit per head), causal.
// CHECK-LABEL: attn-run: @prime_queries
// CHECK: CHECK PASSED
func.func @prime_queries(%q: tensor<1x1x257x16xf32>, %k: tensor<1x1x33x16xf32>, %v: tensor<1x1x33x16xf32>) -> tensor<1x1x257x16xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x1x257x16xf32>, tensor<1x1x33x16xf32>, tensor<1x1x33x16xf32>) -> tensor<1x1x257x16xf32>
  return %o : tensor<1x1x257x16xf32>
}

// Padding: kv_lengths per batch (seeded, the last batch fully padded: its
// rows give 0 and lse -inf), with causal rows aligned per sequence.
// CHECK-LABEL: attn-run: @padding_per_sequence
// CHECK: CHECK PASSED
func.func @padding_per_sequence(%q: tensor<3x2x9x16xf32>, %k: tensor<3x2x19x16xf32>, %v: tensor<3x2x19x16xf32>, %len: tensor<3xi32>) -> (tensor<3x2x9x16xf32>, tensor<3x2x9xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<causal>, align = #attn.align<per_sequence>}
      : (tensor<3x2x9x16xf32>, tensor<3x2x19x16xf32>, tensor<3x2x19x16xf32>, tensor<3xi32>) -> (tensor<3x2x9x16xf32>, tensor<3x2x9xf32>)
  return %o, %l : tensor<3x2x9x16xf32>, tensor<3x2x9xf32>
}

// Padding on a dense mask.
// CHECK-LABEL: attn-run: @padding_dense
// CHECK: CHECK PASSED
func.func @padding_dense(%q: tensor<2x4x17x16xf32>, %k: tensor<2x4x17x16xf32>, %v: tensor<2x4x17x16xf32>, %len: tensor<2xi32>) -> tensor<2x4x17x16xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len)
      : (tensor<2x4x17x16xf32>, tensor<2x4x17x16xf32>, tensor<2x4x17x16xf32>, tensor<2xi32>) -> tensor<2x4x17x16xf32>
  return %o : tensor<2x4x17x16xf32>
}

// A sliding window (keys ia - 3 .. ia + 5) and a causal one with a right
// bound (ia - 6 .. ia), rows whose windows leave the sequence.
// CHECK-LABEL: attn-run: @local_window
// CHECK: CHECK PASSED
func.func @local_window(%q: tensor<1x2x25x16xf32>, %k: tensor<1x2x25x16xf32>, %v: tensor<1x2x25x16xf32>) -> (tensor<1x2x25x16xf32>, tensor<1x2x25xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 3 : i64, window_right = 5 : i64}
      : (tensor<1x2x25x16xf32>, tensor<1x2x25x16xf32>, tensor<1x2x25x16xf32>) -> (tensor<1x2x25x16xf32>, tensor<1x2x25xf32>)
  return %o, %l : tensor<1x2x25x16xf32>, tensor<1x2x25xf32>
}

// CHECK-LABEL: attn-run: @causal_local_window
// CHECK: CHECK PASSED
func.func @causal_local_window(%q: tensor<2x2x11x8xf32>, %k: tensor<2x2x30x8xf32>, %v: tensor<2x2x30x8xf32>, %len: tensor<2xi32>) -> tensor<2x2x11x8xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<causal_local>, window_left = 6 : i64, window_right = 0 : i64}
      : (tensor<2x2x11x8xf32>, tensor<2x2x30x8xf32>, tensor<2x2x30x8xf32>, tensor<2xi32>) -> tensor<2x2x11x8xf32>
  return %o : tensor<2x2x11x8xf32>
}

// Blocks of query rows in lanes (18 rows: one 16-row block and two rows on
// their own on AVX-512, two 8-row blocks on AVX2) with grouped heads,
// per-sequence padding, a causal window, E = 24 and Ev = 40 (output chunks
// of 16, 16 and 8 lanes transposed back into rows).
// CHECK-LABEL: attn-run: @lane_blocks_grouped_window
// CHECK: CHECK PASSED
func.func @lane_blocks_grouped_window(%q: tensor<3x4x18x24xf32>, %k: tensor<3x2x21x24xf32>, %v: tensor<3x2x21x40xf32>, %len: tensor<3xi32>) -> (tensor<3x4x18x40xf32>, tensor<3x4x18xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<causal_local>, window_left = 5 : i64, window_right = 0 : i64, align = #attn.align<per_sequence>}
      : (tensor<3x4x18x24xf32>, tensor<3x2x21x24xf32>, tensor<3x2x21x40xf32>, tensor<3xi32>) -> (tensor<3x4x18x40xf32>, tensor<3x4x18xf32>)
  return %o, %l : tensor<3x4x18x40xf32>, tensor<3x4x18xf32>
}

// One decoding step (a query row against a short KV cache), Lk = E = 32:
// K^T from 16 blocks of 8 x 8 on AVX2 (4 of 16 x 16 on AVX-512) into a
// scratch tile, the row's loops over the head dims and the keys two steps
// per iteration (even and odd ones in two sets of accumulators).
// CHECK-LABEL: attn-run: @decode_step
// CHECK: CHECK PASSED
func.func @decode_step(%q: tensor<2x4x1x32xf32>, %k: tensor<2x4x32x32xf32>, %v: tensor<2x4x32x32xf32>) -> (tensor<2x4x1x32xf32>, tensor<2x4x1xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<2x4x1x32xf32>, tensor<2x4x32x32xf32>, tensor<2x4x32x32xf32>) -> (tensor<2x4x1x32xf32>, tensor<2x4x1xf32>)
  return %o, %l : tensor<2x4x1x32xf32>, tensor<2x4x1xf32>
}

// A single key: in lane blocks (a register tile of one key), and in the
// rows left over, where there is no whole vector of keys and so no K^T
// (each row's score is one dot product).
// CHECK-LABEL: attn-run: @single_key
// CHECK: CHECK PASSED
func.func @single_key(%q: tensor<1x2x19x16xf32>, %k: tensor<1x2x1x16xf32>, %v: tensor<1x2x1x16xf32>) -> tensor<1x2x19x16xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x2x19x16xf32>, tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x19x16xf32>
  return %o : tensor<1x2x19x16xf32>
}

// E = 64 with grouped heads (2 KV heads for 4), 31 keys and Ev = 20: lane
// blocks and seven rows left over on both targets, K^T 64 x 32 and Q^T
// 64 x lanes written to their scratch tiles as one 2-d write each (a chain
// of a write per row took bufferization tens of seconds on such shapes).
// CHECK-LABEL: attn-run: @head_dim_64_grouped
// CHECK: CHECK PASSED
func.func @head_dim_64_grouped(%q: tensor<1x4x23x64xf32>, %k: tensor<1x2x31x64xf32>, %v: tensor<1x2x31x20xf32>) -> (tensor<1x4x23x20xf32>, tensor<1x4x23xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x4x23x64xf32>, tensor<1x2x31x64xf32>, tensor<1x2x31x20xf32>) -> (tensor<1x4x23x20xf32>, tensor<1x4x23xf32>)
  return %o, %l : tensor<1x4x23x20xf32>, tensor<1x4x23xf32>
}
