// Input values both paths could not agree on are refused before the call:
// NaN and infinities in attention inputs (-inf only in an additive mask),
// index inputs a region uses outside the tensor it indexes; and the
// options of a run are checked before any work. A region index from data
// that is out of range never reads outside the buffer in compiled code
// (clamped), whatever reaches it.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: %torch_python %t/make.py %t
// RUN: not attn-run %t/sdpa.mlir --entry f --input 0=%t/qnan.npy 2>&1 | FileCheck %s --check-prefix=NAN
// NAN: attn-run: error: @f input 0 ({{.*}}qnan.npy): element 5 is nan; inputs must be finite (-inf only in an additive mask: bias, rel_bias, a region's table)
// RUN: not attn-run %t/sdpa.mlir --entry f --input 1=%t/qinf.npy 2>&1 | FileCheck %s --check-prefix=INF
// INF: attn-run: error: @f input 1 ({{.*}}qinf.npy): element 5 is inf; inputs must be finite
// RUN: not attn-run %t/sdpa.mlir --entry f --input 2=%t/qneginf.npy 2>&1 | FileCheck %s --check-prefix=NEGINF
// NEGINF: attn-run: error: @f input 2 ({{.*}}qneginf.npy): element 5 is -inf; inputs must be finite
// -inf in a bias is a mask: a fully masked row is 0 on both paths.
// RUN: attn-run %t/sdpa.mlir --entry bias --input 3=%t/bias.npy --check | FileCheck %s --check-prefix=BIAS
// BIAS: CHECK PASSED
// RUN: not attn-run %t/sdpa.mlir --entry bias --input 3=%t/biasnan.npy 2>&1 | FileCheck %s --check-prefix=BIASNAN
// BIASNAN: attn-run: error: @bias input 3 ({{.*}}biasnan.npy): element 0 is nan
// An index input used out of range by a region: refused up front.
// RUN: not attn-run %t/sdpa.mlir --entry gather --input 3=%t/ids_bad.npy 2>&1 | FileCheck %s --check-prefix=GATHER
// GATHER: attn-run: error: @gather input 3 ({{.*}}ids_bad.npy): element 2 is 100000000000, but a region indexes dim 0 of input 4 (size 4) with it: expected [0, 4)
// RUN: attn-run %t/sdpa.mlir --entry gather --input 3=%t/ids_ok.npy --check | FileCheck %s --check-prefix=GATHEROK
// GATHEROK: CHECK PASSED
// Generated index inputs stay inside the (small) table they index.
// RUN: attn-run %t/sdpa.mlir --entry gather_small --check | FileCheck %s --check-prefix=GATHERGEN
// GATHERGEN: CHECK PASSED
// A device is no input file: it would be read without end.
// RUN: not attn-run %t/sdpa.mlir --entry f --input 0=/dev/zero 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: attn-run: error: /dev/zero: cannot open: not a regular file (a device or a pipe has no size to check)
// The IR file too (it was read until the kernel killed the process):
// RUN: not attn-run /dev/zero 2>&1 | FileCheck %s --check-prefix=DEVICE
// Options.
// RUN: not attn-run %t/sdpa.mlir --entry f --input 0=%t/qnan.npy --input 0=%t/qnan.npy 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: attn-run: error: --input 0: given twice
// RUN: not attn-run %t/sdpa.mlir --entry f --input-magnitude=nan 2>&1 | FileCheck %s --check-prefix=MAG
// MAG: attn-run: error: --input-magnitude must be a finite number > 0, got nan
// RUN: not attn-run %t/sdpa.mlir --entry f --input-magnitude=-1 2>&1 | FileCheck %s --check-prefix=MAGNEG
// MAGNEG: attn-run: error: --input-magnitude must be a finite number > 0, got -1.000000
// RUN: not attn-run %t/sdpa.mlir --entry f --rtol=-1 2>&1 | FileCheck %s --check-prefix=RTOL
// RTOL: attn-run: error: --rtol must be a finite number >= 0, got -1.000000
// RUN: not attn-run %t/sdpa.mlir --entry f --atol=-5 2>&1 | FileCheck %s --check-prefix=ATOL
// ATOL: attn-run: error: --atol must be a finite number >= 0, got -5.000000
// RUN: not attn-run %t/sdpa.mlir --entry f --repeat 0 2>&1 | FileCheck %s --check-prefix=REPEAT
// REPEAT: attn-run: error: --repeat must be in [1, 1000000], got 0
// Every call's time is kept for the median: 2^32 - 1 calls are refused.
// RUN: not attn-run %t/sdpa.mlir --entry f --repeat 4294967295 2>&1 | FileCheck %s --check-prefix=REPEAT-HUGE
// REPEAT-HUGE: attn-run: error: --repeat must be in [1, 1000000], got 4294967295
// RUN: attn-run %t/sdpa.mlir --entry f --num-threads 0 --check | FileCheck %s --check-prefix=THREADS0
// THREADS0: CHECK PASSED

//--- make.py
import os, sys
import numpy as np
d = sys.argv[1]
q = np.zeros((1, 1, 4, 4), dtype=np.float32)
for name, value in [("qnan", np.nan), ("qinf", np.inf), ("qneginf", -np.inf)]:
    t = q.copy(); t.flat[5] = value
    np.save(os.path.join(d, name + ".npy"), t)
bias = np.zeros((1, 1, 4, 4), dtype=np.float32)
bias[0, 0, 1, :] = -np.inf   # row 1 fully masked
bias[0, 0, 2, 1:] = -np.inf  # row 2 keeps one key
np.save(os.path.join(d, "bias.npy"), bias)
bias.flat[0] = np.nan
np.save(os.path.join(d, "biasnan.npy"), bias)
np.save(os.path.join(d, "ids_ok.npy"), np.array([3, 0, 2, 1], dtype=np.int64))
np.save(os.path.join(d, "ids_bad.npy"), np.array([3, 0, 100000000000, 1], dtype=np.int64))
//--- sdpa.mlir
func.func @gather_small(%q: tensor<1x1x4x4xf32>, %ids: tensor<4xi64>, %tbl: tensor<2xf32>) -> tensor<1x1x4x4xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %id = tensor.extract %ids[%j] : tensor<4xi64>
      %x = arith.index_cast %id : i64 to index
      %t = tensor.extract %tbl[%x] : tensor<2xf32>
      %r = arith.addf %s, %t : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x1x4x4xf32>
}
func.func @f(%q: tensor<1x1x4x4xf32>, %k: tensor<1x1x4x4xf32>, %v: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}
func.func @bias(%q: tensor<1x1x4x4xf32>, %k: tensor<1x1x4x4xf32>, %v: tensor<1x1x4x4xf32>, %b: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %o = attn.sdpa %q, %k, %v bias(%b) : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}
func.func @gather(%q: tensor<1x1x4x4xf32>, %k: tensor<1x1x4x4xf32>, %v: tensor<1x1x4x4xf32>, %ids: tensor<4xi64>, %tbl: tensor<4xf32>) -> tensor<1x1x4x4xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %id = tensor.extract %ids[%j] : tensor<4xi64>
      %x = arith.index_cast %id : i64 to index
      %t = tensor.extract %tbl[%x] : tensor<4xf32>
      %r = arith.addf %s, %t : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x1x4x4xf32>
}
