// RUN: attn-opt %s --attn-runtime-checks --verify-diagnostics -o /dev/null

// A function of that name with another type is an error.

// expected-error @+1 {{@attn_check_failed is attn-runtime-checks' runtime function, (!llvm.ptr) -> ()}}
func.func private @attn_check_failed(i32)
func.func @clash(%m: memref<4xf32>, %i: index) -> f32 {
  %x = memref.load %m[%i] : memref<4xf32>
  return %x : f32
}
