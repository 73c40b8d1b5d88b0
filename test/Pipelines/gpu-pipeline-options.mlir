// Bad options of attn-gpu-pipeline are one error naming the option, before
// anything runs.
//
// RUN: not attn-opt %s --attn-gpu-pipeline="target=metal" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not attn-opt %s --attn-gpu-pipeline="subgroup-size=0" 2>&1 | FileCheck %s --check-prefix=SUBGROUP
// RUN: not attn-opt %s --attn-gpu-pipeline="rows=-1" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not attn-opt %s --attn-gpu-pipeline="block-k=-4" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not attn-opt %s --attn-gpu-pipeline="target=cuda subgroup-size=16" 2>&1 | FileCheck %s --check-prefix=WARP
// RUN: not attn-opt %s --attn-gpu-pipeline="subgroup-size=4294967296" 2>&1 | FileCheck %s --check-prefix=SUBGROUPBIG
// RUN: not attn-opt %s --attn-gpu-pipeline="block-k=100000" 2>&1 | FileCheck %s --check-prefix=BLOCKBIG
// An NVIDIA chip LLVM does not know aborted its code generator: refused.
// RUN: not attn-opt %s --attn-gpu-pipeline="target=cuda chip=sm_75x" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --attn-gpu-pipeline="target=cuda chip=sm_60" 2>&1 | FileCheck %s --check-prefix=OLD
//
// TARGET: attn-gpu-pipeline: target must be vulkan or cuda, got 'metal'
// SUBGROUP: attn-gpu-pipeline: subgroup-size must be in [1, 128], got 0
// SUBGROUPBIG: attn-gpu-pipeline: subgroup-size must be in [1, 128], got 4294967296
// ROWS: attn-gpu-pipeline: rows must be in [1, 1024], got -1
// BLOCK: attn-gpu-pipeline: block-k must be in [0, 4096] (0: from shared-memory), got -4
// BLOCKBIG: attn-gpu-pipeline: block-k must be in [0, 4096] (0: from shared-memory), got 100000
// WARP: attn-gpu-pipeline: target=cuda runs one query row per warp: subgroup-size must be 32, got 16
// CHIP: attn-gpu-pipeline: chip: unknown NVIDIA chip 'sm_75x' (expected an architecture LLVM's NVPTX backend knows, as sm_80, sm_90a)
// OLD: attn-gpu-pipeline: chip: NVIDIA chip 'sm_60' is older than sm_70, which the kernels need

func.func @f(%q: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}
