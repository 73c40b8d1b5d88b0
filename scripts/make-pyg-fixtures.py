#!/usr/bin/env python3
"""Writes the PyG fixtures of the tests (test/Inputs/pyg/).

usage: <venv>/bin/python scripts/make-pyg-fixtures.py [OUT_DIR]

Needs torch and torch_geometric (`bash scripts/install-peers.sh` installs
them into /opt/attn-peers); the tests read only what this script writes.

gat-attention/: a two-layer GAT as PyG users write it -- GATConv(5, 4,
heads=2), ELU, GATConv(8, 3, heads=3, concat=False) called with
return_attention_weights=True -- on a small SNAP edge list with a duplicate
edge, a self loop and a trailing node without edges (kept by the file's
"# Nodes:" header); its description (model.json), weights (PyG's names,
model.safetensors), x.npy and what PyG computed: output.npy, alpha.npy
(E' x 3) and edge_index.npy (2 x E': PyG's edges with the self loops it
added, in its order).

gatv2-attention/: the same graph and x through GATv2Conv(5, 4, heads=2),
ELU, GATv2Conv(8, 3, heads=2, concat=False, share_weights=True,
negative_slope=0.1) with return_attention_weights=True (the shared lin_r is
not stored: it is lin_l).

gat-no-loops/: one GATConv(5, 3, heads=2, add_self_loops=False) with
return_attention_weights=True: the file's self loop is kept as an edge and
no loops are added (node 6, without in-edges, gets the bias only).

gat-edge-attr/: GATConv(5, 4, heads=2, edge_dim=3), ELU, GATConv(8, 3,
heads=2, edge_dim=3, concat=False) with return_attention_weights=True, on
edge_attr.npy (E x 3, the file's edge order; the self loops PyG adds take
the mean of their node's incoming attributes).

gat-minibatch/: a sampled mini-batch as PyG's NeighborSampler gives it: two
bipartite adjacencies (hop2.txt: 30 sources -> 12 destinations, hop1.txt:
12 -> 4, the destinations being the first sources; a self loop, a duplicate
edge, destinations without in-edges), GATConv((5, 5), 4, heads=2) (its own
lin_src / lin_dst), ELU, GATConv(8, 3, heads=2, concat=False) with
return_attention_weights=True, each called as conv((x, x[:size[1]]), adj).

gatv2-minibatch/: the same adjacencies through GATv2Conv(5, 4, heads=2),
ELU, GATv2Conv(8, 3, heads=2, share_weights=True).

gatv2-edge-attr/: GATv2Conv(5, 4, heads=2, edge_dim=3), ELU, GATv2Conv(8, 3,
heads=2, edge_dim=3, concat=False) with return_attention_weights=True, on
gat-edge-attr's graph, x and edge_attr.npy.

gat-separate-lins/: GATConv((5, 5), 3, heads=2) -- built bipartite, its own
lin_src / lin_dst -- called on one node set (gat-attention's graph and x).
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torch_geometric
from safetensors.torch import save_file
from torch_geometric.nn import GATConv, GATv2Conv

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "test", "Inputs", "pyg")
path = os.path.join(out, "gat-attention")
os.makedirs(path, exist_ok=True)


def fixture_dir(name):
    """A new fixture folder with gat-attention's graph."""
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(path, "graph.txt")) as src, \
            open(os.path.join(folder, "graph.txt"), "w") as dst:
        dst.write(src.read())
    return folder


def perturb(net):
    """Biases and attention vectors away from 0."""
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.3 * torch.randn(p.shape))
    return net


def save_model(folder, net, description, inputs, drop="-"):
    """The weights (PyG's names, but those under `drop`: a shared module),
    the inputs (name -> tensor) and model.json."""
    save_file({k: v.contiguous() for k, v in net.state_dict().items()
               if not k.startswith(drop)},
              os.path.join(folder, "model.safetensors"))
    for name, t in inputs.items():
        np.save(os.path.join(folder, name + ".npy"), t.numpy())
    with open(os.path.join(folder, "model.json"), "w") as f:
        json.dump(description, f, indent=1)
        f.write("\n")


def save_results(folder, y, ei=None, alpha=None):
    """What PyG computed: output.npy, and alpha.npy / edge_index.npy."""
    np.save(os.path.join(folder, "output.npy"), y.numpy())
    if alpha is not None:
        np.save(os.path.join(folder, "alpha.npy"), alpha.numpy())
        np.save(os.path.join(folder, "edge_index.npy"),
                ei.numpy().astype(np.int64))


edges = [(0, 1), (2, 1), (1, 3), (3, 0), (4, 2), (2, 1), (5, 5), (1, 4),
         (0, 5), (3, 2)]
nodes = 7  # node 6 has no edges
with open(os.path.join(path, "graph.txt"), "w") as f:
    f.write(f"# Nodes: {nodes} Edges: {len(edges)}\n")
    for s, d in edges:
        f.write(f"{s} {d}\n")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GATConv(5, 4, heads=2)
        self.conv2 = GATConv(8, 3, heads=3, concat=False)

    def forward(self, x, edge_index):
        x = F.elu(self.conv1(x, edge_index))
        return self.conv2(x, edge_index, return_attention_weights=True)


torch.manual_seed(0)
net = Net().eval()
with torch.no_grad():
    for p in net.parameters():  # biases and attention vectors away from 0
        p.add_(0.3 * torch.randn(p.shape))
x = torch.randn(nodes, 5)
edge_index = torch.tensor(edges, dtype=torch.long).t().contiguous()
with torch.no_grad():
    y, (ei, alpha) = net(x, edge_index)
save_file({k: v.contiguous() for k, v in net.state_dict().items()},
          os.path.join(path, "model.safetensors"))
np.save(os.path.join(path, "x.npy"), x.numpy())
np.save(os.path.join(path, "output.npy"), y.numpy())
np.save(os.path.join(path, "alpha.npy"), alpha.numpy())
np.save(os.path.join(path, "edge_index.npy"), ei.numpy().astype(np.int64))
with open(os.path.join(path, "model.json"), "w") as f:
    json.dump({"kind": "gat", "graph": "graph.txt", "in_features": 5,
               "layers": [{"heads": 2, "channels": 4},
                          {"heads": 3, "channels": 3, "concat": False,
                           "return_attention_weights": True}]}, f, indent=1)
    f.write("\n")


class NetV2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GATv2Conv(5, 4, heads=2)
        self.conv2 = GATv2Conv(8, 3, heads=2, concat=False, share_weights=True,
                               negative_slope=0.1)

    def forward(self, x, edge_index):
        x = F.elu(self.conv1(x, edge_index))
        return self.conv2(x, edge_index, return_attention_weights=True)


path2 = fixture_dir("gatv2-attention")
net2 = NetV2().eval()
with torch.no_grad():
    for p in net2.parameters():
        p.add_(0.3 * torch.randn(p.shape))
    y2, (ei2, alpha2) = net2(x, edge_index)
state = {k: v.contiguous() for k, v in net2.state_dict().items()
         if not k.startswith("conv2.lin_r.")}
save_file(state, os.path.join(path2, "model.safetensors"))
np.save(os.path.join(path2, "x.npy"), x.numpy())
save_results(path2, y2, ei2, alpha2)
with open(os.path.join(path2, "model.json"), "w") as f:
    json.dump({"kind": "gat", "graph": "graph.txt", "in_features": 5,
               "negative_slope": 0.2,
               "layers": [{"conv": "GATv2Conv", "heads": 2, "channels": 4},
                          {"conv": "GATv2Conv", "heads": 2, "channels": 3,
                           "concat": False, "share_weights": True,
                           "negative_slope": 0.1,
                           "return_attention_weights": True}]}, f, indent=1)
    f.write("\n")
print(list(state.keys()))

path3 = fixture_dir("gat-no-loops")
conv = GATConv(5, 3, heads=2, add_self_loops=False).eval()
with torch.no_grad():
    for p in conv.parameters():
        p.add_(0.3 * torch.randn(p.shape))
    y3, (ei3, alpha3) = conv(x, edge_index, return_attention_weights=True)
save_file({"conv1." + k: v.contiguous() for k, v in conv.state_dict().items()},
          os.path.join(path3, "model.safetensors"))
np.save(os.path.join(path3, "x.npy"), x.numpy())
save_results(path3, y3, ei3, alpha3)
with open(os.path.join(path3, "model.json"), "w") as f:
    json.dump({"kind": "gat", "graph": "graph.txt", "in_features": 5,
               "add_self_loops": False,
               "layers": [{"heads": 2, "channels": 3,
                           "return_attention_weights": True}]}, f, indent=1)
    f.write("\n")



class NetEdge(torch.nn.Module):
    def __init__(self, conv=GATConv):
        super().__init__()
        self.conv1 = conv(5, 4, heads=2, edge_dim=3)
        self.conv2 = conv(8, 3, heads=2, edge_dim=3, concat=False)

    def forward(self, x, edge_index, edge_attr):
        x = F.elu(self.conv1(x, edge_index, edge_attr))
        return self.conv2(x, edge_index, edge_attr,
                          return_attention_weights=True)


path4 = fixture_dir("gat-edge-attr")
net4 = NetEdge().eval()
edge_attr = torch.randn(len(edges), 3)
perturb(net4)
with torch.no_grad():
    y4, (ei4, alpha4) = net4(x, edge_index, edge_attr)
save_model(path4, net4,
           {"kind": "gat", "graph": "graph.txt", "in_features": 5,
            "layers": [{"heads": 2, "channels": 4, "edge_dim": 3},
                       {"heads": 2, "channels": 3, "edge_dim": 3,
                        "concat": False, "return_attention_weights": True}]},
           {"x": x, "edge_attr": edge_attr})
save_results(path4, y4, ei4, alpha4)
print(list(net4.state_dict().keys()))


# Sampled mini-batches: per-layer bipartite adjacencies (src < size[0],
# dst < size[1]), outermost hop first, as NeighborSampler's adjs.
gen = np.random.default_rng(7)
sizes = [(30, 12), (12, 4)]
hops = []
for ns, nd in sizes:
    hop = [(int(gen.integers(ns)), int(gen.integers(nd - 1)))
           for _ in range(3 * ns)]  # destination nd - 1 has no in-edges
    hop += [(2, 2), hop[0]]  # a self loop (dropped and re-added) and a duplicate
    hops.append(hop)


class NetBatch(torch.nn.Module):
    def __init__(self, v2):
        super().__init__()
        if v2:
            self.conv1 = GATv2Conv(5, 4, heads=2)
            self.conv2 = GATv2Conv(8, 3, heads=2, concat=False,
                                   share_weights=True)
        else:
            self.conv1 = GATConv((5, 5), 4, heads=2)
            self.conv2 = GATConv(8, 3, heads=2, concat=False)

    def forward(self, x, adjs):
        (e1, s1), (e2, s2) = adjs
        x = F.elu(self.conv1((x, x[:s1[1]]), e1))
        return self.conv2((x, x[:s2[1]]), e2, return_attention_weights=True)


xb = torch.randn(sizes[0][0], 5)
adjs = [(torch.tensor(h, dtype=torch.long).t().contiguous(), sz)
        for h, sz in zip(hops, sizes)]
for name, v2 in (("gat-minibatch", False), ("gatv2-minibatch", True)):
    pathb = os.path.join(out, name)
    os.makedirs(pathb, exist_ok=True)
    for file, hop in zip(("hop2.txt", "hop1.txt"), hops):
        with open(os.path.join(pathb, file), "w") as f:
            for s_, d_ in hop:
                f.write(f"{s_} {d_}\n")
    netb = perturb(NetBatch(v2).eval())
    with torch.no_grad():
        yb, (eib, alphab) = netb(xb, adjs)
    save_results(pathb, yb, eib, alphab)
    conv = {"conv": "GATv2Conv"} if v2 else {}
    first = dict(conv, heads=2, channels=4, graph="hop2.txt",
                 size=list(sizes[0]))
    if not v2:
        first["in_channels"] = [5, 5]
    second = dict(conv, heads=2, channels=3, concat=False, graph="hop1.txt",
                  size=list(sizes[1]), return_attention_weights=True)
    if v2:
        second["share_weights"] = True
    save_model(pathb, netb, {"kind": "gat", "in_features": 5,
                             "layers": [first, second]},
               {"x": xb}, drop="conv2.lin_r.")
    print(name, yb.shape, alphab.shape)

path5 = fixture_dir("gat-separate-lins")
conv5 = GATConv((5, 5), 3, heads=2).eval()
with torch.no_grad():
    for p in conv5.parameters():
        p.add_(0.3 * torch.randn(p.shape))
    y5 = conv5(x, edge_index)
save_file({"conv1." + k: v.contiguous() for k, v in conv5.state_dict().items()},
          os.path.join(path5, "model.safetensors"))
np.save(os.path.join(path5, "x.npy"), x.numpy())
save_results(path5, y5)
with open(os.path.join(path5, "model.json"), "w") as f:
    json.dump({"kind": "gat", "graph": "graph.txt", "in_features": 5,
               "layers": [{"heads": 2, "channels": 3, "in_channels": [5, 5]}]},
              f, indent=1)
    f.write("\n")



path6 = fixture_dir("gatv2-edge-attr")
net6 = perturb(NetEdge(GATv2Conv).eval())
with torch.no_grad():
    y6, (ei6, alpha6) = net6(x, edge_index, edge_attr)
save_model(path6, net6,
           {"kind": "gat", "graph": "graph.txt", "in_features": 5,
            "layers": [{"conv": "GATv2Conv", "heads": 2, "channels": 4,
                        "edge_dim": 3},
                       {"conv": "GATv2Conv", "heads": 2, "channels": 3,
                        "edge_dim": 3, "concat": False,
                        "return_attention_weights": True}]},
           {"x": x, "edge_attr": edge_attr})
save_results(path6, y6, ei6, alpha6)
print(list(net6.state_dict().keys()))

with open(os.path.join(out, "versions.txt"), "w") as f:
    f.write(f"torch_geometric {torch_geometric.__version__}\n"
            f"torch {torch.__version__}\n")
print(list(net.state_dict().keys()), y.shape, alpha.shape, ei.shape)
