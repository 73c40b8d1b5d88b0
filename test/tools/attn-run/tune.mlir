// The tuner: attn-run --tune times every tile candidate of the target on this
// machine and stores the fastest in the cache file; a later run with the
// plain attn-cpu-pipeline takes it (and still checks against the reference).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry causal --tune --tuning-cache %t/cache.json | FileCheck %s --check-prefix=TUNE
// RUN: FileCheck %s --check-prefix=CACHE < %t/cache.json
// RUN: attn-run %s --entry causal --check --tuning-cache %t/cache.json | FileCheck %s --check-prefix=USE
// RUN: echo '{"version": 1, "entries": [{"cpu": "x"}]}' > %t/bad.json
// RUN: attn-run %s --entry causal --check --tuning-cache %t/bad.json 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: echo '{"version": 1, "entries": [{"cpu": "x", "key": "k", "threads": 1, "block_q": 100000, "block_k": 64, "register_rows": 8, "register_cols": 32, "ms": 1.0}]}' > %t/range.json
// RUN: attn-run %s --entry causal --check --tuning-cache %t/range.json 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: attn-run %s --entry causal --check --tuning-cache /dev/zero 2>&1 | FileCheck %s --check-prefix=DEVZERO
// RUN: echo '[1, 2' > %t/garbage.json
// RUN: attn-run %s --entry causal --tuning-cache %t/garbage.json 2>&1 | FileCheck %s --check-prefix=GARBAGE
// RUN: not attn-run %s --entry causal --tune --num-threads -2 --tuning-cache %t/cache.json 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not attn-run %s --entry causal --tune --pipeline attn-reference-pipeline --tuning-cache %t/cache.json 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: not attn-run %s --entry causal --tune --emulate-amx --tuning-cache %t/cache.json 2>&1 | FileCheck %s --check-prefix=EMULATED
// An entry tuned for other threads or another feature set is not taken.
// RUN: attn-run %s --entry causal --num-threads 2 --tuning-cache %t/cache.json | FileCheck %s --check-prefix=OTHER
// RUN: attn-run %s --entry causal --target-features=-avx512f --tuning-cache %t/cache.json | FileCheck %s --check-prefix=OTHER
// Block sizes past the sequence tile as the sequence does (attn-tile clamps
// them): for 64 queries and keys the candidates are clamped to 64 and each
// tiling is timed once.
// RUN: attn-run %s --entry short --tune --tuning-cache %t/cache.json | FileCheck %s --check-prefix=SHORT
// RUN: attn-run %s --entry short --tune --tuning-cache %t/cache.json --target-features=-avx512f | FileCheck %s --check-prefix=SHORT
//
// TUNE: attn-run: tuning @causal for {{.*}}, 1 thread(s)
// TUNE: block-q={{[0-9]+}} block-k=32 register-rows={{[0-9]+}} register-cols={{[0-9]+}} {{.*}} ms
// TUNE: block-q={{[0-9]+}} block-k=128
// TUNE: best: block-q={{[0-9]+}} block-k={{[0-9]+}} {{.*}} ms (stored in {{.*}}cache.json)
// CACHE-DAG: "version": 1
// CACHE-DAG: "key": "sdpa {align = #attn.align<bottom_right>, mask = #attn.mask<causal>} tensor<1x2x200x64xf32> tensor<1x2x200x64xf32> tensor<1x2x200x64xf32>"
// CACHE-DAG: "threads": 1
// USE: attn-run: tuned tiles from {{.*}}cache.json
// USE: lowering (attn-cpu-pipeline{threads=1 block-q={{[0-9]+}} block-k={{[0-9]+}} register-rows=
// USE: CHECK PASSED
// A malformed cache is reported and ignored (compiling never fails because
// of it).
// BAD: warning: tuning cache ignored: {{.*}}bad.json: not an attn-mlir tuning cache: an entry lacks one of cpu, key, threads
// BAD: CHECK PASSED
// An entry out of the options' ranges (it once failed every run with the
// pipeline's option error), and a file that is no regular file (/dev/zero
// was read without end).
// RANGE: warning: tuning cache ignored: {{.*}}range.json: not an attn-mlir tuning cache: a tile size or thread count out of range (block_q, block_k in [0, 4096]
// RANGE: CHECK PASSED
// DEVZERO: warning: tuning cache ignored: /dev/zero: cannot open: not a regular file
// DEVZERO: CHECK PASSED
// GARBAGE: warning: tuning cache ignored: {{.*}}garbage.json: not an attn-mlir tuning cache:
// THREADS: attn-run: error: --num-threads must be >= 0 (0: the OpenMP runtime's default), got -2
// PLAIN: attn-run: error: --tune tunes the tiles of the plain attn-cpu-pipeline
// EMULATED: attn-run: error: --tune with --emulate-amx: the tuner times the tiles, and emulated tile instructions (software, from a SIGILL each) would make AMX tiles the slowest; tune on a host with AMX or without --emulate-amx
// SHORT: attn-run: tuning @short
// SHORT: block-q=0 block-k=0
// SHORT-NOT: block-q={{(6[5-9]|[7-9][0-9]|[1-9][0-9][0-9])}} 
// SHORT-NOT: block-k=128
// SHORT: block-q=64 block-k=64 register-rows=[[ROWS:[0-9]+]] register-cols=[[COLS:[0-9]+]]
// SHORT-NOT: block-q=64 block-k=64 register-rows=[[ROWS]] register-cols=[[COLS]]
// SHORT: best:
// OTHER-NOT: tuned tiles
// OTHER: lowering (attn-cpu-pipeline{threads={{[12]}}})
func.func @causal(%q: tensor<1x2x200x64xf32>, %k: tensor<1x2x200x64xf32>, %v: tensor<1x2x200x64xf32>) -> tensor<1x2x200x64xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x200x64xf32>, tensor<1x2x200x64xf32>, tensor<1x2x200x64xf32>) -> tensor<1x2x200x64xf32>
  return %o : tensor<1x2x200x64xf32>
}

func.func @short(%q: tensor<1x2x64x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  return %o : tensor<1x2x64x64xf32>
}
