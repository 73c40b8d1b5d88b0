#!/usr/bin/env bash
# Configures (once) and builds attn-mlir into ./build with Ninja, clang-22, lld
# and ccache. Usage: scripts/build.sh [ninja targets...]
# ATTN_BUILD_DIR picks another build directory; ATTN_CMAKE_ARGS adds CMake
# options when it is first configured (test.sh: the sanitizer build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"

if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit ${ATTN_CMAKE_ARGS:-}
fi
cmake --build "$BUILD" --target "${@:-all}"
