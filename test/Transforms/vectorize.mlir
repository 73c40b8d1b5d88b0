// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-vectorize="parallel-chunks=1 register-rows=8 register-cols=32" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-vectorize="parallel-chunks=1" | FileCheck %s --check-prefix=WIDE
// RUN: not attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-vectorize="register-rows=1000" 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: attn-vectorize: register-rows must be in [0, 32] (0: from the target), got 1000
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-vectorize="register-rows=4 register-cols=16 vector-width=16 parallel-chunks=1" | FileCheck %s --check-prefix=SMALL
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-vectorize | FileCheck %s --check-prefix=SPLIT
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" --attn-vectorize="parallel-chunks=1" | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --split-input-file --attn-set-target="triple=aarch64-unknown-linux-gnu cpu=neoverse-n1" --attn-vectorize="parallel-chunks=1" | FileCheck %s --check-prefix=NEON
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=sapphirerapids" --attn-vectorize="parallel-chunks=1" | FileCheck %s --check-prefix=AMX

// The register tiles come from the function's target (attn-set-target):
// AVX-512 (x86-64-v4: 16 lanes, 32 registers) 6 x 64 where the columns are
// a multiple of 64 (WIDE), else 8 x 32; AVX2 (x86-64-v3: 8 lanes, 16
// registers) 6 x 16, NEON 8 x 8. 6 does not divide 64 and 4-row tiles would
// leave AVX2 8 accumulators (no latency slack): the 64 rows split into 60
// rows of 6 x 16 tiles and 4 rows of 4 x 16, inserted back in turn; on
// AVX-512 into 60 rows of 6 x 64 and 4 rows of 4 x 64. The CHECK lines
// (fusion into the tiles, below) name AVX-512's 8 x 32 tile explicitly.
// WIDE-LABEL: func @contraction
// WIDE: %[[BULK:.+]] = scf.for %{{.+}} = %c0 to %c60 step %c6
// WIDE:   vector.contract {{.*}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
// WIDE: %[[FIRST:.+]] = tensor.insert_slice %[[BULK]] into %{{.+}}[0, 0] [60, 64] [1, 1]
// WIDE: %[[TAIL:.+]] = scf.for
// WIDE:   vector.contract {{.*}} : vector<4x1xf32>, vector<1x64xf32> into vector<4x64xf32>
// WIDE: tensor.insert_slice %[[TAIL]] into %[[FIRST]][60, 0] [4, 64] [1, 1]
// WIDE-LABEL: func @contraction48
// WIDE: scf.for %{{.+}} = %c0 to %c48 step %c6
// WIDE:   vector.contract {{.*}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
// AVX2-LABEL: func @contraction
// AVX2: %[[BULK:.+]] = scf.for %{{.+}} = %c0 to %c60 step %c6
// AVX2:   vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX2: %[[FIRST:.+]] = tensor.insert_slice %[[BULK]] into %{{.+}}[0, 0] [60, 64] [1, 1]
// AVX2: %[[REST:.+]] = tensor.extract_slice %[[FIRST]][60, 0] [4, 64] [1, 1]
// AVX2: %[[TAIL:.+]] = scf.for {{.*}} iter_args(%{{.+}} = %[[REST]])
// AVX2:   vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// AVX2: tensor.insert_slice %[[TAIL]] into %[[FIRST]][60, 0] [4, 64] [1, 1]
// AVX2-LABEL: func @contraction48
// AVX2: vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// NEON-LABEL: func @contraction
// NEON: vector.contract {{.*}} : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>

// By default an op of at least 2^18 iterations outside parallel loops is
// first split along its first loop into 8 static pieces of an scf.forall (the
// threads' share), each then register-tiled.
// SPLIT-LABEL: func @contraction
// SPLIT: scf.forall (%[[R:.+]]) = (0) to (64) step (8) shared_outs
// SPLIT:   tensor.extract_slice %{{.+}}[%[[R]], 0] [8, 64] [1, 1] : tensor<64x64xf32> to tensor<8x64xf32>
// SPLIT:   scf.for %{{.+}} = %c0 to %c64 step %c32
// SPLIT:     vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// SPLIT:   tensor.parallel_insert_slice

// A Q K^T-shaped contraction: rows step 8, columns step 32, the reduction
// step 1, one vector.contract of outer-product shape per step.

// CHECK-LABEL: func @contraction
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c8
// CHECK:   scf.for %{{.+}} = %c0 to %c64 step %c32
// CHECK:     scf.for %{{.+}} = %c0 to %c64 step %c1
// CHECK:       vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT: linalg.generic

// SMALL-LABEL: func @contraction
// SMALL: step %c4
// SMALL: step %c16
// SMALL: vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
func.func @contraction(%q: tensor<64x64xf32>, %kt: tensor<64x64xf32>, %init: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, e)>, affine_map<(i, j, e) -> (e, j)>, affine_map<(i, j, e) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %kt : tensor<64x64xf32>, tensor<64x64xf32>) outs(%init : tensor<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// CHECK-LABEL: func @contraction48
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
func.func @contraction48(%q: tensor<48x64xf32>, %kt: tensor<64x64xf32>, %init: tensor<48x64xf32>) -> tensor<48x64xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, e)>, affine_map<(i, j, e) -> (e, j)>, affine_map<(i, j, e) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %kt : tensor<48x64xf32>, tensor<64x64xf32>) outs(%init : tensor<48x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<48x64xf32>
  return %0 : tensor<48x64xf32>
}

// 32 columns (no multiple of 64), 8 or 9 rows (no divisor within one row
// of 6, fewer than 24), and f16 factors (extended in the body) keep AVX-512's
// 8 x 32 tile; 9 rows split 8 + 1 and both parts tile 8 x 32's way (the
// lone row is no 1 x 64).
// WIDE-LABEL: func @narrow_cases
// WIDE: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// WIDE: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// WIDE: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// WIDE: vector.contract {{.*}} : vector<1x1xf32>, vector<1x32xf32> into vector<1x32xf32>
// WIDE: vector.contract {{.*}} : vector<8x1xf16>, vector<1x32xf16> into vector<8x32xf32>
// WIDE-NOT: vector<{{[0-9]+}}x64xf32>
// WIDE: return
func.func @narrow_cases(%x: tensor<64x64xf32>, %w32: tensor<64x32xf32>, %y: tensor<8x64xf32>, %z: tensor<9x64xf32>, %w: tensor<64x64xf32>, %xh: tensor<64x64xf16>, %wh: tensor<64x64xf16>) -> (tensor<64x32xf32>, tensor<8x64xf32>, tensor<9x64xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, e)>, affine_map<(i, j, e) -> (e, j)>, affine_map<(i, j, e) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w32 : tensor<64x64xf32>, tensor<64x32xf32>) outs(%i0 : tensor<64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<8x64xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, e)>, affine_map<(i, j, e) -> (e, j)>, affine_map<(i, j, e) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%i1 : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<9x64xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<9x64xf32>) -> tensor<9x64xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, e)>, affine_map<(i, j, e) -> (e, j)>, affine_map<(i, j, e) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%z, %w : tensor<9x64xf32>, tensor<64x64xf32>) outs(%i2 : tensor<9x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<9x64xf32>
  %e3 = tensor.empty() : tensor<64x64xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, e)>, affine_map<(i, j, e) -> (e, j)>, affine_map<(i, j, e) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xh, %wh : tensor<64x64xf16>, tensor<64x64xf16>) outs(%i3 : tensor<64x64xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %af = arith.extf %a : f16 to f32
    %bf = arith.extf %b : f16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %0, %1, %2, %3 : tensor<64x32xf32>, tensor<8x64xf32>, tensor<9x64xf32>, tensor<64x64xf32>
}

// -----

// Elementwise ops go one row at a time with the last dim in one vector; a row
// reduction reduces a whole row vector; sizes that do not divide use the
// largest divisor (48 -> 48, 40 -> 40 with width 64).

// CHECK-LABEL: func @softmax_pieces
// CHECK: scf.for %{{.+}} = %c0 to %c40 step %c1
// CHECK:   math.exp %{{.+}} : vector<1x48xf32>
// CHECK: scf.for %{{.+}} = %c0 to %c40 step %c1
// CHECK:   vector.multi_reduction <maximumf>, %{{.+}}, %{{.+}} [1] : vector<1x48xf32> to vector<1xf32>

// SMALL-LABEL: func @softmax_pieces
// SMALL: scf.for %{{.+}} = %c0 to %c48 step %c16
// SMALL:   math.exp %{{.+}} : vector<1x16xf32>
func.func @softmax_pieces(%s: tensor<40x48xf32>, %max: tensor<40xf32>) -> (tensor<40x48xf32>, tensor<40xf32>) {
  %e = tensor.empty() : tensor<40x48xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<40x48xf32>) outs(%e : tensor<40x48xf32>) {
  ^bb0(%a: f32, %b: f32):
    %x = math.exp %a : f32
    linalg.yield %x : f32
  } -> tensor<40x48xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<40x48xf32>) outs(%max : tensor<40xf32>) {
  ^bb0(%a: f32, %b: f32):
    %x = arith.maximumf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<40xf32>
  return %p, %m : tensor<40x48xf32>, tensor<40xf32>
}

// -----

// A plain row reduction (one combiner, the online softmax's row max) whose
// rows and columns are whole vectors of lanes takes a vector's worth of rows
// at a time: 16 on AVX-512, 8 on AVX2, 4 on NEON (attn-lower-vectors gives
// their results as one vector). A reduction with more in its body (exp and
// sum) stays one row at a time.

// CHECK-LABEL: func @row_reduction_blocks
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c16
// CHECK:   vector.multi_reduction <maxnumf>, %{{.+}}, %{{.+}} [1] : vector<16x64xf32> to vector<16xf32>
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c1
// CHECK:   vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1] : vector<1x64xf32> to vector<1xf32>

// AVX2-LABEL: func @row_reduction_blocks
// AVX2: scf.for %{{.+}} = %c0 to %c64 step %c8
// AVX2:   vector.multi_reduction <maxnumf>, %{{.+}}, %{{.+}} [1] : vector<8x64xf32> to vector<8xf32>

// NEON-LABEL: func @row_reduction_blocks
// NEON: scf.for %{{.+}} = %c0 to %c64 step %c4
// NEON:   vector.multi_reduction <maxnumf>, %{{.+}}, %{{.+}} [1] : vector<4x64xf32> to vector<4xf32>
func.func @row_reduction_blocks(%s: tensor<64x64xf32>, %init: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<64x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %x = arith.maxnumf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<64xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<64x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    %x = arith.addf %e, %b : f32
    linalg.yield %x : f32
  } -> tensor<64xf32>
  return %m, %l : tensor<64xf32>, tensor<64xf32>
}

// -----

// A transpose of the two innermost dims goes in blocks of lanes x lanes, 16 x
// 16 on AVX-512, 8 x 8 on AVX2 (the read is permuted; attn-lower-vectors
// lowers the block with in-register shuffles).

// AVX2-LABEL: func @transpose_blocks
// AVX2: vector.transpose %{{.+}}, [0, 2, 1] : vector<1x8x8xf32> to vector<1x8x8xf32>
// CHECK-LABEL: func @transpose_blocks
// CHECK: scf.for %{{.+}} = %c0 to %c2 step %c1
// CHECK:   scf.for %{{.+}} = %c0 to %c32 step %c16
// CHECK:     scf.for %{{.+}} = %c0 to %c64 step %c16
// CHECK:       %[[IN:.+]] = vector.transfer_read {{.*}} : tensor<1x16x16xf32>, vector<1x16x16xf32>
// CHECK:       vector.transpose %[[IN]], [0, 2, 1] : vector<1x16x16xf32> to vector<1x16x16xf32>
// CHECK:       vector.transfer_write
func.func @transpose_blocks(%k: tensor<2x64x32xf32>) -> tensor<2x32x64xf32> {
  %e = tensor.empty() : tensor<2x32x64xf32>
  %t = linalg.transpose ins(%k : tensor<2x64x32xf32>) outs(%e : tensor<2x32x64xf32>) permutation = [0, 2, 1]
  return %t : tensor<2x32x64xf32>
}

// -----

// The bf16 K^T of the dot products (keys x E/2 pairs into E/2 x keys, each
// pair whole) goes in blocks of lanes x lanes pairs, like a 32-bit
// transpose (attn-lower-vectors: PairTransposeAsI32), not pair by pair.
// CHECK-LABEL: func @pair_transpose_blocks
// CHECK: scf.for %{{.+}} = %c0 to %c32 step %c16
// CHECK:   scf.for %{{.+}} = %c0 to %c64 step %c16
// CHECK:     %[[IN:.+]] = vector.transfer_read {{.*}} : tensor<1x16x16x2xbf16>, vector<1x16x16x2xbf16>
// CHECK:     vector.transpose %[[IN]], [0, 2, 1, 3] : vector<1x16x16x2xbf16> to vector<1x16x16x2xbf16>
// CHECK:     vector.transfer_write
func.func @pair_transpose_blocks(%k: tensor<1x64x32x2xbf16>) -> tensor<1x32x64x2xbf16> {
  %e = tensor.empty() : tensor<1x32x64x2xbf16>
  %t = linalg.transpose ins(%k : tensor<1x64x32x2xbf16>) outs(%e : tensor<1x32x64x2xbf16>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x32x64x2xbf16>
}

// -----

// A large op whose first loop is too short to share out (batch 1) is split
// along its outermost parallel loop with at least parallel-chunks iterations
// (the heads of attn-tile's K^T).

// SPLIT-LABEL: func @split_heads
// SPLIT: scf.forall (%[[H:.+]]) in (8) shared_outs
// SPLIT:   tensor.extract_slice %{{.+}}[0, %[[H]], 0, 0] [1, 1, 256, 128] [1, 1, 1, 1]
// SPLIT:   vector.transpose
func.func @split_heads(%k: tensor<1x8x256x128xf32>) -> tensor<1x8x128x256xf32> {
  %e = tensor.empty() : tensor<1x8x128x256xf32>
  %t = linalg.transpose ins(%k : tensor<1x8x256x128xf32>) outs(%e : tensor<1x8x128x256xf32>) permutation = [0, 1, 3, 2]
  return %t : tensor<1x8x128x256xf32>
}

// -----

// Two such splits of one iteration space, the second reading nothing the
// first computes (bf16 attention's K^T and V layouts), are one forall: one
// parallel region. A split that reads the first's result stays apart.

// SPLIT-LABEL: func @sibling_splits
// SPLIT: %[[BOTH:.+]]:2 = scf.forall (%[[H:.+]]) in (8) shared_outs(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<1x8x128x256xf32>, tensor<1x8x128x256xf32>)
// SPLIT-COUNT-2: tensor.parallel_insert_slice
// SPLIT: %[[AFTER:.+]] = scf.forall (%{{.+}}) in (8) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<1x8x256x128xf32>)
// SPLIT:   tensor.extract_slice %[[BOTH]]#0
// SPLIT: return %[[AFTER]], %[[BOTH]]#1
func.func @sibling_splits(%k: tensor<1x8x256x128xf32>, %v: tensor<1x8x256x128xf32>) -> (tensor<1x8x256x128xf32>, tensor<1x8x128x256xf32>) {
  %e = tensor.empty() : tensor<1x8x128x256xf32>
  %kt = linalg.transpose ins(%k : tensor<1x8x256x128xf32>) outs(%e : tensor<1x8x128x256xf32>) permutation = [0, 1, 3, 2]
  %vt = linalg.transpose ins(%v : tensor<1x8x256x128xf32>) outs(%e : tensor<1x8x128x256xf32>) permutation = [0, 1, 3, 2]
  %e2 = tensor.empty() : tensor<1x8x256x128xf32>
  %back = linalg.transpose ins(%kt : tensor<1x8x128x256xf32>) outs(%e2 : tensor<1x8x256x128xf32>) permutation = [0, 1, 3, 2]
  return %back, %vt : tensor<1x8x256x128xf32>, tensor<1x8x128x256xf32>
}

// -----

// A use of the first split's result between the two (here an extract) keeps
// them apart: the fused loop would come after it.

// SPLIT-LABEL: func @sibling_used_between
// SPLIT: %[[KT:.+]] = scf.forall (%{{.+}}) in (8) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<1x8x128x256xf32>)
// SPLIT: tensor.extract %[[KT]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}]
// SPLIT: scf.forall (%{{.+}}) in (8) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<1x8x128x256xf32>)
func.func @sibling_used_between(%k: tensor<1x8x256x128xf32>, %v: tensor<1x8x256x128xf32>) -> (f32, tensor<1x8x128x256xf32>, tensor<1x8x128x256xf32>) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<1x8x128x256xf32>
  %kt = linalg.transpose ins(%k : tensor<1x8x256x128xf32>) outs(%e : tensor<1x8x128x256xf32>) permutation = [0, 1, 3, 2]
  %x = tensor.extract %kt[%c0, %c0, %c0, %c0] : tensor<1x8x128x256xf32>
  %vt = linalg.transpose ins(%v : tensor<1x8x256x128xf32>) outs(%e : tensor<1x8x128x256xf32>) permutation = [0, 1, 3, 2]
  return %x, %kt, %vt : f32, tensor<1x8x128x256xf32>, tensor<1x8x128x256xf32>
}

// -----

// A contraction whose accumulator is a fill used only by it (a linear layer,
// GAT's projection): the fill is fused into the tiles, each register tile
// starts from the fill value instead of reading back a zeroed output; no
// whole-tensor fill remains. Split for the threads, the fill goes into the
// scf.forall too.

// CHECK-LABEL: func @fill_fused
// CHECK-NOT: linalg.fill
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c8 iter_args(%{{.+}} = %[[EMPTY:.+]]) -> (tensor<64x64xf32>)
// CHECK:   scf.for %{{.+}} = %c0 to %c64 step %c32
// CHECK:     %[[ZERO:.+]] = vector.transfer_write %cst, %{{.+}} : vector<8x32xf32>, tensor<8x32xf32>
// CHECK:     scf.for %{{.+}} = %c0 to %c64 step %c1 iter_args(%{{.+}} = %[[ZERO]]) -> (tensor<8x32xf32>)
// CHECK:       vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>

// SPLIT-LABEL: func @fill_fused
// SPLIT-NOT: linalg.fill
// SPLIT: scf.forall (%{{.+}}) = (0) to (64) step (8) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<64x64xf32>)
// SPLIT:   vector.transfer_write %cst, %{{.+}} : vector<8x32xf32>, tensor<8x32xf32>
// SPLIT:   vector.contract
func.func @fill_fused(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, e)>, affine_map<(i, j, e) -> (e, j)>, affine_map<(i, j, e) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%init : tensor<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// The online softmax's step: the rescale a * acc feeds only the P V
// contraction and is fused into its register tiles (each tile scales its
// accumulator in registers, no pass over the whole accumulator), and the
// zero fill of the scores, which the loop init shares after CSE, is fused
// into the Q K^T tiles while the loop init keeps its own vectorized fill.
// On AVX2 both contractions split 60 + 4 rows, each part with its own slice
// of the rescale.

// CHECK-LABEL: func @online_step
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c1 iter_args(%{{.+}} = %[[EMPTY:.+]]) -> (tensor<64x64xf32>)
// CHECK:     vector.transfer_write %cst{{.*}} : vector<1x64xf32>, tensor<1x64xf32>
// CHECK: scf.for %{{.+}} = %c0 to %c8 step %c1
// CHECK:   scf.for %{{.+}} = %c0 to %c64 step %c8
// CHECK:     scf.for %{{.+}} = %c0 to %c64 step %c32
// CHECK:       vector.transfer_write %cst{{.*}} : vector<8x32xf32>, tensor<8x32xf32>
// CHECK:       vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK:     scf.for %{{.+}} = %c0 to %c64 step %c8
// CHECK:       scf.for %{{.+}} = %c0 to %c64 step %c32
// CHECK:         %[[ALPHA:.+]] = vector.transfer_read %{{.+}} : tensor<8xf32>, vector<8xf32>
// CHECK:         %[[ACC:.+]] = vector.transfer_read %{{.+}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK:         %[[SCALED:.+]] = arith.mulf %[[ACC]], %{{.+}} : vector<8x32xf32>
// CHECK:         %[[START:.+]] = vector.transfer_write %[[SCALED]]
// CHECK:         scf.for {{.*}} iter_args(%{{.+}} = %[[START]])
// CHECK:           vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT: linalg.

// AVX2-LABEL: func @online_step
// AVX2: scf.for %{{.+}} = %c0 to %c8 step %c1
// AVX2:   scf.for %{{.+}} = %c0 to %c60 step %c6
// AVX2:     vector.transfer_write %cst{{.*}} : vector<6x16xf32>, tensor<6x16xf32>
// AVX2:   scf.for %{{.+}} = %c0 to %c64 step %c16
// AVX2:     vector.transfer_write %cst{{.*}} : vector<4x16xf32>, tensor<4x16xf32>
// AVX2:   scf.for %{{.+}} = %c0 to %c60 step %c6
// AVX2:     arith.mulf %{{.+}} : vector<6x16xf32>
// AVX2:   scf.for %{{.+}} = %c0 to %c64 step %c16
// AVX2:     arith.mulf %{{.+}} : vector<4x16xf32>
func.func @online_step(%q: tensor<64x64xf32>, %kt: tensor<8x64x64xf32>, %v: tensor<8x64x64xf32>, %alpha: tensor<8x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = scf.for %t = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (tensor<64x64xf32>) {
    %k = tensor.extract_slice %kt[%t, 0, 0] [1, 64, 64] [1, 1, 1] : tensor<8x64x64xf32> to tensor<64x64xf32>
    %vt = tensor.extract_slice %v[%t, 0, 0] [1, 64, 64] [1, 1, 1] : tensor<8x64x64xf32> to tensor<64x64xf32>
    %a = tensor.extract_slice %alpha[%t, 0] [1, 64] [1, 1] : tensor<8x64xf32> to tensor<64xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, e)>, affine_map<(i, j, e) -> (e, j)>, affine_map<(i, j, e) -> (i, j)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%q, %k : tensor<64x64xf32>, tensor<64x64xf32>) outs(%init : tensor<64x64xf32>) {
    ^bb0(%x: f32, %y: f32, %z: f32):
      %m = arith.mulf %x, %y : f32
      %n = arith.addf %z, %m : f32
      linalg.yield %n : f32
    } -> tensor<64x64xf32>
    %scaled = linalg.generic {indexing_maps = [affine_map<(i, d) -> (i)>, affine_map<(i, d) -> (i, d)>],
                              iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<64xf32>) outs(%acc : tensor<64x64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %y, %x : f32
      linalg.yield %m : f32
    } -> tensor<64x64xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(i, d, j) -> (i, j)>, affine_map<(i, d, j) -> (j, d)>, affine_map<(i, d, j) -> (i, d)>],
                            iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%s, %vt : tensor<64x64xf32>, tensor<64x64xf32>) outs(%scaled : tensor<64x64xf32>) {
    ^bb0(%x: f32, %y: f32, %z: f32):
      %m = arith.mulf %x, %y : f32
      %n = arith.addf %z, %m : f32
      linalg.yield %n : f32
    } -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// A contraction of bf16 pairs into f32 (attn-tile's bf16 mode: rows x t x 2
// times t x cols x 2): register tiles as for f32, the pair taken whole, the
// extensions folded into a vector.contract of bf16 factors (which
// attn-lower-vectors turns into bf16 dot products on AVX512-BF16 targets).

// CHECK-LABEL: func @bf16_pairs
// CHECK: scf.for %{{.+}} step %c8
// CHECK:   scf.for %{{.+}} step %c32
// CHECK:     scf.for %{{.+}} = %c0 to %c32 step %c1
// CHECK:       vector.contract {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]{{.*}} : vector<8x1x2xbf16>, vector<1x32x2xbf16> into vector<8x32xf32>
// The pair dot products keep 8 x 32 by default (WIDE).
// WIDE-LABEL: func @bf16_pairs
// WIDE: vector.contract {{.*}} : vector<8x1x2xbf16>, vector<1x32x2xbf16> into vector<8x32xf32>
// On a target with AMX (sapphirerapids) the contraction stays a linalg op
// for attn-lower-amx (after bufferization), and so does its accumulator's
// fill, right before it (attn-lower-amx starts from tilezero there).
// AMX-LABEL: func @bf16_pairs
// AMX-NOT: vector.transfer_write
// AMX: %[[ZERO:.+]] = linalg.fill
// AMX-NEXT: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]{{.*}} outs(%[[ZERO]] : tensor<64x64xf32>)
// AMX-NOT: vector.contract
// AMX: return
// AVX2-LABEL: func @bf16_pairs
// AVX2: vector.contract {{.*}} : vector<6x1x2xbf16>, vector<1x16x2xbf16> into vector<6x16xf32>
// AVX2: vector.contract {{.*}} : vector<4x1x2xbf16>, vector<1x16x2xbf16> into vector<4x16xf32>
func.func @bf16_pairs(%q: tensor<64x32x2xbf16>, %kt: tensor<32x64x2xbf16>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, t, p) -> (i, t, p)>, affine_map<(i, j, t, p) -> (t, j, p)>, affine_map<(i, j, t, p) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%q, %kt : tensor<64x32x2xbf16>, tensor<32x64x2xbf16>) outs(%init : tensor<64x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %x = arith.extf %a : bf16 to f32
    %y = arith.extf %b : bf16 to f32
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// A residual sum `x + (bias + X W)` (a linear layer added to its block's
// input, through the expand_shape back to B x L x D) is computed by the
// contraction: its accumulator's producer becomes `bias + x` (x collapsed
// to the contraction's shape), which the register tiles compute before the
// reduction; no separate pass over the output remains.

// CHECK-LABEL: func @residual_into_accumulator
// CHECK-SAME: %[[R:[a-z0-9]+]]: tensor<4x16x64xf32>
// CHECK: %[[RC:.+]] = tensor.collapse_shape %[[R]] {{\[\[}}0, 1], [2]] : tensor<4x16x64xf32> into tensor<64x64xf32>
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     %[[RT:.+]] = tensor.extract_slice %[[RC]]{{.*}} to tensor<8x32xf32>
// CHECK:     %[[RES:.+]] = vector.transfer_read %[[RT]]{{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK:     arith.addf %{{.+}}, %[[RES]] : vector<8x32xf32>
// CHECK:     vector.contract
// CHECK: %[[OUT:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [4, 16, 64]
// CHECK-NOT: linalg.generic
// CHECK: return %[[OUT]]
func.func @residual_into_accumulator(%x: tensor<64x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>, %r: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %bias = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64x64xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>) outs(%bias : tensor<64x64xf32>) {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %m = arith.mulf %a, %bb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %mm3 = tensor.expand_shape %mm [[0, 1], [2]] output_shape [4, 16, 64] : tensor<64x64xf32> into tensor<4x16x64xf32>
  %e3 = tensor.empty() : tensor<4x16x64xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(b, l, d) -> (b, l, d)>, affine_map<(b, l, d) -> (b, l, d)>, affine_map<(b, l, d) -> (b, l, d)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r, %mm3 : tensor<4x16x64xf32>, tensor<4x16x64xf32>) outs(%e3 : tensor<4x16x64xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<4x16x64xf32>
  return %sum : tensor<4x16x64xf32>
}

// -----

// The same sum where the product is also returned stays a pass of its own
// (the contraction's result must not include x).

// CHECK-LABEL: func @residual_product_used
// CHECK: vector.contract
// CHECK: arith.addf {{.*}} : vector<1x64xf32>
func.func @residual_product_used(%x: tensor<64x32xf32>, %w: tensor<32x64xf32>, %r: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f : tensor<64x64xf32>) {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %m = arith.mulf %a, %bb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x64xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %r : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e2 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %mm, %sum : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A generic that transposes a weight (a copy whose input map swaps the two
// innermost dims) is tiled like linalg.transpose: in-register blocks.

// CHECK-LABEL: func @transpose_generic
// CHECK: vector.transpose %{{.+}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
func.func @transpose_generic(%w: tensor<64x32xf32>) -> tensor<32x64xf32> {
  %e = tensor.empty() : tensor<32x64xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<64x32xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<32x64xf32>
  return %t : tensor<32x64xf32>
}

// -----

// Head split and merge around attention's per-head loop (as attn-tile's
// register rows leave them): the split (B x L x H x hd -> B x H x L x hd),
// read only by transfer_reads and extracts, is read through (the reads index
// the B x L x H x hd input, stepping along L at a stride); the merge of the
// loop's result back to B x L x H x hd is written by the loop (each head's
// rows to their place). Neither copy remains.

// CHECK: affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-LABEL: func @heads_read_through
// CHECK-SAME: %[[QKV:[a-z0-9]+]]: tensor<2x17x4x16xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x17x4x16xf32>
// CHECK: %[[R:.+]] = scf.forall (%[[B:.+]], %[[H:.+]]) in (2, 4) shared_outs(%[[O:.+]] = %[[E]]) -> (tensor<2x17x4x16xf32>)
// CHECK:   vector.transfer_read %[[QKV]][%[[B]], %{{.+}}, %[[H]], %{{.+}}], %{{.+}} {in_bounds = [true, true], permutation_map = #{{.+}}} : tensor<2x17x4x16xf32>, vector<17x16xf32>
// CHECK:   tensor.extract %[[QKV]][%[[B]], %c1, %[[H]], %c2] : tensor<2x17x4x16xf32>
// CHECK:   tensor.parallel_insert_slice %{{.+}} into %[[O]][%[[B]], 0, %[[H]], 0] [1, 17, 1, 16] [1, 1, 1, 1] : tensor<17x16xf32> into tensor<2x17x4x16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @heads_read_through(%qkv: tensor<2x17x4x16xf32>) -> tensor<2x17x4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %pad = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x17x16xf32>
  %split = linalg.generic {indexing_maps = [affine_map<(b, h, l, c) -> (b, l, h, c)>, affine_map<(b, h, l, c) -> (b, h, l, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%qkv : tensor<2x17x4x16xf32>) outs(%e : tensor<2x4x17x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x17x16xf32>
  %heads = scf.forall (%b, %h) in (2, 4) shared_outs(%o = %e) -> (tensor<2x4x17x16xf32>) {
    %rows = vector.transfer_read %split[%b, %h, %c0, %c0], %pad {in_bounds = [true, true]} : tensor<2x4x17x16xf32>, vector<17x16xf32>
    %s = tensor.extract %split[%b, %h, %c1, %c2] : tensor<2x4x17x16xf32>
    %sv = vector.broadcast %s : f32 to vector<17x16xf32>
    %m = arith.mulf %rows, %sv : vector<17x16xf32>
    %t0 = tensor.empty() : tensor<17x16xf32>
    %t = vector.transfer_write %m, %t0[%c0, %c0] {in_bounds = [true, true]} : vector<17x16xf32>, tensor<17x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%b, %h, 0, 0] [1, 1, 17, 16] [1, 1, 1, 1] : tensor<17x16xf32> into tensor<2x4x17x16xf32>
    }
  }
  %e2 = tensor.empty() : tensor<2x17x4x16xf32>
  %merge = linalg.generic {indexing_maps = [affine_map<(b, l, h, c) -> (b, h, l, c)>, affine_map<(b, l, h, c) -> (b, l, h, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%heads : tensor<2x4x17x16xf32>) outs(%e2 : tensor<2x17x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x17x4x16xf32>
  return %merge : tensor<2x17x4x16xf32>
}

// -----

// A sum of two linear layers: the first product is computed before the
// second contraction, so the sum goes into the second's accumulator (not
// into the first's, where the second product does not exist yet).

// CHECK-LABEL: func @sum_of_two_products
// CHECK: %[[FIRST:.+]] = scf.for
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     tensor.extract_slice %[[FIRST]]
// CHECK:     arith.addf {{.*}} : vector<8x32xf32>
// CHECK:     vector.contract
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @sum_of_two_products(%x: tensor<64x32xf32>, %w: tensor<32x64xf32>, %y: tensor<64x32xf32>, %u: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f : tensor<64x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %u : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f2 : tensor<64x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %e3 = tensor.empty() : tensor<64x64xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e3 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %sum : tensor<64x64xf32>
}

// -----

// A merge whose pieces would land transposed (a 16 x 16 piece of the two
// swapped dims) stays a copy.

// CHECK-LABEL: func @merge_would_transpose
// CHECK: %[[R:.+]] = scf.forall
// CHECK: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%{{.+}}, 0, 0, 0] [1, 16, 16, 4] [1, 1, 1, 1] : tensor<16x16x4xf32> into tensor<2x16x16x4xf32>
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[R]]
func.func @merge_would_transpose(%x: tensor<2x16x16x4xf32>) -> tensor<2x16x16x4xf32> {
  %e = tensor.empty() : tensor<2x16x16x4xf32>
  %r = scf.forall (%b) in (2) shared_outs(%o = %e) -> (tensor<2x16x16x4xf32>) {
    %piece = tensor.extract_slice %x[%b, 0, 0, 0] [1, 16, 16, 4] [1, 1, 1, 1] : tensor<2x16x16x4xf32> to tensor<16x16x4xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %piece into %o[%b, 0, 0, 0] [1, 16, 16, 4] [1, 1, 1, 1] : tensor<16x16x4xf32> into tensor<2x16x16x4xf32>
    }
  }
  %e2 = tensor.empty() : tensor<2x16x16x4xf32>
  %merge = linalg.generic {indexing_maps = [affine_map<(b, l, h, c) -> (b, h, l, c)>, affine_map<(b, l, h, c) -> (b, l, h, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<2x16x16x4xf32>) outs(%e2 : tensor<2x16x16x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x16x16x4xf32>
  return %merge : tensor<2x16x16x4xf32>
}

// -----

// A short reduction right before a parallel last dim (the online softmax's
// row sums in lanes: rows x cols/lanes x lanes into rows x lanes) is taken
// whole per row, one multi_reduction over the middle dim; a long one (64
// vectors, past 16) goes one step at a time.
// CHECK-LABEL: func @lane_sums
// CHECK: scf.for
// CHECK: vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1] : vector<1x4x16xf32> to vector<1x16xf32>
// CHECK-LABEL: func @column_sums
// CHECK: vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1] : vector<1x1x16xf32> to vector<1x16xf32>
func.func @lane_sums(%p: tensor<8x4x16xf32>, %l: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%p : tensor<8x4x16xf32>) outs(%l : tensor<8x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func @column_sums(%p: tensor<8x64x16xf32>, %l: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%p : tensor<8x64x16xf32>) outs(%l : tensor<8x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// The bf16 online softmax's row sums in lanes of pairs (rows x units x 16
// x 2 into rows x 16, over the units and the pair): taken whole per row
// up to 8 units (16 vectors of f32), in steps of 8 units beyond.
// CHECK-LABEL: func @pair_sums
// CHECK: scf.for
// CHECK: arith.extf %{{.+}} : vector<1x2x16x2xbf16> to vector<1x2x16x2xf32>
// CHECK: vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1, 3] : vector<1x2x16x2xf32> to vector<1x16xf32>
// CHECK-LABEL: func @long_pair_sums
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1, 3] : vector<1x8x16x2xf32> to vector<1x16xf32>
func.func @pair_sums(%p: tensor<8x2x16x2xbf16>, %l: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins(%p : tensor<8x2x16x2xbf16>) outs(%l : tensor<8x16xf32>) {
  ^bb0(%x: bf16, %acc: f32):
    %w = arith.extf %x : bf16 to f32
    %s = arith.addf %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func @long_pair_sums(%p: tensor<8x16x16x2xbf16>, %l: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins(%p : tensor<8x16x16x2xbf16>) outs(%l : tensor<8x16xf32>) {
  ^bb0(%x: bf16, %acc: f32):
    %w = arith.extf %x : bf16 to f32
    %s = arith.addf %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A fill that the AMX product shares with a loop's initial state (CSE
// merges the online softmax's zero scores with its zero accumulator): the
// product gets a fill of its own in the loop, right before it; the shared
// one stays the loop's init (vectorized). Bufferized, the shared fill would
// be one zero buffer copied into the scores before every key tile.
// AMX-LABEL: func @amx_shared_fill
// AMX: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// AMX: %[[SHARED:.+]] = scf.for
// AMX: scf.for %{{.+}} iter_args(%{{.+}} = %[[SHARED]])
// AMX:   %[[EMPTY:.+]] = tensor.empty() : tensor<32x32xf32>
// AMX:   %[[OWN:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<32x32xf32>)
// AMX-NEXT: linalg.generic {{.*}} outs(%[[OWN]] : tensor<32x32xf32>)
func.func @amx_shared_fill(%q: tensor<32x16x2xbf16>, %kt: tensor<16x32x2xbf16>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<32x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<32x32xf32>) {
    %s = linalg.generic {indexing_maps = [affine_map<(i, j, t, p) -> (i, t, p)>, affine_map<(i, j, t, p) -> (t, j, p)>, affine_map<(i, j, t, p) -> (i, j)>],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%q, %kt : tensor<32x16x2xbf16>, tensor<16x32x2xbf16>) outs(%init : tensor<32x32xf32>) {
    ^bb0(%a: bf16, %b: bf16, %c: f32):
      %x = arith.extf %a : bf16 to f32
      %y = arith.extf %b : bf16 to f32
      %m = arith.mulf %x, %y : f32
      %t = arith.addf %c, %m : f32
      linalg.yield %t : f32
    } -> tensor<32x32xf32>
    %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%s : tensor<32x32xf32>) outs(%acc : tensor<32x32xf32>) {
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      linalg.yield %t : f32
    } -> tensor<32x32xf32>
    scf.yield %sum : tensor<32x32xf32>
  }
  return %r : tensor<32x32xf32>
}

// -----

// A fill of another value is not tilezero: the product keeps the shared
// fill, vectorized (attn-lower-amx loads its tiles from the buffer).
// AMX-LABEL: func @amx_shared_fill_of_one
// AMX: %[[ONES:.+]] = scf.for
// AMX: scf.for %{{.+}} iter_args(%{{.+}} = %[[ONES]])
// AMX-NOT: linalg.fill
// AMX: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]{{.*}} outs(%[[ONES]] : tensor<32x32xf32>)
func.func @amx_shared_fill_of_one(%q: tensor<32x16x2xbf16>, %kt: tensor<16x32x2xbf16>) -> tensor<32x32xf32> {
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<32x32xf32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<32x32xf32>) {
    %s = linalg.generic {indexing_maps = [affine_map<(i, j, t, p) -> (i, t, p)>, affine_map<(i, j, t, p) -> (t, j, p)>, affine_map<(i, j, t, p) -> (i, j)>],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%q, %kt : tensor<32x16x2xbf16>, tensor<16x32x2xbf16>) outs(%init : tensor<32x32xf32>) {
    ^bb0(%a: bf16, %b: bf16, %c: f32):
      %x = arith.extf %a : bf16 to f32
      %y = arith.extf %b : bf16 to f32
      %m = arith.mulf %x, %y : f32
      %t = arith.addf %c, %m : f32
      linalg.yield %t : f32
    } -> tensor<32x32xf32>
    %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%s : tensor<32x32xf32>) outs(%acc : tensor<32x32xf32>) {
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      linalg.yield %t : f32
    } -> tensor<32x32xf32>
    scf.yield %sum : tensor<32x32xf32>
  }
  return %r : tensor<32x32xf32>
}
