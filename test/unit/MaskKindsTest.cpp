//===- MaskKindsTest.cpp - mask definitions against the oracle ------------===//
//
// Every positional mask kind's definition (dialect/MaskKinds.cpp), evaluated
// on integers, against the C++ oracle's independent predicate
// (lib/Runtime/Reference.cpp): the element predicate agrees everywhere; the
// key span holds every allowed key; a tile declared full has every element
// allowed, and for the window kinds every fully allowed tile is declared
// full (the classification is exact, so no tile pays for a mask it does not
// need). Exhaustive over small positions, for many parameter choices.
//
//===----------------------------------------------------------------------===//

#include "dialect/MaskKinds.h"
#include "lib/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr int64_t kLo = -12, kHi = 40; // query positions and keys tried

/// A valid parameter set for `kind` (its signature), random values.
MaskParams randomParams(MaskKind kind, std::mt19937 &rng) {
  std::uniform_int_distribution<int64_t> window(0, 20), dil(1, 5), coin(0, 1);
  MaskParams p;
  p.kind = kind;
  switch (kind) {
  case MaskKind::local:
    p.set("window_left", window(rng));
    p.set("window_right", window(rng));
    break;
  case MaskKind::causal_local:
    p.set("window_left", window(rng));
    if (coin(rng))
      p.set("window_right", window(rng));
    break;
  case MaskKind::dilated:
    p.set("window_left", window(rng));
    p.set("window_right", window(rng));
    p.set("dilation", dil(rng));
    break;
  default:
    break;
  }
  return p;
}

reference::MaskArgs oracleArgs(const MaskParams &p) {
  reference::MaskArgs m;
  m.mask = stringifyMaskKind(p.kind).str();
  for (StringRef name : maskParameterNames())
    if (std::optional<int64_t> v = p.get(name))
      m.maskParams[name.str()] = *v;
  return m;
}

std::vector<MaskKind> positionalKinds() {
  std::vector<MaskKind> kinds;
  for (uint32_t k = 0; k <= getMaxEnumValForMaskKind(); ++k)
    if (isPositionalMask(static_cast<MaskKind>(k)))
      kinds.push_back(static_cast<MaskKind>(k));
  return kinds;
}

TEST(MaskKinds, EveryKindHasAValidSignatureAndTheOracleKnowsIt) {
  std::mt19937 rng(1);
  for (MaskKind kind : positionalKinds()) {
    MaskParams p = randomParams(kind, rng);
    MLIRContext ctx;
    bool ok = succeeded(verifyMaskParams(p, [&] {
      return emitError(UnknownLoc::get(&ctx));
    }));
    EXPECT_TRUE(ok) << stringifyMaskKind(kind).str();
    // Aborts the test binary if the oracle lacks the kind.
    (void)reference::isAllowed(oracleArgs(p), 0, 0, 0, 0);
  }
}

TEST(MaskKinds, PredicateSpanAndFullTilesAgreeWithTheOracle) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> pos(kLo, kHi), len(0, 9);
  for (MaskKind kind : positionalKinds()) {
    for (int trial = 0; trial < 40; ++trial) {
      MaskParams p = randomParams(kind, rng);
      reference::MaskArgs oracle = oracleArgs(p);
      std::string what = stringifyMaskKind(kind).str() + " trial " +
                         std::to_string(trial);
      for (int64_t ia = kLo; ia <= kHi; ++ia)
        for (int64_t j = 0; j <= kHi; ++j)
          ASSERT_EQ(maskAllowed(p, ia, j),
                    reference::isAllowed(oracle, 0, 0, ia, j))
              << what << " ia " << ia << " j " << j;

      for (int rect = 0; rect < 50; ++rect) {
        int64_t iaLo = pos(rng), iaHi = iaLo + len(rng);
        int64_t jLo = std::max<int64_t>(0, pos(rng)), jHi = jLo + len(rng);
        IntKeySpan span = maskKeySpan(p, iaLo, iaHi);
        bool allAllowed = true;
        for (int64_t ia = iaLo; ia <= iaHi; ++ia) {
          for (int64_t j = 0; j <= kHi + 20; ++j) {
            if (!reference::isAllowed(oracle, 0, 0, ia, j))
              continue;
            if (span.first)
              ASSERT_GE(j, *span.first) << what << " span of " << iaLo;
            if (span.last)
              ASSERT_LE(j, *span.last) << what << " span of " << iaLo;
          }
          for (int64_t j = jLo; j <= jHi; ++j)
            allAllowed &= reference::isAllowed(oracle, 0, 0, ia, j);
        }
        bool full = maskFull(p, iaLo, iaHi, jLo, jHi);
        if (full)
          ASSERT_TRUE(allAllowed) << what << " declared full wrongly";
        bool exact = kind != MaskKind::dilated || *p.get("dilation") == 1;
        if (exact)
          ASSERT_EQ(full, allAllowed)
              << what << " rows " << iaLo << ".." << iaHi << " keys " << jLo
              << ".." << jHi;
      }
    }
  }
}

TEST(MaskKinds, HugeWindowsReachEveryKeyWithoutWrapping) {
  MaskParams p;
  p.kind = MaskKind::local;
  p.set("window_left", std::numeric_limits<int64_t>::max() - 1);
  p.set("window_right", std::numeric_limits<int64_t>::max() - 1);
  EXPECT_TRUE(maskAllowed(p, 5, 0));
  EXPECT_TRUE(maskAllowed(p, -5, 1000));
  EXPECT_TRUE(maskFull(p, -100, 100, 0, 1000));
}

} // namespace
