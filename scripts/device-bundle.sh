#!/usr/bin/env bash
# Packs attn-run for a machine that has no LLVM 22 (a lent GPU machine, a
# cluster node): one archive, unpacked anywhere, runs the device check there
# (docs/gpu.md, "Running on a GPU machine").
#
#   bash scripts/device-bundle.sh [--bench] [BUILD_DIR] [ARCHIVE]
#       (defaults: build, attn-bundle.tar.xz; ~33 MB, ~1 minute)
#   # on the other machine, at the root of a checkout of the same commit:
#   mkdir -p /tmp/attn && tar -xJf attn-bundle.tar.xz -C /tmp/attn
#   bash scripts/gpu-check.sh /tmp/attn
#
# --bench adds bin/attn-bench (and OpenBLAS, Google Benchmark) for the CPU
# of such a machine, e.g. an AMX host (44 MB, 5-10 minutes: one xz stream
# with a dictionary that spans both tools, which share most of their code).
# There, with the machine's own PyTorch as the peers' "venv":
#   mkdir -p /tmp/py/bin && ln -sf "$(command -v python3)" /tmp/py/bin/python
#   ATTN_BUILD_DIR=/tmp/attn python3 scripts/bench-table.py --peers-venv /tmp/py --filter ...
# attn-bench's own peers are compiled for the build machine's CPU (the
# OpenBLAS-unfused softmax with -march=native, Halide's generator for its
# host): bundle it on a machine whose vector ISA the other one has (this
# project's Zen 4 hosts' AVX-512 subset runs on Sapphire / Emerald Rapids),
# or it dies with SIGILL there. attn-run and attn-bench's own kernels are
# compiled at run time for the machine they run on.
#
# bin/attn-run is the build's attn-run relinked against LLVM's and MLIR's
# static archives instead of libMLIR.so / libLLVM.so (~250 MB that images
# without LLVM 22 lack), stripped, with RUNPATH $ORIGIN/../lib. lib/ holds
# what it loads at run time, which it finds there (bin/../lib, before the
# build's configured folders: lib/Runtime/Jit.cpp, runtimeLibraryPath):
#   - the project's GPU runtimes (libattn_cuda_runtime.so, which dlopens the
#     driver's libcuda.so.1, and libattn_vulkan_runtime.so, which needs the
#     machine's Vulkan loader);
#   - what JIT-compiled code calls: MLIR's C runner utilities (with
#     libmlir_float16_utils) and LLVM's OpenMP runtime;
#   - empty stand-ins named libMLIR.so.22.1, libLLVM.so.22.1 and
#     libmlir_apfloat_wrappers.so.22.1: libmlir_c_runner_utils.so lists
#     them as needed but calls nothing in them (nm -D --undefined-only), and
#     attn-run has its own static copy of MLIR and LLVM;
#   - the system libraries attn-run links that a slim image may lack
#     (libffi, libtinfo, libzstd).
# share/softmax-ceiling/ holds dense f32 attention (E 64, L 1024 and 4096)
# lowered to linalg with its softmax cut out (scripts/softmax-ceiling.py
# --print-ir --strip-target), which scripts/cpu-check.sh times there as
# f32-nosoftmax (attn-run compiles it for that machine).
# Linux x86-64 with glibc >= 2.36 (Debian 12, Ubuntu 24.04).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench=0
ARGS=()
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    -*) echo "device-bundle: unknown option $arg (usage: device-bundle.sh [--bench] [BUILD_DIR] [ARCHIVE])" >&2; exit 2 ;;
    *) ARGS+=("$arg") ;;
  esac
done
TOOLS=(attn-run)
((bench)) && TOOLS+=(attn-bench)
BUILD="$(cd "${ARGS[0]:-$ROOT/build}" && pwd)"
ARCHIVE="$(realpath -m -- "${ARGS[1]:-attn-bundle.tar.xz}")"
LLVM_LIB=/usr/lib/llvm-22/lib
SYS_LIB=/lib/x86_64-linux-gnu

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/share/softmax-ceiling"

# Each tool's own link command in the build, with the two LLVM dylibs
# replaced by every LLVM / MLIR archive (lld keeps what is referenced).
static="-Wl,--start-group $LLVM_LIB/libMLIR*.a $LLVM_LIB/libLLVM*.a -Wl,--end-group $SYS_LIB/libzstd.so.1 -lffi -ltinfo"
for tool in "${TOOLS[@]}"; do
  [[ -x "$BUILD/bin/$tool" ]] || { echo "device-bundle: build $tool first (scripts/build.sh)" >&2; exit 1; }
  link=$(ninja -C "$BUILD" -t commands "bin/$tool" | tail -1)
  [[ $link == *"libMLIR.so"* ]] || { echo "device-bundle: unexpected link command: $link" >&2; exit 1; }
  link=$(sed -E -e "s#-o bin/$tool #-o $STAGE/bin/$tool #" \
    -e 's#-Wl,-rpath,"[^"]*"#-Wl,-rpath,\\$ORIGIN/../lib#' \
    -e "s#$LLVM_LIB/libMLIR\.so[.0-9]*#$static#" -e "s#$LLVM_LIB/libLLVM\.so[.0-9]*##" <<<"$link")
  # Never relink the build's own tool.
  [[ $link == *"-o $STAGE/bin/$tool "* ]] || { echo "device-bundle: could not redirect the link of $tool: $link" >&2; exit 1; }
  (cd "$BUILD" && eval "$link")
  strip "$STAGE/bin/$tool"
done

cp "$BUILD/lib/libattn_cuda_runtime.so" "$STAGE/lib/"
[[ -f "$BUILD/lib/libattn_vulkan_runtime.so" ]] && cp "$BUILD/lib/libattn_vulkan_runtime.so" "$STAGE/lib/"
cp -L "$LLVM_LIB/libmlir_c_runner_utils.so" "$STAGE/lib/libmlir_c_runner_utils.so"
cp -L "$LLVM_LIB/libmlir_float16_utils.so.22.1" "$STAGE/lib/"
cp -L "$LLVM_LIB/libomp.so" "$STAGE/lib/libomp.so"
for lib in libffi.so.8 libtinfo.so.6 libzstd.so.1; do cp -L "$SYS_LIB/$lib" "$STAGE/lib/"; done
if ((bench)); then
  # attn-bench's peers: OpenBLAS (the unfused peer) and what it needs, and
  # Google Benchmark.
  for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libbenchmark.so.1debian; do
    cp -L "$SYS_LIB/$lib" "$STAGE/lib/"
  done
fi
: > "$STAGE/empty.c"
for soname in libMLIR.so.22.1 libLLVM.so.22.1 libmlir_apfloat_wrappers.so.22.1; do
  clang-22 -shared -o "$STAGE/lib/$soname" -Wl,-soname,"$soname" "$STAGE/empty.c"
done
rm "$STAGE/empty.c"
# cpu-check.sh's f32-nosoftmax programs (made here: the other machine has
# no attn-opt).
for L in 1024 4096; do
  ATTN_BUILD_DIR="$BUILD" python3 "$ROOT/scripts/softmax-ceiling.py" --L "$L" --E 64 --print-ir \
    --strip-target > "$STAGE/share/softmax-ceiling/dense-f32-L$L.mlir"
done
# The marker that lets the tools take LLVM's libraries from this lib/ too
# (lib/Runtime/Jit.cpp, runtimeLibraryPath).
{ echo "attn-mlir bundle of $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?') (scripts/device-bundle.sh): ${TOOLS[*]}"
  ls "$STAGE/lib"; } > "$STAGE/lib/attn-bundle.txt"

# The bundle runs as it will there: from its own folder, numerics checked,
# and a program without its softmax compiles.
"$STAGE/bin/attn-run" "$ROOT/test/Integration/alignment.mlir" --all --check > "$STAGE/check.log" 2>&1 &&
  "$STAGE/bin/attn-run" "$STAGE/share/softmax-ceiling/dense-f32-L1024.mlir" >> "$STAGE/check.log" 2>&1 ||
  { cat "$STAGE/check.log" >&2; echo "device-bundle: the bundled attn-run failed" >&2; exit 1; }
if ((bench)); then
  "$STAGE/bin/attn-bench" --check --benchmark_min_time=0.01 \
    --benchmark_filter='^(attn-mlir|openblas-unfused)/dense/L512/E64/T1/' > "$STAGE/check.log" 2>&1 &&
    grep -q -- '--check .*dense/L512/E64/T1: .*: OK' "$STAGE/check.log" ||
    { cat "$STAGE/check.log" >&2; echo "device-bundle: the bundled attn-bench failed" >&2; exit 1; }
fi
rm "$STAGE/check.log"
if ((bench)); then
  # One stream whose dictionary holds a whole tool: the second compresses
  # against the first.
  tar -C "$STAGE" -cf - bin lib share | xz -T1 --lzma2=preset=6,dict=256MiB > "$ARCHIVE"
else
  tar -C "$STAGE" -cf - bin lib share | xz -T0 -6 > "$ARCHIVE"
fi
echo "device-bundle: $ARCHIVE ($(du -h "$ARCHIVE" | cut -f1)): ${TOOLS[*]/#/bin/}, lib/ ($(ls "$STAGE/lib" | wc -l) files), share/softmax-ceiling/"
