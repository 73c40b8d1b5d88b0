// RUN: attn-opt %s --attn-cpu-pipeline | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="vectorize=false" | FileCheck %s --check-prefix=SCALAR
// RUN: attn-opt %s --attn-cpu-pipeline="threads=2 block-q=4 block-k=4" | FileCheck %s --check-prefix=OMP
// RUN: attn-opt %s --attn-cpu-pipeline="linalg-only=true" | FileCheck %s --check-prefix=LINALG
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=x86-64-v3" | FileCheck %s --check-prefix=TARGET
// RUN: attn-opt %s --attn-cpu-pipeline="target-triple=aarch64-unknown-linux-gnu target-cpu=neoverse-n1" | FileCheck %s --check-prefix=ARM

// The target is chosen once (attn-set-target, the host by default) and
// reaches every LLVM function.
// TARGET: llvm.target_triple = "x86_64-
// TARGET: llvm.func @sdpa({{.*}}) attributes {{{.*}}target_cpu = "x86-64-v3"
// ARM: llvm.target_triple = "aarch64-unknown-linux-gnu"
// ARM: llvm.func @sdpa({{.*}}) attributes {{{.*}}target_cpu = "neoverse-n1"

// With linalg-only the pipeline stops after the attn lowerings: tiled loops
// and linalg on tensors, no attn op, nothing bufferized or vectorized yet.
// LINALG-LABEL: func.func @sdpa
// LINALG-NOT: attn.{{sdpa|mha|gat}}
// LINALG-NOT: vector.
// LINALG-NOT: memref.
// LINALG: scf.forall
// LINALG: linalg.generic
// LINALG-NOT: llvm.func

// The CPU pipeline takes attn IR (sdpa tiled, mha decomposed and tiled, gat
// through the fused lowering attn-lower-gat) to the LLVM dialect. Vectorized by default:
// vector FMAs and a polynomial exp (no libm call); sequential by default; with
// threads != 1 the query-tile loop is an OpenMP parallel loop.

// CHECK-NOT: attn.
// CHECK-NOT: scf.
// CHECK-NOT: omp.
// CHECK-LABEL: llvm.func @sdpa
// CHECK-NOT: @expf
// CHECK: llvm.intr.fma{{.*}}vector<
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @mha
// CHECK-LABEL: llvm.func @gat

// SCALAR-LABEL: llvm.func @sdpa
// SCALAR-NOT: vector<
// The unvectorized path: scalar code, the softmax's exp as the FMAs of its
// polynomial (buildExpOfNonPositive), the same arithmetic as the vectors'.
// SCALAR: llvm.intr.fma({{.*}}) : (f32, f32, f32) -> f32
// SCALAR: llvm.return

// OMP-LABEL: llvm.func @sdpa
// OMP: omp.parallel num_threads
// OMP: omp.wsloop
// OMP: omp.loop_nest
func.func @sdpa(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %o, %l : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
}

func.func @mha(%x: tensor<1x4x8xf32>, %w: tensor<24x8xf32>, %wo: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  %y = attn.mha %x, %x, %x in_proj(%w) out_proj(%wo) {num_heads = 2 : i64}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<24x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

func.func @gat(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi32>, %ci: tensor<10xi32>) -> tensor<6x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci)
      : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi32>, tensor<10xi32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}
