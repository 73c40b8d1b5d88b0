// Winograd's inner product on AVX2 against the plain FMA register tile: can
// the FADD pipes raise an f32 contraction past the FMA peak?
//
// x . y = sum_j (x_2j + y_2j+1)(x_2j+1 + y_2j) - sum_j x_2j x_2j+1
//                                               - sum_j y_2j y_2j+1
// takes one FMA and two adds per pair of reduction steps and output vector
// instead of two FMAs (the two correction sums are once per row and column,
// O(n^2) work). On a core with two FMA pipes and two FADD pipes beside them
// (AMD Zen 3) the adds could run beside the FMAs: with some adds as FMAs by
// 1.0, three ops per pair over four pipes instead of two over two.
//
// Timed here (one thread, a 64-deep reduction of L1-resident operands, 48
// rows x 16 columns): the 6 x 16 FMA tile (12 accumulators, 6 broadcasts
// and 2 loads per step) and the Winograd tile of ROWS (2, 3 or 4) x 16, its
// second add as `vaddps` or as an FMA by an opaque 1.0 (LLVM would fold a
// visible one back to an add). The correction sums are left out (they only
// cost the Winograd form more). Useful GFLOP/s = 2 M N K / time.
//
//   gcc -O3 -mavx2 -mfma -DROWS=3 -o /tmp/winograd-probe scripts/winograd-probe.c
//   /tmp/winograd-probe              (one thread, about 2 s)
//
// Measured on Zen 3 (thirty-second session, three rounds; docs/Rationale.md,
// "Dense f32 at E = 128"): the FMA tile 93-95 GFLOP/s in quiet rounds, the
// Winograd tile at best even with it (GCC, 3 x 16: 92-99 against 93-94 in
// the same runs), 37-85 in every other shape and with clang. A measurement
// aid, not part of the build or the tests.
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#ifndef ROWS
#define ROWS 3
#endif
#define K 64
#define N 16
#define M 48
#define REPS 20000

static float A[M * K] __attribute__((aligned(64)));
static float B[K * N] __attribute__((aligned(64)));
static float C[M * N] __attribute__((aligned(64)));

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// C = A B by 6 x 16 register tiles.
__attribute__((noinline)) static void fmaTile(void) {
  for (int r = 0; r < REPS; ++r)
    for (int i0 = 0; i0 < M; i0 += 6) {
      __m256 c[6][2];
      for (int i = 0; i < 6; ++i)
        c[i][0] = c[i][1] = _mm256_setzero_ps();
      for (int k = 0; k < K; ++k) {
        __m256 b0 = _mm256_load_ps(B + k * N), b1 = _mm256_load_ps(B + k * N + 8);
        for (int i = 0; i < 6; ++i) {
          __m256 a = _mm256_broadcast_ss(A + (i0 + i) * K + k);
          c[i][0] = _mm256_fmadd_ps(a, b0, c[i][0]);
          c[i][1] = _mm256_fmadd_ps(a, b1, c[i][1]);
        }
      }
      for (int i = 0; i < 6; ++i) {
        _mm256_store_ps(C + (i0 + i) * N, c[i][0]);
        _mm256_store_ps(C + (i0 + i) * N + 8, c[i][1]);
      }
    }
}

// The sum of (a_2j + b_2j+1)(a_2j+1 + b_2j) by ROWS x 16 register tiles.
__attribute__((noinline)) static void winogradTile(int addAsFma) {
  __m256 one = _mm256_set1_ps(1.0f);
  __asm__("" : "+x"(one));
  for (int r = 0; r < REPS; ++r)
    for (int i0 = 0; i0 + ROWS <= M; i0 += ROWS) {
      __m256 c[ROWS][2];
      for (int i = 0; i < ROWS; ++i)
        c[i][0] = c[i][1] = _mm256_setzero_ps();
      for (int k = 0; k < K; k += 2) {
        __m256 b00 = _mm256_load_ps(B + k * N), b01 = _mm256_load_ps(B + k * N + 8);
        __m256 b10 = _mm256_load_ps(B + (k + 1) * N),
               b11 = _mm256_load_ps(B + (k + 1) * N + 8);
        for (int i = 0; i < ROWS; ++i) {
          __m256 a0 = _mm256_broadcast_ss(A + (i0 + i) * K + k),
                 a1 = _mm256_broadcast_ss(A + (i0 + i) * K + k + 1);
          __m256 t0 = _mm256_add_ps(a0, b10), t1 = _mm256_add_ps(a0, b11);
          __m256 u0 = addAsFma ? _mm256_fmadd_ps(b00, one, a1) : _mm256_add_ps(a1, b00);
          __m256 u1 = addAsFma ? _mm256_fmadd_ps(b01, one, a1) : _mm256_add_ps(a1, b01);
          c[i][0] = _mm256_fmadd_ps(t0, u0, c[i][0]);
          c[i][1] = _mm256_fmadd_ps(t1, u1, c[i][1]);
        }
      }
      for (int i = 0; i < ROWS; ++i) {
        _mm256_store_ps(C + (i0 + i) * N, c[i][0]);
        _mm256_store_ps(C + (i0 + i) * N + 8, c[i][1]);
      }
    }
}

int main(void) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    fprintf(stderr, "winograd-probe: this CPU has no AVX2 + FMA\n");
    return 1;
  }
  for (int i = 0; i < M * K; ++i)
    A[i] = (i % 7) * 0.1f;
  for (int i = 0; i < K * N; ++i)
    B[i] = (i % 5) * 0.1f;
  double best[3] = {1e30, 1e30, 1e30};
  for (int round = 0; round < 5; ++round) {
    double t = now();
    fmaTile();
    double d = now() - t;
    best[0] = d < best[0] ? d : best[0];
    for (int v = 0; v < 2; ++v) {
      t = now();
      winogradTile(v);
      d = now() - t;
      best[1 + v] = d < best[1 + v] ? d : best[1 + v];
    }
  }
  float sum = 0;
  for (int i = 0; i < M * N; ++i)
    sum += C[i];
  double flops = 2.0 * M * N * K * REPS;
  double winogradFlops = 2.0 * (M / ROWS * ROWS) * N * K * REPS;
  printf("useful GFLOP/s, fastest of 5 (checksum %g):\n", sum);
  printf("  FMA tile 6 x 16:          %.1f\n", flops / best[0] * 1e-9);
  printf("  Winograd %d x 16, vaddps:  %.1f\n", ROWS, winogradFlops / best[1] * 1e-9);
  printf("  Winograd %d x 16, FMA x 1: %.1f\n", ROWS, winogradFlops / best[2] * 1e-9);
  return 0;
}
