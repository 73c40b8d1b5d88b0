//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//

#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "dialect/AttnBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Mask and score-modification options shared by attn.sdpa and attn.mha.
//===----------------------------------------------------------------------===//

defvar Attn_IndexTensor = RankedTensorOf<[I32, I64]>;

/// Optional operands that mask or modify the scores.
defvar Attn_MaskOperands = (ins
  Optional<Attn_IndexTensor>:$kv_lengths,
  Optional<AnyRankedTensor>:$bias,
  Optional<AnyRankedTensor>:$rel_bias,
  Optional<AnyRankedTensor>:$rel_key,
  Optional<AnyRankedTensor>:$alibi_slopes,
  Optional<Attn_IndexTensor>:$row_ptr,
  Optional<Attn_IndexTensor>:$col_idx
);

/// Attributes that select the mask and the scale.
defvar Attn_MaskAttrs = (ins
  DefaultValuedAttr<Attn_MaskKindAttr, "::mlir::attn::MaskKind::dense">:$mask,
  OptionalAttr<I64Attr>:$rel_clip,
  OptionalAttr<F64Attr>:$scale,
  DefaultValuedAttr<Attn_AlignAttr, "::mlir::attn::Align::bottom_right">:$align
);

/// The optional FlexAttention-style regions (empty when absent).
defvar Attn_ModRegions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);
defvar Attn_ModRegionsFormat = [{
  (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
}];

/// Assembly of the optional mask operands, each behind its keyword.
defvar Attn_MaskOperandsFormat = [{
  (`kv_lengths` `(` $kv_lengths^ `)`)?
  (`bias` `(` $bias^ `)`)?
  (`rel_bias` `(` $rel_bias^ `)`)?
  (`rel_key` `(` $rel_key^ `)`)?
  (`alibi` `(` $alibi_slopes^ `)`)?
  (`graph` `(` $row_ptr^ `,` $col_idx `)`)?
}];

defvar Attn_MaskDescription = [{
    Masks and score modifications (all optional, all composable unless noted).
    Positional terms use the query's absolute position `ia`, set by `align`
    (default `#attn.align<bottom_right>`: `ia = i + (Lk - Lq)`;
    `#attn.align<top_left>`: `ia = i`; `#attn.align<per_sequence>`:
    `ia = i + (kv_lengths[b] - Lq)`, which needs `kv_lengths`):

    - `mask` (default `dense`): one of the kinds of `#attn.mask` (the table
      there), with the integer parameters its row lists as attributes of the
      op (e.g. `window_left = 4`). The parameters are declared by the kinds'
      definitions (`dialect/MaskKinds.cpp`), not here: the verifier checks
      that each kind has the ones it needs and no other, and refuses any
      other undeclared, unprefixed attribute. `graph` needs `graph(row_ptr,
      col_idx)`: the CSR of allowed keys per query row (duplicate entries are
      harmless).
    - `kv_lengths(tensor<B x i32|i64>)`: padding, key `j` of batch `b` is
      allowed only when `j < kv_lengths[b]`.
    - `bias(tensor<B' x H' x Lq' x Lk'>)`: additive bias; each dimension is
      either full or 1 (broadcast). `-inf` entries mask.
    - `rel_bias(tensor<H x (2R+1)>)` with `rel_clip = R`: a learned
      relative-position bias per head over clipped distances,
      `s += rel_bias[h, clip(j - ia, -R, R) + R]` (T5's log-spaced buckets
      are a `score_mod` reading a bucket table; see docs).
    - `rel_key(tensor<(2R+1) x E>)` with `rel_clip = R`: Shaw relative key
      embeddings added to the key before the dot product,
      `s = scale * q_i . (k_j + rel_key[clip(j - ia, -R, R) + R])`.
    - `alibi(tensor<H>)`: ALiBi slopes, `s -= slope[h] * |j - ia|`.
    - `scale` (default `1/sqrt(E)`) multiplies `q . k` (and the Shaw term);
      biases are added after scaling.
    - `score_mod` region (FlexAttention's `score_mod`): block arguments
      `(%s: T, %b: index, %h: index, %q_idx: index, %kv_idx: index)`, where
      `T` is the computation type (f32 for f16/bf16 operands, else the
      element type) and `%s` the score after all of the above; yields the
      new score with `attn.yield`. `q_idx` is the query row `i` and `kv_idx`
      the key `j` (not the aligned position `ia`), as in FlexAttention.
    - `mask_mod` region (FlexAttention's `mask_mod`): block arguments
      `(%b, %h, %q_idx, %kv_idx: index)`; yields an `i1`, true where the key
      is allowed; composed by conjunction with `mask` and `kv_lengths`.
    Both regions have one block, side-effect-free ops only, and may read
    values defined above the op (a document-id tensor, a bias or bucket
    table) with `tensor.extract`.
}];

//===----------------------------------------------------------------------===//
// attn.sdpa
//===----------------------------------------------------------------------===//

def Attn_SdpaOp : Attn_Op<"sdpa", [Pure, AttrSizedOperandSegments]> {
  let summary = "Scaled dot-product attention with masks and score modifications";
  let description = !strconcat([{
    Computes, for every batch `b`, query head `h`, query row `i`:

    ```
    s_ij  = scale * q[b,h,i,:] . k[b,h/G,j,:]   (+ score modifications)
    s_ij  = -inf                                 where the mask forbids (i, j)
    o_i   = sum_j softmax_j(s_i.) * v[b,h/G,j,:]
    lse_i = log sum_j exp(s_ij)                  (optional second result)
    ```

    Shapes: `query` is `B x H x Lq x E`, `key` is `B x Hkv x Lk x E`, `value`
    is `B x Hkv x Lk x Ev`, the output is `B x H x Lq x Ev` and the optional
    `lse` result is `B x H x Lq`. `Hkv` must divide `H`; query head `h` reads
    key/value head `h / G` with `G = H / Hkv` (grouped-query and multi-query
    attention). All floating-point operands and results share one element
    type: f32, f64, f16 or bf16. With f16 and bf16, scores, the softmax and
    all sums are computed in f32 and the results rounded once to the element
    type (as FlashAttention does); every lowering does this.

    A row with no allowed key yields `o_i = 0` and `lse_i = -inf`, never NaN.
    Softmax is computed stably (max-subtracted).

  }], Attn_MaskDescription, [{

    Example:

    ```mlir
    %o, %lse = attn.sdpa %q, %k, %v kv_lengths(%len)
        {mask = #attn.mask<causal>, scale = 0.125 : f64}
        : (tensor<2x8x128x64xf32>, tensor<2x2x128x64xf32>,
           tensor<2x2x128x64xf32>, tensor<2xi32>)
        -> (tensor<2x8x128x64xf32>, tensor<2x8x128xf32>)
    ```

    With regions (tanh soft-capping of the scores, and document masking
    from a per-token document id `%doc : tensor<128xi32>`):

    ```mlir
    %o = attn.sdpa %q, %k, %v : (...) -> tensor<1x8x128x64xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %cap : f32
        attn.yield %r : f32
      } mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %di = tensor.extract %doc[%i] : tensor<128xi32>
        %dj = tensor.extract %doc[%j] : tensor<128xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      }
    ```
  }]);

  let arguments = !con(
    (ins AnyRankedTensor:$query, AnyRankedTensor:$key, AnyRankedTensor:$value),
    Attn_MaskOperands, Attn_MaskAttrs);
  let results = (outs AnyRankedTensor:$output, Optional<AnyRankedTensor>:$lse);
  let regions = Attn_ModRegions;

  let assemblyFormat = !strconcat("$query `,` $key `,` $value", Attn_MaskOperandsFormat,
    "attr-dict `:` functional-type(operands, results)", Attn_ModRegionsFormat);

  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute, or 1/sqrt(E) without it.
    double getEffectiveScale();
  }];
}

//===----------------------------------------------------------------------===//
// attn.mha
//===----------------------------------------------------------------------===//

def Attn_MhaOp : Attn_Op<"mha", [Pure, AttrSizedOperandSegments]> {
  let summary = "Multi-head attention with PyTorch-packed projections";
  let description = !strconcat([{
    Multi-head attention as `torch.nn.MultiheadAttention(batch_first=True)`
    computes it, generalised to grouped key/value heads:

    ```
    Q = query @ Wq^T + bq    K = key @ Wk^T + bk    V = value @ Wv^T + bv
    O = sdpa(split_heads(Q), split_heads(K), split_heads(V), <mask options>)
    output = merge_heads(O) @ out_proj_weight^T + out_proj_bias
    ```

    `query` is `B x Lq x D`, `key` and `value` are `B x Lk x D`. With
    `num_heads = H`, `num_kv_heads = Hkv` (default `H`) and head dim
    `hd = D / H`, `in_proj_weight` packs `[Wq; Wk; Wv]` row-wise as
    `(D + 2*Hkv*hd) x D` (PyTorch's `in_proj_weight` when `Hkv = H`),
    `in_proj_bias` is optional and packed the same way, `out_proj_weight` is
    `D x D` and `out_proj_bias` (optional) is `D`. The output is `B x Lq x D`.
    Element types as for `attn.sdpa` (f16/bf16: projections and attention
    computed in f32, the output rounded once).

    The mask options are those of `attn.sdpa` with head dim `hd`
    (`attn-decompose-mha` forwards them to the `attn.sdpa` it creates):

  }], Attn_MaskDescription, [{

    Example:

    ```mlir
    %y = attn.mha %x, %x, %x in_proj(%w_in, %b_in) out_proj(%w_out, %b_out)
        {num_heads = 4 : i64, mask = #attn.mask<causal>}
        : (tensor<1x16x32xf32>, tensor<1x16x32xf32>, tensor<1x16x32xf32>,
           tensor<96x32xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>)
        -> tensor<1x16x32xf32>
    ```
  }]);

  let arguments = !con(
    (ins AnyRankedTensor:$query, AnyRankedTensor:$key, AnyRankedTensor:$value,
         AnyRankedTensor:$in_proj_weight, Optional<AnyRankedTensor>:$in_proj_bias,
         AnyRankedTensor:$out_proj_weight, Optional<AnyRankedTensor>:$out_proj_bias),
    Attn_MaskOperands,
    (ins I64Attr:$num_heads, OptionalAttr<I64Attr>:$num_kv_heads),
    Attn_MaskAttrs);
  let results = (outs AnyRankedTensor:$output);
  let regions = Attn_ModRegions;

  let assemblyFormat = !strconcat([{
    $query `,` $key `,` $value
    `in_proj` `(` $in_proj_weight (`,` $in_proj_bias^)? `)`
    `out_proj` `(` $out_proj_weight (`,` $out_proj_bias^)? `)`
  }], Attn_MaskOperandsFormat,
    "attr-dict `:` functional-type(operands, results)", Attn_ModRegionsFormat);

  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of key/value heads: `num_kv_heads`, or `num_heads` without it.
    int64_t getKvHeads();
  }];
}

//===----------------------------------------------------------------------===//
// attn.yield
//===----------------------------------------------------------------------===//

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike,
                                     ParentOneOf<["SdpaOp", "MhaOp"]>]> {
  let summary = "Ends a score_mod or mask_mod region with its value";
  let description = [{
    The new score (`score_mod`, the computation type) or whether the key is
    allowed (`mask_mod`, `i1`).
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// attn.gat
//===----------------------------------------------------------------------===//

def Attn_GatOp : Attn_Op<"gat", [Pure, AttrSizedOperandSegments]> {
  let summary = "Graph attention layer (GATConv) over a CSR graph of in-edges";
  let description = [{
    One graph attention layer (Velickovic et al., PyG `GATConv` semantics).
    For node features `x` (`N x F`), `weight` (`H*C x F`, PyG `lin.weight`),
    attention vectors `att_src`, `att_dst` (`H x C`) and the CSR of in-edges
    (`row_ptr`: `N+1`, `col_idx`: `nnz`; the sources of destination `i` are
    `col_idx[row_ptr[i] .. row_ptr[i+1])`):

    ```
    z[n,h,:] = (x @ weight^T)[n, h*C:(h+1)*C]
    e_ij     = LeakyReLU(att_dst[h] . z[i,h] + att_src[h] . z[j,h])  for edges j -> i
    alpha_ij = softmax over the in-edges of i of e_ij
    out[i,h] = sum_j alpha_ij * z[j,h]
    ```

    Heads are concatenated (`combine = #attn.heads<concat>`, output `N x H*C`)
    or averaged (`#attn.heads<mean>`, output `N x C`); then the optional `bias`
    (`H*C` or `C`) is added. `negative_slope` (default 0.2) is LeakyReLU's.
    Duplicate edges are separate edges (each enters the softmax), as in PyG.
    With `add_self_loops` (default true, as in PyG) existing self loops are
    dropped and one self loop per node is added. A node without in-edges gets `0` (plus bias), never NaN.

    The optional second result `alpha` (`E' x H`, the output's element
    type) holds the attention coefficients per edge, as PyG's
    `return_attention_weights`: entry `e < nnz` is CSR edge `e` (`0` for a
    self loop that `add_self_loops` drops), and with `add_self_loops` entry
    `nnz + i` is node `i`'s added self loop, so `E' = nnz + N` (else `nnz`).
    The fused CPU lowering never materialises per-edge coefficients: an op
    that returns them takes the unfused lowering.

    With `edge(%edge_attr, %weight_edge, %att_edge)` (PyG's `edge_dim`:
    `edge_attr` `nnz x D` per CSR edge, `weight_edge` `H*C x D` its
    `lin_edge.weight`, `att_edge` `H x C`) every score gains the edge's term
    `att_edge[h] . (weight_edge @ edge_attr[e])[h*C:(h+1)*C]`; an added self
    loop's term is computed from the mean of its node's incoming edge
    attributes (self loops excluded; 0 without any), as PyG's
    `add_self_loops(fill_value='mean')`. Such an op, too, takes the unfused
    lowering.

    With `target(%x_dst, %weight_dst)` the layer is bipartite (PyG's
    `GATConv((in_src, in_dst), ...)` called with `(x_src, x_dst)`, as in
    sampled mini-batches): `x` holds the `Ns` source nodes and `x_dst`
    (`Nd x Fd`) the destinations, projected by `weight_dst` (`H*C x Fd`,
    PyG's `lin_dst.weight`, or `weight` itself for a shared `lin`).
    `a_src` comes from the sources' projection, `a_dst` from the
    destinations'; the CSR has `Nd` rows of source ids in `[0, Ns)`, the
    output `Nd` rows, and `add_self_loops` adds a loop `i -> i` for the
    `min(Ns, Nd)` nodes that are both (PyG's rule), so `alpha` has
    `nnz + min(Ns, Nd)` rows. Such an op, too, takes the unfused lowering.
    Element types as for `attn.sdpa` (f16/bf16: computed in f32, the output
    rounded once).

    Example:

    ```mlir
    %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) bias(%b)
        {combine = #attn.heads<concat>, negative_slope = 2.0e-01 : f64}
        : (tensor<34x16xf32>, tensor<32x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>,
           tensor<35xi32>, tensor<156xi32>, tensor<32xf32>) -> tensor<34x32xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$x, AnyRankedTensor:$weight,
    AnyRankedTensor:$att_src, AnyRankedTensor:$att_dst,
    Attn_IndexTensor:$row_ptr, Attn_IndexTensor:$col_idx,
    Optional<AnyRankedTensor>:$bias,
    Optional<AnyRankedTensor>:$edge_attr, Optional<AnyRankedTensor>:$weight_edge,
    Optional<AnyRankedTensor>:$att_edge,
    Optional<AnyRankedTensor>:$x_dst, Optional<AnyRankedTensor>:$weight_dst,
    DefaultValuedAttr<F64Attr, "0.2">:$negative_slope,
    DefaultValuedAttr<Attn_HeadCombineAttr, "::mlir::attn::HeadCombine::concat">:$combine,
    DefaultValuedAttr<BoolAttr, "true">:$add_self_loops);
  let results = (outs AnyRankedTensor:$output, Optional<AnyRankedTensor>:$alpha);

  let assemblyFormat = [{
    $x `,` $weight `,` $att_src `,` $att_dst `graph` `(` $row_ptr `,` $col_idx `)`
    (`bias` `(` $bias^ `)`)?
    (`edge` `(` $edge_attr^ `,` $weight_edge `,` $att_edge `)`)?
    (`target` `(` $x_dst^ `,` $weight_dst `)`)?
    attr-dict `:` functional-type(operands, results)
  }];

  let extraClassDeclaration = [{
    /// Per-edge coefficients, edge attributes or a bipartite layer: only
    /// the unfused lowering (attn-lower-gat-unfused) has these.
    bool needsUnfusedLowering() {
      return getAlpha() || getEdgeAttr() || getXDst();
    }
  }];

  let hasVerifier = 1;
}

def Attn_GatV2Op : Attn_Op<"gatv2", [Pure, AttrSizedOperandSegments]> {
  let summary = "GATv2 layer (PyG GATv2Conv) over a CSR graph of in-edges";
  let description = [{
    One GATv2 layer (Brody et al., PyG `GATv2Conv` semantics): the attention
    is computed after the nonlinearity, from both ends' projections. For node
    features `x` (`N x F`), `weight_src` / `weight_dst` (`H*C x F`, PyG's
    `lin_l.weight` / `lin_r.weight`) with optional biases `bias_src` /
    `bias_dst` (`H*C`, `lin_l.bias` / `lin_r.bias`), the attention vector
    `att` (`H x C`) and the CSR of in-edges (as attn.gat's):

    ```
    zs[n,h,:] = (x @ weight_src^T + bias_src)[n, h*C:(h+1)*C]
    zd[n,h,:] = (x @ weight_dst^T + bias_dst)[n, h*C:(h+1)*C]
    e_ij      = att[h] . LeakyReLU(zd[i,h] + zs[j,h])        for edges j -> i
    alpha_ij  = softmax over the in-edges of i of e_ij
    out[i,h]  = sum_j alpha_ij * zs[j,h]
    ```

    then heads concatenated or averaged and the optional `bias` added, as
    attn.gat. `share_weights` is the same tensor passed as both weights.
    Self loops, duplicate edges, nodes without in-edges and the optional
    `alpha` result (per-edge coefficients) are as for attn.gat. With
    `target(%x_dst)` the layer is bipartite as attn.gat's: `weight_src`
    projects the sources `x`, `weight_dst` (`H*C x Fd`) the destinations
    `x_dst` (PyG's `GATv2Conv` called with `(x_src, x_dst)`). With
    `edge(%edge_attr, %weight_edge)` (PyG's `edge_dim`: `edge_attr`
    `nnz x D` per CSR edge, `weight_edge` `H*C x D` its `lin_edge.weight`)
    each edge's projection joins the sum inside the nonlinearity,
    `e_ij = att[h] . LeakyReLU(zd[i,h] + zs[j,h] + ze[ij,h])` with
    `ze = edge_attr @ weight_edge^T`; an added self loop takes the mean of
    its node's incoming attributes, as for attn.gat. Lowered by
    the unfused lowering (per-edge scores, edge softmax, aggregation) in
    every pipeline: each score needs the C-wide nonlinearity, which the
    fused single-pass lowering of attn.gat does not have.

    Example:

    ```mlir
    %y = attn.gatv2 %x, %wl, %wr, %att graph(%rp, %ci) bias_src(%bl) bias_dst(%br) bias(%b)
        : (tensor<34x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<4x8xf32>,
           tensor<35xi32>, tensor<156xi32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
          -> tensor<34x32xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$x, AnyRankedTensor:$weight_src,
    AnyRankedTensor:$weight_dst, AnyRankedTensor:$att,
    Attn_IndexTensor:$row_ptr, Attn_IndexTensor:$col_idx,
    Optional<AnyRankedTensor>:$bias_src, Optional<AnyRankedTensor>:$bias_dst,
    Optional<AnyRankedTensor>:$bias, Optional<AnyRankedTensor>:$x_dst,
    Optional<AnyRankedTensor>:$edge_attr, Optional<AnyRankedTensor>:$weight_edge,
    DefaultValuedAttr<F64Attr, "0.2">:$negative_slope,
    DefaultValuedAttr<Attn_HeadCombineAttr, "::mlir::attn::HeadCombine::concat">:$combine,
    DefaultValuedAttr<BoolAttr, "true">:$add_self_loops);
  let results = (outs AnyRankedTensor:$output, Optional<AnyRankedTensor>:$alpha);

  let assemblyFormat = [{
    $x `,` $weight_src `,` $weight_dst `,` $att `graph` `(` $row_ptr `,` $col_idx `)`
    (`bias_src` `(` $bias_src^ `)`)? (`bias_dst` `(` $bias_dst^ `)`)?
    (`bias` `(` $bias^ `)`)? (`target` `(` $x_dst^ `)`)?
    (`edge` `(` $edge_attr^ `,` $weight_edge `)`)?
    attr-dict `:` functional-type(operands, results)
  }];

  let hasVerifier = 1;
}

#endif // ATTN_OPS_TD
