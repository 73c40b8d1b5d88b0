// RUN: not attn-opt %s --attn-lower-gat="edge-block=0" 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-lower-gat="edge-block=100000" 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: attn-opt %s --split-input-file --attn-lower-gat --verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-lower-gat-unfused 2>&1 | FileCheck %s --check-prefix=UNFUSED

// CHECK: attn-lower-gat: edge-block must be in [1, 256], got 0
// BIG: attn-lower-gat: edge-block must be in [1, 256], got 100000
// UNFUSED: 'attn.gat' op cannot be lowered: attn-lower-gat-unfused needs static shapes, got 'tensor<?x3xf32>'

func.func @f(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<10xi32>) -> tensor<6x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<10xi32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

func.func @dynamic(%x: tensor<?x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<?xi32>, %ci: tensor<10xi32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{cannot be lowered: attn-lower-gat needs static shapes, got 'tensor<?x3xf32>'}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<?x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?xi32>, tensor<10xi32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
