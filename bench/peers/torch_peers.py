#!/usr/bin/env python3
"""Python peers of attn-bench: PyTorch SDPA, FlexAttention, IREE's llvm-cpu
backend and PyG's GATConv.

Runs with the peers' virtualenv (scripts/install-peers.sh):

  /opt/attn-peers/bin/python bench/peers/torch_peers.py \\
      --family causal,local --impl sdpa,flex --L 512,1024 --E 64 --threads 1,2
  /opt/attn-peers/bin/python bench/peers/torch_peers.py --family dense --impl iree --L 1024
  /opt/attn-peers/bin/python bench/peers/torch_peers.py --family gat --impl pyg --threads 1
  /opt/attn-peers/bin/python bench/peers/torch_peers.py --probe     # versions, as JSON

Every list option takes comma-separated values; each applicable combination
of family x impl x E x L x threads x dtype prints one JSON line
  {"peer", "family", "L", "E", "H", "threads", "dtype", "ms", "reps", "note"}
(plus "error" with "ms": null where a configuration failed). "ms" is the
median of `reps` timed calls after untimed warm-up calls (torch.compile's
compilation included in those), reps sized to --budget seconds (3..100).

Semantics are attn-mlir's (README, "Semantics in one paragraph"): batch 1,
H heads, q/k/v [1, H, L, E] f32 uniform in [-1, 1), scale 1/sqrt(E);
  dense     no mask
  causal    j <= i                      (SDPA: is_causal=True)
  local     |i - j| <= 128              (attn-mlir's local(128, 128))
  document  16 equal documents, j in i's document (--doc-causal: and j <= i)
SDPA takes local and document as a dense bool attn_mask: it computes every
one of the L x L scores (no skipping). FlexAttention is
torch.compile(flex_attention) with a create_block_mask block mask (built once,
outside the timed calls), which skips empty blocks. Before timing, each
(family, impl, dtype) is checked once at L = 512 against a float64 reference
and Flex against SDPA (allclose); a mismatch aborts with exit code 1.

iree: iree_linalg_ext.attention on [H, L, E] (the heads as its batch), scale
1/sqrt(E) and an identity score region, with the mask (causal, local,
document) as an [L, L] i1 operand, true = attend (IREE computes every score:
no skipping), compiled by iree-compile for llvm-cpu with
--iree-llvmcpu-target-cpu=host. One thread is IREE's local-sync driver
(inline, on the calling thread), more are local-task with
--task_topology_max_group_count; each configuration runs in a fresh process
(the runtime's flags are process-wide, and a hung compilation times out
after --iree-timeout seconds) on device-resident inputs, and its output is
checked against the float64 reference (L <= 2048, unless --no-check) before
timing. f32 only.

gat: PyG GATConv(64, 8, heads=8, bias=False) (attn-bench's attn.gat has no
bias) on a graph of N = 100000 nodes, each with 16 in-edges from uniformly
random sources (duplicates and self edges possible; GATConv drops the self
edges and adds one self loop per node, as attn.gat does): attn-bench's
gat-*/N100000/D16/H8/C8 shape. Each thread count runs in a fresh subprocess,
which also reports the peak RSS increase of one forward (see gat_child).
"""

import argparse
import gc
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
import warnings

# PyG's import warns that torch.jit.script is deprecated.
warnings.filterwarnings("ignore", category=FutureWarning, module=r"torch\.jit")

ATTN_FAMILIES = ("dense", "causal", "local", "document")
IMPL_FAMILIES = {"sdpa": ATTN_FAMILIES, "flex": ATTN_FAMILIES, "iree": ATTN_FAMILIES,
                 "pyg": ("gat",)}
PEER_NAMES = {"sdpa": "torch-sdpa", "flex": "torch-flex", "iree": "iree-llvm-cpu",
              "pyg": "pyg-gatconv"}


def csv(conv=str):
    return lambda s: [conv(x) for x in s.split(",") if x]


def time_call(fn, budget):
    """Median ms of `fn()` over repetitions filling ~budget seconds."""
    fn()  # warm-up: compilation, first touch, thread-pool start
    t0 = time.perf_counter()
    fn()
    est = time.perf_counter() - t0
    reps = int(max(3, min(100, budget / max(est, 1e-6))))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times), reps


# ----------------------------------------------------------------- attention

def torch_dtype(name):
    import torch
    return {"f32": torch.float32, "bf16": torch.bfloat16}[name]


def make_qkv(h, l, e, dtype, seed=1):
    import torch
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(1, h, l, e, generator=g) * 2 - 1).to(torch_dtype(dtype))
            for _ in range(3)]


def mask_mod_for(family, l, args):
    """FlexAttention mask_mod (None for dense)."""
    import torch
    w = args.window
    if family == "dense":
        return None
    if family == "causal":
        return lambda b, h, q, kv: q >= kv
    if family == "local":
        return lambda b, h, q, kv: (q - kv <= w) & (kv - q <= w)
    doc = (torch.arange(l) * args.docs) // l  # document of each position
    if args.doc_causal:
        return lambda b, h, q, kv: (doc[q] == doc[kv]) & (q >= kv)
    return lambda b, h, q, kv: doc[q] == doc[kv]


def dense_mask(family, l, args):
    """[L, L] bool, True = attend (None for dense)."""
    import torch
    i = torch.arange(l).view(-1, 1)
    j = torch.arange(l).view(1, -1)
    if family == "dense":
        return None
    if family == "causal":
        return j <= i
    if family == "local":
        return (i - j).abs() <= args.window
    doc = (torch.arange(l) * args.docs) // l
    m = doc.view(-1, 1) == doc.view(1, -1)
    return m & (j <= i) if args.doc_causal else m


def build_attention(impl, family, l, args, q):
    """A no-argument callable computing the attention of (q, k, v)."""
    import torch
    import torch.nn.functional as F
    qq, k, v = q
    if impl == "sdpa":
        if family == "causal":
            return lambda: F.scaled_dot_product_attention(qq, k, v, is_causal=True)
        mask = dense_mask(family, l, args)
        return lambda: F.scaled_dot_product_attention(qq, k, v, attn_mask=mask)
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    # Fresh compilation per configuration: static shapes, and Inductor's CPU
    # kernels take their OpenMP thread count at code generation.
    torch._dynamo.reset()
    flex = torch.compile(flex_attention, dynamic=False)
    mod = mask_mod_for(family, l, args)
    block = None if mod is None else create_block_mask(
        mod, B=None, H=None, Q_LEN=l, KV_LEN=l, device="cpu")
    return lambda: flex(qq, k, v, block_mask=block)


def reference(family, l, args, q):
    import torch
    qq, k, v = (t.double() for t in q)
    s = qq @ k.transpose(-1, -2) / math.sqrt(qq.shape[-1])
    mask = dense_mask(family, l, args)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def check(impl, family, dtype, args, checked):
    """Flex and SDPA against a float64 reference (and Flex against SDPA) at a
    small size, once per (impl, family, dtype): a wrong mask aborts."""
    import torch
    key = (impl, family, dtype)
    if key in checked or args.no_check:
        return
    checked.add(key)
    l, e = 512, 64
    q = make_qkv(args.H, l, e, dtype, seed=2)
    with torch.inference_mode():
        ref = reference(family, l, args, q)
        out = build_attention(impl, family, l, args, q)().double()
        tol = dict(atol=2e-4, rtol=1e-3) if dtype == "f32" else dict(atol=3e-2, rtol=3e-2)
        err = (out - ref).abs().max().item()
        if not torch.allclose(out, ref, **tol):
            sys.exit(f"torch_peers: {impl} {family} {dtype} L={l} E={e} differs from "
                     f"the float64 reference: max abs error {err:.3g}")
        if impl == "flex":
            sdpa = build_attention("sdpa", family, l, args, q)().double()
            if not torch.allclose(out, sdpa, **tol):
                sys.exit(f"torch_peers: flex {family} {dtype} differs from SDPA: max abs "
                         f"error {(out - sdpa).abs().max().item():.3g}")
    print(f"torch_peers: checked {impl} {family} {dtype} at L={l} E={e}: max abs error "
          f"{err:.2e} vs float64", file=sys.stderr)


def run_attention(impl, family, l, e, threads, dtype, args, checked):
    import torch
    torch.set_num_threads(threads)
    row = {"peer": PEER_NAMES[impl], "family": family, "L": l, "E": e, "H": args.H,
           "threads": threads, "dtype": dtype}
    if impl == "sdpa":
        row["note"] = ("SDPA is_causal=True" if family == "causal" else
                       "SDPA, no mask" if family == "dense" else
                       "SDPA with a dense bool attn_mask: all L x L scores, no skipping")
    else:
        row["note"] = ("torch.compile(flex_attention), no block mask" if family == "dense"
                       else "torch.compile(flex_attention) + create_block_mask "
                            "(built outside timing)")
    if family == "local":
        row["note"] += f"; window +-{args.window}"
    if family == "document":
        row["note"] += f"; {args.docs} documents" + (", causal" if args.doc_causal else "")
    try:
        check(impl, family, dtype, args, checked)
        torch.set_num_threads(threads)
        q = make_qkv(args.H, l, e, dtype)
        with torch.inference_mode():
            fn = build_attention(impl, family, l, args, q)
            row["ms"], row["reps"] = time_call(fn, args.budget)
    except SystemExit:
        raise
    except Exception as exc:  # report and go on with the other configs
        row["ms"], row["error"] = None, f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    return row


# ---------------------------------------------------------------------- IREE

def iree_source(family, h, l, e):
    """iree_linalg_ext.attention on [H, L, E] f32 (and an [L, L] i1 mask)."""
    t = f"tensor<{h}x{l}x{e}xf32>"
    masked = family != "dense"
    mask_arg = f", %mask: tensor<{l}x{l}xi1>" if masked else ""
    mask_in = ", %mask" if masked else ""
    mask_type = f", tensor<{l}x{l}xi1>" if masked else ""
    mask_map = "\n      affine_map<(b, m, n, k1, k2) -> (m, k2)>," if masked else ""
    return f"""func.func @attention(%q: {t}, %k: {t}, %v: {t}{mask_arg}) -> {t} {{
  %scale = arith.constant {1.0 / math.sqrt(e)!r} : f32
  %init = tensor.empty() : {t}
  %o = iree_linalg_ext.attention <{{indexing_maps = [
      affine_map<(b, m, n, k1, k2) -> (b, m, k1)>,
      affine_map<(b, m, n, k1, k2) -> (b, k2, k1)>,
      affine_map<(b, m, n, k1, k2) -> (b, k2, n)>,
      affine_map<(b, m, n, k1, k2) -> ()>,{mask_map}
      affine_map<(b, m, n, k1, k2) -> (b, m, n)>]}}>
      ins(%q, %k, %v, %scale{mask_in} : {t}, {t}, {t}, f32{mask_type})
      outs(%init : {t}) {{
    ^bb0(%score: f32):
      iree_linalg_ext.yield %score : f32
  }} -> {t}
  return %o : {t}
}}
"""


def iree_child(args):
    """One IREE configuration, in a fresh process (the caller spawns it)."""
    import numpy as np
    import torch
    import iree.compiler
    import iree.runtime as rt
    family, l, e, h, threads = args.family[0], args.L[0], args.E[0], args.H, args.threads[0]
    if threads > 1:
        rt.flags.parse_flags(f"--task_topology_max_group_count={threads}")
    vmfb = iree.compiler.compile_str(
        iree_source(family, h, l, e), target_backends=["llvm-cpu"],
        extra_args=["--iree-llvmcpu-target-cpu=host"])
    config = rt.Config("local-sync" if threads == 1 else "local-task")
    ctx = rt.SystemContext(config=config)
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    fn = ctx.modules.module["attention"]
    q = make_qkv(h, l, e, "f32")
    inputs = [t[0].numpy() for t in q]
    mask = dense_mask(family, l, args)
    if mask is not None:
        inputs.append(mask.numpy())
    dev = [rt.asdevicearray(config.device, a) for a in inputs]
    out = fn(*dev)
    note = ("iree_linalg_ext.attention, llvm-cpu, target-cpu=host, "
            + ("local-sync" if threads == 1 else f"local-task x {threads}"))
    if mask is not None:
        note += "; mask as an [L, L] i1 operand: all L x L scores, no skipping"
    if l <= 2048 and not args.no_check:
        got = torch.from_numpy(np.asarray(out.to_host())).double().unsqueeze(0)
        err = (got - reference(family, l, args, q)).abs().max().item()
        if not err <= 2e-4:
            sys.exit(f"torch_peers: iree {family} L={l} E={e} differs from the float64 "
                     f"reference: max abs error {err:.3g}")
        note += f"; checked vs float64: max abs error {err:.1e}"
    ms, reps = time_call(lambda: fn(*dev), args.budget)
    print(json.dumps({"peer": PEER_NAMES["iree"], "family": family, "L": l, "E": e,
                      "H": h, "threads": threads, "dtype": "f32", "ms": ms,
                      "reps": reps, "note": note}))


def run_iree(family, l, e, threads, dtype, args):
    row = {"peer": PEER_NAMES["iree"], "family": family, "L": l, "E": e, "H": args.H,
           "threads": threads, "dtype": dtype, "ms": None}
    if dtype != "f32":
        row["error"] = "the IREE peer runs f32 only"
        return row
    cmd = [sys.executable, os.path.abspath(__file__), "--iree-child",
           "--family", family, "--L", str(l), "--E", str(e), "--H", str(args.H),
           "--threads", str(threads), "--budget", str(args.budget),
           "--window", str(args.window), "--docs", str(args.docs)]
    cmd += ["--doc-causal"] if args.doc_causal else []
    cmd += ["--no-check"] if args.no_check else []
    row = run_child(cmd, row, timeout=args.iree_timeout)
    if "differs from the float64 reference" in row.get("error", ""):
        sys.exit(row["error"])
    return row


# ----------------------------------------------------------------------- GAT

def rss_kb(field):
    with open("/proc/self/status") as f:
        return int(re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M).group(1))


def gat_child(args):
    """One GATConv configuration, in a fresh process (the caller spawns it).

    Peak memory: after the graph, features and layer exist, the process's
    RSS high-water mark is reset to its current RSS (writing 5 to
    /proc/self/clear_refs); the peak increase of the first forward is then
    (high-water mark after it) - (RSS before it). The high-water mark is
    getrusage(RUSAGE_SELF).ru_maxrss, read from /proc/self/status's VmHWM:
    ru_maxrss is also max()'d with a value inherited at exec, which the reset
    cannot clear. tracemalloc would miss the tensors (not Python objects).
    Where clear_refs is not writable, the increase is taken from ru_maxrss
    before and after (a lower bound when building the inputs peaked higher).
    """
    import resource
    import torch
    from torch_geometric.nn import GATConv
    torch.set_num_threads(args.threads[0])
    n, d, f = args.nodes, args.degree, 64
    g = torch.Generator().manual_seed(1)
    src = torch.randint(0, n, (n * d,), generator=g)
    dst = torch.arange(n).repeat_interleave(d)
    edge_index = torch.stack([src, dst])
    x = torch.rand(n, f, generator=g) * 2 - 1
    conv = GATConv(f, 8, heads=8, bias=False).eval()
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as cr:
            cr.write("5")
        method = "VmHWM reset via clear_refs"
        before = rss_kb("VmRSS")
    except OSError:
        method = "ru_maxrss before/after (no clear_refs)"
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with torch.no_grad():
        conv(x, edge_index)  # the measured forward, also the warm-up
        peak = rss_kb("VmHWM") if method.startswith("VmHWM") else \
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        ms, reps = time_call(lambda: conv(x, edge_index), args.budget)
    import torch_geometric
    print(json.dumps({
        "peer": PEER_NAMES["pyg"], "family": "gat", "L": n, "E": f, "H": 8, "C": 8,
        "degree": d, "edges": n * d + n, "threads": args.threads[0], "dtype": "f32",
        "ms": ms, "reps": reps, "peak_mb": (peak - before) / 1024.0,
        "note": f"PyG {torch_geometric.__version__} GATConv(64, 8, heads=8, bias=False), "
                f"torch.no_grad; peak RSS increase of one forward ({method})"}))


def run_gat(threads, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--gat-child",
           "--threads", str(threads), "--nodes", str(args.nodes),
           "--degree", str(args.degree), "--budget", str(args.budget)]
    return run_child(cmd, {"peer": PEER_NAMES["pyg"], "family": "gat", "L": args.nodes,
                           "E": 64, "threads": threads, "dtype": "f32", "ms": None})


def run_child(cmd, row, timeout=None):
    """Runs a child configuration (--gat-child, --iree-child): its JSON row,
    else `row` with the child's last stderr line (or the timeout) as "error"."""
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        row["error"] = f"timed out after {timeout:g} s"
        return row
    lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
    if proc.returncode == 0 and lines:
        return json.loads(lines[-1])
    row["error"] = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
    return row


# ----------------------------------------------------------------------- main

def probe():
    info = {"python": sys.version.split()[0], "prefix": sys.prefix,
            "torch": None, "flex": None, "pyg": None, "iree": None}
    try:
        import torch
        info["torch"] = torch.__version__
        from torch.nn.attention.flex_attention import flex_attention  # noqa: F401
        info["flex"] = True
    except Exception as exc:
        info["flex_error"] = f"{type(exc).__name__}: {exc}"[:200]
    try:
        import torch_geometric
        info["pyg"] = torch_geometric.__version__
    except Exception as exc:
        info["pyg_error"] = f"{type(exc).__name__}: {exc}"[:200]
    try:
        import importlib.metadata
        import iree.compiler  # noqa: F401
        import iree.runtime  # noqa: F401
        info["iree"] = importlib.metadata.version("iree-base-compiler")
    except Exception as exc:
        info["iree_error"] = f"{type(exc).__name__}: {exc}"[:200]
    print(json.dumps(info))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--family", type=csv(), default=["dense"],
                   help="dense,causal,local,document,gat")
    p.add_argument("--impl", type=csv(), default=["sdpa"], help="sdpa,flex,iree,pyg")
    p.add_argument("--L", type=csv(int), default=[512])
    p.add_argument("--E", type=csv(int), default=[64])
    p.add_argument("--H", type=int, default=8)
    p.add_argument("--threads", type=csv(int), default=[1])
    p.add_argument("--dtype", type=csv(), default=["f32"], help="f32,bf16")
    p.add_argument("--budget", type=float, default=1.5,
                   help="seconds of timed calls per configuration")
    p.add_argument("--window", type=int, default=128, help="local: |i - j| <= window")
    p.add_argument("--docs", type=int, default=16, help="document: equal documents")
    p.add_argument("--doc-causal", action="store_true")
    p.add_argument("--nodes", type=int, default=100000, help="gat: N")
    p.add_argument("--degree", type=int, default=16, help="gat: in-edges per node")
    p.add_argument("--no-check", action="store_true", help="skip the numerics check")
    p.add_argument("--iree-timeout", type=float, default=900,
                   help="iree: seconds for one configuration (compile, check, timing)")
    p.add_argument("--probe", action="store_true", help="print versions and exit")
    p.add_argument("--gat-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--iree-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.probe:
        return probe()
    if args.gat_child:
        return gat_child(args)
    if args.iree_child:
        return iree_child(args)
    for name, values, allowed in (("family", args.family, ATTN_FAMILIES + ("gat",)),
                                  ("impl", args.impl, tuple(IMPL_FAMILIES)),
                                  ("dtype", args.dtype, ("f32", "bf16"))):
        bad = [v for v in values if v not in allowed]
        if bad:
            p.error(f"--{name}: {', '.join(bad)} not in {', '.join(allowed)}")
    configs = [(impl, fam) for fam in args.family for impl in args.impl
               if fam in IMPL_FAMILIES[impl]]
    if not configs:
        p.error("no (family, impl) pair applies: sdpa/flex/iree take attention "
                "families, pyg takes gat")
    checked = set()
    for impl, family in configs:
        if impl == "pyg":
            for t in args.threads:
                print(json.dumps(run_gat(t, args)), flush=True)
            continue
        for dtype in args.dtype:
            for e in args.E:
                for l in args.L:
                    for t in args.threads:
                        row = (run_iree(family, l, e, t, dtype, args) if impl == "iree"
                               else run_attention(impl, family, l, e, t, dtype, args,
                                                  checked))
                        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
