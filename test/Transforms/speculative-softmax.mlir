// RUN: attn-opt %s --attn-set-target="cpu=x86-64-v3" --attn-tile="block-q=64 block-k=64 speculative-softmax=true" --canonicalize --cse --mlir-print-local-scope | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s --attn-set-target="cpu=x86-64-v3" --attn-tile="block-q=64 block-k=64" --canonicalize --cse --mlir-print-local-scope | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s --attn-set-target="cpu=x86-64-v3" --attn-tile="block-q=64 block-k=64 speculative-softmax=true" --canonicalize --cse --attn-vectorize="parallel-chunks=1" --canonicalize --mlir-print-local-scope | FileCheck %s --check-prefix=VEC
// RUN: attn-opt %s --attn-set-target="cpu=x86-64-v4" --attn-tile="block-q=64 block-k=64 speculative-softmax=true" --canonicalize --cse --attn-vectorize="parallel-chunks=1" --canonicalize --mlir-print-local-scope | FileCheck %s --check-prefix=VEC512
// RUN: attn-run %s --check --pipeline "attn-cpu-pipeline{speculative-softmax=true}" | FileCheck %s --check-prefix=JIT

// attn-tile's speculative-softmax (off by default): an f32 key tile of
// plain scores computes P = exp(S - m) against the row maxima of the
// earlier tiles, in one elementwise op with the scores' copy, marked for
// attn-vectorize (buildSpeculativeSoftmaxStep); where no row's tile max
// passes its m + 8 ln 2 the step is l += rowsum(P), acc += P V (no
// rescale), otherwise the lazy step runs on the scores.

// TILE-LABEL: func.func @dense
// TILE: scf.for
// The offset (m, or 0 before a row's first allowed key), before Q K^T.
// TILE: %[[SHIFT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%arg
// TILE: %[[QK:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// TILE: %[[P:.*]] = linalg.generic {{.*}}ins(%[[QK]], %[[SHIFT]] : {{.*}}) {{.*}}attrs =  {attn.register_tile_epilogue}
// TILE: math.fma
// TILE: %[[MAX:.*]] = linalg.generic {{.*}}ins(%[[QK]] : tensor<64x64xf32>)
// TILE: arith.maxnumf
// TILE: %[[MOVED:.*]] = arith.cmpf ogt
// TILE: scf.if %[[MOVED]]
// The lazy step recomputes P from the scores.
// TILE: linalg.generic {{.*}}ins(%[[QK]], {{.*}})
// TILE: } else {
// l += rowsum(P) in lanes; acc += P V into the loop's accumulator.
// TILE: tensor.expand_shape %[[P]] {{.*}} into tensor<64x8x8xf32>
// TILE: linalg.generic {{.*}}ins(%[[P]], %{{.*}} : tensor<64x64xf32>, tensor<64x64xf32>) outs(%arg
// TILE: scf.yield
// m' after the step, in place: max(m, tile max) where it passed m + 8 ln 2.
// TILE: linalg.generic {{.*}}ins(%[[MAX]] : tensor<64xf32>) outs(%arg

// Without the option the step is the exact one: no marked op.
// OFF-LABEL: func.func @dense
// OFF-NOT: attn.register_tile_epilogue
// OFF-NOT: scf.if

// attn-vectorize computes the marked op in Q K^T's register tiles, a row
// of the tile at a time after the reduction: the 64 rows as 60 (6-row
// tiles) + 4, as splitRows splits a contraction.
// VEC-LABEL: func.func @dense
// VEC: scf.for %{{.*}} = %c0 to %c60 step %c6
// VEC: scf.for %{{.*}} = %c0 to %c64 step %c16
// VEC: vector.transfer_write {{.*}} : vector<6x16xf32>, tensor<6x16xf32>
// VEC: scf.for %{{.*}} = %c0 to %c64 step %c1
// VEC: vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// VEC: scf.for %{{.*}} = %c0 to %c6 step %c1
// VEC-COUNT-5: math.fma {{.*}} : vector<1x16xf32>
// VEC: vector.transfer_write
// VEC: vector.transfer_write
// VEC: vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// VEC: scf.for %{{.*}} = %c0 to %c4 step %c1
// VEC-COUNT-5: math.fma {{.*}} : vector<1x16xf32>
// VEC-NOT: attn.register_tile_epilogue

// AVX-512: 6 x 64 tiles, the epilogue on rows of four zmm vectors.
// VEC512-LABEL: func.func @dense
// VEC512: scf.for %{{.*}} = %c0 to %c60 step %c6
// VEC512: vector.contract {{.*}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
// VEC512: scf.for %{{.*}} = %c0 to %c6 step %c1
// VEC512-COUNT-5: math.fma {{.*}} : vector<1x64xf32>

// JIT: CHECK PASSED
func.func @dense(%q: tensor<1x1x64x64xf32>, %k: tensor<1x1x128x64xf32>, %v: tensor<1x1x128x64xf32>) -> tensor<1x1x64x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x64x64xf32>, tensor<1x1x128x64xf32>, tensor<1x1x128x64xf32>) -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}
