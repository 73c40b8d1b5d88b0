// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" | FileCheck %s --check-prefix=V3
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4 features=-avx512bw" | FileCheck %s --check-prefix=V4
// RUN: not attn-opt %s --split-input-file --attn-set-target="triple=aarch64-unknown-linux-gnu cpu=neoverse-n1" 2>/dev/null | FileCheck %s --check-prefix=ARM
// RUN: not attn-opt %s --split-input-file --attn-set-target="triple=aarch64-unknown-linux-gnu cpu=neoverse-n1" 2>&1 >/dev/null | FileCheck %s --check-prefix=ARMERR
// RUN: attn-opt %s --split-input-file --attn-set-target | FileCheck %s --check-prefix=HOST
// RUN: not attn-opt %s --split-input-file --attn-set-target="cpu=pentium5000" 2>&1 | FileCheck %s --check-prefix=BADCPU
// RUN: not attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3 features=+avx9000" 2>&1 | FileCheck %s --check-prefix=BADFEATURE
// RUN: not attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3 features=avx2" 2>&1 | FileCheck %s --check-prefix=NOSIGN
// RUN: not attn-opt %s --split-input-file --attn-set-target="triple=nonsense-arch-os cpu=generic" 2>&1 | FileCheck %s --check-prefix=BADTRIPLE
// RUN: not attn-opt %s --split-input-file --attn-set-target="triple=aarch64-unknown-linux-gnu" 2>&1 | FileCheck %s --check-prefix=HOSTARCH
// RUN: not attn-opt %s --split-input-file --attn-set-target="cpu=x86-64 features=-sse2" 2>&1 | FileCheck %s --check-prefix=NOSSE2
// RUN: not attn-opt %s --split-input-file --attn-set-target="cpu=i386" 2>&1 | FileCheck %s --check-prefix=NO64
// RUN: not attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3 features=+soft-float" 2>&1 | FileCheck %s --check-prefix=SOFT

// The target is recorded once: the triple on the module, the CPU name and
// the features that differ from the CPU's own set on every function.

// V3: module attributes {llvm.target_triple = "x86_64-{{.*}}"}
// V3-LABEL: func.func @f
// V3-SAME: target_cpu = "x86-64-v3"
// V3-NOT: target_features
// V4-LABEL: func.func @f
// V4-SAME: target_cpu = "x86-64-v4"
// V4-SAME: target_features = #llvm.target_features<["-avx512bw"]>
// ARM: module attributes {llvm.target_triple = "aarch64-unknown-linux-gnu"}
// ARM-LABEL: func.func @f
// ARM-SAME: target_cpu = "neoverse-n1"
// HOST-LABEL: func.func @f
// HOST-SAME: target_cpu = "{{[a-z0-9_-]+}}"
// BADCPU: error: attn-set-target: unknown CPU 'pentium5000'
// An x86-64 target keeps the base instruction set every x86-64 CPU has, and
// the FPU (LLVM aborted on these, and f16 with -sse2 computed zeros).
// NOSSE2: error: attn-set-target: target CPU 'x86-64' with features '-sse2' lacks 'sse2', which every x86-64 CPU has
// NO64: error: attn-set-target: target CPU 'i386' with features '' lacks '64bit', which every x86-64 CPU has
// SOFT: error: attn-set-target: target features '+soft-float': soft-float is not supported
// BADFEATURE: error: attn-set-target: unknown target feature 'avx9000'
// NOSIGN: error: attn-set-target: target feature 'avx2' must start with '+' or '-'
// BADTRIPLE: error: attn-set-target: unknown target triple 'nonsense-arch-os'
// HOSTARCH: error: attn-set-target: target CPU 'host' with triple 'aarch64-unknown-linux-gnu'
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A function that already names its CPU keeps it (the IR's or a tool's
// choice wins); the others get the pass's target.

// V3-LABEL: func.func @own
// V3-SAME: target_cpu = "znver4"
// V3-LABEL: func.func @other
// V3-SAME: target_cpu = "x86-64-v3"

// A kept CPU must exist for the module's triple.
// ARMERR: error: attn-set-target: function @own: unknown CPU 'znver4' for aarch64-unknown-linux-gnu
func.func @own(%x: tensor<4xf32>) -> tensor<4xf32> attributes {target_cpu = "znver4"} {
  return %x : tensor<4xf32>
}
func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

