// RUN: attn-opt %s --verify-diagnostics --attn-gat-to-gpu="subgroup-size=8"

func.func @bf16(%x: tensor<10x8xbf16>, %w: tensor<16x8xbf16>, %as: tensor<2x8xbf16>, %ad: tensor<2x8xbf16>, %rp: tensor<11xi64>, %ci: tensor<30xi64>) -> tensor<10x16xbf16> {
  // expected-error @+1 {{attn-gat-to-gpu: element type 'bf16' is not supported on the GPU path (f32; f16/bf16 are widened by attn-decompose-mha first)}}
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<10x8xbf16>, tensor<16x8xbf16>, tensor<2x8xbf16>, tensor<2x8xbf16>, tensor<11xi64>, tensor<30xi64>) -> tensor<10x16xbf16>
  return %y : tensor<10x16xbf16>
}
