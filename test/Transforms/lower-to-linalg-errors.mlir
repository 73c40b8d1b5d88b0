// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg --verify-diagnostics

// The reference lowering needs static shapes and says so.

func.func @dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x1x?x8xf32>, %v: tensor<1x1x?x8xf32>) -> tensor<1x2x?x8xf32> {
  // expected-error @+1 {{cannot be lowered: the reference lowering needs static shapes, got 'tensor<1x2x?x8xf32>'}}
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
