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
// A target given inside --pipeline would be ignored (attn-run records its
// own first): refused, naming the options that set it.
// RUN: not attn-run %t/main.mlir --entry ok --pipeline "attn-cpu-pipeline{target-cpu=sapphirerapids}" 2>&1 | FileCheck %s --check-prefix=PIPETARGET
// PIPETARGET: attn-run: error: --pipeline: give the CPU target with attn-run's --target-cpu / --target-features, not the pipeline's target-cpu (attn-run records its target first, and a recorded target wins)
// Code that would end in a signal, not an error, is refused before
// compiling: a constant index outside a tensor (a segfault), recursion (a
// stack overflow). Indices known only at run time, and cf.assert, are
// checked by the compiled code (runtime-checks.mlir).
// RUN: not attn-run %t/oob.mlir 2>&1 | FileCheck %s --check-prefix=OOB
// OOB: oob.mlir:3:8: error: index 100000000000 is outside dimension 0 of size 4: the compiled code would access memory outside the buffer
// OOB-NOT: see current operation
// Indices of integer arithmetic on constants, of affine maps over them, and
// vectors reaching past the end count too.
// RUN: not attn-run %t/fold.mlir 2>&1 | FileCheck %s --check-prefix=FOLD
// FOLD: fold.mlir:4:8: error: index 9 is outside dimension 0 of size 4
// RUN: not attn-run %t/affine.mlir 2>&1 | FileCheck %s --check-prefix=AFFINE
// AFFINE: affine.mlir:4:8: error: index 6 is outside dimension 0 of size 4
// RUN: not attn-run %t/vector.mlir 2>&1 | FileCheck %s --check-prefix=VECTOR
// VECTOR: vector.mlir:4:8: error: index 4 (and the 7 after it) is outside dimension 0 of size 8
// RUN: not attn-run %t/rec.mlir 2>&1 | FileCheck %s --check-prefix=REC
// REC: rec.mlir:6:8: error: @g is called recursively: attn-run runs no recursion (the stack would overflow)
// A call chain too deep for a recursive search (30 000 functions, the last
// calling the first) is the same one error, not a stack overflow.
// RUN: %python %t/make_chain.py > %t/chain.mlir
// RUN: not attn-run %t/chain.mlir 2>&1 | FileCheck %s --check-prefix=CHAIN
// CHAIN: {{.*}}:{{[0-9]+}}:8: error: @f0 is called recursively
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
//--- oob.mlir
func.func @f(%a: tensor<4xf32>) -> tensor<1xf32> {
  %c = arith.constant 100000000000 : index
  %x = tensor.extract %a[%c] : tensor<4xf32>
  %t = tensor.from_elements %x : tensor<1xf32>
  return %t : tensor<1xf32>
}
//--- rec.mlir
func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
//--- fold.mlir
func.func @f(%a: tensor<4xf32>) -> tensor<1xf32> {
  %c3 = arith.constant 3 : index
  %c = arith.muli %c3, %c3 : index
  %x = tensor.extract %a[%c] : tensor<4xf32>
  %t = tensor.from_elements %x : tensor<1xf32>
  return %t : tensor<1xf32>
}
//--- affine.mlir
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  %c2 = arith.constant 2 : index
  %x = affine.load %m[%c2 * 3] : memref<4xf32>
  memref.dealloc %m : memref<4xf32>
  return %a : tensor<4xf32>
}
//--- vector.mlir
func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %m = memref.alloc() : memref<8xf32>
  %c4 = arith.constant 4 : index
  %v = vector.load %m[%c4] : memref<8xf32>, vector<8xf32>
  memref.dealloc %m : memref<8xf32>
  return %a : tensor<8xf32>
}
//--- make_chain.py
n = 30000
t = "tensor<4xf32>"
for i in range(n):
    print(f"func.func private @f{i}(%a: {t}) -> {t} {{")
    print(f"  %r = call @f{(i + 1) % n}(%a) : ({t}) -> {t}")
    print(f"  return %r : {t}")
    print("}")
print(f"func.func @main(%a: {t}) -> {t} {{")
print(f"  %r = call @f0(%a) : ({t}) -> {t}")
print(f"  return %r : {t}")
print("}")
