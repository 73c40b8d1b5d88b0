//===- Evaluate.cpp - attn functions on the C++ reference -----------------===//

#include "lib/Runtime/Evaluate.h"

#include "dialect/AttnOps.h"
#include "dialect/MaskKinds.h"
#include "lib/Runtime/Budget.h"
#include "lib/Runtime/Jit.h"
#include "lib/Runtime/Reference.h"
#include "lib/Runtime/RegionEvaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <deque>
#include <random>

using namespace mlir;
using namespace mlir::attn;
using llvm::createStringError;

//===----------------------------------------------------------------------===//
// Reference evaluation
//===----------------------------------------------------------------------===//

namespace {

/// Values of the function being evaluated, by SSA value.
class Environment {
public:
  void bind(Value v, const HostTensor *t) { values[v] = t; }
  const HostTensor *lookup(Value v) const {
    return v ? values.lookup(v) : nullptr;
  }
  HostTensor &make(Value result) {
    auto type = cast<RankedTensorType>(result.getType());
    HostTensor &t =
        storage.emplace_back(*dtypeOf(type.getElementType()), type.getShape());
    bind(result, &t);
    return t;
  }

private:
  llvm::DenseMap<Value, const HostTensor *> values;
  std::deque<HostTensor> storage;
};

/// The oracle's evaluators of one op's regions; run() records the first
/// error, checked after the reference kernel returns.
using Evaluators = std::vector<std::shared_ptr<RegionEvaluator>>;

/// Evaluator of `region` (if not empty), its captured tensors taken from
/// `env`.
llvm::Expected<std::shared_ptr<RegionEvaluator>>
regionEvaluator(Region &region, StringRef name, const Environment &env) {
  if (region.empty())
    return nullptr;
  llvm::DenseMap<Value, const HostTensor *> captured;
  region.walk([&](tensor::ExtractOp x) {
    Value t = x.getTensor();
    if (!region.isAncestor(t.getParentRegion()))
      if (const HostTensor *h = env.lookup(t))
        captured[t] = h;
  });
  auto ev = RegionEvaluator::create(region, name, captured);
  if (!ev)
    return ev.takeError();
  return std::shared_ptr<RegionEvaluator>(std::move(*ev));
}

template <typename OpTy>
llvm::Expected<reference::MaskArgs> maskArgs(OpTy op, const Environment &env,
                                             Evaluators &evaluators) {
  reference::MaskArgs m;
  auto scoreMod = regionEvaluator(op.getScoreMod(), "score_mod", env);
  if (!scoreMod)
    return scoreMod.takeError();
  if (std::shared_ptr<RegionEvaluator> ev = *scoreMod) {
    evaluators.push_back(ev);
    m.scoreMod = [ev](double s, int64_t b, int64_t h, int64_t i, int64_t j) {
      double r = ev->run({s, double(b), double(h), double(i), double(j)});
      // A score is finite or -inf (masked): NaN or +inf makes the kernels'
      // softmax NaN while the reference's sums would skip it.
      if (std::isnan(r) || r == std::numeric_limits<double>::infinity())
        ev->noteError("score_mod: yields " +
                      std::string(std::isnan(r) ? "NaN" : "+inf") +
                      " at (b, h, q_idx, kv_idx) = (" + std::to_string(b) +
                      ", " + std::to_string(h) + ", " + std::to_string(i) +
                      ", " + std::to_string(j) + ") for the score " +
                      std::to_string(s) +
                      "; a score must be finite or -inf (masked)");
      return r;
    };
  }
  auto maskMod = regionEvaluator(op.getMaskMod(), "mask_mod", env);
  if (!maskMod)
    return maskMod.takeError();
  if (std::shared_ptr<RegionEvaluator> ev = *maskMod) {
    evaluators.push_back(ev);
    m.maskMod = [ev](int64_t b, int64_t h, int64_t i, int64_t j) {
      return ev->run({double(b), double(h), double(i), double(j)}) != 0;
    };
  }
  // The kind by name and every mask parameter the op carries: the oracle
  // interprets them itself (it does not share the definitions).
  m.mask = stringifyMaskKind(op.getMask()).str();
  m.align = stringifyAlign(op.getAlign()).str();
  MaskParams params = MaskParams::of(op.getOperation());
  for (StringRef name : maskParameterNames())
    if (std::optional<int64_t> value = params.get(name))
      m.maskParams[name.str()] = *value;
  if (auto clip = op.getRelClip())
    m.relClip = static_cast<int64_t>(*clip);
  if (auto scale = op.getScale())
    m.scale = scale->convertToDouble();
  m.kvLengths = env.lookup(op.getKvLengths());
  m.bias = env.lookup(op.getBias());
  m.relBias = env.lookup(op.getRelBias());
  m.relKey = env.lookup(op.getRelKey());
  m.alibi = env.lookup(op.getAlibiSlopes());
  m.rowPtr = env.lookup(op.getRowPtr());
  m.colIdx = env.lookup(op.getColIdx());
  return m;
}

/// The first error any evaluator recorded while the kernel ran.
llvm::Error evaluatorErrors(Operation *op, const Evaluators &evaluators) {
  for (const auto &ev : evaluators)
    if (!ev->error().empty())
      return createStringError("%s: %s",
                               op->getName().getStringRef().str().c_str(),
                               ev->error().c_str());
  return llvm::Error::success();
}

} // namespace

/// The C++ reference's own temporaries for `op`, before it runs: attn.mha
/// projects q, k, v and the per-head outputs (f32); the GAT layers keep both
/// projections, and with edge attributes one projection per edge and per
/// self loop (f64). Checked against the memory budget like every value.
static llvm::Error checkReferenceTemporaries(Operation *op) {
  auto elements = [](Value v) -> uint64_t {
    return v ? cast<RankedTensorType>(v.getType()).getNumElements() : 0;
  };
  auto sum = [](std::initializer_list<uint64_t> terms) {
    uint64_t total = 0;
    for (uint64_t t : terms)
      total = llvm::SaturatingAdd(total, t);
    return total;
  };
  uint64_t bytes = 0;
  if (auto mha = dyn_cast<MhaOp>(op)) {
    bytes = llvm::SaturatingMultiply<uint64_t>(
        4, sum({elements(mha.getQuery()), elements(mha.getKey()),
                elements(mha.getValue()), elements(mha.getOutput())}));
  } else if (isa<GatOp, GatV2Op>(op)) {
    auto gat = [&](auto layer, Value att, Value edgeAttr) {
      uint64_t hc = elements(att);
      uint64_t nSrc = cast<RankedTensorType>(layer.getX().getType()).getDimSize(0);
      uint64_t n = layer.getRowPtr().getType().getNumElements() - 1;
      uint64_t perRow = edgeAttr ? nSrc + 2 * n + elements(layer.getColIdx())
                                 : nSrc + n;
      return llvm::SaturatingMultiply<uint64_t>(
          8, llvm::SaturatingMultiply(hc, perRow));
    };
    if (auto g = dyn_cast<GatOp>(op))
      bytes = gat(g, g.getAttSrc(), g.getEdgeAttr());
    else if (auto g = dyn_cast<GatV2Op>(op))
      bytes = gat(g, g.getAtt(), g.getEdgeAttr());
  }
  if (!bytes)
    return llvm::Error::success();
  return checkBudget(bytes, "the C++ reference's temporaries for '" +
                                op->getName().getStringRef() + "'");
}

llvm::Expected<std::vector<HostTensor>>
mlir::attn::evaluateWithReference(func::FuncOp func,
                                  llvm::ArrayRef<const HostTensor *> inputs,
                                  int64_t rowStride) {
  Environment env;
  for (auto [arg, t] : llvm::zip(func.getArguments(), inputs))
    env.bind(arg, t);

  for (Operation &op : func.getBody().front()) {
    // A scalar hoisted out of a region by a rewrite: the region's evaluator
    // reads it.
    if (isa<arith::ConstantOp>(op) &&
        !isa<ShapedType>(op.getResult(0).getType()))
      continue;
    for (Type t : op.getResultTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      Type elem = tensor ? tensor.getElementType() : Type();
      if (!elem || (!elem.isF32() && !elem.isF16() && !elem.isBF16()))
        return createStringError(
            "the C++ reference computes f32, f16 and bf16 results; '%s' "
            "returns another type",
            op.getName().getStringRef().str().c_str());
    }
    if (llvm::Error err = checkReferenceTemporaries(&op))
      return std::move(err);
    if (auto sdpa = dyn_cast<SdpaOp>(op)) {
      HostTensor &out = env.make(sdpa.getOutput());
      HostTensor *lse = sdpa.getLse() ? &env.make(sdpa.getLse()) : nullptr;
      Evaluators evaluators;
      llvm::Expected<reference::MaskArgs> mask =
          maskArgs(sdpa, env, evaluators);
      if (!mask)
        return mask.takeError();
      mask->rowStride = std::max<int64_t>(1, rowStride);
      reference::sdpa(*env.lookup(sdpa.getQuery()), *env.lookup(sdpa.getKey()),
                      *env.lookup(sdpa.getValue()), *mask, out, lse);
      if (llvm::Error err = evaluatorErrors(sdpa, evaluators))
        return std::move(err);
    } else if (auto mha = dyn_cast<MhaOp>(op)) {
      Evaluators evaluators;
      llvm::Expected<reference::MaskArgs> mask = maskArgs(mha, env, evaluators);
      if (!mask)
        return mask.takeError();
      reference::MhaArgs a{env.lookup(mha.getQuery()),
                           env.lookup(mha.getKey()),
                           env.lookup(mha.getValue()),
                           env.lookup(mha.getInProjWeight()),
                           env.lookup(mha.getInProjBias()),
                           env.lookup(mha.getOutProjWeight()),
                           env.lookup(mha.getOutProjBias()),
                           static_cast<int64_t>(mha.getNumHeads()),
                           mha.getKvHeads(),
                           *mask};
      reference::mha(a, env.make(mha.getOutput()));
      if (llvm::Error err = evaluatorErrors(mha, evaluators))
        return std::move(err);
    } else if (auto gat = dyn_cast<GatOp>(op)) {
      reference::GatArgs a{
          env.lookup(gat.getX()),      env.lookup(gat.getWeight()),
          env.lookup(gat.getAttSrc()), env.lookup(gat.getAttDst()),
          env.lookup(gat.getRowPtr()), env.lookup(gat.getColIdx())};
      a.bias = env.lookup(gat.getBias());
      a.negativeSlope = gat.getNegativeSlope().convertToDouble();
      a.concat = gat.getCombine() == HeadCombine::concat;
      a.addSelfLoops = gat.getAddSelfLoops();
      a.edgeAttr = env.lookup(gat.getEdgeAttr());
      a.weightEdge = env.lookup(gat.getWeightEdge());
      a.attEdge = env.lookup(gat.getAttEdge());
      a.xDst = env.lookup(gat.getXDst());
      a.weightDst = env.lookup(gat.getWeightDst());
      reference::gat(a, env.make(gat.getOutput()),
                     gat.getAlpha() ? &env.make(gat.getAlpha()) : nullptr);
    } else if (auto gat = dyn_cast<GatV2Op>(op)) {
      reference::GatArgs a{
          env.lookup(gat.getX()),   env.lookup(gat.getWeightSrc()),
          env.lookup(gat.getAtt()), nullptr,
          env.lookup(gat.getRowPtr()), env.lookup(gat.getColIdx())};
      a.v2 = true;
      a.xDst = env.lookup(gat.getXDst());
      a.edgeAttr = env.lookup(gat.getEdgeAttr());
      a.weightEdge = env.lookup(gat.getWeightEdge());
      a.weightDst = env.lookup(gat.getWeightDst());
      a.biasSrc = env.lookup(gat.getBiasSrc());
      a.biasDst = env.lookup(gat.getBiasDst());
      a.bias = env.lookup(gat.getBias());
      a.negativeSlope = gat.getNegativeSlope().convertToDouble();
      a.concat = gat.getCombine() == HeadCombine::concat;
      a.addSelfLoops = gat.getAddSelfLoops();
      reference::gat(a, env.make(gat.getOutput()),
                     gat.getAlpha() ? &env.make(gat.getAlpha()) : nullptr);
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<HostTensor> results;
      for (Value v : ret.getOperands())
        results.push_back(env.lookup(v)->clone());
      return results;
    } else {
      return createStringError("the C++ reference evaluates functions made of "
                               "attn ops only; found '%s'",
                               op.getName().getStringRef().str().c_str());
    }
  }
  return createStringError("function @%s has no return",
                           func.getName().str().c_str());
}

//===----------------------------------------------------------------------===//
// Roles of attn operands
//===----------------------------------------------------------------------===//

namespace {

/// What an attn op expects of its index-like operands.
struct OperandRoles {
  Value kvLengths, alibi, rowPtr, colIdx;
  int64_t batch = 0, keyLength = 0, csrRows = 0, csrCols = 0, heads = 0;
};

OperandRoles rolesOf(Operation *op) {
  OperandRoles r;
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (auto sdpa = dyn_cast<SdpaOp>(op)) {
    r = {sdpa.getKvLengths(), sdpa.getAlibiSlopes(), sdpa.getRowPtr(),
         sdpa.getColIdx()};
    r.batch = shape(sdpa.getQuery())[0];
    r.heads = shape(sdpa.getQuery())[1];
    r.csrRows = shape(sdpa.getQuery())[2];
    r.keyLength = r.csrCols = shape(sdpa.getKey())[2];
  } else if (auto mha = dyn_cast<MhaOp>(op)) {
    r = {mha.getKvLengths(), mha.getAlibiSlopes(), mha.getRowPtr(),
         mha.getColIdx()};
    r.batch = shape(mha.getQuery())[0];
    r.heads = mha.getNumHeads();
    r.csrRows = shape(mha.getQuery())[1];
    r.keyLength = r.csrCols = shape(mha.getKey())[1];
  } else if (auto gat = dyn_cast<GatOp>(op)) {
    r.rowPtr = gat.getRowPtr();
    r.colIdx = gat.getColIdx();
    r.csrCols = shape(gat.getX())[0];
    r.csrRows = gat.getXDst() ? shape(gat.getXDst())[0] : r.csrCols;
  } else if (auto gat = dyn_cast<GatV2Op>(op)) {
    r.rowPtr = gat.getRowPtr();
    r.colIdx = gat.getColIdx();
    r.csrCols = shape(gat.getX())[0];
    r.csrRows = gat.getXDst() ? shape(gat.getXDst())[0] : r.csrCols;
  }
  return r;
}

/// An entry function and the functions it reaches (a model's layers are
/// calls of private functions), with the call sites of each, so that a
/// value inside any of them can be traced back to an entry argument.
struct EntryView {
  func::FuncOp entry;
  SmallVector<func::FuncOp> functions;
  llvm::DenseMap<Operation *, SmallVector<func::CallOp>> calls;

  explicit EntryView(func::FuncOp entry)
      : entry(entry), functions(reachedFunctions(entry)) {
    SymbolTableCollection symbols;
    for (func::FuncOp f : functions)
      f.walk([&](func::CallOp call) {
        if (auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
                call, call.getCalleeAttr()))
          calls[callee].push_back(call);
      });
  }

  /// The index of the entry argument `v` is: the argument itself, or an
  /// argument of a reached function that every call of it passes the same
  /// entry argument (or such an argument) for.
  std::optional<unsigned> argIndex(Value v, int depth = 0) const {
    auto arg = dyn_cast_or_null<BlockArgument>(v);
    if (!arg)
      return std::nullopt;
    auto owner = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!owner || arg.getOwner() != &owner.getBody().front())
      return std::nullopt;
    if (owner == entry)
      return arg.getArgNumber();
    auto it = calls.find(owner);
    if (it == calls.end() || depth > 64)
      return std::nullopt;
    std::optional<unsigned> found;
    for (func::CallOp call : it->second) {
      std::optional<unsigned> i =
          argIndex(call.getOperand(arg.getArgNumber()), depth + 1);
      if (!i || (found && *found != *i))
        return std::nullopt;
      found = i;
    }
    return found;
  }

  /// Walks every reached function.
  template <typename Fn> void walk(Fn &&fn) const {
    for (func::FuncOp f : functions)
      f.walk(fn);
  }
};

HostTensor tensorFor(Type type) {
  auto t = cast<RankedTensorType>(type);
  return HostTensor(*dtypeOf(t.getElementType()), t.getShape());
}

/// An input whose values a region uses as an index into another input
/// (`table[ids[kv_idx]]`, through index casts): the values of `ids` must lie
/// in [0, size), dim `dim` of `table`.
struct GatherIndex {
  unsigned ids, table;
  size_t dim;
  int64_t size;
};

std::vector<GatherIndex> gatherIndices(const EntryView &view) {
  std::vector<GatherIndex> found;
  view.walk([&](tensor::ExtractOp x) {
    if (!(x->getParentOfType<SdpaOp>() || x->getParentOfType<MhaOp>()))
      return;
    std::optional<unsigned> table = view.argIndex(x.getTensor());
    if (!table)
      return;
    for (auto [d, idx] : llvm::enumerate(x.getIndices())) {
      Value v = idx;
      while (Operation *def = v.getDefiningOp()) {
        if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
                 arith::ExtUIOp, arith::TruncIOp>(def))
          break;
        v = def->getOperand(0);
      }
      auto source = v.getDefiningOp<tensor::ExtractOp>();
      std::optional<unsigned> ids =
          source ? view.argIndex(source.getTensor()) : std::nullopt;
      if (ids)
        found.push_back(
            {*ids, *table, d,
             cast<RankedTensorType>(x.getTensor().getType()).getDimSize(d)});
    }
  });
  return found;
}

/// True when every use of `v` is as an additive mask (a bias / rel_bias
/// operand, a region's read), through shape-only ops.
bool onlyMaskUses(Value v) {
  return !v.use_empty() && llvm::all_of(v.getUses(), [](OpOperand &use) {
    Operation *owner = use.getOwner();
    if (owner->getParentOfType<SdpaOp>() || owner->getParentOfType<MhaOp>())
      return true; // read inside a score_mod / mask_mod region
    if (auto sdpa = dyn_cast<SdpaOp>(owner))
      return use.get() == sdpa.getBias() || use.get() == sdpa.getRelBias();
    if (auto mha = dyn_cast<MhaOp>(owner))
      return use.get() == mha.getBias();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
            tensor::ReshapeOp, linalg::BroadcastOp>(owner))
      return llvm::all_of(owner->getResults(), onlyMaskUses);
    return false;
  });
}

} // namespace

double mlir::attn::referenceTolerance(DType dtype, double rtol) {
  double ulp = dtype == DType::bf16  ? 0x1p-7
               : dtype == DType::f16 ? 0x1p-10
                                     : 0.0;
  return std::max(rtol, 2 * ulp);
}

std::vector<HostTensor>
mlir::attn::generateInputs(func::FuncOp func, uint64_t seed, double magnitude) {
  std::mt19937_64 gen(seed);
  auto uniformInt = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen);
  };
  std::uniform_real_distribution<double> uniform(-magnitude, magnitude);

  unsigned n = func.getNumArguments();
  std::vector<std::optional<HostTensor>> args(n);
  EntryView view(func);
  auto assign = [&](Value v, HostTensor &&t) {
    if (std::optional<unsigned> i = view.argIndex(v); i && !args[*i])
      args[*i] = std::move(t);
  };

  view.walk([&](Operation *op) {
    if (!isa<SdpaOp, MhaOp, GatOp, GatV2Op>(op))
      return;
    OperandRoles r = rolesOf(op);
    if (r.kvLengths) {
      // Random lengths in [1, Lk]; the last batch fully padded when B > 1.
      HostTensor t = tensorFor(r.kvLengths.getType());
      for (int64_t b = 0; b < r.batch; ++b)
        t.setInt(b, r.batch > 1 && b == r.batch - 1
                        ? 0
                        : uniformInt(1, r.keyLength));
      assign(r.kvLengths, std::move(t));
    }
    if (r.alibi) {
      // ALiBi's geometric slopes 2^(-8 (h+1) / H).
      HostTensor t = tensorFor(r.alibi.getType());
      for (int64_t h = 0; h < r.heads; ++h)
        t.setDouble(h, std::exp2(-8.0 * double(h + 1) / double(r.heads)));
      assign(r.alibi, std::move(t));
    }
    if (r.rowPtr && r.colIdx) {
      // nnz random edges over rows [1, rows) so that row 0 (and others, by
      // chance) stay empty; duplicates are allowed.
      HostTensor rowPtr = tensorFor(r.rowPtr.getType());
      HostTensor colIdx = tensorFor(r.colIdx.getType());
      int64_t nnz = colIdx.numElements();
      std::vector<int64_t> rows(nnz);
      for (int64_t &row : rows)
        row = r.csrRows > 1 ? uniformInt(1, r.csrRows - 1) : 0;
      std::sort(rows.begin(), rows.end());
      for (int64_t e = 0; e < nnz; ++e) {
        rowPtr.setInt(rows[e] + 1, rowPtr.getInt(rows[e] + 1) + 1);
        colIdx.setInt(e, uniformInt(0, r.csrCols - 1));
      }
      for (int64_t i = 0; i < r.csrRows; ++i)
        rowPtr.setInt(i + 1, rowPtr.getInt(i + 1) + rowPtr.getInt(i));
      assign(r.rowPtr, std::move(rowPtr));
      assign(r.colIdx, std::move(colIdx));
    }
  });

  // Integer tensors a mask_mod reads at q_idx or kv_idx are per-token
  // labels (document ids): non-decreasing runs along their last dimension,
  // as packed sequences have them.
  view.walk([&](Operation *op) {
    Region *maskMod = nullptr;
    if (auto sdpa = dyn_cast<SdpaOp>(op))
      maskMod = &sdpa.getMaskMod();
    else if (auto mha = dyn_cast<MhaOp>(op))
      maskMod = &mha.getMaskMod();
    if (!maskMod || maskMod->empty())
      return;
    Block &body = maskMod->front();
    body.walk([&](tensor::ExtractOp x) {
      bool byIndex = llvm::any_of(x.getIndices(), [&](Value idx) {
        auto arg = dyn_cast<BlockArgument>(idx);
        return arg && arg.getOwner() == &body && arg.getArgNumber() >= 2;
      });
      auto type = cast<RankedTensorType>(x.getTensor().getType());
      if (!byIndex || !isa<IntegerType>(type.getElementType()) ||
          type.getRank() == 0)
        return;
      HostTensor t = tensorFor(type);
      int64_t row = type.getShape().back();
      if (row == 0) // an empty table: nothing to label
        return;
      for (int64_t r = 0; r < t.numElements() / row; ++r) {
        std::vector<int64_t> labels(row);
        for (int64_t &l : labels)
          l = uniformInt(0, 7);
        std::sort(labels.begin(), labels.end());
        for (int64_t e = 0; e < row; ++e)
          t.setInt(r * row + e, labels[e]);
      }
      assign(x.getTensor(), std::move(t));
    });
  });

  std::vector<HostTensor> result;
  for (unsigned i = 0; i < n; ++i) {
    if (args[i]) {
      result.push_back(std::move(*args[i]));
      continue;
    }
    HostTensor t = tensorFor(func.getArgumentTypes()[i]);
    bool floating = isFloat(t.dtype());
    for (int64_t e = 0; e < t.numElements(); ++e)
      t.setDouble(e, floating ? uniform(gen) : double(uniformInt(0, 3)));
    result.push_back(std::move(t));
  }
  // Generated values a region indexes another input with stay inside it
  // (min keeps document ids non-decreasing).
  for (const GatherIndex &g : gatherIndices(view)) {
    HostTensor &ids = result[g.ids];
    for (int64_t e = 0; e < ids.numElements(); ++e)
      ids.setInt(e, std::clamp<int64_t>(ids.getInt(e), 0,
                                        std::max<int64_t>(g.size - 1, 0)));
  }
  return result;
}

llvm::Error
mlir::attn::validateInputs(func::FuncOp func,
                           llvm::ArrayRef<const HostTensor *> inputs,
                           llvm::ArrayRef<std::string> sources) {
  // "@f input 3", and the file it came from.
  auto name = [&](size_t i) {
    std::string text =
        "@" + func.getName().str() + " input " + std::to_string(i);
    if (i < sources.size() && !sources[i].empty())
      text += " (" + sources[i] + ")";
    return text;
  };
  EntryView view(func);
  // Shapes and dtypes first: the contents checks below index by them.
  if (inputs.size() != func.getNumArguments())
    return createStringError("@%s takes %u inputs, got %zu",
                             func.getName().str().c_str(),
                             func.getNumArguments(), inputs.size());
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (llvm::Error err = checkTensorType(*inputs[i], type, name(i)))
      return err;
  // Values: NaN and +inf nowhere (the compiled kernels and the reference
  // would disagree on them, and no attention means anything by them); -inf
  // only in additive masks (bias, rel_bias) and tables a region reads.
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    bool maskLike = onlyMaskUses(arg);
    if (std::optional<int64_t> bad = firstNonFinite(*inputs[i], maskLike))
      return createStringError(
          "%s: element %lld is %s; inputs must be finite (-inf only in an "
          "additive mask: bias, rel_bias, a region's table)",
          name(i).c_str(), (long long)*bad,
          nonFiniteName(inputs[i]->getDouble(*bad)).str().c_str());
  }
  // Scores must stay in f32 where the kernels compute them: |q| |k| E scale
  // bounds every score of an attn.sdpa whose query and key are inputs (q =
  // k = 1e20 gave NaN on every compiled path, a finite result in the
  // reference's doubles).
  {
    llvm::Error err = llvm::Error::success();
    view.walk([&](SdpaOp op) {
      std::optional<unsigned> q = view.argIndex(op.getQuery()),
                              k = view.argIndex(op.getKey());
      if (err || !q || !k)
        return;
      // The inputs are finite here (checked above): summarize's absMax.
      double mq = summarize(*inputs[*q]).absMax,
             mk = summarize(*inputs[*k]).absMax;
      int64_t e = cast<RankedTensorType>(op.getQuery().getType()).getDimSize(3);
      double bound = mq * mk * double(e) * op.getEffectiveScale();
      if (bound > 0.5 * double(std::numeric_limits<float>::max()))
        err = createStringError(
            "%s and input %u: |q| up to %g and |k| up to %g over E = %lld "
            "(scale %g) allow scores up to %g, past f32's 3.4e38 where the "
            "kernels compute them",
            name(*q).c_str(), *k, mq, mk,
            (long long)e, op.getEffectiveScale(), bound);
    });
    if (err)
      return err;
  }
  // A region reading one input at an index read from another input
  // (`table[ids[kv_idx]]`): every value of the index input must lie in the
  // indexed dimension (compiled code clamps such indices; the reference
  // would stop at the first bad one, after the compiled call).
  for (const GatherIndex &g : gatherIndices(view)) {
    const HostTensor &values = *inputs[g.ids];
    for (int64_t e = 0; e < values.numElements(); ++e)
      if (values.getInt(e) < 0 || values.getInt(e) >= g.size)
        return createStringError(
            "%s: element %lld is %lld, but a region indexes dim %zu of "
            "input %u (size %lld) with it: expected [0, %lld)",
            name(g.ids).c_str(), (long long)e, (long long)values.getInt(e),
            g.dim, g.table, (long long)g.size, (long long)g.size);
  }

  llvm::Error err = llvm::Error::success();
  view.walk([&](Operation *op) {
    if (!isa<SdpaOp, MhaOp, GatOp, GatV2Op>(op) || err)
      return;
    OperandRoles r = rolesOf(op);
    auto input = [&](Value v) -> const HostTensor * {
      std::optional<unsigned> i = view.argIndex(v);
      return i ? inputs[*i] : nullptr;
    };
    // "attn.sdpa: row_ptr (@f input 3 (rp.npy))".
    std::string opName = op->getName().getStringRef().str();
    auto role = [&](Value v, llvm::StringRef what) {
      return opName + ": " + what.str() + " (" + name(*view.argIndex(v)) + ")";
    };
    if (const HostTensor *len = input(r.kvLengths))
      for (int64_t b = 0; b < len->numElements() && !err; ++b)
        if (len->getInt(b) < 0 || len->getInt(b) > r.keyLength)
          err = createStringError(
              "%s: entry %lld is %lld, outside [0, Lk = %lld]",
              role(r.kvLengths, "kv_lengths").c_str(), (long long)b,
              (long long)len->getInt(b), (long long)r.keyLength);
    const HostTensor *rowPtr = input(r.rowPtr), *colIdx = input(r.colIdx);
    if (!rowPtr || !colIdx || err)
      return;
    int64_t nnz = colIdx->numElements();
    if (rowPtr->getInt(0) != 0 || rowPtr->getInt(r.csrRows) != nnz) {
      err = createStringError(
          "%s: must start at 0 and end at nnz = %lld (the length of "
          "col_idx), got %lld .. %lld",
          role(r.rowPtr, "row_ptr").c_str(), (long long)nnz,
          (long long)rowPtr->getInt(0), (long long)rowPtr->getInt(r.csrRows));
      return;
    }
    for (int64_t i = 0; i < r.csrRows; ++i)
      if (rowPtr->getInt(i + 1) < rowPtr->getInt(i)) {
        err = createStringError("%s: decreases at row %lld (%lld > %lld)",
                                role(r.rowPtr, "row_ptr").c_str(), (long long)i,
                                (long long)rowPtr->getInt(i),
                                (long long)rowPtr->getInt(i + 1));
        return;
      }
    for (int64_t e = 0; e < nnz; ++e)
      if (colIdx->getInt(e) < 0 || colIdx->getInt(e) >= r.csrCols) {
        err = createStringError("%s: entry %lld is %lld, outside [0, %lld)",
                                role(r.colIdx, "col_idx").c_str(), (long long)e,
                                (long long)colIdx->getInt(e),
                                (long long)r.csrCols);
        return;
      }
  });
  return err;
}

//===----------------------------------------------------------------------===//
// Dynamic dimensions from the inputs
//===----------------------------------------------------------------------===//

/// The result shapes an attn op's (already specialized) operands imply, in
/// result order; nullopt for an op that is not an attn op. `overflow` is set
/// when a size does not fit int64 (sizes from a file's header).
static std::optional<SmallVector<SmallVector<int64_t>>>
attnResultShapes(Operation *op, bool &overflow) {
  auto shapeOf = [](Value v) {
    return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
  };
  SmallVector<SmallVector<int64_t>> shapes;
  if (auto sdpa = dyn_cast<SdpaOp>(op)) {
    // output: q's shape with v's head dim; lse: q's without its last.
    SmallVector<int64_t> q = shapeOf(sdpa.getQuery());
    SmallVector<int64_t> out = q;
    out.back() = shapeOf(sdpa.getValue()).back();
    shapes.push_back(out);
    if (sdpa.getLse())
      shapes.push_back(SmallVector<int64_t>(ArrayRef(q).drop_back()));
    return shapes;
  }
  if (auto mha = dyn_cast<MhaOp>(op)) {
    shapes.push_back(shapeOf(mha.getQuery()));
    return shapes;
  }
  auto gat = [&](auto layer, Value att, Value xDst) {
    SmallVector<int64_t> a = shapeOf(att);
    int64_t nSrc = shapeOf(layer.getX())[0];
    int64_t n = xDst ? shapeOf(xDst)[0] : nSrc;
    bool concat = layer.getCombine() == HeadCombine::concat;
    int64_t hc = 0, rows = 0;
    overflow |= llvm::MulOverflow(a[0], a[1], hc);
    overflow |= llvm::AddOverflow(
        shapeOf(layer.getColIdx())[0],
        layer.getAddSelfLoops() ? std::min(n, nSrc) : int64_t(0), rows);
    shapes.push_back({n, concat ? hc : a[1]});
    if (layer.getAlpha())
      shapes.push_back({rows, a[0]});
  };
  if (auto g = dyn_cast<GatOp>(op)) {
    gat(g, g.getAttSrc(), g.getXDst());
    return shapes;
  }
  if (auto g = dyn_cast<GatV2Op>(op)) {
    gat(g, g.getAtt(), g.getXDst());
    return shapes;
  }
  return std::nullopt;
}

static std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

llvm::Error mlir::attn::specializeDynamicShapes(
    func::FuncOp func,
    llvm::ArrayRef<std::optional<std::vector<int64_t>>> shapes) {
  auto isDynamic = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor && !tensor.hasStaticShape();
  };
  if (llvm::none_of(func.getArgumentTypes(), isDynamic))
    return llvm::Error::success();
  std::string name = func.getName().str();
  Block &body = func.getBody().front();
  SmallVector<Type> argTypes;
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    if (!isDynamic(arg.getType())) {
      argTypes.push_back(arg.getType());
      continue;
    }
    auto type = cast<RankedTensorType>(arg.getType());
    if (i >= shapes.size() || !shapes[i])
      return createStringError(
          "@%s argument %zu (%s) has dynamic dimensions: give it with "
          "--input %zu=FILE.npy (its shape sets them)",
          name.c_str(), i, typeString(type).c_str(), i);
    const std::vector<int64_t> &shape = *shapes[i];
    bool fits = static_cast<int64_t>(shape.size()) == type.getRank();
    for (int64_t d = 0; fits && d < type.getRank(); ++d)
      fits = type.isDynamicDim(d) || type.getDimSize(d) == shape[d];
    if (!fits) {
      std::string got;
      for (size_t d = 0; d < shape.size(); ++d)
        got += (d ? "x" : "") + std::to_string(shape[d]);
      return createStringError(
          "@%s input %zu: shape %s does not fit the argument's type %s", name.c_str(),
          i, got.empty() ? "(scalar)" : got.c_str(), typeString(type).c_str());
    }
    auto specialized = RankedTensorType::get(shape, type.getElementType());
    arg.setType(specialized);
    argTypes.push_back(specialized);
  }
  for (Operation &op : body.without_terminator()) {
    bool overflow = false;
    std::optional<SmallVector<SmallVector<int64_t>>> inferred =
        attnResultShapes(&op, overflow);
    if (overflow)
      return createStringError(
          "@%s: '%s' would have a result size that overflows int64 with the "
          "inputs' shapes",
          name.c_str(), op.getName().getStringRef().str().c_str());
    if (!inferred) {
      if (llvm::any_of(op.getResultTypes(), isDynamic))
        return createStringError(
            "@%s: '%s' has dynamic result types: dynamic dimensions are "
            "specialized through attn ops only (give the other ops static "
            "types)",
            name.c_str(), op.getName().getStringRef().str().c_str());
      continue;
    }
    for (auto [result, shape] : llvm::zip(op.getResults(), *inferred))
      result.setType(RankedTensorType::get(
          shape, cast<RankedTensorType>(result.getType()).getElementType()));
  }
  func.setType(FunctionType::get(func.getContext(), argTypes,
                                 body.getTerminator()->getOperandTypes()));
  if (failed(mlir::verify(func)))
    return createStringError(
        "@%s does not verify with its dynamic dimensions set from the inputs "
        "(see the error above)",
        name.c_str());
  return llvm::Error::success();
}
