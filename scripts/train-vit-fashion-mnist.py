#!/usr/bin/python3
"""Trains the small ViT of models/vit-fashion-mnist.json on Fashion-MNIST.

Uses torchvision's VisionTransformer (so the state_dict names are torchvision's)
with a one-channel patch embedding, trains on the 60 000 training images of
Debian's dataset-fashion-mnist, and writes:
  models/vit-fashion-mnist.safetensors   the trained weights (F32)
  models/vit-fashion-mnist.torch.json    PyTorch's test accuracy, recorded at
                                         training time
With --evaluate it trains nothing: it loads the .safetensors into
torchvision's model and prints PyTorch's accuracy and images/s on the test
set (what the README's main job compares attn-compile with, in the same run).
Run with Debian's Python: /usr/bin/python3 scripts/train-vit-fashion-mnist.py
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "e2e"))
import attn_torch  # noqa: E402  (the shared reader/writer helpers)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spec", default=os.path.join(ROOT, "models", "vit-fashion-mnist.json"))
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=os.path.join(ROOT, "models", "vit-fashion-mnist"))
    p.add_argument("--evaluate", action="store_true",
                   help="only evaluate the trained weights (OUT.safetensors) with PyTorch")
    args = p.parse_args()
    if args.evaluate:
        return evaluate_only(args)

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    spec = json.load(open(args.spec))
    model = attn_torch.build_vit(spec)
    train_x, train_y = attn_torch.load_fashion_mnist(args.data, "train")
    test_x, test_y = attn_torch.load_fashion_mnist(args.data, "t10k")
    train_x = attn_torch.normalize(train_x, spec)
    test_x = attn_torch.normalize(test_x, spec)

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    steps = args.epochs * ((len(train_x) + args.batch - 1) // args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps, pct_start=0.15)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    start = time.time()
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(train_x))
        total = 0.0
        for i in range(0, len(train_x), args.batch):
            idx = perm[i:i + args.batch]
            x = train_x[idx]
            # Light augmentation: random horizontal flips.
            flip = torch.rand(len(x)) < 0.5
            x[flip] = x[flip].flip(-1)
            loss = loss_fn(model(x), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        acc, _ = attn_torch.evaluate(model, test_x, test_y)
        print(f"epoch {epoch + 1}/{args.epochs}: loss {total / len(train_x):.4f}  "
              f"test accuracy {acc:.4f}  ({time.time() - start:.0f} s)", flush=True)

    acc, _ = attn_torch.evaluate(model, test_x, test_y, batch=spec.get("batch", 100))
    attn_torch.write_safetensors(args.out + ".safetensors",
                                 {k: v.detach() for k, v in model.state_dict().items()},
                                 {"model": "vit-fashion-mnist", "test_accuracy": f"{acc:.4f}"})
    record = {"test_accuracy": round(acc, 4), "correct": int(round(acc * len(test_y))),
              "images": len(test_y), "torch_version": torch.__version__,
              "epochs": args.epochs, "train_seconds": round(time.time() - start, 1)}
    with open(args.out + ".torch.json", "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    print(json.dumps(record))


def evaluate_only(args):
    torch.set_num_threads(args.threads)
    spec = json.load(open(args.spec))
    model = attn_torch.build_vit(spec)
    model.load_state_dict(attn_torch.read_safetensors(args.out + ".safetensors"))
    test_x, test_y = attn_torch.load_fashion_mnist(args.data, "t10k")
    test_x = attn_torch.normalize(test_x, spec)
    attn_torch.evaluate(model, test_x[:1000], test_y[:1000])  # warm-up
    acc, ips = attn_torch.evaluate(model, test_x, test_y, batch=spec.get("batch", 100))
    print(f"PyTorch {torch.__version__} ({args.threads} threads, batch {spec.get('batch', 100)}): "
          f"accuracy {acc:.4f} ({round(acc * len(test_y))}/{len(test_y)}), {ips:.1f} images/s")


if __name__ == "__main__":
    main()
