//===- ReferenceTest.cpp - the C++ oracle against hand-computed answers ---===//
//
// The reference kernels are the oracle of every JIT test; these cases check
// the oracle itself on inputs whose answers follow from the definitions.
//
//===----------------------------------------------------------------------===//

#include "lib/Runtime/Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mlir::attn;
using namespace mlir::attn::reference;

namespace {

HostTensor make(llvm::ArrayRef<int64_t> shape,
                std::initializer_list<double> values) {
  HostTensor t(DType::f32, shape);
  int64_t i = 0;
  for (double v : values)
    t.setDouble(i++, v);
  return t;
}

HostTensor makeInt(llvm::ArrayRef<int64_t> shape,
                   std::initializer_list<int64_t> values) {
  HostTensor t(DType::i32, shape);
  int64_t i = 0;
  for (int64_t v : values)
    t.setInt(i++, v);
  return t;
}

TEST(ReferenceSdpa, DenseTwoKeysIsTheSoftmaxWeightedAverage) {
  // q = [1, 0], keys e0 and e1, scale 1: weights softmax([1, 0]).
  HostTensor q = make({1, 1, 1, 2}, {1, 0});
  HostTensor k = make({1, 1, 2, 2}, {1, 0, 0, 1});
  HostTensor v = make({1, 1, 2, 2}, {1, 2, 3, 4});
  HostTensor out(DType::f32, {1, 1, 1, 2}), lse(DType::f32, {1, 1, 1});
  MaskArgs m;
  m.scale = 1.0;
  sdpa(q, k, v, m, out, &lse);
  double w0 = std::exp(1.0) / (std::exp(1.0) + 1.0), w1 = 1.0 - w0;
  EXPECT_NEAR(out.getDouble(0), w0 * 1 + w1 * 3, 1e-6);
  EXPECT_NEAR(out.getDouble(1), w0 * 2 + w1 * 4, 1e-6);
  EXPECT_NEAR(lse.getDouble(0), std::log(std::exp(1.0) + 1.0), 1e-6);
}

TEST(ReferenceSdpa, DefaultScaleIsInverseSqrtOfHeadDim) {
  // E = 4, q . k0 = 4, q . k1 = 0: weights softmax([4/2, 0]).
  HostTensor q = make({1, 1, 1, 4}, {1, 1, 1, 1});
  HostTensor k = make({1, 1, 2, 4}, {1, 1, 1, 1, 0, 0, 0, 0});
  HostTensor v = make({1, 1, 2, 1}, {1, 0});
  HostTensor out(DType::f32, {1, 1, 1, 1});
  sdpa(q, k, v, MaskArgs(), out, nullptr);
  EXPECT_NEAR(out.getDouble(0), std::exp(2.0) / (std::exp(2.0) + 1.0), 1e-6);
}

TEST(ReferenceSdpa, CausalIsBottomRightAlignedAndMaskedRowsAreZero) {
  // Lq = 3 > Lk = 2: row i sees keys j <= i - 1, so row 0 sees nothing.
  HostTensor q = make({1, 1, 3, 1}, {1, 1, 1});
  HostTensor k = make({1, 1, 2, 1}, {0, 0});
  HostTensor v = make({1, 1, 2, 1}, {10, 20});
  HostTensor out(DType::f32, {1, 1, 3, 1}), lse(DType::f32, {1, 1, 3});
  MaskArgs m;
  m.mask = "causal";
  sdpa(q, k, v, m, out, &lse);
  EXPECT_EQ(out.getDouble(0), 0.0);
  EXPECT_EQ(lse.getDouble(0), -std::numeric_limits<double>::infinity());
  EXPECT_NEAR(out.getDouble(1), 10.0, 1e-6); // only key 0
  EXPECT_NEAR(out.getDouble(2), 15.0, 1e-6); // keys 0 and 1, equal scores
  EXPECT_NEAR(lse.getDouble(2), std::log(2.0), 1e-6);
}

TEST(ReferenceSdpa, PaddingGraphAndLocalSelectKeys) {
  HostTensor q = make({1, 1, 2, 1}, {0, 0});
  HostTensor k = make({1, 1, 4, 1}, {0, 0, 0, 0});
  HostTensor v = make({1, 1, 4, 1}, {1, 2, 4, 8});
  HostTensor out(DType::f32, {1, 1, 2, 1});

  HostTensor len = makeInt({1}, {2});
  MaskArgs pad;
  pad.kvLengths = &len;
  sdpa(q, k, v, pad, out, nullptr);
  EXPECT_NEAR(out.getDouble(0), 1.5, 1e-6);

  // Row 0: keys {3, 3} (a duplicate counts once); row 1: no keys.
  HostTensor rowPtr = makeInt({3}, {0, 2, 2}), colIdx = makeInt({2}, {3, 3});
  MaskArgs graph;
  graph.mask = "graph";
  graph.rowPtr = &rowPtr;
  graph.colIdx = &colIdx;
  sdpa(q, k, v, graph, out, nullptr);
  EXPECT_NEAR(out.getDouble(0), 8.0, 1e-6);
  EXPECT_EQ(out.getDouble(1), 0.0);

  // Lq = 2, Lk = 4: row 1 sits at position 3; window [3 - 1, 3 + 0].
  MaskArgs local;
  local.mask = "local";
  local.maskParams = {{"window_left", 1}, {"window_right", 0}};
  sdpa(q, k, v, local, out, nullptr);
  EXPECT_NEAR(out.getDouble(1), 6.0, 1e-6);
  EXPECT_NEAR(out.getDouble(0), 3.0, 1e-6); // position 2: keys 1, 2
}

TEST(ReferenceSdpa, AlibiAndRelativeBiasShiftScores) {
  // Two keys with equal q . k; ALiBi slope 1 at the query's position 1
  // penalises key 0 by 1: weights softmax([-1, 0]).
  HostTensor q = make({1, 1, 2, 1}, {0, 0});
  HostTensor k = make({1, 1, 2, 1}, {0, 0});
  HostTensor v = make({1, 1, 2, 1}, {0, 1});
  HostTensor slopes = make({1}, {1});
  HostTensor out(DType::f32, {1, 1, 2, 1});
  MaskArgs alibi;
  alibi.alibi = &slopes;
  sdpa(q, k, v, alibi, out, nullptr);
  EXPECT_NEAR(out.getDouble(1), 1.0 / (1.0 + std::exp(-1.0)), 1e-6);

  // rel_bias[h, clip(j - i) + 1] with R = 1: row 0 adds b[1] to key 0 and
  // b[2] to key 1.
  HostTensor table = make({1, 3}, {0, 0, std::log(3.0)});
  MaskArgs rel;
  rel.relBias = &table;
  rel.relClip = 1;
  sdpa(q, k, v, rel, out, nullptr);
  EXPECT_NEAR(out.getDouble(0), 0.75, 1e-6);
}

TEST(ReferenceGat, SelfLoopsIsolatedNodesAndDuplicates) {
  // Identity projection (F = H*C = 1), zero attention vectors: every neighbour
  // weighs the same, so out_i is the mean of z over i's in-edge list.
  HostTensor x = make({3, 1}, {1, 2, 4});
  HostTensor w = make({1, 1}, {1});
  HostTensor att = make({1, 1}, {0});
  HostTensor bias = make({1}, {0.5});
  // Node 0 <- {1, 1, 0}; node 1 <- {}; node 2 <- {0}.
  HostTensor rowPtr = makeInt({4}, {0, 3, 3, 4}),
             colIdx = makeInt({4}, {1, 1, 0, 0});
  GatArgs a{&x, &w, &att, &att, &rowPtr, &colIdx};
  a.bias = &bias;
  HostTensor out(DType::f32, {3, 1});

  a.addSelfLoops = false;
  gat(a, out);
  EXPECT_NEAR(out.getDouble(0), (2 + 2 + 1) / 3.0 + 0.5,
              1e-6);                        // duplicate counts
  EXPECT_NEAR(out.getDouble(1), 0.5, 1e-6); // isolated: bias
  EXPECT_NEAR(out.getDouble(2), 1.0 + 0.5, 1e-6);

  a.addSelfLoops = true; // existing self loop of node 0 replaced by one
  gat(a, out);
  EXPECT_NEAR(out.getDouble(0), (2 + 2 + 1) / 3.0 + 0.5, 1e-6);
  EXPECT_NEAR(out.getDouble(1), 2.0 + 0.5, 1e-6);
  EXPECT_NEAR(out.getDouble(2), (1 + 4) / 2.0 + 0.5, 1e-6);
}

TEST(ReferenceGat, LeakyReluAndMeanOverHeads) {
  // One edge pair: node 0 <- {0, 1}; H = 2, C = 1; z = x.
  HostTensor x = make({2, 1}, {1, -1});
  HostTensor w = make({2, 1}, {1, 1});
  HostTensor attSrc = make({2, 1}, {1, 0}), attDst = make({2, 1}, {0, 0});
  HostTensor rowPtr = makeInt({3}, {0, 2, 2}), colIdx = makeInt({2}, {0, 1});
  GatArgs a{&x, &w, &attSrc, &attDst, &rowPtr, &colIdx};
  a.addSelfLoops = false;
  a.concat = false;
  a.negativeSlope = 0.5;
  HostTensor out(DType::f32, {2, 1});
  gat(a, out);
  // Head 0: e = [1, LeakyReLU(-1) = -0.5]; head 1: e = [0, 0].
  double w0 = 1.0 / (1.0 + std::exp(-1.5));
  double head0 = w0 * 1 + (1 - w0) * -1, head1 = 0.0;
  EXPECT_NEAR(out.getDouble(0), (head0 + head1) / 2, 1e-6);
}

TEST(ReferenceMha, IdentityProjectionsGiveTheHandComputedAttention) {
  // D = 2, one head, W_in = [I; I; I], W_out = I: Q = K = V = x, rows
  // [1, 0] and [0, 1]. Row 0 scores (1, 0) / sqrt(2): weight
  // w = e^(1/sqrt 2) / (e^(1/sqrt 2) + 1) on key 0, so out = [w, 1 - w];
  // row 1 by symmetry [1 - w, w].
  HostTensor x = make({1, 2, 2}, {1, 0, 0, 1});
  HostTensor win = make({6, 2}, {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1});
  HostTensor wout = make({2, 2}, {1, 0, 0, 1});
  MhaArgs a{&x, &x, &x, &win, nullptr, &wout, nullptr, 1, 1, MaskArgs()};
  HostTensor out(DType::f32, {1, 2, 2});
  mha(a, out);
  double e = std::exp(1.0 / std::sqrt(2.0)), w = e / (e + 1);
  double expected[4] = {w, 1 - w, 1 - w, w};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(out.getDouble(i), expected[i], 1e-6);
}

} // namespace
