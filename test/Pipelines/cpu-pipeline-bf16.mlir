// bf16 attention through attn-cpu-pipeline for named targets (never the
// host's): with AVX512-BF16 (znver4) Q K^T and
// P V are bf16 dot products (vdpbf16ps) and P is rounded two vectors at a
// time with vcvtne2ps2bf16 (attn-lower-vectors; LLVM's own lowering of the
// rounding is vcvtneps2bf16 per vector and a vinsertf64x4 per pair: none
// is left); with AMX as well (sapphirerapids) they are AMX tile
// products (attn-lower-amx: tdpbf16ps on tiles LLVM configures with
// ldtilecfg); without AVX512-BF16 (x86-64-v4, x86-64-v3), with
// bf16-dot-product=false, or on sapphirerapids without AMX (its dot
// products are slower than its FMAs), f32 FMAs.
//
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=znver4" | FileCheck %s --check-prefix=LLVM
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=znver4" | mlir-translate --mlir-to-llvmir | llc -O3 | FileCheck %s --check-prefix=DOT --implicit-check-not=vcvtneps2bf16 --implicit-check-not='vrndscaleps $8'
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=sapphirerapids target-features=-amx-tile" | mlir-translate --mlir-to-llvmir | llc -O3 | FileCheck %s --check-prefix=FMA
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=sapphirerapids" | mlir-translate --mlir-to-llvmir | llc -O3 > %t.amx.s
// RUN: FileCheck %s --check-prefix=AMX < %t.amx.s
// The four accumulators and four factors of a 2 x 2 block fit the eight tile
// registers: no tile is spilled to the stack, in the default 32 x 64 tiles
// (E = 64) nor in 64 x 64 ones.
// RUN: not grep -E "tile(loadd|stored).*%rsp" %t.amx.s
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=sapphirerapids block-q=64 block-k=64" | mlir-translate --mlir-to-llvmir | llc -O3 > %t.amx64.s
// RUN: FileCheck %s --check-prefix=AMX < %t.amx64.s
// RUN: not grep -E "tile(loadd|stored).*%rsp" %t.amx64.s
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=x86-64-v4" | mlir-translate --mlir-to-llvmir | llc -O3 | FileCheck %s --check-prefix=FMA
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=x86-64-v3" | mlir-translate --mlir-to-llvmir | llc -O3 | FileCheck %s --check-prefix=FMA
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=znver4 bf16-dot-product=false" | mlir-translate --mlir-to-llvmir | llc -O3 | FileCheck %s --check-prefix=FMA

// LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"

// DOT-LABEL: sdpa:
// DOT: vcvtne2ps2bf16
// DOT: vdpbf16ps {{.*}}%zmm
// The softmax's exp on AVX-512 with AVX512DQ: the fraction as
// vreduceps (rounding down u = t + 1/2), p 2^floor(u) as vscalefps (masked
// to 0 below 2^-126); no vrndscaleps rounding t to n (the row statistics'
// math.exp keeps MLIR's floor).
// DOT: vreduceps $9
// DOT: vscalefps {{.*}} {%k{{[0-7]}}} {z}
// On AMX no contraction is a vdpbf16ps: the only ones are the row sums of
// P, dot products with ones (two per 64-key row).
// AMX-LABEL: sdpa:
// AMX-NOT: vdpbf16ps
// AMX: ldtilecfg
// AMX-NOT: vdpbf16ps
// The scores' accumulator tiles start from tilezero (their fill is the
// product's own, attn-vectorize), not loaded from a zero-filled buffer.
// AMX: tilezero
// AMX-NOT: vdpbf16ps
// AMX: tileloadd
// AMX-NOT: vdpbf16ps
// AMX: tdpbf16ps %tmm{{[0-7]}}, %tmm{{[0-7]}}, %tmm{{[0-7]}}
// AMX-NOT: vdpbf16ps
// AMX: tilestored
// AMX-NOT: vdpbf16ps
// AMX: vcvtne2ps2bf16
// AMX-NOT: vdpbf16ps
// AMX: vdpbf16ps [[ONES:%zmm[0-9]+]], %zmm{{[0-9]+}}, [[SUM:%zmm[0-9]+]]
// AMX: vdpbf16ps [[ONES]], %zmm{{[0-9]+}}, [[SUM]]
// AMX-NOT: vdpbf16ps
// AMX: tdpbf16ps
// AMX-NOT: vdpbf16ps
// AMX: tilerelease
// AMX-NOT: vdpbf16ps
// FMA-LABEL: sdpa:
// FMA-NOT: vdpbf16ps
// FMA: vfmadd
// FMA-NOT: vdpbf16ps
func.func @sdpa(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}
