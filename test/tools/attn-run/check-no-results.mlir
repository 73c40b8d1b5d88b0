// --check on a function that returns nothing compares nothing: it says so
// instead of CHECK PASSED.
// RUN: attn-run %s --check | FileCheck %s
// CHECK: CHECK SKIPPED: @f returns no result to compare
// CHECK-NOT: CHECK PASSED
func.func @f(%a: tensor<4xf32>) {
  return
}
