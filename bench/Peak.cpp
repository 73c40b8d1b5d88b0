//===- Peak.cpp - the machine's measured FMA peak ------------------------===//
//
// One probe per ISA, each compiled for its own target (function attributes,
// not a global -m flag) and chosen at run time with __builtin_cpu_supports:
// enough independent FMA chains in registers to cover two FMA pipes with a
// 4-cycle latency (AVX-512: 16 zmm chains of 32 registers; AVX2: 12 ymm
// chains, which with the two multiplicands fill 14 of 16 registers — 16
// chains would spill); and, where the host has AVX512-BF16, the bf16
// dot-product peak that bf16 attention runs on.
//
//===----------------------------------------------------------------------===//

#include "bench/Peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Flops of one probe round: chains x lanes x 2.
struct Probe {
  double (*loop)(long rounds, float *sink);
  double flopsPerRound;
  const char *isa;
};

__attribute__((target("avx512f"))) double avx512Loop(long rounds,
                                                     float *sink) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i)
    acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  auto t0 = Clock::now();
  for (long r = 0; r < rounds; ++r)
    for (int i = 0; i < 16; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  double s = secondsSince(t0);
  __m512 total = acc[0];
  for (int i = 1; i < 16; ++i)
    total = _mm512_add_ps(total, acc[i]);
  *sink = _mm512_reduce_add_ps(total);
  return s;
}

__attribute__((target("avx2,fma"))) double avx2Loop(long rounds, float *sink) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm256_set1_ps(float(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  auto t0 = Clock::now();
  for (long r = 0; r < rounds; ++r)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  double s = secondsSince(t0);
  __m256 total = acc[0];
  for (int i = 1; i < 12; ++i)
    total = _mm256_add_ps(total, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, total);
  *sink = lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] +
          lanes[6] + lanes[7];
  return s;
}

/// AVX512-BF16: vdpbf16ps, per 32-bit lane two bf16 products added into an
/// f32 accumulator (4 flops per lane). 24 zmm chains: Zen 4 issues two per
/// cycle with a latency of about 6 (16 chains would leave it latency-bound
/// on a core with a longer pipe), and 24 + 2 operands fit 32 registers.
__attribute__((target("avx512f,avx512bf16"))) double
avx512Bf16Loop(long rounds, float *sink) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i)
    acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
  // Pairs (1, 1) and (~1e-7, ~1e-7): the sums stay finite.
  const __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80),
                 b = (__m512bh)_mm512_set1_epi32(0x33d633d6);
  auto t0 = Clock::now();
  for (long r = 0; r < rounds; ++r)
    for (int i = 0; i < 24; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  double s = secondsSince(t0);
  __m512 total = acc[0];
  for (int i = 1; i < 24; ++i)
    total = _mm512_add_ps(total, acc[i]);
  *sink = _mm512_reduce_add_ps(total);
  return s;
}

/// Baseline x86-64: separate multiply and add (2 flops per lane and pair).
double sseLoop(long rounds, float *sink) {
  __m128 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm_set1_ps(float(i) * 1e-3f);
  const __m128 a = _mm_set1_ps(0.999999f), b = _mm_set1_ps(1e-7f);
  auto t0 = Clock::now();
  for (long r = 0; r < rounds; ++r)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm_add_ps(_mm_mul_ps(acc[i], a), b);
  double s = secondsSince(t0);
  __m128 total = acc[0];
  for (int i = 1; i < 12; ++i)
    total = _mm_add_ps(total, acc[i]);
  float lanes[4];
  _mm_storeu_ps(lanes, total);
  *sink = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  return s;
}

Probe hostProbe() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return {avx512Loop, 16 * 16 * 2, "AVX-512"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {avx2Loop, 12 * 8 * 2, "AVX2"};
  return {sseLoop, 12 * 4 * 2, "SSE"};
}

/// One timed trial of `threads` concurrent probe loops.
double trialGflops(const Probe &probe, int threads) {
  const long rounds = 50'000'000;
  std::vector<std::thread> workers;
  std::vector<double> seconds(threads);
  std::vector<float> sinks(threads);
  for (int t = 0; t < threads; ++t)
    workers.emplace_back(
        [&, t] { seconds[t] = probe.loop(rounds, &sinks[t]); });
  double slowest = 0;
  for (int t = 0; t < threads; ++t) {
    workers[t].join();
    slowest = std::max(slowest, seconds[t]);
  }
  return double(threads) * double(rounds) * probe.flopsPerRound / slowest /
         1e9;
}

/// Best of three trials of `probe` on `threads` threads.
FmaPeak measure(const Probe &probe, int threads) {
  // Best of three: a trial that shares its core with anything is slower.
  FmaPeak peak;
  peak.isa = probe.isa;
  for (int trial = 0; trial < 3; ++trial)
    peak.gflops = std::max(peak.gflops, trialGflops(probe, threads));
  return peak;
}
} // namespace

FmaPeak measureFmaPeak(int threads) { return measure(hostProbe(), threads); }

FmaPeak measureBf16DotPeak(int threads) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16"))
    return {};
  return measure({avx512Bf16Loop, 24 * 16 * 4, "AVX512-BF16"}, threads);
}
