//===- RuntimeChecks.cpp - bounds checks of hand-written code at run time -===//
//
// attn-runtime-checks: the accesses of the code around attn ops whose
// indices are only known at run time are checked before they happen, and a
// failed check (or a failed cf.assert of the user's) ends the process with
// one error line through the runtime's attn_check_failed instead of an
// access outside a buffer or MLIR's abort.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/RuntimeVerifiableOpInterface.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRUNTIMECHECKS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// The runtime function a failed check calls (lib/Runtime/Jit.cpp).
static constexpr llvm::StringLiteral kCheckFailed = "attn_check_failed";

/// "file:line:col: error: memref.load: out-of-bounds access (a run-time
/// check)": the form of the compile-time diagnostics, at the op's location.
static std::string checkMessage(Operation *op, StringRef what) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn() << ": ";
  os << "error: ";
  if (isa<cf::AssertOp>(op))
    os << "cf.assert failed: " << what;
  else
    os << op->getName() << ": " << what << " (a run-time check)";
  return text;
}

/// `cf.assert` that `indices` (with `extent[d]` elements from each of the
/// trailing dims: a vector's shape) lie inside `memref`.
static void assertInside(OpBuilder &b, Operation *op, Value memref,
                         ValueRange indices, ArrayRef<int64_t> extent = {}) {
  Location loc = op->getLoc();
  auto type = cast<MemRefType>(memref.getType());
  size_t firstExtent = indices.size() - std::min(indices.size(), extent.size());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value inside;
  for (auto [d, i] : llvm::enumerate(indices)) {
    int64_t n = d >= firstExtent ? extent[d - firstExtent] : 1;
    Value size =
        type.isDynamicDim(d)
            ? memref::DimOp::create(b, loc, memref, d).getResult()
            : arith::ConstantIndexOp::create(b, loc, type.getDimSize(d))
                  .getResult();
    // i >= 0 and i <= size - n (sizes are small non-negative numbers: no
    // wrap), i.e. [i, i + n) inside [0, size).
    Value last = arith::SubIOp::create(
        b, loc, size, arith::ConstantIndexOp::create(b, loc, n));
    Value ok = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, i, last));
    inside = inside ? arith::AndIOp::create(b, loc, inside, ok).getResult() : ok;
  }
  if (inside)
    cf::AssertOp::create(b, loc, inside,
                         checkMessage(op, "out-of-bounds access"));
}

/// Integer division and remainder: x86's idiv / div trap (SIGFPE) on a zero
/// divisor, and the signed ones on the minimum integer divided by -1.
static bool isIntegerDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
             arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op);
}

/// `cond` (i1, or a vector of i1) for any lane.
static Value anyLane(OpBuilder &b, Location loc, Value cond) {
  auto type = dyn_cast<VectorType>(cond.getType());
  if (!type)
    return cond;
  if (type.getRank() != 1)
    cond = vector::ShapeCastOp::create(
        b, loc, VectorType::get({type.getNumElements()}, type.getElementType()),
        cond);
  return vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, cond);
}

/// `cf.assert`s that integer division `op` does not trap: a divisor that
/// is not zero and, when signed, not the minimum integer over -1.
static void assertDivision(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  bool isSigned = isa<arith::DivSIOp, arith::RemSIOp, arith::CeilDivSIOp,
                      arith::FloorDivSIOp>(op);
  // A constant divisor (a scalar or a splat or dense vector) without zero,
  // and for signed division without -1, needs no check.
  Attribute divisor;
  if (matchPattern(rhs, m_Constant(&divisor))) {
    SmallVector<APInt> values;
    if (auto scalar = dyn_cast<IntegerAttr>(divisor))
      values.push_back(scalar.getValue());
    else if (auto dense = dyn_cast<DenseIntElementsAttr>(divisor))
      values.assign(dense.value_begin<APInt>(), dense.value_end<APInt>());
    if (!values.empty() && llvm::none_of(values, [&](const APInt &v) {
          return v.isZero() || (isSigned && v.isAllOnes());
        }))
      return;
  }
  Type type = rhs.getType();
  Type element = getElementTypeOrSelf(type);
  auto splat = [&](const APInt &value) -> Value {
    TypedAttr scalar = b.getIntegerAttr(element, value);
    if (auto vector = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(vector, scalar));
    return arith::ConstantOp::create(b, loc, scalar);
  };
  unsigned width =
      element.isIndex() ? 64 : cast<IntegerType>(element).getWidth();
  Value no = arith::ConstantIntOp::create(b, loc, 1, /*width=*/1);
  auto none = [&](Value cond) -> Value {
    return arith::XOrIOp::create(b, loc, anyLane(b, loc, cond), no);
  };
  Value zero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs,
                                     splat(APInt::getZero(width)));
  cf::AssertOp::create(b, loc, none(zero),
                       checkMessage(op, "integer division by zero"));
  if (!isSigned)
    return;
  Value overflow = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs,
                            splat(APInt::getSignedMinValue(width))),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs,
                            splat(APInt::getAllOnes(width))));
  cf::AssertOp::create(
      b, loc, none(overflow),
      checkMessage(op, "signed integer division overflow (the minimum "
                       "integer divided by -1)"));
}

/// The elements a vector access spans from its indices: the vector's shape,
/// or one element of a memref of vectors.
static ArrayRef<int64_t> vectorExtent(MemRefType memref, VectorType vector) {
  return isa<VectorType>(memref.getElementType()) ? ArrayRef<int64_t>{}
                                                  : vector.getShape();
}

/// The constant `v` folds to when every operand of a short chain of arith
/// ops is constant (a check of constant indices), or null. Ops are folded
/// only when all their operands are constants: nothing is changed in place.
static Attribute foldedConstant(Value v, int depth = 0) {
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 8 || def->getNumResults() != 1 ||
      !isa_and_nonnull<arith::ArithDialect>(def->getDialect()))
    return {};
  SmallVector<Attribute> operands;
  for (Value operand : def->getOperands()) {
    operands.push_back(foldedConstant(operand, depth + 1));
    if (!operands.back())
      return {};
  }
  SmallVector<OpFoldResult> results;
  if (failed(def->fold(operands, results)) || results.size() != 1)
    return {};
  return dyn_cast<Attribute>(results[0]);
}

namespace {
struct AttnRuntimeChecks
    : attn::impl::AttnRuntimeChecksBase<AttnRuntimeChecks> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto ptr = LLVM::LLVMPointerType::get(module.getContext());
    auto fnType = FunctionType::get(module.getContext(), {ptr}, {});
    // The runtime provides the function: the module may only declare it
    // (the JIT would refuse a second definition, and calling the user's
    // would not end the process).
    auto failedFn = dyn_cast_or_null<func::FuncOp>(
        module.lookupSymbol(kCheckFailed));
    if (Operation *existing = module.lookupSymbol(kCheckFailed))
      if (!failedFn || !failedFn.isExternal() ||
          failedFn.getFunctionType() != fnType) {
        existing->emitError()
            << "@" << kCheckFailed
            << " is attn-runtime-checks' runtime function: the module may "
               "only declare it, as func.func private @"
            << kCheckFailed << "(!llvm.ptr)";
        return signalPassFailure();
      }
    // The user's ops: in the func.func bodies of this module, outside attn
    // ops (their regions are the lowerings') and GPU code (no host calls
    // there), and not in the body of memref.generic_atomic_rmw (no side
    // effects there).
    SmallVector<Operation *> toCheck;
    // (assert, whether it is the user's own)
    SmallVector<std::pair<Operation *, bool>> asserts;
    SmallVector<Operation *> dropped;
    module->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa_and_nonnull<attn::AttnDialect>(op->getDialect()) ||
          isa<gpu::GPUModuleOp, gpu::LaunchOp, gpu::GPUFuncOp>(op) ||
          (isa<ModuleOp>(op) && op != module))
        return WalkResult::skip();
      if (!op->getParentOfType<func::FuncOp>())
        return WalkResult::advance();
      if (isa<cf::AssertOp>(op))
        asserts.push_back({op, true});
      else if (isa<RuntimeVerifiableOpInterface, affine::AffineLoadOp,
                   affine::AffineStoreOp, vector::LoadOp, vector::StoreOp>(op) ||
               isIntegerDivision(op))
        toCheck.push_back(op);
      return isa<memref::GenericAtomicRMWOp>(op) ? WalkResult::skip()
                                                 : WalkResult::advance();
    });

    for (Operation *op : toCheck) {
      OpBuilder b(op);
      Block *block = op->getBlock();
      Operation *prev = op->getPrevNode();
      // An affine access: its map expanded; a vector access: the whole
      // vector (loads and stores alike).
      auto checkAffine = [&](auto access) {
        if (auto indices = affine::expandAffineMap(
                b, op->getLoc(), access.getAffineMap(),
                access.getMapOperands()))
          assertInside(b, op, access.getMemRef(), *indices);
      };
      auto checkVector = [&](auto access) {
        assertInside(
            b, op, access.getBase(), access.getIndices(),
            vectorExtent(access.getMemRefType(), access.getVectorType()));
      };
      if (auto verifiable = dyn_cast<RuntimeVerifiableOpInterface>(op))
        verifiable.generateRuntimeVerification(b, op->getLoc(), checkMessage);
      else if (auto l = dyn_cast<affine::AffineLoadOp>(op))
        checkAffine(l);
      else if (auto st = dyn_cast<affine::AffineStoreOp>(op))
        checkAffine(st);
      else if (auto l = dyn_cast<vector::LoadOp>(op))
        checkVector(l);
      else if (auto st = dyn_cast<vector::StoreOp>(op))
        checkVector(st);
      else if (isIntegerDivision(op))
        assertDivision(b, op);
      // The asserts the interface and assertInside created, also inside
      // the ops they created (linalg's checks sit in an scf.if).
      for (Operation *it = prev ? prev->getNextNode() : &block->front();
           it != op; it = it->getNextNode())
        it->walk([&](cf::AssertOp check) {
          // A check that holds whatever the inputs (constant indices inside
          // static shapes) is dropped.
          auto holds =
              dyn_cast_or_null<IntegerAttr>(foldedConstant(check.getArg()));
          if (!holds || !holds.getValue().isOne())
            asserts.push_back({check, false});
          else
            dropped.push_back(check);
        });
    }
    for (Operation *check : dropped)
      check->erase();
    if (asserts.empty())
      return;

    // One declaration of the runtime's function, one global per message.
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    Location unknown = UnknownLoc::get(module.getContext());
    if (!failedFn) {
      failedFn = func::FuncOp::create(top, unknown, kCheckFailed, fnType);
      failedFn.setPrivate();
    }
    llvm::StringMap<LLVM::GlobalOp> messages;
    SymbolTable symbols(module);
    for (auto [op, own] : asserts) {
      auto assertOp = cast<cf::AssertOp>(op);
      // The checks' messages are formed already; the user's get the form.
      std::string message = own ? checkMessage(op, assertOp.getMsg())
                                : assertOp.getMsg().str();
      LLVM::GlobalOp &global = messages[message];
      if (!global) {
        std::string bytes = message + '\0';
        global = LLVM::GlobalOp::create(
            top, unknown,
            LLVM::LLVMArrayType::get(top.getI8Type(), bytes.size()),
            /*isConstant=*/true, LLVM::Linkage::Internal,
            "attn_check_message", top.getStringAttr(bytes));
        symbols.insert(global); // uniques the name
      }
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value failed = arith::XOrIOp::create(
          b, loc, assertOp.getArg(),
          arith::ConstantIntOp::create(b, loc, 1, /*width=*/1));
      auto ifOp = scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
      OpBuilder then = ifOp.getThenBodyBuilder();
      Value text = LLVM::AddressOfOp::create(then, loc, global);
      func::CallOp::create(then, loc, failedFn, ValueRange{text});
      op->erase();
    }
  }
};
} // namespace
