//===- Gat.cpp - stacked graph attention layers (PyG GATConv, GATv2Conv) --===//
//
// One attn.gat (GATConv) or attn.gatv2 (GATv2Conv) per layer over the in-edge
// CSR of the description's graph (loaded with lib/Graph), ELU between layers;
// one layer may also return its attention weights, reordered into PyG's edge
// order. Weight names are PyG's, one module per layer: conv1.lin.weight,
// conv1.att_src (1 x H x C), conv1.att_dst, conv1.bias (GATv2Conv:
// conv1.lin_l.*, conv1.lin_r.*, conv1.att; with `in_channels` as a pair,
// GATConv's conv1.lin_src.weight / conv1.lin_dst.weight), conv2... With
// `reorder: rcm` the nodes are renumbered by reverse Cuthill-McKee for the
// run (features and CSR permuted before, output rows restored after), so
// neighbours sit in nearby rows. In the mini-batch form every layer has its
// own bipartite graph (PyG's NeighborSampler `adjs`: `size` sources to
// destinations, the destinations being the first sources).
//
//===----------------------------------------------------------------------===//

#include "lib/Graph/Graph.h"
#include "lib/Models/ModelKinds.h"
#include "lib/Models/NetBuilder.h"
#include "lib/Runtime/Budget.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <optional>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::graph;

namespace {

/// A graph file named by the description: relative to the description's
/// folder unless absolute.
std::string besideDescription(SpecReader &spec, llvm::StringRef file) {
  llvm::SmallString<256> path(file);
  if (llvm::sys::path::is_relative(path)) {
    path = llvm::sys::path::parent_path(spec.getSource().path);
    llvm::sys::path::append(path, file);
  }
  return std::string(path);
}

struct GatLayer {
  int64_t heads = 1, channels = 1;
  bool concat = true, bias = true;
  /// PyG's return_attention_weights: the layer's alpha is an extra output.
  bool attentionWeights = false;
  /// GATv2Conv (else GATConv), and its share_weights.
  bool v2 = false, shareWeights = false;
  double negativeSlope = 0.2;
  /// PyG's edge_dim: the width of the edge attributes, 0 without.
  int64_t edgeDim = 0;
  /// GATConv built with in_channels as a pair: lin_src / lin_dst (the
  /// destinations projected by their own weight), else one `lin`.
  bool separateLins = false;
  /// The mini-batch form: this layer's bipartite graph from `numSrc`
  /// sources to `numDst` destinations (x_dst = x[:numDst]).
  int64_t numSrc = 0, numDst = 0;
  Csr graph;
};

class Gat : public Model {
public:
  int64_t inFeatures = 0;
  std::vector<GatLayer> layers;
  double negativeSlope = 0.2;
  bool selfLoops = true;
  /// The description's graph; in the mini-batch form (`miniBatch`), each
  /// layer's own (GatLayer::graph) instead.
  Csr graph;
  bool miniBatch = false;
  /// With `reorder: rcm`: order[k] is the original id of node k of the
  /// compiled numbering; empty otherwise.
  std::vector<int64_t> order;
  double densityBefore = 0, densityAfter = 0;
  static constexpr int64_t kDensityBlock = 64;
  /// With return_attention_weights: PyG's edges (src, dst) in its order, and
  /// for each the row of attn.gat's alpha result that holds it.
  std::vector<std::pair<int64_t, int64_t>> pygEdges;
  std::vector<int64_t> alphaRow;
  int64_t alphaHeads = 0;
  /// With edge_dim: the attributes' width, and each graph-file edge's CSR
  /// slot (the edge_attr input is in the file's order, PyG's).
  int64_t edgeDim = 0;
  std::vector<int64_t> fileSlots;

  static std::string prefix(size_t n) {
    return "conv" + std::to_string(n + 1) + ".";
  }

  /// Layer n's graph, its destinations and the self loops it adds (nodes
  /// both source and destination).
  const Csr &graphOf(size_t n) const {
    return miniBatch ? layers[n].graph : graph;
  }
  int64_t selfLoopsOf(size_t n) const {
    if (!selfLoops)
      return 0;
    return miniBatch ? std::min(layers[n].numSrc, layers[n].numDst)
                     : graph.numNodes;
  }
  /// The input index of layer n's row_ptr (col_idx follows it).
  size_t csrInput(size_t n) const { return miniBatch ? 1 + 2 * n : 1; }

  void declare() {
    items = "nodes";
    chunks = false;
    int64_t sources = miniBatch ? layers.front().numSrc : graph.numNodes;
    batchSize = miniBatch ? layers.back().numDst : graph.numNodes;
    inputSpecs.push_back({"x", DType::f32, {sources, inFeatures}});
    for (size_t n = 0; n < (miniBatch ? layers.size() : 1); ++n) {
      std::string p = miniBatch ? prefix(n) : "";
      const Csr &g = graphOf(n);
      inputSpecs.push_back({p + "row_ptr", DType::i64, {g.numNodes + 1}});
      inputSpecs.push_back({p + "col_idx", DType::i64, {g.numEdges()}});
    }
    if (edgeDim)
      inputSpecs.push_back(
          {"edge_attr", DType::f32,
           {static_cast<int64_t>(fileSlots.size()), edgeDim}});
    int64_t in = inFeatures;
    for (size_t n = 0; n < layers.size(); ++n) {
      const GatLayer &l = layers[n];
      std::string p = prefix(n);
      int64_t out = l.concat ? l.heads * l.channels : l.channels;
      int64_t hc = l.heads * l.channels;
      if (l.v2) {
        // GATv2Conv: lin_l (sources, the messages) and lin_r (targets), each
        // with a bias when the layer has one; lin_r is lin_l when shared.
        for (const char *lin : {"lin_l", "lin_r"}) {
          if (l.shareWeights && std::string(lin) == "lin_r")
            continue;
          weightSpecs.push_back({p + lin + ".weight", DType::f32, {hc, in}});
          if (l.bias)
            weightSpecs.push_back({p + lin + ".bias", DType::f32, {hc}});
        }
        weightSpecs.push_back({p + "att", DType::f32, {1, l.heads, l.channels}});
        if (l.edgeDim)
          weightSpecs.push_back({p + "lin_edge.weight", DType::f32, {hc, l.edgeDim}});
      } else {
        if (l.separateLins) {
          weightSpecs.push_back({p + "lin_src.weight", DType::f32, {hc, in}});
          weightSpecs.push_back({p + "lin_dst.weight", DType::f32, {hc, in}});
        } else {
          weightSpecs.push_back({p + "lin.weight", DType::f32, {hc, in}});
        }
        weightSpecs.push_back({p + "att_src", DType::f32, {1, l.heads, l.channels}});
        weightSpecs.push_back({p + "att_dst", DType::f32, {1, l.heads, l.channels}});
        if (l.edgeDim) {
          weightSpecs.push_back({p + "lin_edge.weight", DType::f32, {hc, l.edgeDim}});
          weightSpecs.push_back({p + "att_edge", DType::f32, {1, l.heads, l.channels}});
        }
      }
      if (l.bias)
        weightSpecs.push_back({p + "bias", DType::f32, {out}});
      in = out;
    }
    outputSpec = {"output", DType::f32, {batchSize, in}};
    // attn.gat's alpha (CSR edges, then the self loops it adds); the run
    // reorders it into PyG's edges (finishExtraOutput).
    if (alphaHeads)
      extraOutputSpecs.push_back(
          {"attention_weights", DType::f32,
           {graphOf(alphaLayer()).numEdges() + selfLoopsOf(alphaLayer()),
            alphaHeads}});
  }

  /// The mini-batch form: reads a layer's graph file (relative to the
  /// description; edges src -> dst with src < numSrc, dst < numDst) into its
  /// CSR of numDst rows. The attention-weight layer's edges are kept in
  /// layerEdges for PyG's edge order.
  EdgeList layerEdges;
  llvm::Error readLayerGraph(SpecReader &spec, const std::string &file,
                             GatLayer &l) {
    std::string path = besideDescription(spec, file);
    // Every id below size[0] (the sources), destinations below size[1],
    // checked at the file's line before a size it claims is allocated.
    GraphBounds bounds;
    bounds.nodes = l.numSrc;
    bounds.destinations = l.numDst;
    bounds.nodesName = "size[0]";
    bounds.destinationsName = "size[1]";
    llvm::Expected<EdgeList> edges = readGraph(path, bounds);
    if (!edges)
      return edges.takeError();
    // The CSR over the file's ids and the destinations (not over the
    // sources `size` claims: x's rows, checked as an input), cut to the
    // destinations' rows (the rows past them are empty). About 64 bytes
    // per node, as the graph readers count.
    int64_t nodes = std::max(edges->numNodes, l.numDst);
    if (llvm::Error err = checkBudget(
            static_cast<uint64_t>(nodes + 1) * 64,
            "the CSR of " + llvm::Twine(nodes) +
                " nodes (about 64 bytes per node)"))
      return err;
    edges->numNodes = nodes;
    l.graph = buildInEdgeCsr(*edges);
    l.graph.rowPtr.resize(l.numDst + 1);
    l.graph.numNodes = l.numDst;
    if (l.attentionWeights)
      layerEdges = std::move(*edges);
    return llvm::Error::success();
  }

  /// The layer that returns its attention weights.
  size_t alphaLayer() const {
    for (size_t n = 0; n < layers.size(); ++n)
      if (layers[n].attentionWeights)
        return n;
    return 0;
  }

  /// PyG's edge order for the attention weights, and where attn.gat's alpha
  /// (CSR edges, then one self loop per node) holds each edge. PyG's
  /// GATConv removes existing self loops and appends one per node (with
  /// add_self_loops); the other edges keep the order of its edge_index: the
  /// file's, or, after to_undirected (symmetrize), sorted by (src, dst).
  /// fileSlots: each file edge's CSR slot, found through the row's slots
  /// sorted by source, the k-th copy of a duplicate edge taking the k-th slot
  /// (12 bytes per edge).
  llvm::Error computeFileSlots(const EdgeList &file, const Csr &graph) {
    int64_t n = graph.numNodes, nnz = graph.numEdges();
    std::vector<int64_t> sorted(nnz);
    for (int64_t e = 0; e < nnz; ++e)
      sorted[e] = e;
    for (int64_t i = 0; i < n; ++i)
      std::sort(sorted.begin() + graph.rowPtr[i],
                sorted.begin() + graph.rowPtr[i + 1],
                [&](int64_t x, int64_t y) {
                  return std::make_pair(graph.colIdx[x], x) <
                         std::make_pair(graph.colIdx[y], y);
                });
    std::vector<int32_t> copies(nnz, 0);
    fileSlots.clear();
    for (const Edge &e : file.edges) {
      auto begin = sorted.begin() + graph.rowPtr[e.dst],
           end = sorted.begin() + graph.rowPtr[e.dst + 1];
      auto first = std::lower_bound(
          begin, end, e.src,
          [&](int64_t slot, int64_t src) { return graph.colIdx[slot] < src; });
      int64_t p = first - sorted.begin(), k = p < nnz ? copies[p] : 0;
      if (first + k >= end || graph.colIdx[*(first + k)] != e.src)
        return llvm::createStringError(
            "edge %lld -> %lld of the graph file has no CSR slot (a bug: "
            "please report it with the graph)",
            (long long)e.src, (long long)e.dst);
      ++copies[p];
      fileSlots.push_back(*(first + k));
    }
    return llvm::Error::success();
  }

  /// `graph`: the layer's; `loops`: the self loops its attn.gat adds.
  llvm::Error orderAttentionEdges(const EdgeList &file, const Csr &graph,
                                  int64_t loops, bool symmetrize) {
    int64_t n = graph.numNodes, nnz = graph.numEdges();
    if (symmetrize) {
      // to_undirected's coalesced edges: every CSR slot, by (src, dst).
      std::vector<std::pair<std::pair<int64_t, int64_t>, int64_t>> all;
      all.reserve(nnz);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t e = graph.rowPtr[i]; e < graph.rowPtr[i + 1]; ++e)
          all.push_back({{graph.colIdx[e], i}, e});
      std::sort(all.begin(), all.end());
      for (const auto &[edge, slot] : all)
        if (!(selfLoops && edge.first == edge.second)) {
          pygEdges.push_back(edge);
          alphaRow.push_back(slot);
        }
    } else {
      if (fileSlots.empty())
        if (llvm::Error err = computeFileSlots(file, graph))
          return err;
      for (size_t k = 0; k < file.edges.size(); ++k) {
        const Edge &e = file.edges[k];
        if (selfLoops && e.src == e.dst)
          continue;
        pygEdges.push_back({e.src, e.dst});
        alphaRow.push_back(fileSlots[k]);
      }
    }
    for (int64_t i = 0; i < loops; ++i) {
      pygEdges.push_back({i, i});
      alphaRow.push_back(nnz + i);
    }
    return llvm::Error::success();
  }

  void finishExtraOutput(size_t, HostTensor &alpha) const override {
    HostTensor ordered(DType::f32,
                       {static_cast<int64_t>(alphaRow.size()), alphaHeads});
    for (size_t k = 0; k < alphaRow.size(); ++k)
      std::memcpy(ordered.as<float>() + k * alphaHeads,
                  alpha.as<float>() + alphaRow[k] * alphaHeads,
                  alphaHeads * sizeof(float));
    alpha = std::move(ordered);
  }

  std::optional<HostTensor> attentionEdges() const override {
    if (!alphaHeads)
      return std::nullopt;
    int64_t count = static_cast<int64_t>(pygEdges.size());
    HostTensor t(DType::i64, {2, count});
    for (int64_t k = 0; k < count; ++k) {
      t.setInt(k, pygEdges[k].first);
      t.setInt(count + k, pygEdges[k].second);
    }
    return t;
  }

  llvm::Expected<HostTensor> defaultInput(size_t index,
                                          uint64_t seed) const override {
    // x and edge_attr: seeded; the CSR: the description's graph (each
    // layer's in the mini-batch form).
    if (index == 0 || (!miniBatch && index == 3))
      return Model::defaultInput(index, seed);
    const Csr &g = graphOf(miniBatch ? (index - 1) / 2 : 0);
    const std::vector<int64_t> &src = index % 2 ? g.rowPtr : g.colIdx;
    HostTensor t(DType::i64, {static_cast<int64_t>(src.size())});
    std::copy(src.begin(), src.end(), t.as<int64_t>());
    return t;
  }

  llvm::Error validateInput(size_t index,
                            const HostTensor &t) const override {
    if (index == 0 || (!miniBatch && index == 3))
      return llvm::Error::success();
    // The layer whose CSR this is, its destinations, sources and edges.
    size_t layer = miniBatch ? (index - 1) / 2 : 0;
    const Csr &g = graphOf(layer);
    int64_t n = g.numNodes, nnz = g.numEdges();
    int64_t sources = miniBatch ? layers[layer].numSrc : n;
    std::string rowPtrName = (miniBatch ? prefix(layer) : "") + "row_ptr",
                colIdxName = (miniBatch ? prefix(layer) : "") + "col_idx";
    bool isRowPtr = index % 2 == 1;
    if (isRowPtr) {
      if (t.getInt(0) != 0 || t.getInt(n) != nnz)
        return llvm::createStringError(
            "input '%s' must start at 0 and end at %lld (the edge count), "
            "got %lld .. %lld",
            rowPtrName.c_str(), (long long)nnz, (long long)t.getInt(0),
            (long long)t.getInt(n));
      for (int64_t i = 0; i < n; ++i)
        if (t.getInt(i + 1) < t.getInt(i))
          return llvm::createStringError(
              "input '%s' decreases at index %lld (%lld > %lld)",
              rowPtrName.c_str(), (long long)i, (long long)t.getInt(i),
              (long long)t.getInt(i + 1));
    } else {
      for (int64_t e = 0; e < nnz; ++e)
        if (t.getInt(e) < 0 || t.getInt(e) >= sources)
          return llvm::createStringError(
              "input '%s'[%lld] = %lld is not a %s id in [0, %lld)",
              colIdxName.c_str(), (long long)e, (long long)t.getInt(e),
              miniBatch ? "source node" : "node", (long long)sources);
    }
    // The attention weights and the edge attributes follow the
    // description's graph.
    if ((alphaHeads && layer == alphaLayer()) || edgeDim) {
      const std::vector<int64_t> &own = isRowPtr ? g.rowPtr : g.colIdx;
      for (int64_t k = 0; k < t.numElements(); ++k)
        if (t.getInt(k) != own[k])
          return llvm::createStringError(
              "input '%s' differs from the description's graph at index %lld: "
              "with return_attention_weights or edge_dim, weights and "
              "attributes follow the graph file's edges (give no row_ptr / "
              "col_idx inputs)",
              isRowPtr ? rowPtrName.c_str() : colIdxName.c_str(),
              (long long)k);
    }
    return llvm::Error::success();
  }

  std::vector<std::string> notes() const override {
    std::vector<std::string> lines;
    if (miniBatch)
      for (size_t n = 0; n < layers.size(); ++n)
        lines.push_back(llvm::formatv("conv{0}: {1} -> {2} nodes, {3} in-edges",
                                      n + 1, layers[n].numSrc,
                                      layers[n].numDst,
                                      layers[n].graph.numEdges())
                            .str());
    else
      lines.push_back(llvm::formatv("graph: {0} nodes, {1} in-edges",
                                    graph.numNodes, graph.numEdges())
                          .str());
    if (!order.empty())
      lines.push_back(
          llvm::formatv("reverse Cuthill-McKee: {0}x{0} block density of the "
                        "adjacency {1:P} before, {2:P} after",
                        kDensityBlock, densityBefore, densityAfter)
              .str());
    return lines;
  }

  /// edge_attr from the file's edge order into the CSR's; with
  /// `reorder: rcm`, x's rows and the CSR renumbered by `order`.
  void prepareInputs(std::vector<HostTensor> &inputs) const override {
    if (edgeDim) {
      HostTensor &attr = inputs[3];
      HostTensor csr(DType::f32, attr.shape());
      for (size_t k = 0; k < fileSlots.size(); ++k)
        std::memcpy(csr.as<float>() + fileSlots[k] * edgeDim,
                    attr.as<float>() + k * edgeDim, edgeDim * sizeof(float));
      attr = std::move(csr);
    }
    if (order.empty())
      return;
    int64_t n = graph.numNodes, features = inputs[0].shape()[1];
    HostTensor x(inputs[0].dtype(), inputs[0].shape());
    size_t rowBytes = features * dtypeSize(x.dtype());
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(static_cast<char *>(x.data()) + k * rowBytes,
                  static_cast<const char *>(inputs[0].data()) + order[k] * rowBytes,
                  rowBytes);
    Csr given;
    given.numNodes = n;
    for (int64_t i = 0; i <= n; ++i)
      given.rowPtr.push_back(inputs[1].getInt(i));
    for (int64_t e = 0; e < inputs[2].numElements(); ++e)
      given.colIdx.push_back(inputs[2].getInt(e));
    Csr renumbered = permute(given, order);
    for (int64_t i = 0; i <= n; ++i)
      inputs[1].setInt(i, renumbered.rowPtr[i]);
    for (int64_t e = 0; e < inputs[2].numElements(); ++e)
      inputs[2].setInt(e, renumbered.colIdx[e]);
    inputs[0] = std::move(x);
  }

  /// Puts output rows back in the original numbering.
  void finishOutput(HostTensor &output) const override {
    if (order.empty())
      return;
    HostTensor original(output.dtype(), output.shape());
    size_t rowBytes = output.numBytes() / graph.numNodes;
    for (int64_t k = 0; k < graph.numNodes; ++k)
      std::memcpy(static_cast<char *>(original.data()) + order[k] * rowBytes,
                  static_cast<const char *>(output.data()) + k * rowBytes,
                  rowBytes);
    output = std::move(original);
  }

  bool ignoresUnreadTensor(llvm::StringRef name) const override {
    // A GATv2Conv with share_weights has lin_r = lin_l: PyTorch's state
    // dict stores the one linear under both names.
    for (size_t n = 0; n < layers.size(); ++n)
      if (layers[n].v2 && layers[n].shareWeights &&
          (name == prefix(n) + "lin_r.weight" ||
           name == prefix(n) + "lin_r.bias"))
        return true;
    return false;
  }

  Value buildForward(NetBuilder &net, ValueRange inputs) const override {
    return buildForwardResults(net, inputs)[0];
  }

  SmallVector<Value> buildForwardResults(NetBuilder &net,
                                         ValueRange inputs) const override {
    Value x = inputs[0], alpha;
    // Each layer is a call of a function (NetBuilder::layer: compile time
    // stays flat in depth); layers alike in everything the body reads
    // besides their weights and arguments (the key) share one.
    llvm::StringMap<unsigned> stacks;
    for (size_t n = 0; n < layers.size(); ++n) {
      const GatLayer &l = layers[n];
      int64_t out = l.concat ? l.heads * l.channels : l.channels;
      int64_t alphaRows = graphOf(n).numEdges() + selfLoopsOf(n);
      int64_t rows = graphOf(n).numNodes;
      bool elu = n + 1 < layers.size();
      std::string key;
      llvm::raw_string_ostream(key)
          << l.v2 << l.shareWeights << l.separateLins << l.concat << l.bias
          << l.attentionWeights << elu << " " << l.heads << " " << l.channels
          << " " << l.edgeDim << " " << rows << " " << alphaRows << " "
          << llvm::format("%a", l.negativeSlope);
      std::string stack =
          "gat" + std::to_string(stacks.try_emplace(key, stacks.size())
                                     .first->getValue());
      SmallVector<Value> args{x, inputs[csrInput(n)], inputs[csrInput(n) + 1]};
      if (l.edgeDim)
        args.push_back(inputs[3]);
      SmallVector<Value> results = net.layer(
          stack, n, [&](int64_t k) { return prefix(k); }, args,
          [&](NetBuilder &net, llvm::StringRef prefixRef, ValueRange args) {
            std::string p = prefixRef.str();
            OpBuilder &b = net.builder();
            Location loc = net.getLoc();
            Value x = args[0], rowPtr = args[1], colIdx = args[2];
            Value edgeAttr = l.edgeDim ? args[3] : Value();
            // The mini-batch form's destinations: the first sources (PyG's
            // x_target = x[:size[1]]).
            Value xDst;
            if (miniBatch) {
              int64_t width = cast<RankedTensorType>(x.getType()).getDimSize(1);
              xDst = tensor::ExtractSliceOp::create(
                  b, loc, RankedTensorType::get({rows, width}, net.f32()), x,
                  ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
                  ArrayRef<OpFoldResult>{b.getIndexAttr(rows),
                                         b.getIndexAttr(width)},
                  ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
            }
            auto outType = RankedTensorType::get({rows, out}, net.f32());
            Type alphaType =
                l.attentionWeights
                    ? RankedTensorType::get({alphaRows, l.heads}, net.f32())
                    : Type();
            Value bias = l.bias ? net.weight(p + "bias") : Value();
            auto combine = HeadCombineAttr::get(
                b.getContext(),
                l.concat ? HeadCombine::concat : HeadCombine::mean);
            Operation *layer;
            if (l.v2) {
              std::string right = l.shareWeights ? "lin_l" : "lin_r";
              layer = GatV2Op::create(
                  b, loc, outType, alphaType, x, net.weight(p + "lin_l.weight"),
                  net.weight(p + right + ".weight"),
                  net.reshape(net.weight(p + "att"), {l.heads, l.channels}),
                  rowPtr, colIdx,
                  l.bias ? net.weight(p + "lin_l.bias") : Value(),
                  l.bias ? net.weight(p + right + ".bias") : Value(), bias,
                  xDst, edgeAttr,
                  l.edgeDim ? net.weight(p + "lin_edge.weight") : Value(),
                  b.getF64FloatAttr(l.negativeSlope), combine,
                  b.getBoolAttr(selfLoops));
            } else {
              // lin_src / lin_dst: the destinations through their own
              // weight (a bipartite op, also over one node set); one lin
              // otherwise.
              Value w = net.weight(p + (l.separateLins ? "lin_src.weight"
                                                       : "lin.weight"));
              Value wDst =
                  l.separateLins ? net.weight(p + "lin_dst.weight") : w;
              if (l.separateLins && !xDst)
                xDst = x;
              layer = GatOp::create(
                  b, loc, outType, alphaType, x, w,
                  net.reshape(net.weight(p + "att_src"), {l.heads, l.channels}),
                  net.reshape(net.weight(p + "att_dst"), {l.heads, l.channels}),
                  rowPtr, colIdx, bias, edgeAttr,
                  l.edgeDim ? net.weight(p + "lin_edge.weight") : Value(),
                  l.edgeDim ? net.reshape(net.weight(p + "att_edge"),
                                          {l.heads, l.channels})
                            : Value(),
                  xDst, xDst ? wDst : Value(),
                  b.getF64FloatAttr(l.negativeSlope), combine,
                  b.getBoolAttr(selfLoops));
            }
            SmallVector<Value> results{elu ? net.elu(layer->getResult(0))
                                           : layer->getResult(0)};
            if (l.attentionWeights)
              results.push_back(layer->getResult(1));
            return results;
          });
      x = results[0];
      if (l.attentionWeights)
        alpha = results[1];
    }
    SmallVector<Value> results{x};
    if (alpha)
      results.push_back(alpha);
    return results;
  }
};

} // namespace

/// A description's number as written: integers without a fraction.
static std::string showNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::unique_ptr<Model> mlir::attn::parseGat(SpecReader &spec,
                                            const ModelOverrides &) {
  auto m = std::make_unique<Gat>();
  // The mini-batch form: each layer has its own graph and no top-level one.
  // (A description without either misses its top-level 'graph'.)
  m->miniBatch = false;
  if (!spec.has("graph"))
    if (const llvm::json::Array *layers = spec.array("layers", false))
      for (const llvm::json::Value &layer : *layers) {
        if (const llvm::json::Object *obj = layer.getAsObject())
          m->miniBatch |= obj->get("graph") || obj->get("size");
        else
          m->miniBatch = true; // the layers' loop names the bad element
      }
  std::string graphPath = m->miniBatch ? "" : spec.string("graph");
  bool symmetrize = spec.boolean("symmetrize", false);
  m->inFeatures = spec.integer("in_features");
  m->negativeSlope = spec.number("negative_slope", 0.2);
  spec.check(std::abs(m->negativeSlope) <= std::numeric_limits<float>::max(),
             "negative_slope",
             "expected a slope in f32's range (|slope| <= 3.4e38)");
  m->selfLoops = spec.boolean("add_self_loops", true);
  bool rcm = spec.choice("reorder", {"none", "rcm"}, llvm::StringRef("none")) == "rcm";
  // The mini-batch form's layer graphs: the layer, its path, its file.
  struct LayerGraph {
    const llvm::json::Object *object;
    std::string where, file;
  };
  std::vector<LayerGraph> layerGraphs;
  if (const llvm::json::Array *layers = spec.array("layers", true)) {
    spec.check(!layers->empty(), "layers", "expected at least one layer");
    spec.check(layers->size() <= size_t(SpecReader::kMaxLayers), "layers",
               "expected at most " + llvm::Twine(SpecReader::kMaxLayers) +
                   " layers, got " + llvm::Twine(layers->size()));
    for (size_t i = 0; i < layers->size() && !spec.failed(); ++i) {
      const llvm::json::Object *obj = (*layers)[i].getAsObject();
      std::string where = "layers[" + std::to_string(i) + "]";
      if (!obj) {
        spec.fail("layers", "element " + llvm::Twine(i) + " is not an object");
        break;
      }
      SpecReader layer(spec.getSource(), *obj, where);
      GatLayer l;
      l.heads = layer.integer("heads", 1);
      l.channels = layer.integer("channels");
      l.concat = layer.boolean("concat", true);
      l.bias = layer.boolean("bias", true);
      l.negativeSlope = layer.number("negative_slope", m->negativeSlope);
      layer.check(std::abs(l.negativeSlope) <=
                      std::numeric_limits<float>::max(),
                  "negative_slope",
                  "expected a slope in f32's range (|slope| <= 3.4e38)");
      l.v2 = layer.choice("conv", {"GATConv", "GATv2Conv"},
                          llvm::StringRef("GATConv")) == "GATv2Conv";
      if (l.v2)
        l.shareWeights = layer.boolean("share_weights", false);
      if (layer.has("edge_dim")) {
        l.edgeDim = layer.integer("edge_dim");
        layer.check(m->edgeDim == 0 || m->edgeDim == l.edgeDim, "edge_dim",
                    "every layer reads the one edge_attr input: edge_dim " +
                        llvm::Twine(l.edgeDim) + " differs from an earlier " +
                        llvm::Twine(m->edgeDim));
        m->edgeDim = l.edgeDim;
      }
      l.attentionWeights = layer.boolean("return_attention_weights", false);
      if (l.attentionWeights) {
        layer.check(m->alphaHeads == 0, "return_attention_weights",
                    "only one layer may return its attention weights");
        m->alphaHeads = l.heads;
      }
      // PyG's in_channels: a pair gives GATConv lin_src / lin_dst; both
      // widths are the layer's input width (the destinations are sources).
      int64_t width = i == 0 ? m->inFeatures
                             : (m->layers.back().concat
                                    ? m->layers.back().heads *
                                          m->layers.back().channels
                                    : m->layers.back().channels);
      if (layer.has("in_channels")) {
        const llvm::json::Value *given = obj->get("in_channels");
        std::vector<double> in =
            given && given->getAsArray()
                ? layer.numbers("in_channels")
                : std::vector<double>{double(layer.integer("in_channels"))};
        bool pair = in.size() == 2;
        layer.check(in.size() == 1 || pair, "in_channels",
                    "expected one width or a pair [source, destination]");
        for (double w : in)
          layer.check(w == double(width), "in_channels",
                      "expected the layer's input width " + llvm::Twine(width) +
                          ", got " + llvm::Twine(showNumber(w)));
        layer.check(!pair || !l.v2, "in_channels",
                    "a pair names GATConv's lin_src / lin_dst; GATv2Conv has "
                    "lin_l / lin_r (share_weights) for it");
        l.separateLins = pair;
      }
      // The mini-batch form: the layer's bipartite graph and its size.
      if (m->miniBatch && !layer.failed()) {
        std::string file = layer.string("graph");
        std::vector<double> size = layer.numbers("size");
        if (!layer.failed() && size.size() != 2)
          layer.fail("size", "expected [sources, destinations] (PyG's size)");
        for (double v : size)
          layer.check(v >= 1 && v <= double(SpecReader::kMaxInteger) &&
                          v == std::floor(v),
                      "size",
                      "expected node counts in [1, " +
                          llvm::Twine(SpecReader::kMaxInteger) + "], got " +
                          llvm::Twine(showNumber(v)));
        if (!layer.failed()) {
          l.numSrc = static_cast<int64_t>(size[0]);
          l.numDst = static_cast<int64_t>(size[1]);
          int64_t expected = i == 0 ? 0 : m->layers.back().numDst;
          layer.check(i == 0 || l.numSrc == expected, "size",
                      "the sources " + llvm::Twine(l.numSrc) +
                          " must be the previous layer's destinations " +
                          llvm::Twine(expected));
          layer.check(l.numDst <= l.numSrc, "size",
                      "the destinations " + llvm::Twine(l.numDst) +
                          " must be the first of the " + llvm::Twine(l.numSrc) +
                          " sources (x_dst = x[:size[1]]), so at most as many");
        }
        // Read once every key is known (below).
        layerGraphs.push_back({obj, where, file});
      } else if (layer.has("graph") || layer.has("size")) {
        layer.fail(layer.has("graph") ? "graph" : "size",
                   "per-layer graphs (the mini-batch form) need every layer to "
                   "have one and no top-level 'graph'");
      }
      llvm::consumeError(layer.finish());
      m->layers.push_back(l);
    }
  }
  if (spec.failed())
    return m;
  if (m->miniBatch) {
    for (const char *key : {"symmetrize", "num_nodes"})
      spec.check(!spec.has(key), key,
                 "not with per-layer graphs (the mini-batch form)");
    spec.check(!rcm, "reorder",
               "'rcm' is not supported with per-layer graphs (the mini-batch "
               "form)");
    spec.check(m->edgeDim == 0, "layers",
               "edge_dim is not supported with per-layer graphs (the "
               "mini-batch form)");
  }
  // Every key is read: an unknown one is reported before any graph file.
  std::optional<int64_t> numNodes;
  if (!m->miniBatch && spec.has("num_nodes"))
    numNodes = spec.integer("num_nodes");
  llvm::consumeError(spec.finish());
  if (spec.failed())
    return m;
  if (m->miniBatch) {
    for (auto [k, g] : llvm::enumerate(layerGraphs))
      if (llvm::Error err = m->readLayerGraph(spec, g.file, m->layers[k])) {
        SpecReader(spec.getSource(), *g.object, g.where)
            .fail("graph", llvm::toString(std::move(err)));
        return m;
      }
    if (m->alphaHeads && !spec.failed()) {
      size_t n = m->alphaLayer();
      if (llvm::Error err = m->orderAttentionEdges(
              m->layerEdges, m->layers[n].graph, m->selfLoopsOf(n), false))
        spec.fail("layers", llvm::toString(std::move(err)));
    }
    m->layerEdges = {};
    if (!spec.failed())
      m->declare();
    return m;
  }
  llvm::Expected<EdgeList> edges = readGraph(besideDescription(spec, graphPath));
  if (!edges) {
    spec.fail("graph", llvm::toString(edges.takeError()));
    return m;
  }
  // num_nodes (PyG's): nodes without edges after the largest id are kept.
  if (numNodes) {
    int64_t want = *numNodes;
    if (want < edges->numNodes) {
      spec.fail("num_nodes", "num_nodes " + llvm::Twine(want) +
                                 " is less than the graph's " +
                                 llvm::Twine(edges->numNodes) +
                                 " nodes (its largest id + 1)");
      return m;
    }
    // About 64 bytes per node (the CSR, the reorderings), as the graph
    // readers count, before anything of that size is allocated.
    if (llvm::Error err = checkBudget(
            static_cast<uint64_t>(want + 1) * 64,
            "num_nodes " + llvm::Twine(want) + " (about 64 bytes per node)")) {
      spec.fail("num_nodes", llvm::toString(std::move(err)));
      return m;
    }
    edges->numNodes = want;
  }
  CsrOptions options;
  options.symmetrize = symmetrize;
  m->graph = buildInEdgeCsr(*edges, options);
  spec.check(m->graph.numNodes > 0, "graph", "the graph has no nodes");
  if (m->edgeDim && !spec.failed()) {
    spec.check(!symmetrize && !rcm, "edge_dim",
               "edge attributes follow the graph file's edges: not with "
               "symmetrize or reorder: rcm");
    if (!spec.failed())
      if (llvm::Error err = m->computeFileSlots(*edges, m->graph))
        spec.fail("graph", llvm::toString(std::move(err)));
  }
  if (m->alphaHeads) {
    spec.check(!rcm, "reorder",
               "'rcm' with return_attention_weights is not supported (the "
               "weights follow the graph file's edges)");
    if (llvm::Error err = m->orderAttentionEdges(*edges, m->graph,
                                                 m->selfLoopsOf(0), symmetrize))
      spec.fail("graph", llvm::toString(std::move(err)));
  }
  if (rcm && m->graph.numNodes > 0) {
    m->order = reverseCuthillMcKee(m->graph);
    m->densityBefore = blockDensity(m->graph, Gat::kDensityBlock);
    m->densityAfter =
        blockDensity(permute(m->graph, m->order), Gat::kDensityBlock);
  }
  m->declare();
  return m;
}
