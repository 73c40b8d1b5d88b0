#!/usr/bin/env bash
# The README's main job: installs dependencies, builds, then compiles the
# Fashion-MNIST ViT (models/vit-fashion-mnist.json, trained weights in
# models/vit-fashion-mnist.safetensors) with attn-compile and classifies the
# 10 000 test images of Debian's dataset-fashion-mnist, printing the stage
# times, images/s and the accuracy next to PyTorch's recorded at training.
# Then PyTorch runs the same weights on the same images in this run, for the
# images/s comparison (1 and 2 threads / workers each).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/install-deps.sh"
bash "$ROOT/scripts/build.sh"

DATA=/usr/share/datasets/fashion-mnist
MODEL="$ROOT/models/vit-fashion-mnist"
for workers in 1 2; do
  echo "== attn-compile, $workers worker(s)"
  "${ATTN_BUILD_DIR:-$ROOT/build}/bin/attn-compile" "$MODEL.json" --run \
    --weights "$MODEL.safetensors" \
    --input "images=$DATA/t10k-images-idx3-ubyte.gz" \
    --labels "$DATA/t10k-labels-idx1-ubyte.gz" \
    --reference "$MODEL.torch.json" --workers "$workers" --repeat 3
done
for threads in 1 2; do
  echo "== PyTorch (torchvision VisionTransformer, same weights), $threads thread(s)"
  /usr/bin/python3 "$ROOT/scripts/train-vit-fashion-mnist.py" --evaluate --threads "$threads"
done
