//===- RegionEvaluator.cpp - score_mod / mask_mod regions on doubles ------===//

#include "lib/Runtime/RegionEvaluator.h"

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {
enum class Code {
  ConstF, ConstI, Copy,
  AddF, SubF, MulF, DivF, RemF, NegF, MaxF, MinF, MaxNumF, MinNumF, CmpF,
  AddI, SubI, MulI, DivSI, RemSI, FloorDivSI, CeilDivSI, MaxSI, MinSI,
  AndI, OrI, XorI, ShlI, ShrSI, CmpI, AbsI,
  Select, IToF, FToI, Fma, Exp, Exp2, Log, Log2, Tanh, AbsF, Sqrt, Rsqrt,
  Pow, Floor, Ceil, Erf, Sin, Cos, Extract
};
} // namespace

struct RegionEvaluator::Instr {
  Code code;
  unsigned dst = 0, a = 0, b = 0, c = 0;
  double fc = 0;
  int64_t ic = 0;
  int predicate = 0;
  unsigned bits = 64; // result width of integer ops
  bool roundToF32 = false; // an f32 result: rounded as the compiled code does
  const llvm::fltSemantics *roundTo = nullptr; // f16 / bf16 results
  unsigned srcBits = 64; // width of operand 0 (casts and comparisons)
  const HostTensor *tensor = nullptr;
  std::vector<unsigned> indices;
  std::string what; // the op, for errors
};

RegionEvaluator::~RegionEvaluator() = default;

static unsigned widthOf(Type t) {
  if (t.isIndex())
    return 64;
  if (auto it = dyn_cast<IntegerType>(t))
    return it.getWidth();
  return 64;
}

/// Wraps `v` to a `bits`-bit two's complement value (i1: 0 or 1).
static int64_t wrap(int64_t v, unsigned bits) {
  if (bits == 1)
    return v & 1;
  if (bits >= 64)
    return v;
  int64_t m = int64_t(1) << bits;
  v &= m - 1;
  return v >= m / 2 ? v - m : v;
}

llvm::Expected<std::unique_ptr<RegionEvaluator>> RegionEvaluator::create(
    Region &region, StringRef name,
    const llvm::DenseMap<Value, const HostTensor *> &captured) {
  std::unique_ptr<RegionEvaluator> ev(new RegionEvaluator());
  ev->name = name.str();
  llvm::DenseMap<Value, unsigned> slots;
  auto slotFor = [&](Value v) {
    auto [it, inserted] = slots.try_emplace(v, ev->numSlots);
    if (inserted) {
      ++ev->numSlots;
      ev->isFloat.push_back(isa<FloatType>(v.getType()));
    }
    return it->second;
  };
  // `in` loads the scalar value of `c` (its width already in in.bits);
  // false for a constant that is not a float or an integer.
  auto setConstant = [](arith::ConstantOp c, Instr &in) {
    if (auto f = dyn_cast<FloatAttr>(c.getValue())) {
      in.code = Code::ConstF;
      in.fc = f.getValueAsDouble();
      return true;
    }
    if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
      in.code = Code::ConstI;
      in.ic = wrap(i.getValue().getSExtValue(), in.bits);
      return true;
    }
    return false;
  };
  Block &block = region.front();
  for (BlockArgument arg : block.getArguments())
    slotFor(arg);
  ev->numArgs = block.getNumArguments();

  auto fail = [&](Operation *op, const Twine &why) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << name << ": the C++ reference cannot evaluate '" << op->getName()
       << "': " << why;
    return llvm::createStringError(text);
  };

  for (Operation &op : block) {
    if (auto yield = dyn_cast<YieldOp>(op)) {
      Value v = yield.getValue();
      if (!slots.count(v))
        return fail(&op, "it yields a value defined above the region");
      ev->result = slots.lookup(v);
      break;
    }
    // Operands must be region values, constants (a greedy rewrite hoists
    // them out of the region), or tensor.extract's captured tensor.
    for (Value operand : op.getOperands()) {
      if (slots.count(operand) ||
          (isa<tensor::ExtractOp>(op) &&
           isa<RankedTensorType>(operand.getType())))
        continue;
      auto constant = operand.getDefiningOp<arith::ConstantOp>();
      if (!constant || isa<ShapedType>(constant.getType()))
        return fail(&op, "an operand is defined above the region and is not "
                         "a constant or a captured tensor");
      Instr c;
      c.what = "arith.constant";
      c.bits = widthOf(constant.getType());
      c.roundToF32 = constant.getType().isF32();
      if (!setConstant(constant, c))
        return fail(&op, "a constant above the region is not a number");
      c.dst = slotFor(operand);
      ev->program.push_back(std::move(c));
    }
    if (op.getNumResults() != 1)
      return fail(&op, "expected one result");
    Instr in;
    in.what = op.getName().getStringRef().str();
    in.bits = widthOf(op.getResult(0).getType());
    Type resultType = op.getResult(0).getType();
    in.roundToF32 = resultType.isF32();
    if (resultType.isF16() || resultType.isBF16())
      in.roundTo = &cast<FloatType>(resultType).getFloatSemantics();
    if (op.getNumOperands() > 0)
      in.srcBits = widthOf(op.getOperand(0).getType());
    auto arg = [&](unsigned k) { return slots.lookup(op.getOperand(k)); };
    unsigned numOperands = op.getNumOperands();
    if (numOperands > 0 && !isa<tensor::ExtractOp>(op))
      in.a = arg(0);
    if (numOperands > 1 && !isa<tensor::ExtractOp>(op))
      in.b = arg(1);
    if (numOperands > 2 && !isa<tensor::ExtractOp>(op))
      in.c = arg(2);
    bool known = true;
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](arith::ConstantOp c) { known = setConstant(c, in); })
        .Case([&](arith::AddFOp) { in.code = Code::AddF; })
        .Case([&](arith::SubFOp) { in.code = Code::SubF; })
        .Case([&](arith::MulFOp) { in.code = Code::MulF; })
        .Case([&](arith::DivFOp) { in.code = Code::DivF; })
        .Case([&](arith::RemFOp) { in.code = Code::RemF; })
        .Case([&](arith::NegFOp) { in.code = Code::NegF; })
        .Case([&](arith::MaximumFOp) { in.code = Code::MaxF; })
        .Case([&](arith::MinimumFOp) { in.code = Code::MinF; })
        .Case([&](arith::MaxNumFOp) { in.code = Code::MaxNumF; })
        .Case([&](arith::MinNumFOp) { in.code = Code::MinNumF; })
        .Case([&](arith::CmpFOp c) {
          in.code = Code::CmpF;
          in.predicate = static_cast<int>(c.getPredicate());
        })
        .Case([&](arith::AddIOp) { in.code = Code::AddI; })
        .Case([&](arith::SubIOp) { in.code = Code::SubI; })
        .Case([&](arith::MulIOp) { in.code = Code::MulI; })
        .Case([&](arith::DivSIOp) { in.code = Code::DivSI; })
        .Case([&](arith::RemSIOp) { in.code = Code::RemSI; })
        .Case([&](arith::FloorDivSIOp) { in.code = Code::FloorDivSI; })
        .Case([&](arith::CeilDivSIOp) { in.code = Code::CeilDivSI; })
        .Case([&](arith::MaxSIOp) { in.code = Code::MaxSI; })
        .Case([&](arith::MinSIOp) { in.code = Code::MinSI; })
        .Case([&](arith::AndIOp) { in.code = Code::AndI; })
        .Case([&](arith::OrIOp) { in.code = Code::OrI; })
        .Case([&](arith::XOrIOp) { in.code = Code::XorI; })
        .Case([&](arith::ShLIOp) { in.code = Code::ShlI; })
        .Case([&](arith::ShRSIOp) { in.code = Code::ShrSI; })
        .Case([&](arith::CmpIOp c) {
          in.code = Code::CmpI;
          in.predicate = static_cast<int>(c.getPredicate());
          in.ic = widthOf(c.getLhs().getType());
        })
        .Case([&](math::AbsIOp) { in.code = Code::AbsI; })
        .Case([&](arith::SelectOp) { in.code = Code::Select; })
        .Case<arith::SIToFPOp>([&](auto) { in.code = Code::IToF; })
        .Case<arith::FPToSIOp>([&](auto) { in.code = Code::FToI; })
        .Case<arith::ExtFOp, arith::TruncFOp>(
            [&](auto) { in.code = Code::Copy; })
        .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(
            [&](auto) { in.code = Code::Copy; })
        .Case([&](math::FmaOp) { in.code = Code::Fma; })
        .Case([&](math::ExpOp) { in.code = Code::Exp; })
        .Case([&](math::Exp2Op) { in.code = Code::Exp2; })
        .Case([&](math::LogOp) { in.code = Code::Log; })
        .Case([&](math::Log2Op) { in.code = Code::Log2; })
        .Case([&](math::TanhOp) { in.code = Code::Tanh; })
        .Case([&](math::AbsFOp) { in.code = Code::AbsF; })
        .Case([&](math::SqrtOp) { in.code = Code::Sqrt; })
        .Case([&](math::RsqrtOp) { in.code = Code::Rsqrt; })
        .Case([&](math::PowFOp) { in.code = Code::Pow; })
        .Case([&](math::FloorOp) { in.code = Code::Floor; })
        .Case([&](math::CeilOp) { in.code = Code::Ceil; })
        .Case([&](math::ErfOp) { in.code = Code::Erf; })
        .Case([&](math::SinOp) { in.code = Code::Sin; })
        .Case([&](math::CosOp) { in.code = Code::Cos; })
        .Case([&](tensor::ExtractOp x) {
          in.code = Code::Extract;
          const HostTensor *t = captured.lookup(x.getTensor());
          if (!t) {
            known = false;
            return;
          }
          in.tensor = t;
          for (Value idx : x.getIndices())
            in.indices.push_back(slots.lookup(idx));
        })
        .Default([&](Operation *) { known = false; });
    if (!known)
      return fail(&op, isa<tensor::ExtractOp>(op)
                           ? "the tensor it reads is not an input of the "
                             "function or a result of an earlier attn op"
                           : "not an arith, math or tensor.extract op it "
                             "knows");
    in.dst = slotFor(op.getResult(0));
    ev->program.push_back(std::move(in));
  }
  ev->f.assign(ev->numSlots, 0.0);
  ev->i.assign(ev->numSlots, 0);
  return ev;
}

static bool compareF(int predicate, double x, double y) {
  using P = arith::CmpFPredicate;
  bool unordered = std::isnan(x) || std::isnan(y);
  switch (static_cast<P>(predicate)) {
  case P::AlwaysFalse: return false;
  case P::OEQ: return !unordered && x == y;
  case P::OGT: return !unordered && x > y;
  case P::OGE: return !unordered && x >= y;
  case P::OLT: return !unordered && x < y;
  case P::OLE: return !unordered && x <= y;
  case P::ONE: return !unordered && x != y;
  case P::ORD: return !unordered;
  case P::UEQ: return unordered || x == y;
  case P::UGT: return unordered || x > y;
  case P::UGE: return unordered || x >= y;
  case P::ULT: return unordered || x < y;
  case P::ULE: return unordered || x <= y;
  case P::UNE: return unordered || x != y;
  case P::UNO: return unordered;
  case P::AlwaysTrue: return true;
  }
  return false;
}

static bool compareI(int predicate, int64_t x, int64_t y, unsigned bits) {
  using P = arith::CmpIPredicate;
  uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  uint64_t ux = uint64_t(x) & mask, uy = uint64_t(y) & mask;
  switch (static_cast<P>(predicate)) {
  case P::eq: return x == y;
  case P::ne: return x != y;
  case P::slt: return x < y;
  case P::sle: return x <= y;
  case P::sgt: return x > y;
  case P::sge: return x >= y;
  case P::ult: return ux < uy;
  case P::ule: return ux <= uy;
  case P::ugt: return ux > uy;
  case P::uge: return ux >= uy;
  }
  return false;
}

static int64_t floorDiv(int64_t x, int64_t y) {
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

double RegionEvaluator::run(llvm::ArrayRef<double> args) {
  for (unsigned k = 0; k < numArgs; ++k) {
    if (isFloat[k])
      f[k] = args[k];
    else
      i[k] = static_cast<int64_t>(args[k]);
  }
  for (const Instr &in : program) {
    double fa = f[in.a], fb = f[in.b];
    int64_t ia = i[in.a], ib = i[in.b];
    double &fd = f[in.dst];
    int64_t &id = i[in.dst];
    auto setI = [&](int64_t v) { id = wrap(v, in.bits); };
    auto divisorOk = [&] {
      if (ib != 0)
        return true;
      if (firstError.empty())
        firstError = name + ": '" + in.what + "' divides by zero";
      setI(0);
      return false;
    };
    switch (in.code) {
    case Code::ConstF: fd = in.fc; break;
    case Code::ConstI: id = in.ic; break;
    case Code::Copy:
      // index_cast and extsi sign-extend: an i1 true becomes -1.
      if (isFloat[in.dst]) fd = isFloat[in.a] ? fa : double(ia);
      else setI(in.srcBits == 1 && ia ? -1 : ia);
      break;
    case Code::AddF: fd = fa + fb; break;
    case Code::SubF: fd = fa - fb; break;
    case Code::MulF: fd = fa * fb; break;
    case Code::Fma: fd = std::fma(fa, fb, f[in.c]); break;
    case Code::DivF: fd = fa / fb; break;
    case Code::RemF: fd = std::fmod(fa, fb); break;
    case Code::NegF: fd = -fa; break;
    // maximumf / minimumf propagate NaN; maxnumf / minnumf drop it.
    case Code::MaxF:
      fd = std::isnan(fa) || std::isnan(fb) ? NAN : std::fmax(fa, fb);
      break;
    case Code::MinF:
      fd = std::isnan(fa) || std::isnan(fb) ? NAN : std::fmin(fa, fb);
      break;
    case Code::MaxNumF: fd = std::fmax(fa, fb); break;
    case Code::MinNumF: fd = std::fmin(fa, fb); break;
    case Code::CmpF: id = compareF(in.predicate, fa, fb); break;
    case Code::AddI: setI(int64_t(uint64_t(ia) + uint64_t(ib))); break;
    case Code::SubI: setI(int64_t(uint64_t(ia) - uint64_t(ib))); break;
    case Code::MulI: setI(int64_t(uint64_t(ia) * uint64_t(ib))); break;
    case Code::DivSI: if (divisorOk()) setI(ia / ib); break;
    case Code::RemSI: if (divisorOk()) setI(ia % ib); break;
    case Code::FloorDivSI: if (divisorOk()) setI(floorDiv(ia, ib)); break;
    case Code::CeilDivSI: if (divisorOk()) setI(-floorDiv(-ia, ib)); break;
    case Code::MaxSI: setI(std::max(ia, ib)); break;
    case Code::MinSI: setI(std::min(ia, ib)); break;
    case Code::AndI: setI(ia & ib); break;
    case Code::OrI: setI(ia | ib); break;
    case Code::XorI: setI(ia ^ ib); break;
    case Code::ShlI: setI(ib >= 0 && ib < 64 ? int64_t(uint64_t(ia) << ib) : 0); break;
    case Code::ShrSI: setI(ia >> std::clamp<int64_t>(ib, 0, 63)); break;
    case Code::CmpI:
      // Signed comparisons read an i1 true as -1.
      if (in.ic == 1 && in.predicate != int(arith::CmpIPredicate::eq) &&
          in.predicate != int(arith::CmpIPredicate::ne)) {
        ia = ia ? -1 : 0;
        ib = ib ? -1 : 0;
      }
      id = compareI(in.predicate, ia, ib, static_cast<unsigned>(in.ic));
      break;
    // Negated as unsigned: the minimum value stays itself (as math.absi
    // and the compiled max(v, 0 - v)), without signed overflow.
    case Code::AbsI: setI(ia < 0 ? int64_t(0 - uint64_t(ia)) : ia); break;
    case Code::Select:
      if (isFloat[in.dst]) fd = ia ? f[in.b] : f[in.c];
      else setI(ia ? i[in.b] : i[in.c]);
      break;
    case Code::IToF: fd = double(in.srcBits == 1 && ia ? -1 : ia); break;
    case Code::FToI: setI(int64_t(fa)); break;
    case Code::Exp: fd = std::exp(fa); break;
    case Code::Exp2: fd = std::exp2(fa); break;
    case Code::Log: fd = std::log(fa); break;
    case Code::Log2: fd = std::log2(fa); break;
    case Code::Tanh: fd = std::tanh(fa); break;
    case Code::AbsF: fd = std::fabs(fa); break;
    case Code::Sqrt: fd = std::sqrt(fa); break;
    case Code::Rsqrt: fd = 1.0 / std::sqrt(fa); break;
    case Code::Pow: fd = std::pow(fa, fb); break;
    case Code::Floor: fd = std::floor(fa); break;
    case Code::Ceil: fd = std::ceil(fa); break;
    case Code::Erf: fd = std::erf(fa); break;
    case Code::Sin: fd = std::sin(fa); break;
    case Code::Cos: fd = std::cos(fa); break;
    case Code::Extract: {
      // (Rounded below with the other f32 results.)
      llvm::ArrayRef<int64_t> shape = in.tensor->shape();
      int64_t offset = 0;
      bool inBounds = true;
      for (auto [d, slot] : llvm::enumerate(in.indices)) {
        int64_t x = i[slot];
        inBounds &= x >= 0 && x < shape[d];
        offset = offset * shape[d] + x;
      }
      if (!inBounds) {
        if (firstError.empty())
          firstError = name + ": tensor.extract reads out of bounds";
        fd = 0;
        id = 0;
        break;
      }
      if (isFloat[in.dst])
        fd = in.tensor->getDouble(offset);
      else
        setI(in.tensor->getInt(offset));
      break;
    }
    }
    if (in.roundToF32)
      fd = static_cast<float>(fd);
    else if (in.roundTo) {
      llvm::APFloat v(fd);
      bool lost;
      v.convert(*in.roundTo, llvm::APFloat::rmNearestTiesToEven, &lost);
      v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      fd = v.convertToDouble();
    }
  }
  return isFloat[result] ? f[result] : double(i[result]);
}
