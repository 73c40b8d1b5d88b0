//===- AttnBase.td - attn dialect and attributes -----------*- tablegen -*-===//
//
// The attn dialect: attention as first-class ops, lowered by attn-mlir's
// passes to linalg, loops and LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BASE_TD
#define ATTN_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention ops: scaled dot-product, multi-head and graph attention";
  let description = [{
    The `attn` dialect expresses attention at the level a researcher thinks
    about it: scaled dot-product attention with its masks and positional score
    modifications (`attn.sdpa`), multi-head attention with PyTorch-packed
    projections (`attn.mha`), and graph attention layers (`attn.gat`).

    All ops work on ranked tensors and are pure. Every op has a reference
    lowering (`attn-lower-to-linalg`) that materialises scores, a plain
    second path next to the fast ones; the tests' oracle is the independent
    C++ reference (lib/Runtime/Reference.cpp).

    Positional conventions shared by every op: when the query length `Lq`
    differs from the key length `Lk`, query row `i` sits by default at
    absolute position `ia = i + (Lk - Lq)` (bottom-right alignment, as in
    FlashAttention and KV-cache decoding); `align` selects top-left
    (`ia = i`, PyTorch's `is_causal`) or per-sequence alignment against
    `kv_lengths[b]` (`#attn.align<...>`). Causal, local-window,
    relative-position and ALiBi terms all use `ia`; when `Lq == Lk` the
    default and top-left agree.
  }];
  let useDefaultAttributePrinterParser = 1;
}

def Attn_MaskKind : I32EnumAttr<"MaskKind", "structural attention mask", [
    I32EnumAttrCase<"dense", 0>,
    I32EnumAttrCase<"causal", 1>,
    I32EnumAttrCase<"local", 2>,
    I32EnumAttrCase<"causal_local", 3>,
    I32EnumAttrCase<"graph", 4>,
    I32EnumAttrCase<"dilated", 5>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_MaskKindAttr : EnumAttr<Attn_Dialect, Attn_MaskKind, "mask"> {
  let summary = "Structural mask kind of an attention op";
  let description = [{
    Which (query i, key j) pairs may attend, with `ia` the query's position
    (`i + (Lk - Lq)` by default; see `#attn.align`):

    | kind           | parameters (i64 attributes of the op)   | allowed (i, j) |
    |----------------|------------------------------------------|----------------|
    | `dense`        |                                          | all |
    | `causal`       |                                          | `j <= ia` |
    | `local`        | `window_left`, `window_right` (>= 0)     | `ia - window_left <= j <= ia + window_right` |
    | `causal_local` | `window_left`; `window_right` optional   | `ia - window_left <= j <= ia` (and `<= ia + window_right` if given) |
    | `graph`        | operands `graph(row_ptr, col_idx)`       | `j` is in `col_idx[row_ptr[i] .. row_ptr[i+1])` |
    | `dilated`      | `window_left`, `window_right`, `dilation` (>= 1) | `ia - window_left <= j <= ia + window_right` and `(ia - j) % dilation == 0` |

    Padding (`kv_lengths`) composes with every kind: `j < kv_lengths[b]`.

    Written `#attn.mask<causal>`; an unknown kind is one error naming it
    and the kinds there are. Each kind is defined once, in
    `dialect/MaskKinds.cpp` (its attributes, element predicate, the keys a
    range of rows can see, and when a tile is fully allowed); every lowering
    reads it from there.
  }];
  let assemblyFormat = ?;
  let hasCustomAssemblyFormat = 1;
}

def Attn_Align : I32EnumAttr<"Align",
    "where query rows sit among the keys", [
    I32EnumAttrCase<"bottom_right", 0>,
    I32EnumAttrCase<"top_left", 1>,
    I32EnumAttrCase<"per_sequence", 2>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_AlignAttr : EnumAttr<Attn_Dialect, Attn_Align, "align"> {
  let summary = "The absolute position of query rows among the keys";
  let description = [{
    Query row `i` sits at position `ia` among the keys; every positional term
    (the mask kinds, relative-position tables, ALiBi) uses `ia`:

    | alignment      | `ia`                       | as in |
    |----------------|----------------------------|-------|
    | `bottom_right` (default) | `i + (Lk - Lq)`  | FlashAttention, KV-cache decoding and chunked prefill: the queries are the last `Lq` tokens |
    | `top_left`     | `i`                        | PyTorch's `is_causal=True` (`CausalVariant.UPPER_LEFT`) |
    | `per_sequence` | `i + (kv_lengths[b] - Lq)` | a padded batch of sequences of their own lengths (FlashAttention varlen, chunked prefill per sequence); needs `kv_lengths` |

    Written `#attn.align<top_left>`. The default is bottom-right because the
    common `Lq != Lk` case is a query chunk at the end of its keys (a decode
    step sees its whole cache); with `Lq == Lk` the first two agree.
  }];
  let assemblyFormat = ?;
  let hasCustomAssemblyFormat = 1;
}

def Attn_HeadCombine : I32EnumAttr<"HeadCombine",
    "how a graph attention layer combines its heads", [
    I32EnumAttrCase<"concat", 0>,
    I32EnumAttrCase<"mean", 1>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_HeadCombineAttr : EnumAttr<Attn_Dialect, Attn_HeadCombine, "heads"> {
  let summary = "Concatenate or average the heads of a GAT layer";
  let description = [{
    Written `#attn.heads<concat>` or `#attn.heads<mean>`.
  }];
  let assemblyFormat = ?;
  let hasCustomAssemblyFormat = 1;
}

class Attn_Op<string mnemonic, list<Trait> traits = []> :
    Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_BASE_TD
