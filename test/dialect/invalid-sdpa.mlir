// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One test per attn.sdpa verifier message.

func.func @f(%q: tensor<4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{expects query to be rank 4 (B x H x Lq x E), got rank 3}}
  %o = attn.sdpa %q, %k, %v : (tensor<4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8xf32>) {
  // expected-error @+1 {{expects value to be rank 4 (B x Hkv x Lk x Ev), got rank 3}}
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xi32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{expects a floating-point element type, got 'i32'}}
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x8x16xi32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xi32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf16>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{expects key to have element type 'f32', got 'f16'}}
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf16>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<3x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{expects one batch size, got query 2, key 3, value 2}}
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<3x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x7x16xf32>) {
  // expected-error @+1 {{expects key and value with the same heads and length (Hkv x Lk), got key 2x2x8x16 and value 2x2x7x16}}
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x7x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{expects query and key with one head dim E, got 16 and 8}}
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x3x8x16xf32>, %v: tensor<2x3x8x16xf32>) {
  // expected-error @+1 {{expects key/value heads (3) to divide query heads (4)}}
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x32xf32>) {
  // expected-error @+1 {{expects output of shape B x H x Lq x Ev = 2x4x8x32, got 2x4x8x16}}
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x32xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{expects lse of shape B x H x Lq = 2x4x8, got 2x4}}
  %o, %l = attn.sdpa %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{mask 'local' requires 'window_right'}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 2 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{mask 'causal_local' requires 'window_left'}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal_local>, window_right = 2 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'window_left' is a parameter of mask 'local', 'causal_local', 'dilated', not of mask 'causal'}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>, window_left = 2 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{mask 'dilated' requires 'dilation'}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<dilated>, window_left = 4 : i64, window_right = 4 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dilation' must be >= 1, got 0}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<dilated>, window_left = 4 : i64, window_right = 4 : i64, dilation = 0 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dilation' is a parameter of mask 'dilated', not of mask 'local'}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 4 : i64, window_right = 4 : i64, dilation = 2 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // A misspelled parameter is not taken for another dialect's attribute.
  // expected-error @+1 {{unknown attribute 'window_lft'; mask parameters are window_left, window_right, dilation}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_lft = 4 : i64, window_right = 4 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{mask parameter 'window_left' must be an i64 integer, got "4"}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = "4", window_right = 4 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{mask parameter 'dilation' must be an i64 integer, got 2 : i32}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<dilated>, window_left = 4 : i64, window_right = 4 : i64, dilation = 2 : i32} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // Other dialects' (prefixed) attributes are theirs.
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>, mydialect.note = "kept"} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'window_left' must be >= 0, got -1}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = -1 : i64, window_right = 2 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{mask 'graph' requires the graph(row_ptr, col_idx) operands}}
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<graph>} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<9xi32>, %a1: tensor<20xi32>) {
  // expected-error @+1 {{graph(row_ptr, col_idx) operands require mask 'graph', got mask 'dense'}}
  %o = attn.sdpa %q, %k, %v graph(%a0, %a1) : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<9xi32>, tensor<20xi32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<8xi32>, %a1: tensor<20xi32>) {
  // expected-error @+1 {{expects row_ptr of shape Lq+1 = 9, got 8}}
  %o = attn.sdpa %q, %k, %v graph(%a0, %a1) {mask = #attn.mask<graph>} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<8xi32>, tensor<20xi32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<9xi32>, %a1: tensor<4x5xi32>) {
  // expected-error @+1 {{expects col_idx to be rank 1 (nnz), got rank 2}}
  %o = attn.sdpa %q, %k, %v graph(%a0, %a1) {mask = #attn.mask<graph>} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<9xi32>, tensor<4x5xi32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<9xi32>, %a1: tensor<20xi64>) {
  // expected-error @+1 {{expects row_ptr and col_idx of one integer type}}
  %o = attn.sdpa %q, %k, %v graph(%a0, %a1) {mask = #attn.mask<graph>} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<9xi32>, tensor<20xi64>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<3xi32>) {
  // expected-error @+1 {{expects kv_lengths of shape B = 2, got 3}}
  %o = attn.sdpa %q, %k, %v kv_lengths(%a0) : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<3xi32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<8x8xf32>) {
  // expected-error @+1 {{expects bias to be rank 4 (B x H x Lq x Lk, each dim full or 1), got rank 2}}
  %o = attn.sdpa %q, %k, %v bias(%a0) : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<8x8xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{expects bias dims to be 1 or match B x H x Lq x Lk = 2x4x8x8, got 1x3x8x8}}
  %o = attn.sdpa %q, %k, %v bias(%a0) : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<1x3x8x8xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<1x1x8x8xf16>) {
  // expected-error @+1 {{expects bias to have element type 'f32', got 'f16'}}
  %o = attn.sdpa %q, %k, %v bias(%a0) : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<1x1x8x8xf16>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<4x5xf32>) {
  // expected-error @+1 {{rel_bias/rel_key operands require 'rel_clip'}}
  %o = attn.sdpa %q, %k, %v rel_bias(%a0) : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<4x5xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'rel_clip' requires a rel_bias or rel_key operand}}
  %o = attn.sdpa %q, %k, %v {rel_clip = 2 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<4x5xf32>) {
  // expected-error @+1 {{'rel_clip' must be in [0, 2^62 - 1] (2*rel_clip+1 is a dimension), got -2}}
  %o = attn.sdpa %q, %k, %v rel_bias(%a0) {rel_clip = -2 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<4x5xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<4x7xf32>) {
  // expected-error @+1 {{expects rel_bias of shape H x (2*rel_clip+1) = 4x5, got 4x7}}
  %o = attn.sdpa %q, %k, %v rel_bias(%a0) {rel_clip = 2 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<4x7xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<5x8xf32>) {
  // expected-error @+1 {{expects rel_key of shape (2*rel_clip+1) x E = 5x16, got 5x8}}
  %o = attn.sdpa %q, %k, %v rel_key(%a0) {rel_clip = 2 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<5x8xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<2xf32>) {
  // expected-error @+1 {{expects alibi slopes of shape H = 4, got 2}}
  %o = attn.sdpa %q, %k, %v alibi(%a0) : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'scale' must be a positive number in f32's normal range [2^-126, 3.4e38] (the kernels compute in f32), got 0}}
  %o = attn.sdpa %q, %k, %v {scale = 0.0 : f64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// Past f32's range the kernels' scale would be inf (all-zero output), the
// reference's finite.
func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'scale' must be a positive number in f32's normal range [2^-126, 3.4e38] (the kernels compute in f32), got 1.000000e+300}}
  %o = attn.sdpa %q, %k, %v {scale = 1.0e300 : f64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// A misspelled mask kind: one error in the user's words.
func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{unknown mask kind 'casual'; expected one of dense, causal, local, causal_local, graph, dilated}}
  %o = attn.sdpa %q, %q, %q {mask = #attn.mask<casual>}
      : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}

// -----

func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'attn.sdpa' op align #attn.align<per_sequence> places each sequence's queries before its own length: it needs the kv_lengths operand}}
  %o = attn.sdpa %q, %q, %q {mask = #attn.mask<causal>, align = #attn.align<per_sequence>}
      : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}

// -----

func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{unknown alignment 'upper_left'; expected one of bottom_right, top_left, per_sequence}}
  %o = attn.sdpa %q, %q, %q {mask = #attn.mask<causal>, align = #attn.align<upper_left>}
      : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}

// -----

// Zero-size attention is rejected (the tiled lowering would divide by it).
func.func @f(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x0x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op expects key without zero-size dimensions (empty attention is not supported), got 'tensor<1x1x0x8xf32>'}}
  %o = attn.sdpa %q, %k, %k : (tensor<1x1x4x8xf32>, tensor<1x1x0x8xf32>, tensor<1x1x0x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x1x4x0xf32>) -> tensor<1x1x4x0xf32> {
  // expected-error @+1 {{'attn.sdpa' op expects query without zero-size dimensions (empty attention is not supported), got 'tensor<1x1x4x0xf32>'}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x0xf32>, tensor<1x1x4x0xf32>, tensor<1x1x4x0xf32>) -> tensor<1x1x4x0xf32>
  return %o : tensor<1x1x4x0xf32>
}

// -----

// 2*rel_clip+1 would wrap past int64 (it was compared wrapped).
func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %a0: tensor<4x5xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'rel_clip' must be in [0, 2^62 - 1] (2*rel_clip+1 is a dimension), got 4611686018427387904}}
  %o = attn.sdpa %q, %k, %v rel_bias(%a0) {rel_clip = 4611686018427387904 : i64} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<4x5xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Lq + 1 = 2^63 is no dimension (it wrapped to the dynamic marker and the
// row_ptr check was skipped).
func.func @f(%q: tensor<1x1x9223372036854775807x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %rp: tensor<5xi64>, %ci: tensor<4xi64>) -> tensor<1x1x9223372036854775807x16xf32> {
  // expected-error @+1 {{Lq + 1 (row_ptr's length) overflows int64 for Lq = 9223372036854775807}}
  %o = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>} : (tensor<1x1x9223372036854775807x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<5xi64>, tensor<4xi64>) -> tensor<1x1x9223372036854775807x16xf32>
  return %o : tensor<1x1x9223372036854775807x16xf32>
}
