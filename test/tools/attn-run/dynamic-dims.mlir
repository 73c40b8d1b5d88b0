// Lengths from the inputs: a function written with dynamic dimensions (`?`)
// runs at the lengths of its --input files. attn-run reads them before
// compiling, gives the arguments their shapes, the attn ops' results the
// shapes their operands imply, verifies the function again and compiles it
// for those shapes (one compilation per run, as for any attn-run call).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python -c "import numpy as np; g = np.random.default_rng(1); [np.save('%t/q%%d.npy' %% n, g.standard_normal((1, 2, n, 16)).astype(np.float32)) for n in (40, 7)]; np.save('%t/e8.npy', g.standard_normal((1, 2, 7, 8)).astype(np.float32)); np.save('%t/r3.npy', g.standard_normal((2, 7, 16)).astype(np.float32)); np.save('%t/x.npy', g.standard_normal((9, 6)).astype(np.float32)); np.save('%t/rp.npy', np.array([0, 2, 2, 5, 6, 6, 8, 9, 9, 12], np.int64)); np.save('%t/ci.npy', np.array([1, 3, 0, 0, 8, 2, 4, 5, 7, 1, 2, 3], np.int64))"
//
// Causal self-attention at 40 and at 7 positions, against the reference.
// RUN: attn-run %s --entry causal --input 0=%t/q40.npy --input 1=%t/q40.npy --input 2=%t/q40.npy --check | FileCheck %s --check-prefix=L40
// L40: result 0: 1x2x40x16xf32
// L40: CHECK PASSED
// RUN: attn-run %s --entry causal --input 0=%t/q7.npy --input 1=%t/q7.npy --input 2=%t/q7.npy --check | FileCheck %s --check-prefix=L7
// L7: result 0: 1x2x7x16xf32
// L7: CHECK PASSED
// Queries and keys of different lengths, with the log-sum-exp.
// RUN: attn-run %s --entry cross --input 0=%t/q7.npy --input 1=%t/q40.npy --input 2=%t/q40.npy --check | FileCheck %s --check-prefix=CROSS
// CROSS: result 0: 1x2x7x16xf32
// CROSS: result 1: 1x2x7xf32
// CROSS: CHECK PASSED
// A GAT layer over a graph of the inputs' size (9 nodes, 12 edges), with
// its attention weights (12 + 9 rows).
// RUN: attn-run %s --entry gat --input 0=%t/x.npy --input 4=%t/rp.npy --input 5=%t/ci.npy --check | FileCheck %s --check-prefix=GAT
// GAT: result 0: 9x12xf32
// GAT: result 1: 21x3xf32
// GAT: CHECK PASSED
//
// Errors: a dynamic argument without a file, a file of another rank or
// static size, a non-attn op with dynamic results, sizes the op refuses
// once set, and dynamic functions under --all.
// RUN: not attn-run %s --entry causal --input 0=%t/q7.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: attn-run: error: @causal argument 1 (tensor<1x2x?x16xf32>) has dynamic dimensions: give it with --input 1=FILE.npy (its shape sets them)
// RUN: not attn-run %s --entry causal --input 0=%t/r3.npy --input 1=%t/q7.npy --input 2=%t/q7.npy 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: attn-run: error: @causal input 0: shape 2x7x16 does not fit the argument's type tensor<1x2x?x16xf32>
// RUN: not attn-run %s --entry causal --input 0=%t/e8.npy --input 1=%t/q7.npy --input 2=%t/q7.npy 2>&1 | FileCheck %s --check-prefix=STATIC
// STATIC: attn-run: error: @causal input 0: shape 1x2x7x8 does not fit the argument's type tensor<1x2x?x16xf32>
// RUN: not attn-run %s --entry other --input 0=%t/q7.npy 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: attn-run: error: @other: 'arith.addf' has dynamic result types: dynamic dimensions are specialized through attn ops only (give the other ops static types)
// RUN: not attn-run %s --entry head_dim --input 0=%t/e8.npy --input 1=%t/q7.npy --input 2=%t/q7.npy 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: error: 'attn.sdpa' op expects
// VERIFY: attn-run: error: @head_dim does not verify with its dynamic dimensions set from the inputs (see the error above)
// RUN: not attn-run %s --all 2>&1 | FileCheck %s --check-prefix=ALL
// ALL: attn-run: error: @calls_helper has dynamic dimensions: run it alone (--entry calls_helper) with --input files, whose shapes set them

// A private helper before its only caller: with --entry causal both go
// (the helper once its caller is gone), so neither is compiled.
func.func private @helper(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

func.func @calls_helper(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = func.call @helper(%q) : (tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

func.func @causal(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

func.func @cross(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> (tensor<1x2x?x16xf32>, tensor<1x2x?xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> (tensor<1x2x?x16xf32>, tensor<1x2x?xf32>)
  return %o, %lse : tensor<1x2x?x16xf32>, tensor<1x2x?xf32>
}

func.func @gat(%x: tensor<?x6xf32>, %w: tensor<12x6xf32>, %as: tensor<3x4xf32>, %ad: tensor<3x4xf32>, %rp: tensor<?xi64>, %ci: tensor<?xi64>) -> (tensor<?x12xf32>, tensor<?x3xf32>) {
  %y, %a = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<?x6xf32>, tensor<12x6xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<?xi64>, tensor<?xi64>) -> (tensor<?x12xf32>, tensor<?x3xf32>)
  return %y, %a : tensor<?x12xf32>, tensor<?x3xf32>
}

func.func @other(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = arith.addf %q, %q : tensor<1x2x?x16xf32>
  return %s : tensor<1x2x?x16xf32>
}

func.func @head_dim(%q: tensor<1x2x?x?xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x2x?x?xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
