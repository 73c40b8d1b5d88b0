#!/usr/bin/env python3
"""Runs attn-bench twice and prints one markdown table.

The first run uses the environment as it is (this workplace sets
OPENBLAS_CORETYPE=Haswell, which halves OpenBLAS here); the second unsets
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for that command only, so OpenBLAS picks
its best kernel. attn-mlir and the reference lowering are taken from the first
run, OpenBLAS from both. Usage:

  scripts/bench-table.py [--full] [--filter REGEX] [--min-time SECONDS]
                         [--peers | --no-peers | --peers-only] [--peer-budget SECONDS]
                         [--iree-max-l L]
                         [--plot FILE.png | --no-plot]

On a terminal, attn-bench's own lines show its progress on stderr (quiet
otherwise). The table is followed by a PNG plot (default bench-table.png in
the current directory): per family, the milliseconds of attn-mlir and each
peer for every configuration, on a log scale (needs matplotlib: Debian's
python3-matplotlib, which install-peers.sh installs; without it the plot is
skipped with a note).

A filter is matched against names like attn-mlir/causal/L1024/E64/T2; start it
with "/" (e.g. "/causal/L1024/") to match every peer.

Python peers (on by default when their virtualenv exists: scripts/install-peers.sh,
${ATTN_PEERS_VENV:-/opt/attn-peers}): after attn-bench, bench/peers/torch_peers.py
times PyTorch SDPA (dense, causal, local), FlexAttention (causal, local), IREE's
llvm-cpu backend (dense, causal, local in f32, at L <= --iree-max-l, default
1024: it computes every score, 24-30x slower than attn-mlir on dense attention
and more where masks let attn-mlir skip, ~11 s a call at L = 4096) and PyG's GATConv on every (family, L, E, threads) attn-mlir was
timed at, and the tables get their columns and attn-mlir's speedup over each. --peers-only skips
attn-bench and prints the peer columns alone for the default (or --full)
configurations the filter matches.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(os.environ.get("ATTN_BUILD_DIR", os.path.join(ROOT, "build")),
                     "bin", "attn-bench")
PEERS_SCRIPT = os.path.join(ROOT, "bench", "peers", "torch_peers.py")
# Peers of each attn-mlir family: (torch_peers.py --impl, its column).
PEER_IMPLS = {"dense": ("sdpa", "iree"), "causal": ("sdpa", "flex", "iree"),
              "local": ("sdpa", "flex", "iree"),
              "dense-bf16": ("sdpa",), "causal-bf16": ("sdpa",)}
# The peer columns of the attention tables: (torch_peers.py name, column
# header, its name in "speedup vs", its label in the plot).
PEER_COLUMNS = (("torch-sdpa", "PyTorch SDPA", "SDPA", "PyTorch SDPA"),
                ("torch-flex", "Flex", "Flex", "FlexAttention"),
                ("iree-llvm-cpu", "IREE", "IREE", "IREE"))
GAT_NAME = re.compile(r"gat-(fused|unfused)/N(\d+)/D(\d+)/H8/C8/T(\d+)$")


def run(extra_env_unset, args):
    env = dict(os.environ)
    for name in extra_env_unset:
        env.pop(name, None)
    cmd = [BENCH, f"--benchmark_min_time={args.min_time}"]
    if args.full:
        cmd.append("--full")
    if args.filter:
        cmd.append(f"--benchmark_filter={args.filter}")
    if sys.stderr.isatty():
        # Progress: the console lines go to the terminal as each benchmark
        # finishes; the JSON to a file.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "bench.json")
            proc = subprocess.run(cmd + [f"--benchmark_out={out}",
                                         "--benchmark_out_format=json"],
                                  env=env, stdout=sys.stderr, stderr=sys.stderr)
            if proc.returncode != 0 or not os.path.exists(out):
                return None
            with open(out) as f:
                text = f.read()
    else:
        proc = subprocess.run(cmd + ["--benchmark_format=json"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
        if proc.returncode != 0:
            return None
        text = proc.stdout
    if not text.strip():
        return None  # e.g. the filter matched nothing
    return json.loads(text)


def index(report):
    rows = {}
    for b in report["benchmarks"]:
        if b.get("error_occurred"):
            continue
        m = re.match(r"([^/]+)/(.+?)/real_time$", b["name"])
        rows[(m.group(1), m.group(2))] = b
    return rows


class Peers:
    """The Python peers: what the venv has, and their timings by config."""

    def __init__(self, venv, iree_max_l=1024):
        self.venv = venv
        self.iree_max_l = iree_max_l
        self.python = os.path.join(venv, "bin", "python")
        self.info = None
        self.results = {}  # (peer, family, L, E, threads) -> JSON row
        if os.access(self.python, os.X_OK):
            proc = subprocess.run([self.python, PEERS_SCRIPT, "--probe"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
            if proc.returncode == 0 and proc.stdout.strip():
                self.info = json.loads(proc.stdout.strip().splitlines()[-1])

    def has(self, impl):
        i = self.info or {}
        return bool({"sdpa": i.get("torch"), "flex": i.get("flex"),
                     "iree": i.get("iree"), "pyg": i.get("pyg")}[impl])

    def status(self):
        names = {"sdpa": "PyTorch SDPA", "flex": "FlexAttention", "iree": "IREE",
                 "pyg": "PyG"}
        i = self.info or {}
        found = []
        if self.has("sdpa"):
            found.append(f"PyTorch {i['torch']} SDPA")
        if self.has("flex"):
            found.append("FlexAttention")
        if self.has("iree"):
            found.append(f"IREE {i['iree']} (llvm-cpu)")
        if self.has("pyg"):
            found.append(f"PyG {i['pyg']}")
        missing = [names[k] for k in names if not self.has(k)]
        if not found:
            why = (f"no {self.python}" if not os.access(self.python, os.X_OK)
                   else f"{self.python} {PEERS_SCRIPT} --probe failed")
            return (f"peers: none found ({why}; bash scripts/install-peers.sh installs "
                    f"them); missing: {', '.join(missing)}")
        return (f"peers: {', '.join(found)} from {self.venv}; "
                f"missing: {', '.join(missing) or 'none'}")

    def run(self, impl, family, lens, dims, threads, budget):
        if impl == "iree":
            lens = {l for l in lens if l <= self.iree_max_l}
        if not self.has(impl) or not lens:
            return
        # "dense-bf16": the dense family on bf16 tensors.
        base, _, dtype = family.partition("-")
        cmd = [self.python, PEERS_SCRIPT, "--impl", impl, "--family", base,
               "--threads", ",".join(map(str, sorted(threads))), "--budget", str(budget)]
        if dtype:
            cmd += ["--dtype", dtype]
        if family != "gat":
            cmd += ["--L", ",".join(map(str, sorted(lens))),
                    "--E", ",".join(map(str, sorted(dims)))]
        else:
            cmd += ["--nodes", str(next(iter(lens)))]
        print(f"peers: {' '.join(cmd[2:])}", file=sys.stderr, flush=True)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                if r.get("error"):
                    print(f"peers: {r['peer']} {family} L{r['L']} E{r['E']} "
                          f"T{r['threads']}: {r['error']}", file=sys.stderr)
                self.results[(r["peer"], family, r["L"], r["E"], r["threads"])] = r
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"peers: {impl} {family} failed: {tail}", file=sys.stderr)

    def run_all(self, attention, gat, budget):
        """attention: (family, L, E, threads) tuples; gat: (nodes, threads)."""
        for family, impls in PEER_IMPLS.items():
            rows = [c for c in attention if c[0] == family]
            for impl in impls:
                self.run(impl, family, {c[1] for c in rows}, {c[2] for c in rows},
                         {c[3] for c in rows}, budget)
        for nodes in sorted({n for n, _ in gat}):
            self.run("pyg", "gat", {nodes}, {64}, {t for n, t in gat if n == nodes},
                     budget)

    def ms(self, peer, family, l, e, t):
        r = self.results.get((peer, family, l, e, t))
        return r["ms"] if r and r.get("ms") is not None else None


def peer_cells(peers, family, l, e, t, ms):
    """'SDPA ms | speedup | Flex ms | speedup | IREE ms | speedup |' for one
    attn-mlir row."""
    cells = []
    for peer, *_ in PEER_COLUMNS:
        pm = peers.ms(peer, family, l, e, t)
        cells += [f"{pm:.2f}" if pm else "-",
                  f"{pm / ms:.2f}x" if pm and ms else "-"]
    return " " + " | ".join(cells) + " |"


def default_configs(args):
    """The (family, L, E, threads) and GAT (nodes, threads) rows attn-bench
    registers, as far as the filter matches them (for --peers-only)."""
    lens = [512, 1024, 2048, 4096] + ([8192] if args.full else [])
    dims = [64, 128] if args.full else [64]
    match = lambda name: re.search(args.filter, name) if args.filter else True
    attention = [(f, l, e, t) for f in PEER_IMPLS for e in dims for l in lens
                 for t in (1, 2) if match(f"attn-mlir/{f}/L{l}/E{e}/T{t}")]
    gat = [(100000, t) for t in (1, 2)
           if match(f"gat-fused/N100000/D16/H8/C8/T{t}")]
    return attention, gat


def peers_only(args, peers):
    attention, gat = default_configs(args)
    if not attention and not gat:
        sys.exit("the filter matches no peer configuration")
    peers.run_all(attention, gat, args.peer_budget)
    fmt = lambda v: f"{v:.2f}" if v else "-"
    if attention:
        print()
        print("| family | L | E | threads |" +
              "".join(f" {name} ms |" for _, name, *_ in PEER_COLUMNS))
        print("|---|---|---|---|" + "---|" * len(PEER_COLUMNS))
        for f, l, e, t in sorted(attention, key=lambda c: (c[0], c[2], c[1], c[3])):
            print(f"| {f} | {l} | {e} | {t} |" +
                  "".join(f" {fmt(peers.ms(peer, f, l, e, t))} |"
                          for peer, *_ in PEER_COLUMNS))
    if gat:
        print()
        print("| GAT (N 100k, degree 16, H 8, C 8) | threads | PyG ms | PyG peak MB |")
        print("|---|---|---|---|")
        for n, t in gat:
            r = peers.results.get(("pyg-gatconv", "gat", n, 64, t)) or {}
            print(f"| PyG GATConv | {t} | {fmt(r.get('ms'))} | "
                  f"{r['peak_mb']:.0f} |" if r.get("ms") else f"| PyG GATConv | {t} | - | - |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--full", action="store_true")
    p.add_argument("--filter", default="")
    p.add_argument("--min-time", default="0.2")
    p.add_argument("--peers", dest="peers", action="store_true", default=None,
                   help="run the Python peers (default: when their venv exists)")
    p.add_argument("--no-peers", dest="peers", action="store_false")
    p.add_argument("--peers-only", action="store_true",
                   help="skip attn-bench; print the peers' columns only")
    p.add_argument("--peers-venv",
                   default=os.environ.get("ATTN_PEERS_VENV", "/opt/attn-peers"))
    p.add_argument("--peer-budget", type=float, default=1.0,
                   help="seconds of timed calls per peer configuration")
    p.add_argument("--iree-max-l", type=int, default=1024,
                   help="the IREE peer runs at L <= this (it computes every score, "
                        "24-30x slower than attn-mlir on dense attention)")
    p.add_argument("--plot", default="bench-table.png",
                   help="the PNG plot written after the table")
    p.add_argument("--no-plot", dest="plot", action="store_const", const="")
    p.add_argument("--plot-from", help=argparse.SUPPRESS)  # write_plot's helper
    args = p.parse_args()
    if args.plot_from:
        with open(args.plot_from) as f:
            data = json.load(f)
        write_plot([tuple(r) for r in data["rows"]], args.plot, data["context"])
        return 0

    peers = None
    if args.peers is not False or args.peers_only:
        peers = Peers(args.peers_venv, args.iree_max_l)
        print(peers.status())
        if peers.info is None:
            peers = None
    if args.peers_only:
        return peers_only(args, peers) if peers else 1

    env_run = run([], args)
    if env_run is None:
        sys.exit("attn-bench failed or the filter matched no benchmark")
    openblas_filter = args.filter
    best_args = argparse.Namespace(**vars(args))
    # Only the OpenBLAS peer again: "/L512/" -> "openblas-unfused/L512/"-style.
    if openblas_filter.startswith("/"):
        best_args.filter = "openblas-unfused" + openblas_filter
    else:
        best_args.filter = "openblas-unfused/.*" + openblas_filter
    best_run = run(["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"], best_args)
    ctx = env_run["context"]
    best_ctx = best_run["context"] if best_run else {"openblas_core": "not run"}
    env_rows, best_rows = index(env_run), index(best_run) if best_run else {}
    peak = {1: float(ctx["fma_peak_gflops_1t"]), 2: float(ctx["fma_peak_gflops_2t"])}
    # bf16 families on a host with bf16 dot products run on them: their
    # "% peak" is of the bf16 dot-product peak measured in the same run.
    dot_peak = ({1: float(ctx["bf16_dot_peak_gflops_1t"]),
                 2: float(ctx["bf16_dot_peak_gflops_2t"])}
                if "bf16_dot_peak_gflops_1t" in ctx else None)
    # ... or, where they run on AMX tiles, of the AMX tile-product peak.
    amx_peak = ({1: float(ctx["amx_bf16_peak_gflops_1t"]),
                 2: float(ctx["amx_bf16_peak_gflops_2t"])}
                if float(ctx.get("amx_bf16_peak_gflops_1t", 0)) > 0 else None)
    if amx_peak:
        dot_peak = amx_peak

    if peers:
        attention = []
        for (peer, config) in env_rows:
            parts = config.split("/")
            if peer == "attn-mlir" and len(parts) == 4 and parts[0] in PEER_IMPLS:
                attention.append((parts[0], int(parts[1][1:]), int(parts[2][1:]),
                                  int(parts[3][1:])))
        gat = sorted({(int(m.group(2)), int(m.group(4))) for peer, config in env_rows
                      if (m := GAT_NAME.match(f"{peer}/{config}"))})
        peers.run_all(attention, gat, args.peer_budget)

    print(f"Host: {ctx.get('target_cpu', '?')} ({ctx.get('target_isa', '?')}), the "
          "target attn-mlir compiled for.")
    print(f"FMA peak measured in this run ({ctx.get('fma_peak_isa', '?')} probe): "
          f"{peak[1]:.0f} GFLOP/s (1 thread), "
          f"{peak[2]:.0f} GFLOP/s (2 threads). OpenBLAS kernels: "
          f"{ctx['openblas_core']} (environment, OPENBLAS_CORETYPE="
          f"{ctx['OPENBLAS_CORETYPE']}), {best_ctx['openblas_core']} (best, unset).")
    print(f"attn-mlir's OpenMP waiting: OMP_WAIT_POLICY={ctx.get('OMP_WAIT_POLICY', '?')}, "
          f"KMP_BLOCKTIME={ctx.get('KMP_BLOCKTIME', '?')} (docs/Rationale.md, \"Threads\"); "
          "the Python peers run in the environment as it is (their libraries' "
          "defaults unless it sets OMP_WAIT_POLICY).")
    if amx_peak:
        print(f"bf16 tile-product peak measured in this run (AMX-BF16 tdpbf16ps probe): "
              f"{amx_peak[1]:.0f} GFLOP/s (1 thread), {amx_peak[2]:.0f} GFLOP/s "
              "(2 threads); the -bf16 families' % peak is of it.")
    elif dot_peak:
        print(f"bf16 dot-product peak measured in this run (AVX512-BF16 vdpbf16ps probe): "
              f"{dot_peak[1]:.0f} GFLOP/s (1 thread), {dot_peak[2]:.0f} GFLOP/s "
              "(2 threads); the -bf16 families' % peak is of it.")
    if peers:
        print("Python peers: median of >= 3 calls after warm-up, ~"
              f"{args.peer_budget:g} s each; SDPA takes local as a dense bool mask "
              "(every score computed); Flex is torch.compile(flex_attention) with a "
              "block mask (causal, local); IREE is iree_linalg_ext.attention on its "
              "llvm-cpu backend (target-cpu=host; masks as an [L, L] i1 operand, "
              f"every score computed; f32, L <= {args.iree_max_l}); "
              "speedup = peer ms / attn-mlir ms.")
    print()
    print("| family | L | E | threads | attn-mlir ms | GFLOP/s useful (dense-eq) | % peak (useful) | "
          "OpenBLAS-unfused ms env / best | speedup vs best | Halide (unblocked schedule) ms | speedup vs Halide | "
          "reference ms |" + ("".join(f" {name} ms | speedup vs {short} |"
                                      for _, name, short, _ in PEER_COLUMNS)
                              if peers else ""))
    print("|---|---|---|---|---|---|---|---|---|---|---|---|" +
          ("---|" * 2 * len(PEER_COLUMNS) if peers else ""))
    def order(item):
        family, l, e, t = item[0][1].split("/")
        return (family, int(e[1:]), int(l[1:]), int(t[1:]))

    def peer_family(item):
        (peer, config), _ = item
        return peer == "attn-mlir" and len(config.split("/")) == 4 and \
            re.match(r"(graph|biasmask)\d", config) is None

    plot_rows = []  # (family, configuration, {implementation: ms})
    for (peer, config), b in sorted(filter(peer_family, env_rows.items()),
                                    key=order):
        family, l, e, t = config.split("/")
        threads = int(t[1:])
        ms = b["real_time"]
        dense = b["flops_dense"] / 1e9
        useful = b["flops_useful"] / 1e9
        blas_env = env_rows.get(("openblas-unfused", config))
        blas_best = best_rows.get(("openblas-unfused", config))
        ref = env_rows.get(("attn-mlir-reference", config))
        halide = env_rows.get(("halide", config))
        fmt = lambda r: f"{r['real_time']:.2f}" if r else "-"
        speedup = f"{blas_best['real_time'] / ms:.2f}x" if blas_best else "-"
        halide_cells = (f"{fmt(halide)} | {halide['real_time'] / ms:.2f}x"
                        if halide else "- | -")
        row_peak = (dot_peak if dot_peak and family.endswith("-bf16") else peak)[threads]
        line = (f"| {family} | {l[1:]} | {e[1:]} | {threads} | {ms:.2f} | "
                f"{useful:.0f} ({dense:.0f}) | {100 * useful / row_peak:.0f} % | "
                f"{fmt(blas_env)} / {fmt(blas_best)} | {speedup} | {halide_cells} | "
                f"{fmt(ref)} |")
        if peers:
            line += peer_cells(peers, family, int(l[1:]), int(e[1:]), threads, ms)
        print(line)
        bars = {"attn-mlir": ms, "OpenBLAS-unfused": blas_best and blas_best["real_time"],
                "Halide": halide and halide["real_time"]}
        if peers:
            for peer, _, _, label in PEER_COLUMNS:
                bars[label] = peers.ms(peer, family, int(l[1:]), int(e[1:]), threads)
        plot_rows.append((family, f"L{l[1:]} E{e[1:]} T{threads}", bars))
    print_graph_tables(env_rows, peers, plot_rows)
    if args.plot:
        write_plot(plot_rows, args.plot, ctx, args.peers_venv)


def print_graph_tables(rows, peers=None, plot_rows=None):
    """Graph-masked vs dense-masked attention, and fused vs unfused GAT."""
    masks = {k[1]: b for k, b in rows.items()
             if k[0] == "attn-mlir" and re.match(r"(graph|biasmask)\d", k[1])}
    if masks:
        print()
        print("| density | L | threads | graph mask shuffled ms | graph mask RCM ms | "
              "tiles shuffled ms (tile density) | tiles RCM ms (tile density) | "
              "dense -inf bias ms | RCM vs bias |")
        print("|---|---|---|---|---|---|---|---|---|")
        keys = sorted({(int(re.search(r"\d+", c.split("/")[0]).group()),
                        c.split("/", 1)[1]) for c in masks})
        for density, rest in keys:
            l, e, t = rest.split("/")
            get = lambda fam: masks.get(f"{fam}/{rest}")
            shuf, rcm = get(f"graph{density}-shuffled"), get(f"graph{density}-rcm")
            shuf_t = get(f"graph{density}-shuffled-tiles")
            rcm_t = get(f"graph{density}-rcm-tiles")
            bias = get(f"biasmask{density}")
            if not (shuf and rcm and shuf_t and rcm_t and bias):
                continue
            cell = lambda b: f"{b['real_time']:.1f} ({100 * b['block_density']:.0f} %)"
            print(f"| {density} % | {l[1:]} | {t[1:]} | {shuf['real_time']:.1f} | "
                  f"{rcm['real_time']:.1f} | {cell(shuf_t)} | {cell(rcm_t)} | "
                  f"{bias['real_time']:.1f} | {bias['real_time'] / rcm['real_time']:.1f}x |")
    gat = {k[0] + "/" + k[1]: b for k, b in rows.items() if k[0].startswith("gat-")}
    if gat:
        print()
        print("| GAT (N 100k, degree 16, H 8, C 8) | threads | ms | edges/s |" +
              (" PyG ms | PyG peak MB | speedup vs PyG |" if peers else ""))
        print("|---|---|---|---|" + ("---|" * 3 if peers else ""))
        for name, b in sorted(gat.items()):
            line = (f"| {name.split('/')[0]} | {name.split('/')[-1][1:]} | "
                    f"{b['real_time']:.1f} | {b['edges_per_s'] / 1e6:.1f} M |")
            m = GAT_NAME.match(name)
            if peers and m:
                r = peers.results.get(("pyg-gatconv", "gat", int(m.group(2)), 64,
                                       int(m.group(4)))) or {}
                line += (f" {r['ms']:.1f} | {r['peak_mb']:.0f} | "
                         f"{r['ms'] / b['real_time']:.2f}x |" if r.get("ms")
                         else " - | - | - |")
            elif peers:
                line += " - | - | - |"
            print(line)
            if plot_rows is not None and m:
                bars = {"attn-mlir " + m.group(1): b["real_time"]}
                if peers:
                    r = peers.results.get(("pyg-gatconv", "gat", int(m.group(2)), 64,
                                           int(m.group(4)))) or {}
                    bars["PyG GATConv"] = r.get("ms")
                plot_rows.append(("gat", f"N{m.group(2)} T{m.group(4)}", bars))


def write_plot(plot_rows, path, ctx, venv=None):
    """One panel per family: grouped bars (ms, log scale) per configuration.
    Without matplotlib here, the peers' venv draws it (install-peers.sh
    installs matplotlib there)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        python = os.path.join(venv or "", "bin", "python")
        if venv and os.access(python, os.X_OK):
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump({"rows": plot_rows, "context": ctx}, f)
            proc = subprocess.run([python, os.path.abspath(__file__),
                                   "--plot-from", f.name, "--plot", path])
            os.unlink(f.name)
            if proc.returncode == 0:
                return
        print(f"\nplot: skipped ({path}): no matplotlib here or in {venv} "
              "(bash scripts/install-peers.sh installs it)")
        return
    families = []
    for family, _, _ in plot_rows:
        if family not in families:
            families.append(family)
    if not families:
        return
    fig, axes = plt.subplots(len(families), 1, squeeze=False,
                             figsize=(11, 3.2 * len(families)))
    for ax, family in zip(axes[:, 0], families):
        rows = [(c, bars) for f, c, bars in plot_rows if f == family]
        impls = []
        for _, bars in rows:
            impls += [k for k, v in bars.items() if v and k not in impls]
        width = 0.8 / max(1, len(impls))
        for k, impl in enumerate(impls):
            xs = [i + k * width for i, (_, bars) in enumerate(rows) if bars.get(impl)]
            ys = [bars[impl] for _, bars in rows if bars.get(impl)]
            ax.bar(xs, ys, width, label=impl)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))])
        ax.set_xticklabels([c for c, _ in rows], rotation=30, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("ms (lower is better)")
        ax.set_title(family, fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle(f"attn-bench on {ctx.get('target_cpu', '?')} "
                 f"({ctx.get('target_isa', '?')}): attn-mlir and its peers, one run")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\nplot: {path}")


if __name__ == "__main__":
    sys.exit(main())
