//===- LinalgBuilders.cpp - math pieces shared by the lowerings -----------===//

#include "lib/Transforms/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

/// Every builder creates ops (and attributes) of the dialects it names; in a
/// pass that did not declare them in `dependentDialects` they are not loaded,
/// and creating them crashes deep inside MLIR (a segfault in a release build).
/// Says which dialect is missing and where to declare it, then exits 1.
template <typename... Dialects>
static void requireLoaded(OpBuilder &b, StringRef builder) {
  MLIRContext *ctx = b.getContext();
  std::string missing;
  auto check = [&](Dialect *loaded, StringRef name) {
    if (!loaded)
      missing += (missing.empty() ? "'" : ", '") + name.str() + "'";
  };
  (check(ctx->getLoadedDialect<Dialects>(), Dialects::getDialectNamespace()),
   ...);
  if (!missing.empty())
    llvm::reportFatalUsageError(
        "attn builders: " + builder + " creates ops of the dialect(s) " +
        missing +
        ", not loaded in this context; list them in the pass's "
        "`dependentDialects` in Passes.td (see docs/writing-a-pass.md, "
        "\"When it goes wrong\")");
}

ArrayRef<int64_t> mlir::attn::getShape(Value tensor) {
  return cast<RankedTensorType>(tensor.getType()).getShape();
}

bool mlir::attn::hasStaticTensorOperands(Operation *op) {
  // Results too: the verifiers accept a dynamic dim where a static one is
  // implied, and a lowering's static result would not match it.
  auto isStatic = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor && tensor.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

LogicalResult
mlir::attn::requireStaticShapes(Operation *root,
                                llvm::function_ref<bool(Operation *)> filter,
                                StringRef message) {
  WalkResult result = root->walk([&](Operation *op) {
    if (!filter(op) || hasStaticTensorOperands(op))
      return WalkResult::advance();
    InFlightDiagnostic diag = op->emitOpError(message);
    for (Type t : op->getOperandTypes())
      if (!cast<RankedTensorType>(t).hasStaticShape()) {
        diag << ", got " << t;
        break;
      }
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

Type mlir::attn::getElementType(Value tensor) {
  return cast<RankedTensorType>(tensor.getType()).getElementType();
}

AffineMap mlir::attn::dimsMap(MLIRContext *ctx, unsigned numDims,
                              ArrayRef<unsigned> results) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : results)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

Value mlir::attn::buildIndexConstant(OpBuilder &b, Location loc,
                                     int64_t value) {
  requireLoaded<arith::ArithDialect>(b, "buildIndexConstant");
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value mlir::attn::buildIndexCast(OpBuilder &b, Location loc, Value value) {
  requireLoaded<arith::ArithDialect>(b, "buildIndexCast");
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

Value mlir::attn::buildExpOfNonPositive(OpBuilder &b, Location loc, Value x,
                                        Type roundedTo, bool base2) {
  Type type = x.getType();
  // Constants of x's type (splats for a vector).
  auto c = [&](double v) { return buildFloatConstant(b, loc, type, v); };
  if (!getElementTypeOrSelf(type).isF32())
    return math::ExpOp::create(
        b, loc,
        base2 ? arith::MulFOp::create(b, loc, x, c(llvm::numbers::ln2)) : x);
  auto vecType = dyn_cast<VectorType>(type);
  // exp(x) = 2^t, t = x log2(e) = n + g with n = round(t), |g| <= 1/2
  // (t = x with `base2`). Adding 1.5 * 2^23 + 127 rounds t to an integer
  // in the low mantissa bits, n + 127 (the biased exponent of 2^n) for t
  // in [-126.5, 127.5).
  Value t = base2 ? x
                  : arith::MulFOp::create(b, loc, x, c(llvm::numbers::log2e))
                        .getResult();
  Value magic = c(12582912.0 + 127.0);
  Value shifted = arith::AddFOp::create(b, loc, t, magic);
  Value n = arith::SubFOp::create(b, loc, shifted, magic);
  Value g = arith::SubFOp::create(b, loc, t, n);
  // 2^g on [-1/2, 1/2]: a near-minimax polynomial with p(0) = 1 (fitted by
  // Lawson's iteration on Chebyshev nodes for the relative error, checked
  // in f32 Horner form against 2^g in double). For f32 weights degree 5,
  // 2.0 ulp (degree 6, 0.95 ulp, cost one more FMA per score). For weights
  // rounded to bf16 by their user degree 3, relative error 1.0e-4, a
  // twentieth of bf16's half ulp (2^-9): two FMAs less per score.
  static constexpr double kDegree5[] = {
      1.3264723893056554e-3, 9.671512869554628e-3, 5.550733754247326e-2,
      2.4022242080363326e-1, 6.931469775914955e-1};
  static constexpr double kDegree3[] = {
      5.5008931171059594e-2, 2.4221096003797127e-1, 6.932829271772764e-1};
  ArrayRef<double> coefficients =
      roundedTo && roundedTo.isBF16() ? ArrayRef<double>(kDegree3)
                                      : ArrayRef<double>(kDegree5);
  Value p = c(coefficients.front());
  for (double k : coefficients.drop_front())
    p = math::FmaOp::create(b, loc, p, g, c(k));
  p = math::FmaOp::create(b, loc, p, g, c(1.0));
  // 2^n: the biased exponent moved into place.
  Type i32 = b.getI32Type();
  Type bitsType = vecType ? Type(vecType.clone(i32)) : i32;
  Value shift =
      vecType ? arith::ConstantOp::create(
                    b, loc,
                    DenseElementsAttr::get(cast<ShapedType>(bitsType),
                                           b.getI32IntegerAttr(23).getValue()))
                    .getResult()
              : arith::ConstantIntOp::create(b, loc, i32, 23).getResult();
  Value bits = arith::ShLIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, bitsType, shifted), shift);
  Value e = arith::MulFOp::create(b, loc, p,
                                  arith::BitcastOp::create(b, loc, type, bits));
  // Below 2^-126 (and at x = -inf) the result is 0; a NaN stays NaN (the
  // compare is false, and every step above propagates it).
  Value tiny =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, t, c(-126.0));
  return arith::SelectOp::create(b, loc, tiny, c(0.0), e);
}

Value mlir::attn::buildFloatConstant(OpBuilder &b, Location loc, Type type,
                                     double value) {
  requireLoaded<arith::ArithDialect>(b, "buildFloatConstant");
  if (auto vecType = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            vecType, b.getFloatAttr(vecType.getElementType(), value)));
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

scf::ForallOp mlir::attn::buildAttentionForall(
    OpBuilder &b, Location loc, int64_t batch, int64_t heads, int64_t units,
    int64_t rows, int64_t ev, Type f,
    llvm::function_ref<void(OpBuilder &, scf::ForallOp)> body, Type outElem,
    Type lseElem) {
  requireLoaded<scf::SCFDialect, tensor::TensorDialect, arith::ArithDialect,
                linalg::LinalgDialect>(b, "buildAttentionForall");
  Value outInit = tensor::EmptyOp::create(b, loc, {batch, heads, rows, ev},
                                          outElem ? outElem : f);
  Value lseInit = tensor::EmptyOp::create(b, loc, {batch, heads, rows},
                                          lseElem ? lseElem : f);
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(heads),
                             b.getIndexAttr(units)},
      ValueRange{outInit, lseInit}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  body(b, forall);
  return forall;
}

void mlir::attn::buildInsertAttentionRows(OpBuilder &b, Location loc,
                                          scf::ForallOp forall, Value batch,
                                          Value head, Value row0, int64_t rows,
                                          int64_t ev, Value output, Value lse) {
  requireLoaded<tensor::TensorDialect>(b, "buildInsertAttentionRows");
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(forall.getTerminator().getBody());
  ValueRange outs = forall.getRegionIterArgs();
  SmallVector<OpFoldResult> unit(4, b.getIndexAttr(1));
  tensor::ParallelInsertSliceOp::create(
      b, loc, output, outs[0],
      ArrayRef<OpFoldResult>{batch, head, row0, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{unit[0], unit[1], b.getIndexAttr(rows),
                             b.getIndexAttr(ev)},
      unit);
  if (lse)
    tensor::ParallelInsertSliceOp::create(
        b, loc, lse, outs[1], ArrayRef<OpFoldResult>{batch, head, row0},
        ArrayRef<OpFoldResult>{unit[0], unit[1], b.getIndexAttr(rows)},
        ArrayRef<OpFoldResult>(unit).drop_back());
}

Value mlir::attn::buildEmpty(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> shape, Type elemType) {
  requireLoaded<tensor::TensorDialect>(b, "buildEmpty");
  return tensor::EmptyOp::create(b, loc, shape, elemType);
}

static Value buildFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         Type elemType, Value fillValue) {
  requireLoaded<linalg::LinalgDialect>(b, "buildFilled");
  Value empty = buildEmpty(b, loc, shape, elemType);
  return linalg::FillOp::create(b, loc, ValueRange{fillValue},
                                ValueRange{empty})
      .getResult(0);
}

static SmallVector<utils::IteratorType> iteratorsFor(AffineMap outMap) {
  SmallVector<utils::IteratorType> iters;
  for (unsigned d = 0; d < outMap.getNumDims(); ++d)
    iters.push_back(outMap.isFunctionOfDim(d) ? utils::IteratorType::parallel
                                              : utils::IteratorType::reduction);
  return iters;
}

Value mlir::attn::buildContractionInto(OpBuilder &b, Location loc, Value lhs,
                                       AffineMap lhsMap, Value rhs,
                                       AffineMap rhsMap, Value init,
                                       AffineMap outMap) {
  requireLoaded<linalg::LinalgDialect, arith::ArithDialect>(
      b, "buildContractionInto");
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{lhs, rhs}, ValueRange{init},
      ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, iteratorsFor(outMap),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Type acc = args[2].getType();
        auto widen = [&](Value x) -> Value {
          return x.getType() == acc
                     ? x
                     : arith::ExtFOp::create(nb, nloc, acc, x).getResult();
        };
        Value prod =
            arith::MulFOp::create(nb, nloc, widen(args[0]), widen(args[1]));
        Value sum = arith::AddFOp::create(nb, nloc, args[2], prod);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return generic.getResult(0);
}

Value mlir::attn::buildContraction(OpBuilder &b, Location loc, Value lhs,
                                   AffineMap lhsMap, Value rhs,
                                   AffineMap rhsMap, ArrayRef<int64_t> outShape,
                                   AffineMap outMap, Type accType) {
  requireLoaded<linalg::LinalgDialect, tensor::TensorDialect,
                arith::ArithDialect>(b, "buildContraction");
  Type elemType = accType ? accType : getElementType(lhs);
  Value zero = buildFloatConstant(b, loc, elemType, 0.0);
  Value init = buildFilled(b, loc, outShape, elemType, zero);
  return buildContractionInto(b, loc, lhs, lhsMap, rhs, rhsMap, init, outMap);
}

Value mlir::attn::buildTranspose(OpBuilder &b, Location loc, Value x,
                                 ArrayRef<unsigned> perm) {
  requireLoaded<linalg::LinalgDialect, tensor::TensorDialect>(b,
                                                              "buildTranspose");
  ArrayRef<int64_t> shape = getShape(x);
  SmallVector<int64_t> outShape;
  SmallVector<unsigned> inputDims(perm.size());
  for (unsigned d = 0; d < perm.size(); ++d) {
    outShape.push_back(shape[perm[d]]);
    inputDims[perm[d]] = d;
  }
  Type elem = cast<RankedTensorType>(x.getType()).getElementType();
  return buildElementwise(
      b, loc, tensor::EmptyOp::create(b, loc, outShape, elem), {x},
      {dimsMap(b.getContext(), perm.size(), inputDims)},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

Value mlir::attn::buildMatmul(OpBuilder &b, Location loc, Value x, Value rhs,
                              Value bias) {
  requireLoaded<linalg::LinalgDialect, tensor::TensorDialect,
                arith::ArithDialect>(b, "buildMatmul");
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> shape(getShape(x));
  Type elem = cast<RankedTensorType>(x.getType()).getElementType();
  int64_t in = shape.back(), out = getShape(rhs)[1], rows = 1;
  for (int64_t d : ArrayRef<int64_t>(shape).drop_back())
    rows *= d;
  SmallVector<SmallVector<int64_t, 2>> toRows(2);
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    toRows[0].push_back(d);
  toRows[1].push_back(shape.size() - 1);
  Value x2 = shape.size() == 2 ? x : buildCollapse(b, loc, x, toRows);
  if (shape.size() == 1)
    x2 = buildExpand(b, loc, x, {1, in}, {{0, 1}});
  Value empty = tensor::EmptyOp::create(b, loc, {rows, out}, elem);
  Value init =
      bias ? buildElementwise(
                 b, loc, empty, {bias}, {dimsMap(ctx, 2, {1})},
                 [](OpBuilder &, Location, ValueRange args) { return args[0]; })
           : linalg::FillOp::create(
                 b, loc, buildFloatConstant(b, loc, elem, 0.0), empty)
                 .getResult(0);
  // dims (r, o, i): y[r, o] += x[r, i] * rhs[i, o]
  Value y = buildContractionInto(b, loc, x2, dimsMap(ctx, 3, {0, 2}), rhs,
                                 dimsMap(ctx, 3, {2, 1}), init,
                                 dimsMap(ctx, 3, {0, 1}));
  shape.back() = out;
  if (shape.size() == 2)
    return y;
  if (shape.size() == 1)
    return buildCollapse(b, loc, y, {{0, 1}});
  return buildExpand(b, loc, y, shape, toRows);
}

Value mlir::attn::buildElementwise(
    OpBuilder &b, Location loc, Value init, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  requireLoaded<linalg::LinalgDialect>(b, "buildElementwise");
  unsigned rank = getShape(init).size();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, b.getContext()));
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, ValueRange{init}, maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
             })
      .getResult(0);
}

/// Elementwise generic into a new tensor of `shape` (the inputs' element
/// type).
static Value
buildMap(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ValueRange inputs,
         ArrayRef<AffineMap> inputMaps,
         llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value init = buildEmpty(b, loc, shape, getElementType(inputs.front()));
  return buildElementwise(b, loc, init, inputs, inputMaps, body);
}

Value mlir::attn::buildBroadcastAdd(OpBuilder &b, Location loc, Value value,
                                    Value bias, AffineMap biasMap) {
  requireLoaded<linalg::LinalgDialect, tensor::TensorDialect,
                arith::ArithDialect>(b, "buildBroadcastAdd");
  ArrayRef<int64_t> shape = getShape(value);
  AffineMap id =
      AffineMap::getMultiDimIdentityMap(shape.size(), b.getContext());
  Value init = buildEmpty(b, loc, shape, getElementType(value));
  return buildElementwise(
      b, loc, init, ValueRange{value, bias}, {id, biasMap},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return arith::AddFOp::create(nb, nloc, args[0], args[1]);
      });
}

static SmallVector<ReassociationIndices>
toReassociation(ArrayRef<SmallVector<int64_t, 2>> groups) {
  SmallVector<ReassociationIndices> r;
  for (const auto &g : groups)
    r.push_back(ReassociationIndices(g.begin(), g.end()));
  return r;
}

Value mlir::attn::buildExpand(OpBuilder &b, Location loc, Value src,
                              ArrayRef<int64_t> shape,
                              ArrayRef<SmallVector<int64_t, 2>> reassociation) {
  requireLoaded<tensor::TensorDialect>(b, "buildExpand");
  auto type = RankedTensorType::get(shape, getElementType(src));
  return tensor::ExpandShapeOp::create(b, loc, type, src,
                                       toReassociation(reassociation));
}

Value mlir::attn::buildCollapse(
    OpBuilder &b, Location loc, Value src,
    ArrayRef<SmallVector<int64_t, 2>> reassociation) {
  requireLoaded<tensor::TensorDialect>(b, "buildCollapse");
  return tensor::CollapseShapeOp::create(b, loc, src,
                                         toReassociation(reassociation));
}

/// Reduces the last dimension of `input` with `CombineOp` from `init`.
template <typename CombineOp>
static Value buildLastDimReduction(OpBuilder &b, Location loc, Value input,
                                   Value init) {
  ArrayRef<int64_t> shape = getShape(input);
  unsigned rank = shape.size();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.back() = utils::IteratorType::reduction;
  Value acc =
      buildFilled(b, loc, shape.drop_back(), getElementType(input), init);
  return linalg::GenericOp::create(
             b, loc, acc.getType(), ValueRange{input}, ValueRange{acc},
             ArrayRef<AffineMap>{id, id.dropResult(rank - 1)}, iters,
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nloc,
                   CombineOp::create(nb, nloc, args[0], args[1]).getResult());
             })
      .getResult(0);
}

MaskedSoftmax mlir::attn::buildMaskedSoftmax(OpBuilder &b, Location loc,
                                             Value scores, Value weights,
                                             AffineMap weightsMap) {
  requireLoaded<linalg::LinalgDialect, tensor::TensorDialect,
                arith::ArithDialect, math::MathDialect>(b,
                                                        "buildMaskedSoftmax");
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = getShape(scores);
  unsigned rank = shape.size();
  Type f = getElementType(scores);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rowMap = id.dropResult(rank - 1);
  ArrayRef<int64_t> rowShape = shape.drop_back();

  Value negInf =
      buildFloatConstant(b, loc, f, -std::numeric_limits<double>::infinity());
  Value zero = buildFloatConstant(b, loc, f, 0.0);

  // m = max_j s_j (stays -inf for a fully masked row).
  Value rowMax =
      buildLastDimReduction<arith::MaximumFOp>(b, loc, scores, negInf);

  // p_j = w_j * exp(s_j - m), and 0 where m = -inf (guards -inf - -inf).
  SmallVector<Value> expInputs{scores, rowMax};
  SmallVector<AffineMap> expMaps{id, rowMap};
  if (weights) {
    expInputs.push_back(weights);
    expMaps.push_back(weightsMap);
  }
  bool weighted = static_cast<bool>(weights);
  Value exps =
      buildMap(b, loc, shape, expInputs, expMaps,
               [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                 Value diff = arith::SubFOp::create(nb, nloc, args[0], args[1]);
                 Value e = math::ExpOp::create(nb, nloc, diff);
                 if (weighted)
                   e = arith::MulFOp::create(nb, nloc, e, args[2]);
                 Value rowMasked = arith::CmpFOp::create(
                     nb, nloc, arith::CmpFPredicate::OEQ, args[1], negInf);
                 return arith::SelectOp::create(nb, nloc, rowMasked, zero, e);
               });

  // l = sum_j p_j.
  Value rowSum = buildLastDimReduction<arith::AddFOp>(b, loc, exps, zero);

  // probs = p / l, and 0 on empty rows (l = 0).
  Value probs =
      buildMap(b, loc, shape, ValueRange{exps, rowSum}, {id, rowMap},
               [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                 Value empty = arith::CmpFOp::create(
                     nb, nloc, arith::CmpFPredicate::OEQ, args[1], zero);
                 Value p = arith::DivFOp::create(nb, nloc, args[0], args[1]);
                 return arith::SelectOp::create(nb, nloc, empty, zero, p);
               });

  // lse = m + log(l), and -inf on empty rows.
  AffineMap rowId = AffineMap::getMultiDimIdentityMap(rank - 1, ctx);
  Value lse =
      buildMap(b, loc, rowShape, ValueRange{rowMax, rowSum}, {rowId, rowId},
               [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                 Value empty = arith::CmpFOp::create(
                     nb, nloc, arith::CmpFPredicate::OEQ, args[1], zero);
                 Value log = math::LogOp::create(nb, nloc, args[1]);
                 Value v = arith::AddFOp::create(nb, nloc, args[0], log);
                 return arith::SelectOp::create(nb, nloc, empty, negInf, v);
               });
  return {probs, lse};
}

OnlineSoftmaxState mlir::attn::buildOnlineSoftmaxInit(OpBuilder &b,
                                                      Location loc,
                                                      int64_t rows, int64_t ev,
                                                      Type f,
                                                      int64_t sumLanes) {
  requireLoaded<linalg::LinalgDialect, tensor::TensorDialect,
                arith::ArithDialect>(b, "buildOnlineSoftmaxInit");
  Value negInf =
      buildFloatConstant(b, loc, f, -std::numeric_limits<double>::infinity());
  Value zero = buildFloatConstant(b, loc, f, 0.0);
  SmallVector<int64_t> sumShape{rows};
  if (sumLanes > 1)
    sumShape.push_back(sumLanes);
  return {buildFilled(b, loc, {rows}, f, negInf),
          buildFilled(b, loc, sumShape, f, zero),
          buildFilled(b, loc, {rows, ev}, f, zero)};
}

/// tau of the lazy rescale (P <= 2^8): 8 ln 2 in the logits' units, 8 in
/// base-2 scores'.
static double lazyRescaleBound(bool base2) {
  return base2 ? 8.0 : 8.0 * llvm::numbers::ln2;
}

OnlineSoftmaxState mlir::attn::buildOnlineSoftmaxStep(
    OpBuilder &b, Location loc, Value scores, Value values,
    const OnlineSoftmaxState &state, AffineMap valuesMap, bool lazyRescale,
    bool base2) {
  requireLoaded<linalg::LinalgDialect, tensor::TensorDialect,
                arith::ArithDialect, math::MathDialect>(
      b, "buildOnlineSoftmaxStep");
  if (lazyRescale)
    requireLoaded<scf::SCFDialect>(b, "buildOnlineSoftmaxStep");
  // Every update writes into the state tensor it replaces (outs = the state),
  // so a loop carrying the state bufferizes in place.
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> tile = getShape(scores);
  Type f = getElementType(scores);
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row2 = dimsMap(ctx, 2, {0});
  AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);
  auto parallel = [](unsigned n) {
    return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
  };
  Value negInf =
      buildFloatConstant(b, loc, f, -std::numeric_limits<double>::infinity());
  Value zero = buildFloatConstant(b, loc, f, 0.0);
  // m' = max(m, rowmax S) into m, and a = exp(m - m'), or 0 while m' is
  // still -inf (exp(-inf - -inf) would be NaN). maxnum, not maximum:
  // the max only stabilises exp, a NaN score still reaches the output through
  // exp(NaN - m'), and maxnum lowers to plain vmaxps-style code where
  // maximum's NaN and signed-zero rules cost a compare and blends per step.
  Value tileMax =
      buildLastDimReduction<arith::MaxNumFOp>(b, loc, scores, negInf);
  // Also the row's exp offset: m', or 0 while m' is -inf (every score of the
  // row masked so far), so that exp(S - offset) is exp(-inf) = 0 there
  // without a per-element guard. (Not m' log2(e) folded into one FMA of
  // the score, 2^(s log2(e) - c): c rounded to f32 is off m' log2(e) by up
  // to half its ulp, which past |m'| ~ 1.5e9 puts the largest score's
  // 2^(...) out of f32's range and empties the row; S - m' is exact there.)
  // Lazily (`lazyRescale`): m' = max(m, rowmax S) only where rowmax S
  // passes m + tau, else m stays (and a = 1), so that P = exp(S - m) <=
  // e^tau = 2^8: FlashAttention-4's conditional rescale. The row's weights
  // and l are then relative to a smaller offset than its max, which the
  // result acc / l does not see; the accumulators are rescaled only in the
  // steps where some row's max moved (below). tau = 8 ln 2: P, rounded to
  // bf16 or not, keeps its relative precision up to 256, and l (at most
  // 256 per key) stays far from f32's range. (m + tau is rounded to f32:
  // for |m| past 2^23 its ulp exceeds tau and the bound is that ulp's, e.g.
  // P <= e^8 for |m| in [2^26, 2^27); the exp stays exact there. acc's
  // headroom against f32's range shrinks by the same factor.)
  Value tau, one;
  if (lazyRescale) {
    tau = buildFloatConstant(b, loc, f, lazyRescaleBound(base2));
    one = buildFloatConstant(b, loc, f, 1.0);
  }
  auto maxUpdate = linalg::GenericOp::create(
      b, loc,
      TypeRange{state.rowMax.getType(), tileMax.getType(), tileMax.getType()},
      ValueRange{tileMax},
      ValueRange{state.rowMax, buildEmpty(b, loc, {tile[0]}, f),
                 buildEmpty(b, loc, {tile[0]}, f)},
      ArrayRef<AffineMap>{id1, id1, id1, id1}, parallel(1),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value newMax = arith::MaxNumFOp::create(nb, nloc, args[1], args[0]);
        Value raise;
        if (lazyRescale) {
          // -inf + tau is -inf: a row's first allowed score raises it.
          raise = arith::CmpFOp::create(
              nb, nloc, arith::CmpFPredicate::OGT, args[0],
              arith::AddFOp::create(nb, nloc, args[1], tau));
          newMax = arith::SelectOp::create(nb, nloc, raise, newMax, args[1]);
        }
        Value diff = arith::SubFOp::create(nb, nloc, args[1], newMax);
        Value e = base2 ? buildExpOfNonPositive(nb, nloc, diff, {}, true)
                        : math::ExpOp::create(nb, nloc, diff).getResult();
        Value empty = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                            newMax, negInf);
        // A row with no allowed key before this tile has acc = 0 and l = 0
        // (NaN stays NaN): a = 1 leaves them as a = 0 would and asks for no
        // rescale, also in the tile where the row's first key arrives.
        Value alpha;
        if (lazyRescale) {
          Value seen = arith::CmpFOp::create(
              nb, nloc, arith::CmpFPredicate::ONE, args[1], negInf);
          alpha = arith::SelectOp::create(
              nb, nloc, arith::AndIOp::create(nb, nloc, raise, seen), e, one);
        } else {
          alpha = arith::SelectOp::create(nb, nloc, empty, zero, e);
        }
        Value offset = arith::SelectOp::create(nb, nloc, empty, zero, newMax);
        linalg::YieldOp::create(nb, nloc, ValueRange{newMax, alpha, offset});
      });
  Value newMax = maxUpdate.getResult(0), alpha = maxUpdate.getResult(1),
        offset = maxUpdate.getResult(2);

  // x *= a[row], in place.
  auto rescale = [&](OpBuilder &rb, Value x, AffineMap alphaMap) {
    return buildElementwise(
        rb, loc, x, ValueRange{alpha}, {alphaMap},
        [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          return arith::MulFOp::create(nb, nloc, args[1], args[0]);
        });
  };
  // P = exp(S - offset): S - offset <= 0 (or NaN) by construction (<= 8 ln 2
  // with the lazy rescale). For pair-packed bf16 values, P is rounded to
  // bf16 as it is computed: the dot products read it in bf16, and the row
  // sum adds the same rounded weights (so l normalises exactly the weights
  // P V used).
  auto packed = cast<RankedTensorType>(values.getType());
  bool bf16Pairs = packed.getRank() == 3 && packed.getElementType().isBF16();
  Type probType = bf16Pairs ? packed.getElementType() : f;
  Value probs = buildElementwise(
      b, loc, buildEmpty(b, loc, tile, probType), ValueRange{scores, offset},
      {id2, row2}, [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value p = buildExpOfNonPositive(
            nb, nloc, arith::SubFOp::create(nb, nloc, args[0], args[1]),
            probType, base2);
        return bf16Pairs ? arith::TruncFOp::create(nb, nloc, probType, p) : p;
      });
  // l' = a l + rowsum(P); with partial sums in lanes, P as rows x
  // cols/lanes x lanes summed over its middle dim: dims (i, u, t), lane t.
  using utils::IteratorType;
  Value sumInput = probs;
  SmallVector<AffineMap> sumMaps{id2, row2};
  SmallVector<IteratorType> sumIters{IteratorType::parallel,
                                     IteratorType::reduction};
  AffineMap alphaMap = id1;
  if (ArrayRef<int64_t> sumShape = getShape(state.rowSum);
      sumShape.size() == 2) {
    int64_t lanes = sumShape[1];
    assert(tile[1] % lanes == 0 && "score columns not in whole sum lanes");
    alphaMap = row2;
    if (bf16Pairs && tile[1] % (2 * lanes) == 0) {
      // bf16 P in lanes of pairs, dims (i, u, t, p): lane t adds the pair
      // 32u + 2t + {0, 1}, the form of a dot product of P with ones
      // (attn-lower-vectors: one vdpbf16ps per 32 weights, where widening
      // them to f32 and adding takes six instructions).
      sumInput = buildExpand(b, loc, probs,
                             {tile[0], tile[1] / (2 * lanes), lanes, 2},
                             {{0}, {1, 2, 3}});
      sumMaps = {AffineMap::getMultiDimIdentityMap(4, ctx),
                 dimsMap(ctx, 4, {0, 2})};
      sumIters.append({IteratorType::parallel, IteratorType::reduction});
    } else {
      sumInput = buildExpand(b, loc, probs, {tile[0], tile[1] / lanes, lanes},
                             {{0}, {1, 2}});
      sumMaps = {AffineMap::getMultiDimIdentityMap(3, ctx),
                 dimsMap(ctx, 3, {0, 2})};
      sumIters.push_back(IteratorType::parallel);
    }
  }
  // a l and a acc; lazily only in a step where some row's a is not 1
  // (min a < 1).
  Value scaledSum, scaledAcc;
  if (lazyRescale) {
    Value minAlpha =
        buildLastDimReduction<arith::MinNumFOp>(b, loc, alpha, one);
    Value moved = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OLT,
        tensor::ExtractOp::create(b, loc, minAlpha, ValueRange{}), one);
    auto rescaled = scf::IfOp::create(
        b, loc, moved,
        [&](OpBuilder &tb, Location tloc) {
          scf::YieldOp::create(tb, tloc,
                               ValueRange{rescale(tb, state.rowSum, alphaMap),
                                          rescale(tb, state.acc, row2)});
        },
        [&](OpBuilder &eb, Location eloc) {
          scf::YieldOp::create(eb, eloc, ValueRange{state.rowSum, state.acc});
        });
    scaledSum = rescaled.getResult(0);
    scaledAcc = rescaled.getResult(1);
  } else {
    scaledSum = rescale(b, state.rowSum, alphaMap);
  }
  Value newSum =
      linalg::GenericOp::create(
          b, loc, state.rowSum.getType(), ValueRange{sumInput},
          ValueRange{scaledSum}, sumMaps, sumIters,
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value p = args[0];
            if (bf16Pairs)
              p = arith::ExtFOp::create(nb, nloc, f, p);
            linalg::YieldOp::create(
                nb, nloc,
                arith::AddFOp::create(nb, nloc, p, args[1]).getResult());
          })
          .getResult(0);
  // Otherwise a acc right before P V, where it was before the lazy form
  // (the f32 register tiles fuse it into P V's).
  if (!lazyRescale)
    scaledAcc = rescale(b, state.acc, row2);
  if (bf16Pairs) {
    // acc' = a acc + P V over key pairs; dims (i, d, t, p): P pairs
    // (i, t, p), values (t, d, p).
    Value pairs =
        buildExpand(b, loc, probs, {tile[0], tile[1] / 2, 2}, {{0}, {1, 2}});
    Value newAcc = buildContractionInto(
        b, loc, pairs, dimsMap(ctx, 4, {0, 2, 3}), values,
        dimsMap(ctx, 4, {2, 1, 3}), scaledAcc, dimsMap(ctx, 4, {0, 1}));
    return {newMax, newSum, newAcc};
  }
  // acc' = a acc + P V; dims (i, d, j).
  Value newAcc =
      buildContractionInto(b, loc, probs, dimsMap(ctx, 3, {0, 2}), values,
                           valuesMap ? valuesMap : dimsMap(ctx, 3, {2, 1}),
                           scaledAcc, dimsMap(ctx, 3, {0, 1}));
  return {newMax, newSum, newAcc};
}

OnlineSoftmaxState mlir::attn::buildSpeculativeSoftmaxStep(
    OpBuilder &b, Location loc, Value qk, Value values,
    const OnlineSoftmaxState &state, bool base2) {
  requireLoaded<linalg::LinalgDialect, tensor::TensorDialect,
                arith::ArithDialect, math::MathDialect, scf::SCFDialect>(
      b, "buildSpeculativeSoftmaxStep");
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> tile = getShape(qk);
  Type f = getElementType(qk);
  AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row2 = dimsMap(ctx, 2, {0});
  Value negInf =
      buildFloatConstant(b, loc, f, -std::numeric_limits<double>::infinity());
  Value zero = buildFloatConstant(b, loc, f, 0.0);
  // The exp's offset: m, or 0 on rows with no allowed key yet (their
  // scores so far were -inf; exp(S - 0) is then P of a first allowed key,
  // which the tile max below sends to the lazy step anyway). Built before
  // Q K^T, with P's tensor: attn-vectorize computes P where Q K^T is.
  OpBuilder::InsertPoint afterProduct = b.saveInsertionPoint();
  if (Operation *product = qk.getDefiningOp())
    b.setInsertionPoint(product);
  Value probsInit = buildEmpty(b, loc, tile, f);
  Value offset = buildElementwise(
      b, loc, buildEmpty(b, loc, {tile[0]}, f), ValueRange{state.rowMax}, {id1},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value empty = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                            args[0], negInf);
        return arith::SelectOp::create(nb, nloc, empty, zero, args[0]);
      });
  b.restoreInsertionPoint(afterProduct);
  // P = exp(S - offset), marked for attn-vectorize to compute in Q K^T's
  // register tiles.
  Value scores = qk;
  Value probs = buildElementwise(
      b, loc, probsInit, ValueRange{qk, offset}, {id2, row2},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return buildExpOfNonPositive(
            nb, nloc, arith::SubFOp::create(nb, nloc, args[0], args[1]), f,
            base2);
      });
  probs.getDefiningOp()->setAttr(kRegisterTileEpilogueAttr, b.getUnitAttr());
  // Whether some row's tile max passes m + tau (the lazy step's test; -inf
  // + tau is -inf, so a row's first allowed score passes it): the largest
  // tileMax - (m + tau) above 0. A row all -inf so far and here gives -inf -
  // -inf = NaN, which maxnum drops.
  Value tileMax =
      buildLastDimReduction<arith::MaxNumFOp>(b, loc, scores, negInf);
  Value tau = buildFloatConstant(b, loc, f, lazyRescaleBound(base2));
  Value excess = buildElementwise(
      b, loc, buildEmpty(b, loc, {tile[0]}, f),
      ValueRange{tileMax, state.rowMax}, {id1, id1},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return arith::SubFOp::create(
            nb, nloc, args[0], arith::AddFOp::create(nb, nloc, args[1], tau));
      });
  Value maxExcess =
      buildLastDimReduction<arith::MaxNumFOp>(b, loc, excess, negInf);
  Value moved = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGT,
      tensor::ExtractOp::create(b, loc, maxExcess, ValueRange{}), zero);
  auto step = scf::IfOp::create(
      b, loc, moved,
      [&](OpBuilder &tb, Location tloc) {
        OnlineSoftmaxState next = buildOnlineSoftmaxStep(
            tb, tloc, scores, values, state, {}, /*lazyRescale=*/true, base2);
        scf::YieldOp::create(tb, tloc, ValueRange{next.rowSum, next.acc});
      },
      [&](OpBuilder &eb, Location eloc) {
        // l' = l + rowsum(P) (in lanes as buildOnlineSoftmaxStep sums
        // them), acc' = acc + P V; m stays.
        using utils::IteratorType;
        Value sumInput = probs;
        SmallVector<AffineMap> sumMaps{id2, row2};
        SmallVector<IteratorType> sumIters{IteratorType::parallel,
                                           IteratorType::reduction};
        if (ArrayRef<int64_t> sumShape = getShape(state.rowSum);
            sumShape.size() == 2) {
          int64_t lanes = sumShape[1];
          sumInput =
              buildExpand(eb, eloc, probs, {tile[0], tile[1] / lanes, lanes},
                          {{0}, {1, 2}});
          sumMaps = {AffineMap::getMultiDimIdentityMap(3, ctx),
                     dimsMap(ctx, 3, {0, 2})};
          sumIters.push_back(IteratorType::parallel);
        }
        Value newSum =
            linalg::GenericOp::create(
                eb, eloc, state.rowSum.getType(), ValueRange{sumInput},
                ValueRange{state.rowSum}, sumMaps, sumIters,
                [&](OpBuilder &nb, Location nloc, ValueRange args) {
                  linalg::YieldOp::create(
                      nb, nloc,
                      arith::AddFOp::create(nb, nloc, args[0], args[1])
                          .getResult());
                })
                .getResult(0);
        Value newAcc = buildContractionInto(
            eb, eloc, probs, dimsMap(ctx, 3, {0, 2}), values,
            dimsMap(ctx, 3, {2, 1}), state.acc, dimsMap(ctx, 3, {0, 1}));
        scf::YieldOp::create(eb, eloc, ValueRange{newSum, newAcc});
      });
  // m' as the lazy step computes it (max(m, tile max) where the tile max
  // passes m + tau, else m: m itself where nothing moved), after the
  // scf.if and in place (its last reader): written inside the scf.if, m's
  // buffer (one vector for a short query tile) is hoisted out of the key
  // loop as if it were written on every path
  // (linalg::hoistRedundantVectorTransfers), its yield then using the
  // branch's value.
  Value newMax = buildElementwise(
      b, loc, state.rowMax, ValueRange{tileMax}, {id1},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value raise = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::OGT, args[0],
            arith::AddFOp::create(nb, nloc, args[1], tau));
        return arith::SelectOp::create(
            nb, nloc, raise,
            arith::MaxNumFOp::create(nb, nloc, args[0], args[1]), args[1]);
      });
  return {newMax, step.getResult(0), step.getResult(1)};
}

AttentionRows mlir::attn::buildOnlineSoftmaxFinish(
    OpBuilder &b, Location loc, const OnlineSoftmaxState &state, bool base2) {
  requireLoaded<linalg::LinalgDialect, tensor::TensorDialect,
                arith::ArithDialect, math::MathDialect>(
      b, "buildOnlineSoftmaxFinish");
  MLIRContext *ctx = b.getContext();
  Type f = getElementType(state.acc);
  Value zero = buildFloatConstant(b, loc, f, 0.0);
  Value negInf =
      buildFloatConstant(b, loc, f, -std::numeric_limits<double>::infinity());
  AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);
  // Partial sums in lanes: their total, once per row.
  Value rowSum = state.rowSum;
  if (getShape(rowSum).size() == 2)
    rowSum = buildLastDimReduction<arith::AddFOp>(b, loc, rowSum, zero);
  // acc / l as acc times 1 / l, one division per row: a vector division
  // per 16 outputs took ~6 % of causal bf16 attention on AMX tiles at
  // L = 1024 (vdivps: one per 16 cycles on Golden Cove), as FlashAttention
  // multiplies by the inverse; two roundings, within 2 ulp of the quotient.
  Value one = buildFloatConstant(b, loc, f, 1.0);
  Value inverse = buildMap(
      b, loc, getShape(rowSum), ValueRange{rowSum}, {id1},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return arith::DivFOp::create(nb, nloc, one, args[0]);
      });
  AffineMap row2 = dimsMap(ctx, 2, {0});
  Value output = buildMap(
      b, loc, getShape(state.acc), ValueRange{state.acc, rowSum, inverse},
      {AffineMap::getMultiDimIdentityMap(2, ctx), row2, row2},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value empty = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                            args[1], zero);
        Value o = arith::MulFOp::create(nb, nloc, args[0], args[2]);
        return arith::SelectOp::create(nb, nloc, empty, zero, o);
      });
  Value lse = buildMap(
      b, loc, getShape(state.rowMax), ValueRange{state.rowMax, rowSum},
      {id1, id1}, [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value empty = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                            args[1], zero);
        Value m = args[0];
        if (base2)
          m = arith::MulFOp::create(
              nb, nloc, m, buildFloatConstant(nb, nloc, f, llvm::numbers::ln2));
        Value v = arith::AddFOp::create(nb, nloc, m,
                                        math::LogOp::create(nb, nloc, args[1]));
        return arith::SelectOp::create(nb, nloc, empty, negInf, v);
      });
  return {output, lse};
}

Value mlir::attn::buildDenseFromCsr(OpBuilder &b, Location loc, Value rowPtr,
                                    Value colIdx, int64_t rows, int64_t cols,
                                    Type elemType, bool skipDiagonal,
                                    int64_t rowBlock, int64_t colBlock) {
  requireLoaded<scf::SCFDialect, tensor::TensorDialect, arith::ArithDialect,
                linalg::LinalgDialect>(b, "buildDenseFromCsr");
  bool boolean = isa<IntegerType>(elemType);
  Value init =
      boolean ? arith::ConstantOp::create(b, loc, b.getIntegerAttr(elemType, 0))
                    .getResult()
              : buildFloatConstant(b, loc, elemType, 0.0);
  Value dense = buildFilled(b, loc,
                            {llvm::divideCeilSigned(rows, rowBlock),
                             llvm::divideCeilSigned(cols, colBlock)},
                            elemType, init);

  Type indexType = b.getIndexType();
  auto toIndex = [&](OpBuilder &nb, Location nloc, Value v) -> Value {
    return arith::IndexCastOp::create(nb, nloc, indexType, v);
  };
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value cRows = arith::ConstantIndexOp::create(b, loc, rows);
  Value cCols = arith::ConstantIndexOp::create(b, loc, cols);
  Value cRowBlock = arith::ConstantIndexOp::create(b, loc, rowBlock);
  Value cColBlock = arith::ConstantIndexOp::create(b, loc, colBlock);

  auto rowLoop = scf::ForOp::create(
      b, loc, c0, cRows, c1, ValueRange{dense},
      [&](OpBuilder &rb, Location rloc, Value i, ValueRange rowArgs) {
        Value next = arith::AddIOp::create(rb, rloc, i, c1);
        Value row =
            rowBlock == 1
                ? i
                : arith::DivUIOp::create(rb, rloc, i, cRowBlock).getResult();
        Value begin =
            toIndex(rb, rloc,
                    tensor::ExtractOp::create(rb, rloc, rowPtr, ValueRange{i}));
        Value end = toIndex(
            rb, rloc,
            tensor::ExtractOp::create(rb, rloc, rowPtr, ValueRange{next}));
        auto edgeLoop = scf::ForOp::create(
            rb, rloc, begin, end, c1, rowArgs,
            [&](OpBuilder &eb, Location eloc, Value e, ValueRange edgeArgs) {
              Value j = toIndex(
                  eb, eloc,
                  tensor::ExtractOp::create(eb, eloc, colIdx, ValueRange{e}));
              // Keep in-range entries only; out-of-range ones touch (i, 0)
              // and write back what was there.
              Value geZero = arith::CmpIOp::create(
                  eb, eloc, arith::CmpIPredicate::sge, j, c0);
              Value ltCols = arith::CmpIOp::create(
                  eb, eloc, arith::CmpIPredicate::slt, j, cCols);
              Value keep = arith::AndIOp::create(eb, eloc, geZero, ltCols);
              if (skipDiagonal) {
                Value offDiag = arith::CmpIOp::create(
                    eb, eloc, arith::CmpIPredicate::ne, j, i);
                keep = arith::AndIOp::create(eb, eloc, keep, offDiag);
              }
              Value jSafe = arith::SelectOp::create(eb, eloc, keep, j, c0);
              Value col =
                  colBlock == 1
                      ? jSafe
                      : arith::DivUIOp::create(eb, eloc, jSafe, cColBlock)
                            .getResult();
              Value old = tensor::ExtractOp::create(eb, eloc, edgeArgs[0],
                                                    ValueRange{row, col});
              Value updated =
                  boolean ? arith::ConstantOp::create(
                                eb, eloc, eb.getIntegerAttr(elemType, 1))
                                .getResult()
                          : arith::AddFOp::create(
                                eb, eloc, old,
                                buildFloatConstant(eb, eloc, elemType, 1.0))
                                .getResult();
              Value val = arith::SelectOp::create(eb, eloc, keep, updated, old);
              Value inserted = tensor::InsertOp::create(
                  eb, eloc, val, edgeArgs[0], ValueRange{row, col});
              scf::YieldOp::create(eb, eloc, inserted);
            });
        scf::YieldOp::create(rb, rloc, edgeLoop.getResults());
      });
  return rowLoop.getResult(0);
}
