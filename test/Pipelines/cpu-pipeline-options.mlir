// Bad options of attn-cpu-pipeline are one error naming the option, before
// anything runs (a negative thread count would become 2^32 - 1 threads).
//
// RUN: not attn-opt %s --attn-cpu-pipeline="threads=-1" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not attn-opt %s --attn-cpu-pipeline="register-rows=-2" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not attn-opt %s --attn-cpu-pipeline="gat-edge-block=0" 2>&1 | FileCheck %s --check-prefix=EDGE
// RUN: not attn-opt %s --attn-cpu-pipeline="gat-edge-block=4096" 2>&1 | FileCheck %s --check-prefix=EDGEBIG
// RUN: not attn-opt %s --attn-cpu-pipeline="block-q=1000000" 2>&1 | FileCheck %s --check-prefix=BLOCKBIG
// RUN: not attn-opt %s --attn-cpu-pipeline="register-cols=100000" 2>&1 | FileCheck %s --check-prefix=COLS
// RUN: not attn-opt %s --attn-cpu-pipeline="graph-edge-density=1.5" 2>&1 | FileCheck %s --check-prefix=DENSITY
// RUN: not attn-run %s --pipeline "attn-cpu-pipeline{threads=-3}" 2>&1 | FileCheck %s --check-prefix=JIT
//
// THREADS: attn-cpu-pipeline: threads must be in [0, 4096] (0: the OpenMP runtime's choice), got -1
// ROWS: attn-cpu-pipeline: register-rows must be in [0, 32] (0: from the target), got -2
// EDGE: attn-cpu-pipeline: gat-edge-block must be in [1, 256], got 0
// EDGEBIG: attn-cpu-pipeline: gat-edge-block must be in [1, 256], got 4096
// BLOCKBIG: attn-cpu-pipeline: block-q must be in [0, 4096] (0: from the target), got 1000000
// COLS: attn-cpu-pipeline: register-cols must be in [0, 256] (0: from the target), got 100000
// DENSITY: attn-cpu-pipeline: graph-edge-density must be in [0, 1], got 1.5
// JIT: attn-run: error: invalid pass pipeline {{.*}}threads must be in [0, 4096] (0: the OpenMP runtime's choice), got -3

func.func @f(%q: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}
