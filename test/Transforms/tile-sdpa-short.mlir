// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile --canonicalize --cse --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" --attn-tile --canonicalize --cse --mlir-print-local-scope | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="short-sequences=false" | FileCheck %s --check-prefix=TILES
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=8 block-k=8" | FileCheck %s --check-prefix=TILES

// attn-tile's register-row lowering of short key sequences (a ViT head: 17
// keys of 16 dims). AVX-512 (16 lanes, 32 registers): per (batch, head),
// rows 0-15 as one block with a row in each lane: Q^T of the block
// transposed in registers into a scratch tile, each key's scores a vector
// over the rows from one register tile (all 17 keys: a loop over the head
// dims, Q^T's row times each key's element broadcast), max over the keys
// elementwise (no reduction; x > y ? x : y, one vmaxps), exp in registers, P
// into a scratch tile, O^T = P V from one register tile of the 16 value
// dims (a loop over the keys), transposed back into rows by four stages of
// 16 shuffles. Row 16 on its own: K^T transposed in registers from a 16 x
// 16 block into a scratch tile, the row's scores as one 16-lane vector (a
// loop over the head dims, two per iteration: even and odd ones in two
// chains of FMAs) and the 17th key's score as a dot product of the query
// row with that key's row (one product, one vector sum), max and sum as
// vector reductions, P into a scratch tile, P V as a loop over the keys in
// pairs (the 17th after it), P's elements broadcast times V rows.
// CHECK-LABEL: func @vit_head
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x17x16xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x17x16xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x17x16xf32>
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]]) in (2, 4) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<2x4x17x16xf32>)
// CHECK: %[[QB:.+]] = vector.transfer_read %[[Q]][%[[B]], %[[H]], %c0, %c0], %{{.+}} {in_bounds = [true, true]} : tensor<2x4x17x16xf32>, vector<16x16xf32>
// CHECK: vector.transpose %[[QB]], [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK-NOT: linalg.
// CHECK: vector.transfer_write %{{.+}}, %{{.+}}[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf32>, tensor<16x16xf32>
// CHECK: scf.for %[[D:.+]] = %c0 to %c16 step %c1 iter_args({{.*}}) -> (vector<16xf32>, {{.*}}) {
// CHECK: vector.transfer_read %{{.+}}[%[[D]], %c0], %{{.+}} {in_bounds = [true]} : tensor<16x16xf32>, vector<16xf32>
// CHECK: tensor.extract %[[K]][%[[B]], %[[H]], %c0, %[[D]]]
// CHECK-COUNT-17: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-16: arith.cmpf ogt, %[[X:.+]], %[[Y:.+]] : vector<16xf32>
// CHECK-NEXT: arith.select %{{.+}}, %[[X]], %[[Y]] : vector<16xi1>, vector<16xf32>
// CHECK-NOT: vector.reduction
// CHECK-NOT: math.exp
// CHECK: vector.transfer_write %{{.+}}, %{{.+}}[%c0, %c0] {in_bounds = [true, true]} : vector<17x16xf32>, tensor<17x16xf32>
// CHECK: scf.for %[[J:.+]] = %c0 to %c17 step %c1 iter_args({{.*}}) -> (vector<16xf32>, {{.*}}) {
// CHECK: vector.transfer_read %{{.+}}[%[[J]], %c0], %{{.+}} {in_bounds = [true]} : tensor<17x16xf32>, vector<16xf32>
// CHECK: tensor.extract %[[V]][%[[B]], %[[H]], %[[J]], %c0]
// CHECK-COUNT-16: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-64: vector.shuffle {{.*}} : vector<16xf32>, vector<16xf32>
// CHECK: vector.transfer_write %{{.+}}, %{{.+}}[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf32>, tensor<17x16xf32>
// CHECK: %[[KB:.+]] = vector.transfer_read %[[K]][%[[B]], %[[H]], %c0, %c0], %{{.+}} {in_bounds = [true, true]} : tensor<2x4x17x16xf32>, vector<16x16xf32>
// CHECK: vector.transpose %[[KB]], [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK: vector.transfer_write %{{.+}}, %{{.+}}[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf32>, tensor<16x16xf32>
// CHECK: %[[KR:.+]] = vector.transfer_read %[[K]][%[[B]], %[[H]], %c16, %c0], %{{.+}} {in_bounds = [true]} : tensor<2x4x17x16xf32>, vector<16xf32>
// CHECK-NOT: vector<1x16xf32>
// CHECK: %[[SD:.+]]:2 = scf.for %[[D2:.+]] = %c0 to %c16 step %c2 iter_args(
// CHECK: vector.transfer_read %{{.+}}[%[[D2]], %c0], %{{.+}} {in_bounds = [true]} : tensor<16x16xf32>, vector<16xf32>
// CHECK: tensor.extract %[[Q]][%[[B]], %[[H]], %c16, %[[D2]]]
// CHECK-COUNT-2: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK: arith.addf %[[SD]]#0, %[[SD]]#1 : vector<16xf32>
// CHECK-NOT: vector.fma {{.*}} : vector<1xf32>
// CHECK: %[[QR:.+]] = vector.transfer_read %[[Q]]{{.*}} {in_bounds = [true]} : tensor<2x4x17x16xf32>, vector<16xf32>
// CHECK: %[[PROD:.+]] = arith.mulf %[[QR]], %[[KR]] : vector<16xf32>
// CHECK: vector.reduction <add>, %[[PROD]] : vector<16xf32> into f32
// CHECK: vector.reduction <maxnumf>, %{{.+}} : vector<16xf32> into f32
// CHECK: arith.maxnumf
// CHECK-NOT: math.exp
// CHECK: vector.reduction <add>, %{{.+}} : vector<16xf32> into f32
// CHECK: vector.transfer_write %{{.+}}, %{{.+}}[%c0, %c16] {in_bounds = [true]} : vector<1xf32>, tensor<1x17xf32>
// CHECK: %[[PV:.+]]:2 = scf.for %[[J2:.+]] = %c0 to %c16 step %c2 iter_args(
// CHECK: vector.transfer_read %[[V]][%[[B]], %[[H]], %[[J2]], %c0]
// CHECK: tensor.extract %{{.+}}[%c0, %[[J2]]] : tensor<1x17xf32>
// CHECK-COUNT-2: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK: vector.transfer_read %[[V]][%[[B]], %[[H]], %c16, %c0]
// CHECK: %[[LAST:.+]] = vector.fma %{{.+}}, %{{.+}}, %[[PV]]#0 : vector<16xf32>
// CHECK: arith.addf %[[LAST]], %[[PV]]#1 : vector<16xf32>
// CHECK: vector.transfer_write %{{.+}}, %{{.+}}[%c16, %c0] {in_bounds = [true]} : vector<16xf32>, tensor<17x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][%[[B]], %[[H]], 0, 0] [1, 1, 17, 16] [1, 1, 1, 1] : tensor<17x16xf32> into tensor<2x4x17x16xf32>

// AVX2 (8 lanes, 16 registers): rows 0-15 as two blocks of 8 rows in
// lanes (a loop; Q^T from 8 x 8 blocks; register tiles of at most 12
// accumulators: Q K^T as tiles of 9 and 8 keys, P V as one tile per 8-dim
// chunk of the output, each chunk back into rows by three stages of 8
// shuffles), row 16 on its own with K^T from 8 x 8 blocks and the 17th
// key's dot product.
// AVX2-LABEL: func @vit_head
// AVX2: scf.for %{{.+}} = %c0 to %c16 step %c8 iter_args
// AVX2: vector.transpose %{{.+}}, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
// AVX2: scf.for %{{.+}} = %c0 to %c16 step %c1 iter_args
// AVX2-COUNT-9: vector.fma {{.*}} : vector<8xf32>
// AVX2-NOT: vector.fma
// AVX2: scf.yield
// AVX2: scf.for %{{.+}} = %c0 to %c16 step %c1 iter_args
// AVX2-COUNT-8: vector.fma {{.*}} : vector<8xf32>
// AVX2-NOT: vector.fma
// AVX2: scf.yield
// AVX2: scf.for %{{.+}} = %c0 to %c17 step %c1 iter_args
// AVX2-COUNT-8: vector.fma {{.*}} : vector<8xf32>
// AVX2-NOT: vector.fma
// AVX2: scf.yield
// AVX2-COUNT-24: vector.shuffle {{.*}} : vector<8xf32>, vector<8xf32>
// AVX2: vector.transfer_write %{{.+}}, %{{.+}}[%{{.+}}, %c0] {in_bounds = [true, true]} : vector<8x8xf32>, tensor<17x16xf32>
// AVX2: scf.for %{{.+}} = %c0 to %c17 step %c1 iter_args
// AVX2-COUNT-8: vector.fma {{.*}} : vector<8xf32>
// AVX2-NOT: vector.fma
// AVX2: scf.yield
// AVX2-COUNT-24: vector.shuffle {{.*}} : vector<8xf32>, vector<8xf32>
// AVX2: vector.transfer_write %{{.+}}, %{{.+}}[%{{.+}}, %c8] {in_bounds = [true, true]} : vector<8x8xf32>, tensor<17x16xf32>
// AVX2-NOT: vector.shuffle
// AVX2: scf.yield
// AVX2-COUNT-4: vector.transpose %{{.+}}, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
// AVX2: vector.transfer_write %{{.+}}, %{{.+}}[%c0, %c8] {in_bounds = [true, true]} : vector<16x8xf32>, tensor<16x16xf32>
// AVX2: scf.for %[[AD:.+]] = %c0 to %c16 step %c2 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2: vector.transfer_read %{{.+}}[%[[AD]], %c0], %{{.+}} {in_bounds = [true]} : tensor<16x16xf32>, vector<8xf32>
// AVX2: vector.transfer_read %{{.+}}[%[[AD]], %c8], %{{.+}} {in_bounds = [true]} : tensor<16x16xf32>, vector<8xf32>
// AVX2-NOT: vector.fma {{.*}} : vector<1xf32>
// AVX2: vector.reduction <add>, %{{.+}} : vector<16xf32> into f32
// AVX2: vector.transfer_write %{{.+}}, %{{.+}}[%c0, %c16] {in_bounds = [true]} : vector<1xf32>, tensor<1x17xf32>
// AVX2: scf.for %[[AJ:.+]] = %c0 to %c16 step %c2 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2: tensor.extract %{{.+}}[%c0, %[[AJ]]] : tensor<1x17xf32>

// Without the lowering, or with block sizes given: the tiled path.
// TILES-LABEL: func @vit_head
// TILES: linalg.transpose
// TILES: scf.forall
// TILES: scf.for
// TILES: linalg.generic
func.func @vit_head(%q: tensor<2x4x17x16xf32>, %k: tensor<2x4x17x16xf32>, %v: tensor<2x4x17x16xf32>) -> tensor<2x4x17x16xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x17x16xf32>, tensor<2x4x17x16xf32>, tensor<2x4x17x16xf32>) -> tensor<2x4x17x16xf32>
  return %o : tensor<2x4x17x16xf32>
}

// -----

// Causal with lse (Lq = 13 > Lk = 10: the first 3 rows see no key): key
// lanes compared with the row's position (j <= ia as ia >= j, i32 lanes),
// the 10 keys in one 16-lane vector whose lanes 10..15 are masked, lse =
// m + log l written per row. (The unit batch dim folds away.)
// CHECK-LABEL: func @causal_lse
// CHECK: scf.forall (%{{.+}}) in (2) shared_outs(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<1x2x13x8xf32>, tensor<1x2x13xf32>)
// 13 rows (fewer than the lanes): rows four at a time, then the 13th.
// CHECK: scf.for %{{.+}} = %c0 to %c12 step %c4
// CHECK: arith.cmpi sge, %{{.+}}, %{{.+}} : vector<16xi32>
// CHECK: math.log
// CHECK: tensor.insert
// TILES-LABEL: func @causal_lse
// TILES: scf.for
func.func @causal_lse(%q: tensor<1x2x13x8xf32>, %k: tensor<1x2x10x8xf32>, %v: tensor<1x2x10x8xf32>) -> (tensor<1x2x13x8xf32>, tensor<1x2x13xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x13x8xf32>, tensor<1x2x10x8xf32>, tensor<1x2x10x8xf32>) -> (tensor<1x2x13x8xf32>, tensor<1x2x13xf32>)
  return %o, %l : tensor<1x2x13x8xf32>, tensor<1x2x13xf32>
}

// -----

// A sliding window with padding: per row, the window's first and last key
// (ia - 2, ia + 3, clamped into [-1, Lk] and cast to i32) and the batch's
// kv_length, read once per (batch, head), compared with the key lanes.
// CHECK-LABEL: func @window_padding
// CHECK: scf.forall (%[[B:.+]], %{{.+}}) in (2, 2)
// CHECK: %[[LEN:.+]] = tensor.extract %{{.+}}[%[[B]]] : tensor<2xi32>
// CHECK: scf.for
// CHECK: arith.cmpi sle, %{{.+}}, %{{.+}} : vector<16xi32>
// CHECK: arith.cmpi sge, %{{.+}}, %{{.+}} : vector<16xi32>
// CHECK: arith.cmpi sgt, %{{.+}}, %{{.+}} : vector<16xi32>
func.func @window_padding(%q: tensor<2x2x13x16xf32>, %k: tensor<2x2x13x16xf32>, %v: tensor<2x2x13x16xf32>, %len: tensor<2xi32>) -> tensor<2x2x13x16xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<local>, window_left = 2 : i64, window_right = 3 : i64} : (tensor<2x2x13x16xf32>, tensor<2x2x13x16xf32>, tensor<2x2x13x16xf32>, tensor<2xi32>) -> tensor<2x2x13x16xf32>
  return %o : tensor<2x2x13x16xf32>
}

// -----

// What the register rows do not take: 65 keys (five AVX-512 vectors), a
// dilated window (not an interval of keys), an additive bias, a head dim
// over 128: tiles.
// CHECK-LABEL: func @too_many_keys
// CHECK: linalg.transpose
// CHECK: linalg.generic
func.func @too_many_keys(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x65x16xf32>, %v: tensor<1x1x65x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x8x16xf32>, tensor<1x1x65x16xf32>, tensor<1x1x65x16xf32>) -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// CHECK-LABEL: func @dilated_window
// CHECK: linalg.transpose
// CHECK: linalg.generic
func.func @dilated_window(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<dilated>, window_left = 4 : i64, window_right = 4 : i64, dilation = 2 : i64} : (tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// CHECK-LABEL: func @with_bias
// CHECK: linalg.transpose
// CHECK: linalg.generic
func.func @with_bias(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %bias: tensor<1x1x8x8xf32>) -> tensor<1x1x8x16xf32> {
  %o = attn.sdpa %q, %k, %v bias(%bias) : (tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// CHECK-LABEL: func @head_dim_256
// CHECK: linalg.transpose
// CHECK: linalg.generic
func.func @head_dim_256(%q: tensor<1x1x8x256xf32>, %k: tensor<1x1x8x256xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x8x256xf32>, tensor<1x1x8x256xf32>, tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}
