//===- CpuTarget.h - the CPU a module is compiled for -----------*- C++ -*-===//
//
// The CPU target of the CPU pipeline, chosen once (the host by default, or a
// triple / CPU name / feature list like llc's -mtriple, -mcpu and -mattr),
// recorded in the IR (`target_cpu` and `target_features` on every function,
// `llvm.target_triple` on the module) and read back from there by every CPU
// lowering: the vector width and register count that register tiles, block
// sizes and vector widths are derived from. The JIT, `--emit=asm|obj`
// and the C header all take the target from the same attributes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TARGET_CPUTARGET_H
#define ATTN_LIB_TARGET_CPUTARGET_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace mlir::attn {

/// A resolved CPU target and what the lowerings derive from it.
struct CpuTarget {
  /// LLVM target triple, e.g. `x86_64-unknown-linux-gnu`, `aarch64-linux-gnu`.
  std::string triple;
  /// LLVM CPU name, e.g. `znver3`, `x86-64-v3`, `sapphirerapids`,
  /// `neoverse-n1`.
  std::string cpu;
  /// Features that differ from the CPU's own set, as llc's -mattr
  /// (`+avx512f,-avx512vl`); empty when the CPU name says it all.
  std::string features;

  /// The widest vector register the lowerings use, in bits, and how many
  /// there are: AVX-512 512 x 32, AVX2 256 x 16, SSE 128 x 16, NEON 128 x 32.
  int64_t vectorBits = 128;
  int64_t vectorRegisters = 16;
  /// Whether the target has LLVM feature `name` (e.g. "avx512bf16").
  bool hasFeature(llvm::StringRef name) const;

  /// Whether bf16 pair dot products with f32 accumulation (AVX512-BF16's
  /// `vdpbf16ps`) and f32 -> bf16 rounding (`vcvtneps2bf16`) are available
  /// on every vector width (AVX512-BF16 with AVX512-VL): Zen 4 and later,
  /// Cooper Lake, Sapphire Rapids and later.
  bool hasBf16DotProduct() const {
    return vectorBits == 512 && hasFeature("avx512bf16") &&
           hasFeature("avx512vl");
  }
  /// Whether bf16 contractions run on AMX tiles (`tdpbf16ps`, attn-lower-amx):
  /// AMX-TILE and AMX-BF16 on top of the bf16 dot products (the softmax
  /// between the tile products and attn-tile's pair packing use those):
  /// Sapphire Rapids and later.
  bool hasAmxBf16() const {
    return hasBf16DotProduct() && hasFeature("amx-tile") &&
           hasFeature("amx-bf16");
  }
  /// Whether this CPU's bf16 dot products (`vdpbf16ps`) have a lower flop
  /// rate than its f32 FMAs, so that bf16 attention whose products AMX tiles
  /// do not take is faster computed in f32. By CPU name, as LLVM's
  /// scheduling models do not tell it: Intel's Golden Cove-derived Xeon
  /// cores (`sapphirerapids`, `emeraldrapids`, `graniterapids`,
  /// `graniterapids-d`; measured on Emerald Rapids: 83 GFLOP/s per core for
  /// `vdpbf16ps` against 173 for FMAs), and any CPU name with AMX, or with
  /// AVX512-FP16 but no AVX10 (the features of these Xeons: a virtual
  /// machine that reports such a core under another model, LLVM's
  /// `rocketlake`, 123 against 246). Zen 4's have twice the FMAs' rate;
  /// other names (generic `x86-64-v4`, Cooper Lake, AVX10 client cores,
  /// unmeasured) keep the dot products.
  bool hasSlowBf16DotProduct() const;
  /// f32 elements per vector register.
  int64_t f32Lanes() const { return vectorBits / 32; }
  /// The register tile of a contraction (attn-vectorize): two vector
  /// registers wide, and as many rows as leave registers for the two
  /// right-hand-side vectors and one broadcast (`2 rows + 3 <= registers`,
  /// at most 8): AVX-512 8 x 32, AVX2 6 x 16, NEON 8 x 8.
  int64_t registerTileRows() const {
    return std::clamp<int64_t>(maxRegisterTileRows(), 1, 8);
  }
  /// The most rows a two-register-wide tile can have and still fit.
  int64_t maxRegisterTileRows() const { return (vectorRegisters - 3) / 2; }
  int64_t registerTileCols() const { return 2 * f32Lanes(); }
  /// Columns of the wide register tile of an f32 contraction whose columns
  /// are a multiple of them: four zmm registers on AVX-512 (32 registers),
  /// 0 on other targets (none). With 6 rows (`wideRegisterTileRows`) its
  /// 24 accumulators take 10 loads (6 broadcasts, 4 vectors) per 24 FMAs
  /// where 8 x 32 takes 10 per 16: a C microbenchmark of the tiles on an
  /// L1-resident 64-deep reduction (scripts/register-tile-probe.c) ran
  /// 6 x 64 at a median 84 % of the FMA probe and 8 x 32 at 80 % on a
  /// Sapphire Rapids-class Xeon (docs/Design.md).
  int64_t wideRegisterTileCols() const {
    return vectorBits == 512 && vectorRegisters >= 32 ? 4 * f32Lanes() : 0;
  }
  /// Rows of the wide register tile: as many as leave registers for its
  /// four right-hand-side vectors and one broadcast (`4 rows + 5 <=
  /// registers`): 6 on AVX-512.
  int64_t wideRegisterTileRows() const { return (vectorRegisters - 5) / 4; }
  /// f32 elements per vector of elementwise code (attn-vectorize): an
  /// eighth of the register file, so that the temporaries of a polynomial
  /// exp stay in registers: 64 on AVX-512, 16 on AVX2 and NEON.
  int64_t elementwiseWidth() const {
    return std::max<int64_t>(f32Lanes(), f32Lanes() * vectorRegisters / 8);
  }
  /// Whether `other` is the same machine: triple, CPU name and enabled
  /// features (however the feature list was spelt).
  bool sameTarget(const CpuTarget &other) const {
    return triple == other.triple && cpu == other.cpu &&
           enabled == other.enabled;
  }
  /// `AVX-512` (`AVX-512 + BF16` with bf16 dot products, `AVX-512 + BF16 +
  /// AMX` with AMX tile products as well), `AVX2`, `SSE`,
  /// `NEON` or `scalar`: the vector ISA the lowerings target.
  llvm::StringRef isaName() const { return isa; }

  /// Resolves `cpu` (`host`, `native` or empty: this machine's CPU name and
  /// features) and `features` for `triple` (empty: the host's). Errors name
  /// an unknown triple, CPU or feature.
  static llvm::Expected<CpuTarget> get(llvm::StringRef triple,
                                       llvm::StringRef cpu,
                                       llvm::StringRef features);
  /// The machine this process runs on.
  static const CpuTarget &host();

  /// Succeeds when code for this target runs on this machine; otherwise says
  /// which features the host lacks (the JIT would die with SIGILL). With
  /// `amxEmulated` (the runtime's AMX emulator is installed) the AMX features
  /// need not be the host's.
  llvm::Error checkRunsOnHost(bool amxEmulated = false) const;

  /// An LLVM TargetMachine for this target at -O3 (position-independent
  /// code when `pic`), to emit assembly or objects.
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
  createTargetMachine(bool pic) const;

private:
  std::string isa = "scalar";
  /// Enabled features of this target, by LLVM name.
  std::vector<std::string> enabled;
};

/// Records `target` where none is recorded yet: `llvm.target_triple` on
/// `module`, `target_cpu` / `target_features` on every func.func with a body
/// and without a `target_cpu` (what a tool or the IR already chose wins;
/// declarations have no code to compile).
void setCpuTarget(Operation *module, const CpuTarget &target);

/// The target recorded on `op` or its enclosing function (func.func or
/// llvm.func) and module (for a module: on its first function with a body
/// that records one); the host when none is recorded. Unresolvable recorded targets are reported at
/// `op` and give the host.
const CpuTarget &getCpuTarget(Operation *op);

/// Succeeds when LLVM's NVPTX backend knows `chip` (`sm_80`, `sm_90a`) and
/// it is at least sm_70 (the kernels' warp shuffles and barriers); else one
/// error naming it (an unknown chip would abort LLVM's code generator).
llvm::Error checkNvptxChip(llvm::StringRef chip);

/// The number of an NVIDIA chip name: 80 for `sm_80`, 90 for `sm_90a`; 0
/// when `chip` is not `sm_` followed by digits.
unsigned nvptxChipVersion(llvm::StringRef chip);

} // namespace mlir::attn

#endif // ATTN_LIB_TARGET_CPUTARGET_H
