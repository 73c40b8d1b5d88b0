//===- GraphTest.cpp - graph loading, CSR, reordering, generators --------===//

#include "lib/Graph/Graph.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <numeric>
#include <random>

using namespace mlir::attn::graph;

namespace {

class GraphFiles : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-graph", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string write(llvm::StringRef name, llvm::StringRef text) {
    std::string path = (dir + "/" + name).str();
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << text;
    return path;
  }
  /// The error of reading `text` as file `name`, or "" if it read.
  std::string error(llvm::StringRef name, llvm::StringRef text) {
    auto g = readGraph(write(name, text));
    return g ? "" : llvm::toString(g.takeError());
  }
  llvm::SmallString<128> dir;
};

TEST_F(GraphFiles, ReadsEdgeLists) {
  auto g =
      readGraph(write("g.txt", "# a comment\n\n0 1\n2\t0\n% another\n1 2\n"));
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_EQ(g->numNodes, 3);
  ASSERT_EQ(g->edges.size(), 3u);
  EXPECT_EQ(g->edges[1].src, 2);
  EXPECT_EQ(g->edges[1].dst, 0);
}

TEST_F(GraphFiles, RejectsMalformedEdgeListsNamingFileAndLine) {
  EXPECT_NE(error("a.txt", "0 1\n1 x\n")
                .find("a.txt:2: expected two integer "
                      "node ids 'src dst', got '1 x'"),
            std::string::npos);
  EXPECT_NE(
      error("b.txt", "0 1\n-3 1\n").find("b.txt:2: node ids must be >= 0"),
      std::string::npos);
  EXPECT_NE(error("c.txt", "0 1 2\n").find("c.txt:1: expected two integer"),
            std::string::npos);
}

TEST_F(GraphFiles, ReadsMatrixMarket) {
  auto g = readGraph(ATTN_TEST_INPUTS "/karate.mtx");
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_EQ(g->numNodes, 34);
  EXPECT_EQ(g->edges.size(), 156u); // 78 undirected friendships
  Csr csr = buildInEdgeCsr(*g);
  EXPECT_EQ(csr.rowPtr[1] - csr.rowPtr[0], 16);   // the instructor
  EXPECT_EQ(csr.rowPtr[34] - csr.rowPtr[33], 17); // the administrator
  EXPECT_TRUE(std::is_sorted(csr.colIdx.begin() + csr.rowPtr[0],
                             csr.colIdx.begin() + csr.rowPtr[1]));
}

TEST_F(GraphFiles, RejectsMalformedMatrixMarket) {
  const char *hdr = "%%MatrixMarket matrix coordinate pattern general\n";
  EXPECT_NE(error("a.mtx", "3 3 1\n1 2\n")
                .find("a.mtx:1: expected a "
                      "'%%MatrixMarket"),
            std::string::npos);
  EXPECT_NE(error("b.mtx", "%%MatrixMarket matrix\n")
                .find("b.mtx:1: expected "
                      "'%%MatrixMarket "
                      "matrix coordinate"),
            std::string::npos);
  EXPECT_NE(error("c.mtx", "%%MatrixMarket matrix coordinate complex general\n")
                .find("unsupported field 'complex'"),
            std::string::npos);
  EXPECT_NE(error("d.mtx", std::string(hdr))
                .find("d.mtx:1: expected the size "
                      "line"),
            std::string::npos);
  EXPECT_NE(error("e.mtx", std::string(hdr) + "3 3 2\n1 2\n")
                .find("truncated: 1 of 2 entries"),
            std::string::npos);
  EXPECT_NE(error("f.mtx", std::string(hdr) + "3 3 1\n4 1\n")
                .find("f.mtx:3: entry (4, 1) is outside 1..3"),
            std::string::npos);
  EXPECT_NE(
      error("g.mtx", std::string(hdr) + "3 4 1\n1 1\n").find("must be square"),
      std::string::npos);
  EXPECT_NE(error("h.mtx", std::string(hdr) + "3 3 1\n1 two\n")
                .find("h.mtx:3: expected an entry 'row col'"),
            std::string::npos);
  // Values: decimal numbers (getAsDouble also took nan, inf and hex).
  const char *real = "%%MatrixMarket matrix coordinate real general\n";
  for (const char *value : {"nan", "inf", "-inf", "0x1p3"})
    EXPECT_NE(error("v.mtx", std::string(real) + "3 3 1\n1 2 " + value + "\n")
                  .find("v.mtx:3: expected a finite decimal number value"),
              std::string::npos)
        << value;
  EXPECT_EQ(error("w.mtx", std::string(real) + "3 3 1\n1 2 -1.5e-3\n"), "");
}

TEST_F(GraphFiles, SnapHeaderInAnyCase) {
  auto g = readGraph(write("lower.txt", "# nodes: 5 edges: 1\n0 1\n"));
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_EQ(g->numNodes, 5);
}

TEST(GraphCsr, SelfLoopsAndSymmetrization) {
  EdgeList g{3, {{0, 1}, {1, 1}, {0, 1}, {2, 0}}};
  Csr plain = buildInEdgeCsr(g);
  EXPECT_EQ(plain.rowPtr, (std::vector<int64_t>{0, 1, 4, 4}));
  EXPECT_EQ(plain.colIdx, (std::vector<int64_t>{2, 0, 0, 1}));

  // PyG: existing self loops dropped, one per node added; duplicates kept.
  Csr loops = buildInEdgeCsr(g, {/*symmetrize=*/false, /*selfLoops=*/true});
  EXPECT_EQ(loops.rowPtr, (std::vector<int64_t>{0, 2, 5, 6}));
  EXPECT_EQ(loops.colIdx, (std::vector<int64_t>{0, 2, 0, 0, 1, 2}));

  Csr sym = buildInEdgeCsr(g, {/*symmetrize=*/true, /*selfLoops=*/false});
  EXPECT_EQ(sym.rowPtr, (std::vector<int64_t>{0, 2, 4, 5}));
  EXPECT_EQ(sym.colIdx, (std::vector<int64_t>{1, 2, 0, 1, 0}));
}

TEST(GraphReorder, ReverseCuthillMcKeeRecoversABandedGraph) {
  // A ring of 256 nodes with shuffled labels: scattered before, banded after.
  const int64_t n = 256;
  std::vector<int64_t> label(n);
  std::iota(label.begin(), label.end(), 0);
  std::shuffle(label.begin(), label.end(), std::mt19937_64(7));
  EdgeList g{n, {}};
  for (int64_t i = 0; i < n; ++i)
    g.edges.push_back({label[i], label[(i + 1) % n]});
  Csr csr = buildInEdgeCsr(g, {/*symmetrize=*/true, /*selfLoops=*/false});
  std::vector<int64_t> order = reverseCuthillMcKee(csr);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  EXPECT_EQ(sorted, ids); // a permutation

  Csr reordered = permute(csr, order);
  EXPECT_EQ(reordered.numEdges(), csr.numEdges());
  int64_t bandwidth = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t e = reordered.rowPtr[i]; e < reordered.rowPtr[i + 1]; ++e)
      bandwidth = std::max(bandwidth, std::abs(reordered.colIdx[e] - i));
  EXPECT_LE(bandwidth, 2); // a ring's RCM order alternates its two arms
  EXPECT_LT(blockDensity(reordered, 32), 0.5 * blockDensity(csr, 32));
}

TEST(GraphGenerators, DegreesFollowTheModel) {
  Csr er = buildInEdgeCsr(erdosRenyi(1000, 16, 1));
  EXPECT_EQ(er.numEdges(), 16000);
  for (int64_t i = 0; i < er.numNodes; ++i)
    EXPECT_EQ(er.rowPtr[i + 1] - er.rowPtr[i], 16);

  EdgeList pl = powerLaw(1000, 16, 2.5, 1);
  std::vector<int64_t> outDegree(1000, 0);
  for (const Edge &e : pl.edges)
    ++outDegree[e.src];
  int64_t maxDegree = *std::max_element(outDegree.begin(), outDegree.end());
  EXPECT_NEAR(double(pl.edges.size()) / 1000.0, 16.0, 1.0);
  EXPECT_GT(maxDegree, 10 * 16); // hubs
}

} // namespace
