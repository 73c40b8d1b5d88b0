#!/usr/bin/env python3
"""Runs attn-bench twice and prints one markdown table.

The first run uses the environment as it is (this workplace sets
OPENBLAS_CORETYPE=Haswell, which halves OpenBLAS here); the second unsets
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for that command only, so OpenBLAS picks
its best kernel. attn-mlir and the reference lowering are taken from the first
run, OpenBLAS from both. Usage:

  scripts/bench-table.py [--full] [--filter REGEX] [--min-time SECONDS]

A filter is matched against names like attn-mlir/causal/L1024/E64/T2; start it
with "/" (e.g. "/causal/L1024/") to match every peer.
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(os.environ.get("ATTN_BUILD_DIR", os.path.join(ROOT, "build")),
                     "bin", "attn-bench")


def run(extra_env_unset, args):
    env = dict(os.environ)
    for name in extra_env_unset:
        env.pop(name, None)
    cmd = [BENCH, "--benchmark_format=json",
           f"--benchmark_min_time={args.min_time}"]
    if args.full:
        cmd.append("--full")
    if args.filter:
        cmd.append(f"--benchmark_filter={args.filter}")
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        return None  # e.g. the filter matched nothing
    return json.loads(proc.stdout)


def index(report):
    rows = {}
    for b in report["benchmarks"]:
        if b.get("error_occurred"):
            continue
        m = re.match(r"([^/]+)/(.+?)/real_time$", b["name"])
        rows[(m.group(1), m.group(2))] = b
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--full", action="store_true")
    p.add_argument("--filter", default="")
    p.add_argument("--min-time", default="0.2")
    args = p.parse_args()

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

    print(f"FMA peak measured in this run: {peak[1]:.0f} GFLOP/s (1 thread), "
          f"{peak[2]:.0f} GFLOP/s (2 threads). OpenBLAS kernels: "
          f"{ctx['openblas_core']} (environment, OPENBLAS_CORETYPE="
          f"{ctx['OPENBLAS_CORETYPE']}), {best_ctx['openblas_core']} (best, unset).")
    print()
    print("| family | L | E | threads | attn-mlir ms | GFLOP/s useful (dense-eq) | % peak (useful) | "
          "OpenBLAS-unfused ms env / best | speedup vs best | Halide ms | speedup vs Halide | "
          "reference ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    def order(item):
        family, l, e, t = item[0][1].split("/")
        return (family, int(e[1:]), int(l[1:]), int(t[1:]))

    def peer_family(item):
        (peer, config), _ = item
        return peer == "attn-mlir" and len(config.split("/")) == 4 and \
            re.match(r"(graph|biasmask)\d", config) is None

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
        print(f"| {family} | {l[1:]} | {e[1:]} | {threads} | {ms:.2f} | "
              f"{useful:.0f} ({dense:.0f}) | {100 * useful / peak[threads]:.0f} % | "
              f"{fmt(blas_env)} / {fmt(blas_best)} | {speedup} | {fmt(halide)} | "
              f"{halide['real_time'] / ms:.2f}x | {fmt(ref)} |" if halide else
              f"{fmt(blas_env)} / {fmt(blas_best)} | {speedup} | - | - | {fmt(ref)} |")
    print_graph_tables(env_rows)


def print_graph_tables(rows):
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
        print("| GAT (N 100k, degree 16, H 8, C 8) | threads | ms | edges/s |")
        print("|---|---|---|---|")
        for name, b in sorted(gat.items()):
            print(f"| {name.split('/')[0]} | {name.split('/')[-1][1:]} | "
                  f"{b['real_time']:.1f} | {b['edges_per_s'] / 1e6:.1f} M |")


if __name__ == "__main__":
    sys.exit(main())
