#!/usr/bin/env bash
# Installs the Python benchmark peers of scripts/bench-table.py into a
# virtualenv outside the repository: PyTorch (SDPA, FlexAttention) and PyTorch
# Geometric (GATConv); transformers (scripts/make-hf-fixtures.py, the
# Hugging Face fixtures of the tests); matplotlib (bench-table.py's plot);
# and those of the ViT main job (bench/peers/vit_peers.py):
# torchvision (the model), ONNX (torch.onnx.export, TorchScript exporter),
# ONNX Runtime and OpenVINO; and IREE's compiler and runtime (its llvm-cpu
# backend compiling iree_linalg_ext.attention, a peer of attn-bench's
# attention). Idempotent; Debian 12, as root. Not part of the tests.
#
#   bash scripts/install-peers.sh          # venv at ${ATTN_PEERS_VENV:-/opt/attn-peers}
#
# torch is PyPI's default Linux wheel (it runs on CPU; its CUDA dependencies
# make the venv ~5-6 GB and the first install ~7 minutes). torch.compile
# (FlexAttention) on CPU needs a C++ compiler and the Python headers, so g++
# and python3-dev are installed too when missing.
set -euo pipefail

VENV="${ATTN_PEERS_VENV:-/opt/attn-peers}"
TORCH_VERSION="2.15.0"
TORCHVISION_VERSION="0.29.2"   # the torchvision release built against torch 2.15
IREE_VERSION="3.13.0"          # iree-base-compiler and iree-base-runtime
PY=/usr/bin/python3

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

# Debian's python3 needs python3-venv (ensurepip) for `-m venv`; probe in a
# scratch directory so a failed probe leaves no half-made venv behind.
probe="$(mktemp -d)"
if ! "$PY" -m venv "$probe/v" >/dev/null 2>&1; then
  echo "install-peers: $PY -m venv failed; installing python3-venv"
  apt_install python3-venv
fi
rm -rf "$probe"

need=()
command -v g++ >/dev/null 2>&1 || need+=(g++)
pyinc="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
[ -f "$pyinc/Python.h" ] || need+=(python3-dev)
if [ "${#need[@]}" -gt 0 ]; then
  echo "install-peers: installing ${need[*]} (torch.compile on CPU)"
  apt_install "${need[@]}"
fi

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
  echo "install-peers: creating $VENV"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
fi

# PyPI only: no find-links or extra index from the environment. No pip cache:
# it would hold a second copy of the multi-GB wheels.
export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
unset PIP_FIND_LINKS PIP_EXTRA_INDEX_URL
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q "torch==$TORCH_VERSION" torch-geometric numpy matplotlib \
  "torchvision==$TORCHVISION_VERSION" onnx onnxruntime openvino transformers \
  safetensors "iree-base-compiler==$IREE_VERSION" "iree-base-runtime==$IREE_VERSION"

echo "install-peers: installed in $VENV:"
"$VENV/bin/python" -W ignore::FutureWarning - <<'EOF'
import importlib.metadata as md
import sys
print(f"  python {sys.version.split()[0]}")
for name in ("torch", "torch-geometric", "numpy", "torchvision", "onnx",
             "onnxruntime", "openvino", "transformers", "safetensors",
             "matplotlib", "iree-base-compiler", "iree-base-runtime"):
    print(f"  {name} {md.version(name)}")
import torch
from torch.nn.attention.flex_attention import flex_attention  # noqa: F401
import torch_geometric  # noqa: F401
import torchvision  # noqa: F401
import onnx  # noqa: F401
import transformers  # noqa: F401
import onnxruntime
import openvino
import iree.compiler  # noqa: F401
import iree.runtime  # noqa: F401
print(f"  onnxruntime providers {onnxruntime.get_available_providers()}, "
      f"openvino devices {openvino.Core().available_devices}")
print(f"  torch CPU threads {torch.get_num_threads()}, CUDA available: "
      f"{torch.cuda.is_available()}")
EOF
du -sh "$VENV" | awk '{print "  size " $1}'
