//===- Peak.h - the machine's measured FMA peak ------------------*- C++
//-*-===//

#ifndef ATTN_BENCH_PEAK_H
#define ATTN_BENCH_PEAK_H

/// f32 GFLOP/s of an AVX-512 FMA loop on `threads` threads (one per core),
/// best of three trials of ~0.1 s.
double measureFmaPeakGflops(int threads);

#endif // ATTN_BENCH_PEAK_H
