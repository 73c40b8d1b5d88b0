// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-sdpa-to-gpu="subgroup-size=8"
// Options out of range are one error each before anything is built (a
// subgroup of 2^32 + 1 lanes was truncated to 1).
// RUN: not attn-opt %s --split-input-file --attn-sdpa-to-gpu="subgroup-size=4294967297" 2>&1 | FileCheck %s --check-prefix=SUBGROUP
// RUN: not attn-opt %s --split-input-file --attn-gat-to-gpu="rows=0" 2>&1 | FileCheck %s --check-prefix=ROWS
// SUBGROUP: error: attn-sdpa-to-gpu: subgroup-size must be in [1, 128], got 4294967297
// ROWS: error: attn-gat-to-gpu: rows must be in [1, 1024], got 0

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

// -----

func.func @scalar_capture(%q: tensor<1x2x8x16xf32>, %cap: f32) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{attn-sdpa-to-gpu: a score_mod / mask_mod region reads a value defined outside it that is neither a constant nor a tensor (of type 'f32'); on the GPU path pass it as a tensor<1x...> and read it with tensor.extract}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %r = arith.minimumf %s, %cap : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x2x8x16xf32>
}
