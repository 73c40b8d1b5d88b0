// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One error per malformed score_mod / mask_mod region.

func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'attn.sdpa' op score_mod takes (score: f32, b, h, q_idx, kv_idx: index), got (f32, index, index, index)}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index):
      attn.yield %s : f32
    }
  return %o : tensor<1x1x4x4xf32>
}

// -----

// 16-bit operands: the score is f32 (the computation type).
func.func @f(%q: tensor<1x1x4x4xbf16>) -> tensor<1x1x4x4xbf16> {
  // expected-error @+1 {{'attn.sdpa' op score_mod takes (score: f32, b, h, q_idx, kv_idx: index), got (bf16, index, index, index, index)}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xbf16>, tensor<1x1x4x4xbf16>, tensor<1x1x4x4xbf16>) -> tensor<1x1x4x4xbf16>
    score_mod {
    ^bb0(%s: bf16, %b: index, %h: index, %i: index, %j: index):
      attn.yield %s : bf16
    }
  return %o : tensor<1x1x4x4xbf16>
}

// -----

func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'attn.sdpa' op score_mod must yield 'f32', got 'i1'}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi slt, %i, %j : index
      attn.yield %c : i1
    }
  return %o : tensor<1x1x4x4xf32>
}

// -----

func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'attn.sdpa' op mask_mod takes (b, h, q_idx, kv_idx: index), got (index, index, index, i32)}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: i32):
      %t = arith.constant true
      attn.yield %t : i1
    }
  return %o : tensor<1x1x4x4xf32>
}

// -----

func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'attn.sdpa' op mask_mod must yield 'i1', got 'index'}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      attn.yield %j : index
    }
  return %o : tensor<1x1x4x4xf32>
}

// -----

func.func @f(%q: tensor<1x1x4x4xf32>, %m: memref<4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'attn.sdpa' op score_mod must be free of side effects, got 'memref.store'}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      memref.store %s, %m[%j] : memref<4xf32>
      attn.yield %s : f32
    }
  return %o : tensor<1x1x4x4xf32>
}

// -----

func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'attn.sdpa' op mask_mod must have one block, got 2}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      cf.br ^bb1
    ^bb1:
      %t = arith.constant true
      attn.yield %t : i1
    }
  return %o : tensor<1x1x4x4xf32>
}

// -----

func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'attn.sdpa' op mask_mod must end with attn.yield}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %t = arith.constant true
      scf.yield %t : i1
    }
  return %o : tensor<1x1x4x4xf32>
}

// -----

func.func @f(%x: f32) -> f32 {
  // expected-error @+1 {{'attn.yield' op expects parent op to be one of 'attn.sdpa, attn.mha'}}
  attn.yield %x : f32
}

// -----

// attn.mha checks its regions the same way.
func.func @f(%x: tensor<1x4x8xf32>, %w: tensor<24x8xf32>, %wo: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.mha' op mask_mod must yield 'i1', got 'f32'}}
  %y = attn.mha %x, %x, %x in_proj(%w) out_proj(%wo) {num_heads = 2 : i64}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<24x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %z = arith.constant 0.0 : f32
      attn.yield %z : f32
    }
  return %y : tensor<1x4x8xf32>
}

// -----

// A region reading a captured tensor at q_idx directly needs Lq entries in
// that dimension (such reads are in bounds by construction; the lowerings
// clamp only indices computed from data).
func.func @f(%q: tensor<1x1x16x4xf32>, %doc: tensor<8xi32>) -> tensor<1x1x16x4xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // expected-error @+1 {{'tensor.extract' op in mask_mod reads dim 0 of 'tensor<8xi32>' at q_idx, which reaches Lq - 1 = 15: the dimension needs at least 16 entries}}
      %di = tensor.extract %doc[%i] : tensor<8xi32>
      %dj = tensor.extract %doc[%j] : tensor<8xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    }
  return %o : tensor<1x1x16x4xf32>
}

// -----

// A region may not read a tensor without elements.
func.func @f(%q: tensor<1x1x4x4xf32>, %t: tensor<4x0xi32>) -> tensor<1x1x4x4xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'tensor.extract' op in mask_mod reads 'tensor<4x0xi32>', which has no element}}
      %x = tensor.extract %t[%i, %c0] : tensor<4x0xi32>
      %z = arith.constant 0 : i32
      %same = arith.cmpi eq, %x, %z : i32
      attn.yield %same : i1
    }
  return %o : tensor<1x1x4x4xf32>
}

// -----

// A region whose block is empty has no attn.yield (attn-fuzz-ir found the
// verifier reading past it).
func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{score_mod must end with attn.yield}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    }
  return %o : tensor<1x1x4x8xf32>
}
