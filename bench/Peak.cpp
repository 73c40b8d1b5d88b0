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

#include "lib/Runtime/Amx.h"

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
  /// Rounds of one ~0.1 s trial.
  long rounds = 50'000'000;
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

/// AMX-BF16: tdpbf16ps on 16 x 16 f32 accumulator tiles, each product of a
/// 16 x 32 bf16 tile by a 16 x 32 pair tile (16 x 16 x 32 x 2 flops): four
/// independent accumulators (tmm0-3) and four factors (tmm4-7, zero: the
/// unit's speed does not depend on the values), as attn-lower-amx's 2 x 2
/// blocks use them. Tile instructions are inline assembly (the tiles are
/// configured once, which the compiler's tile intrinsics would redo).
double amxBf16Loop(long rounds, float *sink) {
  alignas(64) unsigned char config[64] = {1};
  for (int t = 0; t < 8; ++t) {
    config[16 + 2 * t] = 64; // bytes per row
    config[48 + t] = 16;     // rows
  }
  alignas(64) float out[16 * 16];
  asm volatile("ldtilecfg (%0)\n\t"
               "tilezero %%tmm0\n\ttilezero %%tmm1\n\t"
               "tilezero %%tmm2\n\ttilezero %%tmm3\n\t"
               "tilezero %%tmm4\n\ttilezero %%tmm5\n\t"
               "tilezero %%tmm6\n\ttilezero %%tmm7"
               :
               : "r"(config)
               : "memory");
  auto t0 = Clock::now();
  for (long r = 0; r < rounds; ++r)
    asm volatile("tdpbf16ps %%tmm6, %%tmm4, %%tmm0\n\t"
                 "tdpbf16ps %%tmm7, %%tmm4, %%tmm1\n\t"
                 "tdpbf16ps %%tmm6, %%tmm5, %%tmm2\n\t"
                 "tdpbf16ps %%tmm7, %%tmm5, %%tmm3" ::
                     : "memory");
  double s = secondsSince(t0);
  asm volatile("tilestored %%tmm0, (%0,%1,1)\n\ttilerelease"
               :
               : "r"(out), "r"(64L)
               : "memory");
  *sink = out[0];
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
  const long rounds = probe.rounds;
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

FmaPeak measureAmxBf16Peak(int threads) {
  // The CPU's AMX, then the kernel's permission for the tile data.
  if (!mlir::attn::cpuHasAmxBf16())
    return {};
  if (llvm::Error err = mlir::attn::requestAmxPermission()) {
    llvm::consumeError(std::move(err));
    return {};
  }
  // One round is 64 tile-unit cycles on Sapphire Rapids (4 x 16): 2M rounds
  // are ~0.05 s.
  return measure({amxBf16Loop, 4 * 16 * 16 * 32 * 2, "AMX-BF16", 2'000'000},
                 threads);
}
