#!/usr/bin/env bash
# The README's main job: installs dependencies, builds, then JIT-compiles and
# runs the demo attention function (causal GQA attention with ALiBi) on seeded
# inputs, checks it against the C++ reference and prints result and timing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/install-deps.sh"
bash "$ROOT/scripts/build.sh"
"${ATTN_BUILD_DIR:-$ROOT/build}/bin/attn-run" "$ROOT/examples/demo.mlir" \
  --check --repeat 5
