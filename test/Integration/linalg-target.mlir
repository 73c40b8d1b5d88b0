// A module with no attn op left (linalg code such as attn-cpu-pipeline's
// linalg-only=true output, which scripts/softmax-ceiling.py edits and times)
// is compiled for attn-run's --target-cpu like any other, and attn-run says
// so: its run-time checks declare the runtime's @attn_check_failed, a
// declaration that takes no target of its own (it once took the host's,
// and attn-run named the host as the target).
//
// RUN: attn-opt %s --attn-runtime-checks --attn-set-target="cpu=x86-64-v3" | FileCheck %s --check-prefix=IR
// IR: func.func private @attn_check_failed(!llvm.ptr){{$}}
// IR: func.func @rows({{.*}} attributes {target_cpu = "x86-64-v3"
//
// RUN: %if host-x86-64-v3 %{ attn-run %s --target-cpu=x86-64-v3 | FileCheck %s %}
// CHECK: target x86-64-v3 (AVX2)
// CHECK: result 0: 4x16xf32
#map = affine_map<(d0) -> (d0)>
func.func @rows(%a: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %r = scf.forall (%i) in (4) shared_outs(%o = %e) -> (tensor<4x16xf32>) {
    %s = tensor.extract_slice %a[%i, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<16xf32>
    %t = tensor.empty() : tensor<16xf32>
    %d = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%s : tensor<16xf32>) outs(%t : tensor<16xf32>) {
    ^bb0(%x: f32, %y: f32):
      %z = arith.addf %x, %x : f32
      linalg.yield %z : f32
    } -> tensor<16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %d into %o[%i, 0] [1, 16] [1, 1] : tensor<16xf32> into tensor<4x16xf32>
    }
  }
  return %r : tensor<4x16xf32>
}
