//===- Graph.cpp - graphs for graph attention ----------------------------===//

#include "lib/Graph/Graph.h"
#include "lib/Runtime/Budget.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/cuthill_mckee_ordering.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

using namespace mlir::attn::graph;
using llvm::createStringError;
using llvm::Expected;
using llvm::StringRef;

namespace {

/// Line-by-line reader that names file and line in its errors.
class LineReader {
public:
  static Expected<LineReader> open(StringRef path) {
    auto buf = mlir::attn::readInputFile(path, /*isText=*/true);
    if (!buf)
      return buf.takeError();
    return LineReader(path, std::move(*buf));
  }

  /// The next line (without the newline), or false at the end.
  bool next(StringRef &line) {
    if (rest.empty())
      return false;
    std::tie(line, rest) = rest.split('\n');
    line = line.rtrim("\r");
    ++lineNo;
    return true;
  }

  llvm::Error error(const llvm::Twine &message) const {
    return errorAt(lineNo, message);
  }
  llvm::Error errorAt(int line, const llvm::Twine &message) const {
    return createStringError(std::errc::invalid_argument, "%s:%d: %s",
                             path.c_str(), line, message.str().c_str());
  }
  /// The graph's node count must fit the memory budget: its CSR holds
  /// numNodes + 1 row pointers (and a model numNodes feature rows), the
  /// first allocation a claimed node count decides.
  llvm::Error checkNodes(int line, int64_t numNodes,
                         const llvm::Twine &claim) const {
    // About 64 bytes per node in all: the CSR's row pointers, Boost's copy
    // of them while building it, the reordering's adjacency lists and
    // permutation, a model's per-node rows.
    constexpr uint64_t kBytesPerNode = 64;
    uint64_t rows = static_cast<uint64_t>(numNodes) + 1;
    uint64_t bytes = rows > UINT64_MAX / kBytesPerNode
                         ? UINT64_MAX // certainly over any budget
                         : rows * kBytesPerNode;
    if (llvm::Error err = mlir::attn::checkBudget(
            bytes, claim + " (" + llvm::Twine(numNodes) +
                       " nodes, about 64 bytes each)"))
      return errorAt(line, llvm::toString(std::move(err)));
    return llvm::Error::success();
  }
  int line() const { return lineNo; }
  /// Whether the file starts with `prefix`.
  bool startsWith(StringRef prefix) const {
    return buffer->getBuffer().starts_with(prefix);
  }

private:
  LineReader(StringRef path, std::unique_ptr<llvm::MemoryBuffer> buffer)
      : path(path.str()), buffer(std::move(buffer)),
        rest(this->buffer->getBuffer()) {}
  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  StringRef rest;
  int lineNo = 0;
};

/// Splits a line on whitespace.
llvm::SmallVector<StringRef> tokens(StringRef line) {
  llvm::SmallVector<StringRef> out;
  line.split(out, ' ', -1, /*KeepEmpty=*/false);
  llvm::SmallVector<StringRef> result;
  for (StringRef t : out) {
    llvm::SmallVector<StringRef> parts;
    t.split(parts, '\t', -1, false);
    result.append(parts.begin(), parts.end());
  }
  return result;
}

bool isComment(StringRef line) {
  StringRef t = line.ltrim();
  return t.empty() || t.starts_with("#") || t.starts_with("%");
}

} // namespace

/// The error for the first id of edge `src -> dst` past `bounds` (at the
/// reader's line, after `context`), or success.
static llvm::Error checkBounds(const LineReader &reader, int64_t src,
                               int64_t dst,
                               const mlir::attn::graph::GraphBounds &bounds,
                               const llvm::Twine &context = "") {
  auto past = [&](StringRef role, int64_t id, int64_t bound,
                  const std::string &name) {
    return reader.error(context + "edge " + llvm::Twine(src) + " -> " +
                        llvm::Twine(dst) + ": the " + role + " " +
                        llvm::Twine(id) + " is not below " + name + " = " +
                        llvm::Twine(bound));
  };
  if (bounds.nodes >= 0 && src >= bounds.nodes)
    return past("source", src, bounds.nodes, bounds.nodesName);
  if (bounds.destinations >= 0 && dst >= bounds.destinations)
    return past("destination", dst, bounds.destinations,
                bounds.destinationsName);
  if (bounds.nodes >= 0 && dst >= bounds.nodes)
    return past("destination", dst, bounds.nodes, bounds.nodesName);
  return llvm::Error::success();
}

Expected<EdgeList> mlir::attn::graph::readEdgeList(StringRef path,
                                                   const GraphBounds &bounds) {
  auto reader = LineReader::open(path);
  if (!reader)
    return reader.takeError();
  if (reader->startsWith("%%MatrixMarket"))
    return readMatrixMarket(path, bounds);
  EdgeList graph;
  int largestLine = 0;
  // SNAP's header "# Nodes: N Edges: M" declares the node count, so nodes
  // without edges after the largest id are kept. It is a count, not a bound:
  // several SNAP graphs (web-Google, com-DBLP) number nodes sparsely, with
  // ids past N, so the node count is max(N, largest id + 1).
  int64_t declared = -1;
  StringRef line;
  while (reader->next(line)) {
    if (isComment(line)) {
      StringRef c = line.ltrim().drop_front().ltrim();
      // SNAP writes "Nodes:"; any case is the same header.
      if (c.consume_front_insensitive("nodes:")) {
        auto t = tokens(c);
        int64_t n;
        if (t.empty() || t[0].getAsInteger(10, n) || n < 0 ||
            n == std::numeric_limits<int64_t>::max())
          return reader->error("expected '# Nodes: N' with a node count N >= "
                               "0, got '" +
                               line.trim() + "'");
        if (bounds.nodes >= 0 && n > bounds.nodes)
          return reader->error("'# Nodes: " + llvm::Twine(n) +
                               "' declares more nodes than " +
                               bounds.nodesName + " = " +
                               llvm::Twine(bounds.nodes));
        if (declared >= 0 && n != declared)
          return reader->error("'# Nodes: " + llvm::Twine(n) +
                               "' contradicts the earlier '# Nodes: " +
                               llvm::Twine(declared) + "'");
        if (llvm::Error err = reader->checkNodes(
                reader->line(), n, "'# Nodes: " + llvm::Twine(n) + "'"))
          return std::move(err);
        declared = n;
      }
      continue;
    }
    auto t = tokens(line);
    int64_t src, dst;
    if (t.size() != 2 || t[0].getAsInteger(10, src) ||
        t[1].getAsInteger(10, dst))
      return reader->error("expected two integer node ids 'src dst', got '" +
                           line.trim() + "'");
    if (src < 0 || dst < 0)
      return reader->error("node ids must be >= 0, got '" + line.trim() + "'");
    if (llvm::Error err = checkBounds(*reader, src, dst, bounds))
      return std::move(err);
    // Ids index rows: the largest decides the node count (largest + 1, so
    // INT64_MAX itself is no id) and its line is where a claim too large
    // for the memory budget is reported.
    int64_t largest = std::max(src, dst);
    if (largest == std::numeric_limits<int64_t>::max())
      return reader->error("node id " + llvm::Twine(largest) +
                           " is too large (ids must be below 2^63 - 1)");
    graph.edges.push_back({src, dst});
    if (largest + 1 > graph.numNodes) {
      graph.numNodes = largest + 1;
      largestLine = reader->line();
    }
  }
  if (declared > graph.numNodes) {
    graph.numNodes = declared; // checked at the header's line
    return graph;
  }
  if (llvm::Error err =
          reader->checkNodes(largestLine, graph.numNodes,
                             "node id " + llvm::Twine(graph.numNodes - 1)))
    return std::move(err);
  return graph;
}

Expected<EdgeList>
mlir::attn::graph::readMatrixMarket(StringRef path, const GraphBounds &bounds) {
  auto reader = LineReader::open(path);
  if (!reader)
    return reader.takeError();
  StringRef line;
  if (!reader->next(line) || !line.starts_with("%%MatrixMarket"))
    return reader->error("expected a '%%MatrixMarket matrix coordinate ...' "
                         "header");
  std::string lowered = line.lower();
  auto header = tokens(lowered);
  if (header.size() != 5 || header[1] != "matrix" || header[2] != "coordinate")
    return reader->error("expected '%%MatrixMarket matrix coordinate <field> "
                         "<symmetry>', got '" +
                         line + "'");
  StringRef field = header[3], symmetry = header[4];
  if (field != "pattern" && field != "real" && field != "integer")
    return reader->error("unsupported field '" + field +
                         "' (expected pattern, real or integer)");
  if (symmetry != "general" && symmetry != "symmetric")
    return reader->error("unsupported symmetry '" + symmetry +
                         "' (expected general or symmetric)");
  bool symmetric = symmetry == "symmetric";
  size_t valueTokens = field == "pattern" ? 0 : 1;

  // Size line: rows cols entries (after optional comment lines).
  bool more;
  while ((more = reader->next(line)) && isComment(line)) {
  }
  if (!more)
    return reader->error("expected the size line 'rows cols entries' after "
                         "the header, got the end of the file");
  auto size = tokens(line);
  int64_t rows, cols, entries;
  if (size.size() != 3 || size[0].getAsInteger(10, rows) ||
      size[1].getAsInteger(10, cols) || size[2].getAsInteger(10, entries) ||
      rows < 0 || cols < 0 || entries < 0)
    return reader->error("expected the size line 'rows cols entries', got '" +
                         line.trim() + "'");
  if (rows != cols)
    return reader->error("an adjacency matrix must be square, got " +
                         llvm::Twine(rows) + " x " + llvm::Twine(cols));
  if (rows == std::numeric_limits<int64_t>::max())
    return reader->error("the size line claims " + llvm::Twine(rows) +
                         " nodes (at most 2^63 - 2)");
  if (bounds.nodes >= 0 && rows > bounds.nodes)
    return reader->error("the size line claims " + llvm::Twine(rows) +
                         " nodes, more than " + bounds.nodesName + " = " +
                         llvm::Twine(bounds.nodes));
  if (llvm::Error err =
          reader->checkNodes(reader->line(), rows, "the size line"))
    return std::move(err);

  EdgeList graph;
  graph.numNodes = rows;
  int64_t seen = 0;
  while (reader->next(line)) {
    if (isComment(line))
      continue;
    auto t = tokens(line);
    int64_t r, c;
    if (t.size() != 2 + valueTokens || t[0].getAsInteger(10, r) ||
        t[1].getAsInteger(10, c))
      return reader->error("expected an entry 'row col" +
                           llvm::Twine(valueTokens ? " value" : "") +
                           "', got '" + line.trim() + "'");
    // The value is read and must be a number of the declared field; every
    // entry is an edge whatever its value (explicit zeros included), as
    // scipy's coo_matrix and PyG's from_scipy_sparse_matrix keep them.
    if (valueTokens) {
      double value;
      int64_t integerValue;
      // A decimal number (getAsDouble also takes nan, inf and hex floats,
      // which Matrix Market has not).
      bool ok = field == "integer"
                    ? !t[2].getAsInteger(10, integerValue)
                    : t[2].find_first_not_of("0123456789+-.eE") ==
                              StringRef::npos &&
                          !t[2].getAsDouble(value) && std::isfinite(value);
      if (!ok)
        return reader->error(
            "expected " +
            llvm::Twine(field == "integer" ? "an integer"
                                           : "a finite decimal number") +
            " value in entry '" + line.trim() + "'");
    }
    if (r < 1 || r > rows || c < 1 || c > cols)
      return reader->error("entry (" + llvm::Twine(r) + ", " + llvm::Twine(c) +
                           ") is outside 1.." + llvm::Twine(rows));
    if (++seen > entries)
      return reader->error("more entries than the " + llvm::Twine(entries) +
                           " the size line announced");
    if (llvm::Error err = checkBounds(*reader, r - 1, c - 1, bounds))
      return std::move(err);
    if (symmetric && r != c)
      if (llvm::Error err = checkBounds(
              *reader, c - 1, r - 1, bounds,
              "entry (" + llvm::Twine(r) + ", " + llvm::Twine(c) +
                  ") of a symmetric file, its mirror "))
        return std::move(err);
    graph.edges.push_back({r - 1, c - 1});
    if (symmetric && r != c)
      graph.edges.push_back({c - 1, r - 1});
  }
  if (seen != entries)
    return reader->error("truncated: " + llvm::Twine(seen) + " of " +
                         llvm::Twine(entries) + " entries");
  return graph;
}

Expected<EdgeList> mlir::attn::graph::readGraph(StringRef path,
                                                const GraphBounds &bounds) {
  return path.ends_with(".mtx") ? readMatrixMarket(path, bounds)
                                : readEdgeList(path, bounds);
}

Csr mlir::attn::graph::buildInEdgeCsr(const EdgeList &graph,
                                      const CsrOptions &options) {
  // (dst, src) pairs: the CSR's rows are destinations.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  pairs.reserve(graph.edges.size() * (options.symmetrize ? 2 : 1) +
                (options.selfLoops ? graph.numNodes : 0));
  for (const Edge &e : graph.edges) {
    if (options.selfLoops && e.src == e.dst)
      continue;
    pairs.push_back({e.dst, e.src});
    if (options.symmetrize)
      pairs.push_back({e.src, e.dst});
  }
  if (options.symmetrize) {
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  }
  if (options.selfLoops)
    for (int64_t i = 0; i < graph.numNodes; ++i)
      pairs.push_back({i, i});

  using CsrGraph =
      boost::compressed_sparse_row_graph<boost::directedS, boost::no_property,
                                         boost::no_property, boost::no_property,
                                         int64_t, int64_t>;
  CsrGraph g(boost::edges_are_unsorted_multi_pass, pairs.begin(), pairs.end(),
             static_cast<size_t>(graph.numNodes));
  Csr csr;
  csr.numNodes = graph.numNodes;
  csr.rowPtr.assign(g.m_forward.m_rowstart.begin(),
                    g.m_forward.m_rowstart.end());
  csr.colIdx.assign(g.m_forward.m_column.begin(), g.m_forward.m_column.end());
  for (int64_t i = 0; i < csr.numNodes; ++i)
    std::sort(csr.colIdx.begin() + csr.rowPtr[i],
              csr.colIdx.begin() + csr.rowPtr[i + 1]);
  return csr;
}

std::vector<int64_t> mlir::attn::graph::reverseCuthillMcKee(const Csr &csr) {
  // Isolated nodes (no edge but a self loop) are ordered last, outside
  // Boost: its search for a start node scans every unvisited node once per
  // connected component, so N isolated nodes made it O(N^2) (80 000 took
  // 12 s). They do not change any bandwidth.
  std::vector<char> linked(csr.numNodes, 0);
  for (int64_t i = 0; i < csr.numNodes; ++i)
    for (int64_t e = csr.rowPtr[i]; e < csr.rowPtr[i + 1]; ++e)
      if (csr.colIdx[e] != i)
        linked[i] = linked[csr.colIdx[e]] = 1;
  std::vector<int64_t> compact(csr.numNodes, -1), original;
  for (int64_t i = 0; i < csr.numNodes; ++i)
    if (linked[i]) {
      compact[i] = static_cast<int64_t>(original.size());
      original.push_back(i);
    }
  using Undirected = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::undirectedS,
      boost::property<boost::vertex_color_t, boost::default_color_type,
                      boost::property<boost::vertex_degree_t, int64_t>>>;
  Undirected g(original.size());
  for (int64_t i = 0; i < csr.numNodes; ++i)
    for (int64_t e = csr.rowPtr[i]; e < csr.rowPtr[i + 1]; ++e)
      if (csr.colIdx[e] < i) // each undirected pair once; no self loops
        boost::add_edge(compact[csr.colIdx[e]], compact[i], g);
      else if (csr.colIdx[e] > i)
        boost::add_edge(compact[i], compact[csr.colIdx[e]], g);
  std::vector<Undirected::vertex_descriptor> order(original.size());
  boost::cuthill_mckee_ordering(g, order.rbegin(),
                                boost::get(boost::vertex_color, g),
                                boost::make_degree_map(g));
  std::vector<int64_t> result;
  result.reserve(csr.numNodes);
  for (auto v : order)
    result.push_back(original[v]);
  for (int64_t i = 0; i < csr.numNodes; ++i)
    if (!linked[i])
      result.push_back(i);
  return result;
}

Csr mlir::attn::graph::permute(const Csr &csr,
                               const std::vector<int64_t> &order) {
  std::vector<int64_t> newId(csr.numNodes);
  for (int64_t k = 0; k < csr.numNodes; ++k)
    newId[order[k]] = k;
  EdgeList edges;
  edges.numNodes = csr.numNodes;
  for (int64_t i = 0; i < csr.numNodes; ++i)
    for (int64_t e = csr.rowPtr[i]; e < csr.rowPtr[i + 1]; ++e)
      edges.edges.push_back({newId[csr.colIdx[e]], newId[i]});
  return buildInEdgeCsr(edges);
}

double mlir::attn::graph::blockDensity(const Csr &csr, int64_t block) {
  int64_t tiles = (csr.numNodes + block - 1) / block;
  if (tiles == 0)
    return 0.0;
  // The occupied tiles of each row block, sorted and counted once: memory
  // O(edges), not tiles^2 (10^7 nodes would have been 24 GB of flags).
  int64_t occupied = 0;
  std::vector<int64_t> columns;
  for (int64_t row = 0; row < tiles; ++row) {
    columns.clear();
    int64_t last = std::min(csr.numNodes, (row + 1) * block);
    for (int64_t i = row * block; i < last; ++i)
      for (int64_t e = csr.rowPtr[i]; e < csr.rowPtr[i + 1]; ++e)
        columns.push_back(csr.colIdx[e] / block);
    std::sort(columns.begin(), columns.end());
    occupied += std::unique(columns.begin(), columns.end()) - columns.begin();
  }
  return double(occupied) / (double(tiles) * double(tiles));
}

EdgeList mlir::attn::graph::erdosRenyi(int64_t numNodes, int64_t avgDegree,
                                       uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int64_t> node(0, numNodes - 1);
  EdgeList graph;
  graph.numNodes = numNodes;
  for (int64_t dst = 0; dst < numNodes; ++dst)
    for (int64_t k = 0; k < avgDegree; ++k)
      graph.edges.push_back({node(gen), dst});
  return graph;
}

EdgeList mlir::attn::graph::powerLaw(int64_t numNodes, int64_t avgDegree,
                                     double gamma, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<double> weights(numNodes);
  for (int64_t i = 0; i < numNodes; ++i)
    weights[i] = std::pow(double(i + 1), -1.0 / (gamma - 1.0));
  std::discrete_distribution<int64_t> source(weights.begin(), weights.end());
  std::poisson_distribution<int64_t> degree(static_cast<double>(avgDegree));
  EdgeList graph;
  graph.numNodes = numNodes;
  for (int64_t dst = 0; dst < numNodes; ++dst)
    for (int64_t k = 0, d = degree(gen); k < d; ++k)
      graph.edges.push_back({source(gen), dst});
  return graph;
}

EdgeList mlir::attn::graph::shuffledBanded(int64_t numNodes, int64_t avgDegree,
                                           int64_t window, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<int64_t> label(numNodes);
  for (int64_t i = 0; i < numNodes; ++i)
    label[i] = i;
  std::shuffle(label.begin(), label.end(), gen);
  EdgeList graph;
  graph.numNodes = numNodes;
  for (int64_t dst = 0; dst < numNodes; ++dst) {
    std::uniform_int_distribution<int64_t> near(
        std::max<int64_t>(0, dst - window),
        std::min<int64_t>(numNodes - 1, dst + window));
    for (int64_t k = 0; k < avgDegree; ++k)
      graph.edges.push_back({label[near(gen)], label[dst]});
  }
  return graph;
}
