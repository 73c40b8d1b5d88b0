//===- Reference.h - naive C++ attention kernels (test oracle) --*- C++ -*-===//
//
// Plain loops, double-precision accumulation, written from the math in
// docs/Design.md ("The mathematics") and independently of every MLIR
// lowering. Used only as the oracle in tests and as a benchmark peer; never
// on the compiled path.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_REFERENCE_H
#define ATTN_LIB_RUNTIME_REFERENCE_H

#include "lib/Runtime/Tensor.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace mlir::attn::reference {

/// Mask and score-modification inputs shared by sdpa and mha. Null tensors
/// are absent.
struct MaskArgs {
  /// The mask kind by its IR name (`causal`, `local`, ...) and its integer
  /// parameters by attribute name (`window_left`, ...): the oracle reads
  /// both itself, so that a new kind changes Reference.cpp only.
  std::string mask = "dense";
  std::map<std::string, int64_t> maskParams;
  /// Where query row i sits among the keys (`align`): "bottom_right"
  /// (ia = i + Lk - Lq), "top_left" (ia = i) or "per_sequence"
  /// (ia = i + kvLengths[b] - Lq).
  std::string align = "bottom_right";
  int64_t relClip = 0;
  std::optional<double> scale;           ///< Default 1/sqrt(E).
  const HostTensor *kvLengths = nullptr; ///< [B]
  const HostTensor *bias = nullptr;      ///< [B|1, H|1, Lq|1, Lk|1]
  const HostTensor *relBias = nullptr;   ///< [H, 2R+1]
  const HostTensor *relKey = nullptr;    ///< [2R+1, E]
  const HostTensor *alibi = nullptr;     ///< [H]
  const HostTensor *rowPtr = nullptr;    ///< [Lq+1]
  const HostTensor *colIdx = nullptr;    ///< [nnz]
  /// FlexAttention-style modifications at (b, h, q_idx = i, kv_idx = j);
  /// empty when absent. `scoreMod` maps the score after every modification
  /// above to the new score; `maskMod` must also allow the key.
  std::function<double(double, int64_t, int64_t, int64_t, int64_t)> scoreMod;
  std::function<bool(int64_t, int64_t, int64_t, int64_t)> maskMod;
  /// Only the rows isSampledRow(i, Lq, rowStride) selects are computed (a
  /// sampled check at large L); the others are left untouched.
  int64_t rowStride = 1;
};

/// One query row per block of `stride` rows, at an offset that walks through
/// the block (block k samples row k * stride + k % stride, so the samples
/// fall on every position of a register or query tile), and the last row.
inline bool isSampledRow(int64_t i, int64_t rows, int64_t stride) {
  return stride <= 1 || i == rows - 1 || i % stride == (i / stride) % stride;
}

/// Is key j visible from query row i (absolute position ia) of batch b under
/// `mask` (its kind, padding and graph; not maskMod)? Stops the process on a kind the
/// oracle does not know.
bool isAllowed(const MaskArgs &mask, int64_t b, int64_t i, int64_t ia,
               int64_t j);

/// q [B,H,Lq,E], k [B,Hkv,Lk,E], v [B,Hkv,Lk,Ev] -> out [B,H,Lq,Ev] (f32),
/// and lse [B,H,Lq] when `lse` is non-null.
void sdpa(const HostTensor &q, const HostTensor &k, const HostTensor &v,
          const MaskArgs &mask, HostTensor &out, HostTensor *lse);

/// PyTorch-packed multi-head attention (batch first): query [B,Lq,D],
/// key/value [B,Lk,D], inProjWeight [D+2*Hkv*hd, D] -> out [B,Lq,D].
struct MhaArgs {
  const HostTensor *query, *key, *value;
  const HostTensor *inProjWeight, *inProjBias = nullptr;
  const HostTensor *outProjWeight, *outProjBias = nullptr;
  int64_t numHeads, numKvHeads;
  MaskArgs mask;
};
void mha(const MhaArgs &args, HostTensor &out);

/// GATConv: x [N,F], weight [H*C,F], attSrc/attDst [H,C], CSR of in-edges
/// -> out [N,H*C] (concat) or [N,C] (mean).
///
/// GATv2Conv when `v2` is set: `weight` / `weightDst` are lin_l / lin_r
/// (with biases `biasSrc` / `biasDst`), `attSrc` is `att`, `attDst` unused,
/// and e_ij = att . LeakyReLU(zd_i + zs_j), messages zs_j.
///
/// Bipartite when `xDst` is set: x [Ns,F] are the sources, xDst [Nd,Fd] the
/// destinations (projected by `weightDst`, GATConv's too), the CSR has Nd
/// rows, out Nd rows, and self loops are added for nodes < min(Ns, Nd).
struct GatArgs {
  const HostTensor *x, *weight, *attSrc, *attDst, *rowPtr, *colIdx;
  const HostTensor *bias = nullptr;
  const HostTensor *weightDst = nullptr, *biasSrc = nullptr,
                   *biasDst = nullptr;
  const HostTensor *xDst = nullptr;
  bool v2 = false;
  /// PyG's edge_dim: per-CSR-edge attributes (nnz x D), their projection
  /// (H*C x D) and (GATConv) attention (H x C); self loops take the mean
  /// of their node's incoming attributes.
  const HostTensor *edgeAttr = nullptr, *weightEdge = nullptr,
                   *attEdge = nullptr;
  double negativeSlope = 0.2;
  bool concat = true;
  bool addSelfLoops = true;
};
/// With `alpha` (E' x H, zeroed): the coefficient of every edge, laid out as
/// attn.gat's alpha result (CSR edges, then one self loop per node that is
/// both source and destination).
void gat(const GatArgs &args, HostTensor &out, HostTensor *alpha = nullptr);

} // namespace mlir::attn::reference

#endif // ATTN_LIB_RUNTIME_REFERENCE_H
