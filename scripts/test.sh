#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, and runs every test
# (lit: dialect, passes, pipelines, JIT integration, PyTorch cross-checks, and
# the GoogleTest unit tests), then prints one "N passed, M failed" line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/install-deps.sh"
bash "$ROOT/scripts/build.sh"

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
bash "$ROOT/scripts/build.sh" check-attn 2>&1 | tee "$log" || status=$?
passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$log" | tail -1)
failed=$(sed -n 's/^ *Failed *: *\([0-9]*\).*/\1/p' "$log" | tail -1)
passed=${passed:-0}
failed=${failed:-0}
lit_passed=$passed

# The sanitizer build (CMake option ATTN_SANITIZE: the toolkit's code with
# ASan + UBSan and libFuzzer's coverage) in build-asan/: the unit tests, and
# the lit suites that run the toolkit's own code (dialect, passes,
# pipelines, tools, JIT numerics, every model kind against PyTorch) plus the
# model-loader and IR fuzzers (test/fuzz/toolkit.test), and the GPU suite
# (the Vulkan and CUDA runtimes instrumented, test/fake-cuda's stand-in
# CUDA driver too; lavapipe, Mesa's driver, is not). Two suppressions:
# allow_user_poisoning=0 (CMakeLists.txt says why) and scripts/lsan.supp
# (two small allocations lavapipe never frees).
asan="$ROOT/build-asan"
if [[ -f "$asan/CMakeCache.txt" ]] && ! grep -q '^ATTN_SANITIZE:BOOL=ON' "$asan/CMakeCache.txt"; then
  cmake "$asan" -DATTN_SANITIZE=ON >/dev/null # a stale, uninstrumented tree
fi
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=1
export LSAN_OPTIONS="suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0"
gpu_runtimes="attn_cuda_runtime attn-fake-cuda"
if [[ -f "$ROOT/build/lib/libattn_vulkan_runtime.so" ]]; then
  gpu_runtimes+=" attn_vulkan_runtime"
fi
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
asan_log="$(mktemp)"
trap 'rm -f "$log" "$asan_log"' EXIT
if ATTN_BUILD_DIR="$asan" \
   ATTN_CMAKE_ARGS="-DATTN_SANITIZE=ON -DATTN_FUZZERS=OFF" \
   bash "$ROOT/scripts/build.sh" attn-unittests attn-opt attn-run attn-compile \
     attn-fuzz-model attn-fuzz-ir $gpu_runtimes &&
   "$asan/test/unit/attn-unittests" --gtest_brief=1; then
  echo "sanitizer build (ASan + UBSan): unit tests passed"
  passed=$((passed + 1))
else
  echo "sanitizer build (ASan + UBSan): build or unit tests FAILED" >&2
  failed=$((failed + 1))
  status=1
fi
asan_status=0
/usr/lib/llvm-22/bin/lit -sv "$asan/test/dialect" "$asan/test/Transforms" \
  "$asan/test/Pipelines" "$asan/test/tools" "$asan/test/Integration" \
  "$asan/test/e2e" "$asan/test/GPU" "$asan/test/fuzz/toolkit.test" 2>&1 | tee "$asan_log" || asan_status=$?
asan_passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$asan_log" | tail -1)
asan_failed=$(sed -n 's/^ *Failed *: *\([0-9]*\).*/\1/p' "$asan_log" | tail -1)
echo "sanitizer build (ASan + UBSan): ${asan_passed:-0} lit tests passed, ${asan_failed:-0} failed"
passed=$((passed + ${asan_passed:-0}))
failed=$((failed + ${asan_failed:-0}))
if [[ $asan_status -ne 0 || -z "$asan_passed" ]]; then
  status=1
fi
echo "$passed passed, $failed failed"
if [[ $status -eq 0 && $lit_passed -eq 0 ]]; then
  echo "test.sh: lit reported no passing test" >&2
  status=1
fi
exit "$status"
