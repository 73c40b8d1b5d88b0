//===- UnfusedAttention.cpp - the OpenBLAS-unfused peer ------------------===//

#include "bench/UnfusedAttention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

extern "C" char *openblas_get_corename(void);
extern "C" void openblas_set_num_threads(int);

std::string openblasCoreName() { return openblas_get_corename(); }

/// Masked scores. Finite, because this file is compiled with -ffast-math so
/// that the softmax loops vectorize (libmvec expf).
static constexpr float kMasked = -1e30f;

/// Applies the family's mask and bias to score row i of head h.
static void maskRow(const UnfusedMask &m, int64_t h, int64_t i, float *row,
                    float *tmp, int64_t len) {
  switch (m.kind) {
  case UnfusedMask::dense:
    return;
  case UnfusedMask::causal:
    std::fill(row + std::min(i + 1, len), row + len, kMasked);
    return;
  case UnfusedMask::local: {
    int64_t lo = std::clamp<int64_t>(i - m.windowLeft, 0, len);
    int64_t hi = std::clamp<int64_t>(i + m.windowRight + 1, 0, len);
    std::fill(row, row + lo, kMasked);
    std::fill(row + hi, row + len, kMasked);
    return;
  }
  case UnfusedMask::padding:
    std::fill(row + std::min(m.kvLength, len), row + len, kMasked);
    return;
  case UnfusedMask::graph: {
    std::fill(tmp, tmp + len, kMasked);
    for (int32_t e = m.rowPtr[i]; e < m.rowPtr[i + 1]; ++e)
      tmp[m.colIdx[e]] = row[m.colIdx[e]];
    std::copy(tmp, tmp + len, row);
    return;
  }
  case UnfusedMask::relativeBias: {
    const float *table = m.relTable + h * (2 * m.relClip + 1);
    for (int64_t j = 0; j < len; ++j)
      row[j] +=
          table[std::clamp<int64_t>(j - i, -m.relClip, m.relClip) + m.relClip];
    return;
  }
  }
}

/// Row softmax in place; masked entries (-inf) give exactly 0, and a row
/// without allowed entries is all 0.
static void softmaxRow(float *row, int64_t len) {
  float m = kMasked;
  for (int64_t j = 0; j < len; ++j)
    m = std::max(m, row[j]);
  if (m <= kMasked) {
    std::fill(row, row + len, 0.f);
    return;
  }
  float sum = 0;
  for (int64_t j = 0; j < len; ++j) {
    // Masked entries give exactly 0 (no denormals from exp underflow).
    float e = std::exp(std::max(row[j] - m, -80.f));
    row[j] = row[j] > 0.5f * kMasked ? e : 0.f;
    sum += row[j];
  }
  float inv = 1.f / sum;
  for (int64_t j = 0; j < len; ++j)
    row[j] *= inv;
}

/// Heads [h0, h1) on the calling thread.
static void attendHeads(const float *q, const float *k, const float *v,
                        float *out, float *scores, float *row, int64_t h0,
                        int64_t h1, int64_t len, int64_t dim,
                        const UnfusedMask &mask) {
  float scale = 1.f / std::sqrt(float(dim));
  for (int64_t h = h0; h < h1; ++h) {
    const float *qh = q + h * len * dim, *kh = k + h * len * dim,
                *vh = v + h * len * dim;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, len, len, dim, scale,
                qh, dim, kh, dim, 0.f, scores, len);
    for (int64_t i = 0; i < len; ++i) {
      maskRow(mask, h, i, scores + i * len, row, len);
      softmaxRow(scores + i * len, len);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, len, dim, len, 1.f,
                scores, len, vh, dim, 0.f, out + h * len * dim, dim);
  }
}

void unfusedAttention(const float *q, const float *k, const float *v,
                      float *out, float *scratch, int64_t heads, int64_t len,
                      int64_t dim, int threads, const UnfusedMask &mask) {
  openblas_set_num_threads(1);
  std::vector<std::thread> workers;
  int64_t per = (heads + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    float *scores = scratch + t * (len * len + len);
    int64_t h0 = t * per, h1 = std::min(heads, h0 + per);
    if (t == threads - 1)
      attendHeads(q, k, v, out, scores, scores + len * len, h0, h1, len, dim,
                  mask);
    else
      workers.emplace_back([=, &mask] {
        attendHeads(q, k, v, out, scores, scores + len * len, h0, h1, len, dim,
                    mask);
      });
  }
  for (std::thread &w : workers)
    w.join();
}
