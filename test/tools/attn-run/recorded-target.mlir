// A CPU target the IR records wins over attn-run's --target-cpu /
// --target-features (the pipeline keeps what is recorded): an option that
// names another target would be ignored silently, so it is an error; the
// same target, or no option, runs.
// RUN: not attn-run %s --target-cpu=x86-64-v4 2>&1 | FileCheck %s --check-prefix=CONFLICT
// CONFLICT: attn-run: error: --target-cpu / --target-features ('x86-64-v4') conflict with the IR: @f records target_cpu 'x86-64-v3', and a recorded target wins; drop the options or the function's target attributes
// RUN: not attn-run %s --target-cpu=x86-64-v3 --target-features=-fma 2>&1 | FileCheck %s --check-prefix=FEATURES
// FEATURES: attn-run: error: --target-cpu / --target-features ('x86-64-v3 -fma') conflict with the IR: @f records target_cpu 'x86-64-v3'
// RUN: attn-run %s --target-cpu=x86-64-v3 | FileCheck %s --check-prefix=SAME
// The same machine spelt otherwise (a feature the CPU has anyway) is no
// conflict.
// RUN: attn-run %s --target-cpu=x86-64-v3 --target-features=+avx2 | FileCheck %s --check-prefix=SAME
// RUN: attn-run %s | FileCheck %s --check-prefix=SAME
// SAME: target x86-64-v3 (AVX2)
// SAME: result 0: 4xf32
// REQUIRES: host-x86-64-v3
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> attributes {target_cpu = "x86-64-v3"} {
  %e = tensor.empty() : tensor<4xf32>
  %o = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %o : tensor<4xf32>
}
