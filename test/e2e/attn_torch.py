"""PyTorch side of the e2e tests and of the ViT training script.

Plain torch models that follow the state_dict names attn-compile reads
(torchvision VisionTransformer, torch.nn.TransformerEncoder, GPT-2, PyG
GATConv), the safetensors writer, and the Fashion-MNIST IDX reader. Run with
Debian's /usr/bin/python3 (python3-torch, python3-torchvision, python3-numpy).
"""
import gzip
import json
import math
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# ----------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------

_ST_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
              torch.float64: "F64", torch.int64: "I64", torch.int32: "I32"}


def write_safetensors(path, tensors, metadata=None):
    """Writes a dict name -> tensor as a .safetensors file."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        data = t.view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16 \
            else t.numpy().tobytes()
        header[name] = {"dtype": _ST_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """Reads a .safetensors file (F32/F64/I64/I32) into a dict of tensors."""
    dtypes = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        arr = np.frombuffer(data[b:end], dtype=dtypes[e["dtype"]]).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


def read_idx(path):
    """Reads an IDX file (optionally .gz): the format of (Fashion-)MNIST."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, rank = struct.unpack(">HBB", data[:4])
    assert zero == 0 and dtype == 0x08, f"{path}: not an unsigned-byte IDX file"
    shape = struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(shape)


def load_fashion_mnist(root, split):
    """Images as float32 N x 1 x 28 x 28 in [0, 1] (like ToTensor), labels int64."""
    x = read_idx(os.path.join(root, f"{split}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(root, f"{split}-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    return x, torch.from_numpy(y.astype(np.int64))


def normalize(x, spec):
    norm = spec.get("normalize")
    if not norm:
        return x
    mean = torch.tensor(norm["mean"]).view(1, -1, 1, 1)
    std = torch.tensor(norm["std"]).view(1, -1, 1, 1)
    return (x - mean) / std


@torch.no_grad()
def evaluate(model, x, y, batch=100):
    """Accuracy and images/s of `model` on (x, y), in eval mode."""
    model.eval()
    correct = 0
    start = time.perf_counter()
    for i in range(0, len(x), batch):
        correct += (model(x[i:i + batch]).argmax(-1) == y[i:i + batch]).sum().item()
    seconds = time.perf_counter() - start
    return correct / len(x), len(x) / seconds

# ----------------------------------------------------------------------------
# Attention with the attn dialect's masks (bottom-right aligned positions)
# ----------------------------------------------------------------------------


def allowed_keys(lq, lk, mask="dense", window_left=None, window_right=None):
    """Lq x Lk booleans of attn.sdpa's structural masks, with bottom-right
    aligned query positions ia = i + (Lk - Lq); also the i, j grids."""
    i = torch.arange(lq).view(-1, 1) + (lk - lq)
    j = torch.arange(lk).view(1, -1)
    allowed = torch.ones(lq, lk, dtype=torch.bool)
    if mask in ("causal", "causal_local"):
        allowed &= j <= i
    if mask in ("local", "causal_local"):
        allowed &= j >= i - window_left
        if window_right is not None:
            allowed &= j <= i + window_right
    return allowed, i, j


def attention_scores_mod(lq, lk, heads, mask="dense", window_left=None,
                         window_right=None, rel_bias=None, rel_clip=None):
    """The additive H x Lq x Lk term of attn.sdpa's mask options."""
    allowed, i, j = allowed_keys(lq, lk, mask, window_left, window_right)
    add = torch.zeros(heads, lq, lk, dtype=torch.float64)
    add = add.masked_fill(~allowed, float("-inf"))
    if rel_bias is not None:
        rel = (j - i).clamp(-rel_clip, rel_clip) + rel_clip
        add = add + rel_bias.double()[:, rel]
    return add


def mha(x, in_w, in_b, out_w, out_b, heads, score_add=None):
    """torch.nn.MultiheadAttention(batch_first=True) math with an additive
    H x L x L term, in x's dtype."""
    b, l, d = x.shape
    hd = d // heads
    qkv = F.linear(x, in_w, in_b).view(b, l, 3, heads, hd).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    s = q @ k.transpose(-1, -2) / math.sqrt(hd)
    if score_add is not None:
        s = s + score_add.to(s.dtype)
    p = torch.softmax(s, -1).nan_to_num(0.0)
    o = (p @ v).transpose(1, 2).reshape(b, l, d)
    return F.linear(o, out_w, out_b)

# ----------------------------------------------------------------------------
# ViT (torchvision names)
# ----------------------------------------------------------------------------


def build_vit(spec):
    """torchvision's VisionTransformer for a dense-attention vit spec, with a
    patch embedding of spec['channels'] input channels."""
    from torchvision.models.vision_transformer import VisionTransformer
    m = VisionTransformer(image_size=spec["image_size"], patch_size=spec["patch_size"],
                          num_layers=spec["layers"], num_heads=spec["heads"],
                          hidden_dim=spec["hidden_dim"], mlp_dim=spec["mlp_dim"],
                          num_classes=spec["classes"])
    m.conv_proj = nn.Conv2d(spec.get("channels", 3), spec["hidden_dim"],
                            kernel_size=spec["patch_size"], stride=spec["patch_size"])
    return m


def vit_forward(sd, spec, images):
    """A ViT forward from a torchvision state_dict, with the spec's attention
    variant (dense, local window, relative-position bias). Images are already
    normalized."""
    heads, eps = spec["heads"], 1e-6
    x = F.conv2d(images, sd["conv_proj.weight"], sd["conv_proj.bias"], stride=spec["patch_size"])
    x = x.flatten(2).transpose(1, 2)
    cls = sd["class_token"].expand(x.shape[0], -1, -1)
    x = torch.cat([cls, x], 1) + sd["encoder.pos_embedding"]
    length = x.shape[1]
    variant = spec.get("attention", "dense")
    for n in range(spec["layers"]):
        p = f"encoder.layers.encoder_layer_{n}."
        add = None
        if variant == "local":
            w = spec["window"]
            add = attention_scores_mod(length, length, heads, "local", w, w)
        elif variant == "relative":
            add = attention_scores_mod(length, length, heads, rel_bias=sd[p + "self_attention.rel_bias"],
                                       rel_clip=spec["rel_clip"])
        h = F.layer_norm(x, (x.shape[-1],), sd[p + "ln_1.weight"], sd[p + "ln_1.bias"], eps)
        x = x + mha(h, sd[p + "self_attention.in_proj_weight"], sd[p + "self_attention.in_proj_bias"],
                    sd[p + "self_attention.out_proj.weight"], sd[p + "self_attention.out_proj.bias"],
                    heads, add)
        h = F.layer_norm(x, (x.shape[-1],), sd[p + "ln_2.weight"], sd[p + "ln_2.bias"], eps)
        h = F.gelu(F.linear(h, sd[p + "mlp.0.weight"], sd[p + "mlp.0.bias"]))
        x = x + F.linear(h, sd[p + "mlp.3.weight"], sd[p + "mlp.3.bias"])
    x = F.layer_norm(x, (x.shape[-1],), sd["encoder.ln.weight"], sd["encoder.ln.bias"], eps)
    return F.linear(x[:, 0], sd["heads.head.weight"], sd["heads.head.bias"])

# ----------------------------------------------------------------------------
# Graphs and GAT (PyG GATConv semantics)
# ----------------------------------------------------------------------------


def read_mtx(path):
    """Directed edges (src, dst) of a symmetric pattern Matrix Market file."""
    edges, lines = [], [l for l in open(path) if not l.startswith("%")]
    n = int(lines[0].split()[0])
    for line in lines[1:]:
        r, c = (int(x) - 1 for x in line.split()[:2])
        edges += [(r, c), (c, r)] if r != c else [(r, c)]
    return n, edges


def in_edge_csr(n, edges):
    rows = [[] for _ in range(n)]
    for src, dst in edges:
        rows[dst].append(src)
    row_ptr = np.zeros(n + 1, np.int32)
    row_ptr[1:] = np.cumsum([len(r) for r in rows])
    return row_ptr, np.array([s for r in rows for s in sorted(r)], np.int32)


def gatconv(x, weight, att_src, att_dst, bias, edges, n, heads, ch, concat,
            slope=0.2, self_loops=True):
    """PyG GATConv forward, edge by edge, in float64."""
    z = (x @ weight.T).view(n, heads, ch)
    a_src = (z * att_src.view(1, heads, ch)).sum(-1)
    a_dst = (z * att_dst.view(1, heads, ch)).sum(-1)
    if self_loops:
        edges = [(s, d) for s, d in edges if s != d] + [(i, i) for i in range(n)]
    src = torch.tensor([s for s, _ in edges], dtype=torch.long)
    dst = torch.tensor([d for _, d in edges], dtype=torch.long)
    e = torch.nn.functional.leaky_relu(a_src[src] + a_dst[dst], slope)  # E x H
    e_max = torch.full((n, heads), float("-inf"), dtype=e.dtype)
    e_max = e_max.scatter_reduce(0, dst[:, None].expand(-1, heads), e, "amax")
    p = torch.exp(e - e_max[dst])
    denom = torch.zeros(n, heads, dtype=e.dtype).index_add(0, dst, p)
    alpha = p / denom[dst]
    out = torch.zeros(n, heads, ch, dtype=e.dtype).index_add(
        0, dst, alpha[:, :, None] * z[src])
    out = out.reshape(n, heads * ch) if concat else out.mean(1)
    return out + bias



class GATConv(nn.Module):
    """PyG GATConv's parameters (lin.weight, att_src, att_dst, bias) with the
    edge-by-edge float64 forward above."""

    def __init__(self, in_ch, ch, heads, concat=True):
        super().__init__()
        self.heads, self.ch, self.concat = heads, ch, concat
        self.lin = nn.Linear(in_ch, heads * ch, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, ch))
        self.att_dst = nn.Parameter(torch.empty(1, heads, ch))
        self.bias = nn.Parameter(torch.empty(heads * ch if concat else ch))

    def forward(self, x, edges, self_loops=True, slope=0.2):
        return gatconv(x, self.lin.weight, self.att_src, self.att_dst, self.bias, edges,
                       x.shape[0], self.heads, self.ch, self.concat, slope, self_loops)


class GAT(nn.Module):
    """conv1, conv2, ... with ELU between layers (a gat description)."""

    def __init__(self, spec):
        super().__init__()
        in_ch = spec["in_features"]
        for i, layer in enumerate(spec["layers"]):
            heads, concat = layer.get("heads", 1), layer.get("concat", True)
            setattr(self, f"conv{i + 1}", GATConv(in_ch, layer["channels"], heads, concat))
            in_ch = heads * layer["channels"] if concat else layer["channels"]
        self.num_layers = len(spec["layers"])
        self.spec = spec

    def forward(self, x, edges):
        for i in range(self.num_layers):
            x = getattr(self, f"conv{i + 1}")(x, edges, self.spec.get("add_self_loops", True),
                                              self.spec.get("negative_slope", 0.2))
            if i + 1 < self.num_layers:
                x = F.elu(x)
        return x

# ----------------------------------------------------------------------------
# GPT-2 (Hugging Face GPT2Model names, Conv1D weights stored in x out)
# ----------------------------------------------------------------------------


class Conv1D(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.empty(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


class GPT2Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.c_attn, self.c_proj = Conv1D(d, 3 * d), Conv1D(d, d)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
        s = q @ k.transpose(-1, -2) / math.sqrt(hd)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        s = s.masked_fill(~causal, float("-inf"))
        o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, t, d)
        return self.c_proj(o)


class GPT2MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc, self.c_proj = Conv1D(d, 4 * d), Conv1D(4 * d, d)

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, d, heads, eps):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d, eps=eps), nn.LayerNorm(d, eps=eps)
        self.attn, self.mlp = GPT2Attention(d, heads), GPT2MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """GPT-2 with logits tied to wte (GPT2LMHeadModel without the prefix)."""

    def __init__(self, spec):
        super().__init__()
        d, eps = spec["n_embd"], spec.get("layer_norm_epsilon", 1e-5)
        self.wte = nn.Embedding(spec["vocab_size"], d)
        self.wpe = nn.Embedding(spec["n_positions"], d)
        self.h = nn.ModuleList(GPT2Block(d, spec["n_head"], eps) for _ in range(spec["n_layer"]))
        self.ln_f = nn.LayerNorm(d, eps=eps)

    def forward(self, tokens):
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1]))
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.T

# ----------------------------------------------------------------------------
# torch.nn.TransformerEncoder
# ----------------------------------------------------------------------------


def build_encoder(spec):
    layer = nn.TransformerEncoderLayer(
        spec["d_model"], spec["heads"], spec["dim_feedforward"], dropout=0.0,
        activation=spec.get("activation", "relu"), layer_norm_eps=spec.get("layer_norm_eps", 1e-5),
        batch_first=spec.get("batch_first", True), norm_first=spec.get("norm_first", False))
    norm = nn.LayerNorm(spec["d_model"], eps=spec.get("layer_norm_eps", 1e-5)) \
        if spec.get("final_norm", False) else None
    return nn.TransformerEncoder(layer, spec["layers"], norm=norm, enable_nested_tensor=False)

# ----------------------------------------------------------------------------
# Driving attn-compile
# ----------------------------------------------------------------------------


def run_attn_compile(tool, tmp, name, spec, state_dict, inputs, extra=()):
    """Writes spec/weights/inputs under tmp, runs `attn-compile --run` and
    returns the output as a float64 array."""
    import subprocess
    os.makedirs(tmp, exist_ok=True)
    spec_path = os.path.join(tmp, name + ".json")
    with open(spec_path, "w") as f:
        json.dump(spec, f, indent=1)
    weights = os.path.join(tmp, name + ".safetensors")
    write_safetensors(weights, state_dict)
    args = [tool, spec_path, "--run", "--weights", weights,
            "--output", os.path.join(tmp, name + ".out.npy"), *extra]
    for key, value in inputs.items():
        path = os.path.join(tmp, f"{name}.{key}.npy")
        np.save(path, value.numpy() if isinstance(value, torch.Tensor) else value)
        args += ["--input", f"{key}={path}"]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: attn-compile failed:\n{proc.stdout}{proc.stderr}")
    return np.load(os.path.join(tmp, name + ".out.npy")).astype(np.float64)


def compare(name, got, want, rtol=1e-4):
    """Max error relative to the reference's scale; prints OK or the error."""
    want = want.detach().double().numpy() if isinstance(want, torch.Tensor) else want
    if got.shape != want.shape:
        print(f"{name}: FAIL shape {got.shape} vs {want.shape}")
        return False
    scale = max(np.abs(want).max(), 1e-30)
    err = np.abs(got - want).max() / scale
    ok = bool(np.isfinite(got).all() and err <= rtol)
    print(f"{name}: {'OK' if ok else 'FAIL'} (max error {err:.2e} of scale {scale:.3g})")
    return ok


def randomize(module, seed, scale=0.5):
    """Deterministic random parameters (LayerNorm gains around 1)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g) * scale)
            if name.endswith("norm1.weight") or name.endswith("norm2.weight") or \
               ".ln_" in name or name.startswith("ln_") or name.endswith("ln.weight"):
                p.add_(1.0)
    return module
