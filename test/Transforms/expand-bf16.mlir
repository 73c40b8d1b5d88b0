// RUN: attn-opt %s --attn-set-target="cpu=x86-64-v4" --attn-expand-bf16 | FileCheck %s
// RUN: attn-opt %s --attn-set-target="cpu=znver4" --attn-expand-bf16 | FileCheck %s --check-prefix=BF16

// f32 -> bf16 rounding and bf16 -> f32 widening become integer arithmetic on
// the bit patterns (no arith.truncf / arith.extf on bf16 is left for LLVM,
// which would call __truncsfbf2); f16 conversions are left alone. A target
// with AVX512-BF16 keeps the rounding, which LLVM lowers to vcvtneps2bf16.

// BF16-LABEL: func @round_trip
// BF16: arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// BF16-NOT: arith.extf {{.*}} : vector<16xbf16>
// BF16: arith.shli

// CHECK-LABEL: func @round_trip
// CHECK-NOT: arith.truncf {{.*}} to vector<16xbf16>
// CHECK: arith.bitcast {{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shrui
// CHECK-NOT: arith.extf {{.*}} : vector<16xbf16>
// CHECK: arith.shli
// CHECK: arith.truncf {{.*}} : vector<16xf32> to vector<16xf16>
func.func @round_trip(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf16>) {
  %b = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  %y = arith.extf %b : vector<16xbf16> to vector<16xf32>
  %h = arith.truncf %x : vector<16xf32> to vector<16xf16>
  return %y, %h : vector<16xf32>, vector<16xf16>
}
