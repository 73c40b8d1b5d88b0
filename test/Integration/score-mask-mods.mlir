// FlexAttention-style score_mod / mask_mod regions at realistic sizes (L in
// the hundreds, E = 64 and 128, lengths the tiles do not divide), through the
// reference lowering and the tiled CPU pipeline (default and odd tiles on two
// threads). The oracle evaluates each region itself, op by op over doubles
// (lib/Runtime/RegionEvaluator.cpp); no region is compiled for the check.
// Inputs have magnitude 2 so that soft-capping and biases change the result.
//
// RUN: attn-run %s --all --check --input-magnitude 2 --pipeline attn-reference-pipeline | FileCheck %s
// RUN: attn-run %s --all --check --input-magnitude 2 | FileCheck %s
// RUN: attn-run %s --all --check --input-magnitude 2 --pipeline "attn-cpu-pipeline{block-q=24 block-k=40 threads=2}" | FileCheck %s
// After a greedy rewrite (attn-raise-mods) the regions left read constants
// hoisted out of them; lowerings and the oracle still agree.
// RUN: attn-opt %s --attn-raise-mods -o %t.mlir
// RUN: attn-run %t.mlir --all --check --input-magnitude 2 | FileCheck %s

// Tanh soft-capping of the logits (Gemma 2: cap 50; Grok: 30), causal.
// CHECK-LABEL: attn-run: @softcap_causal
// CHECK: CHECK PASSED
func.func @softcap_causal(%q: tensor<1x2x200x64xf32>, %k: tensor<1x2x200x64xf32>, %v: tensor<1x2x200x64xf32>) -> tensor<1x2x200x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x200x64xf32>, tensor<1x2x200x64xf32>, tensor<1x2x200x64xf32>) -> tensor<1x2x200x64xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %cap = arith.constant 1.5 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x2x200x64xf32>
}

// Causal written as a region (q_idx = i, kv_idx = j; Lq = Lk): the CPU
// pipeline raises it to the causal kind (attn-raise-mods); the
// reference pipeline inlines the region.
// CHECK-LABEL: attn-run: @causal_region
// CHECK: CHECK PASSED
func.func @causal_region(%q: tensor<1x2x333x64xf32>, %k: tensor<1x2x333x64xf32>, %v: tensor<1x2x333x64xf32>) -> tensor<1x2x333x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x333x64xf32>, tensor<1x2x333x64xf32>, tensor<1x2x333x64xf32>) -> tensor<1x2x333x64xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi sle, %j, %i : index
      attn.yield %c : i1
    }
  return %o : tensor<1x2x333x64xf32>
}

// Bottom-right causal of a 130-row chunk over 333 keys written as a region
// with the explicit offset (not raised to the kind: q_idx is the row):
// classified by the interval analysis.
// CHECK-LABEL: attn-run: @causal_region_chunk
// CHECK: CHECK PASSED
func.func @causal_region_chunk(%q: tensor<1x2x130x64xf32>, %k: tensor<1x2x333x64xf32>, %v: tensor<1x2x333x64xf32>) -> tensor<1x2x130x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x130x64xf32>, tensor<1x2x333x64xf32>, tensor<1x2x333x64xf32>) -> tensor<1x2x130x64xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %offset = arith.constant 203 : index
      %ia = arith.addi %i, %offset : index
      %c = arith.cmpi sle, %j, %ia : index
      attn.yield %c : i1
    }
  return %o : tensor<1x2x130x64xf32>
}

// Indices truncated to i8 wrap at 128 (keys 128.. compare as negative): the
// tile analysis must not take the truncated comparison for causal.
// CHECK-LABEL: attn-run: @wrapped_i8
// CHECK: CHECK PASSED
func.func @wrapped_i8(%q: tensor<1x1x300x64xf32>, %k: tensor<1x1x300x64xf32>, %v: tensor<1x1x300x64xf32>) -> tensor<1x1x300x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x300x64xf32>, tensor<1x1x300x64xf32>, tensor<1x1x300x64xf32>) -> tensor<1x1x300x64xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %i8 = arith.index_cast %i : index to i8
      %j8 = arith.index_cast %j : index to i8
      %c = arith.cmpi sle, %j8, %i8 : i8
      attn.yield %c : i1
    }
  return %o : tensor<1x1x300x64xf32>
}

// Block-diagonal with a constant block of 37 (documents of one length).
// CHECK-LABEL: attn-run: @block_diagonal
// CHECK: CHECK PASSED
func.func @block_diagonal(%q: tensor<1x2x300x64xf32>, %k: tensor<1x2x300x64xf32>, %v: tensor<1x2x300x64xf32>) -> tensor<1x2x300x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32>) -> tensor<1x2x300x64xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c37 = arith.constant 37 : index
      %di = arith.floordivsi %i, %c37 : index
      %dj = arith.floordivsi %j, %c37 : index
      %same = arith.cmpi eq, %di, %dj : index
      attn.yield %same : i1
    }
  return %o : tensor<1x2x300x64xf32>
}

// Document masking from a per-token document id (packed sequences; attn-run
// generates ids as sorted runs).
// CHECK-LABEL: attn-run: @documents
// CHECK: CHECK PASSED
func.func @documents(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>, %doc: tensor<256xi32>) -> tensor<1x2x256x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %doc[%i] : tensor<256xi32>
      %dj = tensor.extract %doc[%j] : tensor<256xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    }
  return %o : tensor<1x2x256x64xf32>
}

// Document masking and causal (the built-in kind), E = 128, a length the
// tiles do not divide; per-batch document ids.
// CHECK-LABEL: attn-run: @documents_causal
// CHECK: CHECK PASSED
func.func @documents_causal(%q: tensor<2x2x190x128xf32>, %k: tensor<2x2x190x128xf32>, %v: tensor<2x2x190x128xf32>, %doc: tensor<2x190xi64>) -> tensor<2x2x190x128xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<2x2x190x128xf32>, tensor<2x2x190x128xf32>, tensor<2x2x190x128xf32>) -> tensor<2x2x190x128xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %doc[%b, %i] : tensor<2x190xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x190xi64>
      %same = arith.cmpi eq, %di, %dj : i64
      attn.yield %same : i1
    }
  return %o : tensor<2x2x190x128xf32>
}

// Prefix-LM: the first 48 tokens attend bidirectionally, the rest causally.
// CHECK-LABEL: attn-run: @prefix_lm
// CHECK: CHECK PASSED
func.func @prefix_lm(%q: tensor<1x2x160x64xf32>, %k: tensor<1x2x160x64xf32>, %v: tensor<1x2x160x64xf32>) -> tensor<1x2x160x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x160x64xf32>, tensor<1x2x160x64xf32>, tensor<1x2x160x64xf32>) -> tensor<1x2x160x64xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %prefix = arith.constant 48 : index
      %causal = arith.cmpi sle, %j, %i : index
      %inPrefix = arith.cmpi slt, %j, %prefix : index
      %ok = arith.ori %causal, %inPrefix : i1
      attn.yield %ok : i1
    }
  return %o : tensor<1x2x160x64xf32>
}

// Sliding window (64 back) with 4 attention sinks (StreamingLLM).
// CHECK-LABEL: attn-run: @window_with_sinks
// CHECK: CHECK PASSED
func.func @window_with_sinks(%q: tensor<1x2x300x64xf32>, %k: tensor<1x2x300x64xf32>, %v: tensor<1x2x300x64xf32>) -> tensor<1x2x300x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32>) -> tensor<1x2x300x64xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %window = arith.constant 64 : index
      %sinks = arith.constant 4 : index
      %back = arith.subi %i, %j : index
      %near = arith.cmpi sle, %back, %window : index
      %sink = arith.cmpi slt, %j, %sinks : index
      %ok = arith.ori %near, %sink : i1
      attn.yield %ok : i1
    }
  return %o : tensor<1x2x300x64xf32>
}

// ALiBi written as a score_mod over a captured slope table (one-sided
// distance under the causal kind; the CPU pipeline raises it to the alibi
// operand, the reference pipeline inlines it).
// CHECK-LABEL: attn-run: @alibi_region
// CHECK: CHECK PASSED
func.func @alibi_region(%q: tensor<1x4x130x64xf32>, %k: tensor<1x4x130x64xf32>, %v: tensor<1x4x130x64xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x130x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x4x130x64xf32>, tensor<1x4x130x64xf32>, tensor<1x4x130x64xf32>) -> tensor<1x4x130x64xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %slope = tensor.extract %slopes[%h] : tensor<4xf32>
      %d = arith.subi %i, %j : index
      %d64 = arith.index_cast %d : index to i64
      %df = arith.sitofp %d64 : i64 to f32
      %pen = arith.mulf %slope, %df : f32
      %r = arith.subf %s, %pen : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x4x130x64xf32>
}

// Two-sided ALiBi with |kv_idx - q_idx| (math.absi on i64), no mask.
// CHECK-LABEL: attn-run: @alibi_region_abs
// CHECK: CHECK PASSED
func.func @alibi_region_abs(%q: tensor<1x4x150x64xf32>, %k: tensor<1x4x150x64xf32>, %v: tensor<1x4x150x64xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x150x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x150x64xf32>, tensor<1x4x150x64xf32>, tensor<1x4x150x64xf32>) -> tensor<1x4x150x64xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %slope = tensor.extract %slopes[%h] : tensor<4xf32>
      %d = arith.subi %j, %i : index
      %d64 = arith.index_cast %d : index to i64
      %a64 = math.absi %d64 : i64
      %af = arith.sitofp %a64 : i64 to f32
      %pen = arith.mulf %slope, %af : f32
      %r = arith.subf %s, %pen : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x4x150x64xf32>
}

// math.absi on index in both regions (every lowering inlines it as
// max(v, 0 - v): MLIR 22 lowers math.absi neither on index nor on the 2-d
// vectors the tiled path made of this score_mod, 161 keys, E = 24, Ev = 8),
// and a score_mod with math.fma, which the oracle evaluates in double.
// CHECK-LABEL: attn-run: @absi_index_regions
// CHECK: CHECK PASSED
func.func @absi_index_regions(%q: tensor<1x2x70x24xf32>, %k: tensor<1x2x161x24xf32>, %v: tensor<1x2x161x8xf32>, %slopes: tensor<2xf32>) -> tensor<1x2x70x8xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x70x24xf32>, tensor<1x2x161x24xf32>, tensor<1x2x161x8xf32>) -> tensor<1x2x70x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %slope = tensor.extract %slopes[%h] : tensor<2xf32>
      %d = arith.subi %j, %i : index
      %a = math.absi %d : index
      %a64 = arith.index_cast %a : index to i64
      %af = arith.sitofp %a64 : i64 to f32
      %m = arith.negf %slope : f32
      %r = math.fma %m, %af, %s : f32
      attn.yield %r : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %d = arith.subi %j, %i : index
      %a = math.absi %d : index
      %c50 = arith.constant 50 : index
      %near = arith.cmpi sle, %a, %c50 : index
      attn.yield %near : i1
    }
  return %o : tensor<1x2x70x8xf32>
}

// A clipped relative-position bias (rel_clip 16) written as a score_mod over
// a captured H x 33 table; the CPU pipeline raises it to the rel_bias
// operand, the reference pipeline inlines it. Causal-local with a window
// wider than the clip, so clipped and unclipped distances both occur.
// CHECK-LABEL: attn-run: @rel_bias_region
// CHECK: CHECK PASSED
func.func @rel_bias_region(%q: tensor<1x4x190x128xf32>, %k: tensor<1x4x190x128xf32>, %v: tensor<1x4x190x128xf32>, %table: tensor<4x33xf32>) -> tensor<1x4x190x128xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal_local>, window_left = 70 : i64}
      : (tensor<1x4x190x128xf32>, tensor<1x4x190x128xf32>, tensor<1x4x190x128xf32>) -> tensor<1x4x190x128xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %r = arith.constant 16 : index
      %nr = arith.constant -16 : index
      %d = arith.subi %j, %i : index
      %lo = arith.minsi %d, %r : index
      %c = arith.maxsi %lo, %nr : index
      %at = arith.addi %c, %r : index
      %t = tensor.extract %table[%h, %at] : tensor<4x33xf32>
      %y = arith.addf %s, %t : f32
      attn.yield %y : f32
    }
  return %o : tensor<1x4x190x128xf32>
}

// T5's log-bucketed relative position bias: a captured bucket table maps the
// distance i - j (offset by Lk - 1) to a bucket, a captured H x 32 table the
// bucket to a bias per head (what T5 computes with logarithms, tabulated
// once, so that the kernel reads two tables and no f32 logarithm decides a
// bucket boundary).
// CHECK-LABEL: attn-run: @t5_buckets
// CHECK: CHECK PASSED
func.func @t5_buckets(%q: tensor<1x2x260x64xf32>, %k: tensor<1x2x260x64xf32>, %v: tensor<1x2x260x64xf32>, %buckets: tensor<519xi32>, %table: tensor<2x32xf32>) -> tensor<1x2x260x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x260x64xf32>, tensor<1x2x260x64xf32>, tensor<1x2x260x64xf32>) -> tensor<1x2x260x64xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %offset = arith.constant 259 : index
      %d = arith.subi %i, %j : index
      %at = arith.addi %d, %offset : index
      %bucket = tensor.extract %buckets[%at] : tensor<519xi32>
      %bi = arith.index_cast %bucket : i32 to index
      %bias = tensor.extract %table[%h, %bi] : tensor<2x32xf32>
      %r = arith.addf %s, %bias : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x2x260x64xf32>
}

// Regions with the built-in mask kinds, padding and a dilated window.
// CHECK-LABEL: attn-run: @dilated_padding_softcap
// CHECK: CHECK PASSED
func.func @dilated_padding_softcap(%q: tensor<2x2x150x64xf32>, %k: tensor<2x2x150x64xf32>, %v: tensor<2x2x150x64xf32>, %len: tensor<2xi32>) -> tensor<2x2x150x64xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<dilated>, window_left = 50 : i64, window_right = 20 : i64, dilation = 2 : i64}
      : (tensor<2x2x150x64xf32>, tensor<2x2x150x64xf32>, tensor<2x2x150x64xf32>, tensor<2xi32>) -> tensor<2x2x150x64xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %cap = arith.constant 1.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
  return %o : tensor<2x2x150x64xf32>
}

// attn.mha forwards both regions to its attn.sdpa.
// CHECK-LABEL: attn-run: @mha_regions
// CHECK: CHECK PASSED
func.func @mha_regions(%x: tensor<2x120x64xf32>, %w: tensor<192x64xf32>, %b: tensor<192xf32>, %wo: tensor<64x64xf32>, %bo: tensor<64xf32>, %doc: tensor<2x120xi32>) -> tensor<2x120x64xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo) {num_heads = 4 : i64, mask = #attn.mask<causal>}
      : (tensor<2x120x64xf32>, tensor<2x120x64xf32>, tensor<2x120x64xf32>, tensor<192x64xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x120x64xf32>
    score_mod {
    ^bb0(%s: f32, %bb: index, %h: index, %i: index, %j: index):
      %cap = arith.constant 1.0 : f32
      %t = math.tanh %s : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    } mask_mod {
    ^bb0(%bb: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %doc[%bb, %i] : tensor<2x120xi32>
      %dj = tensor.extract %doc[%bb, %j] : tensor<2x120xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    }
  return %y : tensor<2x120x64xf32>
}

// bf16 operands: the region computes on the f32 score.
// CHECK-LABEL: attn-run: @bf16_softcap
// CHECK: CHECK PASSED
func.func @bf16_softcap(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %cap = arith.constant 1.5 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x2x128x64xbf16>
}
