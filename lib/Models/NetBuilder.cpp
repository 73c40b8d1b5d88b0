//===- NetBuilder.cpp - neural-network pieces as attn/linalg IR -----------===//

#include "lib/Models/NetBuilder.h"
#include "lib/Models/Model.h"
#include "dialect/MaskKinds.h"
#include "lib/Transforms/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

NetBuilder::NetBuilder(OpBuilder &b, Location loc, const Model &model,
                       Value weights)
    : b(b), loc(loc), model(model), weights(weights),
      layerIdx(b.getIndexAttr(0)) {}

Value NetBuilder::optionalWeight(llvm::StringRef name) {
  ArrayRef<TensorSpec> specs = model.weights();
  if (std::optional<size_t> found = model.findWeight(name)) {
    size_t i = *found;
    OpFoldResult offset = b.getIndexAttr(model.weightOffset(i));
    if (weightShift && name.starts_with(layerPrefix))
      offset = arith::AddIOp::create(
                   b, loc, weightShift,
                   arith::ConstantIndexOp::create(b, loc, model.weightOffset(i)))
                   .getResult();
    Value flat = tensor::ExtractSliceOp::create(
        b, loc, weights, ArrayRef<OpFoldResult>{offset},
        ArrayRef<OpFoldResult>{b.getIndexAttr(specs[i].numElements())},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    return reshape(flat, specs[i].shape);
  }
  return {};
}

Value NetBuilder::weight(llvm::StringRef name) {
  Value w = optionalWeight(name);
  assert(w && "the model declares every weight it reads");
  return w;
}

std::optional<int64_t> NetBuilder::layerShift(llvm::StringRef from,
                                              llvm::StringRef to) const {
  // (name after the prefix, index) of each prefix's weights, in packing
  // order.
  auto under = [&](llvm::StringRef prefix) {
    SmallVector<std::pair<llvm::StringRef, size_t>> found;
    for (auto [i, spec] : llvm::enumerate(model.weights()))
      if (llvm::StringRef(spec.name).starts_with(prefix))
        found.push_back({llvm::StringRef(spec.name).drop_front(prefix.size()), i});
    return found;
  };
  auto a = under(from), c = under(to);
  if (a.empty() || a.size() != c.size())
    return std::nullopt;
  int64_t shift = model.weightOffset(c[0].second) - model.weightOffset(a[0].second);
  for (auto [x, y] : llvm::zip_equal(a, c)) {
    const TensorSpec &sx = model.weights()[x.second],
                     &sy = model.weights()[y.second];
    if (x.first != y.first || sx.shape != sy.shape ||
        model.weightOffset(y.second) - model.weightOffset(x.second) != shift)
      return std::nullopt;
  }
  return shift;
}

SmallVector<Value> NetBuilder::layer(
    llvm::StringRef stack, int64_t index,
    llvm::function_ref<std::string(int64_t)> prefix, ValueRange args,
    llvm::function_ref<SmallVector<Value>(NetBuilder &, llvm::StringRef,
                                          ValueRange)>
        body) {
  std::string p = prefix(index);
  func::FuncOp func;
  int64_t shift = 0;
  auto it = layerFunctions.find(stack);
  if (it != layerFunctions.end()) {
    auto shared = cast<func::FuncOp>(it->second.first);
    std::optional<int64_t> s = layerShift(it->second.second, p);
    ArrayRef<Type> inputs = shared.getFunctionType().getInputs();
    if (s && inputs.size() == args.size() + 3 &&
        llvm::equal(args.getTypes(), inputs.take_front(args.size()))) {
      func = shared;
      shift = *s;
    }
  }
  if (!func) {
    // A function of its own (the first layer of the stack, or one unlike
    // it: the next like it will share this one).
    auto caller =
        b.getInsertionBlock()->getParent()->getParentOfType<func::FuncOp>();
    SmallVector<Type> argTypes(args.getTypes());
    argTypes.append({weights.getType(), b.getIndexType(), b.getIndexType()});
    OpBuilder fb(b.getContext());
    fb.setInsertionPointAfter(caller);
    std::string name = (caller.getName() + "_" + stack).str();
    if (it != layerFunctions.end())
      name += "_" + std::to_string(index);
    func = func::FuncOp::create(fb, loc, name, fb.getFunctionType(argTypes, {}));
    func.setPrivate();
    Block *block = func.addEntryBlock();
    fb.setInsertionPointToStart(block);
    NetBuilder inner(fb, loc, model, block->getArgument(args.size()));
    inner.layerPrefix = p;
    inner.weightShift = block->getArgument(args.size() + 1);
    inner.layerIdx = block->getArgument(args.size() + 2);
    SmallVector<Value> results =
        body(inner, p, block->getArguments().take_front(args.size()));
    func::ReturnOp::create(fb, loc, results);
    func.setType(fb.getFunctionType(argTypes, ValueRange(results).getTypes()));
    layerFunctions[stack] = {func, p};
  }
  SmallVector<Value> operands(args);
  operands.append({weights, arith::ConstantIndexOp::create(b, loc, shift),
                   arith::ConstantIndexOp::create(b, loc, index)});
  return llvm::to_vector_of<Value>(
      func::CallOp::create(b, loc, func, operands).getResults());
}

Value NetBuilder::empty(ArrayRef<int64_t> shape) {
  return tensor::EmptyOp::create(b, loc, shape, f32());
}

Value NetBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = getShape(x);
  if (from == shape)
    return x;
  // Collapse to 1-d, then expand: valid for any static row-major reshape.
  if (from.size() > 1) {
    SmallVector<int64_t, 2> all;
    for (size_t d = 0; d < from.size(); ++d)
      all.push_back(d);
    x = buildCollapse(b, loc, x, {all});
  }
  if (shape.size() == 1)
    return x;
  SmallVector<int64_t, 2> all;
  for (size_t d = 0; d < shape.size(); ++d)
    all.push_back(d);
  return buildExpand(b, loc, x, shape, {all});
}

Value NetBuilder::flatten(Value x) {
  ArrayRef<int64_t> shape = getShape(x);
  int64_t rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  return reshape(x, {rows, shape.back()});
}

Value NetBuilder::transpose(Value x, ArrayRef<unsigned> perm) {
  return buildTranspose(b, loc, x, perm);
}

Value NetBuilder::concat(ArrayRef<Value> parts) {
  SmallVector<int64_t> shape(getShape(parts[0]));
  int64_t rows = 0;
  for (Value v : parts)
    rows += getShape(v)[0];
  shape[0] = rows;
  Value out = empty(shape);
  int64_t offset = 0;
  for (Value v : parts) {
    ArrayRef<int64_t> s = getShape(v);
    SmallVector<OpFoldResult> offsets(s.size(), b.getIndexAttr(0)), sizes,
        strides(s.size(), b.getIndexAttr(1));
    offsets[0] = b.getIndexAttr(offset);
    for (int64_t d : s)
      sizes.push_back(b.getIndexAttr(d));
    out = tensor::InsertSliceOp::create(b, loc, v, out, offsets, sizes, strides);
    offset += s[0];
  }
  return out;
}

Value NetBuilder::addBroadcast(Value x, Value bias, ArrayRef<unsigned> biasDims) {
  SmallVector<unsigned> dims(biasDims);
  unsigned rank = getShape(x).size();
  if (dims.empty())
    dims.push_back(rank - 1);
  return buildBroadcastAdd(b, loc, x, bias, dimsMap(b.getContext(), rank, dims));
}

Value NetBuilder::linear(Value x, Value w, Value bias) {
  // Transposing the (small) weight once per call makes the contraction read
  // both operands along contiguous rows.
  return buildMatmul(b, loc, x, transpose(w, {1, 0}), bias);
}

Value NetBuilder::activation(llvm::StringRef name, Value x) {
  if (name == "gelu_new")
    return geluTanh(x);
  if (name == "relu")
    return relu(x);
  assert(name == "gelu" && "an activation the model parsers accept");
  return gelu(x);
}

Value NetBuilder::linearFewRows(Value x, Value w, Value bias) {
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> shape(getShape(x));
  int64_t out = getShape(w)[0];
  Value x2 = flatten(x);
  int64_t rows = getShape(x2)[0];
  // y[r, o] = sum_d x[r, d] w[o, d]; dims (r, o, d).
  Value y = buildContraction(b, loc, x2, dimsMap(ctx, 3, {0, 2}), w,
                             dimsMap(ctx, 3, {1, 2}), {rows, out},
                             dimsMap(ctx, 3, {0, 1}));
  if (bias)
    y = buildBroadcastAdd(b, loc, y, bias, dimsMap(ctx, 2, {1}));
  shape.back() = out;
  return reshape(y, shape);
}

Value NetBuilder::conv1d(Value x, Value w, Value bias) {
  return buildMatmul(b, loc, x, w, bias);
}

Value NetBuilder::rowSum(
    Value x, Value rowInput,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> fn) {
  MLIRContext *ctx = b.getContext();
  int64_t rows = getShape(x)[0];
  Value zero = buildFloatConstant(b, loc, f32(), 0.0);
  Value init = linalg::FillOp::create(b, loc, zero, empty({rows})).getResult(0);
  SmallVector<Value> inputs{x};
  SmallVector<AffineMap> maps{dimsMap(ctx, 2, {0, 1})};
  if (rowInput) {
    inputs.push_back(rowInput);
    maps.push_back(dimsMap(ctx, 2, {0}));
  }
  maps.push_back(dimsMap(ctx, 2, {0}));
  bool hasRowInput = static_cast<bool>(rowInput);
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, ValueRange{init}, maps,
             {utils::IteratorType::parallel, utils::IteratorType::reduction},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value term = fn(nb, nl, args[0],
                               hasRowInput ? args[1] : Value());
               Value sum = arith::AddFOp::create(nb, nl, args.back(), term);
               linalg::YieldOp::create(nb, nl, sum);
             })
      .getResult(0);
}

Value NetBuilder::layerNorm(Value x, Value gain, Value bias, double eps) {
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> shape(getShape(x));
  Value x2 = flatten(x);
  double invD = 1.0 / static_cast<double>(shape.back());
  Value sum = rowSum(x2, {}, [](OpBuilder &, Location, Value v, Value) {
    return v;
  });
  auto centered = [invD](OpBuilder &nb, Location nl, Value v, Value s) {
    Value mean = arith::MulFOp::create(
        nb, nl, s, buildFloatConstant(nb, nl, v.getType(), invD));
    return arith::SubFOp::create(nb, nl, v, mean).getResult();
  };
  Value sq = rowSum(x2, sum, [&](OpBuilder &nb, Location nl, Value v, Value s) {
    Value c = centered(nb, nl, v, s);
    return arith::MulFOp::create(nb, nl, c, c).getResult();
  });
  // rstd = 1 / sqrt(var + eps) once per row (as PyTorch's layer_norm
  // computes it), not a square root and a division per element.
  int64_t rows = getShape(x2)[0];
  Value rstd = buildElementwise(
      b, loc, empty({rows}), {sq}, {dimsMap(ctx, 1, {0})},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Type t = a[0].getType();
        Value var = arith::MulFOp::create(nb, nl, a[0],
                                          buildFloatConstant(nb, nl, t, invD));
        Value denom = math::SqrtOp::create(
            nb, nl,
            arith::AddFOp::create(nb, nl, var,
                                  buildFloatConstant(nb, nl, t, eps)));
        return arith::DivFOp::create(nb, nl, buildFloatConstant(nb, nl, t, 1.0),
                                     denom)
            .getResult();
      });
  Value y = buildElementwise(
      b, loc, empty(getShape(x2)), {x2, sum, rstd, gain, bias},
      {dimsMap(ctx, 2, {0, 1}), dimsMap(ctx, 2, {0}), dimsMap(ctx, 2, {0}),
       dimsMap(ctx, 2, {1}), dimsMap(ctx, 2, {1})},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value norm = arith::MulFOp::create(
            nb, nl, centered(nb, nl, a[0], a[1]), a[2]);
        return arith::AddFOp::create(nb, nl,
                                     arith::MulFOp::create(nb, nl, norm, a[3]),
                                     a[4])
            .getResult();
      });
  return reshape(y, shape);
}

Value NetBuilder::map(
    Value x, llvm::function_ref<Value(OpBuilder &, Location, Value)> fn) {
  return buildElementwise(b, loc, empty(getShape(x)), {x},
                          {b.getMultiDimIdentityMap(getShape(x).size())},
                          [&](OpBuilder &nb, Location nl, ValueRange args) {
                            return fn(nb, nl, args[0]);
                          });
}

Value NetBuilder::add(Value a, Value c) {
  AffineMap id = b.getMultiDimIdentityMap(getShape(a).size());
  return buildElementwise(b, loc, empty(getShape(a)), {a, c}, {id, id},
                          [](OpBuilder &nb, Location nl, ValueRange args) {
                            return arith::AddFOp::create(nb, nl, args[0],
                                                         args[1])
                                .getResult();
                          });
}

/// 0.5 * x * (1 + inner)
static Value halfXTimesOnePlus(OpBuilder &b, Location loc, Value x,
                               Value inner) {
  Type t = x.getType();
  Value one = buildFloatConstant(b, loc, t, 1.0);
  Value half = buildFloatConstant(b, loc, t, 0.5);
  Value hx = arith::MulFOp::create(b, loc, half, x);
  return arith::MulFOp::create(b, loc, hx,
                               arith::AddFOp::create(b, loc, one, inner));
}

Value NetBuilder::gelu(Value x) {
  return map(x, [](OpBuilder &nb, Location nl, Value v) {
    Value scaled = arith::MulFOp::create(
        nb, nl, v, buildFloatConstant(nb, nl, v.getType(), M_SQRT1_2));
    return halfXTimesOnePlus(nb, nl, v, math::ErfOp::create(nb, nl, scaled));
  });
}

Value NetBuilder::geluTanh(Value x) {
  return map(x, [](OpBuilder &nb, Location nl, Value v) {
    Type t = v.getType();
    Value v3 = arith::MulFOp::create(nb, nl, v,
                                     arith::MulFOp::create(nb, nl, v, v));
    Value inner = arith::AddFOp::create(
        nb, nl, v,
        arith::MulFOp::create(nb, nl, buildFloatConstant(nb, nl, t, 0.044715),
                              v3));
    Value arg = arith::MulFOp::create(
        nb, nl, buildFloatConstant(nb, nl, t, std::sqrt(2.0 / M_PI)), inner);
    return halfXTimesOnePlus(nb, nl, v, math::TanhOp::create(nb, nl, arg));
  });
}

Value NetBuilder::relu(Value x) {
  return map(x, [](OpBuilder &nb, Location nl, Value v) {
    return arith::MaximumFOp::create(
               nb, nl, v, buildFloatConstant(nb, nl, v.getType(), 0.0))
        .getResult();
  });
}

Value NetBuilder::elu(Value x) {
  return map(x, [](OpBuilder &nb, Location nl, Value v) {
    Type t = v.getType();
    Value negative = arith::SubFOp::create(
        nb, nl, math::ExpOp::create(nb, nl, v), buildFloatConstant(nb, nl, t, 1.0));
    Value positive = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT, v,
                                           buildFloatConstant(nb, nl, t, 0.0));
    return arith::SelectOp::create(nb, nl, positive, v, negative).getResult();
  });
}

Value NetBuilder::selfAttention(Value x, Value inW, Value inB, Value outW,
                                Value outB, int64_t heads,
                                const AttentionMask &mask) {
  auto optionalInt = [&](std::optional<int64_t> v) {
    return v ? b.getI64IntegerAttr(*v) : IntegerAttr();
  };
  auto mha = MhaOp::create(
      b, loc, x.getType(), x, x, x, inW, inB, outW, outB, mask.kvLengths,
      /*bias=*/Value(), mask.relBias,
      /*rel_key=*/Value(), /*alibi_slopes=*/Value(),
      /*row_ptr=*/Value(), /*col_idx=*/Value(), b.getI64IntegerAttr(heads),
      IntegerAttr(), MaskKindAttr::get(b.getContext(), mask.kind),
      optionalInt(mask.relClip), FloatAttr(),
      AlignAttr::get(b.getContext(), Align::bottom_right));
  MaskParams params;
  params.kind = mask.kind;
  if (mask.windowLeft)
    params.set("window_left", *mask.windowLeft);
  if (mask.windowRight)
    params.set("window_right", *mask.windowRight);
  params.applyTo(mha);
  return mha;
}
