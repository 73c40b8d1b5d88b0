//===- AttnOps.cpp - attn dialect operations ------------------------------===//
//
// Verifiers: one clear message per malformed op. Dynamic dimensions are
// accepted everywhere and checked only where both sides are static.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "dialect/MaskKinds.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "dialect/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

static bool sameDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Product / sum of two dims that stays dynamic when either is dynamic;
/// nullopt when the static result passes int64 (no dimension is that large:
/// the verifier says so instead of comparing a wrapped value).
static std::optional<int64_t> mulDims(int64_t a, int64_t b) {
  if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b))
    return ShapedType::kDynamic;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

static std::optional<int64_t> addDims(int64_t a, int64_t b) {
  if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b))
    return ShapedType::kDynamic;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r) || ShapedType::isDynamic(r))
    return std::nullopt;
  return r;
}

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (shape.empty())
    os << "scalar";
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return s;
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Checks that `value` has exactly `expected` as shape (dynamic dims match
/// anything). `what` names the operand and `layout` spells the expected shape.
static LogicalResult expectShape(Operation *op, Value value, StringRef what,
                                 StringRef layout, ArrayRef<int64_t> expected) {
  ArrayRef<int64_t> shape = shapeOf(value);
  bool ok = shape.size() == expected.size();
  for (size_t i = 0; ok && i < shape.size(); ++i)
    ok = sameDim(shape[i], expected[i]);
  if (ok)
    return success();
  return op->emitOpError() << "expects " << what << " of shape " << layout
                           << " = " << formatShape(expected) << ", got "
                           << formatShape(shape);
}

static LogicalResult expectRank(Operation *op, Value value, StringRef what,
                                unsigned rank, StringRef layout) {
  unsigned actual = shapeOf(value).size();
  if (actual == rank)
    return success();
  return op->emitOpError() << "expects " << what << " to be rank " << rank
                           << " (" << layout << "), got rank " << actual;
}

/// Checks that every value has a float element type equal to `elemType`.
static LogicalResult
expectElementType(Operation *op, Type elemType,
                  ArrayRef<std::pair<StringRef, Value>> values) {
  if (!isa<FloatType>(elemType))
    return op->emitOpError()
           << "expects a floating-point element type, got " << elemType;
  for (auto [name, value] : values) {
    if (!value)
      continue;
    Type t = cast<RankedTensorType>(value.getType()).getElementType();
    if (t != elemType)
      return op->emitOpError() << "expects " << name << " to have element type "
                               << elemType << ", got " << t;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Mask options shared by attn.sdpa and attn.mha
//===----------------------------------------------------------------------===//

namespace {
/// The attention sizes the mask operands are checked against.
struct AttentionDims {
  int64_t batch, heads, lq, lk, headDim;
  Type elemType;
};
} // namespace

static std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// A score_mod / mask_mod region: one block with `argTypes`, side-effect
/// free ops, ending in attn.yield of `yieldType`. The last four arguments
/// are b, h, q_idx, kv_idx, which range below `indexBounds` (B, H, Lq, Lk;
/// dynamic: unknown): a tensor read at one of them directly must have that
/// many entries in the dimension it indexes, so that such reads are in
/// bounds by construction (indices computed from data are clamped by the
/// lowerings instead).
static LogicalResult verifyModRegion(Operation *op, Region &region,
                                     StringRef name, ArrayRef<Type> argTypes,
                                     StringRef argsText, Type yieldType,
                                     ArrayRef<int64_t> indexBounds) {
  if (region.empty())
    return success();
  if (!region.hasOneBlock())
    return op->emitOpError() << name << " must have one block, got "
                             << llvm::range_size(region.getBlocks());
  Block &block = region.front();
  if (block.getArgumentTypes() != TypeRange(argTypes)) {
    std::string got;
    llvm::raw_string_ostream os(got);
    llvm::interleaveComma(block.getArgumentTypes(), os);
    return op->emitOpError() << name << " takes " << argsText << ", got ("
                             << got << ")";
  }
  // An empty block has no terminator to ask for (attn-fuzz-ir found
  // getTerminator() reading past an empty block's op list).
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(&block.back());
  if (!yield)
    return op->emitOpError() << name << " must end with attn.yield";
  if (yield.getValue().getType() != yieldType)
    return op->emitOpError() << name << " must yield " << yieldType << ", got "
                             << yield.getValue().getType();
  WalkResult effects = region.walk([&](Operation *inner) {
    if (inner == yield || isMemoryEffectFree(inner))
      return WalkResult::advance();
    op->emitOpError() << name << " must be free of side effects, got '"
                      << inner->getName() << "'";
    return WalkResult::interrupt();
  });
  if (effects.wasInterrupted())
    return failure();
  static const char *kIndexNames[] = {"b", "h", "q_idx", "kv_idx"};
  static const char *kBoundNames[] = {"B", "H", "Lq", "Lk"};
  unsigned firstIndex = block.getNumArguments() - 4;
  WalkResult bounds = region.walk([&](tensor::ExtractOp x) {
    auto type = cast<RankedTensorType>(x.getTensor().getType());
    if (llvm::is_contained(type.getShape(), 0)) {
      x.emitOpError() << "in " << name << " reads " << type
                      << ", which has no element";
      return WalkResult::interrupt();
    }
    for (auto [d, idx] : llvm::enumerate(x.getIndices())) {
      auto arg = dyn_cast<BlockArgument>(idx);
      if (!arg || arg.getOwner() != &block || arg.getArgNumber() < firstIndex)
        continue;
      unsigned k = arg.getArgNumber() - firstIndex;
      int64_t bound = indexBounds[k], size = type.getDimSize(d);
      if (ShapedType::isDynamic(bound) || ShapedType::isDynamic(size) ||
          size >= bound)
        continue;
      x.emitOpError() << "in " << name << " reads dim " << d << " of "
                      << type << " at " << kIndexNames[k]
                      << ", which reaches " << kBoundNames[k] << " - 1 = "
                      << bound - 1 << ": the dimension needs at least "
                      << bound << " entries";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(bounds.wasInterrupted());
}

template <typename OpTy>
static LogicalResult verifyMaskOptions(OpTy op, const AttentionDims &d) {
  Operation *o = op.getOperation();
  MaskKind mask = op.getMask();

  // The kind's parameters (window_left, window_right, dilation), as its
  // definition in MaskKinds.cpp says.
  if (failed(verifyMaskParamAttrs(o)) ||
      failed(verifyMaskParams(MaskParams::of(o),
                              [&] { return op.emitOpError(); })))
    return failure();

  // The graph mask and its CSR operands come together.
  bool hasGraph = op.getRowPtr() || op.getColIdx();
  if (mask == MaskKind::graph && !(op.getRowPtr() && op.getColIdx()))
    return op.emitOpError(
        "mask 'graph' requires the graph(row_ptr, col_idx) operands");
  if (mask != MaskKind::graph && hasGraph)
    return op.emitOpError() << "graph(row_ptr, col_idx) operands require mask "
                               "'graph', got mask '"
                            << stringifyMaskKind(mask) << "'";
  if (mask == MaskKind::graph) {
    std::optional<int64_t> rows = addDims(d.lq, 1);
    if (!rows)
      return op.emitOpError() << "Lq + 1 (row_ptr's length) overflows int64 "
                                 "for Lq = "
                              << d.lq;
    if (failed(expectShape(o, op.getRowPtr(), "row_ptr", "Lq+1", {*rows})) ||
        failed(expectRank(o, op.getColIdx(), "col_idx", 1, "nnz")))
      return failure();
  }

  if (Value len = op.getKvLengths())
    if (failed(expectShape(o, len, "kv_lengths", "B", {d.batch})))
      return failure();
  if (op.getAlign() == Align::per_sequence && !op.getKvLengths())
    return op.emitOpError("align #attn.align<per_sequence> places each "
                          "sequence's queries before its own length: it "
                          "needs the kv_lengths operand");

  if (Value bias = op.getBias()) {
    if (failed(expectRank(o, bias, "bias", 4,
                          "B x H x Lq x Lk, each dim full or 1")))
      return failure();
    ArrayRef<int64_t> shape = shapeOf(bias);
    int64_t full[4] = {d.batch, d.heads, d.lq, d.lk};
    for (int i = 0; i < 4; ++i)
      if (shape[i] != 1 && !sameDim(shape[i], full[i]))
        return op.emitOpError()
               << "expects bias dims to be 1 or match B x H x Lq x Lk = "
               << formatShape(full) << ", got " << formatShape(shape);
  }

  // Relative-position tables need the clip distance, and vice versa.
  std::optional<uint64_t> clip = op.getRelClip();
  if ((op.getRelBias() || op.getRelKey()) && !clip)
    return op.emitOpError("rel_bias/rel_key operands require 'rel_clip'");
  if (clip && !op.getRelBias() && !op.getRelKey())
    return op.emitOpError("'rel_clip' requires a rel_bias or rel_key operand");
  if (clip) {
    int64_t r = static_cast<int64_t>(*clip);
    if (r < 0 || r > (std::numeric_limits<int64_t>::max() - 1) / 2)
      return op.emitOpError()
             << "'rel_clip' must be in [0, 2^62 - 1] (2*rel_clip+1 is a "
                "dimension), got "
             << r;
    if (Value t = op.getRelBias())
      if (failed(expectShape(o, t, "rel_bias", "H x (2*rel_clip+1)",
                             {d.heads, 2 * r + 1})))
        return failure();
    if (Value t = op.getRelKey())
      if (failed(expectShape(o, t, "rel_key", "(2*rel_clip+1) x E",
                             {2 * r + 1, d.headDim})))
        return failure();
  }

  if (Value slopes = op.getAlibiSlopes())
    if (failed(expectShape(o, slopes, "alibi slopes", "H", {d.heads})))
      return failure();

  if (std::optional<APFloat> scale = op.getScale()) {
    double s = scale->convertToDouble();
    // The kernels compute in f32: a scale outside its normal range would
    // be 0 or inf there (and not in the reference's doubles).
    if (!std::isfinite(s) || s < std::numeric_limits<float>::min() ||
        s > std::numeric_limits<float>::max())
      return op.emitOpError()
             << "'scale' must be a positive number in f32's normal range "
                "[2^-126, 3.4e38] (the kernels compute in f32), got "
             << s;
  }

  if (failed(expectElementType(o, d.elemType,
                               {{"bias", op.getBias()},
                                {"rel_bias", op.getRelBias()},
                                {"rel_key", op.getRelKey()},
                                {"alibi slopes", op.getAlibiSlopes()}})))
    return failure();
  if (op.getRowPtr() && op.getColIdx() &&
      cast<RankedTensorType>(op.getRowPtr().getType()).getElementType() !=
          cast<RankedTensorType>(op.getColIdx().getType()).getElementType())
    return op.emitOpError("expects row_ptr and col_idx of one integer type");

  // Regions: the score in the computation type (f32 for 16-bit operands),
  // and the indices (b, h, q_idx, kv_idx).
  Builder b(op.getContext());
  Type compute = d.elemType && (d.elemType.isF16() || d.elemType.isBF16())
                     ? Type(b.getF32Type())
                     : d.elemType;
  Type index = b.getIndexType();
  if (compute &&
      failed(verifyModRegion(o, op.getScoreMod(), "score_mod",
                             {compute, index, index, index, index},
                             "(score: " + typeText(compute) +
                                 ", b, h, q_idx, kv_idx: index)",
                             compute, {d.batch, d.heads, d.lq, d.lk})))
    return failure();
  if (failed(verifyModRegion(o, op.getMaskMod(), "mask_mod",
                             {index, index, index, index},
                             "(b, h, q_idx, kv_idx: index)",
                             b.getI1Type(), {d.batch, d.heads, d.lq, d.lk})))
    return failure();
  return success();
}

/// Zero-size dimensions are not supported (the tiled lowerings would divide
/// by them): one error naming the operand and its type.
static LogicalResult
expectNoZeroDims(Operation *op,
                 ArrayRef<std::pair<StringRef, Value>> operands) {
  for (auto [name, v] : operands)
    if (v && llvm::is_contained(cast<ShapedType>(v.getType()).getShape(), 0))
      return op->emitOpError()
             << "expects " << name
             << " without zero-size dimensions (empty attention is not "
                "supported), got "
             << v.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

double SdpaOp::getEffectiveScale() {
  if (std::optional<APFloat> s = getScale())
    return s->convertToDouble();
  int64_t e = shapeOf(getQuery())[3];
  return 1.0 / std::sqrt(static_cast<double>(e));
}

LogicalResult SdpaOp::verify() {
  Operation *op = getOperation();
  if (failed(expectRank(op, getQuery(), "query", 4, "B x H x Lq x E")) ||
      failed(expectRank(op, getKey(), "key", 4, "B x Hkv x Lk x E")) ||
      failed(expectRank(op, getValue(), "value", 4, "B x Hkv x Lk x Ev")) ||
      failed(expectNoZeroDims(op, {{"query", getQuery()},
                                   {"key", getKey()},
                                   {"value", getValue()}})))
    return failure();

  Type elemType = getQuery().getType().getElementType();
  if (failed(expectElementType(op, elemType,
                               {{"key", getKey()},
                                {"value", getValue()},
                                {"output", getOutput()},
                                {"lse", getLse()}})))
    return failure();

  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()),
                    v = shapeOf(getValue());
  if (!sameDim(q[0], k[0]) || !sameDim(q[0], v[0]))
    return emitOpError() << "expects one batch size, got query " << q[0]
                         << ", key " << k[0] << ", value " << v[0];
  if (!sameDim(k[1], v[1]) || !sameDim(k[2], v[2]))
    return emitOpError() << "expects key and value with the same heads and "
                            "length (Hkv x Lk), got key "
                         << formatShape(k) << " and value " << formatShape(v);
  if (!sameDim(q[3], k[3]))
    return emitOpError() << "expects query and key with one head dim E, got "
                         << q[3] << " and " << k[3];
  if (!ShapedType::isDynamic(q[1]) && !ShapedType::isDynamic(k[1]) &&
      (k[1] == 0 || q[1] % k[1] != 0))
    return emitOpError() << "expects key/value heads (" << k[1]
                         << ") to divide query heads (" << q[1] << ")";

  if (failed(expectShape(op, getOutput(), "output", "B x H x Lq x Ev",
                         {q[0], q[1], q[2], v[3]})))
    return failure();
  if (getLse() && failed(expectShape(op, getLse(), "lse", "B x H x Lq",
                                     {q[0], q[1], q[2]})))
    return failure();

  return verifyMaskOptions(*this, {q[0], q[1], q[2], k[2], q[3], elemType});
}

//===----------------------------------------------------------------------===//
// MhaOp
//===----------------------------------------------------------------------===//

int64_t MhaOp::getKvHeads() {
  return getNumKvHeads() ? static_cast<int64_t>(*getNumKvHeads())
                         : static_cast<int64_t>(getNumHeads());
}

LogicalResult MhaOp::verify() {
  Operation *op = getOperation();
  if (failed(expectRank(op, getQuery(), "query", 3, "B x Lq x D")) ||
      failed(expectRank(op, getKey(), "key", 3, "B x Lk x D")) ||
      failed(expectRank(op, getValue(), "value", 3, "B x Lk x D")) ||
      failed(expectNoZeroDims(op, {{"query", getQuery()},
                                   {"key", getKey()},
                                   {"value", getValue()}})))
    return failure();

  Type elemType = cast<RankedTensorType>(getQuery().getType()).getElementType();
  if (failed(expectElementType(op, elemType,
                               {{"key", getKey()},
                                {"value", getValue()},
                                {"in_proj_weight", getInProjWeight()},
                                {"in_proj_bias", getInProjBias()},
                                {"out_proj_weight", getOutProjWeight()},
                                {"out_proj_bias", getOutProjBias()},
                                {"output", getOutput()}})))
    return failure();

  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey());
  int64_t b = q[0], lq = q[1], dim = q[2], lk = k[1];
  if (ShapedType::isDynamic(dim))
    return emitOpError("expects a static model dim D (query dim 2)");
  if (failed(expectShape(op, getKey(), "key", "B x Lk x D", {b, lk, dim})) ||
      failed(expectShape(op, getValue(), "value", "B x Lk x D", {b, lk, dim})))
    return failure();

  int64_t heads = getNumHeads(), kvHeads = getKvHeads();
  if (heads <= 0 || kvHeads <= 0)
    return emitOpError() << "expects num_heads and num_kv_heads > 0, got "
                         << heads << " and " << kvHeads;
  if (dim % heads != 0)
    return emitOpError() << "expects num_heads (" << heads
                         << ") to divide the model dim D (" << dim << ")";
  if (heads % kvHeads != 0)
    return emitOpError() << "expects num_kv_heads (" << kvHeads
                         << ") to divide num_heads (" << heads << ")";

  int64_t headDim = dim / heads, packed;
  if (__builtin_mul_overflow(kvHeads, headDim, &packed) ||
      __builtin_mul_overflow(packed, 2, &packed) ||
      __builtin_add_overflow(packed, dim, &packed))
    return emitOpError() << "D + 2*Hkv*hd overflows int64 for D = " << dim
                         << ", Hkv = " << kvHeads;
  if (failed(expectShape(op, getInProjWeight(), "in_proj_weight",
                         "(D + 2*Hkv*hd) x D", {packed, dim})) ||
      (getInProjBias() &&
       failed(expectShape(op, getInProjBias(), "in_proj_bias", "D + 2*Hkv*hd",
                          {packed}))) ||
      failed(expectShape(op, getOutProjWeight(), "out_proj_weight", "D x D",
                         {dim, dim})) ||
      (getOutProjBias() && failed(expectShape(op, getOutProjBias(),
                                              "out_proj_bias", "D", {dim}))) ||
      failed(
          expectShape(op, getOutput(), "output", "B x Lq x D", {b, lq, dim})))
    return failure();

  return verifyMaskOptions(*this, {b, heads, lq, lk, headDim, elemType});
}

//===----------------------------------------------------------------------===//
// GatOp
//===----------------------------------------------------------------------===//

/// The operands and attributes attn.gat and attn.gatv2 share.
struct GatLayerOperands {
  Value x, rowPtr, colIdx, bias, output, alpha;
  /// The projection weights of the sources (H*C x F) and of the
  /// destinations (H*C x Fd: F unless bipartite), their optional biases
  /// (H*C) and the attention vectors (H x C), by name.
  SmallVector<std::pair<StringRef, Value>, 2> weights, dstWeights,
      weightBiases, atts;
  /// A bipartite layer's destination features (Nd x Fd), null otherwise.
  Value xDst;
  bool concat = false, addSelfLoops = false;
  double slope = 0;
  /// PyG's edge_dim: per-edge attributes, their projection and (GATConv's
  /// scalar edge term, `edgeAttention`) attention.
  Value edgeAttr, weightEdge, attEdge;
  bool edgeAttention = true;
};

static LogicalResult verifyGatLayer(Operation *op, const GatLayerOperands &g) {
  if (failed(expectRank(op, g.x, "x", 2, g.xDst ? "Ns x F" : "N x F")) ||
      (g.xDst && failed(expectRank(op, g.xDst, "x_dst", 2, "Nd x Fd"))))
    return failure();
  StringRef dstShape = g.xDst ? "H*C x Fd" : "H*C x F";
  for (auto [name, w] : g.weights)
    if (failed(expectRank(op, w, name, 2, "H*C x F")))
      return failure();
  for (auto [name, w] : g.dstWeights)
    if (failed(expectRank(op, w, name, 2, dstShape)))
      return failure();
  for (auto [name, a] : g.atts)
    if (failed(expectRank(op, a, name, 2, "H x C")))
      return failure();
  if (failed(expectNoZeroDims(op, {{"x", g.x},
                                   g.weights.front(),
                                   g.atts.front()})) ||
      (g.xDst && failed(expectNoZeroDims(op, {{"x_dst", g.xDst}}))))
    return failure();

  Type elemType = cast<RankedTensorType>(g.x.getType()).getElementType();
  SmallVector<std::pair<StringRef, Value>> typed(g.weights);
  typed.append(g.dstWeights.begin(), g.dstWeights.end());
  typed.push_back({"x_dst", g.xDst});
  typed.append(g.weightBiases.begin(), g.weightBiases.end());
  typed.append(g.atts.begin(), g.atts.end());
  typed.append({{"bias", g.bias}, {"output", g.output}, {"alpha", g.alpha}});
  if (failed(expectElementType(op, elemType, typed)))
    return failure();

  ArrayRef<int64_t> x = shapeOf(g.x), att = shapeOf(g.atts.front().second);
  ArrayRef<int64_t> xDst = g.xDst ? shapeOf(g.xDst) : x;
  // n: the destinations (the CSR's rows, the output's); the sources are x's
  // rows, x's alone unless bipartite.
  int64_t n = xDst[0], f = x[1], fDst = xDst[1], heads = att[0],
          channels = att[1];
  int64_t loops = g.addSelfLoops ? std::min(x[0], n) : 0;
  StringRef rowsName = g.xDst ? "Nd+1" : "N+1";
  std::optional<int64_t> headsTimesChannels = mulDims(heads, channels),
                         rows = addDims(n, 1);
  if (!headsTimesChannels)
    return op->emitOpError() << "H*C = " << heads << " * " << channels
                             << " overflows int64";
  if (!rows)
    return op->emitOpError()
           << "N + 1 (row_ptr's length) overflows int64 for N = " << n;
  int64_t hc = *headsTimesChannels;
  int64_t outDim = g.concat ? hc : channels;
  for (auto [name, a] : ArrayRef(g.atts).drop_front())
    if (failed(expectShape(op, a, name, "H x C", {heads, channels})))
      return failure();
  for (auto [name, w] : g.weights)
    if (failed(expectShape(op, w, name, "H*C x F", {hc, f})))
      return failure();
  for (auto [name, w] : g.dstWeights)
    if (failed(expectShape(op, w, name, dstShape, {hc, fDst})))
      return failure();
  for (auto [name, wb] : g.weightBiases)
    if (wb && failed(expectShape(op, wb, name, "H*C", {hc})))
      return failure();
  if (failed(expectShape(op, g.rowPtr, "row_ptr", rowsName, {*rows})) ||
      failed(expectRank(op, g.colIdx, "col_idx", 1, "nnz")) ||
      (g.bias && failed(expectShape(op, g.bias, "bias", g.concat ? "H*C" : "C",
                                    {outDim}))) ||
      failed(expectShape(op, g.output, "output",
                         g.xDst ? (g.concat ? "Nd x H*C" : "Nd x C")
                                : (g.concat ? "N x H*C" : "N x C"),
                         {n, outDim})))
    return failure();
  if (g.alpha) {
    // One coefficient per CSR edge and head, then one per added self loop.
    int64_t nnz = shapeOf(g.colIdx)[0];
    std::optional<int64_t> edges = addDims(nnz, loops);
    if (!edges)
      return op->emitOpError() << "nnz + N (alpha's rows) overflows int64";
    if (failed(expectShape(op, g.alpha, "alpha",
                           !g.addSelfLoops ? "nnz x H"
                           : g.xDst        ? "nnz+min(Ns,Nd) x H"
                                           : "nnz+N x H",
                           {*edges, heads})))
      return failure();
  }

  if (g.edgeAttr || g.weightEdge || g.attEdge) {
    if (!g.edgeAttr || !g.weightEdge || (g.edgeAttention && !g.attEdge))
      return op->emitOpError(g.edgeAttention
                                 ? "expects edge_attr, weight_edge and "
                                   "att_edge together"
                                 : "expects edge_attr and weight_edge "
                                   "together");
    if (failed(expectRank(op, g.edgeAttr, "edge_attr", 2, "nnz x D")) ||
        failed(expectElementType(op, elemType,
                                 {{"edge_attr", g.edgeAttr},
                                  {"weight_edge", g.weightEdge},
                                  {"att_edge", g.attEdge}})))
      return failure();
    int64_t nnz = shapeOf(g.colIdx)[0], dim = shapeOf(g.edgeAttr)[1];
    if (failed(expectShape(op, g.edgeAttr, "edge_attr", "nnz x D",
                           {nnz, dim})) ||
        failed(expectShape(op, g.weightEdge, "weight_edge", "H*C x D",
                           {hc, dim})) ||
        (g.attEdge && failed(expectShape(op, g.attEdge, "att_edge", "H x C",
                                         {heads, channels}))))
      return failure();
  }

  if (cast<RankedTensorType>(g.rowPtr.getType()).getElementType() !=
      cast<RankedTensorType>(g.colIdx.getType()).getElementType())
    return op->emitOpError("expects row_ptr and col_idx of one integer type");
  if (!std::isfinite(g.slope) ||
      std::abs(g.slope) > std::numeric_limits<float>::max())
    return op->emitOpError()
           << "'negative_slope' must be finite in f32 (|slope| <= 3.4e38: the "
              "kernels compute in f32), got "
           << g.slope;
  return success();
}

LogicalResult GatOp::verify() {
  if (!getXDst() != !getWeightDst())
    return emitOpError("expects x_dst and weight_dst together");
  GatLayerOperands g;
  g.x = getX(), g.rowPtr = getRowPtr(), g.colIdx = getColIdx();
  g.bias = getBias(), g.output = getOutput(), g.alpha = getAlpha();
  g.weights = {{"weight", getWeight()}};
  if (getXDst())
    g.dstWeights = {{"weight_dst", getWeightDst()}};
  g.xDst = getXDst();
  g.atts = {{"att_src", getAttSrc()}, {"att_dst", getAttDst()}};
  g.edgeAttr = getEdgeAttr();
  g.weightEdge = getWeightEdge();
  g.attEdge = getAttEdge();
  g.concat = getCombine() == HeadCombine::concat;
  g.addSelfLoops = getAddSelfLoops();
  g.slope = getNegativeSlope().convertToDouble();
  return verifyGatLayer(getOperation(), g);
}

LogicalResult GatV2Op::verify() {
  GatLayerOperands g;
  g.x = getX(), g.rowPtr = getRowPtr(), g.colIdx = getColIdx();
  g.bias = getBias(), g.output = getOutput(), g.alpha = getAlpha();
  g.weights = {{"weight_src", getWeightSrc()}};
  g.dstWeights = {{"weight_dst", getWeightDst()}};
  g.xDst = getXDst();
  g.weightBiases = {{"bias_src", getBiasSrc()}, {"bias_dst", getBiasDst()}};
  g.atts = {{"att", getAtt()}};
  g.edgeAttr = getEdgeAttr();
  g.weightEdge = getWeightEdge();
  g.edgeAttention = false;
  g.concat = getCombine() == HeadCombine::concat;
  g.addSelfLoops = getAddSelfLoops();
  g.slope = getNegativeSlope().convertToDouble();
  return verifyGatLayer(getOperation(), g);
}
