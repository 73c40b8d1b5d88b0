#!/usr/bin/env python3
"""Random attn.sdpa / attn.mha / attn.gat / attn.gatv2 functions for oracle sweeps.

Writes an MLIR module of COUNT public functions drawn from SEED to standard
output, each of one op with random shapes and features, for
`attn-run FILE --all --check` to compile, run on seeded inputs and compare
with the C++ reference (lib/Runtime):

  scripts/random-attn.py --seed S [--count N] [--ops sdpa,mha,gat]
                         [--max-len L]
  build/bin/attn-run /tmp/r.mlir --all --check [--pipeline ...]

attn.sdpa: batch 1-2, grouped heads (1-2 KV heads, 1-3 queries each), Lq and
Lk up to --max-len (short rows, the register-row lowering's, and lengths
that no tile divides), E and Ev from 1 to 128, f32 / bf16 / f16; every mask
kind (causal top-left and bottom-right aligned, local, causal_local,
dilated, graph with sparse and dense CSRs, i32 or i64), kv_lengths, bias
(broadcast batch or head), rel_bias, rel_key, ALiBi, a scale, lse; and
FlexAttention-style regions: a mask_mod made of random integer expressions
of (b, h, q_idx, kv_idx) (comparisons joined by and / or / xor, document
ids read from a captured tensor) and a score_mod (soft-capping, a position bias, a captured per-head
slope). attn.mha: the same options around PyTorch-packed projections
(self- or cross-attention, grouped KV heads, optional biases) with a small
explicit scale (at 1/sqrt(hd) the projections of attn-run's uniform inputs
make logits of hundreds, beyond --check's tolerance for f32). attn.gat /
attn.gatv2: 1-300 nodes, in and out features, heads, concat or mean, self
loops, negative slope, bias, alpha; attn.gat also edge attributes and a
bipartite target.

The draws are made to pass the op verifiers (seeds 1-100 of 30 functions
were checked with attn-opt). test/Integration/random-attn.test runs two
seeds in the test command; more seeds make a longer sweep, e.g.

  for s in $(seq 1 50); do
    scripts/random-attn.py --seed $s --count 40 > /tmp/r.mlir
    build/bin/attn-run /tmp/r.mlir --all --check > /tmp/r.log || echo $s
  done
"""
import argparse
import random


class Region:
    """SSA lines of a region body, with fresh names."""

    def __init__(self):
        self.lines = []
        self.n = 0

    def emit(self, text, type_):
        self.n += 1
        name = "%%t%d" % self.n
        self.lines.append("      %s = %s : %s" % (name, text, type_))
        return name

    def const(self, value, type_):
        return self.emit("arith.constant %s" % value, type_)


def int_expr(r, rg, depth, doc):
    """An index-typed expression of %b, %h, %i, %j and small constants."""
    if depth == 0 or r.random() < 0.35:
        leaf = r.choice(["%i", "%j", "%i", "%j", "%h", "%b", "const"])
        if leaf == "const":
            return rg.const(r.randint(0, 200), "index")
        return leaf
    op = r.choice(["addi", "subi", "muli", "floordivsi", "remsi", "maxsi",
                   "minsi", "doc" if doc else "addi"])
    if op == "doc":
        # A document id of q_idx or kv_idx (the captured tensor is Lq or Lk
        # long: read it at the index it was made for).
        d = doc_read(rg, r.choice(doc))
        return rg.emit("arith.index_cast %s" % d, "i32 to index")
    a = int_expr(r, rg, depth - 1, doc)
    if op in ("muli", "floordivsi", "remsi"):
        b = rg.const(r.randint(1, 9), "index")
    else:
        b = int_expr(r, rg, depth - 1, doc)
    return rg.emit("arith.%s %s, %s" % (op, a, b), "index")


def doc_read(rg, doc):
    """The i32 id a captured document-id tensor holds at the index it was
    made for: `doc` is (name, index argument, length)."""
    name, idx, length = doc
    return rg.emit("tensor.extract %s[%s]" % (name, idx), "tensor<%dxi32>" % length)


def bool_expr(r, rg, depth, doc):
    """An i1 expression: comparisons of int_expr's, joined by and / or / xor."""
    if depth == 0 or r.random() < 0.5:
        pred = r.choice(["slt", "sle", "sgt", "sge", "eq", "ne"])
        a = int_expr(r, rg, 2, doc)
        b = int_expr(r, rg, 2, doc)
        return rg.emit("arith.cmpi %s, %s, %s" % (pred, a, b), "index")
    a = bool_expr(r, rg, depth - 1, doc)
    b = bool_expr(r, rg, depth - 1, doc)
    return rg.emit("arith.%s %s, %s" % (r.choice(["andi", "ori", "xori"]), a, b),
                   "i1")


def mask_mod(r, doc):
    rg = Region()
    if doc and r.random() < 0.5:
        # Documents: the same id at q_idx and kv_idx.
        a, b = doc_read(rg, doc[0]), doc_read(rg, doc[1])
        c = rg.emit("arith.cmpi eq, %s, %s" % (a, b), "i32")
        if r.random() < 0.5:
            c = rg.emit("arith.andi %s, %s" % (c, bool_expr(r, rg, 1, doc)), "i1")
    else:
        c = bool_expr(r, rg, 2, doc)
    return ("    mask_mod {\n    ^bb0(%b: index, %h: index, %i: index, %j: index):\n" +
            "\n".join(rg.lines) + "\n      attn.yield %s : i1\n    }" % c)


def score_mod(r, slopes):
    rg = Region()
    kind = r.choice(["softcap", "position", "scale", "slope" if slopes else "softcap"])
    s = "%s"
    if kind == "softcap":
        cap = rg.const(r.choice(["0.5", "1.5", "5.0", "30.0"]), "f32")
        x = rg.emit("arith.divf %s, %s" % (s, cap), "f32")
        t = rg.emit("math.tanh %s" % x, "f32")
        out = rg.emit("arith.mulf %s, %s" % (t, cap), "f32")
    elif kind == "position":
        d = rg.emit("arith.subi %i, %j", "index")
        di = rg.emit("arith.index_cast %s" % d, "index to i64")
        f = rg.emit("arith.sitofp %s" % di, "i64 to f32")
        c = rg.const(r.choice(["0.01", "-0.02", "0.1"]), "f32")
        out = rg.emit("math.fma %s, %s, %s" % (f, c, s), "f32")
    elif kind == "scale":
        c = rg.const(r.choice(["0.5", "2.0", "-1.0"]), "f32")
        out = rg.emit("arith.mulf %s, %s" % (s, c), "f32")
    else:
        name, heads = slopes
        w = rg.emit("tensor.extract %s[%%h]" % name, "tensor<%dxf32>" % heads)
        d = rg.emit("arith.subi %j, %i", "index")
        di = rg.emit("arith.index_cast %s" % d, "index to i64")
        a = rg.emit("math.absi %s" % di, "i64")
        f = rg.emit("arith.sitofp %s" % a, "i64 to f32")
        p = rg.emit("arith.mulf %s, %s" % (w, f), "f32")
        out = rg.emit("arith.subf %s, %s" % (s, p), "f32")
    return ("    score_mod {\n    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):\n" +
            "\n".join(rg.lines) + "\n      attn.yield %s : f32\n    }" % out)


def attention(r, index, max_len, mha):
    """An attn.sdpa function, or with `mha` an attn.mha one (PyTorch-packed
    projections around the same attention options)."""
    batch = r.choice([1, 2])
    kv_heads = r.choice([1, 2])
    heads = kv_heads * r.choice([1, 2, 3])
    lk = r.choice([r.randint(1, 32), r.randint(min(33, max_len), max_len),
                   r.randint(60, 70),
                   r.choice([64, 128, 192, 256])])
    lk = min(lk, max_len)
    lq = r.choice([r.randint(1, max_len), lk, r.randint(1, 40), r.choice([64, 128])])
    lq = min(lq, max_len)
    e = r.choice([1, 4, 8, 16, 20, 24, 32, 40, 48, 64, 72, 96, 128])
    ev = e if mha else r.choice([e, e, 4, 8, 12, 16, 24, 32, 48, 64])
    if mha:
        e = ev = r.choice([2, 4, 8, 12, 16, 24, 32, 64])
    dt = r.choice(["f32"] * 4 + ["bf16", "f16"])
    mask = r.choice(["dense", "dense", "causal", "causal_tl", "local",
                     "causal_local", "dilated", "graph", "graph"])
    attrs = []
    if mha:
        attrs.append("num_heads = %d : i64" % heads)
        if kv_heads != heads or r.random() < 0.3:
            attrs.append("num_kv_heads = %d : i64" % kv_heads)
    if mask == "causal":
        attrs.append("mask = #attn.mask<causal>")
    elif mask == "causal_tl":
        attrs += ["mask = #attn.mask<causal>", "align = #attn.align<top_left>"]
    elif mask == "local":
        attrs += ["mask = #attn.mask<local>",
                  "window_left = %d : i64" % r.randint(0, 80),
                  "window_right = %d : i64" % r.randint(0, 80)]
    elif mask == "causal_local":
        attrs += ["mask = #attn.mask<causal_local>",
                  "window_left = %d : i64" % r.randint(1, 100)]
    elif mask == "dilated":
        attrs += ["mask = #attn.mask<dilated>",
                  "window_left = %d : i64" % r.randint(0, 100),
                  "window_right = %d : i64" % r.randint(0, 100),
                  "dilation = %d : i64" % r.randint(1, 3)]
    elif mask == "graph":
        attrs.append("mask = #attn.mask<graph>")
    lse = r.random() < 0.4 and not mha
    kv_lengths = r.random() < 0.3
    bias = r.random() < 0.2
    rel_bias = r.random() < 0.15
    rel_key = r.random() < 0.1 and ev == e
    alibi = r.random() < 0.15
    with_mask_mod = r.random() < 0.25
    with_score_mod = r.random() < 0.2
    if mha:
        # The projections of uniform inputs and weights make logits of
        # hundreds at 1/sqrt(hd), where f32 scores are off the double-precision
        # oracle by more than attn-run's tolerance (test/Integration/
        # sdpa-large-logits.mlir checks that regime with its own): a small
        # explicit scale keeps them near ten.
        attrs.append("scale = %s : f64" % r.choice(["0.01", "0.02", "0.04"]))
    elif r.random() < 0.2:
        attrs.append("scale = %s : f64" % r.choice(["0.05", "0.3", "1.0", "2.0"]))
    clip = r.randint(1, 20)
    if rel_bias or rel_key:
        attrs.append("rel_clip = %d : i64" % clip)

    def t(shape, elem=dt):
        return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), elem)

    args, types = [], []

    def add(name, keyword, type_):
        args.append("%%%s: %s" % (name, type_))
        types.append(type_)
        return " %s(%%%s)" % (keyword, name) if keyword else ""

    if mha:
        d = heads * e
        operands = "%x, "
        add("x", None, t([batch, lq, d]))
        if r.random() < 0.5 and lq == lk:
            operands += "%x, %x"
            types += [t([batch, lq, d])] * 2
        else:
            add("kv", None, t([batch, lk, d]))
            operands += "%kv, %kv"
            types.append(t([batch, lk, d]))
        rows = d + 2 * kv_heads * e
        operands += " in_proj(%w_in"
        add("w_in", None, t([rows, d]))
        if r.random() < 0.6:
            operands += ", %b_in"
            add("b_in", None, t([rows]))
        operands += ") out_proj(%w_out"
        add("w_out", None, t([d, d]))
        if r.random() < 0.6:
            operands += ", %b_out"
            add("b_out", None, t([d]))
        operands += ")"
        results = [t([batch, lq, d])]
    else:
        operands = "%q, %k, %v"
        add("q", None, t([batch, heads, lq, e]))
        add("k", None, t([batch, kv_heads, lk, e]))
        add("v", None, t([batch, kv_heads, lk, ev]))
        results = [t([batch, heads, lq, ev])]
        if lse:
            results.append(t([batch, heads, lq]))
    if kv_lengths:
        operands += add("len", "kv_lengths", "tensor<%dxi32>" % batch)
    if bias:
        operands += add("bias", "bias", t([r.choice([1, batch]), r.choice([1, heads]), lq, lk]))
    if rel_bias:
        operands += add("rb", "rel_bias", t([heads, 2 * clip + 1]))
    if rel_key:
        operands += add("rk", "rel_key", t([2 * clip + 1, e]))
    if alibi:
        operands += add("slopes", "alibi", t([heads]))
    if mask == "graph":
        nnz = r.choice([r.randint(0, lq * lk // 10 + 1), r.randint(0, lq * lk // 2 + 1),
                        r.randint(lq, 3 * lq)])
        it = r.choice(["i32", "i64"])
        add("rp", None, "tensor<%dx%s>" % (lq + 1, it))
        add("ci", None, "tensor<%dx%s>" % (nnz, it))
        operands += " graph(%rp, %ci)"
    # Captured tensors are read by the regions, not operands of the op.
    op_types = list(types)
    regions = []
    doc = []
    if with_mask_mod:
        if r.random() < 0.5:
            args += ["%%qdoc: tensor<%dxi32>" % lq, "%%kdoc: tensor<%dxi32>" % lk]
            doc = [("%qdoc", "%i", lq), ("%kdoc", "%j", lk)]
        regions.append(mask_mod(r, doc))
    if with_score_mod:
        slopes = None
        if r.random() < 0.4:
            args.append("%%w: tensor<%dxf32>" % heads)
            slopes = ("%w", heads)
        regions.insert(0, score_mod(r, slopes))
    names = "%o, %l" if len(results) == 2 else "%o"
    attr = (" {%s}" % ", ".join(attrs)) if attrs else ""
    body = "  %s = attn.%s %s%s\n      : (%s) -> (%s)\n" % (
        names, "mha" if mha else "sdpa", operands, attr, ", ".join(op_types),
        ", ".join(results))
    if regions:
        body += "\n".join(regions) + "\n"
    return "func.func @%s%d(%s) -> (%s) {\n%s  return %s : %s\n}\n" % (
        "mha" if mha else "sdpa", index, ", ".join(args), ", ".join(results),
        body, names, ", ".join(results))


def gat(r, index):
    n = r.choice([r.randint(1, 40), r.randint(40, 300)])
    f = r.choice([1, 3, 5, 8, 16, 33, 64])
    heads = r.choice([1, 2, 3, 4, 8])
    c = r.choice([1, 2, 3, 4, 8, 16])
    nnz = r.choice([0, r.randint(0, n), r.randint(n, 6 * n), r.randint(0, n * n // 2 + 1)])
    it = r.choice(["i32", "i64"])
    mean, self_loops, alpha = r.random() < 0.3, r.random() < 0.6, r.random() < 0.4
    bias, edge, target, v2 = r.random() < 0.5, r.random() < 0.3, r.random() < 0.25, r.random() < 0.3
    hc = heads * c
    width = c if mean else hc

    def t(*shape, elem="f32"):
        return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), elem)

    args, types = ["%%x: %s" % t(n, f)], [t(n, f)]

    def add(name, type_):
        args.append("%%%s: %s" % (name, type_))
        types.append(type_)

    targets = r.randint(1, 60) if target and not v2 else n
    if v2:
        add("wl", t(hc, f))
        add("wr", t(hc, f))
        add("att", t(heads, c))
        op = "attn.gatv2 %x, %wl, %wr, %att"
    else:
        add("w", t(hc, f))
        add("as", t(heads, c))
        add("ad", t(heads, c))
        op = "attn.gat %x, %w, %as, %ad"
    add("rp", t(targets + 1, elem=it))
    add("ci", t(nnz, elem=it))
    op += " graph(%rp, %ci)"
    if v2:
        if bias:
            add("b", t(width)); op += " bias(%b)"
    else:
        if bias:
            add("b", t(width)); op += " bias(%b)"
        if edge:
            d = r.randint(1, 6)
            add("ea", t(nnz, d))
            add("we", t(hc, d))
            add("ae", t(heads, c))
            op += " edge(%ea, %we, %ae)"
        if targets != n or target:
            fd = r.choice([f, r.randint(1, 20)])
            add("xd", t(targets, fd))
            add("wd", t(hc, fd))
            op += " target(%xd, %wd)"
            if fd != f:
                self_loops = False
    attrs = []
    if mean:
        attrs.append("combine = #attn.heads<mean>")
    if not self_loops:
        attrs.append("add_self_loops = false")
    if r.random() < 0.3:
        attrs.append("negative_slope = %s : f64" % r.choice(["0.0", "0.1", "0.5"]))
    results = [t(targets, width)] + ([t(nnz + (min(n, targets) if self_loops else 0), heads)] if alpha else [])
    names = "%y, %alpha" if alpha else "%y"
    attr = (" {%s}" % ", ".join(attrs)) if attrs else ""
    return ("func.func @gat%d(%s) -> (%s) {\n  %s = %s%s\n      : (%s) -> (%s)\n"
            "  return %s : %s\n}\n") % (
        index, ", ".join(args), ", ".join(results), names, op, attr,
        ", ".join(types), ", ".join(results), names, ", ".join(results))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--ops", default="sdpa,mha,gat",
                    help="comma-separated: sdpa, mha, gat (drawn 4:1:1 when all)")
    ap.add_argument("--max-len", type=int, default=320,
                    help="longest Lq and Lk of attn.sdpa and attn.mha (at least 1)")
    a = ap.parse_args()
    ops = a.ops.split(",")
    weights = {"sdpa": 4, "mha": 1, "gat": 1}
    if not ops or any(o not in weights for o in ops) or a.max_len < 1 or a.count < 1:
        ap.error("--ops takes sdpa, mha and / or gat, --max-len and --count at least 1")
    r = random.Random(a.seed)
    print("// scripts/random-attn.py --seed %d --count %d --ops %s --max-len %d" % (
        a.seed, a.count, a.ops, a.max_len))
    pool = [o for o in ops for _ in range(weights[o])]
    for i in range(a.count):
        kind = r.choice(pool)
        print(gat(r, i) if kind == "gat" else attention(r, i, a.max_len, kind == "mha"))


if __name__ == "__main__":
    main()
