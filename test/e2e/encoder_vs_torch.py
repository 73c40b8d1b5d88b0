# RUN: rm -rf %t && mkdir -p %t
# RUN: %torch_python %s attn-compile %t | FileCheck %s
#
# attn-compile's transformer-encoder against torch.nn.TransformerEncoder on
# the same weights: post-norm + relu with a padded batch (key padding as
# lengths; rows of padded positions are compared too, with PyTorch's
# non-nested-tensor path), and pre-norm + gelu with batch_first=false and a
# final norm; and 6-position sequences through the padding model compiled
# for 10 (padded, the keys past 6 masked by generated lengths, the rows cut
# back) against PyTorch on the 6 positions. float64 oracle.
#
# CHECK: padded/attn-cpu-pipeline: OK
# CHECK: padded/attn-reference-pipeline: OK
# CHECK: prenorm-seqfirst/attn-cpu-pipeline: OK
# CHECK: prenorm-seqfirst/attn-reference-pipeline: OK
# CHECK: short/attn-cpu-pipeline: OK
# CHECK: short/attn-reference-pipeline: OK
# CHECK: all agree

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_torch as at  # noqa: E402

TOOL, TMP = sys.argv[1], sys.argv[2]
ok = True
cases = [
    ("padded", {"d_model": 32, "heads": 4, "dim_feedforward": 48, "layers": 2, "seq_len": 10,
                "batch": 3, "padding_mask": True}),
    ("prenorm-seqfirst", {"d_model": 24, "heads": 3, "dim_feedforward": 40, "layers": 2,
                          "seq_len": 9, "batch": 2, "norm_first": True, "activation": "gelu",
                          "batch_first": False, "final_norm": True}),
]
for name, spec in cases:
    spec = dict(spec, kind="transformer-encoder")
    torch.manual_seed(0)
    enc = at.randomize(at.build_encoder(spec), seed=2, scale=0.3).eval()
    sd = {k: v.detach().clone() for k, v in enc.state_dict().items()}
    b, l, d = spec["batch"], spec["seq_len"], spec["d_model"]
    src = torch.randn((b, l, d) if spec.get("batch_first", True) else (l, b, d))
    inputs, mask = {"src": src}, None
    if spec.get("padding_mask"):
        lengths = torch.tensor([10, 4, 7], dtype=torch.int64)
        inputs["lengths"] = lengths
        mask = torch.arange(l).view(1, -1) >= lengths.view(-1, 1)
    with torch.no_grad():
        want = enc.double()(src.double(), src_key_padding_mask=mask)
    for p in ["attn-cpu-pipeline", "attn-reference-pipeline"]:
        got = at.run_attn_compile(TOOL, TMP, name, spec, sd, inputs, ["--pipeline", p])
        ok &= at.compare(f"{name}/{p}", got, want)

# Shorter inputs than seq_len: no recompilation, the same numbers.
spec = dict(cases[0][1], kind="transformer-encoder")
torch.manual_seed(0)
enc = at.randomize(at.build_encoder(spec), seed=2, scale=0.3).eval()
sd = {k: v.detach().clone() for k, v in enc.state_dict().items()}
src = torch.randn(3, 6, spec["d_model"])
with torch.no_grad():
    want = enc.double()(src.double())
for p in ["attn-cpu-pipeline", "attn-reference-pipeline"]:
    got = at.run_attn_compile(TOOL, TMP, "short", spec, sd, {"src": src}, ["--pipeline", p])
    ok &= at.compare(f"short/{p}", got, want)
print("all agree" if ok else "MISMATCH")
