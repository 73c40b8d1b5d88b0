#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, and runs every test
# (lit: dialect, passes, pipelines, JIT integration, PyTorch cross-checks, and
# the GoogleTest unit tests).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/install-deps.sh"
bash "$ROOT/scripts/build.sh"
bash "$ROOT/scripts/build.sh" check-attn
