// RUN: attn-opt %s --split-input-file --attn-runtime-checks --verify-diagnostics -o /dev/null

// The runtime provides @attn_check_failed: the module may only declare it,
// with its type.

// expected-error @+1 {{@attn_check_failed is attn-runtime-checks' runtime function: the module may only declare it, as func.func private @attn_check_failed(!llvm.ptr)}}
func.func private @attn_check_failed(i32)
func.func @clash(%m: memref<4xf32>, %i: index) -> f32 {
  %x = memref.load %m[%i] : memref<4xf32>
  return %x : f32
}

// -----

// A definition (the JIT would see two), even without a check to call it.

// expected-error @+1 {{@attn_check_failed is attn-runtime-checks' runtime function}}
func.func private @attn_check_failed(%p: !llvm.ptr) {
  return
}

// -----

// expected-error @+1 {{@attn_check_failed is attn-runtime-checks' runtime function}}
llvm.mlir.global internal constant @attn_check_failed(0 : i32) : i32
