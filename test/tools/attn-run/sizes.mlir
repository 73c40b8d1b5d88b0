// The static shapes of a function claim memory: attn-run checks every value
// (arguments, results, each op's results) and the arguments and results
// together against the memory budget before generating any input, and
// refuses shapes whose byte count passes 2^64 (a wrapped count allocated a
// tiny buffer and overflowed it).
//
// RUN: rm -rf %t && split-file %s %t
// RUN: not attn-run %t/huge-arg.mlir 2>&1 | FileCheck %s --check-prefix=ARG
// ARG: attn-run: error: {{.*}}huge-arg.mlir:1:14: argument #0 of @f of type tensor<100000x100000x64xf32> needs 2.3 TiB (2560000000000 bytes), more than the memory budget of
// RUN: not attn-run %t/huge-value.mlir 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: attn-run: error: {{.*}}huge-value.mlir:2:8: 'tensor.empty' result #0 of type tensor<100000x100000x64xf32> needs 2.3 TiB
// RUN: not attn-run %t/wraps.mlir 2>&1 | FileCheck %s --check-prefix=WRAPS
// WRAPS: attn-run: error: {{.*}}wraps.mlir:1:14: argument #0 of @f of type tensor<4611686018427387904xf32>: more than 2^64 bytes
// RUN: not attn-run %t/sdpa.mlir --memory-budget=40K 2>&1 | FileCheck %s --check-prefix=TOGETHER
// TOGETHER: attn-run: error: @f's arguments and results together needs 64.0 KiB (65536 bytes), more than the memory budget of 40.0 KiB (40960 bytes; --memory-budget or ATTN_MEMORY_BUDGET sets it)
// RUN: attn-run %t/sdpa.mlir --memory-budget=64K --check | FileCheck %s --check-prefix=FITS
// FITS: CHECK PASSED
// With --all, a function over the budget fails alone; the others run.
// RUN: not attn-run %t/mixed.mlir --all --check > %t/mixed.out 2> %t/mixed.err
// RUN: FileCheck %s --check-prefix=MIXED < %t/mixed.out
// RUN: FileCheck %s --check-prefix=MIXEDERR < %t/mixed.err
// MIXED: CHECK PASSED
// MIXEDERR: attn-run: error: {{.*}}mixed.mlir:5:17: argument #0 of @huge of type tensor<100000x100000x64xf32> needs 2.3 TiB
// --check: the C++ reference's own temporaries (a GAT layer's two f64
// projections here, 7.8 MiB) are checked too, before it runs.
// RUN: attn-run %t/gat.mlir --memory-budget=4M | FileCheck %s --check-prefix=GATJIT
// GATJIT: result 0: 1000x512xf32
// RUN: not attn-run %t/gat.mlir --memory-budget=4M --check 2>&1 | FileCheck %s --check-prefix=GATREF
// GATREF: attn-run: error: the C++ reference's temporaries for 'attn.gat' needs 7.8 MiB (8192000 bytes), more than the memory budget of 4.0 MiB
// RUN: attn-run %t/gat.mlir --memory-budget=16M --check | FileCheck %s --check-prefix=FITS
// RUN: not attn-run %t/sdpa.mlir --memory-budget=lots 2>&1 | FileCheck %s --check-prefix=BADSIZE
// BADSIZE: attn-run: error: --memory-budget: invalid size 'lots': expected a positive number of bytes
// RUN: not env ATTN_MEMORY_BUDGET=0 attn-run %t/sdpa.mlir 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: attn-run: error: ATTN_MEMORY_BUDGET: invalid size '0'

//--- huge-arg.mlir
func.func @f(%q: tensor<100000x100000x64xf32>) -> tensor<100000x100000x64xf32> {
  return %q : tensor<100000x100000x64xf32>
}
//--- huge-value.mlir
func.func @f(%q: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<100000x100000x64xf32>
  return %q : tensor<4xf32>
}
//--- wraps.mlir
func.func @f(%q: tensor<4611686018427387904xf32>) -> tensor<4611686018427387904xf32> {
  return %q : tensor<4611686018427387904xf32>
}
//--- mixed.mlir
func.func @ok(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}
func.func @huge(%q: tensor<100000x100000x64xf32>) -> tensor<100000x100000x64xf32> {
  return %q : tensor<100000x100000x64xf32>
}
//--- sdpa.mlir
func.func @f(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32>
  return %o : tensor<1x2x64x32xf32>
}
//--- gat.mlir
func.func @f(%x: tensor<1000x1xf32>, %w: tensor<512x1xf32>, %as: tensor<8x64xf32>, %ad: tensor<8x64xf32>, %rp: tensor<1001xi32>, %ci: tensor<2000xi32>) -> tensor<1000x512xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<1000x1xf32>, tensor<512x1xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<1001xi32>, tensor<2000xi32>) -> tensor<1000x512xf32>
  return %y : tensor<1000x512xf32>
}
