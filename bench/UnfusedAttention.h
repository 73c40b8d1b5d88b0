//===- UnfusedAttention.h - the OpenBLAS-unfused peer ------------*- C++
//-*-===//
//
// What PyTorch 1.x runs on a CPU: S = Q K^T (sgemm), the mask and bias
// applied to the materialised L x L scores, a row softmax, O = P V (sgemm).
// Nothing is skipped for masked tiles. A benchmark peer only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BENCH_UNFUSEDATTENTION_H
#define ATTN_BENCH_UNFUSEDATTENTION_H

#include <cstdint>
#include <string>

/// The mask / score modification of one benchmark family (Lq = Lk = L).
struct UnfusedMask {
  enum Kind { dense, causal, local, padding, graph, relativeBias } kind = dense;
  int64_t windowLeft = 0, windowRight = 0;            ///< local
  int64_t kvLength = 0;                               ///< padding
  const int32_t *rowPtr = nullptr, *colIdx = nullptr; ///< graph (CSR)
  const float *relTable = nullptr; ///< relativeBias: [H, 2R+1]
  int64_t relClip = 0;
};

/// q, k, v, out: [H, L, E] (one batch). Heads are split over `threads`
/// threads, each running single-threaded sgemms on its own L x L scratch
/// (`scratch` holds threads * (L*L + L) floats).
void unfusedAttention(const float *q, const float *k, const float *v,
                      float *out, float *scratch, int64_t heads, int64_t len,
                      int64_t dim, int threads, const UnfusedMask &mask);

/// OpenBLAS's kernel name (openblas_get_corename).
std::string openblasCoreName();

#endif // ATTN_BENCH_UNFUSEDATTENTION_H
