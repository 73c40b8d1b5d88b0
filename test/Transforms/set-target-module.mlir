// RUN: attn-opt %s --attn-set-target="cpu=neoverse-n1" | FileCheck %s
// RUN: not attn-opt %s --attn-set-target="triple=x86_64-unknown-linux-gnu cpu=x86-64-v3" 2>&1 | FileCheck %s --check-prefix=CONFLICT

// A module that names its triple keeps it: the pass resolves its CPU for
// that triple, and a pass option naming another triple is an error (never
// an AArch64 module with an x86 CPU).

// CHECK: module attributes {llvm.target_triple = "aarch64-unknown-linux-gnu"}
// CHECK-LABEL: func.func @arm
// CHECK-SAME: target_cpu = "neoverse-n1"
// CONFLICT: error: attn-set-target: the module targets 'aarch64-unknown-linux-gnu', the pass was given triple 'x86_64-unknown-linux-gnu'
module attributes {llvm.target_triple = "aarch64-unknown-linux-gnu"} {
  func.func @arm(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
