# RUN: rm -rf %t && mkdir -p %t
# RUN: %torch_python %s attn-run %attn_src_root/test/Inputs/karate.mtx %t | FileCheck %s
#
# PyTorch cross-check of attn.gat against GATConv semantics written in plain
# torch (PyG's GATConv is not in Debian): lin.weight, att_src, att_dst, bias,
# heads, concat or mean, negative_slope, add_self_loops (existing self loops
# removed, one added per node). Graphs: Zachary's karate club, and a random
# graph with isolated nodes (no self loops added there: they get the bias),
# duplicate edges and existing self loops. attn-run runs
# the default (fused) pipeline and the reference lowering on the same inputs.
#
# CHECK: karate/concat/attn-cpu-pipeline: OK
# CHECK: karate/concat/attn-reference-pipeline: OK
# CHECK: random/mean/attn-cpu-pipeline: OK
# CHECK: random/mean/attn-reference-pipeline: OK
# CHECK: 4 cases agree with PyTorch

import os
import subprocess
import sys

import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore", message="scatter_reduce")

ATTN_RUN, KARATE, TMP = sys.argv[1], sys.argv[2], sys.argv[3]


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))
from attn_torch import gatconv, in_edge_csr, read_mtx  # noqa: E402


def run_case(name, n, edges, feat, heads, ch, concat, self_loops, pipeline):
    row_ptr, col_idx = in_edge_csr(n, edges)
    out_dim = heads * ch if concat else ch
    ty = lambda *s, t="f32": "tensor<" + "x".join(map(str, s)) + "x" + t + ">"
    types = [ty(n, feat), ty(heads * ch, feat), ty(heads, ch), ty(heads, ch),
             ty(n + 1, t="i32"), ty(len(col_idx), t="i32"), ty(out_dim)]
    attrs = ([] if concat else ["combine = #attn.heads<mean>"]) + \
        ([] if self_loops else ["add_self_loops = false"])
    combine = f" {{{', '.join(attrs)}}}" if attrs else ""
    path = f"{TMP}/{name}.mlir"
    with open(path, "w") as f:
        f.write(f"func.func @gat(%x: {types[0]}, %w: {types[1]}, %as: {types[2]}, "
                f"%ad: {types[3]}, %rp: {types[4]}, %ci: {types[5]}, %b: {types[6]}) "
                f"-> {ty(n, out_dim)} {{\n"
                f"  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b){combine}\n"
                f"      : ({', '.join(types)}) -> {ty(n, out_dim)}\n"
                f"  return %y : {ty(n, out_dim)}\n}}\n")
    np.save(f"{TMP}/{name}_rp.npy", row_ptr)
    np.save(f"{TMP}/{name}_ci.npy", col_idx)
    dump = f"{TMP}/{name}_{pipeline}"
    subprocess.run([ATTN_RUN, path, "--check", "--pipeline", pipeline,
                    "--input", f"4={TMP}/{name}_rp.npy",
                    "--input", f"5={TMP}/{name}_ci.npy", "--dump-dir", dump],
                   check=True, stdout=subprocess.DEVNULL)
    a = [torch.from_numpy(np.load(f"{dump}/arg{i}.npy")).double() for i in range(4)]
    bias = torch.from_numpy(np.load(f"{dump}/arg6.npy")).double()
    want = gatconv(a[0], a[1], a[2], a[3], bias, edges, n, heads, ch, concat,
                   self_loops=self_loops).numpy()
    got = np.load(f"{dump}/result0.npy").astype(np.float64)
    scale = np.abs(want).max()
    return np.allclose(got, want, rtol=1e-5, atol=1e-5 * scale)


n_karate, karate = read_mtx(KARATE)
rng = np.random.default_rng(3)
n_random = 40
random_edges = [(int(rng.integers(0, n_random)), int(rng.integers(5, n_random)))
                for _ in range(150)]  # nodes 0..4 have no in-edges
random_edges += random_edges[:20] + [(7, 7), (9, 9)]  # duplicates, self loops

failures = 0
cases = 0
for name, n, edges, concat, loops in [
        ("karate", n_karate, karate, True, True),
        ("random", n_random, random_edges, False, False)]:
    for pipeline in ["attn-cpu-pipeline", "attn-reference-pipeline"]:
        ok = run_case(name, n, edges, feat=16, heads=4, ch=8, concat=concat,
                      self_loops=loops, pipeline=pipeline)
        print(f"{name}/{'concat' if concat else 'mean'}/{pipeline}: "
              f"{'OK' if ok else 'MISMATCH'}")
        failures += not ok
        cases += 1
if failures:
    sys.exit(f"{failures} case(s) disagree with PyTorch")
print(f"{cases} cases agree with PyTorch")
