//===- Graph.h - graphs for graph attention ----------------------*- C++
//-*-===//
//
// Loading (SNAP edge lists, Matrix Market), the CSR of in-edges per
// destination that attn.gat and graph-masked attn.sdpa read, reverse
// Cuthill-McKee reordering (Boost.Graph), block density, and generators.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_GRAPH_GRAPH_H
#define ATTN_LIB_GRAPH_GRAPH_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::attn::graph {

/// A directed edge src -> dst.
struct Edge {
  int64_t src, dst;
};

struct EdgeList {
  int64_t numNodes = 0;
  std::vector<Edge> edges;
};

/// Bounds a reader checks while it reads, naming the line of the first id
/// or header past them (before any size the file claims is allocated): a
/// bipartite layer's sources (every id) and destinations.
struct GraphBounds {
  /// Ids and declared node counts must be below (at most) `nodes`; -1: any.
  int64_t nodes = -1;
  /// Destinations must be below `destinations`; -1: any.
  int64_t destinations = -1;
  /// How the errors name the two bounds, e.g. `size[0]` and `size[1]`.
  std::string nodesName = "the node count", destinationsName = "the node count";
};

/// Reads a SNAP-style edge list: one "src dst" pair of non-negative integer
/// ids per line, '#' or '%' comments, blank lines ignored. The node count is
/// the largest id + 1, or more when SNAP's header comment declares more
/// (`# Nodes: N Edges: M`: nodes without edges after the largest id are
/// kept; N is a count, and sparsely numbered SNAP graphs have ids past it).
/// Errors name the file and line. A file whose first line is a Matrix
/// Market header is read as one.
llvm::Expected<EdgeList> readEdgeList(llvm::StringRef path,
                                      const GraphBounds &bounds = {});

/// Reads a Matrix Market coordinate file (`pattern`, `real` or `integer`,
/// `general` or `symmetric`); entry (r, c) is the edge r -> c (1-based ids),
/// symmetric files give both directions. Errors name the file and line.
llvm::Expected<EdgeList> readMatrixMarket(llvm::StringRef path,
                                          const GraphBounds &bounds = {});

/// Reads either format: .mtx files and files starting with a
/// `%%MatrixMarket` header are Matrix Market, anything else an edge list.
llvm::Expected<EdgeList> readGraph(llvm::StringRef path,
                                   const GraphBounds &bounds = {});

/// In-edges per destination: the sources of node i are
/// colIdx[rowPtr[i] .. rowPtr[i+1]), in ascending order (duplicates kept).
struct Csr {
  int64_t numNodes = 0;
  std::vector<int64_t> rowPtr, colIdx;
  int64_t numEdges() const { return static_cast<int64_t>(colIdx.size()); }
};

struct CsrOptions {
  /// Add the reverse of every edge, then keep each (src, dst) once.
  bool symmetrize = false;
  /// Drop existing self loops and add one per node (PyG's add_self_loops).
  bool selfLoops = false;
};

/// Builds the in-edge CSR with Boost.Graph's compressed_sparse_row_graph.
Csr buildInEdgeCsr(const EdgeList &graph, const CsrOptions &options = {});

/// Reverse Cuthill-McKee order of the graph's undirected structure
/// (boost::cuthill_mckee_ordering, reversed): order[k] is the old id of the
/// node placed at position k.
std::vector<int64_t> reverseCuthillMcKee(const Csr &csr);

/// Renumbers nodes: new id k is old id order[k].
Csr permute(const Csr &csr, const std::vector<int64_t> &order);

/// Fraction of (row block, column block) tiles of the adjacency that hold at
/// least one edge, for `block` x `block` tiles.
double blockDensity(const Csr &csr, int64_t block);

/// Erdos-Renyi-style graph: every node gets `avgDegree` in-edges from
/// uniformly random sources (duplicates possible).
EdgeList erdosRenyi(int64_t numNodes, int64_t avgDegree, uint64_t seed);

/// Power-law graph (Chung-Lu): sources drawn with weight ~
/// (i+1)^(-1/(gamma-1)), `avgDegree` in-edges per node on average, so a few
/// hubs have many edges.
EdgeList powerLaw(int64_t numNodes, int64_t avgDegree, double gamma,
                  uint64_t seed);

/// Graph with locality hidden by a random relabelling: node i (before
/// relabelling) gets `avgDegree` in-edges from uniform sources in
/// [i - window, i + window]; then ids are shuffled. Reordering (RCM) recovers
/// the band; meshes, road networks and molecules look like this.
EdgeList shuffledBanded(int64_t numNodes, int64_t avgDegree, int64_t window,
                        uint64_t seed);

} // namespace mlir::attn::graph

#endif // ATTN_LIB_GRAPH_GRAPH_H
