//===- AmxTest.cpp - AMX tile instructions against their definition -------===//
//
// The AMX instructions of attn-lower-amx's code (ldtilecfg, tileloadd,
// tilezero, tdpbf16ps, tilestored, tilerelease; sttilecfg), run on this
// host: natively where it has AMX (after the kernel's permission), by the
// runtime's AMX emulator elsewhere. Each result is compared with the
// product computed in double from the same bf16 inputs, as Intel's SDM
// defines it; the inputs are small multiples of 1/8, so every f32 sum is
// exact and the comparison is for equality (whatever order of rounding the
// hardware has: SDM revisions differ there). The operands' registers and
// addressing forms vary (r12 as an index, r13 as a base, disp8 / disp32,
// RIP-relative configuration, tiles 3-5), as the emulator decodes them.
//
//===----------------------------------------------------------------------===//

#if defined(__x86_64__)

#include "lib/Runtime/Amx.h"

#include "gtest/gtest.h"

#include <csignal>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace mlir::attn;

namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1, startRow = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64, "ldtilecfg reads 64 bytes");

/// Native tiles where the kernel grants them, the emulator elsewhere.
void enableTiles() {
  static const bool done = [] {
    bool native = false;
    if (cpuHasAmxBf16()) {
      llvm::Error err = requestAmxPermission();
      native = !err;
      llvm::consumeError(std::move(err));
    }
    if (!native)
      installAmxEmulator();
    return true;
  }();
  (void)done;
}

uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16); // exact for the test's values
}
double fromBf16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Random multiples of 1/8 in [-2, 2] (bf16 holds them exactly).
std::vector<uint16_t> randomBf16(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-16, 16);
  std::vector<uint16_t> v(n);
  for (uint16_t &x : v)
    x = toBf16(dist(rng) / 8.0f);
  return v;
}

/// C (m x n f32, row stride cStride floats) += A (m x 2k bf16, stride
/// aStride) times B (k x 2n bf16 in pairs, stride bStride), or C = A B when
/// `zero`: one tdpbf16ps on tiles configured for exactly these shapes.
void tileProduct(int m, int n, int k, const uint16_t *a, size_t aStride,
                 const uint16_t *b, size_t bStride, float *c, size_t cStride,
                 bool zero) {
  TileConfig cfg;
  cfg.rows[0] = m, cfg.colsb[0] = 4 * k; // A: tmm0
  cfg.rows[1] = k, cfg.colsb[1] = 4 * n; // B: tmm1
  cfg.rows[2] = m, cfg.colsb[2] = 4 * n; // C: tmm2
  size_t aBytes = 2 * aStride, bBytes = 2 * bStride, cBytes = 4 * cStride;
  // The product with C's first instruction `init`: its tilezero or load.
#define ATTN_TILE_PRODUCT(init)                                                \
  asm volatile("ldtilecfg (%[cfg])\n\t" init "\n\t"                          \
               "tileloadd (%[a],%[as],1), %%tmm0\n\t"                          \
               "tileloadd (%[b],%[bs],1), %%tmm1\n\t"                          \
               "tdpbf16ps %%tmm1, %%tmm0, %%tmm2\n\t"                          \
               "tilestored %%tmm2, (%[c],%[cs],1)\n\t"                         \
               "tilerelease"                                                   \
               :                                                               \
               : [cfg] "r"(&cfg), [a] "r"(a), [as] "r"(aBytes), [b] "r"(b),    \
                 [bs] "r"(bBytes), [c] "r"(c), [cs] "r"(cBytes)                \
               : "memory")
  if (zero)
    ATTN_TILE_PRODUCT("tilezero %%tmm2");
  else
    ATTN_TILE_PRODUCT("tileloadd (%[c],%[cs],1), %%tmm2");
#undef ATTN_TILE_PRODUCT
}

/// Checks one product of an m x 2k by 2k x n (pairs) shape, factor and
/// accumulator rows padded past the tile, against the definition in double;
/// memory past each stored row and past the last row must stay untouched.
void checkProduct(int m, int n, int k, bool zero) {
  enableTiles();
  size_t aStride = 2 * k + 8, bStride = 2 * n + 4, cStride = n + 3;
  std::vector<uint16_t> a = randomBf16(m * aStride, 1),
                        b = randomBf16(k * bStride, 2);
  std::vector<float> c(static_cast<size_t>(m + 1) * cStride);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> dist(-64, 64);
  for (float &x : c)
    x = dist(rng) / 4.0f;
  std::vector<float> before = c;
  tileProduct(m, n, k, a.data(), aStride, b.data(), bStride, c.data(),
              cStride, zero);
  for (int i = 0; i <= m; ++i)
    for (int j = 0; j < static_cast<int>(cStride); ++j) {
      size_t at = i * cStride + j;
      if (i == m || j >= n) {
        EXPECT_EQ(c[at], before[at]) << "outside the tile at " << i << ", " << j;
        continue;
      }
      double expected = zero ? 0.0 : before[at];
      for (int p = 0; p < k; ++p)
        for (int e = 0; e < 2; ++e)
          expected += fromBf16(a[i * aStride + 2 * p + e]) *
                      fromBf16(b[p * bStride + 2 * j + e]);
      EXPECT_EQ(c[at], expected) << "at " << i << ", " << j;
    }
}

TEST(AmxTest, FullTiles) { checkProduct(16, 16, 16, /*zero=*/false); }

TEST(AmxTest, FullTilesFromZero) { checkProduct(16, 16, 16, /*zero=*/true); }

TEST(AmxTest, PartialTiles) { checkProduct(5, 12, 6, /*zero=*/false); }

TEST(AmxTest, ConfigReadsBack) {
  enableTiles();
  TileConfig in, out;
  std::memset(&out, 0xff, sizeof(out));
  in.rows[3] = 7, in.colsb[3] = 20;
  in.rows[6] = 16, in.colsb[6] = 64;
  asm volatile("ldtilecfg (%0)\n\tsttilecfg (%1)\n\ttilerelease"
               :
               : "r"(&in), "r"(&out)
               : "memory");
  EXPECT_EQ(std::memcmp(&in, &out, sizeof(in)), 0);
}

/// The configuration RIP-relative (a global), A at base r13 with index r12
/// (REX.X set: r12 is an index there, not "none"), B at rbx + disp32 with
/// index r9, C at r14 - 64 (disp8) with index r15, tiles 3, 4, 5.
extern "C" {
alignas(64) TileConfig attnAmxTestConfig;
}

TEST(AmxTest, UnusualOperands) {
  enableTiles();
  constexpr int m = 16, n = 16, k = 16;
  std::memset(&attnAmxTestConfig, 0, sizeof(attnAmxTestConfig));
  attnAmxTestConfig.palette = 1;
  attnAmxTestConfig.rows[3] = m, attnAmxTestConfig.colsb[3] = 4 * k;
  attnAmxTestConfig.rows[4] = k, attnAmxTestConfig.colsb[4] = 4 * n;
  attnAmxTestConfig.rows[5] = m, attnAmxTestConfig.colsb[5] = 4 * n;
  size_t aStride = 2 * k + 2, bStride = 2 * n, cStride = n + 1;
  std::vector<uint16_t> a = randomBf16(m * aStride, 4),
                        b = randomBf16(k * bStride + 1024, 5);
  std::vector<float> c(m * cStride, 0.5f);
  register const uint16_t *aBase asm("r13") = a.data();
  register size_t aBytes asm("r12") = 2 * aStride;
  register const uint16_t *bBase asm("rbx") = b.data();
  register size_t bBytes asm("r9") = 2 * bStride;
  register float *cBase asm("r14") = c.data() + 16;
  register size_t cBytes asm("r15") = 4 * cStride;
  asm volatile("ldtilecfg attnAmxTestConfig(%%rip)\n\t"
               "tileloadd -64(%[c],%[cs],1), %%tmm5\n\t"
               "tileloadd (%[a],%[as],1), %%tmm3\n\t"
               "tileloadd 2048(%[b],%[bs],1), %%tmm4\n\t"
               "tdpbf16ps %%tmm4, %%tmm3, %%tmm5\n\t"
               "tilestored %%tmm5, -64(%[c],%[cs],1)\n\t"
               "tilerelease"
               :
               : [a] "r"(aBase), [as] "r"(aBytes), [b] "r"(bBase),
                 [bs] "r"(bBytes), [c] "r"(cBase), [cs] "r"(cBytes)
               : "memory");
  const uint16_t *bTile = b.data() + 1024; // 2048 bytes in
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double expected = 0.5;
      for (int p = 0; p < k; ++p)
        for (int e = 0; e < 2; ++e)
          expected += fromBf16(a[i * aStride + 2 * p + e]) *
                      fromBf16(bTile[p * bStride + 2 * j + e]);
      EXPECT_EQ(c[i * cStride + j], expected) << "at " << i << ", " << j;
    }
}

/// Other illegal instructions still end the process with SIGILL.
TEST(AmxDeathTest, OtherIllegalInstructionsStayFatal) {
  enableTiles();
  EXPECT_EXIT(asm volatile("ud2"), ::testing::KilledBySignal(SIGILL), "");
}

} // namespace

#endif // defined(__x86_64__)
