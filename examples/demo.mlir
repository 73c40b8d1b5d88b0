// The README's demo: one decoder-style attention block as a researcher would
// write it. Causal grouped-query attention (8 query heads sharing 2 key/value
// heads) with ALiBi position slopes over a padded batch of two sequences of
// 256 tokens, returning the output and the log-sum-exp.
//
//   attn-run examples/demo.mlir --check --repeat 5
//
// JIT-compiles it through attn-reference-pipeline, runs it on seeded inputs
// (kv_lengths random, ALiBi slopes 2^(-8(h+1)/H)), prints timings and a
// summary of each result, and checks both results against the C++ reference.

func.func @decoder_attention(%q: tensor<2x8x256x64xf32>, %k: tensor<2x2x256x64xf32>,
                             %v: tensor<2x2x256x64xf32>, %kv_len: tensor<2xi32>,
                             %slopes: tensor<8xf32>)
    -> (tensor<2x8x256x64xf32>, tensor<2x8x256xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v kv_lengths(%kv_len) alibi(%slopes)
      {mask = #attn.mask<causal>}
      : (tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>,
         tensor<2xi32>, tensor<8xf32>)
      -> (tensor<2x8x256x64xf32>, tensor<2x8x256xf32>)
  return %o, %lse : tensor<2x8x256x64xf32>, tensor<2x8x256xf32>
}
