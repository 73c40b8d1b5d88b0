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
passed=$(sed -n 's/^ *Passed: *\([0-9]*\).*/\1/p' "$log" | tail -1)
failed=$(sed -n 's/^ *Failed: *\([0-9]*\).*/\1/p' "$log" | tail -1)
echo "${passed:-0} passed, ${failed:-0} failed"
if [[ $status -eq 0 && -z "$passed" ]]; then
  echo "test.sh: lit reported no passing test" >&2
  status=1
fi
exit "$status"
