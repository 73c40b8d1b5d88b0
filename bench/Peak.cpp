//===- Peak.cpp - the machine's measured FMA peak ------------------------===//
//
// Compiled with AVX-512: 16 independent zmm FMA chains (enough to cover two
// FMA pipes with a 4-cycle latency), timed over a fixed number of rounds.
//
//===----------------------------------------------------------------------===//

#include "bench/Peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

static double fmaLoopSeconds(long rounds, float *sink) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i)
    acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  auto t0 = std::chrono::steady_clock::now();
  for (long r = 0; r < rounds; ++r)
    for (int i = 0; i < 16; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  __m512 total = acc[0];
  for (int i = 1; i < 16; ++i)
    total = _mm512_add_ps(total, acc[i]);
  *sink = _mm512_reduce_add_ps(total);
  return s;
}

/// One timed trial of `threads` concurrent FMA loops.
static double trialGflops(int threads) {
  const long rounds = 50'000'000; // 16 * 16 * 2 flops per round
  std::vector<std::thread> workers;
  std::vector<double> seconds(threads);
  std::vector<float> sinks(threads);
  for (int t = 0; t < threads; ++t)
    workers.emplace_back(
        [&, t] { seconds[t] = fmaLoopSeconds(rounds, &sinks[t]); });
  double slowest = 0;
  for (int t = 0; t < threads; ++t) {
    workers[t].join();
    slowest = std::max(slowest, seconds[t]);
  }
  return double(threads) * double(rounds) * 16 * 16 * 2 / slowest / 1e9;
}

double measureFmaPeakGflops(int threads) {
  // Best of three: a trial that shares its core with anything is slower.
  double best = 0;
  for (int trial = 0; trial < 3; ++trial)
    best = std::max(best, trialGflops(threads));
  return best;
}
