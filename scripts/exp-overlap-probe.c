// The softmax's exp next to the contractions' FMAs on AVX2, alone: how much
// of the exp's time the register tiles' FMA stream hides when the exp runs
// in the Q K^T tile's epilogue (on the accumulators, right after their
// reduction, before the next tile starts), against the exp as a pass of
// its own over stored scores (what the tiled attention runs today:
// docs/Rationale.md, "The softmax on AVX2").
//
// Per 6 x 16 tile of scores (12 vectors of 8) the FMA stream does a Q K^T
// tile and a P V tile of 64 reduction steps each on 12 register
// accumulators, 1536 FMAs (dense attention at E = 64: 128 per vector of
// scores). The exp is buildExpOfNonPositive's as attn-lower-vectors leaves
// it on AVX2 (x log2 e, the 1.5 * 2^23 + 127 rounding, a degree-5
// polynomial, the exponent shift, the underflow select), the same in base
// 2 (scores already in log2 e units, as attn-tile makes unmodified ones:
// no multiply), or a variant with the select replaced by a clamp of t at
// -127 before the rounding (2^n is then 0.0 there by itself). The
// accumulators stay in registers (no Q, K or V loads): the FMA stream
// alone runs at the register-only peak.
//
//   cc -O2 -mavx2 -mfma -o /tmp/exp-overlap-probe scripts/exp-overlap-probe.c
//   /tmp/exp-overlap-probe              (one thread, about 3 s)
//
// Prints, per exp form, the contractions' GFLOP/s alone and the time the
// exp adds to them in each arrangement, as a percentage of their time; each
// figure the fastest of 25 interleaved runs. A measurement aid, not part of
// the build or the tests; on a CPU without AVX2 and FMA it says so and
// exits 1.
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define TILES 42 // of 6 x 16 scores: a 252 x 64 block, as a 256-row query tile
#define ROUNDS 1500
static float S[TILES * 96] __attribute__((aligned(64)));
static float P[TILES * 96] __attribute__((aligned(64)));
static float O[21 * 96] __attribute__((aligned(64)));

#define TARGET __attribute__((target("avx2,fma"), always_inline)) static inline

// 2^t p(g) with t = (s - m) log2 e, as buildExpOfNonPositive (t = s - m
// with `base2`); with `clamp` t is clamped at -127 (maxps(c, t) keeps a
// NaN t) instead of the final select: n + 127 = 0 there, so 2^n is +0.0
// and so is the product.
TARGET __m256 expOf(__m256 s, __m256 m, int clamp, int base2) {
  __m256 t = _mm256_sub_ps(s, m);
  if (!base2)
    t = _mm256_mul_ps(t, _mm256_set1_ps(1.44269504f));
  if (clamp)
    t = _mm256_max_ps(_mm256_set1_ps(-127.0f), t);
  __m256 magic = _mm256_set1_ps(12582912.0f + 127.0f);
  __m256 shifted = _mm256_add_ps(t, magic);
  __m256 g = _mm256_sub_ps(t, _mm256_sub_ps(shifted, magic));
  __m256 p = _mm256_set1_ps(1.3264724e-3f);
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(9.6715129e-3f));
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(5.5507338e-2f));
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(2.4022242e-1f));
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(6.9314698e-1f));
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(1.0f));
  __m256 two = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_castps_si256(shifted), 23));
  __m256 e = _mm256_mul_ps(p, two);
  if (clamp)
    return e;
  __m256 tiny = _mm256_cmp_ps(t, _mm256_set1_ps(-126.0f), _CMP_LT_OQ);
  return _mm256_blendv_ps(e, _mm256_setzero_ps(), tiny);
}
TARGET __m256 expSelect(__m256 s, __m256 m) { return expOf(s, m, 0, 0); }
TARGET __m256 expBase2(__m256 s, __m256 m) { return expOf(s, m, 0, 1); }
TARGET __m256 expClamp(__m256 s, __m256 m) { return expOf(s, m, 1, 0); }

// 12 independent FMA chains (the register tile's accumulators, a0..a11);
// the empty asm keeps every chain live and unmerged.
#define FMA12                                                                  \
  do {                                                                         \
    a0 = _mm256_fmadd_ps(a0, x, y);                                            \
    a1 = _mm256_fmadd_ps(a1, x, y);                                            \
    a2 = _mm256_fmadd_ps(a2, x, y);                                            \
    a3 = _mm256_fmadd_ps(a3, x, y);                                            \
    a4 = _mm256_fmadd_ps(a4, x, y);                                            \
    a5 = _mm256_fmadd_ps(a5, x, y);                                            \
    a6 = _mm256_fmadd_ps(a6, x, y);                                            \
    a7 = _mm256_fmadd_ps(a7, x, y);                                            \
    a8 = _mm256_fmadd_ps(a8, x, y);                                            \
    a9 = _mm256_fmadd_ps(a9, x, y);                                            \
    a10 = _mm256_fmadd_ps(a10, x, y);                                          \
    a11 = _mm256_fmadd_ps(a11, x, y);                                          \
    __asm__ volatile(""                                                        \
                     : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4),       \
                       "+x"(a5), "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9),       \
                       "+x"(a10), "+x"(a11));                                  \
  } while (0)

// One register tile: 12 fresh accumulators (6 rows x 2 vectors, as
// attn-vectorize's 6 x 16 AVX2 tile) through 64 reduction steps.
#define TILE                                                                   \
  __m256 a0 = _mm256_set1_ps(0.00f), a1 = _mm256_set1_ps(0.01f),               \
         a2 = _mm256_set1_ps(0.02f), a3 = _mm256_set1_ps(0.03f),               \
         a4 = _mm256_set1_ps(0.04f), a5 = _mm256_set1_ps(0.05f),               \
         a6 = _mm256_set1_ps(0.06f), a7 = _mm256_set1_ps(0.07f),               \
         a8 = _mm256_set1_ps(0.08f), a9 = _mm256_set1_ps(0.09f),               \
         a10 = _mm256_set1_ps(0.10f), a11 = _mm256_set1_ps(0.11f);             \
  for (int k = 0; k < 64; k++)                                                 \
    FMA12;

#define STORE12(F)                                                             \
  do {                                                                         \
    _mm256_store_ps(o + 0, F(a0));                                             \
    _mm256_store_ps(o + 8, F(a1));                                             \
    _mm256_store_ps(o + 16, F(a2));                                            \
    _mm256_store_ps(o + 24, F(a3));                                            \
    _mm256_store_ps(o + 32, F(a4));                                            \
    _mm256_store_ps(o + 40, F(a5));                                            \
    _mm256_store_ps(o + 48, F(a6));                                            \
    _mm256_store_ps(o + 56, F(a7));                                            \
    _mm256_store_ps(o + 64, F(a8));                                            \
    _mm256_store_ps(o + 72, F(a9));                                            \
    _mm256_store_ps(o + 80, F(a10));                                           \
    _mm256_store_ps(o + 88, F(a11));                                           \
  } while (0)
#define PLAIN(v) (v)
#define expSelectOf(v) expSelect((v), m)
#define expBase2Of(v) expBase2((v), m)
#define expClampOf(v) expClamp((v), m)

enum Form { Contractions, SeparatePass, Epilogue };

// Per 12 vectors of scores (one 6 x 16 tile): a Q K^T tile (768 FMAs) and
// a P V tile (768), as dense attention at E = 64. SeparatePass stores the
// scores and runs the exp over them after every 21 tiles (8 KB of scores,
// still in L1: kinder to the pass than the kernel's 64 KB blocks);
// Epilogue stores exp(accumulator) right after the Q K^T tile's reduction.
// Returns seconds.
#define RUN(EXP)                                                               \
  __attribute__((target("avx2,fma"), noinline)) static double run_##EXP(       \
      enum Form form) {                                                        \
    const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-3f),        \
                 m = _mm256_set1_ps(0.5f);                                     \
    double t0 = now();                                                         \
    for (int r = 0; r < ROUNDS; r++) {                                         \
      for (int tile = 0; tile < TILES; tile++) {                               \
        float *o = S + 96 * tile;                                              \
        {                                                                      \
          TILE                                                                 \
          if (form == Epilogue) {                                              \
            o = P + 96 * tile;                                                 \
            STORE12(EXP##Of);                                                  \
          } else {                                                             \
            STORE12(PLAIN);                                                    \
          }                                                                    \
        }                                                                      \
        {                                                                      \
          TILE                                                                 \
          o = O + 96 * (tile % 21);                                            \
          STORE12(PLAIN);                                                      \
        }                                                                      \
        if (form == SeparatePass && tile % 21 == 20)                           \
          for (int i = (tile - 20) * 12; i <= tile * 12 + 11; i++)             \
            _mm256_store_ps(P + 8 * i, EXP(_mm256_load_ps(S + 8 * i), m));     \
      }                                                                        \
      /* P and O are read and S may change: every round computes. */          \
      __asm__ volatile("" ::"r"(P), "r"(S), "r"(O) : "memory");                \
    }                                                                          \
    return now() - t0;                                                         \
  }
RUN(expSelect)
RUN(expBase2)
RUN(expClamp)

int main(void) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    fprintf(stderr, "exp-overlap-probe: this CPU has no AVX2 and FMA\n");
    return 1;
  }
  const double flops = 2.0 * 8 * 2 * 768 * TILES * (double)ROUNDS;
  enum { kForms = 3 };
  const char *names[kForms] = {"select", "base 2", "clamp"};
  double (*const runs[kForms])(enum Form) = {run_expSelect, run_expBase2,
                                             run_expClamp};
  // The fastest of 25 interleaved runs of each form: a VM's neighbours
  // only ever slow a run down.
  double best[kForms][3];
  for (int w = 0; w < kForms; w++)
    for (int f = 0; f < 3; f++)
      best[w][f] = 1e30;
  for (int trial = 0; trial < 25; trial++)
    for (int w = 0; w < kForms; w++)
      for (int f = 0; f < 3; f++) {
        double t = runs[w]((enum Form)f);
        if (t < best[w][f])
          best[w][f] = t;
      }
  for (int w = 0; w < kForms; w++) {
    double fma = best[w][Contractions];
    printf("exp %-14s contractions alone %5.1f GFLOP/s | exp as its own pass "
           "+%5.1f %% | in the Q K^T tile's epilogue +%5.1f %%\n",
           names[w], flops / fma * 1e-9,
           100 * (best[w][SeparatePass] - fma) / fma,
           100 * (best[w][Epilogue] - fma) / fma);
  }
  return P[7] == 12345.0f && O[7] == 12345.0f; // keeps the results live
}
