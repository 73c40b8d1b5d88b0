// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-nest-spirv-modules | FileCheck %s

// convert-gpu-to-spirv's module for @kernels moves inside it, after its
// kernels; other SPIR-V modules stay where they are.
// CHECK-NOT: spirv.module @__spv__kernels
// CHECK: spirv.module @other
// CHECK: gpu.module @kernels
// CHECK-NEXT: gpu.func @k
// CHECK: spirv.module @__spv__kernels
module attributes {gpu.container_module} {
  spirv.module @__spv__kernels Logical GLSL450 {
  }
  spirv.module @other Logical GLSL450 {
  }
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{attn-nest-spirv-modules: no gpu.module @gone for this SPIR-V module}}
  spirv.module @__spv__gone Logical GLSL450 {
  }
}
