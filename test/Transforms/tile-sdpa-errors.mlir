// RUN: attn-opt %s --split-input-file --attn-tile --verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-tile="block-q=-1" 2>&1 | FileCheck %s --check-prefix=BLOCK

// RUN: not attn-opt %s --split-input-file --attn-tile="edge-block=-1" 2>&1 | FileCheck %s --check-prefix=EDGE

// BLOCK: attn-tile: block-q and block-k must be >= 1 (0: from the target), got -1 and 0
// EDGE: attn-tile: edge-block must be >= 1 (0: the target's f32 lanes), got -1

func.func @dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x1x?x8xf32>, %v: tensor<1x1x?x8xf32>) -> tensor<1x2x?x8xf32> {
  // expected-error @+1 {{cannot be tiled: attn-tile needs static shapes, got 'tensor<1x2x?x8xf32>'}}
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
