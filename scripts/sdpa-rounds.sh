#!/usr/bin/env bash
# attn-mlir's f32 attention against PyTorch's SDPA in interleaved rounds.
#
#   bash scripts/sdpa-rounds.sh [ROUNDS] [THREADS] [OPTIONS]
#                                        (defaults: 3, 1, none)
#
# This project's hosts are shared VMs whose speed moves by 10-20 % within
# minutes. bench-table times attn-bench's configurations first and the
# Python peers minutes later, so its speedups mix two moments; here each
# configuration's attn-run call and its SDPA call run back to back, round
# after round, and the table gives the range of the ratio over the rounds.
#
# Dense and causal attention, B 1, H 8, L 1024 and 4096, E 64 and 128, f32,
# THREADS threads: attn-run (ATTN_BUILD_DIR/bin, default build/) compiles
# for this host with the target's default tiles and reports the best and
# the median of --repeat N calls (30 at L 1024, 3 at L 4096);
# bench/peers/torch_peers.py (the virtualenv of scripts/install-peers.sh,
# ATTN_PEERS_VENV, default /opt/attn-peers) times
# torch.nn.functional.scaled_dot_product_attention for about a second and
# reports its median (--no-check: attn-mlir's numerics are the test
# suite's and attn-bench --check's business). Speedup = SDPA median /
# attn-mlir median, the same statistic on both sides; GFLOP/s (useful
# flops: 4 B H L^2 E, half for causal) from attn-mlir's best call.
# OPTIONS: attn-cpu-pipeline options for attn-run's calls, space-separated
# (e.g. "speculative-softmax=true", "block-q=128"): the A/B of a pipeline
# option against SDPA, run once without and once with it.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS=${1:-3}
THREADS=${2:-1}
OPTIONS=${3:-}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "sdpa-rounds: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 1; }
[[ "$THREADS" =~ ^[1-9][0-9]*$ ]] || { echo "sdpa-rounds: THREADS must be a positive integer, not '$THREADS'" >&2; exit 1; }
[[ "$OPTIONS" =~ ^[a-z0-9.=\ -]*$ ]] || { echo "sdpa-rounds: OPTIONS must be attn-cpu-pipeline options (name=value, space-separated), not '$OPTIONS'" >&2; exit 1; }
PIPELINE=()
[[ -z "$OPTIONS" ]] || PIPELINE=(--pipeline "attn-cpu-pipeline{threads=$THREADS $OPTIONS}")
RUN="${ATTN_BUILD_DIR:-$ROOT/build}/bin/attn-run"
PY="${ATTN_PEERS_VENV:-/opt/attn-peers}/bin/python"
[[ -x "$RUN" ]] || { echo "sdpa-rounds: $RUN not built (bash scripts/build.sh)" >&2; exit 1; }
[[ -x "$PY" ]] || { echo "sdpa-rounds: no peers' virtualenv at ${PY%/bin/python} (bash scripts/install-peers.sh)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# As attn-bench and cpu-check: idle OpenMP threads spin 1 ms, then sleep.
[[ -n "${OMP_WAIT_POLICY:-}" ]] || export KMP_BLOCKTIME=${KMP_BLOCKTIME:-1}

source "$ROOT/scripts/sdpa-function.sh"
lscpu | grep -E '^(Model name|CPU family|Model):' | tr -s ' '
[[ -z "$OPTIONS" ]] || echo "attn-run: ${PIPELINE[1]}"
for mask in dense causal; do
  for L in 1024 4096; do
    for E in 64 128; do
      sdpa_function "$TMP/$mask-$L-$E.mlir" "tensor<1x8x${L}x${E}xf32>" "$mask"
    done
  done
done

status=0
for ((r = 1; r <= ROUNDS; ++r)); do
  for mask in dense causal; do
    for L in 1024 4096; do
      for E in 64 128; do
        n=3
        [[ $L == 1024 ]] && n=30
        out=$(timeout 600 "$RUN" "$TMP/$mask-$L-$E.mlir" --num-threads "$THREADS" "${PIPELINE[@]}" --repeat $n 2>&1)
        ours=$(sed -n 's/.*run: best \([0-9.]*\) ms, median \([0-9.]*\) ms.*/\1 \2/p' <<<"$out")
        [[ -n "$ours" ]] || { echo "sdpa-rounds: attn-run $mask L=$L E=$E failed: $(grep -m1 error <<<"$out")" >&2; ours="nan nan"; status=1; }
        peer=$(timeout 600 "$PY" "$ROOT/bench/peers/torch_peers.py" --impl sdpa --family "$mask" \
                 --L "$L" --E "$E" --threads "$THREADS" --budget 1 --no-check 2>&1 |
               sed -n 's/.*"ms": \([0-9.]*\).*/\1/p' | tail -n 1)
        [[ -n "$peer" ]] || { echo "sdpa-rounds: SDPA $mask L=$L E=$E failed" >&2; peer=nan; status=1; }
        echo "$mask $L $E $ours $peer" >> "$TMP/results"
      done
    done
  done
  echo "round $r done"
done

python3 - "$TMP/results" "$THREADS" <<'PY'
import math, sys
rows = {}
for line in open(sys.argv[1]):
    mask, L, E, best, median, sdpa = line.split()
    rows.setdefault((mask, int(L), int(E)), []).append(
        (float(best), float(median), float(sdpa)))
fmt = lambda xs, f="%.2f": (f % min(xs)) + ("" if min(xs) == max(xs) else "-" + f % max(xs))
print("| mask | L | E | threads | attn-mlir best ms | attn-mlir median ms | SDPA median ms | speedup vs SDPA (medians) | GFLOP/s (best) |")
print("|---|---|---|---|---|---|---|---|---|")
for (mask, L, E), v in sorted(rows.items()):
    v = [x for x in v if not any(math.isnan(y) for y in x)]
    if not v:
        print("| %s | %d | %d | %s | - | - | - | - | - |" % (mask, L, E, sys.argv[2]))
        continue
    flops = 4 * 8 * L * L * E * (0.5 if mask == "causal" else 1.0)
    print("| %s | %d | %d | %s | %s | %s | %s | %sx | %.0f |" % (
        mask, L, E, sys.argv[2], fmt([x[0] for x in v]), fmt([x[1] for x in v]),
        fmt([x[2] for x in v]), fmt([x[2] / x[1] for x in v]),
        max(flops / x[0] / 1e6 for x in v)))
PY
exit $status
