#!/usr/bin/env bash
# The device check of the GPU pipeline, for an NVIDIA machine (docs/gpu.md):
# the numerics matrix through attn-gpu-pipeline{target=cuda} against the C++
# reference, then a TFLOP/s sweep (L 1024 / 4096 / 16384, E 64 / 128,
# f32 / f16 / bf16, dense and causal). ~3 minutes on an H200; prints one table.
#
#   bash scripts/gpu-check.sh [BUILD_DIR]     (default: build)
#
# Needs the built tools (attn-run, lib/libattn_cuda_runtime.so), or a bundle
# of them unpacked on a machine without LLVM 22 (scripts/device-bundle.sh:
# BUILD_DIR is then the bundle's folder), and the CUDA toolkit's libdevice
# ($CUDA_HOME or /usr/local/cuda). On sm_80 and newer the
# f16/bf16 rows run the tensor-core kernel (mma.sync, ldmatrix, cp.async;
# test/Integration/tensor-cores.mlir is its numerics file), f32 rows the
# one-row-per-warp kernel. Each row gives the call's time, which includes
# the runtime's host <-> device copies (the first GPU path's simple scheme),
# and the kernels' own (CUDA events around each launch); TFLOP/s are the
# kernels'.
set -uo pipefail
BUILD=${1:-build}
RUN="$BUILD/bin/attn-run"
[[ -x "$RUN" ]] || { echo "gpu-check: $RUN not built"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
source "$(dirname "${BASH_SOURCE[0]}")/sdpa-function.sh"

echo "== numerics (attn-run --target=cuda --check)"
for f in sdpa mask-kinds alignment score-mask-mods mha reduced-precision tensor-cores; do
  extra=""
  [[ $f == score-mask-mods || $f == reduced-precision || $f == tensor-cores ]] &&
    extra="--input-magnitude 2"
  out=$(timeout 300 "$RUN" "test/Integration/$f.mlir" --all --check --target=cuda $extra 2>&1)
  pass=$(grep -c "CHECK PASSED" <<<"$out")
  fail=$(grep -c -e "CHECK FAILED" -e "error" <<<"$out")
  echo "$f: $pass passed, $fail failed"
  ((fail)) && { status=1; grep -m3 -e error -e MISMATCH <<<"$out"; }
done

echo "== sweep (best of 5 calls; TFLOP/s = 4 B H L^2 E / kernel ms, half for causal)"
printf "%-6s %-6s %-5s %-5s %10s %10s %10s\n" mask dtype L E "call ms" "kernel ms" TFLOP/s
for dtype in f32 f16 bf16; do
  for L in 1024 4096 16384; do
    for E in 64 128; do
      for mask in dense causal; do
        H=16
        sdpa_function "$TMP/k.mlir" "tensor<1x${H}x${L}x${E}x${dtype}>" "$mask"
        out=$(timeout 120 "$RUN" "$TMP/k.mlir" --target=cuda --repeat 5 2>&1)
        ms=$(sed -n 's/.*run: best \([0-9.]*\) ms.*/\1/p' <<<"$out")
        kms=$(sed -n 's/.*kernels: best \([0-9.]*\) ms.*/\1/p' <<<"$out")
        if [[ -z "$ms" ]]; then
          printf "%-6s %-6s %-5s %-5s %10s %10s %10s\n" $mask $dtype $L $E failed - -
          status=1
          continue
        fi
        # No kernels' clock (the runtime could not time them): the call's
        # time stands, TFLOP/s of it, marked.
        t=${kms:-$ms}
        flops=$(python3 -c "f=4*$H*$L*$L*$E*(0.5 if '$mask'=='causal' else 1); print(f'{f/($t*1e-3)/1e12:.2f}')")
        [[ -z "$kms" ]] && { kms=-; flops="$flops(call)"; }
        printf "%-6s %-6s %-5s %-5s %10s %10s %10s\n" $mask $dtype $L $E "$ms" "$kms" "$flops"
      done
    done
  done
done
exit $status
