# RUN: rm -rf %t && mkdir -p %t
# RUN: %torch_python %s attn-compile %attn_src_root/test/Inputs/karate.mtx %t | FileCheck %s
#
# attn-compile's gat (two GATConv layers, ELU between, PyG names conv1.*,
# conv2.*) against the plain-torch GATConv of attn_torch on Zachary's karate
# club (Matrix Market), on a random edge list with isolated nodes and
# duplicate edges, and on karate run in reverse Cuthill-McKee order
# (`reorder: rcm`: the caller still sees the original numbering). float64
# oracle.
#
# CHECK: karate/attn-cpu-pipeline: OK
# CHECK: karate/attn-reference-pipeline: OK
# CHECK: random/attn-cpu-pipeline: OK
# CHECK: random/attn-reference-pipeline: OK
# CHECK: karate-rcm/attn-cpu-pipeline: OK
# CHECK: karate-rcm/attn-reference-pipeline: OK
# CHECK: all agree

import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_torch as at  # noqa: E402

warnings.filterwarnings("ignore", message="scatter_reduce")
TOOL, KARATE, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(TMP, exist_ok=True)

n_karate, karate_edges = at.read_mtx(KARATE)
g = torch.Generator().manual_seed(4)
n_random = 40
random_edges = [(int(s), int(d)) for s, d in torch.randint(0, 30, (120, 2), generator=g)]
random_edges += random_edges[:10]  # duplicates; nodes 30..39 stay isolated
random_path = os.path.join(TMP, "random.txt")
with open(random_path, "w") as f:
    f.write("# random directed graph: src dst\n")
    f.write("".join(f"{s} {d}\n" for s, d in random_edges))
    f.write(f"{n_random - 1} {n_random - 1}\n")  # the node count: a self loop on the last node
random_edges.append((n_random - 1, n_random - 1))

ok = True
for name, graph, n, edges, layers, extra in [
        ("karate", KARATE, n_karate, karate_edges,
         [{"heads": 4, "channels": 8}, {"heads": 2, "channels": 3, "concat": False}], {}),
        ("random", random_path, n_random, random_edges,
         [{"heads": 3, "channels": 5}, {"heads": 1, "channels": 4, "concat": False}], {}),
        ("karate-rcm", KARATE, n_karate, karate_edges,
         [{"heads": 2, "channels": 4}, {"heads": 1, "channels": 3}], {"reorder": "rcm"})]:
    spec = {"kind": "gat", "graph": os.path.abspath(graph), "in_features": 6, "layers": layers,
            **extra}
    torch.manual_seed(0)
    model = at.randomize(at.GAT(spec), seed=5, scale=0.4)
    sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
    x = torch.randn(n, 6)
    with torch.no_grad():
        want = model.double()(x.double(), edges)
    for p in ["attn-cpu-pipeline", "attn-reference-pipeline"]:
        got = at.run_attn_compile(TOOL, TMP, name, spec, sd, {"x": x}, ["--pipeline", p])
        ok &= at.compare(f"{name}/{p}", got, want)
print("all agree" if ok else "MISMATCH")
