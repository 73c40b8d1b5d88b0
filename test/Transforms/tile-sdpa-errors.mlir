// RUN: attn-opt %s --split-input-file --attn-tile --verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-tile="block-q=-1" 2>&1 | FileCheck %s --check-prefix=BLOCK

// RUN: not attn-opt %s --split-input-file --attn-tile="edge-block=-1" 2>&1 | FileCheck %s --check-prefix=EDGE
// Sizes far past any tile (an unrolled edge block of 10^7 ran for minutes):
// RUN: not attn-opt %s --split-input-file --attn-tile="edge-block=10000000" 2>&1 | FileCheck %s --check-prefix=EDGEBIG
// RUN: not attn-opt %s --split-input-file --attn-tile="block-k=100000" 2>&1 | FileCheck %s --check-prefix=BLOCKBIG
// RUN: not attn-opt %s --split-input-file --attn-tile="graph-edge-density=5" 2>&1 | FileCheck %s --check-prefix=DENSITY
// RUN: not attn-opt %s --split-input-file --attn-tile="graph-edge-density=1.001" 2>&1 | FileCheck %s --check-prefix=DENSITY-NEAR

// BLOCK: error: attn-tile: block-q must be in [0, 4096] (0: from the target), got -1
// BLOCK-NOT: see current operation
// EDGE: error: attn-tile: edge-block must be in [0, 256] (0: the target's f32 lanes), got -1
// EDGEBIG: error: attn-tile: edge-block must be in [0, 256] (0: the target's f32 lanes), got 10000000
// BLOCKBIG: error: attn-tile: block-k must be in [0, 4096] (0: from the target), got 100000
// DENSITY: error: attn-tile: graph-edge-density must be in [0, 1], got 5{{$}}
// DENSITY-NEAR: error: attn-tile: graph-edge-density must be in [0, 1], got 1.001{{$}}

func.func @dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x1x?x8xf32>, %v: tensor<1x1x?x8xf32>) -> tensor<1x2x?x8xf32> {
  // expected-error @+1 {{cannot be tiled: attn-tile needs static shapes, got 'tensor<1x2x?x8xf32>'}}
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
