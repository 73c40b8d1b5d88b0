# RUN: rm -rf %t && mkdir -p %t
# RUN: %torch_python %s attn-run %t | FileCheck %s
#
# PyTorch cross-check of attn.sdpa: attn-run JIT-runs the reference lowering on
# seeded inputs and dumps inputs and outputs as .npy; PyTorch (float64) computes
# the same attention independently from those inputs. Both the JIT result and
# the C++ reference must match PyTorch within rtol 1e-5 / atol 1e-6.
#
# CHECK: dense: OK
# CHECK: causal: OK
# CHECK: causal_decode: OK
# CHECK: causal_fully_masked: OK
# CHECK: padding: OK
# CHECK: bias: OK
# CHECK: local: OK
# CHECK: gqa_causal_padding_bias: OK
# CHECK: 8 cases agree with PyTorch

import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))
from attn_torch import allowed_keys  # noqa: E402

ATTN_RUN, TMP = sys.argv[1], sys.argv[2]


def tensor_type(shape, dtype="f32"):
    return "tensor<" + "x".join(map(str, shape)) + "x" + dtype + ">"


def write_case(path, c):
    """Writes one attn.sdpa function for case `c` and returns its operand names."""
    q = tensor_type([c["B"], c["H"], c["Lq"], c["E"]])
    kv = tensor_type([c["B"], c["Hkv"], c["Lk"], c["E"]])
    out, lse = tensor_type([c["B"], c["H"], c["Lq"], c["E"]]), tensor_type([c["B"], c["H"], c["Lq"]])
    args, types, parts, names = ["%q: " + q, "%k: " + kv, "%v: " + kv], [q, kv, kv], "", ["q", "k", "v"]
    if c.get("padding"):
        t = tensor_type([c["B"]], "i32")
        args.append("%len: " + t); types.append(t); parts += " kv_lengths(%len)"; names.append("len")
    if c.get("bias"):
        t = tensor_type([c["B"], c["H"], c["Lq"], c["Lk"]])
        args.append("%bias: " + t); types.append(t); parts += " bias(%bias)"; names.append("bias")
    attrs = ["mask = #attn.mask<%s>" % c["mask"]]
    if c["mask"] == "local":
        attrs += ["window_left = %d : i64" % c["left"], "window_right = %d : i64" % c["right"]]
    with open(path, "w") as f:
        f.write(f"func.func @case({', '.join(args)}) -> ({out}, {lse}) {{\n"
                f"  %o, %l = attn.sdpa %q, %k, %v{parts} {{{', '.join(attrs)}}}\n"
                f"      : ({', '.join(types)}) -> ({out}, {lse})\n"
                f"  return %o, %l : {out}, {lse}\n}}\n")
    return names


def torch_attention(c, x):
    """Dense-mask attention in float64 PyTorch; fully masked rows give 0 / -inf."""
    q, k, v = (torch.from_numpy(x[n]).double() for n in ("q", "k", "v"))
    group = c["H"] // c["Hkv"]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-1, -2) / (c["E"] ** 0.5)
    if "bias" in x:
        scores = scores + torch.from_numpy(x["bias"]).double()
    lq, lk = c["Lq"], c["Lk"]
    allowed, _, j = allowed_keys(lq, lk, c["mask"], c.get("left"), c.get("right"))
    allowed = allowed.expand(c["B"], 1, lq, lk)
    if "len" in x:
        lengths = torch.from_numpy(x["len"]).long()
        allowed = allowed & (j[None, None] < lengths[:, None, None, None])
    scores = scores.masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    probs = torch.softmax(scores, dim=-1)
    probs = torch.where(allowed.any(-1, keepdim=True), probs, torch.zeros_like(probs))
    return (probs @ v).numpy(), lse.numpy()


def agree(got, want):
    same_inf = np.array_equal(np.isinf(got), np.isinf(want)) and np.array_equal(
        got[np.isinf(got)], want[np.isinf(want)])
    finite = np.isfinite(want)
    return same_inf and not np.isnan(got).any() and np.allclose(
        got[finite], want[finite], rtol=1e-5, atol=1e-6)


CASES = [
    dict(name="dense", B=2, H=3, Hkv=3, Lq=13, Lk=13, E=16, mask="dense"),
    dict(name="causal", B=1, H=2, Hkv=2, Lq=17, Lk=17, E=8, mask="causal"),
    dict(name="causal_decode", B=2, H=2, Hkv=2, Lq=5, Lk=19, E=8, mask="causal"),
    dict(name="causal_fully_masked", B=1, H=2, Hkv=2, Lq=9, Lk=4, E=8, mask="causal"),
    dict(name="padding", B=3, H=2, Hkv=2, Lq=7, Lk=12, E=8, mask="dense", padding=True),
    dict(name="bias", B=2, H=2, Hkv=2, Lq=6, Lk=9, E=8, mask="dense", bias=True),
    dict(name="local", B=1, H=2, Hkv=2, Lq=15, Lk=15, E=8, mask="local", left=3, right=2),
    dict(name="gqa_causal_padding_bias", B=2, H=4, Hkv=2, Lq=10, Lk=10, E=8, mask="causal",
         padding=True, bias=True),
]

failures = 0
for c in CASES:
    path = f"{TMP}/{c['name']}.mlir"
    names = write_case(path, c)
    dump = f"{TMP}/{c['name']}"
    subprocess.run([ATTN_RUN, path, "--check", "--dump-dir", dump], check=True,
                   stdout=subprocess.DEVNULL)
    x = {n: np.load(f"{dump}/arg{i}.npy") for i, n in enumerate(names)}
    want_out, want_lse = torch_attention(c, x)
    ok = True
    for prefix in ("result", "reference"):
        ok &= agree(np.load(f"{dump}/{prefix}0.npy").astype(np.float64), want_out)
        ok &= agree(np.load(f"{dump}/{prefix}1.npy").astype(np.float64), want_lse)
    print(f"{c['name']}: {'OK' if ok else 'MISMATCH'}")
    failures += not ok

if failures:
    sys.exit(f"{failures} case(s) disagree with PyTorch")
print(f"{len(CASES)} cases agree with PyTorch")
