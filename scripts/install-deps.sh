#!/usr/bin/env bash
# Installs every Debian package attn-mlir needs to build, run and test.
# Idempotent: packages already present are skipped by apt. Run as root.
set -euo pipefail

PACKAGES=(
  # Toolchain: MLIR/LLVM 22 (libMLIR.so dylib, mlir-tblgen, lit, FileCheck).
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libomp-22-dev
  clang-22 lld-22 cmake ninja-build ccache
  # Tests: GoogleTest, and PyTorch/NumPy as the numerical oracle (/usr/bin/python3).
  libgtest-dev python3-numpy python3-torch python3-torchvision
  # Models: the Fashion-MNIST dataset (IDX files) and zlib for its .gz files.
  dataset-fashion-mnist zlib1g-dev
  # Benchmarks: Google Benchmark, the OpenBLAS-unfused and Halide peers.
  libbenchmark-dev libopenblas-dev libhalide14-0-dev
  # Graphs: Boost.Graph (loading, CSR, reverse Cuthill-McKee).
  libboost-graph-dev
  # libFuzzer and the sanitizer runtimes (fuzz/, the readers' fuzz tests).
  libclang-rt-22-dev
  # The AVX2 code path on AVX-512 hosts, run as on a real AVX2 CPU
  # (qemu-x86_64 -cpu Haswell; test/Integration/targets.test).
  qemu-user
  # GPU code without a GPU: Vulkan compute on the CPU (Mesa's lavapipe), the
  # Vulkan loader and headers (lib/Runtime/VulkanRuntime.cpp), spirv-val;
  # test/GPU/. CUDA's ptxas checks the PTX where the toolkit is installed.
  mesa-vulkan-drivers libvulkan-dev spirv-tools
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi
