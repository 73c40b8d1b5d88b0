// Inputs from .npy files, and every way they can be wrong.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --dump-dir %t --check | FileCheck %s --check-prefix=DUMP
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// RUN: attn-run %s --check --seed 7 --input 0=%t/arg0.npy --input 1=%t/arg1.npy \
// RUN:   --input 2=%t/arg2.npy --input 3=%t/arg3.npy --input 4=%t/arg4.npy \
// RUN:   | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: not attn-run %s --input 0=%t/arg3.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not attn-run %s --input 0=%t/missing.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo garbage > %t/bad.npy
// RUN: not attn-run %s --input 0=%t/bad.npy 2>&1 | FileCheck %s --check-prefix=MAGIC
// RUN: head -c 150 %t/arg0.npy > %t/short.npy
// RUN: not attn-run %s --input 0=%t/short.npy 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not attn-run %s --input 9=%t/arg0.npy 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not attn-run %s --input arg0.npy 2>&1 | FileCheck %s --check-prefix=SPEC
// RUN: %torch_python -c "import numpy as np; np.save('%t/cols.npy', np.array([0, 1, 2, 3, 99, 5, 6, 7, 8, 9], np.int32))"
// RUN: not attn-run %s --input 4=%t/cols.npy 2>&1 | FileCheck %s --check-prefix=COLS
// RUN: %torch_python -c "import numpy as np; np.save('%t/rows.npy', np.array([0, 4, 2, 6, 8, 10, 10], np.int32))"
// RUN: not attn-run %s --input 3=%t/rows.npy 2>&1 | FileCheck %s --check-prefix=ROWS
// A row_ptr too short for Lq + 1 rows is a shape error, found before any
// value is read.
// RUN: %torch_python -c "import numpy as np; np.save('%t/short-rows.npy', np.array([0, 4, 10], np.int32))"
// RUN: not attn-run %s --input 3=%t/short-rows.npy 2>&1 | FileCheck %s --check-prefix=SHORTROWS
// RUN: %torch_python -c "import numpy as np; np.save('%t/f64.npy', np.zeros((1, 1, 6, 4)))"
// RUN: not attn-run %s --input 0=%t/f64.npy 2>&1 | FileCheck %s --check-prefix=DTYPE

// DUMP: CHECK PASSED
// FILES: arg0.npy
// FILES: arg4.npy
// FILES: reference0.npy
// FILES: result0.npy
// ROUNDTRIP: CHECK PASSED
// SHAPE: attn-run: error: @graph input 0 ({{.*}}arg3.npy): expected tensor<1x1x6x4xf32>, got 7xi32
// MISSING: attn-run: error: {{.*}}missing.npy: cannot open
// MAGIC: attn-run: error: {{.*}}bad.npy: not a .npy file (bad magic)
// TRUNCATED: attn-run: error: {{.*}}short.npy: expected 96 data bytes for shape 1x1x6x4xf32, found
// INDEX: attn-run: error: --input 9: the function has 5 arguments
// SPEC: attn-run: error: --input expects INDEX=FILE.npy, got 'arg0.npy'
// COLS: attn-run: error: attn.sdpa: col_idx (@graph input 4 ({{.*}}cols.npy)): entry 4 is 99, outside [0, 6)
// ROWS: attn-run: error: attn.sdpa: row_ptr (@graph input 3 ({{.*}}rows.npy)): decreases at row 1 (4 > 2)
// DTYPE: attn-run: error: @graph input 0 ({{.*}}f64.npy): expected tensor<1x1x6x4xf32>, got 1x1x6x4xf64
// SHORTROWS: attn-run: error: @graph input 3 ({{.*}}short-rows.npy): expected tensor<7xi32>, got 3xi32

func.func @graph(%q: tensor<1x1x6x4xf32>, %k: tensor<1x1x6x4xf32>, %v: tensor<1x1x6x4xf32>, %rp: tensor<7xi32>, %ci: tensor<10xi32>) -> tensor<1x1x6x4xf32> {
  %o = attn.sdpa %q, %k, %v graph(%rp, %ci) {mask = #attn.mask<graph>}
      : (tensor<1x1x6x4xf32>, tensor<1x1x6x4xf32>, tensor<1x1x6x4xf32>, tensor<7xi32>, tensor<10xi32>) -> tensor<1x1x6x4xf32>
  return %o : tensor<1x1x6x4xf32>
}
