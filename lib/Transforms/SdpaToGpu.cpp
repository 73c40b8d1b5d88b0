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
#include "lib/Transforms/OptionBounds.h"
#include "lib/Transforms/Passes.h"
#include "lib/Transforms/SdpaScore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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

// The tensor-core kernel (tensor-cores): warps of 32 threads, each owning
// 16 query rows (the m of mma.sync.m16n8k16); staged K/V rows padded by 8
// elements (16 bytes), so the 8 rows an ldmatrix reads start in different
// shared-memory banks; static shared memory (48 KiB on every sm_70+).
constexpr int64_t kMmaWarps = 4;
constexpr int64_t kMmaRows = 16;
constexpr int64_t kMmaPad = 8;
constexpr int64_t kMmaSharedMemory = 48 * 1024;
constexpr int64_t kMmaMaxHeadDim = 256;
constexpr int64_t kMmaThreads = 32 * kMmaWarps;

/// Keys per tile of the tensor-core kernel for head dims `e`, `ev` (`requested`
/// if not 0, else 64, else 32): a multiple of 16 (two n-tiles of S make one
/// k-step of P V) whose K and V tiles fit static shared memory and whose
/// 16-byte cp.async chunks divide evenly among the workgroup's threads; 0 when
/// none does.
int64_t mmaBlockK(int64_t e, int64_t ev, int64_t requested) {
  SmallVector<int64_t, 2> candidates;
  if (requested)
    candidates.push_back(requested);
  else
    candidates.append({64, 32});
  for (int64_t bk : candidates) {
    if (bk % 16 != 0 || bk > 64)
      continue;
    if (bk * (e + ev + 2 * kMmaPad) * 2 > kMmaSharedMemory)
      continue;
    if ((bk * e / 8) % kMmaThreads != 0 || (bk * ev / 8) % kMmaThreads != 0)
      continue;
    return bk;
  }
  return 0;
}

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

/// Stores a row's lse = m + log l (-inf where `any` is false: no key was
/// allowed) at `at` of `lseBuf`, rounded to its element type.
void storeLse(OpBuilder &b, Location loc, Value lseBuf, Value any, Value m,
              Value l, ValueRange at) {
  Value negInf = buildFloatConstant(b, loc, b.getF32Type(),
                                    -std::numeric_limits<double>::infinity());
  Value lse = arith::SelectOp::create(
      b, loc, any,
      arith::AddFOp::create(b, loc, m, math::LogOp::create(b, loc, l)), negInf);
  Type elem = cast<MemRefType>(lseBuf.getType()).getElementType();
  if (!elem.isF32())
    lse = arith::TruncFOp::create(b, loc, elem, lse);
  memref::StoreOp::create(b, loc, lse, lseBuf, at);
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
  /// score modifications; f16 / bf16 the tensor-core kernel takes).
  static bool takesNatively(SdpaOp op, const AttnSdpaToGpuOptions &options);
  /// Whether the tensor-core kernel takes `op` (see the pass description).
  static bool usesMma(SdpaOp op, const AttnSdpaToGpuOptions &options);

private:
  Value toBuffer(OpBuilder &b, Value tensor);
  void buildKernel(OpBuilder &b, gpu::LaunchOp launch, Value qBuf, Value kBuf,
                   Value vBuf, Value oBuf, Value lseBuf, Value kSh, Value vSh,
                   const MaskModTiles *maskTiles);
  void buildMmaKernel(OpBuilder &b, gpu::LaunchOp launch, Value qBuf,
                      Value kBuf, Value vBuf, Value oBuf, Value lseBuf,
                      Value kSh, Value vSh, const MaskModTiles *maskTiles);
  /// The key tiles [first, end) of query rows at positions [iaLo, iaHi]:
  /// the mask kind's key span within [0, Lk), and within `kvLength` keys
  /// when given; empty when nothing is left.
  std::pair<Value, Value> keyTileRange(OpBuilder &b, Value iaLo, Value iaHi,
                                       Value kvLength);
  /// The score bias element at (batch, h, i, j), f32; null without a bias.
  Value biasElement(OpBuilder &b, Location loc, const ScorePosition &p);
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

bool Lowering::usesMma(SdpaOp op, const AttnSdpaToGpuOptions &options) {
  if (!options.tensorCores)
    return false;
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<RankedTensorType>(v.getType());
        t && !t.hasStaticShape())
      return false;
  auto q = op.getQuery().getType(), v = op.getValue().getType();
  Type elem = q.getElementType();
  if (!(elem.isF16() || elem.isBF16()) ||
      op.getKey().getType().getElementType() != elem ||
      v.getElementType() != elem)
    return false;
  int64_t e = q.getDimSize(3), ev = v.getDimSize(3);
  if (e % 16 != 0 || ev % 16 != 0 || e > kMmaMaxHeadDim || ev > kMmaMaxHeadDim)
    return false;
  if (op.getRelKey() || op.getMask() == MaskKind::graph)
    return false;
  return mmaBlockK(e, ev, options.blockK) != 0;
}

bool Lowering::takesNatively(SdpaOp op, const AttnSdpaToGpuOptions &options) {
  if (usesMma(op, options))
    return true;
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
  const bool mma = usesMma(op, opts);
  Type elem = qType.getElementType();
  if (!mma && !elem.isF32() && !elem.isF16())
    return op.emitOpError("attn-sdpa-to-gpu: element type ")
           << elem << " is not supported on the GPU path (f32, f16)";
  if (!mma && !elem.isF32() &&
      (op.getBias() || op.getRelBias() || op.getRelKey() ||
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
  if (mma) {
    bk = mmaBlockK(sz.e, sz.ev, opts.blockK);
  } else {
    // K and V tiles in f32: 4 (E + Ev) bytes per key (checked: E and Ev
    // may be near 2^62, and one key must fit).
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
  }

  OpBuilder b(op);
  if (mma) {
    // The score tables the emitter reads in f32 (the scores are f32).
    for (Value table : {op.getRelBias(), op.getAlibiSlopes()}) {
      auto type = table ? cast<RankedTensorType>(table.getType()) : nullptr;
      if (!type || type.getElementType().isF32())
        continue;
      Value wide = buildConvertedElements(b, loc, table, b.getF32Type());
      table.replaceUsesWithIf(
          wide, [&](OpOperand &use) { return use.getOwner() == op; });
    }
  }
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
  int64_t rows = mma ? kMmaWarps * kMmaRows : opts.rows;
  // A mask_mod region's tile classes (its min / max tables built here,
  // read by the kernel as buffers): the workgroup's key tiles the region
  // leaves empty are skipped, as on the CPU.
  std::optional<MaskModTiles> maskTiles;
  if (emitter.hasMaskMod())
    maskTiles.emplace(b, loc, op, rows, bk);
  Value gridX = ix.c((sz.lq + rows - 1) / rows);
  // The staged tiles: f32 rows (f16 / bf16 rows padded by kMmaPad for the
  // tensor-core kernel).
  Type shElem = mma ? elem : b.getF32Type();
  int64_t pad = mma ? kMmaPad : 0;
  auto space = b.getI64IntegerAttr(kWorkgroupSpace);
  auto kShType = MemRefType::get({bk, sz.e + pad}, shElem,
                                 MemRefLayoutAttrInterface(), space);
  auto vShType = MemRefType::get({bk, sz.ev + pad}, shElem,
                                 MemRefLayoutAttrInterface(), space);
  SmallVector<Type> attributions;
  if (opts.workgroupAttributions)
    attributions = {kShType, vShType};
  auto launch = gpu::LaunchOp::create(
      b, loc, gridX, ix.c(sz.h), ix.c(sz.b), ix.c(mma ? 32 : opts.subgroupSize),
      ix.c(mma ? kMmaWarps : rows), ix.c(1),
      /*dynamicSharedMemorySize=*/nullptr,
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
    if (mma)
      buildMmaKernel(b, launch, qBuf, kBuf, vBuf, oBuf, lseBuf, kSh, vSh,
                     maskTiles ? &*maskTiles : nullptr);
    else
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

std::pair<Value, Value> Lowering::keyTileRange(OpBuilder &b, Value iaLo,
                                               Value iaHi, Value kvLength) {
  Location loc = op.getLoc();
  Ix ix{b, loc};
  KeySpan span = buildMaskKeySpan(b, loc, emitter.maskParams(), iaLo, iaHi);
  Value first = span.first ? ix.max(span.first, ix.c(0)) : ix.c(0);
  Value last = span.last ? ix.min(span.last, ix.c(sz.lk - 1)) : ix.c(sz.lk - 1);
  Value ktFirst = ix.floorDiv(first, bk);
  Value ktEnd = ix.add(ix.floorDiv(last, bk), ix.c(1));
  if (kvLength)
    ktEnd =
        ix.min(ktEnd, arith::CeilDivSIOp::create(b, loc, kvLength, ix.c(bk)));
  return {ktFirst, ix.max(ktEnd, ktFirst)};
}

Value Lowering::biasElement(OpBuilder &b, Location loc,
                            const ScorePosition &p) {
  Value bias = op.getBias();
  if (!bias)
    return Value();
  auto shape = cast<RankedTensorType>(bias.getType()).getShape();
  Value full[4] = {p.b, p.h, p.i, p.j};
  SmallVector<Value> idx;
  for (int d = 0; d < 4; ++d)
    idx.push_back(shape[d] == 1 ? buildIndexConstant(b, loc, 0) : full[d]);
  return widen(b, loc, tensor::ExtractOp::create(b, loc, bias, idx));
}

Value Lowering::graphAllowed(OpBuilder &b, Value i, Value j) {
  Location loc = op.getLoc();
  Ix ix{b, loc};
  Value rowPtr = op.getRowPtr(), colIdx = op.getColIdx();
  int64_t nnz = cast<RankedTensorType>(colIdx.getType()).getDimSize(0);
  // No edges: no key is allowed, and the kernel does not take the empty
  // col_idx (SPIR-V has no zero-length arrays: the Vulkan kernel failed to
  // legalize).
  if (nnz == 0)
    return arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
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
  auto [ktFirst, ktEnd] = keyTileRange(
      b, emitter.queryPosition(b, loc, batch, iLo),
      emitter.queryPosition(b, loc, batch, iHi), /*kvLength=*/Value());

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
      Value score =
          emitter.modify(b, loc, pos, qk, shaw, biasElement(b, loc, pos));
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
    storeLse(b, loc, lseBuf, any, m, l, {batch, h, i});
  }
}

/// The tensor-core kernel (see the pass description). Thread (lane, warp):
/// g = lane / 4 and t = lane % 4 name its place in mma.sync's m16n8k16
/// fragments: it holds rows g and g + 8 of its warp's 16 query rows, and
/// columns 2t, 2t + 1 of each 8-column n-tile of S and O.
void Lowering::buildMmaKernel(OpBuilder &b, gpu::LaunchOp launch, Value qBuf,
                              Value kBuf, Value vBuf, Value oBuf, Value lseBuf,
                              Value kSh, Value vSh,
                              const MaskModTiles *maskTiles) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Ix ix{b, loc};
  auto f32 = b.getF32Type();
  Type elem = op.getQuery().getType().getElementType();
  const bool bf16 = elem.isBF16();
  auto pairType = VectorType::get({2}, elem);
  auto aType = VectorType::get({4, 2}, elem);
  auto bType = VectorType::get({2, 2}, elem);
  auto cType = VectorType::get({2, 2}, f32);
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(ctx);
  const int64_t wgRows = kMmaWarps * kMmaRows;
  const int64_t sTiles = bk / 8, eSteps = sz.e / 16, pSteps = bk / 16,
                oTiles = sz.ev / 8;
  Value zero = buildFloatConstant(b, loc, f32, 0.0);
  Value one = buildFloatConstant(b, loc, f32, 1.0);
  Value negInf =
      buildFloatConstant(b, loc, f32, -std::numeric_limits<double>::infinity());
  Value zeroC = arith::ConstantOp::create(
      b, loc, cType, DenseElementsAttr::get(cType, b.getF32FloatAttr(0.0)));

  Value tile = launch.getBlockIds().x, h = launch.getBlockIds().y,
        batch = launch.getBlockIds().z;
  Value lane = launch.getThreadIds().x, warp = launch.getThreadIds().y;
  Value g = ix.div(lane, ix.c(4));
  Value pairCol = ix.mul(ix.rem(lane, ix.c(4)), ix.c(2));
  Value q0 = ix.mul(tile, ix.c(wgRows));
  Value row0 = ix.add(ix.add(q0, ix.mul(warp, ix.c(kMmaRows))), g);
  // The thread's two query rows, and the same clamped into [0, Lq).
  Value rows[2] = {row0, ix.add(row0, ix.c(8))};
  Value rowsC[2] = {ix.min(rows[0], ix.c(sz.lq - 1)),
                    ix.min(rows[1], ix.c(sz.lq - 1))};
  Value kh = ix.div(h, ix.c(sz.h / sz.hkv));

  // mma.sync m16n8k16: C + A B with A 16 x 16 (4 registers of 2 elements),
  // B 16 x 8 (2), C 16 x 8 f32 (2 x 2). bf16 as nvvm.mma.sync on the
  // registers as i32 (MLIR 22's nvgpu lowering deduces no bf16 type).
  auto mma = [&](Value a, Value bFrag, Value c) -> Value {
    if (!bf16)
      return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, c,
                                      ArrayRef<int64_t>{16, 8, 16});
    auto i32 = b.getI32Type();
    auto words = [&](Value frag, int64_t n) {
      SmallVector<Value> regs;
      for (int64_t r = 0; r < n; ++r) {
        Value pair = vector::ExtractOp::create(b, loc, frag, r);
        Value word =
            vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair);
        regs.push_back(vector::ExtractOp::create(b, loc, word, 0));
      }
      return regs;
    };
    SmallVector<Value> acc;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t col = 0; col < 2; ++col)
        acc.push_back(
            vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{r, col}));
    auto result = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    Value d = NVVM::MmaOp::create(
        b, loc, result, words(a, 4), words(bFrag, 2), acc,
        ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> out;
    for (int64_t k = 0; k < 4; ++k)
      out.push_back(LLVM::ExtractValueOp::create(b, loc, d, k));
    return vector::FromElementsOp::create(b, loc, cType, out);
  };
  auto ldmatrix = [&](Value sh, Value r, Value c, bool transpose) -> Value {
    return nvgpu::LdMatrixOp::create(b, loc, bType, sh, ValueRange{r, c},
                                     transpose, /*numTiles=*/2);
  };

  // Pairs of elements at even columns of rows of even length (the buffers
  // are 256-byte aligned allocations): one 32-bit access, not two.
  auto pairAlign = [](Type t) {
    return llvm::MaybeAlign(2 * t.getIntOrFloatBitWidth() / 8);
  };
  // The warp's Q rows as A fragments, one per 16 columns of E: registers
  // (row g, cols 2t..), (g + 8, 2t..), (g, 8 + 2t..), (g + 8, 8 + 2t..).
  // Held in registers for E <= 128; wider rows are read again per key tile
  // (from L1 / L2), which leaves the registers to the E / 2 of O.
  auto queryFragments = [&]() {
    SmallVector<Value> frags;
    for (int64_t ks = 0; ks < eSteps; ++ks) {
      Value c0 = ix.add(ix.c(ks * 16), pairCol), c1 = ix.add(c0, ix.c(8));
      SmallVector<Value> regs;
      for (auto [r, c] : {std::pair{0, c0}, {1, c0}, {0, c1}, {1, c1}})
        regs.push_back(vector::LoadOp::create(
            b, loc, pairType, qBuf, ValueRange{batch, h, rowsC[r], c},
            /*nontemporal=*/false, pairAlign(elem)));
      Value frag = arith::ConstantOp::create(
          b, loc, aType, DenseElementsAttr::get(aType, b.getZeroAttr(elem)));
      for (auto [r, reg] : llvm::enumerate(regs))
        frag = vector::InsertOp::create(b, loc, reg, frag, int64_t(r));
      frags.push_back(frag);
    }
    return frags;
  };
  const bool queryInRegisters = sz.e <= 128;
  SmallVector<Value> qa;
  if (queryInRegisters)
    qa = queryFragments();

  // Key tiles: the kind's key span of the workgroup's rows, within [0, Lk)
  // and the batch's kv_lengths.
  Value iHi = ix.min(ix.add(q0, ix.c(wgRows - 1)), ix.c(sz.lq - 1));
  Value iaLo = emitter.queryPosition(b, loc, batch, q0);
  Value iaHi = emitter.queryPosition(b, loc, batch, iHi);
  Value kvLength;
  if (Value lengths = op.getKvLengths())
    kvLength = buildIndexCast(
        b, loc, tensor::ExtractOp::create(b, loc, lengths, ValueRange{batch}));
  auto [ktFirst, ktEnd] = keyTileRange(b, iaLo, iaHi, kvLength);

  // Copies of `width` columns of keys j0 .. j0 + bk into `dst`, 16 bytes a
  // cp.async, the same number per thread; rows past Lk and past the batch's
  // kv_length are zero-filled (padding may hold anything, even NaN, and a
  // masked key's P = 0 times NaN would still poison P V).
  Value flat = ix.add(ix.mul(warp, ix.c(32)), lane);
  Value keyEnd = kvLength ? ix.min(kvLength, ix.c(sz.lk)) : ix.c(sz.lk);
  auto stage = [&](Value src, Value dst, int64_t width, Value j0) -> Value {
    int64_t perRow = width / 8;
    SmallVector<Value> tokens;
    for (int64_t c = 0; c < bk * perRow / kMmaThreads; ++c) {
      Value idx = ix.add(flat, ix.c(c * kMmaThreads));
      Value r = ix.div(idx, ix.c(perRow));
      Value d = ix.mul(ix.rem(idx, ix.c(perRow)), ix.c(8));
      Value j = ix.add(j0, r);
      Value n =
          arith::SelectOp::create(b, loc, ix.lt(j, keyEnd), ix.c(8), ix.c(0));
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tokenType, dst, ValueRange{r, d}, src,
          ValueRange{batch, kh, ix.min(j, ix.c(sz.lk - 1)), d},
          b.getIndexAttr(8), n, b.getUnitAttr()));
    }
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  };
  auto wait = [&](Value group, int32_t pending) {
    nvgpu::DeviceAsyncWaitOp::create(b, loc, group,
                                     b.getI32IntegerAttr(pending));
  };

  // Lane-derived ldmatrix addresses: K (x2) rows nt * 8 + lane % 8, columns
  // ks * 16 + 8 (lane / 8 % 2); V (x2, transposed) rows kk * 16 + lane % 16.
  Value kRow = ix.rem(lane, ix.c(8));
  Value kCol = ix.mul(ix.rem(ix.div(lane, ix.c(8)), ix.c(2)), ix.c(8));
  Value vRow = ix.rem(lane, ix.c(16));

  auto shuffleXor = [&](Value x, int32_t offset) -> Value {
    return gpu::ShuffleOp::create(b, loc, x, offset, /*width=*/32,
                                  gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };

  Value kGroup = stage(kBuf, kSh, sz.e, ix.mul(ktFirst, ix.c(bk)));
  // State: m (2 rows), l (2 rows, this thread's partial sums), O tiles.
  SmallVector<Value> init{negInf, negInf, zero, zero};
  init.append(oTiles, zeroC);
  auto keyTiles = scf::ForOp::create(b, loc, ktFirst, ktEnd, ix.c(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(keyTiles.getBody());
    Value kt = keyTiles.getInductionVar();
    Value j0 = ix.mul(kt, ix.c(bk));
    ValueRange state = keyTiles.getRegionIterArgs();
    // V's copy runs while S is computed (every thread is done with the
    // previous tile's V first).
    gpu::BarrierOp::create(b, loc);
    Value vGroup = stage(vBuf, vSh, sz.ev, j0);
    wait(vGroup, 1);
    gpu::BarrierOp::create(b, loc);

    Value visit, maskModFull;
    if (maskTiles) {
      auto [full, empty] = maskTiles->classify(b, loc, batch, h, q0, j0);
      maskModFull = full;
      visit = arith::XOrIOp::create(b, loc, empty,
                                    arith::ConstantIntOp::create(b, loc, 1, 1));
    }
    // S = Q K^T, the scores, the online-softmax step; yields m, l, the
    // rescaled O tiles and P as A fragments.
    SmallVector<Type> stepTypes(4, f32);
    stepTypes.append(oTiles, cType);
    stepTypes.append(pSteps, aType);
    auto softmaxStep = [&]() -> SmallVector<Value> {
      if (!queryInRegisters)
        qa = queryFragments();
      SmallVector<Value> acc(sTiles, zeroC);
      for (int64_t nt = 0; nt < sTiles; ++nt)
        for (int64_t ks = 0; ks < eSteps; ++ks)
          acc[nt] = mma(qa[ks],
                        ldmatrix(kSh, ix.add(ix.c(nt * 8), kRow),
                                 ix.add(ix.c(ks * 16), kCol),
                                 /*transpose=*/false),
                        acc[nt]);
      // s[nt][r][c]: row r (g, g + 8), key j0 + nt * 8 + 2t + c.
      auto scores = [&](bool masked) {
        SmallVector<Value> out;
        for (int64_t nt = 0; nt < sTiles; ++nt)
          for (int64_t r = 0; r < 2; ++r)
            for (int64_t c = 0; c < 2; ++c) {
              Value qk = vector::ExtractOp::create(b, loc, acc[nt],
                                                   ArrayRef<int64_t>{r, c});
              Value j = ix.add(ix.add(j0, ix.c(nt * 8 + c)), pairCol);
              ScorePosition pos{batch, h, rowsC[r], ix.min(j, ix.c(sz.lk - 1))};
              Value score = emitter.modify(b, loc, pos, qk, Value(),
                                           biasElement(b, loc, pos));
              if (masked) {
                Value allowed =
                    emitter.allowed(b, loc, pos, {ix.lt(j, ix.c(sz.lk))});
                score = arith::SelectOp::create(b, loc, allowed, score, negInf);
              }
              out.push_back(score);
            }
        return out;
      };
      SmallVector<Value> s;
      std::optional<SmallVector<Value>> full = emitter.fullTileConditions(
          b, loc, iaLo, iaHi, j0, bk, maskModFull, kvLength);
      if (full && full->empty()) {
        s = scores(false);
      } else if (!full) {
        s = scores(true);
      } else {
        Value isFull = full->front();
        for (Value c : ArrayRef<Value>(*full).drop_front())
          isFull = arith::AndIOp::create(b, loc, isFull, c);
        auto ifOp =
            scf::IfOp::create(b, loc, SmallVector<Type>(4 * sTiles, f32),
                              isFull, /*withElse=*/true);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        scf::YieldOp::create(b, loc, scores(false));
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(b, loc, scores(true));
        s.assign(ifOp.getResults().begin(), ifOp.getResults().end());
      }
      auto at = [&](int64_t nt, int64_t r, int64_t c) {
        return s[nt * 4 + r * 2 + c];
      };
      // Per row: the max over the quad's threads, the rescale, P rounded
      // to the input type (l sums the rounded P, as on the CPU).
      SmallVector<Value> next(4), corr(2);
      SmallVector<Value> p(s.size());
      for (int64_t r = 0; r < 2; ++r) {
        Value mx = negInf;
        for (int64_t nt = 0; nt < sTiles; ++nt)
          for (int64_t c = 0; c < 2; ++c)
            mx = arith::MaxNumFOp::create(b, loc, mx, at(nt, r, c));
        mx = arith::MaxNumFOp::create(b, loc, mx, shuffleXor(mx, 1));
        mx = arith::MaxNumFOp::create(b, loc, mx, shuffleXor(mx, 2));
        Value mNew = arith::MaxNumFOp::create(b, loc, state[r], mx);
        Value dead = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           mNew, negInf);
        corr[r] = arith::SelectOp::create(
            b, loc, dead, one,
            math::ExpOp::create(b, loc,
                                arith::SubFOp::create(b, loc, state[r], mNew)));
        Value sum = arith::MulFOp::create(b, loc, state[2 + r], corr[r]);
        for (int64_t nt = 0; nt < sTiles; ++nt)
          for (int64_t c = 0; c < 2; ++c) {
            Value e = math::ExpOp::create(
                b, loc, arith::SubFOp::create(b, loc, at(nt, r, c), mNew));
            e = arith::SelectOp::create(b, loc, dead, zero, e);
            Value rounded = arith::TruncFOp::create(b, loc, elem, e);
            sum = arith::AddFOp::create(
                b, loc, sum, arith::ExtFOp::create(b, loc, f32, rounded));
            p[nt * 4 + r * 2 + c] = rounded;
          }
        next[r] = mNew;
        next[2 + r] = sum;
      }
      Value corrC = vector::FromElementsOp::create(
          b, loc, cType, ValueRange{corr[0], corr[0], corr[1], corr[1]});
      for (int64_t nv = 0; nv < oTiles; ++nv)
        next.push_back(arith::MulFOp::create(b, loc, state[4 + nv], corrC));
      // P as A fragments: S's n-tiles 2kk and 2kk + 1 are the 16 columns of
      // k-step kk, in the A register order.
      for (int64_t kk = 0; kk < pSteps; ++kk) {
        auto pv = [&](int64_t nt, int64_t r, int64_t c) {
          return p[nt * 4 + r * 2 + c];
        };
        int64_t a = 2 * kk, c = 2 * kk + 1;
        next.push_back(vector::FromElementsOp::create(
            b, loc, aType,
            ValueRange{pv(a, 0, 0), pv(a, 0, 1), pv(a, 1, 0), pv(a, 1, 1),
                       pv(c, 0, 0), pv(c, 0, 1), pv(c, 1, 0), pv(c, 1, 1)}));
      }
      return next;
    };
    SmallVector<Value> stepped;
    if (visit) {
      auto ifOp = scf::IfOp::create(b, loc, stepTypes, visit,
                                    /*withElse=*/true);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        scf::YieldOp::create(b, loc, softmaxStep());
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        SmallVector<Value> same(state.begin(), state.end());
        Value zeroA = arith::ConstantOp::create(
            b, loc, aType, DenseElementsAttr::get(aType, b.getZeroAttr(elem)));
        same.append(pSteps, zeroA);
        scf::YieldOp::create(b, loc, same);
      }
      stepped.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    } else {
      stepped = softmaxStep();
    }

    // V has landed (every thread's copies) and every thread is done with
    // K: the next K tile's copy runs while P V is computed.
    wait(vGroup, 0);
    gpu::BarrierOp::create(b, loc);
    {
      Value more = ix.lt(ix.add(kt, ix.c(1)), ktEnd);
      auto ifOp = scf::IfOp::create(b, loc, more, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      stage(kBuf, kSh, sz.e, ix.add(j0, ix.c(bk)));
    }
    SmallVector<Value> out(stepped.begin(), stepped.begin() + 4 + oTiles);
    ArrayRef<Value> pa = ArrayRef<Value>(stepped).drop_front(4 + oTiles);
    auto productPV = [&](ArrayRef<Value> o) {
      SmallVector<Value> res(o.begin(), o.end());
      for (int64_t kk = 0; kk < pSteps; ++kk)
        for (int64_t nv = 0; nv < oTiles; ++nv)
          res[nv] = mma(pa[kk],
                        ldmatrix(vSh, ix.add(ix.c(kk * 16), vRow), ix.c(nv * 8),
                                 /*transpose=*/true),
                        res[nv]);
      return res;
    };
    ArrayRef<Value> o = ArrayRef<Value>(out).drop_front(4);
    SmallVector<Value> oNext;
    if (visit) {
      auto ifOp = scf::IfOp::create(b, loc, SmallVector<Type>(oTiles, cType),
                                    visit, /*withElse=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      scf::YieldOp::create(b, loc, productPV(o));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, o);
      oNext.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    } else {
      oNext = productPV(o);
    }
    SmallVector<Value> yield(out.begin(), out.begin() + 4);
    yield.append(oNext);
    scf::YieldOp::create(b, loc, yield);
  }
  // The first K copy is pending when no tile was visited.
  wait(kGroup, 0);

  // Per row: l summed over the quad; o = O / l (0 where no key was
  // allowed), lse = m + log l (-inf).
  Type oElem = cast<MemRefType>(oBuf.getType()).getElementType();
  for (int64_t r = 0; r < 2; ++r) {
    Value m = keyTiles.getResult(r), l = keyTiles.getResult(2 + r);
    l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 1));
    l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 2));
    Value any =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zero);
    auto ifOp = scf::IfOp::create(b, loc, ix.lt(rows[r], ix.c(sz.lq)), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (int64_t nv = 0; nv < oTiles; ++nv) {
      SmallVector<Value> pair;
      for (int64_t c = 0; c < 2; ++c) {
        Value x = vector::ExtractOp::create(b, loc, keyTiles.getResult(4 + nv),
                                            ArrayRef<int64_t>{r, c});
        x = arith::SelectOp::create(b, loc, any,
                                    arith::DivFOp::create(b, loc, x, l), zero);
        if (oElem != f32)
          x = arith::TruncFOp::create(b, loc, oElem, x);
        pair.push_back(x);
      }
      Value v = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, oElem), pair);
      vector::StoreOp::create(
          b, loc, v, oBuf,
          ValueRange{batch, h, rows[r], ix.add(ix.c(nv * 8), pairCol)},
          /*nontemporal=*/false, pairAlign(oElem));
    }
    if (lseBuf) {
      auto lead = scf::IfOp::create(
          b, loc, ix.lt(ix.rem(lane, ix.c(4)), ix.c(1)), false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&lead.getThenRegion().front());
      storeLse(b, loc, lseBuf, any, m, l, {batch, h, rows[r]});
    }
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
    AttnSdpaToGpuOptions options{subgroupSize,
                                 rows,
                                 blockK,
                                 sharedMemory,
                                 workgroupAttributions,
                                 leaveUnsupported,
                                 tensorCores};
    for (SdpaOp op : ops) {
      if (leaveUnsupported && !Lowering::takesNatively(op, options))
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
  auto ciType = cast<RankedTensorType>(op.getColIdx().getType());
  int64_t nnz = ciType.getDimSize(0);
  // No edges: the kernel visits none (the CSR clamps below leave every row
  // empty), and takes a one-element buffer it never reads for col_idx
  // (SPIR-V has no zero-length arrays: the Vulkan kernel failed to
  // legalize).
  Value ciBuf =
      nnz > 0 ? denseBuffer(b, loc, op.getColIdx())
              : memref::AllocOp::create(
                    b, loc, MemRefType::get({1}, ciType.getElementType()));
  Value biasBuf = op.getBias() ? denseBuffer(b, loc, op.getBias()) : Value();
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
        failed(checkOptionRange(getOperation(), "attn-gat-to-gpu", "rows", rows,
                                1, kMaxWorkgroupRows)))
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
