// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-sdpa-to-gpu="subgroup-size=8"

func.func @dynamic(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  // expected-error @+1 {{attn-sdpa-to-gpu: dynamic shapes are not supported on the GPU path (operand of type 'tensor<1x2x?x16xf32>')}}
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

func.func @f16_bias(%q: tensor<1x2x8x16xf16>, %b: tensor<1x1x8x8xf16>) -> tensor<1x2x8x16xf16> {
  // expected-error @+1 {{attn-sdpa-to-gpu: score modifications on f16 operands are not supported on the GPU path yet}}
  %o = attn.sdpa %q, %q, %q bias(%b) : (tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x1x8x8xf16>) -> tensor<1x2x8x16xf16>
  return %o : tensor<1x2x8x16xf16>
}

// -----

func.func @bf16(%q: tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16> {
  // expected-error @+1 {{attn-sdpa-to-gpu: element type 'bf16' is not supported on the GPU path (f32, f16)}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16>
  return %o : tensor<1x2x8x16xbf16>
}
