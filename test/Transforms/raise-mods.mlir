// RUN: attn-opt %s --split-input-file --attn-raise-mods | FileCheck %s

// kv_idx <= q_idx with Lq == Lk is the causal kind; the region is dropped.
// CHECK-LABEL: func @causal
// CHECK: attn.sdpa {{.*}}{mask = #attn.mask<causal>}
// CHECK-NOT: mask_mod
// CHECK: return
func.func @causal(%q: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi sge, %i, %j : index
      attn.yield %c : i1
    }
  return %o : tensor<1x2x64x8xf32>
}

// -----

// A causal sliding window of 16 back: causal_local.
// CHECK-LABEL: func @causal_window
// CHECK: {mask = #attn.mask<causal_local>, window_left = 16 : i64}
// CHECK-NOT: mask_mod
func.func @causal_window(%q: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %w = arith.constant 16 : index
      %causal = arith.cmpi sle, %j, %i : index
      %back = arith.subi %i, %j : index
      %near = arith.cmpi sle, %back, %w : index
      %ok = arith.andi %causal, %near : i1
      attn.yield %ok : i1
    }
  return %o : tensor<1x2x64x8xf32>
}

// -----

// Two-sided window (3 back, 5 ahead), top-left with Lq != Lk: local.
// CHECK-LABEL: func @window_top_left
// CHECK: {align = #attn.align<top_left>, mask = #attn.mask<local>, window_left = 3 : i64, window_right = 5 : i64}
// CHECK-NOT: mask_mod
func.func @window_top_left(%q: tensor<1x1x16x8xf32>, %k: tensor<1x1x40x8xf32>) -> tensor<1x1x16x8xf32> {
  %o = attn.sdpa %q, %k, %k {align = #attn.align<top_left>} : (tensor<1x1x16x8xf32>, tensor<1x1x40x8xf32>, tensor<1x1x40x8xf32>) -> tensor<1x1x16x8xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c3 = arith.constant 3 : index
      %c5 = arith.constant 5 : index
      %lo = arith.subi %i, %c3 : index
      %hi = arith.addi %i, %c5 : index
      %a = arith.cmpi sge, %j, %lo : index
      %z = arith.cmpi sle, %j, %hi : index
      %ok = arith.andi %a, %z : i1
      attn.yield %ok : i1
    }
  return %o : tensor<1x1x16x8xf32>
}

// -----

// Left as regions: bottom-right with Lq != Lk (q_idx is not the position),
// a shifted diagonal (no kind), a document mask, and an op that has a kind.
// CHECK-LABEL: func @not_raised
// CHECK-COUNT-4: mask_mod
func.func @not_raised(%q: tensor<1x1x16x8xf32>, %k: tensor<1x1x40x8xf32>, %doc: tensor<16xi32>) -> (tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) {
  %o1 = attn.sdpa %q, %k, %k : (tensor<1x1x16x8xf32>, tensor<1x1x40x8xf32>, tensor<1x1x40x8xf32>) -> tensor<1x1x16x8xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi sle, %j, %i : index
      attn.yield %c : i1
    }
  %o2 = attn.sdpa %q, %q, %q : (tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi slt, %j, %i : index
      attn.yield %c : i1
    }
  %o3 = attn.sdpa %q, %q, %q : (tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %doc[%i] : tensor<16xi32>
      %dj = tensor.extract %doc[%j] : tensor<16xi32>
      %c = arith.cmpi eq, %di, %dj : i32
      attn.yield %c : i1
    }
  %o4 = attn.sdpa %q, %q, %q {mask = #attn.mask<causal>} : (tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %w = arith.constant 4 : index
      %back = arith.subi %i, %j : index
      %c = arith.cmpi sle, %back, %w : index
      attn.yield %c : i1
    }
  return %o1, %o2, %o3, %o4 : tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>
}

// -----

// ALiBi as a score_mod: |kv_idx - q_idx| by math.absi, by max(d, 0 - d),
// and q_idx - kv_idx under a causal kind become the alibi operand.
// CHECK-LABEL: func @alibi
// CHECK-SAME: (%{{.+}}: tensor<1x4x32x8xf32>, %[[S:.+]]: tensor<4xf32>)
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} alibi(%[[S]]) :
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} alibi(%[[S]]) :
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} alibi(%[[S]]) {mask = #attn.mask<causal>}
// CHECK-NOT: score_mod
// CHECK: return
func.func @alibi(%q: tensor<1x4x32x8xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) {
  %o1 = attn.sdpa %q, %q, %q : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %m = tensor.extract %slopes[%h] : tensor<4xf32>
      %d = arith.subi %j, %i : index
      %a = math.absi %d : index
      %a64 = arith.index_cast %a : index to i64
      %af = arith.sitofp %a64 : i64 to f32
      %p = arith.mulf %m, %af : f32
      %r = arith.subf %s, %p : f32
      attn.yield %r : f32
    }
  %o2 = attn.sdpa %q, %q, %q : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %m = tensor.extract %slopes[%h] : tensor<4xf32>
      %c0 = arith.constant 0 : index
      %d = arith.subi %i, %j : index
      %n = arith.subi %c0, %d : index
      %a = arith.maxsi %d, %n : index
      %a64 = arith.index_cast %a : index to i64
      %af = arith.sitofp %a64 : i64 to f32
      %p = arith.mulf %af, %m : f32
      %r = arith.subf %s, %p : f32
      attn.yield %r : f32
    }
  %o3 = attn.sdpa %q, %q, %q {mask = #attn.mask<causal>} : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %m = tensor.extract %slopes[%h] : tensor<4xf32>
      %d = arith.subi %i, %j : index
      %d64 = arith.index_cast %d : index to i64
      %df = arith.sitofp %d64 : i64 to f32
      %p = arith.mulf %m, %df : f32
      %r = arith.subf %s, %p : f32
      attn.yield %r : f32
    }
  return %o1, %o2, %o3 : tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>
}

// -----

// Left as regions: the one-sided distance without a causal kind (it is not
// |kv_idx - q_idx| above the diagonal), and a slope read at the wrong index.
// CHECK-LABEL: func @not_alibi
// CHECK-COUNT-2: score_mod
func.func @not_alibi(%q: tensor<1x4x32x8xf32>, %slopes: tensor<32xf32>) -> (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) {
  %o1 = attn.sdpa %q, %q, %q : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %m = tensor.extract %slopes[%h] : tensor<32xf32>
      %d = arith.subi %i, %j : index
      %d64 = arith.index_cast %d : index to i64
      %df = arith.sitofp %d64 : i64 to f32
      %p = arith.mulf %m, %df : f32
      %r = arith.subf %s, %p : f32
      attn.yield %r : f32
    }
  %o2 = attn.sdpa %q, %q, %q {mask = #attn.mask<causal>} : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %m = tensor.extract %slopes[%i] : tensor<32xf32>
      %d = arith.subi %i, %j : index
      %d64 = arith.index_cast %d : index to i64
      %df = arith.sitofp %d64 : i64 to f32
      %p = arith.mulf %m, %df : f32
      %r = arith.subf %s, %p : f32
      attn.yield %r : f32
    }
  return %o1, %o2 : tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>
}

// -----

// A clipped relative-position bias as a score_mod (min then max, and max
// then min with the offset first) becomes the rel_bias operand.
// CHECK-LABEL: func @rel_bias
// CHECK-SAME: (%{{.+}}: tensor<1x4x32x8xf32>, %[[T:.+]]: tensor<4x9xf32>)
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} rel_bias(%[[T]]) {rel_clip = 4 : i64} :
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} rel_bias(%[[T]]) {mask = #attn.mask<causal>, rel_clip = 4 : i64} :
// CHECK-NOT: score_mod
// CHECK: return
func.func @rel_bias(%q: tensor<1x4x32x8xf32>, %table: tensor<4x9xf32>) -> (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) {
  %o1 = attn.sdpa %q, %q, %q : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %r = arith.constant 4 : index
      %nr = arith.constant -4 : index
      %d = arith.subi %j, %i : index
      %lo = arith.minsi %d, %r : index
      %c = arith.maxsi %lo, %nr : index
      %at = arith.addi %c, %r : index
      %t = tensor.extract %table[%h, %at] : tensor<4x9xf32>
      %y = arith.addf %s, %t : f32
      attn.yield %y : f32
    }
  %o2 = attn.sdpa %q, %q, %q {mask = #attn.mask<causal>} : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %r = arith.constant 4 : index
      %nr = arith.constant -4 : index
      %d = arith.subi %j, %i : index
      %hi = arith.maxsi %nr, %d : index
      %c = arith.minsi %r, %hi : index
      %at = arith.addi %r, %c : index
      %t = tensor.extract %table[%h, %at] : tensor<4x9xf32>
      %y = arith.addf %t, %s : f32
      attn.yield %y : f32
    }
  return %o1, %o2 : tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>
}

// -----

// Left as regions: clipped at 3 but offset by 4 (not the operand's
// indexing), the distance q_idx - kv_idx (the table read mirrored), and a
// table one column short of 2R + 1.
// CHECK-LABEL: func @not_rel_bias
// CHECK-COUNT-3: score_mod
func.func @not_rel_bias(%q: tensor<1x4x32x8xf32>, %table: tensor<4x9xf32>, %short: tensor<4x8xf32>) -> (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) {
  %o1 = attn.sdpa %q, %q, %q : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %r = arith.constant 4 : index
      %r3 = arith.constant 3 : index
      %nr = arith.constant -3 : index
      %d = arith.subi %j, %i : index
      %lo = arith.minsi %d, %r3 : index
      %c = arith.maxsi %lo, %nr : index
      %at = arith.addi %c, %r : index
      %t = tensor.extract %table[%h, %at] : tensor<4x9xf32>
      %y = arith.addf %s, %t : f32
      attn.yield %y : f32
    }
  %o2 = attn.sdpa %q, %q, %q : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %r = arith.constant 4 : index
      %nr = arith.constant -4 : index
      %d = arith.subi %i, %j : index
      %lo = arith.minsi %d, %r : index
      %c = arith.maxsi %lo, %nr : index
      %at = arith.addi %c, %r : index
      %t = tensor.extract %table[%h, %at] : tensor<4x9xf32>
      %y = arith.addf %s, %t : f32
      attn.yield %y : f32
    }
  %o3 = attn.sdpa %q, %q, %q : (tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) -> tensor<1x4x32x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %r = arith.constant 4 : index
      %nr = arith.constant -4 : index
      %d = arith.subi %j, %i : index
      %lo = arith.minsi %d, %r : index
      %c = arith.maxsi %lo, %nr : index
      %at = arith.addi %c, %r : index
      %t = tensor.extract %short[%h, %at] : tensor<4x8xf32>
      %y = arith.addf %s, %t : f32
      attn.yield %y : f32
    }
  return %o1, %o2, %o3 : tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>
}
