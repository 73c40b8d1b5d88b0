// RUN: attn-opt %s --attn-cpu-pipeline="threads=2 target-cpu=sapphirerapids" --mlir-disable-threading --mlir-print-ir-after=attn-merge-parallel-regions -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="threads=0 target-cpu=x86-64-v4" --mlir-disable-threading --mlir-print-ir-after=attn-merge-parallel-regions -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT

// With threads, a call of attention starts its thread team once: K^T (and
// for bf16 V) laid out by one worksharing loop, the query tiles by the
// next, in one omp.parallel (attn-merge-parallel-regions; the first loop's
// implicit barrier between them). Also with the runtime's default team
// (threads=0: no num_threads).

// CHECK-LABEL: func.func @dense
// CHECK: omp.parallel num_threads
// CHECK: omp.wsloop {
// CHECK-NOT: omp.parallel
// CHECK: omp.wsloop {
// CHECK-NOT: omp.parallel
// CHECK: return
// CHECK-LABEL: func.func @causal_bf16
// CHECK: omp.parallel num_threads
// CHECK: omp.wsloop {
// CHECK-NOT: omp.parallel
// CHECK: omp.wsloop {
// CHECK-NOT: omp.parallel
// CHECK: return

// DEFAULT-LABEL: func.func @dense
// DEFAULT: omp.parallel {
// DEFAULT: omp.wsloop {
// DEFAULT-NOT: omp.parallel
// DEFAULT: omp.wsloop {
// DEFAULT-NOT: omp.parallel
// DEFAULT: return
func.func @dense(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}

func.func @causal_bf16(%q: tensor<1x8x1024x64xbf16>, %k: tensor<1x8x1024x64xbf16>, %v: tensor<1x8x1024x64xbf16>) -> tensor<1x8x1024x64xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x8x1024x64xbf16>, tensor<1x8x1024x64xbf16>, tensor<1x8x1024x64xbf16>) -> tensor<1x8x1024x64xbf16>
  return %o : tensor<1x8x1024x64xbf16>
}
