// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s

// attn.sdpa, causal, GQA (H = 4, Hkv = 2), with lse: Q is viewed as
// B x Hkv x G x Lq x E, scores are masked with -inf by `j <= i`, and the
// softmax guards fully masked rows.

// CHECK-LABEL: func @causal_gqa
// CHECK-SAME: (%[[Q:.+]]: tensor<1x4x8x16xf32>, %[[K:.+]]: tensor<1x2x8x16xf32>, %[[V:.+]]: tensor<1x2x8x16xf32>)
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Q5:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 16]
// CHECK: %[[QK:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q5]], %[[K]] :
// CHECK: %[[S:.+]] = linalg.generic {{.*}} ins(%[[QK]] :
// CHECK:   %[[I:.+]] = linalg.index 3
// CHECK:   %[[J:.+]] = linalg.index 4
// CHECK:   %[[SC:.+]] = arith.mulf %{{.+}}, %[[SCALE]]
// CHECK:   %[[OK:.+]] = arith.cmpi sle, %[[J]], %[[I]]
// CHECK:   arith.select %[[OK]], %[[SC]], %[[NEGINF]]
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} ins(%[[S]] :
// CHECK:   arith.maximumf
// CHECK: %[[EXP:.+]] = linalg.generic {{.*}} ins(%[[S]], %[[MAX]] :
// CHECK:   %[[E:.+]] = math.exp
// CHECK:   %[[ROWMASKED:.+]] = arith.cmpf oeq, %{{.+}}, %[[NEGINF]]
// CHECK:   arith.select %[[ROWMASKED]], %[[ZERO]], %[[E]]
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[EXP]] :
// CHECK: %[[P:.+]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] :
// CHECK:   arith.divf
// CHECK: %[[LSE:.+]] = linalg.generic {{.*}} ins(%[[MAX]], %[[SUM]] :
// CHECK:   math.log
// CHECK: %[[O5:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, {{.*}}]{{.*}} ins(%[[P]], %[[V]] :
// CHECK: %[[O:.+]] = tensor.collapse_shape %[[O5]] {{\[}}[0], [1, 2], [3], [4]]
// CHECK: %[[L:.+]] = tensor.collapse_shape %[[LSE]] {{\[}}[0], [1, 2], [3]]
// CHECK: return %[[O]], %[[L]]
// CHECK-NOT: attn.
func.func @causal_gqa(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
  return %o, %l : tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
}

// -----

// Local window with Lq != Lk: the query's position is i + (Lk - Lq) = i + 4;
// padding compares j with kv_lengths[b].

// CHECK-LABEL: func @local_padding
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<2xi32>
// CHECK-DAG: %[[OFF:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK:   %[[B:.+]] = linalg.index 0
// CHECK:   %[[I:.+]] = linalg.index 3
// CHECK:   %[[J:.+]] = linalg.index 4
// CHECK:   %[[IA:.+]] = arith.addi %[[I]], %[[OFF]]
// CHECK:   %[[LO:.+]] = arith.subi %[[IA]], %[[ONE]]
// CHECK:   arith.cmpi sge, %[[J]], %[[LO]]
// CHECK:   %[[HI:.+]] = arith.addi %[[IA]], %[[ONE]]
// CHECK:   arith.cmpi sle, %[[J]], %[[HI]]
// CHECK:   arith.andi
// CHECK:   %[[N:.+]] = tensor.extract %[[LEN]][%[[B]]]
// CHECK:   %[[NI:.+]] = arith.index_cast %[[N]] : i32 to index
// CHECK:   arith.cmpi slt, %[[J]], %[[NI]]
// CHECK:   arith.andi
func.func @local_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x8xf32>, %len: tensor<2xi32>) -> tensor<2x2x4x8xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<local>, window_left = 1 : i64, window_right = 1 : i64}
      : (tensor<2x2x4x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2xi32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// Graph mask: the CSR is densified by a loop nest into an Lq x Lk i1 tensor
// that the score generic reads at (i, j); out-of-range columns are skipped.

// CHECK-LABEL: func @graph
// CHECK-SAME: %[[RP:[a-z0-9]+]]: tensor<9xi32>, %[[CI:[a-z0-9]+]]: tensor<20xi32>
// CHECK: %[[INIT:.+]] = linalg.fill ins(%false : i1) outs(%{{.+}} : tensor<8x8xi1>)
// CHECK: %[[DENSE:.+]] = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[INIT]])
// CHECK:   tensor.extract %[[RP]][%[[I]]]
// CHECK:   scf.for %[[E:.+]] = {{.*}} iter_args(%[[B:.+]] = %[[A]])
// CHECK:     tensor.extract %[[CI]][%[[E]]]
// CHECK:     arith.cmpi sge
// CHECK:     arith.cmpi slt
// CHECK:     tensor.insert
// CHECK: linalg.generic {indexing_maps = [{{.+}}, affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>, {{.+}}]{{.*}} ins(%{{.+}}, %[[DENSE]] : tensor<1x1x1x8x8xf32>, tensor<8x8xi1>)
// CHECK:   ^bb0(%{{.+}}: f32, %[[ALLOWED:.+]]: i1, %{{.+}}: f32):
// CHECK:   arith.select %[[ALLOWED]]
func.func @graph(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>, %rp: tensor<9xi32>, %ci: tensor<20xi32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<9xi32>, tensor<20xi32>) -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}

// -----

// Score modifications: the Shaw term is a contraction of Q with the table,
// gathered at clip(j - i) + R; the relative bias and ALiBi slope are gathered
// per head h = kh * G + g; a head-broadcast bias is read with a 0 index.

// CHECK-LABEL: func @score_mods
// CHECK-SAME: %[[BIAS:[a-z0-9]+]]: tensor<1x1x6x6xf32>, %[[RB:[a-z0-9]+]]: tensor<4x5xf32>, %[[RK:[a-z0-9]+]]: tensor<5x4xf32>, %[[AL:[a-z0-9]+]]: tensor<4xf32>
// CHECK: %[[QA:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[RK]] : tensor<1x2x2x6x4xf32>, tensor<5x4xf32>)
// CHECK: %[[BIAS5:.+]] = tensor.expand_shape %[[BIAS]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 1, 1, 6, 6]
// CHECK: linalg.generic {indexing_maps = [{{.+}}, affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, 0, d3, d4)>, {{.+}}]{{.*}} ins(%{{.+}}, %[[BIAS5]] :
// CHECK:   %[[R:.+]] = arith.addi %{{.+}}, %c2
// CHECK:   tensor.extract %[[QA]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[R]]]
// CHECK:   %[[R2:.+]] = arith.addi %{{.+}}, %c2
// CHECK:   tensor.extract %[[RB]][%{{.+}}, %[[R2]]]
// CHECK:   tensor.extract %[[AL]][%{{.+}}]
// CHECK:   arith.sitofp
// CHECK:   arith.subf
func.func @score_mods(%q: tensor<1x4x6x4xf32>, %k: tensor<1x2x6x4xf32>, %v: tensor<1x2x6x4xf32>, %bias: tensor<1x1x6x6xf32>, %rb: tensor<4x5xf32>, %rk: tensor<5x4xf32>, %al: tensor<4xf32>) -> tensor<1x4x6x4xf32> {
  %o = attn.sdpa %q, %k, %v bias(%bias) rel_bias(%rb) rel_key(%rk) alibi(%al) {rel_clip = 2 : i64}
      : (tensor<1x4x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x1x6x6xf32>, tensor<4x5xf32>, tensor<5x4xf32>, tensor<4xf32>) -> tensor<1x4x6x4xf32>
  return %o : tensor<1x4x6x4xf32>
}

// -----

// attn.gat: projection (the weight transposed once), both attention logits, dense edge counts with self
// loops replaced by one, LeakyReLU scores, count-weighted softmax, aggregation.

// CHECK-LABEL: func @gat
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<6x3xf32>, %[[W:[a-z0-9]+]]: tensor<8x3xf32>
// CHECK-DAG: %[[SLOPE:.+]] = arith.constant 2.000000e-01 : f32
// CHECK: %[[WT:.+]] = linalg.generic {{.*}} ins(%[[W]] : tensor<8x3xf32>) outs(%{{.+}} : tensor<3x8xf32>)
// CHECK: %[[Z:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[WT]] :
// CHECK: %[[Z3:.+]] = tensor.expand_shape %[[Z]] {{\[}}[0], [1, 2]] output_shape [6, 2, 4]
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     arith.cmpi ne
// CHECK:     arith.addf
// CHECK:     tensor.insert
// CHECK: %[[CNT:.+]] = linalg.generic
// CHECK:   arith.cmpi eq
// CHECK: %[[SCORES:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<2x6x6xf32>)
// CHECK:   arith.cmpf ogt
// CHECK:   arith.mulf %{{.+}}, %[[SLOPE]]
// CHECK: linalg.generic {{.*}} ins(%[[SCORES]], %{{.+}}, %[[CNT]] :
// CHECK:   math.exp
// CHECK:   arith.mulf
// CHECK: %[[OUT:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[Z3]] : tensor<2x6x6xf32>, tensor<6x2x4xf32>)
// CHECK: %[[CAT:.+]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2]]
// CHECK: return %[[CAT]]
func.func @gat(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<10xi32>) -> tensor<6x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<10xi32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

// attn.gat with mean over heads and bias, without self loops.

// CHECK-LABEL: func @gat_mean
// CHECK-NOT: arith.cmpi ne
// CHECK: %[[INV:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<2xf32>)
// CHECK:   linalg.yield %cst
// CHECK: %[[MEAN:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[INV]] : tensor<6x2x4xf32>, tensor<2xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[MEAN]], %{{.+}} : tensor<6x4xf32>, tensor<4xf32>)
// CHECK:   arith.addf
func.func @gat_mean(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<10xi32>, %b: tensor<4xf32>) -> tensor<6x4xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b) {combine = #attn.heads<mean>, add_self_loops = false}
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<10xi32>, tensor<4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

// attn.mha is decomposed and its attn.sdpa lowered in the same pass.

// CHECK-LABEL: func @mha
// CHECK-NOT: attn.
// CHECK: return
func.func @mha(%x: tensor<1x4x8xf32>, %w: tensor<24x8xf32>, %wo: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w) out_proj(%wo) {num_heads = 2 : i64, mask = #attn.mask<causal>}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<24x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// f16 operands: the reference lowering computes in f32 too (extend, lower,
// round the results back).

// CHECK-LABEL: func @f16
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: math.exp {{.*}} : f32
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: return {{.*}} : tensor<1x2x8x4xf16>
func.func @f16(%q: tensor<1x2x8x4xf16>, %k: tensor<1x2x8x4xf16>, %v: tensor<1x2x8x4xf16>) -> tensor<1x2x8x4xf16> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>) -> tensor<1x2x8x4xf16>
  return %o : tensor<1x2x8x4xf16>
}

// -----

// A score_mod region is inlined into the score generic after the scale,
// with the score and the (clamped) indices as its arguments.
// CHECK-LABEL: func @score_mod
// CHECK: linalg.generic
// CHECK:   %[[S:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK:   %[[T:.+]] = math.tanh %[[S]] : f32
// CHECK:   linalg.yield %[[T]] : f32
func.func @score_mod(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %t = math.tanh %s : f32
      attn.yield %t : f32
    }
  return %o : tensor<1x1x4x8xf32>
}

// -----

// math.absi in a region is inlined as max(v, 0 - v) (MLIR 22 lowers
// math.absi neither on index nor on the multi-dimensional vectors the tiled
// path makes of a region).
// CHECK-LABEL: func @absi_in_region
// CHECK: linalg.generic
// CHECK:   %[[D:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK:   %[[N:.+]] = arith.subi %c0{{.*}}, %[[D]] : index
// CHECK:   %[[A:.+]] = arith.maxsi %[[D]], %[[N]] : index
// CHECK:   arith.index_cast %[[A]] : index to i64
// CHECK-NOT: math.absi
func.func @absi_in_region(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %d = arith.subi %j, %i : index
      %a = math.absi %d : index
      %a64 = arith.index_cast %a : index to i64
      %f = arith.sitofp %a64 : i64 to f32
      %r = arith.subf %s, %f : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x1x4x8xf32>
}

// -----

// A region's read of a captured tensor at an index taken from data
// (`tbl[ids[j]]`) is clamped into the tensor, so that a bad value reads the
// nearest element instead of outside the buffer; a constant index inside the
// tensor stays as it is.
// CHECK-LABEL: func @gather_index_clamped
// CHECK: linalg.generic
// CHECK:   %[[ID:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<4xi64>
// CHECK:   %[[X:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:   %[[HI:.+]] = arith.minsi %[[X]], %{{.+}} : index
// CHECK:   %[[LO:.+]] = arith.maxsi %[[HI]], %{{.+}} : index
// CHECK:   tensor.extract %{{.+}}[%[[LO]]] : tensor<6xf32>
// CHECK-NOT: arith.maxsi
// CHECK:   tensor.extract %{{.+}}[%c2{{.*}}] : tensor<6xf32>
func.func @gather_index_clamped(%q: tensor<1x1x4x8xf32>, %ids: tensor<4xi64>, %tbl: tensor<6xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %id = tensor.extract %ids[%j] : tensor<4xi64>
      %x = arith.index_cast %id : i64 to index
      %t = tensor.extract %tbl[%x] : tensor<6xf32>
      %c2 = arith.constant 2 : index
      %u = tensor.extract %tbl[%c2] : tensor<6xf32>
      %r = arith.addf %s, %t : f32
      %r2 = arith.addf %r, %u : f32
      attn.yield %r2 : f32
    }
  return %o : tensor<1x1x4x8xf32>
}

// -----

// The reference lowering's dense scores have no edge order: a gat that
// returns per-edge coefficients goes through the unfused lowering.
// CHECK-LABEL: func @gat_returns_alpha
// CHECK-NOT: attn.gat
// CHECK: %[[S:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<8x1xf32>)
// CHECK: %[[ALPHA:.+]] = linalg.generic {{.*}} ins(%[[S]] : tensor<8x1xf32>) outs(%{{.+}} : tensor<8x1xf32>)
// CHECK: return %{{.+}}, %[[ALPHA]] : tensor<4x2xf32>, tensor<8x1xf32>
func.func @gat_returns_alpha(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>, %as: tensor<1x2xf32>, %ad: tensor<1x2xf32>, %rp: tensor<5xi64>, %ci: tensor<4xi64>) -> (tensor<4x2xf32>, tensor<8x1xf32>) {
  %y, %alpha = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<5xi64>, tensor<4xi64>) -> (tensor<4x2xf32>, tensor<8x1xf32>)
  return %y, %alpha : tensor<4x2xf32>, tensor<8x1xf32>
}

// -----

// attn.gatv2 through the unfused lowering here too.
// CHECK-LABEL: func @gatv2
// CHECK-NOT: attn.gatv2
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
func.func @gatv2(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>, %att: tensor<1x2xf32>, %rp: tensor<5xi64>, %ci: tensor<4xi64>) -> tensor<4x2xf32> {
  %y = attn.gatv2 %x, %w, %w, %att graph(%rp, %ci)
      : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x2xf32>, tensor<5xi64>, tensor<4xi64>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
