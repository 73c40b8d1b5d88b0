//===- Peak.h - the machine's measured FMA peak -----------------*- C++ -*-===//

#ifndef ATTN_BENCH_PEAK_H
#define ATTN_BENCH_PEAK_H

/// The f32 FMA peak measured on `threads` threads (one per core).
struct FmaPeak {
  double gflops = 0;
  /// The vector ISA the probe ran: "AVX-512" (16 zmm chains), "AVX2" (12 ymm
  /// chains: a 16-register file holds 12 accumulators and the two
  /// multiplicands), or "SSE" (x86 without AVX2/FMA, mul + add).
  const char *isa = "";
};

/// Best of three trials of ~0.1 s of independent FMA chains in registers,
/// with the widest ISA this CPU has (chosen at run time via cpuid, so the
/// binary never executes an instruction the host lacks).
FmaPeak measureFmaPeak(int threads);

/// The bf16 dot-product peak (AVX512-BF16's vdpbf16ps: 24 zmm chains, 4 flops
/// per f32 lane), measured like the FMA peak; 0 GFLOP/s where the host lacks
/// AVX512-BF16. bf16 attention on such hosts runs on these dot products.
FmaPeak measureBf16DotPeak(int threads);

/// The AMX bf16 tile-product peak (tdpbf16ps on four accumulator tiles),
/// measured like the FMA peak; 0 GFLOP/s where the host lacks AMX-BF16 or
/// the kernel refuses the tile data. bf16 attention on such hosts runs on
/// AMX tiles (attn-lower-amx).
FmaPeak measureAmxBf16Peak(int threads);

#endif // ATTN_BENCH_PEAK_H
