// RUN: attn-opt %s --attn-expand-bf16 | FileCheck %s

// f32 -> bf16 rounding and bf16 -> f32 widening become integer arithmetic on
// the bit patterns (no arith.truncf / arith.extf on bf16 is left for LLVM,
// which would call __truncsfbf2); f16 conversions are left alone.

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
