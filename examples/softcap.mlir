// Tanh soft-capping of the logits on causal attention: the worked example of
// docs/programmable-attention.md (run by test/docs/examples.test).
//
//   build/bin/attn-run examples/softcap.mlir --check
//   build/bin/attn-run examples/softcap.mlir --check --pipeline attn-reference-pipeline

func.func @softcap(%q: tensor<1x8x512x64xf32>, %k: tensor<1x8x512x64xf32>,
                   %v: tensor<1x8x512x64xf32>) -> tensor<1x8x512x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x8x512x64xf32>, tensor<1x8x512x64xf32>, tensor<1x8x512x64xf32>)
      -> tensor<1x8x512x64xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x8x512x64xf32>
}
