#!/usr/bin/env python3
"""Writes the Hugging Face model fixtures of the tests (test/Inputs/hf/).

usage: <venv>/bin/python scripts/make-hf-fixtures.py [OUT_DIR]

Needs transformers (5.x) and torch: `bash scripts/install-peers.sh` installs
them into /opt/attn-peers. The tests themselves read only what this script
writes (no transformers, no hub download at test time).

Each fixture is a small random-initialised model saved with
`save_pretrained` (config.json + model.safetensors, or shards with
model.safetensors.index.json), and what transformers computes with it:

  gpt2-lm/      GPT2LMHeadModel (weights under `transformer.`, lm_head tied:
                not stored), tokens.npy -> logits.npy; a greedy `generate`
                from prompt.npy: generated.npy (prompt + new ids) and
                scores.npy (the logits of each generated position)
  gpt2-sharded/ GPT2Model (no prefix), saved in shards with an index,
                activation "gelu" and n_inner set: tokens.npy -> hidden.npy
                (last_hidden_state)
  vit-cls/      ViTForImageClassification, pixels.npy -> logits.npy
  vit-base/     ViTModel (no pooler), qkv_bias false, hidden_act gelu_new:
                pixels.npy -> hidden.npy (last_hidden_state)

Everything is f32 and seeded; transformers' version is recorded in
versions.txt.
"""
import os
import sys

import numpy as np
import torch
import transformers
from transformers import (GPT2Config, GPT2LMHeadModel, GPT2Model, ViTConfig,
                          ViTForImageClassification, ViTModel)

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "test", "Inputs", "hf")


def save(model, name, **kwargs):
    path = os.path.join(out, name)
    os.makedirs(path, exist_ok=True)
    model.save_pretrained(path, safe_serialization=True, **kwargs)
    return path


def npy(path, name, array):
    np.save(os.path.join(path, name), np.ascontiguousarray(array))


torch.manual_seed(0)
gen = torch.Generator().manual_seed(1)

# GPT-2 with the LM head, as most checkpoints are.
cfg = GPT2Config(vocab_size=97, n_positions=48, n_embd=32, n_layer=2,
                 n_head=4, layer_norm_epsilon=1e-5, initializer_range=0.3, bos_token_id=None,
                 eos_token_id=None)
lm = GPT2LMHeadModel(cfg).eval()
with torch.no_grad():
    # Larger biases and gains than the initialisation's, so that every
    # weight's role shows in the logits.
    for n, p in lm.named_parameters():
        if n.endswith("bias") or "ln" in n:
            p.add_(0.1 * torch.randn(p.shape, generator=gen))
path = save(lm, "gpt2-lm")
tokens = torch.randint(0, cfg.vocab_size, (2, 16), generator=gen)
with torch.no_grad():
    logits = lm(tokens).logits
npy(path, "tokens.npy", tokens.numpy().astype(np.int64))
npy(path, "logits.npy", logits.numpy())
prompt = torch.randint(0, cfg.vocab_size, (2, 5), generator=gen)
with torch.no_grad():
    # Every prompt token attended (generate would otherwise mask the ids
    # equal to pad_token_id).
    g = lm.generate(prompt, attention_mask=torch.ones_like(prompt),
                    max_new_tokens=12, do_sample=False,
                    output_scores=True, return_dict_in_generate=True,
                    pad_token_id=0)
npy(path, "prompt.npy", prompt.numpy().astype(np.int64))
npy(path, "generated.npy", g.sequences.numpy().astype(np.int64))
npy(path, "scores.npy", torch.stack(g.scores, 1).numpy())

# GPT2Model (no prefix), sharded, exact gelu and a feed-forward width of its
# own.
cfg = GPT2Config(vocab_size=61, n_positions=24, n_embd=24, n_layer=3,
                 n_head=3, n_inner=40, activation_function="gelu",
                 layer_norm_epsilon=1e-6, bos_token_id=None,
                 eos_token_id=None)
base = GPT2Model(cfg).eval()
path = save(base, "gpt2-sharded", max_shard_size="40KB")
tokens = torch.randint(0, cfg.vocab_size, (3, 10), generator=gen)
with torch.no_grad():
    hidden = base(tokens).last_hidden_state
npy(path, "tokens.npy", tokens.numpy().astype(np.int64))
npy(path, "hidden.npy", hidden.numpy())

# ViT for image classification.
cfg = ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32,
                num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, num_labels=5)
cls = ViTForImageClassification(cfg).eval()
with torch.no_grad():
    for n, p in cls.named_parameters():
        if n.endswith("bias") or "layernorm" in n or "token" in n:
            p.add_(0.1 * torch.randn(p.shape, generator=gen))
path = save(cls, "vit-cls")
pixels = torch.randn(2, 3, 16, 16, generator=gen)
with torch.no_grad():
    logits = cls(pixel_values=pixels).logits
npy(path, "pixels.npy", pixels.numpy())
npy(path, "logits.npy", logits.numpy())

# ViTModel without the pooler, no q/k/v biases, the tanh GELU, one channel.
cfg = ViTConfig(image_size=12, patch_size=3, num_channels=1, hidden_size=24,
                num_hidden_layers=2, num_attention_heads=2,
                intermediate_size=48, qkv_bias=False, hidden_act="gelu_new",
                layer_norm_eps=1e-6)
vit = ViTModel(cfg, add_pooling_layer=False).eval()
path = save(vit, "vit-base")
pixels = torch.randn(2, 1, 12, 12, generator=gen)
with torch.no_grad():
    hidden = vit(pixel_values=pixels).last_hidden_state
npy(path, "pixels.npy", pixels.numpy())
npy(path, "hidden.npy", hidden.numpy())

with open(os.path.join(out, "versions.txt"), "w") as f:
    f.write(f"transformers {transformers.__version__}\n"
            f"torch {torch.__version__}\n")
for root, _, files in sorted(os.walk(out)):
    for name in sorted(files):
        p = os.path.join(root, name)
        print(f"{os.path.relpath(p, out):45s} {os.path.getsize(p):8d}")
