// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=4 block-k=4" --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=2 block-k=8" --mlir-print-local-scope | FileCheck %s --check-prefix=BLOCKS
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=4 block-k=4 graph-edge-density=0" --mlir-print-local-scope | FileCheck %s --check-prefix=TILES

// Causal + padding, Lq = Lk = 10 with 4 x 4 tiles: Q, K, V padded to 12 rows;
// a parallel loop over (b, h, query tile); the key-tile loop ends at the
// causal diagonal and at ceil(kv_len / 4); full tiles run mask-free scores,
// boundary tiles (diagonal, padded keys, past kv_len) the element mask.
// K is transposed once per call, tile-major (B x H x key tile x E x block-k).

// CHECK-LABEL: func @causal_padding
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<1xi32>
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C10:.+]] = arith.constant 10 : index
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.510069728 : f32
// CHECK: %[[QP:.+]] = tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 2, 0]
// CHECK: %[[KP:.+]] = tensor.pad
// CHECK: %[[VP:.+]] = tensor.pad
// CHECK: %[[KTILES:.+]] = tensor.expand_shape %[[KP]] {{\[}}[0], [1], [2, 3], [4]] output_shape [1, 2, 3, 4, 8]
// CHECK: %[[KTP:.+]] = linalg.transpose ins(%[[KTILES]] : tensor<1x2x3x4x8xf32>) outs(%{{.+}} : tensor<1x2x3x8x4xf32>) permutation = [0, 1, 2, 4, 3]
// CHECK: %[[RES:.+]]:2 = scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (1, 2, 3) shared_outs(%[[O:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}}) -> (tensor<1x2x12x8xf32>, tensor<1x2x12xf32>)
// CHECK:   %[[Q0:.+]] = arith.muli %[[QT]], %[[C4]]
// CHECK:   %[[QSLICE:.+]] = tensor.extract_slice %[[QP]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<1x2x12x8xf32> to tensor<4x8xf32>
// The scale multiplies the query tile once (not every score tile), with
// log2(e) in it (scores nothing modifies: the softmax takes 2^x):
// 8^-1/2 log2(e).
// CHECK:   %[[QTILE:.+]] = linalg.generic {{.*}} ins(%[[QSLICE]] : tensor<4x8xf32>)
// CHECK:     arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK:   %[[LAST:.+]] = arith.addi %[[Q0]], %c3
// CHECK:   %[[DIAG:.+]] = arith.floordivsi %[[LAST]], %[[C4]]
// CHECK:   %[[DIAG1:.+]] = arith.addi %[[DIAG]], %c1
// CHECK:   %[[END0:.+]] = arith.minsi %[[DIAG1]], %c3
// CHECK:   %[[N:.+]] = tensor.extract %[[LEN]][%[[B]]]
// CHECK:   %[[NI:.+]] = arith.index_cast %[[N]]
// CHECK:   %[[NT:.+]] = arith.ceildivsi %[[NI]], %[[C4]]
// CHECK:   %[[END:.+]] = arith.minsi %[[END0]], %[[NT]]
// CHECK:   %[[STATE:.+]]:3 = scf.for %[[KT:.+]] = %c0 to %[[END]] step %c1 iter_args(%[[M:.+]] = %{{.+}}, %[[S:.+]] = %{{.+}}, %[[ACC:.+]] = %{{.+}}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>)
// CHECK:     %[[K0:.+]] = arith.muli %[[KT]], %[[C4]]
// CHECK:     %[[KTILE:.+]] = tensor.extract_slice %[[KTP]][%[[B]], %[[H]], %[[KT]], 0, 0] [1, 1, 1, 8, 4] [1, 1, 1, 1, 1] : tensor<1x2x3x8x4xf32> to tensor<8x4xf32>
// CHECK:     %[[VTILE:.+]] = tensor.extract_slice %[[VP]][%[[B]], %[[H]], %[[K0]], 0] [1, 1, 4, 8]
// CHECK-NOT: linalg.transpose
// CHECK:     %[[QK:.+]] = linalg.generic {{.*}} ins(%[[QTILE]], %[[KTILE]] : tensor<4x8xf32>, tensor<8x4xf32>) outs(%{{.+}} : tensor<4x4xf32>)
// Full tiles use Q K^T as it is (the scale is in the query tile, there is
// no modification and no mask); boundary tiles mask it.
// CHECK:     %[[SC:.+]] = scf.if %{{.+}} -> (tensor<4x4xf32>) {
// CHECK-NEXT:   scf.yield %[[QK]]
// CHECK:     } else {
// CHECK:       linalg.generic {{.*}} ins(%[[QK]] :
// CHECK:         arith.cmpi slt, %{{.+}}, %[[C10]]
// CHECK:         arith.select %{{.+}}, %{{.+}}, %[[NEGINF]]
// CHECK:     }
// Online softmax: row max, rescale factor and the row's exp offset (m', or 0
// while m' is -inf: one select per row), probabilities (no per-score guard),
// sum and accumulator updated in place of the loop-carried state.
// CHECK:     %[[NEW:.+]]:3 = linalg.generic {{.*}} ins(%{{.+}} : tensor<4xf32>) outs(%[[M]], %{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT:   math.exp
// CHECK-COUNT-5: math.fma
// CHECK:       arith.cmpf oeq
// CHECK:       arith.select
// 2^(S - offset) for S - offset <= 0 (exact subtraction, whatever the
// scores' magnitude; no multiply by log2(e)): n rounded by adding 1.5 *
// 2^23 + 127, a degree-5 polynomial in g, 0 below 2^-126 (and at -inf), no
// range clamps.
// CHECK:     %[[P:.+]] = linalg.generic {{.*}} ins(%[[SC]], %[[NEW]]#2 :
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    %[[T:.+]] = arith.subf
// CHECK-NEXT:    %[[SH:.+]] = arith.addf %[[T]], %[[MAGIC:.+]] : f32
// CHECK-NEXT:    %[[N:.+]] = arith.subf %[[SH]], %[[MAGIC]] : f32
// CHECK-NEXT:    %[[G:.+]] = arith.subf %[[T]], %[[N]] : f32
// CHECK-COUNT-5: math.fma {{.*}}, %[[G]], {{.*}} : f32
// CHECK-NEXT:    %[[BITS:.+]] = arith.bitcast %[[SH]] : f32 to i32
// CHECK-NEXT:    arith.shli %[[BITS]], %{{.+}} : i32
// CHECK-NEXT:    arith.bitcast
// CHECK-NEXT:    %[[E:.+]] = arith.mulf
// CHECK-NEXT:    %[[TINY:.+]] = arith.cmpf olt, %[[T]], %{{.+}} : f32
// CHECK-NEXT:    %[[R:.+]] = arith.select %[[TINY]], %{{.+}}, %[[E]] : f32
// CHECK-NEXT:    linalg.yield %[[R]]
// CHECK:     linalg.generic {{.*}} ins(%[[NEW]]#1 : tensor<4xf32>) outs(%[[S]] : tensor<4xf32>)
// CHECK:     linalg.generic {{.*}} ins(%[[P]] :
// CHECK:     linalg.generic {{.*}} ins(%[[NEW]]#1 : tensor<4xf32>) outs(%[[ACC]] : tensor<4x8xf32>)
// CHECK:     linalg.generic {{.*}} ins(%[[P]], %[[VTILE]] : tensor<4x4xf32>, tensor<4x8xf32>)
// CHECK:     scf.yield %[[NEW]]#0
// acc / l as acc times 1 / l, one division per row:
// CHECK:   %[[INV:.+]] = linalg.generic {{.*}} ins(%[[STATE]]#1 : tensor<4xf32>)
// CHECK:     arith.divf %cst{{.*}}, %{{.+}} : f32
// CHECK:   %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[STATE]]#2, %[[STATE]]#1, %[[INV]] :
// CHECK-NOT: arith.divf
// CHECK:     arith.mulf
// CHECK-NOT: arith.divf
// CHECK:     arith.select
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[OUT]] into %[[O]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, 4, 8]
// CHECK: %[[SLICED:.+]] = tensor.extract_slice %[[RES]]#0[0, 0, 0, 0] [1, 2, 10, 8]
// CHECK: return %[[SLICED]]

// BLOCKS-LABEL: func @causal_padding
// BLOCKS: tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 6, 0]
// BLOCKS: scf.forall ({{.*}}) in (1, 2, 5)
// BLOCKS: tensor.extract_slice {{.*}} [1, 1, 2, 8] [1, 1, 1, 1] : tensor<1x2x10x8xf32> to tensor<2x8xf32>
// BLOCKS: tensor.extract_slice {{.*}} [1, 1, 8, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<8x8xf32>
func.func @causal_padding(%q: tensor<1x2x10x8xf32>, %k: tensor<1x2x10x8xf32>, %v: tensor<1x2x10x8xf32>, %len: tensor<1xi32>) -> tensor<1x2x10x8xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<causal>}
      : (tensor<1x2x10x8xf32>, tensor<1x2x10x8xf32>, tensor<1x2x10x8xf32>, tensor<1xi32>) -> tensor<1x2x10x8xf32>
  return %o : tensor<1x2x10x8xf32>
}

// -----

// Dense with dividing lengths: no padding, all key tiles, no mask at all;
// GQA reads key/value head h / 2; lse is a second shared output.

// CHECK-LABEL: func @dense_gqa_lse
// CHECK-DAG: %[[LN2:.+]] = arith.constant 0.693147182 : f32
// CHECK-NOT: tensor.pad
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (1, 4, 2)
// CHECK:   %[[KH:.+]] = arith.divui %[[H]], %c2
// CHECK:   scf.for %{{.+}} = %c0 to %c2 step %c1
// CHECK:     tensor.extract_slice %{{.+}}[%[[B]], %[[KH]], %{{.+}}, 0, 0] [1, 1, 1, 8, 4]
// CHECK:     tensor.extract_slice %{{.+}}[%[[B]], %[[KH]], %{{.+}}, 0] [1, 1, 4, 8]
// CHECK-NOT: scf.if
// CHECK-NOT: arith.select %{{.+}}, %{{.+}}, %cst
// lse = m ln(2) + log(l): m is in the scores' log2(e) units.
// CHECK:   %[[MLN2:.+]] = arith.mulf %{{.+}}, %[[LN2]] : f32
// CHECK:   %[[LOG:.+]] = math.log
// CHECK:   arith.addf %[[MLN2]], %[[LOG]]
// CHECK:   tensor.parallel_insert_slice
// CHECK:   tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[B]], %[[H]], %{{.+}}] [1, 1, 4]
// CHECK-NOT: tensor.extract_slice
// CHECK: return
func.func @dense_gqa_lse(%q: tensor<1x4x8x8xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8xf32>)
  return %o, %l : tensor<1x4x8x8xf32>, tensor<1x4x8xf32>
}

// -----

// Local window (2, 1): the key-tile loop starts at floor((q0 - 2) / 4) and
// ends after the tile of q0 + 3 + 1.

// CHECK-LABEL: func @local
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %[[QT:.+]]) in (1, 1, 4)
// CHECK:   %[[Q0:.+]] = arith.muli %[[QT]], %c4
// CHECK-DAG: %[[LAST:.+]] = arith.addi %[[Q0]], %c3
// CHECK-DAG: %[[LO:.+]] = arith.subi %[[Q0]], %c2
// CHECK-DAG: %[[HI:.+]] = arith.addi %[[LAST]], %c1
// CHECK:   %[[LOT:.+]] = arith.floordivsi %[[LO]], %c4
// CHECK:   %[[BEGIN:.+]] = arith.maxsi %[[LOT]], %c0
// CHECK:   %[[HIT:.+]] = arith.floordivsi %[[HI]], %c4
// CHECK:   %[[HIT1:.+]] = arith.addi %[[HIT]], %c1
// CHECK:   %[[END:.+]] = arith.minsi %[[HIT1]], %c4
// CHECK:   scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %c1
// CHECK:     scf.if
func.func @local(%q: tensor<1x1x16x4xf32>, %k: tensor<1x1x16x4xf32>, %v: tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 2 : i64, window_right = 1 : i64}
      : (tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
  return %o : tensor<1x1x16x4xf32>
}

// -----

// Dilated window (2, 1) every 2nd key: the key-tile range is the window's
// (as for local), but no tile is ever full, so there is no full/partial
// branch: every visited tile applies the element mask, whose stride test
// is (ia - j) rem 2 == 0.

// CHECK-LABEL: func @dilated
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %[[QT:.+]]) in (1, 1, 4)
// CHECK:   %[[Q0:.+]] = arith.muli %[[QT]], %c4
// CHECK-DAG: %[[LO:.+]] = arith.subi %[[Q0]], %c2
// CHECK:   %[[LOT:.+]] = arith.floordivsi %[[LO]], %c4
// CHECK:   %[[BEGIN:.+]] = arith.maxsi %[[LOT]], %c0
// CHECK:   %[[END:.+]] = arith.minsi %{{.+}}, %c4
// CHECK:   scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %c1
// CHECK-NOT: scf.if
// CHECK:     linalg.generic
// CHECK:       %[[R:.+]] = arith.remsi %{{.+}}, %c2 : index
// CHECK:       arith.cmpi eq, %[[R]], %c0 : index
// CHECK:       arith.select
// CHECK-NOT: scf.if
// CHECK: return
func.func @dilated(%q: tensor<1x1x16x4xf32>, %k: tensor<1x1x16x4xf32>, %v: tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<dilated>, window_left = 2 : i64, window_right = 1 : i64, dilation = 2 : i64}
      : (tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
  return %o : tensor<1x1x16x4xf32>
}

// -----

// A mask_mod region reading a document id per token: per-tile min / max
// tables of the ids (one pair per tile size: bq = bk here) are built once per call;
// each key tile is classified by interval analysis of the region: skipped
// when the id ranges of its rows and keys are disjoint, mask-free when both
// are one and the same id, element-masked otherwise. The region is inlined
// into the masked score generic with q_idx / kv_idx clamped into the
// sequence (padded rows and keys read the captured tensor in bounds).

// CHECK-LABEL: func @mask_mod
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<4x4xi32>)
// CHECK:   arith.minsi %{{.+}}, %{{.+}} : i32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<4x4xi32>)
// CHECK:   arith.maxsi %{{.+}}, %{{.+}} : i32
// CHECK: scf.forall
// CHECK:   scf.for
// CHECK:     %[[QLO:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<4xi32>
// CHECK:     %[[KLO:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<4xi32>
// CHECK:     %[[DISJ:.+]] = arith.ori %{{.+}}, %{{.+}} : i1
// CHECK:     scf.if %[[DISJ]]
// CHECK-NEXT:  scf.yield %{{.+}}, %{{.+}}, %{{.+}} :
// CHECK:     } else {
// CHECK:       %[[FULL:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK:       scf.if %[[FULL]]
// CHECK:       } else {
// CHECK:         linalg.generic
// CHECK:           %[[I:.+]] = arith.minsi %{{.+}}, %c15 : index
// CHECK:           %[[J:.+]] = arith.minsi %{{.+}}, %c15 : index
// CHECK:           %[[DI:.+]] = tensor.extract %{{.+}}[%[[I]]] : tensor<16xi32>
// CHECK:           %[[DJ:.+]] = tensor.extract %{{.+}}[%[[J]]] : tensor<16xi32>
// CHECK:           %[[SAME:.+]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK:           arith.andi %{{.+}}, %[[SAME]] : i1
// CHECK:           arith.select
func.func @mask_mod(%q: tensor<1x1x16x4xf32>, %doc: tensor<16xi32>) -> tensor<1x1x16x4xf32> {
  %o = attn.sdpa %q, %q, %q {mask = #attn.mask<causal>}
      : (tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %doc[%i] : tensor<16xi32>
      %dj = tensor.extract %doc[%j] : tensor<16xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    }
  return %o : tensor<1x1x16x4xf32>
}

// -----

// Causal written as a region: classified at compile time from the indices
// alone (no table): a key tile above the diagonal (k0 > q0 + 3) is skipped,
// one wholly below (k0 + 3 <= q0) runs the mask-free scores; the region's
// causal test is the interval comparison of [k0, k0 + 3] with [q0, q0 + 3].

// CHECK-LABEL: func @causal_region
// CHECK-NOT: tensor<4xi32>
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %[[QT:.+]]) in (1, 1, 4)
// CHECK:   %[[Q0:.+]] = arith.muli %[[QT]], %c4
// CHECK:   scf.for %[[KT:.+]] = %c0 to %c4 step %c1
// CHECK:     %[[K0:.+]] = arith.muli %[[KT]], %c4
// CHECK-DAG: %[[QHI:.+]] = arith.minsi %{{.+}}, %c15 : index
// CHECK-DAG: %[[KHI:.+]] = arith.minsi %{{.+}}, %c15 : index
// CHECK-DAG: %[[ISFULL:.+]] = arith.cmpi sle, %[[KHI]], %[[Q0]] : index
// CHECK-DAG: %[[ISEMPTY:.+]] = arith.cmpi sgt, %[[K0]], %[[QHI]] : index
// CHECK:     scf.if %[[ISEMPTY]]
// CHECK:     } else {
// CHECK:       scf.if %[[ISFULL]]
// CHECK-NEXT:    scf.yield %{{.+}} : tensor<4x4xf32>
func.func @causal_region(%q: tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32> {
  %o = attn.sdpa %q, %q, %q
      : (tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi sle, %j, %i : index
      attn.yield %c : i1
    }
  return %o : tensor<1x1x16x4xf32>
}

// -----

// A symmetric window as a region, |kv_idx - q_idx| <= 2 with math.absi: the
// distance's interval over a tile, [k0 - q0 - 3, k0 + 3 - q0], has the
// absolute value [max(lo, -hi, 0), max(-lo, hi)], so key tiles more than
// two keys from every row are skipped; the region is inlined with |d| as
// max(d, 0 - d).

// CHECK-LABEL: func @abs_window_region
// CHECK:   %[[Q0:.+]] = arith.muli %{{.+}}, %c4
// CHECK:   scf.for %[[KT:.+]] = %c0 to %c4 step %c1
// CHECK:     %[[K0:.+]] = arith.muli %[[KT]], %c4
// CHECK:     %[[LO:.+]] = arith.subi %[[K0]], %{{.+}} : index
// CHECK:     %[[HI:.+]] = arith.subi %{{.+}}, %[[Q0]] : index
// CHECK:     %[[NLO:.+]] = arith.subi %c0, %[[LO]] : index
// CHECK:     %[[NHI:.+]] = arith.subi %c0, %[[HI]] : index
// CHECK:     %[[M:.+]] = arith.maxsi %[[LO]], %[[NHI]] : index
// CHECK:     %[[ALO:.+]] = arith.maxsi %[[M]], %c0 : index
// CHECK:     %[[AHI:.+]] = arith.maxsi %[[NLO]], %[[HI]] : index
// CHECK-DAG: %[[ISFULL:.+]] = arith.cmpi sle, %[[AHI]], %c2 : index
// CHECK-DAG: %[[ISEMPTY:.+]] = arith.cmpi sgt, %[[ALO]], %c2 : index
// CHECK:     scf.if %[[ISEMPTY]]
// CHECK:     } else {
// CHECK:       scf.if %[[ISFULL]]
// CHECK:       linalg.generic
// CHECK-NOT:     math.absi
// CHECK:         arith.maxsi
// CHECK:         arith.cmpi sle, %{{.+}}, %c2 : index
func.func @abs_window_region(%q: tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32> {
  %o = attn.sdpa %q, %q, %q
      : (tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %d = arith.subi %j, %i : index
      %a = math.absi %d : index
      %c2 = arith.constant 2 : index
      %near = arith.cmpi sle, %a, %c2 : index
      attn.yield %near : i1
    }
  return %o : tensor<1x1x16x4xf32>
}

// -----

// A mask_mod reading a tensor it builds itself from its indices: the tile
// analysis leaves it unknown (it never reads a region value from outside
// the region); the op tiles, verifies, and every tile applies the region.

// CHECK-LABEL: func @region_tensor
// CHECK: scf.for
// CHECK: tensor.from_elements
// CHECK: return
func.func @region_tensor(%q: tensor<1x2x16x4xf32>) -> tensor<1x2x16x4xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x16x4xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %t = tensor.from_elements %i, %j : tensor<2xindex>
      %x = tensor.extract %t[%h] : tensor<2xindex>
      %ok = arith.cmpi sle, %j, %x : index
      attn.yield %ok : i1
    }
  return %o : tensor<1x2x16x4xf32>
}

// -----

// Graph, denser than graph-edge-density (20 of 64 pairs): a 2 x 2 block mask
// is built from the CSR (row / 4, col / 4) once per call; key tiles without edges are skipped; visited tiles are always
// element-masked. Masks are i8 (i1 memory is bit-packed in vector loads).

// CHECK-LABEL: func @graph
// CHECK: %[[DENSE:.+]] = scf.for {{.*}} -> (tensor<8x8xi8>)
// CHECK: %[[BM:.+]] = scf.for {{.*}} -> (tensor<2x2xi8>)
// CHECK:   arith.divui %{{.+}}, %c4
// CHECK:   scf.for
// CHECK:     arith.divui %{{.+}}, %c4
// CHECK:     tensor.insert
// CHECK: scf.forall
// CHECK:   scf.for %[[KT:.+]] = %c0 to %c2
// CHECK:     %[[VISIT:.+]] = tensor.extract %[[BM]][%{{.+}}, %[[KT]]]
// CHECK:     %[[NZ:.+]] = arith.cmpi ne, %[[VISIT]], %c0_i8
// CHECK:     scf.if %[[NZ]]
// CHECK:       tensor.extract %[[DENSE]]
// CHECK:       arith.select
// CHECK:     } else {
// CHECK-NEXT:  scf.yield %{{.+}}, %{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>
func.func @graph(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>, %rp: tensor<9xi32>, %ci: tensor<20xi32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<9xi32>, tensor<20xi32>) -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}

// -----

// Graph, sparse (6 of 64 pairs <= graph-edge-density): the edge-list
// lowering. The CSR is compacted once per call, in place, by a parallel loop
// over row chunks (each with its own last-row-per-key array: first
// occurrence of each in-range key per row, and a count per row); then per
// (batch, head, query row) a loop over
// 16-entry blocks: one vector load of the keys, masked past the row's end,
// gathered key rows, dot products reduced by a butterfly of shuffles, one
// online-softmax step in registers. No tiles, no Lq x Lk tensor. With
// graph-edge-density=0 the same op takes block-mask tiles.

// CHECK-LABEL: func @graph_sparse
// CHECK-NOT: tensor<8x8xi8>
// CHECK: %[[CSR:.+]]:2 = scf.forall (%{{.+}}) in (8) shared_outs(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<6xi32>, tensor<8xindex>)
// CHECK:   %[[LAST:.+]] = linalg.fill ins(%c-1_i32 : i32) outs(%{{.+}} : tensor<8xi32>)
// CHECK:   %[[ROWS:.+]]:3 = scf.for %{{.+}} iter_args(%{{.+}} = %[[LAST]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<8xi32>, tensor<?xi32>, tensor<?xindex>)
// CHECK:     scf.for
// CHECK:       arith.cmpi ne
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[ROWS]]#1
// CHECK:     tensor.parallel_insert_slice %[[ROWS]]#2
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (1, 2, 8) shared_outs(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
// CHECK:   %[[Q:.+]] = vector.transfer_read %{{.+}}[%[[B]], %[[H]], %[[I]], %c0]{{.*}} : tensor<1x2x8x16xf32>, vector<16xf32>
// CHECK:   tensor.extract %[[CSR]]#1[%[[I]]]
// CHECK:   scf.for {{.*}} -> (f32, f32, vector<4xf32>)
// CHECK:     %[[KEYS:.+]] = vector.transfer_read %[[CSR]]#0[%{{.+}}], %{{.+}} : tensor<6xi32>, vector<16xi32>
// CHECK:     %[[LIVE:.+]] = vector.create_mask %{{.+}} : vector<16xi1>
// CHECK:     arith.select %[[LIVE]], %[[KEYS]]
// CHECK:     vector.transfer_read %{{.+}} : tensor<1x1x8x16xf32>, vector<16xf32>
// CHECK:     vector.shuffle
// CHECK:     vector.reduction <maxnumf>
// CHECK:     math.exp {{.*}} : vector<16xf32>
// CHECK:     math.fma {{.*}} : vector<4xf32>
// CHECK:   math.log
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[B]], %[[H]], %[[I]], 0] [1, 1, 1, 4]
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[B]], %[[H]], %[[I]]] [1, 1, 1]

// TILES-LABEL: func @graph_sparse
// TILES: tensor<8x8xi8>
// TILES: scf.forall ({{.*}}) in (1, 2, 2)
func.func @graph_sparse(%q: tensor<1x2x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x4xf32>, %rp: tensor<9xi32>, %ci: tensor<6xi32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) {
  %o, %l = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x2x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x4xf32>, tensor<9xi32>, tensor<6xi32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %o, %l : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
}

// -----

// Shaw relative keys: one block-q x (2R+1) contraction per query tile, gathered
// in the score generic; no Lq x Lk tensor.

// CHECK-LABEL: func @shaw
// CHECK: scf.forall
// CHECK:   %[[QA:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<4x3xf32>)
// CHECK:   scf.for
// CHECK:     tensor.extract %[[QA]]
// CHECK-NOT: tensor<1x1x8x8xf32>
func.func @shaw(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>, %rk: tensor<3x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %k, %v rel_key(%rk) {rel_clip = 1 : i64}
      : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<3x4xf32>) -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}

// -----

// bf16 operands: extended to f32 once, tiled attention (scores, online
// softmax, accumulators) in f32, the output rounded back to bf16.

// CHECK-LABEL: func @bf16
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: scf.forall
// CHECK:   scf.for {{.*}} -> (tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>)
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: return {{.*}} : tensor<1x1x8x4xbf16>
func.func @bf16(%q: tensor<1x1x8x4xbf16>, %k: tensor<1x1x8x4xbf16>, %v: tensor<1x1x8x4xbf16>) -> tensor<1x1x8x4xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x1x8x4xbf16>, tensor<1x1x8x4xbf16>, tensor<1x1x8x4xbf16>) -> tensor<1x1x8x4xbf16>
  return %o : tensor<1x1x8x4xbf16>
}

// -----

// Scores a bias modifies stay in the logits' units: Q's scale is the op's
// (4^-1/2), and the exp multiplies by log2(e) itself. So does a scale that
// log2(e) would take past f32's range.

// CHECK-LABEL: func @bias_natural_base
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK: scf.forall
// CHECK:   linalg.generic
// CHECK:     arith.mulf %{{.+}}, %[[HALF]] : f32
// CHECK:   scf.for
// CHECK:     math.exp
// CHECK:     linalg.generic
// CHECK:       %[[X:.+]] = arith.subf
// CHECK-NEXT:  arith.mulf %[[X]], %[[LOG2E]] : f32
func.func @bias_natural_base(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>, %bias: tensor<1x1x8x8xf32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %k, %v bias(%bias)
      : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}

// CHECK-LABEL: func @largest_scale
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 3.000000e+38 : f32
// CHECK-DAG: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK: scf.forall
// CHECK:   linalg.generic
// CHECK:     arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK:   scf.for
// CHECK:     math.exp
// CHECK:     linalg.generic
// CHECK:       %[[X:.+]] = arith.subf
// CHECK-NEXT:  arith.mulf %[[X]], %[[LOG2E]] : f32
func.func @largest_scale(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 3.0e38 : f64}
      : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}
