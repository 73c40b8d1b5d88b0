// The tensor-core kernel of attn-gpu-pipeline{target=cuda} (sm_80 and
// newer; attn-sdpa-to-gpu{tensor-cores}, docs/gpu.md) on the f16 / bf16
// shapes of test/Integration/tensor-cores.mlir: CUDA's ptxas assembles
// every kernel for sm_80 and sm_90a within the budget of the launch
// configuration (32 x 4 threads: at most 255 registers, no spills at
// E <= 128) and the staged tiles' static shared memory (64 keys x (E + 8)
// x 2 bytes for K, (Ev + 8) x 2 for V; 32 keys at E = 256). The PTX has the
// tensor-core instructions for both types, ldmatrix (K as it is, V
// transposed), cp.async with zero-fill, and 16-byte aligned tiles.
// REQUIRES: ptxas
// RUN: attn-opt %S/../Integration/tensor-cores.mlir --attn-gpu-pipeline="target=cuda chip=sm_80" | %python %S/../Inputs/gpu-binary.py %t80 | FileCheck %s --check-prefix=COUNT
// RUN: attn-opt %S/../Integration/tensor-cores.mlir --attn-gpu-pipeline="target=cuda chip=sm_90a" | %python %S/../Inputs/gpu-binary.py %t90
// RUN: for n in 0 2 3 4 5 6; do %ptxas -arch=sm_80 -v %t80.$n -o %t80.$n.cubin 2>&1; done | FileCheck %s --check-prefix=E64
// RUN: for n in 0 2 3 4 5 6; do %ptxas -arch=sm_90a -v %t90.$n -o %t90.$n.cubin 2>&1; done | FileCheck %s --check-prefix=E64
// RUN: %ptxas -arch=sm_80 -v %t80.1 -o %t80.1.cubin 2>&1 | FileCheck %s --check-prefix=E128
// RUN: %ptxas -arch=sm_90a -v %t90.1 -o %t90.1.cubin 2>&1 | FileCheck %s --check-prefix=E128
// RUN: %ptxas -arch=sm_80 -v %t80.7 -o %t80.7.cubin 2>&1 | FileCheck %s --check-prefix=E16
// RUN: %ptxas -arch=sm_90a -v %t90.7 -o %t90.7.cubin 2>&1 | FileCheck %s --check-prefix=E16
// RUN: %ptxas -arch=sm_90a -v %t90.8 -o %t90.8.cubin 2>&1 | FileCheck %s --check-prefix=E256
// RUN: %ptxas -arch=sm_80 -v %t80.8 -o %t80.8.cubin 2>&1 | FileCheck %s --check-prefix=E256-SM80
// RUN: FileCheck %s --check-prefix=F16 < %t90.0
// RUN: FileCheck %s --check-prefix=BF16 < %t90.1

// COUNT: 9 object(s)
// Six kernels at E = 64 (dense, local, padding, bias tables, softcap,
// documents): 2 x 64 x 72 x 2 bytes.
// E64-COUNT-6: stack frame, 0 bytes spill stores, 0 bytes spill loads
// E64-NOT: spill
// E128: stack frame, 0 bytes spill stores, 0 bytes spill loads
// E128: Used {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, used 1 barriers, 34816 bytes smem
// E16: stack frame, 0 bytes spill stores, 0 bytes spill loads
// E16: Used {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, used 1 barriers, 10240 bytes smem
// E256: stack frame, 0 bytes spill stores, 0 bytes spill loads
// E256: Used {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, used 1 barriers, 33792 bytes smem
// At E = 256 on sm_80 the O accumulators (128 registers) leave ptxas a few
// bytes short: under 64 bytes of spills.
// E256-SM80: stack frame, {{([0-9]|[1-5][0-9]|6[0-3])}} bytes spill stores
// E256-SM80: 33792 bytes smem

// F16: .target sm_90a
// F16: .shared .align 16 .b8 {{.*}}[9216];
// F16: .shared .align 16 .b8 {{.*}}[9216];
// F16-DAG: cp.async.cg.shared.global [{{.+}}], [{{.+}}], 16, 16;
// F16-DAG: cp.async.commit_group;
// F16-DAG: cp.async.wait_group 1;
// F16-DAG: bar.sync
// F16-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// F16-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// F16-DAG: shfl.sync.bfly.b32
// F16-DAG: cp.async.wait_group 0;
// F16-DAG: cp.async.cg.shared.global [{{.+}}], [{{.+}}], 16, %r{{[0-9]+}};
// F16-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// BF16-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BF16-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
