// The register tiles of an f32 contraction on AVX-512, alone: each tile
// shape computes a 64 x 64 x 64 product from L1-resident operands (rows x
// 16*V accumulators, V vector loads and `rows` broadcasts per reduction
// step, as attn-vectorize's tiles do) next to an FMA probe that keeps 16
// accumulators in registers, and prints GFLOP/s and the fraction of the
// probe. docs/Design.md's target table cites it (6 x 64 against 8 x 32).
//
//   clang -O3 -mavx512f -mfma -o /tmp/register-tile-probe scripts/register-tile-probe.c
//   /tmp/register-tile-probe            (one thread; three rounds)
//
// A measurement aid, not part of the build or the tests; on a CPU without
// AVX-512 it says so and exits 1.
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static float A[64 * 64] __attribute__((aligned(64)));
static float B[64 * 64] __attribute__((aligned(64)));
static float C[64 * 64] __attribute__((aligned(64)));

// One R x (16 CV) tile of C = A B over a reduction of 64: A row-major
// (broadcast), B row-major (vector loads), C stored once.
#define TILE(R, CV)                                                            \
  __attribute__((target("avx512f,fma"))) static void tile##R##x##CV(           \
      const float *a, const float *b, float *c) {                              \
    __m512 acc[R][CV];                                                         \
    for (int r = 0; r < R; r++)                                                \
      for (int j = 0; j < CV; j++)                                             \
        acc[r][j] = _mm512_setzero_ps();                                       \
    for (int k = 0; k < 64; k++) {                                             \
      __m512 bv[CV];                                                           \
      for (int j = 0; j < CV; j++)                                             \
        bv[j] = _mm512_load_ps(b + k * 64 + 16 * j);                           \
      for (int r = 0; r < R; r++) {                                            \
        __m512 x = _mm512_set1_ps(a[r * 64 + k]);                              \
        for (int j = 0; j < CV; j++)                                           \
          acc[r][j] = _mm512_fmadd_ps(x, bv[j], acc[r][j]);                    \
      }                                                                        \
    }                                                                          \
    for (int r = 0; r < R; r++)                                                \
      for (int j = 0; j < CV; j++)                                             \
        _mm512_store_ps(c + r * 64 + 16 * j, acc[r][j]);                       \
  }
TILE(8, 2) TILE(12, 2) TILE(14, 2) TILE(4, 4) TILE(5, 4) TILE(6, 4)

// 16 independent FMA chains in registers: the peak the tiles are compared
// with (the probe of bench/Peak.cpp has the same shape).
__attribute__((target("avx512f,fma"))) static double probe(long n) {
  __m512 a[16];
  for (int i = 0; i < 16; i++)
    a[i] = _mm512_set1_ps(i * 1e-3f);
  __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-6f);
  double t = now();
  for (long i = 0; i < n; i++)
    for (int j = 0; j < 16; j++)
      a[j] = _mm512_fmadd_ps(a[j], x, y);
  t = now() - t;
  float s = 0;
  for (int i = 0; i < 16; i++)
    s += _mm512_reduce_add_ps(a[i]);
  if (s == 1234.5f)
    puts("");
  return n * 16.0 * 32 / t / 1e9;
}

typedef void (*TileFn)(const float *, const float *, float *);

// GFLOP/s of `fn` over the largest multiple of `rows` rows in 64.
static double timeTile(TileFn fn, int rows, int cols) {
  const int reps = 40000;
  int covered = 64 / rows * rows;
  double t = now();
  for (int n = 0; n < reps; n++)
    for (int r0 = 0; r0 < covered; r0 += rows)
      for (int c0 = 0; c0 < 64; c0 += cols)
        fn(A + r0 * 64, B + c0, C + r0 * 64 + c0);
  t = now() - t;
  return reps * (double)covered * 64 * 64 * 2 / t / 1e9;
}

int main(void) {
  if (!__builtin_cpu_supports("avx512f")) {
    fprintf(stderr, "register-tile-probe: this CPU has no AVX-512\n");
    return 1;
  }
  for (int i = 0; i < 64 * 64; i++) {
    A[i] = rand() / (float)RAND_MAX;
    B[i] = rand() / (float)RAND_MAX;
  }
  struct {
    const char *name;
    TileFn fn;
    int rows, cols;
  } tiles[] = {{"8 x 32", tile8x2, 8, 32},   {"12 x 32", tile12x2, 12, 32},
               {"14 x 32", tile14x2, 14, 32}, {"4 x 64", tile4x4, 4, 64},
               {"5 x 64", tile5x4, 5, 64},    {"6 x 64", tile6x4, 6, 64}};
  for (int round = 1; round <= 3; round++) {
    double peak = probe(200000000);
    printf("round %d: FMA probe %.1f GFLOP/s\n", round, peak);
    for (unsigned i = 0; i < sizeof(tiles) / sizeof(tiles[0]); i++) {
      double g = timeTile(tiles[i].fn, tiles[i].rows, tiles[i].cols);
      printf("  %-8s %6.1f GFLOP/s  %3.0f %% of the probe\n", tiles[i].name, g,
             100 * g / peak);
    }
  }
  return 0;
}
