// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=znver4" --attn-tile="block-q=4 block-k=8" --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=sapphirerapids" --attn-tile="block-q=4 block-k=8" --mlir-print-local-scope | FileCheck %s --check-prefix=WIDE
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=sapphirerapids" --attn-tile="block-q=16 block-k=32" --mlir-print-local-scope | FileCheck %s --check-prefix=SPR
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=sapphirerapids features=-amx-tile" --attn-tile="block-q=16 block-k=32" --mlir-print-local-scope | FileCheck %s --check-prefix=SPR-NO-AMX
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=sapphirerapids" --attn-tile="block-q=8 block-k=32" --mlir-print-local-scope | FileCheck %s --check-prefix=SPR-NO-AMX
// A guest that reports its Sapphire Rapids-class core under another model
// (LLVM's host detection: rocketlake) is told by its features.
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=rocketlake features=+avx512bf16,+avx512fp16" --attn-tile="block-q=16 block-k=32" --mlir-print-local-scope | FileCheck %s --check-prefix=SPR-NO-AMX
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=znver4" --attn-tile="block-q=8 block-k=32" --mlir-print-local-scope | FileCheck %s --check-prefix=ZEN4
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=4 block-k=8" --mlir-print-local-scope | FileCheck %s --check-prefix=WIDE
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=znver4" --attn-tile="block-q=4 block-k=8 bf16-dot-product=false" --mlir-print-local-scope | FileCheck %s --check-prefix=WIDE

// attn-tile's bf16 mode, on targets with bf16 dot products (AVX512-BF16:
// Zen 4, Sapphire Rapids): Q, K and V stay bf16, pair-packed once per call
// (K^T as B x Hkv x key tile x E/2 x block-k x 2, V as B x Hkv x Lk/2 x Ev x
// 2); Q K^T and P V are contractions over (pair, element) of bf16 factors
// into f32; P is rounded to bf16 as it is computed, and l sums the rounded
// P; the output is rounded back to bf16. Without AVX512-BF16, or with
// bf16-dot-product=false, the op is widened to f32 first.

// A power-of-two scale (E = 4: 1/2) prescales Q in bf16 (exact).
// CHECK-LABEL: func @dense
// CHECK: %[[KE:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3], [4, 5]] output_shape [1, 1, 1, 8, 2, 2] : tensor<1x1x8x4xbf16> into tensor<1x1x1x8x2x2xbf16>
// CHECK: %[[KT:.+]] = linalg.transpose ins(%[[KE]] : tensor<1x1x1x8x2x2xbf16>) outs(%{{.+}} : tensor<1x1x1x2x8x2xbf16>) permutation = [0, 1, 2, 4, 3, 5]
// CHECK: %[[VE:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3], [4]] output_shape [1, 1, 4, 2, 6] : tensor<1x1x8x6xbf16> into tensor<1x1x4x2x6xbf16>
// CHECK: %[[VP:.+]] = linalg.transpose ins(%[[VE]] : tensor<1x1x4x2x6xbf16>) outs(%{{.+}} : tensor<1x1x4x6x2xbf16>) permutation = [0, 1, 2, 4, 3]
// CHECK: scf.forall
// CHECK:   %[[QS:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<4x4xbf16>) outs(%{{.+}} : tensor<4x4xbf16>)
// CHECK:     arith.extf
// CHECK:     arith.mulf %{{.+}}, %cst{{.*}} : f32
// CHECK:     arith.truncf %{{.+}} : f32 to bf16
// CHECK:   %[[QP:.+]] = tensor.expand_shape %[[QS]] {{\[}}[0], [1, 2]] output_shape [4, 2, 2]
// CHECK:   scf.for
// CHECK:     %[[KTILE:.+]] = tensor.extract_slice %[[KT]]{{.*}} to tensor<2x8x2xbf16>
// CHECK:     %[[VTILE:.+]] = tensor.extract_slice %[[VP]]{{.*}} to tensor<4x6x2xbf16>
// CHECK:     %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[QP]], %[[KTILE]] : tensor<4x2x2xbf16>, tensor<2x8x2xbf16>) outs(%{{.+}} : tensor<4x8xf32>)
// CHECK:       arith.extf
// CHECK:       arith.extf
// CHECK:       arith.mulf
// CHECK:       arith.addf
// Plain scores: the online softmax takes Q K^T as is.
// CHECK:     maxnumf
// P's exp is rounded to bf16 right away: a degree-3 polynomial (1.0e-4
// relative, a twentieth of bf16's half ulp), not f32's degree 5.
// CHECK:     %[[P:.+]] = linalg.generic {{.*}} ins(%[[S]], %{{.+}} : tensor<4x8xf32>, tensor<4xf32>) outs(%{{.+}} : tensor<4x8xbf16>)
// CHECK-COUNT-3: math.fma
// CHECK-NOT:   math.fma
// CHECK:       arith.truncf %{{.+}} : f32 to bf16
// CHECK:     linalg.generic {{.*}} ins(%[[P]] : tensor<4x8xbf16>) outs(%{{.+}} : tensor<4xf32>)
// CHECK:       arith.extf
// CHECK:       arith.addf
// CHECK:     %[[PP:.+]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2]] output_shape [4, 4, 2]
// CHECK:     linalg.generic {{.*}} ins(%[[PP]], %[[VTILE]] : tensor<4x4x2xbf16>, tensor<4x6x2xbf16>) outs(%{{.+}} : tensor<4x6xf32>)
// Each query tile's rows are rounded to bf16 as they are inserted: the
// forall's output is bf16, with no f32 result rounded in a pass of its own.
// CHECK:   linalg.generic {{.*}} ins(%{{.+}} : tensor<4x6xf32>) outs(%{{.+}} : tensor<4x6xbf16>)
// CHECK:     arith.truncf %{{.+}} : f32 to bf16
// CHECK:   tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, 0] [1, 1, 4, 6] [1, 1, 1, 1] : tensor<4x6xbf16> into tensor<1x2x8x6xbf16>
// CHECK-NOT: linalg.generic
// CHECK: return %{{.+}} : tensor<1x2x8x6xbf16>

// WIDE-LABEL: func @dense
// WIDE-NOT: xbf16> into
// WIDE: arith.extf %{{.+}} : bf16 to f32
// WIDE: linalg.transpose ins(%{{.+}} : tensor<1x1x1x8x4xf32>)
// WIDE: scf.forall
// WIDE-NOT: bf16
// WIDE: scf.forall.in_parallel
// WIDE: arith.truncf %{{.+}} : f32 to bf16
func.func @dense(%q: tensor<1x2x8x4xbf16>, %k: tensor<1x1x8x4xbf16>, %v: tensor<1x1x8x6xbf16>) -> tensor<1x2x8x6xbf16> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x2x8x4xbf16>, tensor<1x1x8x4xbf16>, tensor<1x1x8x6xbf16>) -> tensor<1x2x8x6xbf16>
  return %o : tensor<1x2x8x6xbf16>
}

// -----

// E = 8: the scale 1/sqrt(8) = 0.707 x 2^-1 is no power of two: Q is
// multiplied by 2^-1 in bf16 (exact), the f32 scores by 0.707 (the unscaled
// scores could overflow f32 where the scaled ones do not). Lk = 7 is odd: the
// key tile is 8 keys, one of them padding (masked like the causal mask's
// keys).
// CHECK-LABEL: func @scaled
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[REST:.+]] = arith.constant 0.707106769 : f32
// CHECK: tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 1, 0]
// CHECK: : tensor<1x1x7x8xbf16> to tensor<1x1x8x8xbf16>
// CHECK: linalg.transpose {{.*}} outs(%{{.+}} : tensor<1x1x1x4x8x2xbf16>)
// CHECK: scf.forall
// CHECK:   linalg.generic {{.*}} ins(%{{.+}} : tensor<4x8xbf16>) outs(%{{.+}} : tensor<4x8xbf16>)
// CHECK:     arith.mulf %{{.+}}, %[[HALF]] : f32
// CHECK:     arith.truncf %{{.+}} : f32 to bf16
// CHECK:   tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [4, 4, 2] : tensor<4x8xbf16> into tensor<4x4x2xbf16>
// CHECK:   scf.for
// CHECK:     linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<4x4x2xbf16>, tensor<4x8x2xbf16>) outs(%{{.+}} : tensor<4x8xf32>)
// CHECK:     linalg.generic
// CHECK:       arith.mulf %{{.+}}, %[[REST]] : f32
// CHECK:       arith.select
func.func @scaled(%q: tensor<1x1x4x8xbf16>, %k: tensor<1x1x7x8xbf16>, %v: tensor<1x1x7x8xbf16>) -> tensor<1x1x4x8xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x1x4x8xbf16>, tensor<1x1x7x8xbf16>, tensor<1x1x7x8xbf16>) -> tensor<1x1x4x8xbf16>
  return %o : tensor<1x1x4x8xbf16>
}

// -----

// What the bf16 mode does not take is widened: an odd head dim, Shaw keys.
// CHECK-LABEL: func @odd_head_dim
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x1x1x8x5xf32>)
func.func @odd_head_dim(%q: tensor<1x1x8x5xbf16>, %k: tensor<1x1x8x5xbf16>, %v: tensor<1x1x8x5xbf16>) -> tensor<1x1x8x5xbf16> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x1x8x5xbf16>, tensor<1x1x8x5xbf16>, tensor<1x1x8x5xbf16>) -> tensor<1x1x8x5xbf16>
  return %o : tensor<1x1x8x5xbf16>
}

// -----

// CHECK-LABEL: func @shaw
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x1x1x8x4xf32>)
func.func @shaw(%q: tensor<1x1x8x4xbf16>, %k: tensor<1x1x8x4xbf16>, %v: tensor<1x1x8x4xbf16>, %a: tensor<5x4xbf16>) -> tensor<1x1x8x4xbf16> {
  %o = attn.sdpa %q, %k, %v rel_key(%a) {rel_clip = 2 : i64}
      : (tensor<1x1x8x4xbf16>, tensor<1x1x8x4xbf16>, tensor<1x1x8x4xbf16>, tensor<5x4xbf16>) -> tensor<1x1x8x4xbf16>
  return %o : tensor<1x1x8x4xbf16>
}

// -----

// Where bf16 dot products are slower than f32 FMAs (Intel's Xeon cores:
// sapphirerapids), the bf16 mode is taken only for tiles whose products AMX
// computes (multiples of 16 rows and columns, of 32 keys and head dims);
// anything else, AMX turned off or a query tile of 8, is computed in f32
// (@short_queries below: 8 query rows, block-q 16 clamped to 8). Zen 4's
// dot products are fast: any tile keeps them.
// On AMX tiles the accumulators go through memory between tile products:
// the online softmax moves a row's max m only where the tile's passes it by
// more than 8 ln 2 (P <= 2^8; a = 1 on the other rows, and on rows whose
// first allowed key arrives), and l and acc are rescaled only in a step
// where some row's moved (min a < 1). Zen 4's
// accumulators are in registers: a acc every step, as f32.
// SPR-LABEL: func @amx_tiles
// SPR: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<16x16x2xbf16>, tensor<16x32x2xbf16>) outs(%{{.+}} : tensor<16x32xf32>)
// SPR: %[[STEP:.+]]:3 = linalg.generic
// SPR:   %[[MAX:.+]] = arith.maxnumf %[[M:.+]], %[[TILEMAX:.+]] : f32
// SPR:   %[[BOUND:.+]] = arith.addf %[[M]], %cst{{.*}} : f32
// SPR:   %[[RAISE:.+]] = arith.cmpf ogt, %[[TILEMAX]], %[[BOUND]] : f32
// SPR:   %[[NEWMAX:.+]] = arith.select %[[RAISE]], %[[MAX]], %[[M]] : f32
// SPR:   %[[E:.+]] = math.exp
// A row's first allowed key asks for no rescale either (its acc and l are 0):
// SPR:   %[[SEEN:.+]] = arith.cmpf one, %[[M]], %cst{{.*}} : f32
// SPR:   %[[RESCALES:.+]] = arith.andi %[[RAISE]], %[[SEEN]] : i1
// SPR:   %[[ALPHA:.+]] = arith.select %[[RESCALES]], %[[E]], %cst{{.*}} : f32
// SPR:   linalg.yield %[[NEWMAX]], %[[ALPHA]]
// SPR: %[[MIN:.+]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[STEP]]#1 : tensor<16xf32>) outs(%{{.+}} : tensor<f32>)
// SPR:   arith.minnumf
// SPR: %[[A:.+]] = tensor.extract %[[MIN]][] : tensor<f32>
// SPR: %[[MOVED:.+]] = arith.cmpf olt, %[[A]], %cst{{.*}} : f32
// SPR: %[[SCALED:.+]]:2 = scf.if %[[MOVED]] -> (tensor<16x16xf32>, tensor<16x16xf32>) {
// SPR:   arith.mulf
// SPR:   arith.mulf
// SPR: } else {
// SPR-NEXT: scf.yield %[[L:.+]], %[[ACC:.+]] : tensor<16x16xf32>, tensor<16x16xf32>
// SPR: linalg.generic {{.*}} ins(%{{.+}} : tensor<16x1x16x2xbf16>) outs(%[[SCALED]]#0 : tensor<16x16xf32>)
// SPR: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<16x16x2xbf16>, tensor<16x16x2xbf16>) outs(%[[SCALED]]#1 : tensor<16x16xf32>)
// SPR-LABEL: func @short_queries
// SPR: arith.extf %{{.+}} : bf16 to f32
// SPR-NOT: x2xbf16>
// SPR: return
// SPR-NO-AMX-LABEL: func @amx_tiles
// SPR-NO-AMX: arith.extf %{{.+}} : bf16 to f32
// SPR-NO-AMX: scf.forall
// SPR-NO-AMX-NOT: bf16
// SPR-NO-AMX: scf.forall.in_parallel
// ZEN4-LABEL: func @amx_tiles
// ZEN4: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<8x16x2xbf16>, tensor<16x32x2xbf16>) outs(%{{.+}} : tensor<8x32xf32>)
// ZEN4-NOT: scf.if
// ZEN4: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<8x16x2xbf16>, tensor<16x16x2xbf16>) outs(%{{.+}} : tensor<8x16xf32>)
func.func @amx_tiles(%q: tensor<1x1x64x32xbf16>, %k: tensor<1x1x64x32xbf16>, %v: tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16>
  return %o : tensor<1x1x64x16xbf16>
}

// -----

// Decode-like: 8 query rows, fewer than block-q = 16. The query tile is 8
// rows, which AMX does not take: f32 on sapphirerapids.
func.func @short_queries(%q: tensor<1x1x8x32xbf16>, %k: tensor<1x1x64x32xbf16>, %v: tensor<1x1x64x16xbf16>) -> tensor<1x1x8x16xbf16> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x1x8x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x16xbf16>) -> tensor<1x1x8x16xbf16>
  return %o : tensor<1x1x8x16xbf16>
}
