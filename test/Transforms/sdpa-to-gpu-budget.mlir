// RUN: attn-opt %s --verify-diagnostics --attn-sdpa-to-gpu="subgroup-size=8 block-k=64 shared-memory=32768"

// 64 keys of E = Ev = 128 in f32 are 64 KiB of workgroup memory.
func.func @too_big(%q: tensor<1x1x64x128xf32>) -> tensor<1x1x64x128xf32> {
  // expected-error @+1 {{attn-sdpa-to-gpu: block-k = 64 needs 65536 bytes of workgroup memory for K and V, over shared-memory = 32768}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>) -> tensor<1x1x64x128xf32>
  return %o : tensor<1x1x64x128xf32>
}
