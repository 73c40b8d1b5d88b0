//===- Reference.cpp - naive C++ attention kernels (test oracle) ----------===//

#include "lib/Runtime/Reference.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace mlir::attn;
using namespace mlir::attn::reference;

static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Row-major offset of `idx` in `shape`.
static int64_t offsetOf(llvm::ArrayRef<int64_t> shape,
                        std::initializer_list<int64_t> idx) {
  int64_t off = 0, d = 0;
  for (int64_t i : idx)
    off = off * shape[d++] + i;
  return off;
}

namespace {
/// The oracle's own reading of a mask kind, resolved once per call.
enum class Kind { dense, causal, local, causalLocal, dilated, graph };
struct Resolved {
  const MaskArgs *args;
  Kind kind;
  int64_t left = 0, dilation = 1;
  std::optional<int64_t> right;
};
} // namespace

static Resolved resolve(const MaskArgs &m) {
  auto param = [&](const char *name) -> std::optional<int64_t> {
    auto it = m.maskParams.find(name);
    if (it == m.maskParams.end())
      return std::nullopt;
    return it->second;
  };
  static const std::pair<const char *, Kind> kinds[] = {
      {"dense", Kind::dense},         {"causal", Kind::causal},
      {"local", Kind::local},         {"causal_local", Kind::causalLocal},
      {"dilated", Kind::dilated},     {"graph", Kind::graph}};
  for (auto [name, kind] : kinds)
    if (m.mask == name)
      return {&m, kind, param("window_left").value_or(0),
              param("dilation").value_or(1), param("window_right")};
  llvm::reportFatalInternalError(
      llvm::Twine("reference: no predicate for mask kind '") + m.mask + "'");
}

/// Is key j visible from query row i (absolute position ia) of batch b?
/// Window bounds in 128 bits: a window near 2^63 reaches every key.
static bool allowed(const Resolved &r, int64_t b, int64_t i, int64_t ia,
                    int64_t j) {
  const MaskArgs &m = *r.args;
  if (m.kvLengths && j >= m.kvLengths->getInt(b))
    return false;
  using Wide = __int128;
  bool afterLeft = Wide(j) >= Wide(ia) - r.left;
  bool beforeRight = !r.right || Wide(j) <= Wide(ia) + *r.right;
  switch (r.kind) {
  case Kind::dense:
    return true;
  case Kind::causal:
    return j <= ia;
  case Kind::local:
    return afterLeft && beforeRight;
  case Kind::causalLocal:
    return j <= ia && afterLeft && beforeRight;
  case Kind::dilated:
    return afterLeft && beforeRight && (ia - j) % r.dilation == 0;
  case Kind::graph:
    for (int64_t e = m.rowPtr->getInt(i), end = m.rowPtr->getInt(i + 1);
         e < end; ++e)
      if (m.colIdx->getInt(e) == j)
        return true;
    return false;
  }
  return false;
}

bool reference::isAllowed(const MaskArgs &m, int64_t b, int64_t i, int64_t ia,
                          int64_t j) {
  return allowed(resolve(m), b, i, ia, j);
}

void reference::sdpa(const HostTensor &q, const HostTensor &k,
                     const HostTensor &v, const MaskArgs &m, HostTensor &out,
                     HostTensor *lse) {
  int64_t nb = q.shape()[0], nh = q.shape()[1], lq = q.shape()[2],
          e = q.shape()[3];
  int64_t nkv = k.shape()[1], lk = k.shape()[2], ev = v.shape()[3];
  int64_t group = nh / nkv;
  double scale = m.scale ? *m.scale : 1.0 / std::sqrt(double(e));
  std::vector<double> s(lk), acc(ev);
  Resolved mask = resolve(m);

  for (int64_t b = 0; b < nb; ++b)
    for (int64_t h = 0; h < nh; ++h)
      for (int64_t i = 0; i < lq; ++i) {
        if (!isSampledRow(i, lq, m.rowStride))
          continue;
        int64_t kh = h / group, ia = i + (lk - lq);
        if (m.align == "top_left")
          ia = i;
        else if (m.align == "per_sequence")
          ia = i + (m.kvLengths->getInt(b) - lq);
        else if (m.align != "bottom_right")
          llvm::reportFatalInternalError(
              llvm::Twine("reference: unknown alignment '") + m.align + "'");
        double rowMax = kNegInf;
        for (int64_t j = 0; j < lk; ++j) {
          s[j] = kNegInf;
          if (!allowed(mask, b, i, ia, j) ||
              (m.maskMod && !m.maskMod(b, h, i, j)))
            continue;
          int64_t r =
              std::clamp<int64_t>(j - ia, -m.relClip, m.relClip) + m.relClip;
          double dot = 0;
          for (int64_t x = 0; x < e; ++x) {
            double key = k.getDouble(offsetOf(k.shape(), {b, kh, j, x}));
            if (m.relKey)
              key += m.relKey->getDouble(offsetOf(m.relKey->shape(), {r, x}));
            dot += q.getDouble(offsetOf(q.shape(), {b, h, i, x})) * key;
          }
          double score = scale * dot;
          if (m.bias) {
            llvm::ArrayRef<int64_t> bs = m.bias->shape();
            score += m.bias->getDouble(
                offsetOf(bs, {bs[0] == 1 ? 0 : b, bs[1] == 1 ? 0 : h,
                              bs[2] == 1 ? 0 : i, bs[3] == 1 ? 0 : j}));
          }
          if (m.relBias)
            score += m.relBias->getDouble(offsetOf(m.relBias->shape(), {h, r}));
          if (m.alibi)
            score -= m.alibi->getDouble(h) * double(std::abs(j - ia));
          if (m.scoreMod)
            score = m.scoreMod(score, b, h, i, j);
          s[j] = score;
          rowMax = std::max(rowMax, score);
        }

        std::fill(acc.begin(), acc.end(), 0.0);
        double sum = 0;
        if (rowMax != kNegInf) {
          for (int64_t j = 0; j < lk; ++j) {
            if (s[j] == kNegInf)
              continue;
            double p = std::exp(s[j] - rowMax);
            sum += p;
            for (int64_t x = 0; x < ev; ++x)
              acc[x] += p * v.getDouble(offsetOf(v.shape(), {b, kh, j, x}));
          }
        }
        for (int64_t x = 0; x < ev; ++x)
          out.setDouble(offsetOf(out.shape(), {b, h, i, x}),
                        sum > 0 ? acc[x] / sum : 0.0);
        if (lse)
          lse->setDouble(offsetOf(lse->shape(), {b, h, i}),
                         sum > 0 ? rowMax + std::log(sum) : kNegInf);
      }
}

/// y[b, h, l, c] = sum_d x[b, l, d] * w[row0 + h*hd + c, d] (+ bias[row0 +
/// ...]).
static HostTensor projectHeads(const HostTensor &x, const HostTensor &w,
                               const HostTensor *bias, int64_t row0,
                               int64_t heads, int64_t hd) {
  int64_t nb = x.shape()[0], len = x.shape()[1], dim = x.shape()[2];
  HostTensor y(DType::f32, {nb, heads, len, hd});
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t l = 0; l < len; ++l)
        for (int64_t c = 0; c < hd; ++c) {
          int64_t row = row0 + h * hd + c;
          double acc = bias ? bias->getDouble(row) : 0.0;
          for (int64_t d = 0; d < dim; ++d)
            acc += x.getDouble(offsetOf(x.shape(), {b, l, d})) *
                   w.getDouble(offsetOf(w.shape(), {row, d}));
          y.setDouble(offsetOf(y.shape(), {b, h, l, c}), acc);
        }
  return y;
}

void reference::mha(const MhaArgs &a, HostTensor &out) {
  int64_t nb = a.query->shape()[0], lq = a.query->shape()[1],
          dim = a.query->shape()[2];
  int64_t hd = dim / a.numHeads, kvDim = a.numKvHeads * hd;
  HostTensor q =
      projectHeads(*a.query, *a.inProjWeight, a.inProjBias, 0, a.numHeads, hd);
  HostTensor k = projectHeads(*a.key, *a.inProjWeight, a.inProjBias, dim,
                              a.numKvHeads, hd);
  HostTensor v = projectHeads(*a.value, *a.inProjWeight, a.inProjBias,
                              dim + kvDim, a.numKvHeads, hd);
  HostTensor attn(DType::f32, {nb, a.numHeads, lq, hd});
  sdpa(q, k, v, a.mask, attn, nullptr);

  for (int64_t b = 0; b < nb; ++b)
    for (int64_t l = 0; l < lq; ++l)
      for (int64_t o = 0; o < dim; ++o) {
        double acc = a.outProjBias ? a.outProjBias->getDouble(o) : 0.0;
        for (int64_t h = 0; h < a.numHeads; ++h)
          for (int64_t c = 0; c < hd; ++c)
            acc += attn.getDouble(offsetOf(attn.shape(), {b, h, l, c})) *
                   a.outProjWeight->getDouble(
                       offsetOf({dim, dim}, {o, h * hd + c}));
        out.setDouble(offsetOf(out.shape(), {b, l, o}), acc);
      }
}

void reference::gat(const GatArgs &a, HostTensor &out, HostTensor *alpha) {
  // n destinations (the CSR's rows), nSrc sources: x's rows, and x_dst's
  // for the destinations of a bipartite layer.
  const HostTensor &xDst = a.xDst ? *a.xDst : *a.x;
  int64_t nSrc = a.x->shape()[0], n = xDst.shape()[0];
  int64_t heads = a.attSrc->shape()[0], ch = a.attSrc->shape()[1];
  int64_t hc = heads * ch;
  int64_t loops = a.addSelfLoops ? std::min(n, nSrc) : 0;

  // z = x W^T (+ b), and the per-node attention logits of both ends (GAT);
  // GATv2 keeps both projections for the per-edge score.
  auto project = [&](const HostTensor &x, const HostTensor *w,
                     const HostTensor *b) {
    int64_t rows = x.shape()[0], f = x.shape()[1];
    std::vector<double> z(rows * hc);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t o = 0; o < hc; ++o) {
        double acc = b ? b->getDouble(o) : 0.0;
        for (int64_t k = 0; k < f; ++k)
          acc += x.getDouble(i * f + k) * w->getDouble(o * f + k);
        z[i * hc + o] = acc;
      }
    return z;
  };
  bool v2 = a.v2;
  std::vector<double> z = project(*a.x, a.weight, a.biasSrc),
                      zd = v2 || a.xDst
                               ? project(xDst, a.weightDst ? a.weightDst
                                                           : a.weight,
                                         a.biasDst)
                               : z;
  std::vector<double> aSrc(nSrc * heads, 0.0), aDst(n * heads, 0.0);
  auto attend = [&](const std::vector<double> &zz, const HostTensor *att,
                    std::vector<double> &logit) {
    for (size_t i = 0; i < logit.size() / heads; ++i)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t c = 0; c < ch; ++c)
          logit[i * heads + h] +=
              att->getDouble(h * ch + c) * zz[i * hc + h * ch + c];
  };
  if (!v2) {
    attend(z, a.attSrc, aSrc);
    attend(zd, a.attDst, aDst);
  }
  auto leaky = [&](double e) { return e > 0 ? e : a.negativeSlope * e; };

  // edge_dim: each edge's projection ze[e] = W_e edge_attr[e] (H*C), and a
  // self loop's, the mean over the node's in-edges that are not loops. GAT
  // adds the scalar att_edge[h] . ze[e, h] to its score, GATv2 ze[e, h]
  // inside the nonlinearity.
  int64_t nnzAll = a.colIdx->numElements();
  std::vector<double> edgeProj, loopProj;
  if (a.edgeAttr) {
    int64_t dim = a.edgeAttr->shape()[1];
    edgeProj.assign(nnzAll * hc, 0.0);
    for (int64_t e = 0; e < nnzAll; ++e)
      for (int64_t o = 0; o < hc; ++o)
        for (int64_t d = 0; d < dim; ++d)
          edgeProj[e * hc + o] += a.weightEdge->getDouble(o * dim + d) *
                                  a.edgeAttr->getDouble(e * dim + d);
    loopProj.assign(n * hc, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t count = 0;
      for (int64_t e = a.rowPtr->getInt(i); e < a.rowPtr->getInt(i + 1); ++e) {
        if (a.colIdx->getInt(e) == i)
          continue;
        ++count;
        for (int64_t o = 0; o < hc; ++o)
          loopProj[i * hc + o] += edgeProj[e * hc + o];
      }
      for (int64_t o = 0; o < hc && count; ++o)
        loopProj[i * hc + o] /= double(count);
    }
  }
  // Edge id's projection, column o (CSR edges, then node id - nnz's loop).
  auto edgeProjAt = [&](int64_t id, int64_t o) {
    return id < nnzAll ? edgeProj[id * hc + o]
                       : loopProj[(id - nnzAll) * hc + o];
  };

  int64_t outDim = a.concat ? hc : ch, nnz = a.colIdx->numElements();
  std::vector<int64_t> sources, edgeIds;
  std::vector<double> logits, acc(hc);
  for (int64_t i = 0; i < n; ++i) {
    // In-edges of i, PyG-style: with self loops, drop existing ones, add one.
    sources.clear();
    edgeIds.clear();
    for (int64_t e = a.rowPtr->getInt(i), end = a.rowPtr->getInt(i + 1);
         e < end; ++e) {
      int64_t j = a.colIdx->getInt(e);
      if (j < 0 || j >= nSrc || (a.addSelfLoops && j == i))
        continue;
      sources.push_back(j);
      edgeIds.push_back(e);
    }
    if (i < loops) {
      sources.push_back(i);
      edgeIds.push_back(nnz + i);
    }

    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t h = 0; h < heads; ++h) {
      logits.clear();
      double maxLogit = kNegInf;
      for (size_t k = 0; k < sources.size(); ++k) {
        int64_t j = sources[k];
        double e = 0;
        if (v2) {
          for (int64_t c = 0; c < ch; ++c)
            e += a.attSrc->getDouble(h * ch + c) *
                 leaky(zd[i * hc + h * ch + c] + z[j * hc + h * ch + c] +
                       (a.edgeAttr ? edgeProjAt(edgeIds[k], h * ch + c) : 0.0));
        } else {
          double term = 0;
          for (int64_t c = 0; a.edgeAttr && c < ch; ++c)
            term += a.attEdge->getDouble(h * ch + c) *
                    edgeProjAt(edgeIds[k], h * ch + c);
          e = leaky(aDst[i * heads + h] + aSrc[j * heads + h] + term);
        }
        logits.push_back(e);
        maxLogit = std::max(maxLogit, e);
      }
      double sum = 0;
      for (double &l : logits)
        sum += (l = std::exp(l - maxLogit));
      for (size_t s = 0; s < sources.size(); ++s) {
        for (int64_t c = 0; c < ch; ++c)
          acc[h * ch + c] += logits[s] / sum * z[sources[s] * hc + h * ch + c];
        if (alpha)
          alpha->setDouble(edgeIds[s] * heads + h, logits[s] / sum);
      }
    }
    for (int64_t o = 0; o < outDim; ++o) {
      double val = 0;
      if (a.concat) {
        val = acc[o];
      } else {
        for (int64_t h = 0; h < heads; ++h)
          val += acc[h * ch + o];
        val /= double(heads);
      }
      if (a.bias)
        val += a.bias->getDouble(o);
      out.setDouble(i * outDim + o, val);
    }
  }
}
