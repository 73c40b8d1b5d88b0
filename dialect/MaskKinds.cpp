//===- MaskKinds.cpp - the one definition of each attention mask kind -----===//
//
// To add a kind: its case in Attn_MaskKind (AttnBase.td, with its row in the
// table there), its attributes in kindSignature(), and its three functions
// below (allowed, keySpan, full); then its predicate in the oracle
// (lib/Runtime/Reference.cpp) and its tests. No lowering changes: they all
// call the build* functions of MaskKinds.h. A kind a function below does not
// list is caught by -Wswitch at compile time.
//
//===----------------------------------------------------------------------===//

#include "dialect/MaskKinds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

static constexpr StringRef kWindowLeft = "window_left";
static constexpr StringRef kWindowRight = "window_right";
static constexpr StringRef kDilation = "dilation";

namespace {
/// A mask parameter: an i64 attribute of the op, at least `least`.
struct ParamDef {
  StringRef name;
  int64_t least;
};
} // namespace

static ArrayRef<ParamDef> paramDefs() {
  static const ParamDef defs[] = {
      {kWindowLeft, 0}, {kWindowRight, 0}, {kDilation, 1}};
  return defs;
}

ArrayRef<StringRef> mlir::attn::maskParameterNames() {
  static const SmallVector<StringRef> names =
      llvm::map_to_vector(paramDefs(), [](const ParamDef &d) { return d.name; });
  return names;
}

std::optional<int64_t> MaskParams::get(StringRef name) const {
  for (const auto &[n, v] : values)
    if (n == name)
      return v;
  return std::nullopt;
}

void MaskParams::set(StringRef name, int64_t value) {
  // Keep the static name (values outlive the caller's string).
  const StringRef *known = llvm::find(maskParameterNames(), name);
  assert(known != maskParameterNames().end() && "not a mask parameter");
  for (auto &[n, v] : values)
    if (n == name) {
      v = value;
      return;
    }
  values.emplace_back(*known, value);
}

MaskParams MaskParams::of(Operation *op) {
  MaskParams p;
  if (auto kind = op->getAttrOfType<MaskKindAttr>("mask"))
    p.kind = kind.getValue();
  for (StringRef name : maskParameterNames())
    if (auto attr = op->getAttrOfType<IntegerAttr>(name))
      p.values.emplace_back(name, attr.getValue().getSExtValue());
  return p;
}

void MaskParams::applyTo(Operation *op) const {
  MLIRContext *ctx = op->getContext();
  op->setAttr("mask", MaskKindAttr::get(ctx, kind));
  for (StringRef name : maskParameterNames()) {
    if (std::optional<int64_t> v = get(name))
      op->setAttr(name, IntegerAttr::get(IntegerType::get(ctx, 64), *v));
    else
      op->removeAttr(name);
  }
}

LogicalResult mlir::attn::verifyMaskParamAttrs(Operation *op) {
  for (NamedAttribute attr : op->getDiscardableAttrs()) {
    StringRef name = attr.getName().strref();
    if (name.contains('.'))
      continue; // another dialect's discardable attribute
    if (!llvm::is_contained(maskParameterNames(), name))
      return op->emitOpError()
             << "unknown attribute '" << name << "'; mask parameters are "
             << llvm::join(maskParameterNames(), ", ");
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || !value.getType().isInteger(64))
      return op->emitOpError() << "mask parameter '" << name
                               << "' must be an i64 integer, got "
                               << attr.getValue();
  }
  return success();
}

namespace {
/// The parameters a kind requires and the ones it may take besides.
struct KindSignature {
  SmallVector<StringRef, 3> required, optional;
};
} // namespace

static KindSignature kindSignature(MaskKind kind) {
  switch (kind) {
  case MaskKind::dense:
  case MaskKind::causal:
  case MaskKind::graph:
    return {};
  case MaskKind::local:
    return {{kWindowLeft, kWindowRight}, {}};
  case MaskKind::causal_local:
    return {{kWindowLeft}, {kWindowRight}};
  case MaskKind::dilated:
    return {{kWindowLeft, kWindowRight, kDilation}, {}};
  }
  llvm_unreachable("unknown mask kind");
}

LogicalResult
mlir::attn::verifyMaskParams(const MaskParams &params,
                             function_ref<InFlightDiagnostic()> emitError) {
  StringRef kindName = stringifyMaskKind(params.kind);
  KindSignature sig = kindSignature(params.kind);
  for (StringRef name : sig.required)
    if (!params.get(name))
      return emitError() << "mask '" << kindName << "' requires '" << name
                         << "'";
  for (StringRef name : maskParameterNames()) {
    std::optional<int64_t> value = params.get(name);
    if (!value)
      continue;
    if (!llvm::is_contained(sig.required, name) &&
        !llvm::is_contained(sig.optional, name)) {
      // Name the kinds that do take it.
      std::string takers;
      for (uint32_t k = 0; k <= getMaxEnumValForMaskKind(); ++k) {
        auto other = static_cast<MaskKind>(k);
        KindSignature s = kindSignature(other);
        if (llvm::is_contained(s.required, name) ||
            llvm::is_contained(s.optional, name))
          takers += (takers.empty() ? "'" : ", '") +
                    stringifyMaskKind(other).str() + "'";
      }
      return emitError() << "'" << name << "' is a parameter of mask "
                         << takers << ", not of mask '" << kindName << "'";
    }
    int64_t least = llvm::find_if(paramDefs(), [&](const ParamDef &d) {
                      return d.name == name;
                    })->least;
    if (*value < least)
      return emitError() << "'" << name << "' must be >= " << least
                         << ", got " << *value;
  }
  return success();
}

bool mlir::attn::isPositionalMask(MaskKind kind) {
  return kind != MaskKind::graph;
}

//===----------------------------------------------------------------------===//
// The index algebra the definitions are written in
//===----------------------------------------------------------------------===//

namespace {

/// On integers. Sums saturate at the int64 range, so that a window of
/// 2^62 reaches every key instead of wrapping around.
struct IntMath {
  using Index = int64_t;
  using Bool = bool;
  Index c(int64_t v) { return v; }
  Index add(Index a, Index b) {
    Index r;
    if (__builtin_add_overflow(a, b, &r))
      return b > 0 ? std::numeric_limits<Index>::max()
                   : std::numeric_limits<Index>::min();
    return r;
  }
  Index sub(Index a, Index b) {
    Index r;
    if (__builtin_sub_overflow(a, b, &r))
      return b < 0 ? std::numeric_limits<Index>::max()
                   : std::numeric_limits<Index>::min();
    return r;
  }
  Bool le(Index a, Index b) { return a <= b; }
  Bool ge(Index a, Index b) { return a >= b; }
  Bool divisible(Index a, int64_t d) { return a % d == 0; }
  Bool always() { return true; }
  Bool both(Bool a, Bool b) { return a && b; }
};

/// As arith ops on index values; a null Bool is "true" (no condition).
struct IRMath {
  OpBuilder &b;
  Location loc;
  using Index = Value;
  using Bool = Value;
  /// Constants (the window sizes) clamped into +-2^62: index sums then stay
  /// exact for every position below 2^62 where a window near 2^63 would
  /// wrap (IntMath saturates instead).
  Index c(int64_t v) {
    constexpr int64_t kBound = int64_t(1) << 62;
    return arith::ConstantIndexOp::create(b, loc,
                                          std::clamp(v, -kBound, kBound));
  }
  Index add(Index x, Index y) { return arith::AddIOp::create(b, loc, x, y); }
  Index sub(Index x, Index y) { return arith::SubIOp::create(b, loc, x, y); }
  Bool cmp(arith::CmpIPredicate p, Index x, Index y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Bool le(Index x, Index y) { return cmp(arith::CmpIPredicate::sle, x, y); }
  Bool ge(Index x, Index y) { return cmp(arith::CmpIPredicate::sge, x, y); }
  Bool divisible(Index x, int64_t d) {
    Value rem = arith::RemSIOp::create(b, loc, x, c(d));
    return cmp(arith::CmpIPredicate::eq, rem, c(0));
  }
  Bool always() { return {}; }
  Bool both(Bool x, Bool y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::AndIOp::create(b, loc, x, y);
  }
};

//===----------------------------------------------------------------------===//
// The definitions
//===----------------------------------------------------------------------===//

/// Element predicate: may the query at `ia` see key `j`?
template <typename M>
typename M::Bool allowed(M &m, const MaskParams &p, typename M::Index ia,
                         typename M::Index j) {
  switch (p.kind) {
  case MaskKind::dense:
  case MaskKind::graph: // data, applied by the lowering
    return m.always();
  case MaskKind::causal:
    return m.le(j, ia);
  case MaskKind::local:
    return m.both(m.ge(j, m.sub(ia, m.c(*p.get(kWindowLeft)))),
                  m.le(j, m.add(ia, m.c(*p.get(kWindowRight)))));
  case MaskKind::causal_local: {
    auto r = m.both(m.le(j, ia), m.ge(j, m.sub(ia, m.c(*p.get(kWindowLeft)))));
    if (p.get(kWindowRight))
      r = m.both(r, m.le(j, m.add(ia, m.c(*p.get(kWindowRight)))));
    return r;
  }
  case MaskKind::dilated:
    // Every dilation-th key of the window, counted from the query itself.
    return m.both(m.both(m.ge(j, m.sub(ia, m.c(*p.get(kWindowLeft)))),
                         m.le(j, m.add(ia, m.c(*p.get(kWindowRight))))),
                  m.divisible(m.sub(ia, j), *p.get(kDilation)));
  }
  llvm_unreachable("unknown mask kind");
}

template <typename M> struct Span {
  std::optional<typename M::Index> first, last;
};

/// Inclusive bounds of the keys the queries [iaLo, iaHi] may see.
template <typename M>
Span<M> keySpan(M &m, const MaskParams &p, typename M::Index iaLo,
                typename M::Index iaHi) {
  switch (p.kind) {
  case MaskKind::dense:
  case MaskKind::graph:
    return {};
  case MaskKind::causal:
  case MaskKind::causal_local: {
    Span<M> s;
    s.last = iaHi; // window_right >= 0 never reaches past the diagonal
    if (p.kind == MaskKind::causal_local)
      s.first = m.sub(iaLo, m.c(*p.get(kWindowLeft)));
    return s;
  }
  case MaskKind::local:
  case MaskKind::dilated:
    return {m.sub(iaLo, m.c(*p.get(kWindowLeft))),
            m.add(iaHi, m.c(*p.get(kWindowRight)))};
  }
  llvm_unreachable("unknown mask kind");
}

/// When is every (ia, j) of [iaLo, iaHi] x [jLo, jHi] allowed? std::nullopt:
/// never provably (the tile is partial).
template <typename M>
std::optional<typename M::Bool>
full(M &m, const MaskParams &p, typename M::Index iaLo, typename M::Index iaHi,
     typename M::Index jLo, typename M::Index jHi) {
  switch (p.kind) {
  case MaskKind::dense:
    return m.always();
  case MaskKind::graph:
    return std::nullopt;
  case MaskKind::causal:
    return m.le(jHi, iaLo);
  case MaskKind::causal_local:
    return m.both(m.le(jHi, iaLo),
                  m.ge(jLo, m.sub(iaHi, m.c(*p.get(kWindowLeft)))));
  case MaskKind::local:
    return m.both(m.ge(jLo, m.sub(iaHi, m.c(*p.get(kWindowLeft)))),
                  m.le(jHi, m.add(iaLo, m.c(*p.get(kWindowRight)))));
  case MaskKind::dilated:
    if (*p.get(kDilation) != 1)
      return std::nullopt;
    return m.both(m.ge(jLo, m.sub(iaHi, m.c(*p.get(kWindowLeft)))),
                  m.le(jHi, m.add(iaLo, m.c(*p.get(kWindowRight)))));
  }
  llvm_unreachable("unknown mask kind");
}

} // namespace

//===----------------------------------------------------------------------===//
// The two evaluations
//===----------------------------------------------------------------------===//

Value mlir::attn::buildMaskAllowed(OpBuilder &b, Location loc,
                                   const MaskParams &params, Value ia,
                                   Value j) {
  IRMath m{b, loc};
  return allowed(m, params, ia, j);
}

KeySpan mlir::attn::buildMaskKeySpan(OpBuilder &b, Location loc,
                                     const MaskParams &params, Value iaLo,
                                     Value iaHi) {
  IRMath m{b, loc};
  Span<IRMath> s = keySpan(m, params, iaLo, iaHi);
  return {s.first.value_or(Value()), s.last.value_or(Value())};
}

std::optional<Value> mlir::attn::buildMaskFull(OpBuilder &b, Location loc,
                                               const MaskParams &params,
                                               Value iaLo, Value iaHi,
                                               Value jLo, Value jHi) {
  IRMath m{b, loc};
  return full(m, params, iaLo, iaHi, jLo, jHi);
}

bool mlir::attn::maskAllowed(const MaskParams &params, int64_t ia, int64_t j) {
  IntMath m;
  return allowed(m, params, ia, j);
}

IntKeySpan mlir::attn::maskKeySpan(const MaskParams &params, int64_t iaLo,
                                   int64_t iaHi) {
  IntMath m;
  Span<IntMath> s = keySpan(m, params, iaLo, iaHi);
  return {s.first, s.last};
}

bool mlir::attn::maskFull(const MaskParams &params, int64_t iaLo,
                          int64_t iaHi, int64_t jLo, int64_t jHi) {
  IntMath m;
  std::optional<bool> f = full(m, params, iaLo, iaHi, jLo, jHi);
  return f && *f;
}
