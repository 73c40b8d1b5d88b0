// Errors of the tool itself: which function, unparsable IR, unsupported
// signatures, functions the reference cannot evaluate.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: not attn-run %t/main.mlir 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// RUN: not attn-run %t/main.mlir --entry nope 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not attn-run %t/main.mlir --entry dynamic 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: not attn-run %t/main.mlir --entry not_attn --check 2>&1 | FileCheck %s --check-prefix=NOTATTN
// RUN: not attn-run %t/main.mlir --entry ok --pipeline "bogus-pass" 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not attn-run %t/main.mlir --all --dump-dir %t 2>&1 | FileCheck %s --check-prefix=ALLDUMP
// RUN: not attn-run %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not attn-run %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=PARSE

// AMBIGUOUS: attn-run: error: 4 public functions in {{.*}}; choose one with --entry, or run them all with --all
// NOFUNC: attn-run: error: no public function @nope
// DYNAMIC: attn-run: error: @dynamic argument 0 (tensor<1x1x?x4xf32>) has dynamic dimensions: give it with --input 0=FILE.npy (its shape sets them)
// NOTATTN: attn-run: error: the C++ reference evaluates functions made of attn ops only; found 'tensor.empty'
// PIPELINE: attn-run: error: invalid pass pipeline 'bogus-pass'
// A pipeline that does not reach the LLVM dialect, or returns results
// instead of writing the out-params attn-run passes (the caller read zeros).
// RUN: not attn-run %t/main.mlir --entry ok --pipeline "canonicalize" 2>&1 | FileCheck %s --check-prefix=NOTLLVM
// NOTLLVM: attn-run: error: the pipeline 'canonicalize' leaves @ok as a func.func: attn-run calls what attn-cpu-pipeline, attn-reference-pipeline or attn-gpu-pipeline make of it (the LLVM dialect)
// RUN: not attn-run %t/main.mlir --entry ok --pipeline "attn-cpu-pipeline{out-params=false}" 2>&1 | FileCheck %s --check-prefix=OUTPARAMS
// OUTPARAMS: attn-run: error: the pipeline 'attn-cpu-pipeline{out-params=false}' returns the results of @ok instead of writing them through out-params (attn-run's calling convention): drop out-params=false
// ALLDUMP: attn-run: error: --input and --dump-dir need a single function, not --all
// NOFILE: attn-run: error: cannot open input file '{{.*}}missing.mlir'
// PARSE: bad.mlir:2:{{[0-9]+}}: error: 'attn.sdpa' op expects one batch size, got query 1, key 2, value 2

//--- main.mlir
func.func @ok(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}
func.func @dynamic(%q: tensor<1x1x?x4xf32>) -> tensor<1x1x?x4xf32> {
  return %q : tensor<1x1x?x4xf32>
}
func.func @not_attn(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @also_ok(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

//--- bad.mlir
func.func @f(%q: tensor<1x1x4x4xf32>, %k: tensor<2x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}
