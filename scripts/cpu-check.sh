#!/usr/bin/env bash
# The CPU check of issue 11's open targets, for a host this project's
# sessions seldom get (an AMX Xeon, such as a lent GPU machine's CPU, or an
# AVX2-only Zen 3): one prepared run of ~3-5 minutes that prints one table.
#
#   bash scripts/cpu-check.sh [BUILD_DIR] [ROUNDS]    (defaults: build, 3)
#
# BUILD_DIR holds bin/attn-run (the build, or a bundle of
# scripts/device-bundle.sh unpacked on a machine without LLVM 22; with
# --bench the bundle also has bin/attn-bench, whose probes give the peaks).
# It runs, for dense and causal attention (B 1, H 8, E 64, L 1024 and 4096,
# one and two threads), JIT-compiled for this host (attn-run's default
# target):
#   f32         the plain attn-cpu-pipeline (the target's default tiles)
#   f32-64x64   (dense) attn-cpu-pipeline{block-q=64 block-k=64}: the
#               default takes 256-row query tiles for long dense f32
#               attention (measured on Zen 4); whether they pay on this
#               host's caches
#   bf16        the plain pipeline: AMX tiles on AMX hosts, vdpbf16ps on
#               AVX512-BF16 ones, f32 arithmetic otherwise
#   bf16-noamx  (AMX hosts) the same with --target-features=-amx-tile,-amx-bf16:
#               on Sapphire / Emerald / Granite Rapids attn-tile computes it
#               in f32 (docs/Design.md, "AMX tile products")
#   f32-nosoftmax (dense) the f32 program with its online softmax cut out
#               (scripts/softmax-ceiling.py): the same tiles and
#               contractions, a timing bound, not attention; whether the
#               contractions or the softmax keep f32 from the peak here.
#               From BUILD_DIR/share/softmax-ceiling/ (a device bundle's),
#               else made with BUILD_DIR/bin/attn-opt; skipped without both
# in ROUNDS interleaved rounds (this project's hosts are shared VMs whose
# speed moves between runs: compare configurations within a round), each a
# best-of-N `attn-run --repeat N` call. First, every function's numerics
# against the C++ reference at L 1024 (`attn-run --check`).
#
# The table: best ms per configuration over the rounds, GFLOP/s (useful
# flops: 4 B H L^2 E, half for causal) and, with attn-bench, % of the peak
# its probes measure (f32 of the FMA peak; bf16 of the AMX tile-product peak
# on AMX hosts, of the vdpbf16ps peak on AVX512-BF16 ones); then the ratios
# issue 11 asks about: bf16 over f32 (4x on AMX hosts), 64 x 64 over the
# default tiles, AMX off over on.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD=$(cd "${1:-$ROOT/build}" && pwd) || { echo "cpu-check: no folder ${1:-$ROOT/build}" >&2; exit 1; }
ROUNDS=${2:-3}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "cpu-check: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 1; }
RUN="$BUILD/bin/attn-run"
[[ -x "$RUN" ]] || { echo "cpu-check: $RUN not built" >&2; exit 1; }
command -v python3 >/dev/null || { echo "cpu-check: needs python3 for the table" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# As attn-bench: idle OpenMP threads spin 1 ms after a parallel region or
# barrier (libomp's KMP_BLOCKTIME), then sleep; an OMP_WAIT_POLICY of the
# environment wins (passive: sleep at once, a wake-up per region).
[[ -n "${OMP_WAIT_POLICY:-}" ]] || export KMP_BLOCKTIME=${KMP_BLOCKTIME:-1}

lscpu | grep -E '^(Model name|CPU family|Model|Flags)' | cut -c1-100
echo "OpenMP waiting: OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-(unset)} KMP_BLOCKTIME=${KMP_BLOCKTIME:-(unset)}"
amx=0
grep -qw amx_tile /proc/cpuinfo && grep -qw amx_bf16 /proc/cpuinfo && amx=1

# One function per (mask, dtype, L).
source "$ROOT/scripts/sdpa-function.sh"
for mask in dense causal; do
  for dtype in f32 bf16; do
    for L in 1024 4096; do
      sdpa_function "$TMP/$mask-$dtype-$L.mlir" "tensor<1x8x${L}x64x${dtype}>" "$mask"
    done
  done
done

# The dense f32 programs without their softmax (f32-nosoftmax).
ceiling=0
for L in 1024 4096; do
  out="$TMP/dense-nosoftmax-$L.mlir"
  if [[ -f "$BUILD/share/softmax-ceiling/dense-f32-L$L.mlir" ]]; then
    cp "$BUILD/share/softmax-ceiling/dense-f32-L$L.mlir" "$out"
  elif [[ -x "$BUILD/bin/attn-opt" ]]; then
    ATTN_BUILD_DIR="$BUILD" python3 "$ROOT/scripts/softmax-ceiling.py" --L "$L" --E 64 \
      --print-ir --strip-target > "$out" || rm -f "$out"
  fi
  [[ -s "$out" ]] && ceiling=$((ceiling + 1))
done
((ceiling == 2)) || echo "cpu-check: no programs without the softmax (a bundle of scripts/device-bundle.sh, or attn-opt): f32-nosoftmax skipped"

status=0
echo "== numerics (attn-run --check, L 1024)"
for f in "$TMP"/*-1024.mlir; do
  name=$(basename "$f" .mlir)
  # Without its softmax a program is no attention: nothing to check.
  [[ $name == *nosoftmax* ]] && continue
  out=$(timeout 300 "$RUN" "$f" --check 2>&1)
  if grep -q "CHECK PASSED" <<<"$out"; then
    echo "$name: passed"
  else
    echo "$name: FAILED"; grep -m3 -e error -e MISMATCH -e FAILED <<<"$out"; status=1
  fi
done
echo "attn-run's $(grep -m1 -o 'target [^,]*' <<<"$out")"

peaks=""
if [[ -x "$BUILD/bin/attn-bench" ]]; then
  echo "== peaks (attn-bench's probes)"
  timeout 300 "$BUILD/bin/attn-bench" --benchmark_filter='^attn-mlir/dense/L512/E64/T1/' \
      --benchmark_format=json > "$TMP/bench.json" 2>/dev/null &&
    grep -q fma_peak_gflops_1t "$TMP/bench.json" && peaks="$TMP/bench.json"
  [[ -n "$peaks" ]] || echo "cpu-check: attn-bench gave no peaks; the table leaves % peak out"
fi

echo "== timings ($ROUNDS interleaved rounds)"
# time_one CONFIG MASK DTYPE L THREADS -> appends "CONFIG MASK DTYPE L T MS" to results
time_one() {
  local config=$1 mask=$2 dtype=$3 L=$4 T=$5 args=() n=3
  local file="$TMP/$mask-$dtype-$L.mlir"
  [[ $L == 1024 ]] && n=10
  case $config in
    f32|bf16) args=(--num-threads "$T") ;;
    f32-nosoftmax) args=(--num-threads "$T"); file="$TMP/dense-nosoftmax-$L.mlir" ;;
    f32-64x64) args=(--pipeline "attn-cpu-pipeline{block-q=64 block-k=64 threads=$T}") ;;
    bf16-noamx) args=(--num-threads "$T" --target-features=-amx-tile,-amx-bf16) ;;
  esac
  local out ms
  out=$(timeout 600 "$RUN" "$file" --repeat $n "${args[@]}" 2>&1)
  ms=$(sed -n 's/.*run: best \([0-9.]*\) ms.*/\1/p' <<<"$out")
  [[ -n "$ms" ]] || { echo "cpu-check: $config $mask L=$L T=$T failed: $(grep -m1 error <<<"$out")" >&2; ms=nan; status=1; }
  echo "$config $mask $dtype $L $T $ms" >> "$TMP/results"
}
configs=(f32 f32-64x64 bf16)
((amx)) && configs+=(bf16-noamx)
((ceiling == 2)) && configs+=(f32-nosoftmax)
# Causal attention takes 64 x 64 blocks by default: no f32-64x64 run there
# (nor f32-nosoftmax: its programs are dense attention's).
for ((r = 1; r <= ROUNDS; ++r)); do
  for T in 1 2; do
    for L in 1024 4096; do
      for mask in dense causal; do
        for config in "${configs[@]}"; do
          [[ $mask == causal && ( $config == f32-64x64 || $config == f32-nosoftmax ) ]] && continue
          dtype=${config%%-*}
          time_one "$config" "$mask" "$dtype" "$L" "$T"
        done
      done
    done
  done
  echo "round $r done"
done

python3 - "$TMP/results" "$peaks" "$amx" <<'PY'
import json, math, sys
results, peaks_file, amx = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
best, rounds = {}, {}
for line in open(results):
    config, mask, dtype, L, T, ms = line.split()
    key = (config, mask, int(L), int(T))
    ms = float(ms)
    rounds.setdefault(key, []).append(ms)
    if not math.isnan(ms):
        best[key] = min(best.get(key, math.inf), ms)
ctx = json.load(open(peaks_file))["context"] if peaks_file else {}
def peak(config, T):
    name = "fma_peak_gflops_%dt" % T
    if config.startswith("bf16") and config != "bf16-noamx":
        for k in ("amx_bf16_peak_gflops_%dt", "bf16_dot_peak_gflops_%dt"):
            if k % T in ctx:
                name = k % T
                break
    return float(ctx[name]) if name in ctx else None
if ctx:
    print("peaks (GFLOP/s, 1 / 2 threads): " + ", ".join(
        "%s %.0f / %.0f" % (name, float(ctx[k % 1]), float(ctx[k % 2]))
        for name, k in (("FMA (%s)" % ctx.get("fma_peak_isa", "?"), "fma_peak_gflops_%dt"),
                        ("vdpbf16ps", "bf16_dot_peak_gflops_%dt"),
                        ("AMX tdpbf16ps", "amx_bf16_peak_gflops_%dt"))
        if k % 1 in ctx))
print("| config | mask | L | threads | ms per round | best ms | GFLOP/s | % peak |")
print("|---|---|---|---|---|---|---|---|")
for key in sorted(rounds, key=lambda k: (k[1], k[2], k[3], k[0])):
    config, mask, L, T = key
    ms = best.get(key)
    flops = 4 * 8 * L * L * 64 * (0.5 if mask == "causal" else 1.0)
    gf = flops / ms / 1e6 if ms else None
    p = peak(config, T)
    print("| %s | %s | %d | %d | %s | %s | %s | %s |" % (
        config, mask, L, T, " / ".join("%.2f" % x for x in rounds[key]),
        "%.2f" % ms if ms else "-", "%.0f" % gf if gf else "-",
        "%.0f %%" % (100 * gf / p) if gf and p else "-"))
def ratio(a, b, what):
    out = []
    for mask in ("dense", "causal"):
        for L in (1024, 4096):
            for T in (1, 2):
                x, y = best.get((a, mask, L, T)), best.get((b, mask, L, T))
                if x and y:
                    out.append("%s L%d %dt %.2fx" % (mask, L, T, y / x))
    if out:
        print("%s: %s" % (what, ", ".join(out)))
print()
ratio("bf16", "f32", "bf16 speed over f32 (f32 ms / bf16 ms)")
ratio("f32-64x64", "f32", "64 x 64 tiles over the default (default ms / 64x64 ms; above 1: 64 x 64 faster)")
ratio("f32-nosoftmax", "f32", "f32 over f32 without its softmax (f32 ms / no-softmax ms: 1.10 = a softmax of 9 %)")
if amx:
    ratio("bf16", "bf16-noamx", "AMX over AMX off (off ms / on ms)")
PY
exit $status
