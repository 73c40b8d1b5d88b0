//===- TunerTest.cpp - the tuner's candidates per target ------------------===//
//
// The tile candidates attn-run --tune sweeps (lib/Runtime/Tuner.cpp) for
// named targets, no JIT involved: bf16 attention on an AMX target keeps
// every query block a multiple of AMX's 16-row tiles (a block of 42 rows
// is not computed on AMX: in vdpbf16ps register tiles it took 5x the time
// on an Emerald Rapids core, and there it is now computed in f32, still
// slower than AMX), and attentionOnAmx says when that applies. Which
// targets' bf16 dot products are slower than their FMAs (those compute bf16
// attention that AMX does not take in f32).
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "lib/Runtime/Tuner.h"
#include "lib/Target/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::attn;

namespace {

CpuTarget x86(llvm::StringRef cpu, llvm::StringRef features = "") {
  auto t = CpuTarget::get("x86_64-unknown-linux-gnu", cpu, features);
  if (!t) {
    ADD_FAILURE() << llvm::toString(t.takeError());
    return CpuTarget();
  }
  return *t;
}

bool hasOffTileBlock(const std::vector<TileChoice> &candidates) {
  for (const TileChoice &c : candidates)
    if (c.blockQ % 16 != 0)
      return true;
  return false;
}

TEST(TunerTest, AmxCandidatesKeepWholeTiles) {
  CpuTarget spr = x86("sapphirerapids");
  ASSERT_TRUE(spr.hasAmxBf16());
  std::vector<TileChoice> amx = tileCandidates(spr, 0, 0, /*amxTiles=*/true);
  std::vector<TileChoice> dot = tileCandidates(spr, 0, 0, /*amxTiles=*/false);
  EXPECT_FALSE(hasOffTileBlock(amx));
  // Without AMX tiles the one-row-fewer / -more register tiles are swept,
  // with blocks of whole register tiles (7 x 6 = 42 rows).
  EXPECT_TRUE(hasOffTileBlock(dot));
  EXPECT_LT(amx.size(), dot.size());
  // The heuristic's own choice comes first either way.
  ASSERT_FALSE(amx.empty());
  EXPECT_EQ(amx.front(), (TileChoice{0, 0, 0, 0}));
}

// AVX-512's heuristic takes 6 x 64 register tiles where they fit, so its
// sweep times the two-register 8 x 32 tile explicitly too; AVX2 (no wide
// tile) sweeps its 6 x 16 only at one row fewer.
TEST(TunerTest, WideTileTargetsSweepTheTwoRegisterTile) {
  auto hasTile = [](const std::vector<TileChoice> &candidates, int64_t rows,
                    int64_t cols) {
    for (const TileChoice &c : candidates)
      if (c.registerRows == rows && c.registerCols == cols)
        return true;
    return false;
  };
  CpuTarget v4 = x86("x86-64-v4");
  ASSERT_EQ(v4.wideRegisterTileCols(), 64);
  std::vector<TileChoice> avx512 = tileCandidates(v4, 0, 0, false);
  EXPECT_TRUE(hasTile(avx512, 8, 32));
  EXPECT_TRUE(hasTile(avx512, 7, 32));
  EXPECT_TRUE(hasTile(avx512, 9, 32));
  CpuTarget v3 = x86("x86-64-v3");
  EXPECT_EQ(v3.wideRegisterTileCols(), 0);
  std::vector<TileChoice> avx2 = tileCandidates(v3, 0, 0, false);
  EXPECT_FALSE(hasTile(avx2, 6, 16));
  EXPECT_TRUE(hasTile(avx2, 5, 16));
  // 7 x 16 would not fit 16 registers (2 x 7 + 3 > 16).
  EXPECT_FALSE(hasTile(avx2, 7, 16));
}

TEST(TunerTest, AttentionOnAmx) {
  MLIRContext context;
  context.loadDialect<AttnDialect, func::FuncDialect>();
  const char *source = R"mlir(
    func.func @bf16(%q: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
      %o = call @inner(%q) : (tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
      return %o : tensor<1x2x64x64xbf16>
    }
    func.func private @inner(%q: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
      %o = attn.sdpa %q, %q, %q : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
      return %o : tensor<1x2x64x64xbf16>
    }
    func.func @f32(%q: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
      %o = attn.sdpa %q, %q, %q : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
      return %o : tensor<1x2x64x64xf32>
    }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  auto bf16 = module->lookupSymbol<func::FuncOp>("bf16");
  auto f32 = module->lookupSymbol<func::FuncOp>("f32");
  CpuTarget spr = x86("sapphirerapids");
  // The bf16 attention is in a function @bf16 calls: it counts.
  EXPECT_TRUE(attentionOnAmx(bf16, spr));
  EXPECT_FALSE(attentionOnAmx(f32, spr));
  // Targets without AMX-BF16: Zen 4 (AVX512-BF16 dot products), and
  // Sapphire Rapids with AMX turned off.
  EXPECT_FALSE(attentionOnAmx(bf16, x86("znver4")));
  EXPECT_FALSE(attentionOnAmx(bf16, x86("sapphirerapids", "-amx-tile")));
}

TEST(TunerTest, SlowBf16DotProductsByCpu) {
  // Intel's Xeon cores (Golden Cove and later): vdpbf16ps at half the FMAs'
  // flop rate, measured on Emerald Rapids.
  for (const char *cpu : {"sapphirerapids", "emeraldrapids", "graniterapids",
                          "graniterapids-d"})
    EXPECT_TRUE(x86(cpu).hasSlowBf16DotProduct()) << cpu;
  // Without AMX they still are.
  EXPECT_TRUE(x86("sapphirerapids", "-amx-tile").hasSlowBf16DotProduct());
  // A virtual machine's Sapphire Rapids-class core that LLVM's host
  // detection names by its masked model (`rocketlake`): the Xeon's features
  // tell it, with AMX turned off too.
  EXPECT_TRUE(x86("rocketlake", "+avx512bf16,+avx512fp16,+amx-tile,+amx-bf16")
                  .hasSlowBf16DotProduct());
  EXPECT_TRUE(
      x86("rocketlake", "+avx512bf16,+avx512fp16").hasSlowBf16DotProduct());
  // AVX10 client cores (AVX512-FP16 and BF16, no AMX) are unmeasured.
  ASSERT_TRUE(x86("novalake").hasBf16DotProduct());
  EXPECT_FALSE(x86("novalake").hasSlowBf16DotProduct());
  // Zen 4 and 5 (twice the FMAs' rate), and names that say nothing of the
  // core, keep the dot products; no AVX512-BF16, no dot products at all.
  for (const char *cpu : {"znver4", "znver5"})
    EXPECT_FALSE(x86(cpu).hasSlowBf16DotProduct()) << cpu;
  EXPECT_FALSE(x86("x86-64-v4", "+avx512bf16").hasSlowBf16DotProduct());
  EXPECT_FALSE(x86("sapphirerapids", "-avx512bf16").hasSlowBf16DotProduct());
}

} // namespace
