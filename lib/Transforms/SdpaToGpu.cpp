//===- SdpaToGpu.cpp - attn.sdpa as a gpu.launch --------------------------===//
//
// One subgroup per query row: lane x holds the query and accumulator
// elements x, x + S, x + 2S, ... (S = subgroup size) in registers; K and V
// tiles are staged in workgroup memory; each key's score is the subgroup sum
// of the lanes' partial dot products, and the online-softmax step is taken
// on it by every lane. What a score is (scale, biases, masks, regions) comes
// from SdpaScoreEmitter and the mask kinds' definitions, as in every other
// lowering.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "dialect/MaskKinds.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/MaskModTiles.h"
#include "lib/Transforms/Passes.h"
#include "lib/Transforms/OptionBounds.h"
#include "lib/Transforms/SdpaScore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSDPATOGPU
#define GEN_PASS_DEF_ATTNGATTOGPU
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Workgroup memory: memory space 3 (what convert-gpu-to-spirv maps to the
/// Workgroup storage class and NVVM to shared memory).
constexpr unsigned kWorkgroupSpace = 3;

struct Sizes {
  int64_t b, h, hkv, lq, lk, e, ev;
};

/// Small arithmetic helpers on index values.
struct Ix {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return buildIndexConstant(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value floorDiv(Value x, int64_t d) {
    return arith::FloorDivSIOp::create(b, loc, x, c(d));
  }
};

/// One online-softmax step on a subgroup-uniform score, for a lane's slice
/// of the accumulator: m' = max(m, s), l' = l e^(m - m') + e^(s - m'),
/// acc' = acc e^(m - m') + e^(s - m') v; nothing changes while m' = -inf.
/// `state` is (m, l, acc...); `value(c)` builds the lane's v element of
/// accumulator c (where it is used: a staged V read comes after the
/// exponentials); returns the new state in the same order.
SmallVector<Value> onlineSoftmaxStep(OpBuilder &b, Location loc,
                                     ValueRange state, Value score,
                                     function_ref<Value(size_t)> value) {
  auto f32 = b.getF32Type();
  Value negInf =
      buildFloatConstant(b, loc, f32, -std::numeric_limits<double>::infinity());
  Value m = state[0], l = state[1];
  Value mNew = arith::MaxNumFOp::create(b, loc, m, score);
  Value dead =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, negInf);
  Value corr = arith::SelectOp::create(
      b, loc, dead, buildFloatConstant(b, loc, f32, 1.0),
      math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, mNew)));
  Value p = arith::SelectOp::create(
      b, loc, dead, buildFloatConstant(b, loc, f32, 0.0),
      math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, score, mNew)));
  SmallVector<Value> next{mNew, math::FmaOp::create(b, loc, l, corr, p)};
  for (auto [c, acc] : llvm::enumerate(state.drop_front(2)))
    next.push_back(math::FmaOp::create(
        b, loc, p, value(c), arith::MulFOp::create(b, loc, acc, corr)));
  return next;
}

/// A buffer of `tensor` for a kernel: function arguments as they are, any
/// other tensor copied into a dense one first (a view would lose its offset
/// to the bare-pointer calling convention).
Value denseBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto arg = dyn_cast<BlockArgument>(tensor);
  if (!(arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp())))
    tensor = bufferization::AllocTensorOp::create(b, loc, type, ValueRange(),
                                                  tensor);
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

class Lowering {
public:
  Lowering(SdpaOp op, const AttnSdpaToGpuOptions &options)
      : op(op), opts(options) {}

  LogicalResult run();
  /// Whether run() takes `op` as it is (static shapes; f32, or f16 without
  /// score modifications).
  static bool takesNatively(SdpaOp op);

private:
  Value toBuffer(OpBuilder &b, Value tensor);
  void buildKernel(OpBuilder &b, gpu::LaunchOp launch, Value qBuf, Value kBuf,
                   Value vBuf, Value oBuf, Value lseBuf, Value kSh, Value vSh,
                   const MaskModTiles *maskTiles);
  /// i1: key `j` is in row `i` of the CSR (each lane scans every S-th
  /// entry of the row; the subgroup combines them). Duplicates are harmless.
  Value graphAllowed(OpBuilder &b, Value i, Value j);
  /// f32 of `v` (f16 read as f32).
  Value widen(OpBuilder &b, Location loc, Value v) {
    if (v.getType().isF32())
      return v;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  }

  SdpaOp op;
  const AttnSdpaToGpuOptions &opts;
  Sizes sz{};
  int64_t bk = 0;
  SdpaScoreEmitter emitter{op};
};

} // namespace

Value Lowering::toBuffer(OpBuilder &b, Value tensor) {
  return denseBuffer(b, op.getLoc(), tensor);
}

bool Lowering::takesNatively(SdpaOp op) {
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<RankedTensorType>(v.getType());
        t && !t.hasStaticShape())
      return false;
  Type elem = op.getQuery().getType().getElementType();
  if (elem.isF32())
    return true;
  return elem.isF16() && !op.getBias() && !op.getRelBias() && !op.getRelKey() &&
         !op.getAlibiSlopes() && op.getScoreMod().empty();
}

LogicalResult Lowering::run() {
  Location loc = op.getLoc();
  auto qType = op.getQuery().getType();
  auto kType = op.getKey().getType();
  auto vType = op.getValue().getType();
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<RankedTensorType>(v.getType());
        t && !t.hasStaticShape())
      return op.emitOpError("attn-sdpa-to-gpu: dynamic shapes are not "
                            "supported on the GPU path (operand of type ")
             << t << ")";
  Type elem = qType.getElementType();
  if (!elem.isF32() && !elem.isF16())
    return op.emitOpError("attn-sdpa-to-gpu: element type ")
           << elem << " is not supported on the GPU path (f32, f16)";
  if (!elem.isF32() && (op.getBias() || op.getRelBias() || op.getRelKey() ||
                        op.getAlibiSlopes() || !op.getScoreMod().empty()))
    return op.emitOpError("attn-sdpa-to-gpu: score modifications on f16 "
                          "operands are not supported on the GPU path yet");
  if (opts.subgroupSize < 1 || opts.rows < 1 || opts.blockK < 0 ||
      opts.sharedMemory < 1)
    return op.emitOpError("attn-sdpa-to-gpu: subgroup-size, rows and "
                          "shared-memory must be >= 1 and block-k >= 0");

  sz = {qType.getDimSize(0), qType.getDimSize(1), kType.getDimSize(1),
        qType.getDimSize(2), kType.getDimSize(2), qType.getDimSize(3),
        vType.getDimSize(3)};
  // K and V tiles in f32: 4 (E + Ev) bytes per key (checked: E and Ev may
  // be near 2^62, and one key must fit).
  if (sz.e > opts.sharedMemory / 4 || sz.ev > opts.sharedMemory / 4 ||
      sz.e + sz.ev > opts.sharedMemory / 4)
    return op.emitOpError("attn-sdpa-to-gpu: one key of K and V (E = ")
           << sz.e << ", Ev = " << sz.ev
           << ", 4 bytes each) does not fit shared-memory = "
           << opts.sharedMemory << " bytes";
  int64_t perKey = 4 * (sz.e + sz.ev);
  bk = opts.blockK ? opts.blockK
                   : std::clamp<int64_t>(opts.sharedMemory / perKey, 1, 64);
  bk = std::min(bk, sz.lk);
  if (bk > opts.sharedMemory / perKey)
    return op.emitOpError("attn-sdpa-to-gpu: block-k = ")
           << bk << " needs "
           << llvm::SaturatingMultiply(static_cast<uint64_t>(bk),
                                       static_cast<uint64_t>(perKey))
           << " bytes of workgroup memory for K and V, over shared-memory = "
           << opts.sharedMemory;

  OpBuilder b(op);
  Value qBuf = toBuffer(b, op.getQuery());
  Value kBuf = toBuffer(b, op.getKey());
  Value vBuf = toBuffer(b, op.getValue());
  auto oType = op.getOutput().getType();
  Value oBuf = memref::AllocOp::create(
      b, loc, MemRefType::get(oType.getShape(), oType.getElementType()));
  Value lseBuf;
  if (Value lse = op.getLse()) {
    auto t = cast<RankedTensorType>(lse.getType());
    lseBuf = memref::AllocOp::create(
        b, loc, MemRefType::get(t.getShape(), t.getElementType()));
  }

  Ix ix{b, loc};
  int64_t rows = opts.rows;
  // A mask_mod region's tile classes (its min / max tables built here,
  // read by the kernel as buffers): the workgroup's key tiles the region
  // leaves empty are skipped, as on the CPU.
  std::optional<MaskModTiles> maskTiles;
  if (emitter.hasMaskMod())
    maskTiles.emplace(b, loc, op, rows, bk);
  Value gridX = ix.c((sz.lq + rows - 1) / rows);
  auto f32 = b.getF32Type();
  auto space = b.getI64IntegerAttr(kWorkgroupSpace);
  auto kShType =
      MemRefType::get({bk, sz.e}, f32, MemRefLayoutAttrInterface(), space);
  auto vShType =
      MemRefType::get({bk, sz.ev}, f32, MemRefLayoutAttrInterface(), space);
  SmallVector<Type> attributions;
  if (opts.workgroupAttributions)
    attributions = {kShType, vShType};
  auto launch = gpu::LaunchOp::create(
      b, loc, gridX, ix.c(sz.h), ix.c(sz.b), ix.c(opts.subgroupSize),
      ix.c(rows), ix.c(1), /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, attributions);
  {
    OpBuilder::InsertionGuard guard(b);
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    Value kSh, vSh;
    if (opts.workgroupAttributions) {
      kSh = launch.getWorkgroupAttributions()[0];
      vSh = launch.getWorkgroupAttributions()[1];
    } else {
      kSh = memref::AllocOp::create(b, loc, kShType);
      vSh = memref::AllocOp::create(b, loc, vShType);
    }
    buildKernel(b, launch, qBuf, kBuf, vBuf, oBuf, lseBuf, kSh, vSh,
                maskTiles ? &*maskTiles : nullptr);
    gpu::TerminatorOp::create(b, loc);
  }

  // Values from above the launch must be buffers or constants: a kernel's
  // arguments are buffers (a region reading a scalar function argument
  // would become a scalar kernel argument, which the launch ABI refuses).
  {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(launch.getBody(), above);
    for (Value v : above) {
      if (isa<MemRefType, RankedTensorType>(v.getType()))
        continue;
      if (Operation *def = v.getDefiningOp();
          def && def->hasTrait<OpTrait::ConstantLike>())
        continue;
      return op.emitOpError("attn-sdpa-to-gpu: a score_mod / mask_mod "
                            "region reads a value defined outside it that is "
                            "neither a constant nor a tensor (of type ")
             << v.getType()
             << "); on the GPU path pass it as a tensor<1x...> and read it "
                "with tensor.extract";
    }
  }

  // Tensors the emitter (and inlined regions) read inside the launch are
  // read from their buffers.
  DenseMap<Value, Value> buffers;
  SmallVector<tensor::ExtractOp> extracts;
  launch.getBody().walk([&](tensor::ExtractOp e) { extracts.push_back(e); });
  for (tensor::ExtractOp e : extracts) {
    Value t = e.getTensor();
    if (launch.getBody().isAncestor(t.getParentRegion()))
      return e.emitOpError("attn-sdpa-to-gpu: a tensor defined inside the "
                           "kernel cannot be read");
    Value &buf = buffers[t];
    if (!buf) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(launch);
      buf = toBuffer(b, t);
    }
    OpBuilder lb(e);
    Value load = memref::LoadOp::create(lb, e.getLoc(), buf, e.getIndices());
    e.replaceAllUsesWith(load);
    e.erase();
  }

  b.setInsertionPointAfter(launch);
  auto toTensor = [&](Value buf, Type type) {
    return bufferization::ToTensorOp::create(b, loc, type, buf,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  };
  op.getOutput().replaceAllUsesWith(toTensor(oBuf, oType));
  if (Value lse = op.getLse())
    lse.replaceAllUsesWith(toTensor(lseBuf, lse.getType()));
  op.erase();
  return success();
}

Value Lowering::graphAllowed(OpBuilder &b, Value i, Value j) {
  Location loc = op.getLoc();
  Ix ix{b, loc};
  Value rowPtr = op.getRowPtr(), colIdx = op.getColIdx();
  int64_t nnz = cast<RankedTensorType>(colIdx.getType()).getDimSize(0);
  // The row's entries, clamped into col_idx (attn-run validates the CSR;
  // the kernel never reads out of bounds).
  Value begin = buildIndexCast(
      b, loc, tensor::ExtractOp::create(b, loc, rowPtr, ValueRange{i}));
  Value end =
      buildIndexCast(b, loc,
                     tensor::ExtractOp::create(b, loc, rowPtr,
                                               ValueRange{ix.add(i, ix.c(1))}));
  begin = ix.max(ix.min(begin, ix.c(nnz)), ix.c(0));
  end = ix.max(ix.min(end, ix.c(nnz)), begin);
  Value lane = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  auto f32 = b.getF32Type();
  Value zero = buildFloatConstant(b, loc, f32, 0.0);
  // Steps of S entries, the same count for every lane (the subgroup stays
  // converged for the reduction after the loop); lane x reads entry
  // begin + t S + x when it is before the end.
  int64_t s = opts.subgroupSize;
  Value steps = ix.div(ix.add(ix.sub(end, begin), ix.c(s - 1)), ix.c(s));
  auto scan =
      scf::ForOp::create(b, loc, ix.c(0), steps, ix.c(1), ValueRange{zero});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(scan.getBody());
    Value e =
        ix.add(ix.add(begin, ix.mul(scan.getInductionVar(), ix.c(s))), lane);
    Value inRow = ix.lt(e, end);
    Value col = buildIndexCast(
        b, loc,
        tensor::ExtractOp::create(b, loc, colIdx,
                                  ValueRange{ix.min(e, ix.c(nnz - 1))}));
    Value hit = arith::AndIOp::create(
        b, loc, inRow,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, col, j));
    Value found = arith::SelectOp::create(b, loc, hit,
                                          buildFloatConstant(b, loc, f32, 1.0),
                                          scan.getRegionIterArgs()[0]);
    scf::YieldOp::create(b, loc, found);
  }
  Value any = gpu::SubgroupReduceOp::create(b, loc, scan.getResult(0),
                                            gpu::AllReduceOperation::MAXNUMF,
                                            /*uniform=*/false);
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, any, zero);
}

void Lowering::buildKernel(OpBuilder &b, gpu::LaunchOp launch, Value qBuf,
                           Value kBuf, Value vBuf, Value oBuf, Value lseBuf,
                           Value kSh, Value vSh,
                           const MaskModTiles *maskTiles) {
  Location loc = op.getLoc();
  Ix ix{b, loc};
  auto f32 = b.getF32Type();
  const int64_t s = opts.subgroupSize, rows = opts.rows;
  const int64_t n = (sz.e + s - 1) / s, nv = (sz.ev + s - 1) / s;
  Value zero = buildFloatConstant(b, loc, f32, 0.0);
  Value negInf =
      buildFloatConstant(b, loc, f32, -std::numeric_limits<double>::infinity());

  Value tile = launch.getBlockIds().x, h = launch.getBlockIds().y,
        batch = launch.getBlockIds().z;
  Value lane = launch.getThreadIds().x, row = launch.getThreadIds().y;
  Value i = ix.add(ix.mul(tile, ix.c(rows)), row);
  Value rowValid = ix.lt(i, ix.c(sz.lq));
  Value ic = ix.min(i, ix.c(sz.lq - 1));
  Value kh = ix.div(h, ix.c(sz.h / sz.hkv));

  // The lane's elements of the query row (0 past E).
  auto laneDim = [&](int64_t c) { return ix.add(lane, ix.c(c * s)); };
  SmallVector<Value> q;
  for (int64_t c = 0; c < n; ++c) {
    Value d = laneDim(c);
    Value inRange = ix.lt(d, ix.c(sz.e));
    Value x = widen(
        b, loc,
        memref::LoadOp::create(
            b, loc, qBuf, ValueRange{batch, h, ic, ix.min(d, ix.c(sz.e - 1))}));
    q.push_back(arith::SelectOp::create(b, loc, inRange, x, zero));
  }

  // Key tiles: the kind's key span of this workgroup's rows, within [0, Lk).
  Value iLo = ix.mul(tile, ix.c(rows));
  Value iHi = ix.min(ix.add(iLo, ix.c(rows - 1)), ix.c(sz.lq - 1));
  KeySpan span = buildMaskKeySpan(b, loc, emitter.maskParams(),
                                  emitter.queryPosition(b, loc, batch, iLo),
                                  emitter.queryPosition(b, loc, batch, iHi));
  Value first = span.first ? ix.max(span.first, ix.c(0)) : ix.c(0);
  Value last = span.last ? ix.min(span.last, ix.c(sz.lk - 1)) : ix.c(sz.lk - 1);
  Value ktFirst = ix.floorDiv(first, bk);
  Value ktEnd = ix.max(ix.add(ix.floorDiv(last, bk), ix.c(1)), ktFirst);

  Value threads = ix.c(s * rows);
  Value flat = ix.add(ix.mul(row, ix.c(s)), lane);

  SmallVector<Value> init{negInf, zero};
  init.append(nv, zero);
  auto keyTiles = scf::ForOp::create(b, loc, ktFirst, ktEnd, ix.c(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(keyTiles.getBody());
    Value kt = keyTiles.getInductionVar();
    Value j0 = ix.mul(kt, ix.c(bk));
    // A tile the mask_mod region leaves empty for every row of the
    // workgroup is skipped (the condition is the workgroup's: the barriers
    // inside stay in uniform control flow).
    scf::IfOp visit;
    if (maskTiles) {
      auto [full, empty] = maskTiles->classify(b, loc, batch, h, iLo, j0);
      (void)full;
      visit = scf::IfOp::create(
          b, loc, keyTiles.getResultTypes(),
          arith::XOrIOp::create(b, loc, empty,
                                arith::ConstantIntOp::create(b, loc, 1, 1)),
          /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&visit.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange(keyTiles.getRegionIterArgs()));
    }
    OpBuilder::InsertionGuard visitGuard(b);
    if (visit)
      b.setInsertionPointToStart(&visit.getThenRegion().front());
    // Stage K and V rows j0 .. j0 + bk (clamped: rows past Lk are masked).
    gpu::BarrierOp::create(b, loc);
    auto stage = [&](Value src, Value dst, int64_t width) {
      auto loop = scf::ForOp::create(b, loc, flat, ix.c(bk * width), threads);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value idx = loop.getInductionVar();
      Value r = ix.div(idx, ix.c(width)), d = ix.rem(idx, ix.c(width));
      Value j = ix.min(ix.add(j0, r), ix.c(sz.lk - 1));
      Value x = widen(
          b, loc,
          memref::LoadOp::create(b, loc, src, ValueRange{batch, kh, j, d}));
      memref::StoreOp::create(b, loc, x, dst, ValueRange{r, d});
    };
    stage(kBuf, kSh, sz.e);
    stage(vBuf, vSh, sz.ev);
    gpu::BarrierOp::create(b, loc);

    auto keys = scf::ForOp::create(b, loc, ix.c(0), ix.c(bk), ix.c(1),
                                   keyTiles.getRegionIterArgs());
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(keys.getBody());
      Value r = keys.getInductionVar();
      Value j = ix.add(j0, r);
      Value jc = ix.min(j, ix.c(sz.lk - 1));
      // The lanes' partial dot products, summed over the subgroup.
      auto dot = [&](function_ref<Value(Value)> load) {
        Value part = zero;
        for (int64_t c = 0; c < n; ++c) {
          Value d = ix.min(laneDim(c), ix.c(sz.e - 1));
          part = math::FmaOp::create(b, loc, q[c], load(d), part);
        }
        return gpu::SubgroupReduceOp::create(b, loc, part,
                                             gpu::AllReduceOperation::ADD,
                                             /*uniform=*/false);
      };
      Value qk = dot([&](Value d) {
        return memref::LoadOp::create(b, loc, kSh, ValueRange{r, d});
      });
      ScorePosition pos{batch, h, ic, jc};
      Value shaw;
      if (Value relKey = op.getRelKey()) {
        Value rel = emitter.relativeIndex(b, loc, pos);
        shaw = dot([&](Value d) {
          return widen(
              b, loc,
              tensor::ExtractOp::create(b, loc, relKey, ValueRange{rel, d}));
        });
      }
      Value biasElem;
      if (Value bias = op.getBias()) {
        auto shape = cast<RankedTensorType>(bias.getType()).getShape();
        Value full[4] = {batch, h, ic, jc};
        SmallVector<Value> idx;
        for (int d = 0; d < 4; ++d)
          idx.push_back(shape[d] == 1 ? ix.c(0) : full[d]);
        biasElem = widen(b, loc, tensor::ExtractOp::create(b, loc, bias, idx));
      }
      Value score = emitter.modify(b, loc, pos, qk, shaw, biasElem);
      SmallVector<Value> extra{ix.lt(j, ix.c(sz.lk))};
      if (op.getMask() == MaskKind::graph)
        extra.push_back(graphAllowed(b, ic, jc));
      Value allowed = emitter.allowed(b, loc, pos, extra);
      score = arith::SelectOp::create(b, loc, allowed, score, negInf);

      SmallVector<Value> next = onlineSoftmaxStep(
          b, loc, keys.getRegionIterArgs(), score, [&](size_t c) -> Value {
            Value d = ix.min(laneDim(c), ix.c(sz.ev - 1));
            return memref::LoadOp::create(b, loc, vSh, ValueRange{r, d});
          });
      scf::YieldOp::create(b, loc, next);
    }
    scf::YieldOp::create(b, loc, keys.getResults());
    if (visit) {
      b.setInsertionPointAfter(visit);
      scf::YieldOp::create(b, loc, visit.getResults());
    }
  }

  // o = acc / l (0 where no key was allowed); lse = m + log l (-inf).
  Value m = keyTiles.getResult(0), l = keyTiles.getResult(1);
  Value any = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zero);
  Type oElem = cast<MemRefType>(oBuf.getType()).getElementType();
  for (int64_t c = 0; c < nv; ++c) {
    Value d = laneDim(c);
    Value store =
        arith::AndIOp::create(b, loc, rowValid, ix.lt(d, ix.c(sz.ev)));
    auto ifOp = scf::IfOp::create(b, loc, store, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value o = arith::SelectOp::create(
        b, loc, any,
        arith::DivFOp::create(b, loc, keyTiles.getResult(2 + c), l), zero);
    if (oElem != f32)
      o = arith::TruncFOp::create(b, loc, oElem, o);
    memref::StoreOp::create(b, loc, o, oBuf, ValueRange{batch, h, i, d});
  }
  if (lseBuf) {
    Value store = arith::AndIOp::create(b, loc, rowValid, ix.lt(lane, ix.c(1)));
    auto ifOp = scf::IfOp::create(b, loc, store, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value lse = arith::SelectOp::create(
        b, loc, any,
        arith::AddFOp::create(b, loc, m, math::LogOp::create(b, loc, l)),
        negInf);
    Type lElem = cast<MemRefType>(lseBuf.getType()).getElementType();
    if (lElem != f32)
      lse = arith::TruncFOp::create(b, loc, lElem, lse);
    memref::StoreOp::create(b, loc, lse, lseBuf, ValueRange{batch, h, i});
  }
}

namespace {
/// gpu.launch_func reads and writes its buffer arguments (upstream declares
/// no effects, and buffer deallocation refuses ops without them).
struct LaunchFuncEffects
    : MemoryEffectOpInterface::ExternalModel<LaunchFuncEffects,
                                             gpu::LaunchFuncOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    for (OpOperand &operand : op->getOpOperands())
      if (isa<MemRefType>(operand.get().getType())) {
        effects.emplace_back(MemoryEffects::Read::get(), &operand);
        effects.emplace_back(MemoryEffects::Write::get(), &operand);
      }
  }
};

/// Registers LaunchFuncEffects (both GPU lowering passes need it: buffer
/// deallocation runs after them on the launches they create).
void addLaunchFuncEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncEffects>(*ctx);
  });
}

struct AttnSdpaToGpu : attn::impl::AttnSdpaToGpuBase<AttnSdpaToGpu> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    addLaunchFuncEffects(registry);
  }
  void runOnOperation() override {
    Operation *root = getOperation();
    if (failed(checkOptionRange(root, "attn-sdpa-to-gpu", "subgroup-size",
                                subgroupSize, 1, kMaxSubgroupSize)) ||
        failed(checkOptionRange(root, "attn-sdpa-to-gpu", "rows", rows, 1,
                                kMaxWorkgroupRows)) ||
        failed(checkOptionRange(root, "attn-sdpa-to-gpu", "block-k", blockK, 0,
                                kMaxTileRows, " (0: from shared-memory)")) ||
        failed(checkOptionRange(root, "attn-sdpa-to-gpu", "shared-memory",
                                sharedMemory, 1, kMaxSharedMemory)))
      return signalPassFailure();
    SmallVector<SdpaOp> ops;
    getOperation()->walk([&](SdpaOp op) { ops.push_back(op); });
    AttnSdpaToGpuOptions options{
        subgroupSize,    rows, blockK, sharedMemory, workgroupAttributions,
        leaveUnsupported};
    for (SdpaOp op : ops) {
      if (leaveUnsupported && !Lowering::takesNatively(op))
        continue;
      if (failed(Lowering(op, options).run()))
        return signalPassFailure();
    }
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// attn.gat: one subgroup per destination node
//===----------------------------------------------------------------------===//

namespace {

LogicalResult lowerGat(GatOp op, int64_t subgroupSize, int64_t rows) {
  Location loc = op.getLoc();
  auto xType = cast<RankedTensorType>(op.getX().getType());
  auto attType = cast<RankedTensorType>(op.getAttSrc().getType());
  auto outType = cast<RankedTensorType>(op.getOutput().getType());
  if (!xType.getElementType().isF32())
    return op.emitOpError("attn-gat-to-gpu: element type ")
           << xType.getElementType()
           << " is not supported on the GPU path (f32; f16/bf16 are widened "
              "by attn-decompose-mha first)";
  for (Value v : op->getOperands())
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return op.emitOpError("attn-gat-to-gpu: dynamic shapes are not "
                            "supported on the GPU path");
  const int64_t n = xType.getDimSize(0), heads = attType.getDimSize(0),
                ch = attType.getDimSize(1);
  const int64_t s = subgroupSize, per = (ch + s - 1) / s;
  const bool mean = op.getCombine() == HeadCombine::mean;

  OpBuilder b(op);
  Ix ix{b, loc};
  // z = x W^T on the host (one contraction), then the kernel.
  Value z = buildMatmul(b, loc, op.getX(),
                        buildTranspose(b, loc, op.getWeight(), {1, 0}),
                        /*bias=*/Value());
  Value zBuf = denseBuffer(b, loc, z);
  Value srcBuf = denseBuffer(b, loc, op.getAttSrc());
  Value dstBuf = denseBuffer(b, loc, op.getAttDst());
  Value rpBuf = denseBuffer(b, loc, op.getRowPtr());
  Value ciBuf = denseBuffer(b, loc, op.getColIdx());
  Value biasBuf = op.getBias() ? denseBuffer(b, loc, op.getBias()) : Value();
  int64_t nnz = cast<RankedTensorType>(op.getColIdx().getType()).getDimSize(0);
  Value outBuf = memref::AllocOp::create(
      b, loc, MemRefType::get(outType.getShape(), outType.getElementType()));

  auto launch =
      gpu::LaunchOp::create(b, loc, ix.c((n + rows - 1) / rows), ix.c(1),
                            ix.c(1), ix.c(s), ix.c(rows), ix.c(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    auto f32 = b.getF32Type();
    Value zero = buildFloatConstant(b, loc, f32, 0.0);
    Value one = buildFloatConstant(b, loc, f32, 1.0);
    Value negInf = buildFloatConstant(b, loc, f32,
                                      -std::numeric_limits<double>::infinity());
    Value slope = buildFloatConstant(b, loc, f32,
                                     op.getNegativeSlope().convertToDouble());
    Value lane = launch.getThreadIds().x;
    Value i = ix.add(ix.mul(launch.getBlockIds().x, ix.c(rows)),
                     launch.getThreadIds().y);
    Value ic = ix.min(i, ix.c(n - 1));
    Value begin = buildIndexCast(
        b, loc, memref::LoadOp::create(b, loc, rpBuf, ValueRange{ic}));
    Value end = buildIndexCast(
        b, loc,
        memref::LoadOp::create(b, loc, rpBuf, ValueRange{ix.add(ic, ix.c(1))}));
    // CSR entries are clamped into the tensors (attn-run and the model
    // loader validate them; the kernel never reads out of bounds).
    begin = ix.max(ix.min(begin, ix.c(nnz)), ix.c(0));
    end = ix.max(ix.min(end, ix.c(nnz)), begin);
    auto dims = [&](int64_t c) { return ix.add(lane, ix.c(c * s)); };
    auto leaky = [&](Value x) {
      Value pos =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
      return arith::SelectOp::create(b, loc, pos, x,
                                     arith::MulFOp::create(b, loc, x, slope));
    };
    /// The lane's elements of row `node` of head `h` of z (0 past C).
    auto zRow = [&](Value node, Value h) {
      SmallVector<Value> r;
      for (int64_t c = 0; c < per; ++c) {
        Value d = dims(c);
        Value col = ix.add(ix.mul(h, ix.c(ch)), ix.min(d, ix.c(ch - 1)));
        Value v = memref::LoadOp::create(b, loc, zBuf, ValueRange{node, col});
        r.push_back(
            arith::SelectOp::create(b, loc, ix.lt(d, ix.c(ch)), v, zero));
      }
      return r;
    };
    /// att[h] . row, summed over the subgroup.
    auto dot = [&](Value att, Value h, ArrayRef<Value> row) {
      Value part = zero;
      for (int64_t c = 0; c < per; ++c) {
        Value d = ix.min(dims(c), ix.c(ch - 1));
        Value a = memref::LoadOp::create(b, loc, att, ValueRange{h, d});
        part = math::FmaOp::create(b, loc, a, row[c], part);
      }
      return gpu::SubgroupReduceOp::create(
          b, loc, part, gpu::AllReduceOperation::ADD, /*uniform=*/false);
    };

    SmallVector<Value> meanInit(per, zero);
    auto headLoop =
        scf::ForOp::create(b, loc, ix.c(0), ix.c(heads), ix.c(1), meanInit);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(headLoop.getBody());
      Value h = headLoop.getInductionVar();
      SmallVector<Value> zi = zRow(ic, h);
      Value dScore = dot(dstBuf, h, zi);
      // The state starts with the self loop (PyG adds one per node).
      SmallVector<Value> init;
      if (op.getAddSelfLoops()) {
        init = {
            leaky(arith::AddFOp::create(b, loc, dScore, dot(srcBuf, h, zi))),
            one};
        init.append(zi.begin(), zi.end());
      } else {
        init = {negInf, zero};
        init.append(per, zero);
      }
      auto edges = scf::ForOp::create(b, loc, begin, end, ix.c(1), init);
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(edges.getBody());
        Value j = buildIndexCast(
            b, loc,
            memref::LoadOp::create(b, loc, ciBuf,
                                   ValueRange{edges.getInductionVar()}));
        Value jc = ix.max(ix.min(j, ix.c(n - 1)), ix.c(0));
        SmallVector<Value> zj = zRow(jc, h);
        Value score =
            leaky(arith::AddFOp::create(b, loc, dScore, dot(srcBuf, h, zj)));
        if (op.getAddSelfLoops()) {
          // Existing self loops are dropped (the one added stands for them).
          Value self =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, j, i);
          score = arith::SelectOp::create(b, loc, self, negInf, score);
        }
        SmallVector<Value> next =
            onlineSoftmaxStep(b, loc, edges.getRegionIterArgs(), score,
                              [&](size_t c) { return zj[c]; });
        scf::YieldOp::create(b, loc, next);
      }
      Value l = edges.getResult(1);
      Value any =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zero);
      SmallVector<Value> meanNext;
      for (int64_t c = 0; c < per; ++c) {
        Value o = arith::SelectOp::create(
            b, loc, any,
            arith::DivFOp::create(b, loc, edges.getResult(2 + c), l), zero);
        if (mean) {
          meanNext.push_back(arith::AddFOp::create(
              b, loc, headLoop.getRegionIterArgs()[c],
              arith::DivFOp::create(
                  b, loc, o, buildFloatConstant(b, loc, f32, double(heads)))));
          continue;
        }
        Value d = dims(c);
        Value col = ix.add(ix.mul(h, ix.c(ch)), d);
        Value store = arith::AndIOp::create(b, loc, ix.lt(i, ix.c(n)),
                                            ix.lt(d, ix.c(ch)));
        auto ifOp = scf::IfOp::create(b, loc, store, /*withElse=*/false);
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        if (biasBuf)
          o = arith::AddFOp::create(
              b, loc, o,
              memref::LoadOp::create(b, loc, biasBuf, ValueRange{col}));
        memref::StoreOp::create(b, loc, o, outBuf, ValueRange{i, col});
      }
      if (!mean)
        meanNext.assign(headLoop.getRegionIterArgs().begin(),
                        headLoop.getRegionIterArgs().end());
      scf::YieldOp::create(b, loc, meanNext);
    }
    if (mean) {
      for (int64_t c = 0; c < per; ++c) {
        Value d = dims(c);
        Value store = arith::AndIOp::create(b, loc, ix.lt(i, ix.c(n)),
                                            ix.lt(d, ix.c(ch)));
        auto ifOp = scf::IfOp::create(b, loc, store, /*withElse=*/false);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        Value o = headLoop.getResult(c);
        if (biasBuf)
          o = arith::AddFOp::create(
              b, loc, o,
              memref::LoadOp::create(b, loc, biasBuf, ValueRange{d}));
        memref::StoreOp::create(b, loc, o, outBuf, ValueRange{i, d});
      }
    }
    gpu::TerminatorOp::create(b, loc);
  }
  b.setInsertionPointAfter(launch);
  op.getOutput().replaceAllUsesWith(bufferization::ToTensorOp::create(
      b, loc, outType, outBuf, /*restrict=*/true, /*writable=*/true));
  op.erase();
  return success();
}

struct AttnGatToGpu : attn::impl::AttnGatToGpuBase<AttnGatToGpu> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    addLaunchFuncEffects(registry);
  }
  void runOnOperation() override {
    if (failed(checkOptionRange(getOperation(), "attn-gat-to-gpu",
                                "subgroup-size", subgroupSize, 1,
                                kMaxSubgroupSize)) ||
        failed(checkOptionRange(getOperation(), "attn-gat-to-gpu", "rows",
                                rows, 1, kMaxWorkgroupRows)))
      return signalPassFailure();
    SmallVector<GatOp> ops;
    // A layer that returns per-edge alpha, has edge attributes or is
    // bipartite stays on the CPU (the unfused lowering of
    // attn-lower-to-linalg).
    getOperation()->walk([&](GatOp op) {
      if (!op.needsUnfusedLowering())
        ops.push_back(op);
    });
    for (GatOp op : ops)
      if (failed(lowerGat(op, subgroupSize, rows)))
        return signalPassFailure();
  }
};

} // namespace
