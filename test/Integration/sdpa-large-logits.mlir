// RUN: attn-run %s --all --check --input-magnitude 30 --rtol 1e-4 --pipeline attn-reference-pipeline | FileCheck %s
// RUN: attn-run %s --all --check --input-magnitude 30 --rtol 1e-4 | FileCheck %s
// RUN: attn-run %s --all --check --input-magnitude 30 --rtol 1e-4 --pipeline "attn-cpu-pipeline{block-q=4 block-k=4}" | FileCheck %s
// RUN: attn-run %s --all --check --input-magnitude 100000 --rtol 1e-4 --pipeline "attn-cpu-pipeline{block-q=4 block-k=4}" | FileCheck %s

// Inputs uniform in [-30, 30] give logits of order 1e3 to 1e4: the stable
// softmax must neither overflow nor produce NaN. The f32 scores carry absolute
// errors of ~1e-4 at this magnitude (exp turns them into relative errors of
// the weights), hence rtol 1e-4. Inputs in [-1e5, 1e5] give logits of
// order 1e9 to 1e10, one-hot rows: the tiled online softmax must keep the
// largest score's weight in range (an offset m' log2(e) rounded to f32 and
// folded into one FMA per score is off by up to half its ulp, 2^7 and more
// here, and emptied such rows).

// CHECK-LABEL: attn-run: @large_logits_dense
// CHECK: CHECK PASSED
func.func @large_logits_dense(%q: tensor<1x2x16x16xf32>, %k: tensor<1x2x16x16xf32>, %v: tensor<1x2x16x16xf32>) -> (tensor<1x2x16x16xf32>, tensor<1x2x16xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>) -> (tensor<1x2x16x16xf32>, tensor<1x2x16xf32>)
  return %o, %l : tensor<1x2x16x16xf32>, tensor<1x2x16xf32>
}

// CHECK-LABEL: attn-run: @large_logits_causal_padding
// CHECK: CHECK PASSED
func.func @large_logits_causal_padding(%q: tensor<2x2x16x16xf32>, %k: tensor<2x2x16x16xf32>, %v: tensor<2x2x16x16xf32>, %len: tensor<2xi32>) -> (tensor<2x2x16x16xf32>, tensor<2x2x16xf32>) {
  %o, %l = attn.sdpa %q, %k, %v kv_lengths(%len) {mask = #attn.mask<causal>}
      : (tensor<2x2x16x16xf32>, tensor<2x2x16x16xf32>, tensor<2x2x16x16xf32>, tensor<2xi32>) -> (tensor<2x2x16x16xf32>, tensor<2x2x16xf32>)
  return %o, %l : tensor<2x2x16x16xf32>, tensor<2x2x16xf32>
}

// Long enough for the tiled path (not the register rows of short key
// sequences): the row maxima of each key tile come from
// attn-lower-vectors' RowReductionTree, a block of rows at a time, and each
// row's scores must be offset by its own maximum (another row's, off by
// ~1e3 here, overflows or empties the row).
// CHECK-LABEL: attn-run: @large_logits_tiles
// CHECK: CHECK PASSED
func.func @large_logits_tiles(%q: tensor<1x2x256x32xf32>, %k: tensor<1x2x256x32xf32>, %v: tensor<1x2x256x32xf32>) -> (tensor<1x2x256x32xf32>, tensor<1x2x256xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : (tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>) -> (tensor<1x2x256x32xf32>, tensor<1x2x256xf32>)
  return %o, %l : tensor<1x2x256x32xf32>, tensor<1x2x256xf32>
}
