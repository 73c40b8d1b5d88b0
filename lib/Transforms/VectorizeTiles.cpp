//===- VectorizeTiles.cpp - register tiling and vectorization ------------===//
//
// attn-vectorize: tiles the statically shaped linalg ops of tiled attention
// into register-sized pieces and vectorizes them. attn-lower-vectors: after
// bufferization, hoists accumulators out of reduction loops, approximates
// exp/log/erf/tanh with polynomials and lowers vector ops for LLVM.
//
//===----------------------------------------------------------------------===//

#include "lib/Target/CpuTarget.h"
#include "lib/Transforms/LinalgBuilders.h"
#include "lib/Transforms/Passes.h"
#include "lib/Transforms/OptionBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNVECTORIZE
#define GEN_PASS_DEF_ATTNLOWERVECTORS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Reduction steps per iteration of a register-tiled contraction's loop.
constexpr uint64_t kContractionUnroll = 4;

/// Vectors of the target's f32 lanes up to which a reduction over the
/// second-to-last dim is vectorized whole.
constexpr int64_t kMaxWholeReduction = 16;

/// Iterations below which an op is not worth a parallel region.
constexpr int64_t kMinParallelWork = 1 << 18;

/// The largest divisor of `size` that is at most `target`.
int64_t divisorAtMost(int64_t size, int64_t target) {
  for (int64_t t = std::min(size, target); t > 1; --t)
    if (size % t == 0)
      return t;
  return 1;
}

/// A divisor of `size` at most `target` for a vectorized dimension: the
/// largest multiple of `width` (whole registers), else the largest power of
/// two, else the largest divisor. Odd vector lengths (say 20 lanes) make
/// LLVM split and reassemble registers element by element.
int64_t vectorDivisorAtMost(int64_t size, int64_t target, int64_t width) {
  for (int64_t t = std::min(size, target); t >= width; --t)
    if (size % t == 0 && t % width == 0)
      return t;
  for (int64_t t = std::min(size, target); t > 1; --t)
    if (size % t == 0 && llvm::isPowerOf2_64(t))
      return t;
  return divisorAtMost(size, target);
}

/// The loop of a pair-packed contraction's element pair (bf16 dot
/// products: a reduction loop of 2 that both inputs index last), if `op`
/// has one.
std::optional<unsigned> packedPairLoop(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() != 2 || op.getNumDpsInputs() != 2)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto last = [&](unsigned input) -> std::optional<unsigned> {
    AffineMap m = maps[input];
    if (m.getNumResults() == 0)
      return std::nullopt;
    auto dim = dyn_cast<AffineDimExpr>(m.getResults().back());
    if (!dim)
      return std::nullopt;
    return dim.getPosition();
  };
  std::optional<unsigned> pair = last(0);
  if (!pair || pair != last(1) ||
      op.getIteratorTypesArray()[*pair] != utils::IteratorType::reduction ||
      op.getStaticLoopRanges()[*pair] != 2)
    return std::nullopt;
  return pair;
}

/// A generic whose body is `out + a * b` (`a` and `b` possibly extended to
/// out's type first) with one reduction loop, or two when the second is the
/// element pair of bf16 dot products (packedPairLoop).
bool isContraction(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || generic.getNumDpsInputs() != 2 ||
      (generic.getNumReductionLoops() != 1 && !packedPairLoop(op)))
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getNumOperands() == 1
                 ? yield.getOperand(0).getDefiningOp<arith::AddFOp>()
                 : arith::AddFOp();
  if (!add || add->getBlock() != &body)
    return false;
  auto mul = add.getRhs().getDefiningOp<arith::MulFOp>();
  if (!mul || add.getLhs() != body.getArgument(2))
    return false;
  // Each factor is an input argument, or its extension; nothing else is in
  // the body.
  size_t extensions = 0;
  auto isInput = [&](Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>()) {
      ++extensions;
      v = ext.getIn();
    }
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body && arg.getArgNumber() < 2;
  };
  return isInput(mul.getLhs()) && isInput(mul.getRhs()) &&
         body.getOperations().size() == 3 + extensions;
}

/// Whether `op` is a producer of a contraction's accumulator that the
/// contraction's register tiles can compute themselves: a linalg.fill, or
/// an elementwise generic (every loop parallel, one result: the online
/// softmax's rescale `a * acc` of the accumulator it then adds P V into).
bool isFusableInit(Operation *op) {
  if (isa<linalg::FillOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic->getNumResults() == 1 &&
         generic.getNumLoops() == generic.getNumParallelLoops() &&
         llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap m) {
           return m.isProjectedPermutation();
         });
}

/// Whether `op` is a plain f32 row reduction: one input read whole (identity
/// map), every loop parallel but the last, a reduction into the output
/// indexed by the others, and a body that is one combiner of the two block
/// arguments (arith.maxnumf, arith.maximumf or arith.addf): the online
/// softmax's row max, a row sum. Its vectorized form is one
/// vector.multi_reduction of a rows x cols vector, which RowReductionTree
/// lowers for a block of `lanes` rows at once.
bool isPlainRowReduction(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumLoops() < 2 ||
      generic.getNumReductionLoops() != 1 ||
      generic.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return false;
  unsigned rank = generic.getNumLoops();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!maps[0].isIdentity() ||
      maps[1] != AffineMap::getMultiDimIdentityMap(rank, op.getContext())
                     .dropResult(rank - 1))
    return false;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2 ||
      !body.getArgument(0).getType().isF32() ||
      !body.getArgument(1).getType().isF32())
    return false;
  Operation &combiner = body.front();
  if (!isa<arith::MaxNumFOp, arith::MaximumFOp, arith::AddFOp>(combiner))
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return yield.getOperand(0) == combiner.getResult(0) &&
         llvm::is_contained(combiner.getOperands(), body.getArgument(0)) &&
         llvm::is_contained(combiner.getOperands(), body.getArgument(1));
}

/// The operands of an elementwise `a + b` generic (identity maps, one
/// result, every loop parallel, body one arith.addf of the two inputs), or
/// nullopt.
std::optional<std::pair<Value, Value>> elementwiseSum(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return std::nullopt;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return std::nullopt;
  auto add = dyn_cast<arith::AddFOp>(body.front());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!add || yield.getOperand(0) != add.getResult())
    return std::nullopt;
  auto in0 = body.getArgument(0), in1 = body.getArgument(1);
  if (!((add.getLhs() == in0 && add.getRhs() == in1) ||
        (add.getLhs() == in1 && add.getRhs() == in0)))
    return std::nullopt;
  return std::make_pair(op.getDpsInputOperand(0)->get(),
                        op.getDpsInputOperand(1)->get());
}

/// A sum `x + C` of a contraction's result C (possibly through an
/// expand_shape) and another tensor `x` (a residual connection: a linear
/// layer's output added to its block's input) is computed by the
/// contraction itself: its accumulator's producer P (a fill or an
/// elementwise op, read by the contraction alone) becomes `P + x`, which
/// the contraction's register tiles then compute (isFusableInit), and the
/// separate pass over the output goes away. The sum is reassociated:
/// `(bias + x) + sum_k a b` instead of `(bias + sum_k a b) + x`. Returns
/// whether `op` was rewritten.
bool foldSumIntoAccumulator(IRRewriter &rewriter, DominanceInfo &dominance,
                            linalg::GenericOp op) {
  std::optional<std::pair<Value, Value>> operands = elementwiseSum(op);
  if (!operands)
    return false;
  for (auto [product, other] : {*operands, std::make_pair(operands->second,
                                                          operands->first)}) {
    auto expand = product.getDefiningOp<tensor::ExpandShapeOp>();
    Value result = expand ? expand.getSrc() : product;
    auto contraction = result.getDefiningOp<linalg::GenericOp>();
    if (!contraction || !isContraction(contraction) ||
        contraction->getNumResults() != 1 || !result.hasOneUse() ||
        (expand && !expand->hasOneUse()) || !product.hasOneUse() ||
        contraction.getNumDpsInits() != 1)
      continue;
    OpOperand *acc = contraction.getDpsInitOperand(0);
    auto producer = acc->get().getDefiningOp<linalg::LinalgOp>();
    if (!producer || !isFusableInit(producer) || !acc->get().hasOneUse() ||
        producer->getNumResults() != 1 || producer.getNumDpsInits() != 1)
      continue;
    auto type = cast<RankedTensorType>(result.getType());
    if (type.getElementType() !=
        cast<RankedTensorType>(other.getType()).getElementType())
      continue;
    // A fill's value in another type would need a conversion.
    if (auto fill = dyn_cast<linalg::FillOp>(producer.getOperation()))
      if (fill.getInputs()[0].getType() != type.getElementType())
        continue;
    // `x` is computed before the contraction (where `P + x` goes): not the
    // other of two contractions summed, say.
    if (!dominance.properlyDominates(other, contraction))
      continue;
    rewriter.setInsertionPoint(contraction);
    Location loc = op.getLoc();
    // x in the contraction's shape.
    if (expand)
      other = tensor::CollapseShapeOp::create(
          rewriter, loc, type, other, expand.getReassociationIndices());
    // P + x: P's operands and x (indexed as P's output), P's body, plus x.
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    AffineMap outMap =
        producer.getIndexingMapsArray()[producer.getNumDpsInputs()];
    for (OpOperand *in : producer.getDpsInputOperands()) {
      inputs.push_back(in->get());
      maps.push_back(producer.getMatchingIndexingMap(in));
    }
    inputs.push_back(other);
    maps.push_back(outMap);
    maps.push_back(outMap);
    Value dest = producer.getDpsInitOperand(0)->get();
    auto sum = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, inputs, ValueRange{dest}, maps,
        producer.getIteratorTypesArray(),
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
          Value value;
          if (auto fill = dyn_cast<linalg::FillOp>(producer.getOperation())) {
            value = args[0];
          } else {
            Block &body = producer->getRegion(0).front();
            IRMapping map;
            unsigned n = producer.getNumDpsInputs();
            for (unsigned i = 0; i < n; ++i)
              map.map(body.getArgument(i), args[i]);
            map.map(body.getArgument(n), args[n + 1]);
            for (Operation &inner : body.without_terminator())
              b.clone(inner, map);
            value = map.lookup(body.getTerminator()->getOperand(0));
          }
          Value total = arith::AddFOp::create(b, bodyLoc, value,
                                              args[inputs.size() - 1]);
          linalg::YieldOp::create(b, bodyLoc, total);
        });
    rewriter.modifyOpInPlace(contraction, [&] { acc->set(sum.getResult(0)); });
    rewriter.eraseOp(producer);
    Value replacement = contraction->getResult(0);
    if (expand) {
      rewriter.setInsertionPoint(op);
      replacement = tensor::ExpandShapeOp::create(
          rewriter, loc, op.getResultTypes()[0], replacement,
          expand.getReassociationIndices(), expand.getMixedOutputShape());
    }
    rewriter.replaceOp(op, replacement);
    if (expand)
      rewriter.eraseOp(expand);
    return true;
  }
  return false;
}

/// For a permutation copy (a generic with one input, every loop parallel,
/// the output indexed by the loops in order, the input by a permutation of
/// them, the body a yield of the input: a head split or merge), `perm` with
/// input dim k indexed by loop (= output dim) perm[k]; else nullopt.
std::optional<SmallVector<unsigned>> permutationCopy(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !op.hasPureTensorSemantics())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!maps[1].isIdentity() || !maps[0].isPermutation())
    return std::nullopt;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getOperand(0) != body.getArgument(0))
    return std::nullopt;
  SmallVector<unsigned> perm;
  for (unsigned k = 0; k < maps[0].getNumResults(); ++k)
    perm.push_back(maps[0].getDimPosition(k));
  return perm;
}

/// A permutation copy read only by tensor.extract and vector.transfer_read
/// (attn-tile's register rows reading a head's Q, K and V) is read through:
/// each read takes its elements from the copy's input at the permuted
/// indices (a transfer's vector dims then step along the input's dims:
/// rows of a head in the B x L x H x hd projection, at a stride), and the
/// copy goes away. Returns whether `op` was folded.
bool foldPermutationIntoReads(IRRewriter &rewriter, linalg::GenericOp op) {
  std::optional<SmallVector<unsigned>> perm = permutationCopy(op);
  Value result = op->getResult(0);
  if (!perm || result.use_empty() ||
      !llvm::all_of(result.getUsers(), [&](Operation *user) {
        auto read = dyn_cast<vector::TransferReadOp>(user);
        return isa<tensor::ExtractOp>(user) ||
               (read && read.getBase() == result && !read.getMask());
      }))
    return false;
  Value source = op.getDpsInputOperand(0)->get();
  // Input dim of each output dim.
  SmallVector<unsigned> inverse(perm->size());
  for (auto [k, d] : llvm::enumerate(*perm))
    inverse[d] = k;
  auto permuted = [&](ValueRange indices) {
    SmallVector<Value> inputIndices;
    for (unsigned d : *perm)
      inputIndices.push_back(indices[d]);
    return inputIndices;
  };
  for (Operation *user : llvm::to_vector(result.getUsers())) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
      SmallVector<Value> indices = permuted(extract.getIndices());
      rewriter.modifyOpInPlace(extract, [&] {
        extract.getTensorMutable().assign(source);
        extract.getIndicesMutable().assign(indices);
      });
      continue;
    }
    auto read = cast<vector::TransferReadOp>(user);
    SmallVector<Value> indices = permuted(read.getIndices());
    SmallVector<AffineExpr> dims;
    for (AffineExpr e : read.getPermutationMap().getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        dims.push_back(rewriter.getAffineDimExpr(inverse[dim.getPosition()]));
      else
        dims.push_back(e); // a broadcast (constant 0) dim
    }
    AffineMap map =
        AffineMap::get(perm->size(), 0, dims, rewriter.getContext());
    rewriter.modifyOpInPlace(read, [&] {
      read.getBaseMutable().assign(source);
      read.getIndicesMutable().assign(indices);
      read.setPermutationMapAttr(AffineMapAttr::get(map));
    });
  }
  rewriter.eraseOp(op);
  return true;
}

/// A permutation copy of an scf.forall's result whose pieces are all
/// tensor.parallel_insert_slices into a tensor.empty (attn-tile's heads,
/// merged back into B x L x H x hd) is written by the loop itself: each
/// piece goes to its permuted place in the copy's destination (a head's
/// rows at a stride), and the copy goes away. Pieces whose kept dims would
/// change order stay. Returns whether `op` was folded.
bool foldPermutationIntoForall(IRRewriter &rewriter, linalg::GenericOp op) {
  std::optional<SmallVector<unsigned>> perm = permutationCopy(op);
  if (!perm)
    return false;
  auto result = dyn_cast<OpResult>(op.getDpsInputOperand(0)->get());
  auto forall = result ? dyn_cast<scf::ForallOp>(result.getOwner())
                       : scf::ForallOp();
  Value dest = op.getDpsInitOperand(0)->get();
  if (!forall || !result.hasOneUse() || !dest.getDefiningOp<tensor::EmptyOp>())
    return false;
  unsigned i = result.getResultNumber();
  OpOperand &init = forall.getOutputsMutable()[i];
  if (!init.get().getDefiningOp<tensor::EmptyOp>())
    return false;
  BlockArgument shared = forall.getRegionIterArgs()[i];
  SmallVector<tensor::ParallelInsertSliceOp> inserts;
  for (Operation *user : shared.getUsers()) {
    auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(user);
    if (!insert || insert.getDest() != shared)
      return false;
    inserts.push_back(insert);
  }
  // Each piece's place in the destination: source dim k goes to dim perm[k].
  struct Place {
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };
  SmallVector<Place> places;
  for (tensor::ParallelInsertSliceOp insert : inserts) {
    Place place;
    place.offsets.resize(perm->size());
    place.sizes.resize(perm->size());
    place.strides.resize(perm->size());
    SmallVector<OpFoldResult> offsets = insert.getMixedOffsets(),
                              sizes = insert.getMixedSizes(),
                              strides = insert.getMixedStrides();
    // The piece's dims that are not 1 keep their order (a 16 x 16 piece of
    // two swapped dims would land transposed).
    std::optional<SmallVector<int64_t>> pieceSizes = getConstantIntValues(sizes);
    if (!pieceSizes)
      return false;
    int64_t lastKept = -1;
    for (auto [k, d] : llvm::enumerate(*perm)) {
      if ((*pieceSizes)[k] != 1) {
        if (static_cast<int64_t>(d) < lastKept)
          return false;
        lastKept = d;
      }
      place.offsets[d] = offsets[k];
      place.sizes[d] = sizes[k];
      place.strides[d] = strides[k];
    }
    // The piece's kept dims, in the new order, are its own dims.
    std::optional<SmallVector<int64_t>> staticSizes =
        getConstantIntValues(place.sizes);
    if (!staticSizes ||
        !computeRankReductionMask(*staticSizes,
                                  insert.getSourceType().getShape()))
      return false;
    places.push_back(std::move(place));
  }
  // The destination, as a tensor.empty before the loop.
  auto type = cast<RankedTensorType>(dest.getType());
  if (!type.hasStaticShape())
    return false;
  rewriter.setInsertionPoint(forall);
  dest = tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                 type.getElementType());
  rewriter.modifyOpInPlace(forall, [&] {
    init.set(dest);
    shared.setType(type);
    result.setType(type);
  });
  for (auto [insert, place] : llvm::zip(inserts, places)) {
    rewriter.setInsertionPoint(insert);
    rewriter.replaceOpWithNewOp<tensor::ParallelInsertSliceOp>(
        insert, insert.getSource(), shared, place.offsets, place.sizes,
        place.strides);
  }
  rewriter.replaceOp(op, result);
  return true;
}

struct AttnVectorize : attn::impl::AttnVectorizeBase<AttnVectorize> {
  using AttnVectorizeBase::AttnVectorizeBase;

  /// The function's CPU target, resolved once per run.
  const CpuTarget *target = nullptr;

  /// The register tile every contraction takes while set (the parts of a
  /// contraction splitRows split take the whole's; the thread split's unit
  /// is the two-register tile's): see TileScope.
  std::optional<std::pair<int64_t, int64_t>> scopedTile;

  /// Sets scopedTile for its lifetime.
  struct TileScope {
    TileScope(AttnVectorize &pass, std::pair<int64_t, int64_t> tile)
        : pass(pass), saved(pass.scopedTile) {
      pass.scopedTile = tile;
    }
    ~TileScope() { pass.scopedTile = saved; }
    AttnVectorize &pass;
    std::optional<std::pair<int64_t, int64_t>> saved;
  };

  /// The options' register tile where given, else the target's
  /// two-register tile (8 x 32, 6 x 16, 8 x 8).
  std::pair<int64_t, int64_t> twoRegisterTile() const {
    return {registerRows > 0 ? registerRows : target->registerTileRows(),
            registerCols > 0 ? registerCols : target->registerTileCols()};
  }

  /// Rows and columns of contraction `op`'s register tile: scopedTile where
  /// set; the options where given; else the target's wide tile (AVX-512:
  /// 6 x 64) for an f32 contraction whose columns are a multiple of its
  /// width and whose rows fit its tiles: at most one tile (1 x 64 has four
  /// FMA chains where 1 x 32 has two), a divisor within one row of its
  /// rows, or at least four tiles (64 rows: ten 6-row tiles and one of 4,
  /// as AVX2 splits them; a thread's 8 rows keep 8 x 32 rather than
  /// 6 + 2); not the bf16 pair dot products (8 x 32 measured best on Zen
  /// 4) nor contractions of extended bf16 / f16 (unmeasured). Else the
  /// target's two-register tile (8 x 32, 6 x 16, 8 x 8).
  std::pair<int64_t, int64_t> registerTileFor(linalg::LinalgOp op) const {
    if (scopedTile)
      return *scopedTile;
    if (registerRows > 0 || registerCols > 0)
      return twoRegisterTile();
    int64_t wide = target->wideRegisterTileCols();
    int64_t wideRows = target->wideRegisterTileRows();
    SmallVector<unsigned> parallelDims = parallelLoops(op);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    bool f32 = llvm::all_of(op.getDpsInputs(), [](Value input) {
      return getElementTypeOrSelf(input.getType()).isF32();
    });
    if (wide > 0 && f32 && !parallelDims.empty() && !packedPairLoop(op)) {
      int64_t cols = ranges[parallelDims.back()];
      int64_t rows =
          parallelDims.size() > 1 ? ranges[parallelDims[parallelDims.size() - 2]]
                                  : 1;
      bool rowsFit = rows <= wideRows ||
                     divisorAtMost(rows, wideRows) >= wideRows - 1 ||
                     rows >= 4 * wideRows;
      if (!ShapedType::isDynamic(cols) && !ShapedType::isDynamic(rows) &&
          cols % wide == 0 && rowsFit)
        return {wideRows, wide};
    }
    return twoRegisterTile();
  }

  /// A contraction's parallel loops in order: ..., rows, cols.
  static SmallVector<unsigned> parallelLoops(linalg::LinalgOp op) {
    SmallVector<unsigned> dims;
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    for (unsigned d = 0; d < iters.size(); ++d)
      if (iters[d] == utils::IteratorType::parallel)
        dims.push_back(d);
    return dims;
  }

  /// Tile sizes per loop of `op` (0 = not tiled), for the function's target.
  SmallVector<int64_t> tileSizes(linalg::LinalgOp op) {
    const CpuTarget &target = *this->target;
    int64_t lanes = target.f32Lanes();
    auto [tileRows, tileCols] = registerTileFor(op);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    SmallVector<int64_t> sizes(ranges.size(), 1);
    if (isContraction(op)) {
      // Output dims in order: ..., rows, cols; the reduction steps by one.
      SmallVector<unsigned> parallelDims = parallelLoops(op);
      unsigned cols = parallelDims.back();
      sizes[cols] = vectorDivisorAtMost(ranges[cols], tileCols, lanes);
      if (parallelDims.size() > 1) {
        unsigned rows = parallelDims[parallelDims.size() - 2];
        sizes[rows] = divisorAtMost(ranges[rows], tileRows);
      }
      // A bf16 dot product consumes its element pair whole.
      if (std::optional<unsigned> pair = packedPairLoop(op))
        sizes[*pair] = 0;
      return sizes;
    }
    // Transposes of the two innermost dims: blocks of lanes x lanes, which
    // attn-lower-vectors turns into in-register shuffles (a row-at-a-time
    // transpose reads one element per lane).
    if (auto transpose = dyn_cast<linalg::TransposeOp>(op.getOperation())) {
      ArrayRef<int64_t> perm = transpose.getPermutation();
      unsigned n = perm.size();
      if (n >= 2 && perm[n - 1] == int64_t(n - 2) &&
          perm[n - 2] == int64_t(n - 1)) {
        sizes[n - 2] = vectorDivisorAtMost(ranges[n - 2], lanes, lanes);
        sizes[n - 1] = vectorDivisorAtMost(ranges[n - 1], lanes, lanes);
        return sizes;
      }
      // The same of 32-bit pairs of 16-bit values (bf16 K^T laid out for
      // dot products: keys x E/2 x 2 into E/2 x keys x 2): lanes x lanes
      // blocks of whole pairs, which attn-lower-vectors transposes as
      // 32-bit lanes (PairTransposeAsI32). Element by element, each pair
      // was a copy of its own.
      Type element = getElementTypeOrSelf(transpose.getInput().getType());
      bool leadingInPlace = true;
      for (unsigned i = 0; i + 3 < n; ++i)
        leadingInPlace &= perm[i] == int64_t(i);
      if (n >= 3 && ranges[n - 1] == 2 && perm[n - 1] == int64_t(n - 1) &&
          perm[n - 2] == int64_t(n - 3) && perm[n - 3] == int64_t(n - 2) &&
          leadingInPlace && element.isIntOrFloat() &&
          element.getIntOrFloatBitWidth() == 16) {
        sizes[n - 3] = vectorDivisorAtMost(ranges[n - 3], lanes, lanes);
        sizes[n - 2] = vectorDivisorAtMost(ranges[n - 2], lanes, lanes);
        sizes[n - 1] = 0;
        return sizes;
      }
    }
    // Elementwise ops and reductions: one row at a time, the last dim (and a
    // trailing reduction) vectorized. A short reduction right before a
    // parallel last dim (the online softmax's row sums in lanes: rows x
    // cols/lanes x lanes into rows x lanes) is taken whole, a few vector
    // adds into one vector.
    unsigned last = ranges.size() - 1;
    // The same with each lane's values in pairs (bf16 row sums as dot
    // products with ones: rows x units x lanes x 2 into rows x lanes), the
    // units in steps of at most 16 vectors' worth (one 32-value unit is two
    // vectors of f32).
    if (last > 1 && iters[last] == utils::IteratorType::reduction &&
        ranges[last] == 2 &&
        iters[last - 1] == utils::IteratorType::parallel &&
        iters[last - 2] == utils::IteratorType::reduction &&
        !ShapedType::isDynamic(ranges[last - 2]) &&
        ranges[last - 1] == lanes) {
      int64_t units = ranges[last - 2];
      sizes[last - 2] = units * 2 <= kMaxWholeReduction
                            ? 0
                            : divisorAtMost(units, kMaxWholeReduction / 2);
      sizes[last - 1] = sizes[last] = 0;
      return sizes;
    }
    if (last > 0 && iters[last] == utils::IteratorType::parallel &&
        iters[last - 1] == utils::IteratorType::reduction &&
        !ShapedType::isDynamic(ranges[last - 1]) &&
        !ShapedType::isDynamic(ranges[last]) &&
        ranges[last - 1] * ranges[last] <= kMaxWholeReduction * lanes) {
      sizes[last - 1] = 0;
      sizes[last] = vectorDivisorAtMost(
          ranges[last],
          vectorWidth > 0 ? vectorWidth : target.elementwiseWidth(), lanes);
      return sizes;
    }
    // A plain row reduction (the row max) takes `lanes` rows at a time,
    // their results in one vector (RowReductionTree): a row at a time, each
    // row's lanes are reduced horizontally on their own, a chain of
    // log2(lanes) shuffles and combines per row, and its one scalar stored.
    if (last > 0 && lanes > 1 && isPlainRowReduction(op) &&
        !ShapedType::isDynamic(ranges[last - 1]) &&
        !ShapedType::isDynamic(ranges[last]) &&
        ranges[last - 1] % lanes == 0 &&
        ranges[last] % lanes == 0 &&
        ranges[last] <= kMaxWholeReduction * lanes) {
      sizes[last] = 0;
      sizes[last - 1] = lanes;
      return sizes;
    }
    if (iters[last] == utils::IteratorType::reduction) {
      sizes[last] = 0; // whole reduction in one vector
      if (last > 0)
        sizes[last - 1] = 1;
    } else {
      sizes[last] = vectorDivisorAtMost(
          ranges[last],
          vectorWidth > 0 ? vectorWidth : target.elementwiseWidth(), lanes);
    }
    return sizes;
  }

  /// Large ops outside any parallel loop (the model's linear layers, GAT's
  /// projection, attn-tile's K^T, fills of big buffers) are split along their
  /// outermost parallel loop of at least `parallel-chunks` iterations (else
  /// the first loop) into pieces of an `scf.forall`, so that the pipeline's
  /// threads share them; each piece is then register-tiled as usual. Returns
  /// nullopt when the op is left whole, the piece's op when split, and null
  /// when splitting failed.
  std::optional<Operation *> splitForThreads(IRRewriter &rewriter,
                                             linalg::LinalgOp op) {
    std::optional<SmallVector<int64_t>> sizes = threadSplitSizes(op);
    if (!sizes)
      return std::nullopt;
    scf::SCFTilingOptions options;
    options.setTileSizes(getAsIndexOpFoldResult(&getContext(), *sizes));
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled))
      return static_cast<Operation *>(nullptr);
    rewriter.replaceOp(op, tiled->replacements);
    return tiled->tiledOps.front();
  }

  /// Sibling scf.foralls of one iteration space (the splits of
  /// splitForThreads: bf16 attention's K^T and V pair layouts), where the
  /// later reads nothing the earlier computes, become one forall: one
  /// parallel region, one wake-up of the threads per call instead of two.
  /// Tensors only: their dependences are their SSA uses.
  static void fuseSiblingForalls(IRRewriter &rewriter, Block &block) {
    SmallVector<scf::ForallOp> foralls;
    for (Operation &op : block)
      if (auto forall = dyn_cast<scf::ForallOp>(op))
        foralls.push_back(forall);
    auto sameSpace = [](scf::ForallOp a, scf::ForallOp b) {
      auto equal = [](ArrayRef<OpFoldResult> x, ArrayRef<OpFoldResult> y) {
        return x.size() == y.size() &&
               llvm::all_of(llvm::zip(x, y), [](auto pair) {
                 return isEqualConstantIntOrValue(std::get<0>(pair),
                                                  std::get<1>(pair));
               });
      };
      return !a.getMapping() && !b.getMapping() &&
             equal(a.getMixedLowerBound(), b.getMixedLowerBound()) &&
             equal(a.getMixedUpperBound(), b.getMixedUpperBound()) &&
             equal(a.getMixedStep(), b.getMixedStep());
    };
    // The first loop moves past what lies between: nothing there, nor in
    // either loop, may touch memory (a runtime check's assert, a read
    // through bufferization.to_tensor; a forall on memrefs writes them).
    auto memoryFreeBetween = [](Operation *first, Operation *second) {
      for (Operation *op = first; op; op = op->getNextNode()) {
        if (!isMemoryEffectFree(op))
          return false;
        if (op == second)
          return true;
      }
      return false;
    };
    for (size_t i = 0; i + 1 < foralls.size(); ++i) {
      scf::ForallOp first = foralls[i], second = foralls[i + 1];
      if (!sameSpace(first, second) || first.getNumResults() == 0 ||
          !memoryFreeBetween(first, second))
        continue;
      // Every use of the first's results comes after the second (so that
      // neither the second nor anything it reads depends on them): the
      // fused loop takes the second's place.
      bool independent = llvm::all_of(first->getUsers(), [&](Operation *u) {
        Operation *top = block.findAncestorOpInBlock(*u);
        return top && second->isBeforeInBlock(top);
      });
      if (!independent)
        continue;
      foralls[i + 1] = fuseIndependentSiblingForallLoops(first, second,
                                                         rewriter);
    }
  }

  /// Tile sizes of the `scf.forall` split of splitForThreads, or nullopt when
  /// `op` stays whole.
  std::optional<SmallVector<int64_t>> threadSplitSizes(linalg::LinalgOp op) {
    if (parallelChunks < 2 || op->getParentOfType<scf::ForallOp>())
      return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    int64_t work = 1;
    for (int64_t r : ranges)
      work *= r;
    if (work < kMinParallelWork)
      return std::nullopt;
    // The outermost parallel loop that the chunks can share out, else the
    // first loop if it is parallel.
    unsigned dim = 0;
    while (dim < ranges.size() &&
           (iters[dim] != utils::IteratorType::parallel ||
            ranges[dim] < parallelChunks))
      ++dim;
    if (dim == ranges.size())
      dim = 0;
    if (iters[dim] != utils::IteratorType::parallel)
      return std::nullopt;
    // A divisor of the range, a multiple of its two-register tile (the
    // pieces choose their own tiles), at most range / chunks (static pieces
    // vectorize).
    TileScope scope(*this, twoRegisterTile());
    int64_t unit = std::max<int64_t>(1, tileSizes(op)[dim]);
    int64_t chunk = 0;
    for (int64_t c = ranges[dim] / parallelChunks; c >= unit; --c)
      if (ranges[dim] % c == 0 && c % unit == 0) {
        chunk = c;
        break;
      }
    if (chunk == 0)
      return std::nullopt;
    SmallVector<int64_t> sizes(ranges.size(), 0);
    sizes[dim] = chunk;
    return sizes;
  }

  /// An AMX tile product `op` whose accumulator is a fill of +0 gets a fill
  /// of its own right before it (tensor.empty + linalg.fill of +0).
  /// Bufferized, that fill stays next to the product, and attn-lower-amx
  /// starts the accumulator tiles from tilezero. A fill shared with others
  /// (CSE merges the online softmax's zero scores with the loop's zero
  /// accumulator) bufferizes to one zero buffer copied into the scores
  /// before every key tile, whose tiles the product then loads: four
  /// tileloadd per 2 x 2 block of tiles, a fifth of its loads at E = 64.
  static void fillOfItsOwn(IRRewriter &rewriter, linalg::LinalgOp op) {
    auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
    // Only +0, which tilezero is (another fill is lowered as a loop of its
    // own, where loading the tiles from a shared buffer costs less).
    if (!fill || !attn::isPosZeroFill(fill))
      return;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    auto type = cast<RankedTensorType>(fill.getResult(0).getType());
    Value empty = tensor::EmptyOp::create(rewriter, op.getLoc(),
                                          type.getShape(),
                                          type.getElementType());
    Value own = linalg::FillOp::create(rewriter, op.getLoc(),
                                       fill.getDpsInputs()[0], empty)
                    .getResult(0);
    rewriter.modifyOpInPlace(op,
                             [&] { op.getDpsInitOperand(0)->set(own); });
  }

  /// The producer of contraction `op`'s accumulator that its tiles compute
  /// (isFusableInit): a fill (which may have other users, e.g. the loop init
  /// that CSE merged it with; they keep the fill), or an elementwise op whose
  /// only user is the contraction.
  static linalg::LinalgOp initProducer(linalg::LinalgOp op) {
    if (!isContraction(op) || op.getNumDpsInits() != 1)
      return {};
    auto producer =
        op.getDpsInitOperand(0)->get().getDefiningOp<linalg::LinalgOp>();
    if (!producer || !isFusableInit(producer) ||
        (!isa<linalg::FillOp>(producer) && !producer->hasOneUse()))
      return {};
    return producer;
  }

  /// Tiles contraction `op` along `sizes` (parallel dims only) and fuses
  /// `init`, the producer of its accumulator (a fill or an elementwise op,
  /// isFusableInit), into the tile loops: each tile computes its own
  /// accumulator right before accumulating into it (the loops' init is the
  /// producer's destination), instead of a separate pass over the whole
  /// output, which the tiles then read back from memory. Only `init` is
  /// fused (not what produces its own destination). Returns the tiled
  /// contraction and the tiled producer.
  FailureOr<std::pair<Operation *, Operation *>>
  tileWithInit(IRRewriter &rewriter, Operation *op, Operation *init,
               ArrayRef<int64_t> sizes,
               scf::SCFTilingOptions::LoopType loopType) {
    scf::SCFTileAndFuseOptions options;
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
    tiling.setLoopType(loopType);
    options.setTilingOptions(tiling);
    options.setFusionControlFn(
        [init](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          if (!isDestination || producer.getOwner() != init)
            return std::nullopt;
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        });
    FailureOr<scf::SCFTileAndFuseResult> result =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(op), options);
    if (failed(result) || result->tiledAndFusedOps.size() != 2)
      return failure();
    for (OpResult r : op->getResults())
      if (Value replacement = result->replacements.lookup(r))
        rewriter.replaceAllUsesWith(r, replacement);
    Operation *tiledOp = result->tiledAndFusedOps[0];
    Operation *tiledFill = result->tiledAndFusedOps[1];
    return std::make_pair(tiledOp, tiledFill);
  }

  /// The elementwise consumer that contraction `op`'s register tiles
  /// compute right after their reduction (an epilogue), or null: `op` is a
  /// 2-d contraction (rows x cols over one reduction) from a fill, one of
  /// whose users is a generic marked kRegisterTileEpilogueAttr (the online
  /// softmax's exp(S - m) of buildSpeculativeSoftmaxStep, m per row),
  /// all-parallel over the same rows x cols, reading the product first and
  /// through the identity map (and nowhere else), writing its results
  /// through it, its other inputs projected permutations. The product's
  /// other users read it as before.
  static linalg::GenericOp epilogueOf(linalg::LinalgOp op) {
    if (!isContraction(op) || op->getNumResults() != 1 ||
        op.getNumLoops() != 3 || op.getNumParallelLoops() != 2 ||
        packedPairLoop(op) ||
        !isa_and_nonnull<linalg::FillOp>(initProducer(op).getOperation()))
      return {};
    Value product = op->getResult(0);
    for (Operation *user : product.getUsers()) {
      auto epilogue = dyn_cast<linalg::GenericOp>(user);
      if (!epilogue || !epilogue->hasAttr(kRegisterTileEpilogueAttr) ||
          !epilogue.hasPureTensorSemantics() || epilogue.getNumLoops() != 2 ||
          epilogue.getNumParallelLoops() != 2 ||
          epilogue.getNumDpsInputs() < 1 ||
          epilogue.getDpsInputOperand(0)->get() != product ||
          llvm::count(epilogue->getOperands(), product) != 1 ||
          !epilogue.getMatchingIndexingMap(epilogue.getDpsInputOperand(0))
               .isIdentity() ||
          !llvm::all_of(epilogue.getIndexingMapsArray(),
                        [](AffineMap m) { return m.isProjectedPermutation(); }))
        continue;
      if (llvm::all_of(epilogue.getDpsInitsMutable(), [&](OpOperand &init) {
            return epilogue.getMatchingIndexingMap(&init).isIdentity();
          }))
        return epilogue;
    }
    return {};
  }

  /// Contraction `op` (from a fill) and its `epilogue` (epilogueOf) in one
  /// set of register tiles: each rows x cols tile zeroes its accumulators,
  /// runs the reduction, stores the product and computes the epilogue on
  /// the accumulators before the next tile starts, so the epilogue's
  /// instructions (the softmax's exp) can issue beside the next tile's
  /// FMAs. The rows split as splitRows splits them (a part of whole
  /// register tiles and the rest), and the epilogue a row of the tile at a
  /// time (all rows at once, the exp's steps of every accumulator are live
  /// together and spill). Returns false where it does not apply (a
  /// contraction the threads split), with nothing changed; otherwise the
  /// product is replaced and, with `fused` set, the epilogue too (left for
  /// runOnOperation to vectorize alone where its tiling failed).
  bool tileContractionWithEpilogue(IRRewriter &rewriter, linalg::LinalgOp op,
                                   linalg::GenericOp epilogue, bool &fused) {
    fused = false;
    if (threadSplitSizes(op))
      return false;
    // The epilogue's tiles take the product's place: what else it reads
    // and writes must be there before it.
    DominanceInfo dominance(op->getParentOfType<FunctionOpInterface>());
    for (Value operand : epilogue->getOperands())
      if (operand != op->getResult(0) &&
          !dominance.properlyDominates(operand, op))
        return false;
    const CpuTarget &target = *this->target;
    TileScope scope(*this, registerTileFor(op));
    auto [tileRows, tileCols] = registerTileFor(op);
    int64_t cols = op.getStaticLoopRanges()[parallelLoops(op)[1]];
    // The fill that runOnOperation's fusedInits holds: never erased here.
    Operation *originalFill = initProducer(op).getOperation();
    rewriter.setInsertionPoint(op);
    SmallVector<std::pair<linalg::LinalgOp, Operation *>> parts =
        splitRows(rewriter, op, originalFill);
    // Where the epilogue does not tile (a generic of static shapes always
    // does), the parts of the product as registerTileWithInit tiles them.
    auto productAlone = [&] {
      for (auto &[product, zeros] : parts)
        registerTileWithInit(rewriter, product, zeros, originalFill);
      return true;
    };
    Location loc = epilogue.getLoc();
    // Each part of the epilogue, right after the part of the product it
    // reads: a clone writing into the results so far, tiled to the part's
    // rows and dropped.
    SmallVector<Value> results(epilogue.getDpsInits());
    SmallVector<std::array<Operation *, 3>> partOps;
    int64_t begin = 0;
    for (auto &entry : parts) {
      linalg::LinalgOp product = entry.first;
      Operation *zeros = entry.second;
      int64_t size = product.getStaticLoopRanges()[parallelLoops(product)[0]];
      rewriter.setInsertionPointAfter(product);
      IRMapping map;
      for (auto [init, result] : llvm::zip(epilogue.getDpsInits(), results))
        map.map(init, result);
      auto whole = cast<TilingInterface>(rewriter.clone(*epilogue, map));
      SmallVector<OpFoldResult> offsets{rewriter.getIndexAttr(begin),
                                        rewriter.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes{rewriter.getIndexAttr(size),
                                      rewriter.getIndexAttr(cols)};
      begin += size;
      FailureOr<TilingResult> tiled =
          whole.getTiledImplementation(rewriter, offsets, sizes);
      if (failed(tiled) || tiled->tiledOps.size() != 1)
        return productAlone(); // (the clones are dead: canonicalized away)
      auto part = cast<linalg::GenericOp>(tiled->tiledOps.front());
      rewriter.modifyOpInPlace(part, [&] {
        part.getDpsInputOperand(0)->set(product->getResult(0));
      });
      SmallVector<OpFoldResult> strides(2, rewriter.getIndexAttr(1));
      for (auto [i, result] : llvm::enumerate(results))
        result = tensor::InsertSliceOp::create(
            rewriter, loc, part->getResult(i), result, offsets, sizes, strides);
      rewriter.eraseOp(whole);
      partOps.push_back({part, product, zeros});
    }
    rewriter.replaceOp(epilogue, results);
    fused = true;

    // Each part in register tiles of its rows: the product (yielded for its
    // other readers) and its zeros fused into the epilogue's tiles; then
    // the product's reduction as a loop, the epilogue as a loop over the
    // tile's rows, and all three vectorized.
    for (auto [part, product, zeros] : partOps) {
      int64_t partRows =
          cast<linalg::LinalgOp>(part).getStaticLoopRanges().front();
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(getAsIndexOpFoldResult(
          &getContext(),
          {divisorAtMost(partRows, tileRows),
           vectorDivisorAtMost(cols, tileCols, target.f32Lanes())}));
      tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
      scf::SCFTileAndFuseOptions options;
      options.setTilingOptions(tiling);
      Operation *fuseProduct = product, *fuseZeros = zeros;
      options.setFusionControlFn(
          [=](tensor::ExtractSliceOp, OpResult producer, bool)
              -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
            scf::SCFTileAndFuseOptions::ControlFnResult fuse;
            if (producer.getOwner() == fuseProduct)
              fuse.yieldProducerReplacement = true;
            else if (!fuseZeros || producer.getOwner() != fuseZeros)
              return std::nullopt;
            return fuse;
          });
      rewriter.setInsertionPoint(part);
      FailureOr<scf::SCFTileAndFuseResult> tiles =
          scf::tileConsumerAndFuseProducersUsingSCF(
              rewriter, cast<TilingInterface>(part), options);
      if (failed(tiles)) {
        // Untiled, the part still computes: tile and vectorize it alone.
        registerTileWithInit(rewriter, cast<linalg::LinalgOp>(product), zeros,
                             originalFill);
        tileAndVectorize(rewriter, cast<linalg::LinalgOp>(part));
        continue;
      }
      for (auto [original, replacement] : tiles->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      Operation *tiledEpilogue = nullptr, *tiledProduct = nullptr,
                *tiledZeros = nullptr;
      for (Operation *tiledOp : tiles->tiledAndFusedOps) {
        if (isa<linalg::FillOp>(tiledOp))
          tiledZeros = tiledOp;
        else if (isContraction(cast<linalg::LinalgOp>(tiledOp)))
          tiledProduct = tiledOp;
        else
          tiledEpilogue = tiledOp;
      }
      // (The zeros, if they are the contraction's own fill, are
      // runOnOperation's fusedInits: dropped there once unused.)
      for (Operation *old : {part, product})
        if (old->use_empty())
          rewriter.eraseOp(old);
      if (tiledProduct)
        tiledProduct = tileInLoops(rewriter, tiledProduct, {0, 0, 1});
      if (tiledEpilogue && divisorAtMost(partRows, tileRows) > 1)
        tiledEpilogue = tileInLoops(rewriter, tiledEpilogue, {1, 0});
      for (Operation *tiledOp : {tiledZeros, tiledProduct, tiledEpilogue})
        if (tiledOp)
          vectorizeOp(rewriter, tiledOp);
    }
    return true;
  }

  /// `op` tiled by `sizes` (0 = not tiled) in scf.for loops, and the tile's
  /// op returned; `op` itself, untouched, where the tiling failed.
  Operation *tileInLoops(IRRewriter &rewriter, Operation *op,
                         ArrayRef<int64_t> sizes) {
    scf::SCFTilingOptions options;
    options.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> tiled =
        scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
    if (failed(tiled))
      return op;
    rewriter.replaceOp(op, tiled->replacements);
    return tiled->tiledOps.front();
  }

  /// Vectorizes `op` in place (leaves it scalar when it does not vectorize).
  void vectorizeOp(IRRewriter &rewriter, Operation *op) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::VectorizationResult> vectorized =
        linalg::vectorize(rewriter, op, /*inputVectorSizes=*/{},
                          /*inputScalableVecDims=*/{},
                          /*vectorizeNDExtract=*/true);
    if (succeeded(vectorized))
      rewriter.replaceOp(op, vectorized->replacements);
  }

  /// Contraction `op` with its accumulator's producer (initProducer: a fill
  /// or the rescale of an accumulator) fused into the register tiles (and
  /// the thread split); false when that did not apply (nothing changed then).
  /// The original producer is left in place for the caller: other users may
  /// still read it.
  bool tileContractionWithInit(IRRewriter &rewriter, linalg::LinalgOp op) {
    Operation *target = op.getOperation();
    Operation *original = initProducer(op).getOperation();
    Operation *init = original;
    if (std::optional<SmallVector<int64_t>> split = threadSplitSizes(op)) {
      rewriter.setInsertionPoint(target);
      auto fused = tileWithInit(rewriter, target, original, *split,
                                scf::SCFTilingOptions::LoopType::ForallOp);
      if (failed(fused))
        return false;
      rewriter.eraseOp(target);
      target = fused->first;
      init = fused->second;
    }
    // The thread split's producer is the caller's no longer: once the rows
    // are split, each part has its own slice of it; otherwise
    // registerTileWithInit consumes it (`original` stays either way).
    // The parts tile as the whole would.
    TileScope scope(*this, registerTileFor(cast<linalg::LinalgOp>(target)));
    auto parts = splitRows(rewriter, cast<linalg::LinalgOp>(target), init);
    if (parts.size() > 1 && init && init != original && init->use_empty())
      rewriter.eraseOp(init);
    for (auto [part, partInit] : parts)
      registerTileWithInit(rewriter, part, partInit, original);
    return true;
  }

  /// Splits contraction `op` along its row dimension into a part of whole
  /// register tiles and the remaining rows when the rows have no divisor
  /// close to the target's register-tile rows (64 query rows and 6-row AVX2
  /// tiles: 60 + 4, not 16 tiles of 4 rows whose 8 accumulators leave the
  /// FMA units no latency slack). Each part computes its own slice of `init`
  /// (the accumulator's producer). Returns the parts with their producers,
  /// or `op` and `init` themselves.
  SmallVector<std::pair<linalg::LinalgOp, Operation *>>
  splitRows(IRRewriter &rewriter, linalg::LinalgOp op, Operation *init) {
    int64_t tileRows = registerTileFor(op).first;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<unsigned> parallelDims = parallelLoops(op);
    if (parallelDims.size() < 2 || op->getNumResults() != 1)
      return {{op, init}};
    unsigned rows = parallelDims[parallelDims.size() - 2];
    int64_t r = ranges[rows];
    if (r <= tileRows || divisorAtMost(r, tileRows) >= tileRows - 1)
      return {{op, init}};
    int64_t bulk = r / tileRows * tileRows;
    // The destination both parts are inserted into: the producer's (the
    // rescaled accumulator itself; for a fill of an empty tensor a
    // bufferization.alloc_tensor of its own, see below), so that the
    // whole-size producer is no longer needed.
    Value dest = op.getDpsInitOperand(0)->get();
    if (init)
      dest = cast<DestinationStyleOpInterface>(init).getDpsInitOperand(0)->get();
    rewriter.setInsertionPoint(op);
    if (isa_and_nonnull<linalg::FillOp>(init) && dest.getDefiningOp<tensor::EmptyOp>())
      // An allocation of its own: a tensor.empty would be CSE'd with the
      // function's other empty tensors of this type, whose buffers the
      // inserts below would then conflict with (and be copied for).
      dest = bufferization::AllocTensorOp::create(
          rewriter, op.getLoc(), cast<RankedTensorType>(dest.getType()),
          ValueRange{});
    // Part 2 reads and writes the result of inserting part 1 (rows the
    // first part leaves alone), so the parts form one SSA chain through the
    // destination and bufferize in place.
    SmallVector<std::pair<linalg::LinalgOp, Operation *>> parts;
    Value result = dest;
    for (auto [begin, size] : {std::pair<int64_t, int64_t>{0, bulk},
                               std::pair<int64_t, int64_t>{bulk, r - bulk}}) {
      // The whole op (and its producer) with `result` as destination, tiled
      // to the part's rows, then dropped.
      IRMapping map;
      Operation *producer = nullptr;
      if (init) {
        map.map(cast<DestinationStyleOpInterface>(init).getDpsInitOperand(0)->get(),
                result);
        producer = rewriter.clone(*init, map);
      }
      IRMapping opMap;
      opMap.map(op.getDpsInitOperand(0)->get(),
                producer ? producer->getResult(0) : result);
      auto whole = cast<TilingInterface>(rewriter.clone(*op, opMap));
      SmallVector<OpFoldResult> offsets(ranges.size(), rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes =
          getAsIndexOpFoldResult(rewriter.getContext(), ranges);
      offsets[rows] = rewriter.getIndexAttr(begin);
      sizes[rows] = rewriter.getIndexAttr(size);
      FailureOr<TilingResult> tiled =
          whole.getTiledImplementation(rewriter, offsets, sizes);
      SmallVector<OpFoldResult> resultOffsets, resultSizes;
      if (failed(tiled) || tiled->tiledOps.size() != 1 ||
          failed(whole.getResultTilePosition(rewriter, 0, offsets, sizes,
                                             resultOffsets, resultSizes)))
        // The partial IR (clones, a first part, an alloc_tensor) reads only
        // `dest` and the producer's inputs: dead, canonicalization and
        // bufferization drop it.
        return {{op, init}};
      auto part = cast<linalg::LinalgOp>(tiled->tiledOps.front());
      Operation *partInit = nullptr;
      if (producer) {
        auto slice = part.getDpsInitOperand(0)
                         ->get()
                         .getDefiningOp<tensor::ExtractSliceOp>();
        if (!slice)
          return {{op, init}};
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPoint(part);
        FailureOr<TilingResult> producerTile =
            tensor::replaceExtractSliceWithTiledProducer(
                rewriter, slice, cast<OpResult>(slice.getSource()));
        if (failed(producerTile) || producerTile->tiledOps.size() != 1)
          return {{op, init}};
        rewriter.replaceOp(slice, producerTile->tiledValues);
        partInit = producerTile->tiledOps.front();
      }
      rewriter.eraseOp(whole);
      if (producer)
        rewriter.eraseOp(producer);
      SmallVector<OpFoldResult> strides(resultOffsets.size(),
                                        rewriter.getIndexAttr(1));
      result = tensor::InsertSliceOp::create(rewriter, op.getLoc(),
                                             part->getResult(0), result,
                                             resultOffsets, resultSizes, strides);
      parts.push_back({part, partInit});
    }
    rewriter.replaceOp(op, result);
    return parts;
  }

  /// Register-tiles contraction `op` with `init`, its accumulator's producer
  /// (or null), fused into the tiles, and vectorizes both. `original` is the
  /// producer the caller keeps (never tiled or erased here).
  void registerTileWithInit(IRRewriter &rewriter, linalg::LinalgOp targetOp,
                            Operation *init, Operation *original) {
    Operation *target = targetOp.getOperation();
    SmallVector<int64_t> sizes = tileSizes(targetOp);
    SmallVector<utils::IteratorType> iters = targetOp.getIteratorTypesArray();
    SmallVector<int64_t> parallelSizes(sizes), reductionSizes(sizes.size(), 0);
    for (unsigned d = 0; d < iters.size(); ++d)
      if (iters[d] == utils::IteratorType::reduction) {
        parallelSizes[d] = 0;
        reductionSizes[d] = sizes[d];
      }
    FailureOr<std::pair<Operation *, Operation *>> fused = failure();
    if (init) {
      rewriter.setInsertionPoint(target);
      fused = tileWithInit(rewriter, target, init, parallelSizes,
                           scf::SCFTilingOptions::LoopType::ForOp);
    }
    if (failed(fused)) {
      // Register tiles without the producer (already split for the threads).
      if (init && init != original)
        if (Operation *tiledInit =
                registerTile(rewriter, cast<linalg::LinalgOp>(init)))
          vectorizeOp(rewriter, tiledInit);
      if (Operation *tiled = registerTile(rewriter, targetOp))
        vectorizeOp(rewriter, tiled);
      return;
    }
    rewriter.eraseOp(target);
    target = fused->first;
    if (init != original && init->use_empty())
      rewriter.eraseOp(init);
    Operation *tiledInit = fused->second;
    target = tileInLoops(rewriter, target, reductionSizes);
    vectorizeOp(rewriter, tiledInit);
    vectorizeOp(rewriter, target);
  }

  /// Splits `op` for the threads when it is large, register-tiles and
  /// vectorizes it.
  void tileAndVectorize(IRRewriter &rewriter, linalg::LinalgOp op) {
    rewriter.setInsertionPoint(op);
    Operation *target = op.getOperation();
    if (std::optional<Operation *> chunked = splitForThreads(rewriter, op)) {
      if (!*chunked)
        return;
      target = *chunked;
    }
    if (isContraction(cast<linalg::LinalgOp>(target))) {
      // The parts tile as the whole would.
      TileScope scope(*this, registerTileFor(cast<linalg::LinalgOp>(target)));
      for (auto [part, partInit] :
           splitRows(rewriter, cast<linalg::LinalgOp>(target), nullptr))
        registerTileWithInit(rewriter, part, partInit, nullptr);
      return;
    }
    target = registerTile(rewriter, cast<linalg::LinalgOp>(target));
    if (target)
      vectorizeOp(rewriter, target);
  }

  /// Tiles `op` into its register tiles (tileSizes); returns the tile's op,
  /// `op` itself when it needs no tiling, null when tiling failed.
  Operation *registerTile(IRRewriter &rewriter, linalg::LinalgOp op) {
    SmallVector<int64_t> sizes = tileSizes(op);
    if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }) ||
        sizes == op.getStaticLoopRanges())
      return op.getOperation();
    scf::SCFTilingOptions options;
    options.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled))
      return nullptr;
    rewriter.replaceOp(op, tiled->replacements);
    return tiled->tiledOps.front();
  }

  void runOnOperation() override {
    Operation *root = getOperation();
    if (failed(checkOptionRange(root, "attn-vectorize", "register-rows",
                                registerRows, 0, kMaxRegisterRows,
                                " (0: from the target)")) ||
        failed(checkOptionRange(root, "attn-vectorize", "register-cols",
                                registerCols, 0, kMaxRegisterCols,
                                " (0: from the target)")) ||
        failed(checkOptionRange(root, "attn-vectorize", "vector-width",
                                vectorWidth, 0, kMaxVectorWidth,
                                " (0: from the target)")) ||
        failed(checkOptionRange(root, "attn-vectorize", "parallel-chunks",
                                parallelChunks, 0, kMaxThreads)))
      return signalPassFailure();
    target = &getCpuTarget(getOperation());
    IRRewriter rewriter(&getContext());
    // Head splits and merges (permutation copies) into the reads and the
    // loop of attention that use them; residual sums into the accumulators
    // of the contractions they add to; weight transposes (generics that swap the two innermost dims) as
    // linalg.transpose, which is tiled into in-register blocks below.
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    DominanceInfo dominance(getOperation());
    for (linalg::GenericOp op : generics) {
      if (foldPermutationIntoReads(rewriter, op) ||
          foldPermutationIntoForall(rewriter, op))
        continue;
      if (op.hasPureTensorSemantics() &&
          foldSumIntoAccumulator(rewriter, dominance, op))
        continue;
      std::optional<SmallVector<int64_t>> perm =
          linalg::isaTransposeOpInterface(op);
      unsigned n = perm ? perm->size() : 0;
      if (n >= 2 && (*perm)[n - 1] == int64_t(n - 2) &&
          (*perm)[n - 2] == int64_t(n - 1) && op.hasPureTensorSemantics()) {
        rewriter.setInsertionPoint(op);
        (void)linalg::specializeGenericOp(rewriter, op);
      }
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumLoops() > 0 &&
          !ShapedType::isDynamicShape(op.getStaticLoopRanges()))
        ops.push_back(op);
    });
    // The producers of contraction accumulators (fills, the online softmax's
    // rescale) are fused into the contraction's tiles
    // (tileContractionWithInit), not vectorized on their own; a fill that
    // other ops read too is vectorized after the contractions.
    llvm::SetVector<Operation *> fusedInits;
    for (linalg::LinalgOp op : ops)
      if (linalg::LinalgOp init = initProducer(op))
        fusedInits.insert(init);
    // Contractions whose product an elementwise epilogue alone reads
    // (epilogueOf) take it into their register tiles; those epilogues are
    // not tiled on their own.
    llvm::DenseMap<Operation *, linalg::GenericOp> epilogues;
    llvm::DenseSet<Operation *> done;
    for (linalg::LinalgOp op : ops)
      if (linalg::GenericOp epilogue = epilogueOf(op))
        epilogues[op.getOperation()] = epilogue;
    for (linalg::LinalgOp op : ops) {
      if (fusedInits.contains(op.getOperation()) ||
          done.contains(op.getOperation()))
        continue;
      if (auto it = epilogues.find(op.getOperation()); it != epilogues.end()) {
        Operation *epilogue = it->second.getOperation();
        bool fused = false;
        if (tileContractionWithEpilogue(rewriter, op, it->second, fused)) {
          if (fused)
            done.insert(epilogue);
          continue;
        }
      }
      // AMX tile products, after bufferization (attn-lower-amx).
      if (target->hasAmxBf16() && attn::isAmxContraction(op)) {
        fillOfItsOwn(rewriter, op);
        continue;
      }
      if (linalg::LinalgOp init = initProducer(op)) {
        if (!tileContractionWithInit(rewriter, op))
          tileAndVectorize(rewriter, op);
        continue;
      }
      tileAndVectorize(rewriter, op);
    }
    for (Operation *init : fusedInits) {
      if (init->use_empty())
        rewriter.eraseOp(init);
      else
        tileAndVectorize(rewriter, cast<linalg::LinalgOp>(init));
    }

    // broadcast + mul + multi_reduction (how a generic contraction vectorizes)
    // -> vector.contract, which lowers to outer-product FMAs.
    // Broadcasting reads become read + vector.broadcast first, so that the
    // broadcasts fold into the contraction's indexing maps.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    // bf16 factors of an f32 contraction (the bf16 dot products'): the
    // extension folds into the contraction, which keeps bf16 operands.
    vector::populateFoldArithExtensionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    for (Block &block : getOperation().getBody())
      fuseSiblingForalls(rewriter, block);
  }
};

/// A register tile of bf16 pair dot products (attn-tile's bf16 mode): a
/// vector.contract of bf16 factors into an f32 `rows x cols` accumulator
/// whose reductions are the element pair (extent 2, last in both factors)
/// and unit loops, as AVX512-BF16 dot products: per row, the row's pair
/// broadcast as one 32-bit lane; per 16 (8, 4) columns, their pairs as they
/// lie in the right-hand factor (`cols x 2`, row-major: column c's pair at
/// 2c, 2c + 1, which is vdpbf16ps's layout). x86vector.avx512.dot computes
/// acc[c] += a[2c] b[2c] + a[2c+1] b[2c+1] in f32.
struct ContractToBf16Dot : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    VectorType lhsType = op.getLhsType(), rhsType = op.getRhsType();
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (op.getKind() != vector::CombiningKind::ADD ||
        !lhsType.getElementType().isBF16() ||
        !rhsType.getElementType().isBF16() || !accType ||
        !accType.getElementType().isF32() || accType.getRank() != 2 ||
        accType.isScalable() || lhsType.isScalable() || rhsType.isScalable())
      return rewriter.notifyMatchFailure(op, "not a bf16 -> f32 2-d tile");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    // Each loop's extent, from the operands that index it.
    unsigned loops = maps[0].getNumDims();
    SmallVector<int64_t> extent(loops, 1);
    auto dimsOf = [](AffineMap map) -> std::optional<SmallVector<unsigned>> {
      SmallVector<unsigned> dims;
      for (AffineExpr e : map.getResults()) {
        auto d = dyn_cast<AffineDimExpr>(e);
        if (!d)
          return std::nullopt;
        dims.push_back(d.getPosition());
      }
      return dims;
    };
    auto lhsDims = dimsOf(maps[0]), rhsDims = dimsOf(maps[1]),
         accDims = dimsOf(maps[2]);
    if (!lhsDims || !rhsDims || !accDims)
      return rewriter.notifyMatchFailure(op, "maps are not permutations");
    for (auto [dims, shape] :
         {std::pair{*lhsDims, lhsType.getShape()},
          std::pair{*rhsDims, rhsType.getShape()},
          std::pair{*accDims, accType.getShape()}})
      for (auto [d, n] : llvm::zip(dims, shape))
        extent[d] = n;
    unsigned row = (*accDims)[0], col = (*accDims)[1];
    if (lhsDims->empty() || rhsDims->empty() ||
        lhsDims->back() != rhsDims->back() || extent[lhsDims->back()] != 2)
      return rewriter.notifyMatchFailure(op, "no element pair");
    unsigned pair = lhsDims->back();
    // The other reductions are unit loops; the factors' non-unit dims are
    // (row, pair) and (col, pair) in that order.
    for (unsigned d = 0; d < loops; ++d)
      if (d != row && d != col && d != pair && extent[d] != 1)
        return rewriter.notifyMatchFailure(op, "a reduction besides the pair");
    auto nonUnit = [&](ArrayRef<unsigned> dims) {
      SmallVector<unsigned> kept;
      for (unsigned d : dims)
        if (extent[d] != 1)
          kept.push_back(d);
      return kept;
    };
    SmallVector<unsigned> lhsKept = nonUnit(*lhsDims),
                          rhsKept = nonUnit(*rhsDims);
    int64_t rows = extent[row], cols = extent[col];
    if (lhsKept != (rows == 1 ? SmallVector<unsigned>{pair}
                              : SmallVector<unsigned>{row, pair}) ||
        rhsKept != (cols == 1 ? SmallVector<unsigned>{pair}
                              : SmallVector<unsigned>{col, pair}))
      return rewriter.notifyMatchFailure(op, "factors not (row|col, pair)");
    int64_t lanes = cols % 16 == 0 ? 16 : cols % 8 == 0 ? 8 : cols % 4 == 0 ? 4 : 0;
    if (lanes == 0)
      return rewriter.notifyMatchFailure(op, "columns not a multiple of 4");

    Location loc = op.getLoc();
    Type bf16 = rewriter.getBF16Type(), f32 = rewriter.getF32Type(),
         i32 = rewriter.getI32Type();
    Value lhs = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({rows, 2}, bf16), op.getLhs());
    Value rhs = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({cols * 2}, bf16), op.getRhs());
    // Each column block's pairs, shared by the rows.
    SmallVector<Value> blocks;
    for (int64_t c = 0; c < cols; c += lanes)
      blocks.push_back(vector::ExtractStridedSliceOp::create(
          rewriter, loc, rhs, ArrayRef<int64_t>{2 * c},
          ArrayRef<int64_t>{2 * lanes}, ArrayRef<int64_t>{1}));
    Value acc = op.getAcc();
    for (int64_t r = 0; r < rows; ++r) {
      Value pairBits = vector::BitCastOp::create(
          rewriter, loc, VectorType::get({1}, i32),
          vector::ExtractOp::create(rewriter, loc, lhs, ArrayRef<int64_t>{r}));
      Value splat = vector::BroadcastOp::create(
          rewriter, loc, VectorType::get({lanes}, i32),
          vector::ExtractOp::create(rewriter, loc, pairBits,
                                    ArrayRef<int64_t>{0}));
      Value a = vector::BitCastOp::create(
          rewriter, loc, VectorType::get({2 * lanes}, bf16), splat);
      Value accRow =
          vector::ExtractOp::create(rewriter, loc, acc, ArrayRef<int64_t>{r});
      for (auto [i, block] : llvm::enumerate(blocks)) {
        int64_t c = int64_t(i) * lanes;
        Value part = vector::ExtractStridedSliceOp::create(
            rewriter, loc, accRow, ArrayRef<int64_t>{c},
            ArrayRef<int64_t>{lanes}, ArrayRef<int64_t>{1});
        Value dot = x86vector::DotBF16Op::create(
            rewriter, loc, VectorType::get({lanes}, f32), part, a, block);
        accRow = vector::InsertStridedSliceOp::create(
            rewriter, loc, dot, accRow, ArrayRef<int64_t>{c},
            ArrayRef<int64_t>{1});
      }
      acc = vector::InsertOp::create(rewriter, loc, accRow, acc,
                                     ArrayRef<int64_t>{r});
    }
    rewriter.replaceOp(op, acc);
    return success();
  }
};

/// Sums of bf16 values in lanes of pairs as bf16 dot products with ones:
///   multi_reduction <add>, extf(x : ... x U x 16 x 2 x bf16), acc [r-3, r-1]
/// (lane t of each 16 adds the pairs 2t, 2t + 1 of U chunks of 32 values;
/// the online softmax's row sums of its bf16 P) becomes U `vdpbf16ps` per
/// 16 lanes, acc += x . ones, where widening each 16 values to f32 and
/// adding takes three instructions. The products by 1 are exact, but the
/// instruction treats bf16 inputs below 2^-126 as zero (and flushes such
/// sums): a sum of such values differs from the widened one. For P that is
/// no difference: P V's dot products (and AMX's) read P the same way, so l
/// adds exactly the weights P V used. Any other sum of this form (none is
/// built) would take that rule too.
struct PairSumAsBf16Dot : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    constexpr int64_t kLanes = 16;
    if (op.getKind() != vector::CombiningKind::ADD ||
        isa_and_nonnull<vector::MaskOp>(op->getParentOp()))
      return rewriter.notifyMatchFailure(op, "not a plain sum");
    auto widen = op.getSource().getDefiningOp<arith::ExtFOp>();
    VectorType type = op.getSourceVectorType();
    int64_t rank = type.getRank();
    if (!widen || type.isScalable() || !type.getElementType().isF32() ||
        !getElementTypeOrSelf(widen.getIn().getType()).isBF16() || rank < 3 ||
        type.getDimSize(rank - 1) != 2 || type.getDimSize(rank - 2) != kLanes)
      return rewriter.notifyMatchFailure(
          op, "not bf16 widened to f32 in U x 16 x 2");
    for (int64_t d = 0; d < rank; ++d)
      if (op.isReducedDim(d) != (d == rank - 3 || d == rank - 1))
        return rewriter.notifyMatchFailure(op, "not summed over U and pairs");
    Location loc = op.getLoc();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t outer = 1;
    for (int64_t size : shape.drop_back(3))
      outer *= size;
    int64_t units = shape[rank - 3];
    Type bf16 = rewriter.getBF16Type(), f32 = rewriter.getF32Type();
    Value x = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({outer, units, 2 * kLanes}, bf16),
        widen.getIn());
    Type accType = op.getAcc().getType();
    Value acc = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({outer, kLanes}, f32), op.getAcc());
    auto onesType = VectorType::get({2 * kLanes}, bf16);
    Value ones = arith::ConstantOp::create(
        rewriter, loc, onesType,
        DenseElementsAttr::get(onesType, rewriter.getFloatAttr(bf16, 1.0)));
    for (int64_t o = 0; o < outer; ++o) {
      Value sum = vector::ExtractOp::create(rewriter, loc, acc,
                                            ArrayRef<int64_t>{o});
      for (int64_t u = 0; u < units; ++u)
        sum = x86vector::DotBF16Op::create(
            rewriter, loc, VectorType::get({kLanes}, f32), sum,
            vector::ExtractOp::create(rewriter, loc, x,
                                      ArrayRef<int64_t>{o, u}),
            ones);
      acc = vector::InsertOp::create(rewriter, loc, sum, acc,
                                     ArrayRef<int64_t>{o});
    }
    rewriter.replaceOp(op, vector::ShapeCastOp::create(rewriter, loc, accType,
                                                       acc));
    return success();
  }
};

/// A contraction of narrower float factors into a wider accumulator that no
/// dot-product instruction took (a target without AVX512-BF16, or a register
/// tile whose columns are not a multiple of 4): the factors extended, so
/// that MLIR's contraction lowering, which takes one element type only,
/// makes FMAs of it.
struct WidenContractFactors : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    Type acc = accType ? accType.getElementType() : op.getAccType();
    auto widen = [&](Value factor) -> Value {
      auto type = cast<VectorType>(factor.getType());
      if (type.getElementType() == acc)
        return factor;
      return arith::ExtFOp::create(rewriter, op.getLoc(), type.clone(acc),
                                   factor);
    };
    if (!isa<FloatType>(acc) || (op.getLhsType().getElementType() == acc &&
                                 op.getRhsType().getElementType() == acc))
      return rewriter.notifyMatchFailure(op, "factors in the accumulator's type");
    if (!isa<FloatType>(op.getLhsType().getElementType()) ||
        !isa<FloatType>(op.getRhsType().getElementType()))
      return rewriter.notifyMatchFailure(op, "integer factors");
    Value lhs = widen(op.getLhs()), rhs = widen(op.getRhs());
    rewriter.modifyOpInPlace(op, [&] {
      op.getLhsMutable().assign(lhs);
      op.getRhsMutable().assign(rhs);
    });
    return success();
  }
};

/// A reduction of each row of a `lanes x cols` f32 vector (cols a multiple
/// of `lanes`, a power of two) into one `lanes` vector, row r in lane r: the
/// form attn-vectorize gives plain row reductions (isPlainRowReduction).
/// Each row's cols / lanes vectors are combined into one; then the `lanes`
/// row vectors are combined in pairs, each pair by two shuffles (the first
/// and the second half of each row's lanes, the first vector's rows before
/// the second's) and one combine, which halves the lanes per row and doubles
/// the rows per vector, until one vector holds every row's result. With 16
/// lanes that is 15 pairs, 45 vector ops for 16 rows, where a horizontal
/// reduction per row takes 4 shuffles, 4 combines, the combine with the
/// accumulator and a scalar store each, in a chain of dependent ops.
/// maxnumf combines assume no NaN (as the lowering of its vector.reduction
/// below: the row max only stabilises exp), sums are reassociated.
struct RowReductionTree : OpRewritePattern<vector::MultiDimReductionOp> {
  RowReductionTree(MLIRContext *ctx, int64_t lanes)
      : OpRewritePattern(ctx, /*benefit=*/2), lanes(lanes) {}

  int64_t lanes;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getSourceVectorType();
    if (type.getRank() != 2 || type.isScalable() ||
        !type.getElementType().isF32() ||
        op.getReductionDims() != ArrayRef<int64_t>{1} ||
        type.getDimSize(0) != lanes || lanes < 2 ||
        !llvm::isPowerOf2_64(lanes) || type.getDimSize(1) % lanes != 0 ||
        op.isMasked())
      return failure();
    vector::CombiningKind kind = op.getKind();
    if (kind != vector::CombiningKind::MAXNUMF &&
        kind != vector::CombiningKind::MAXIMUMF &&
        kind != vector::CombiningKind::ADD)
      return failure();
    Location loc = op.getLoc();
    auto combine = [&](Value a, Value b) -> Value {
      switch (kind) {
      case vector::CombiningKind::MAXNUMF:
        return arith::MaxNumFOp::create(rewriter, loc, a, b,
                                        arith::FastMathFlags::nnan);
      case vector::CombiningKind::MAXIMUMF:
        return arith::MaximumFOp::create(rewriter, loc, a, b);
      default:
        return arith::AddFOp::create(rewriter, loc, a, b,
                                     arith::FastMathFlags::reassoc);
      }
    };
    // Combines `values` pairwise, a tree (not a chain) of combines.
    auto combineAll = [&](SmallVector<Value> values) {
      while (values.size() > 1) {
        SmallVector<Value> next;
        for (size_t i = 0; i + 1 < values.size(); i += 2)
          next.push_back(combine(values[i], values[i + 1]));
        if (values.size() % 2)
          next.push_back(values.back());
        values = std::move(next);
      }
      return values.front();
    };
    // Each row's vectors combined into one.
    int64_t cols = type.getDimSize(1);
    SmallVector<Value> rows;
    for (int64_t r = 0; r < lanes; ++r) {
      Value row = vector::ExtractOp::create(rewriter, loc, op.getSource(),
                                            ArrayRef<int64_t>{r});
      SmallVector<Value> chunks;
      for (int64_t c = 0; c < cols; c += lanes)
        chunks.push_back(vector::ExtractStridedSliceOp::create(
            rewriter, loc, row, ArrayRef<int64_t>{c},
            ArrayRef<int64_t>{lanes}, ArrayRef<int64_t>{1}));
      rows.push_back(combineAll(chunks));
    }
    // Segments of `width` lanes, one row each, `lanes / width` rows per
    // vector; a pair of vectors becomes one with segments half as wide.
    for (int64_t width = lanes; width > 1; width /= 2) {
      int64_t half = width / 2, perVector = lanes / width;
      SmallVector<int64_t> low, high;
      for (int64_t source : {int64_t(0), lanes})
        for (int64_t segment = 0; segment < perVector; ++segment)
          for (int64_t t = 0; t < half; ++t) {
            low.push_back(source + segment * width + t);
            high.push_back(source + segment * width + half + t);
          }
      SmallVector<Value> next;
      for (size_t i = 0; i < rows.size(); i += 2) {
        Value a = vector::ShuffleOp::create(rewriter, loc, rows[i],
                                            rows[i + 1], low);
        Value b = vector::ShuffleOp::create(rewriter, loc, rows[i],
                                            rows[i + 1], high);
        next.push_back(combine(a, b));
      }
      rows = std::move(next);
    }
    rewriter.replaceOp(op, combine(rows.front(), op.getAcc()));
    return success();
  }
};

/// f32 erf (GELU's) as one odd rational function of the argument clamped
/// to [-4, 4] (erf(4) rounds to 1 in f32): x P(x^2) / Q(x^2), with P of
/// degree 6 and Q of degree 4 in x^2 (the minimax coefficients that Eigen
/// and XLA use; within 4.5e-7 of erf on all of R), the quotient clamped
/// into [-1, 1]. MLIR's approximation picks its coefficients per interval
/// with selects (three intervals, ~16 blends per vector); this is 4
/// compares, 4 selects, 12 FMAs or products and one division. NaN stays NaN
/// (ordered compares keep it in the clamps).
struct ErfAsRational : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    auto constant = [&](double v) {
      return buildFloatConstant(rewriter, loc, type, v);
    };
    // v clamped into [-bound, bound] by ordered compares (NaN stays).
    auto clamp = [&](Value v, double bound) {
      Value hi = constant(bound), lo = constant(-bound);
      v = arith::SelectOp::create(
          rewriter, loc,
          arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, v,
                                hi),
          hi, v);
      return arith::SelectOp::create(
                 rewriter, loc,
                 arith::CmpFOp::create(rewriter, loc,
                                       arith::CmpFPredicate::OLT, v, lo),
                 lo, v)
          .getResult();
    };
    Value x = clamp(op.getOperand(), 4.0);
    Value x2 = arith::MulFOp::create(rewriter, loc, x, x);
    auto horner = [&](ArrayRef<double> coefficients) {
      Value acc = constant(coefficients.front());
      for (double c : coefficients.drop_front())
        acc = math::FmaOp::create(rewriter, loc, acc, x2, constant(c));
      return acc;
    };
    Value p = horner({-2.72614225801306e-10, 2.77068142495902e-08,
                      -2.10102402082508e-06, -5.69250639462346e-05,
                      -7.34990630326855e-04, -2.95459980854025e-03,
                      -1.60960333262415e-02});
    Value q = horner({-1.45660718464996e-05, -2.13374055278905e-04,
                      -1.68282697438203e-03, -7.37332916720468e-03,
                      -1.42647390514189e-02});
    p = arith::MulFOp::create(rewriter, loc, x, p);
    // Near |x| = 4 the quotient can round a few ulp past 1.
    rewriter.replaceOp(
        op, clamp(arith::DivFOp::create(rewriter, loc, p, q), 1.0));
    return success();
  }
};

/// `fn` applied to each `width`-element chunk of `inputs` (vectors with as
/// many elements as `resultType`, flattened), its `width`-element results
/// put together into a vector of `resultType`: an operation on whole
/// registers (an x86 intrinsic) over a vector of any shape whose element
/// count is a multiple of `width`.
Value mapChunks(PatternRewriter &rewriter, Location loc, VectorType resultType,
                ValueRange inputs, int64_t width,
                function_ref<Value(ValueRange)> fn) {
  int64_t count = resultType.getNumElements();
  assert(count % width == 0 && "not whole chunks");
  SmallVector<Value> flat;
  for (Value input : inputs)
    flat.push_back(vector::ShapeCastOp::create(
        rewriter, loc,
        VectorType::get({count}, getElementTypeOrSelf(input.getType())),
        input));
  auto flatResult = VectorType::get({count}, resultType.getElementType());
  Value result = arith::ConstantOp::create(
      rewriter, loc, flatResult,
      cast<TypedAttr>(rewriter.getZeroAttr(flatResult)));
  for (int64_t i = 0; i < count; i += width) {
    SmallVector<Value> slices;
    for (Value v : flat)
      slices.push_back(vector::ExtractStridedSliceOp::create(
          rewriter, loc, v, ArrayRef<int64_t>{i}, ArrayRef<int64_t>{width},
          ArrayRef<int64_t>{1}));
    result = vector::InsertStridedSliceOp::create(rewriter, loc, fn(slices),
                                                  result, ArrayRef<int64_t>{i},
                                                  ArrayRef<int64_t>{1});
  }
  return vector::ShapeCastOp::create(rewriter, loc, resultType, result);
}

/// The coefficients (lowest degree first) of the Horner polynomial ending
/// in `p`: p = fma(...fma(c_d, g, c_{d-1})..., g, c_0), every coefficient a
/// float constant, every link used once, and every use of `g` a link; none
/// otherwise.
static std::optional<SmallVector<double>> hornerCoefficients(Value p,
                                                             Value g) {
  auto constantOf = [](Value v) -> std::optional<double> {
    APFloat constant(0.0f);
    if (!matchPattern(v, m_ConstantFloat(&constant)))
      return std::nullopt;
    return constant.convertToDouble();
  };
  SmallVector<double> coefficients;
  SmallPtrSet<Operation *, 8> links;
  for (Value link = p;;) {
    auto fma = link.getDefiningOp<math::FmaOp>();
    if (!fma) {
      std::optional<double> top = constantOf(link);
      if (!top || coefficients.empty())
        return std::nullopt;
      coefficients.push_back(*top);
      break;
    }
    std::optional<double> c = constantOf(fma.getC());
    if (!c || fma.getB() != g || !fma->hasOneUse())
      return std::nullopt;
    coefficients.push_back(*c);
    links.insert(fma);
    link = fma.getA();
  }
  if (!llvm::all_of(g.getUsers(),
                    [&](Operation *user) { return links.contains(user); }))
    return std::nullopt;
  return coefficients;
}

/// The coefficients (lowest degree first) of q(r) = p(r + shift).
static SmallVector<double> taylorShift(ArrayRef<double> p, double shift) {
  // Horner's synthetic division, repeated: q_j = sum_i p_i C(i, j) shift^(i-j).
  SmallVector<double> q(p);
  int64_t degree = static_cast<int64_t>(q.size()) - 1;
  for (int64_t k = 0; k < degree; ++k)
    for (int64_t i = degree - 1; i >= k; --i)
      q[i] += shift * q[i + 1];
  return q;
}

/// The 2^n of buildExpOfNonPositive on AVX-512: 2^t = 2^n p(g) builds 2^n
/// by adding 1.5 * 2^23 + 127 to t (n + 127 in the low mantissa bits; n =
/// that sum minus the constant) and shifting those bits into the exponent,
/// then multiplies. AVX-512 has both steps as one instruction each:
/// `vrndscaleps` rounds t to n, and `vscalefps` computes p 2^n, so
///   p * bitcast(shli(bitcast(t + M), 23))  ->  scalef(p, roundeven(t))
/// and (t + M) - M -> roundeven(t): the addition, the subtraction and the
/// shift become one rounding (with f32 weights' degree-5 polynomial, 11
/// vector ops per vector of scores instead of 13; bf16 weights' degree 3,
/// 9 instead of 11; the load, the store and P's rounding not counted). The
/// two agree wherever the exp uses them, t in [-126.5, 127.5) (the
/// softmax's t is at most 1/2, or 8 with the lazy rescale); below,
/// buildExpOfNonPositive's select makes the result 0 either way.
///
/// With AVX512DQ the rounding goes too: `vreduceps` computes u - floor(u) in
/// one instruction where `vrndscaleps` is two (one per cycle against two on
/// the Golden Cove cores of Sapphire Rapids, measured), and `vscalefps`
/// takes the floor of its exponent itself. With u = t + 1/2 (one FMA with
/// the product t = x log2(e) where t is one):
///   g = t - n  ->  reduce_floor(u) - 1/2,   2^n p  ->  scalef(p, u),
/// and the underflow test t < -126 becomes u < -125.5: n = floor(t + 1/2)
/// is t rounded half up, g in [-1/2, 1/2) as before, one vector op less
/// per vector of scores.
struct Exp2ScaleAsScalef : OpRewritePattern<arith::MulFOp> {
  Exp2ScaleAsScalef(MLIRContext *ctx, bool reduce)
      : OpRewritePattern(ctx), reduce(reduce) {}
  bool reduce;

  /// Whether `v` is a float constant (scalar or splat) equal to `value`.
  static bool isFloat(Value v, double value) {
    APFloat constant(0.0f);
    return matchPattern(v, m_ConstantFloat(&constant)) &&
           constant.convertToDouble() == value;
  }
  /// Whether `v` is an integer constant (scalar or splat) equal to `value`.
  static bool isInt(Value v, int64_t value) {
    APInt constant;
    return matchPattern(v, m_ConstantInt(&constant)) &&
           constant.getSExtValue() == value;
  }

  LogicalResult matchAndRewrite(arith::MulFOp op,
                                PatternRewriter &rewriter) const override {
    constexpr double kMagic = 12582912.0 + 127.0;
    auto type = dyn_cast<VectorType>(op.getType());
    if (!type || !type.getElementType().isF32() || type.isScalable() ||
        type.getNumElements() % 16 != 0)
      return rewriter.notifyMatchFailure(op, "not whole vectors of 16 f32");
    // The 2^n factor and its steps used by this product alone: another use
    // would keep the magic sum's rounding while g takes roundeven's (they
    // differ at half-integers).
    auto scale = op.getRhs().getDefiningOp<arith::BitcastOp>();
    auto shift = scale ? scale.getIn().getDefiningOp<arith::ShLIOp>() : nullptr;
    if (!shift || !isInt(shift.getRhs(), 23) || !scale->hasOneUse() ||
        !shift->hasOneUse())
      return rewriter.notifyMatchFailure(op, "not a product by 2^n alone");
    auto bits = shift.getLhs().getDefiningOp<arith::BitcastOp>();
    auto shifted = bits ? bits.getIn().getDefiningOp<arith::AddFOp>() : nullptr;
    if (!shifted || !bits->hasOneUse() || !isFloat(shifted.getRhs(), kMagic))
      return rewriter.notifyMatchFailure(op, "2^n not from t + 1.5 * 2^23 + 127");
    // Every other use of t + M must be (t + M) - M, which becomes n too.
    SmallVector<arith::SubFOp> roundings;
    for (Operation *user : shifted->getUsers()) {
      if (user == bits)
        continue;
      auto sub = dyn_cast<arith::SubFOp>(user);
      if (!sub || sub.getLhs() != shifted.getResult() ||
          !isFloat(sub.getRhs(), kMagic))
        return rewriter.notifyMatchFailure(op, "t + M has other uses");
      roundings.push_back(sub);
    }
    Location loc = op.getLoc();
    Value t = shifted.getLhs();
    auto lanes = VectorType::get({16}, rewriter.getF32Type());
    Value allLanes = arith::ConstantIntOp::create(rewriter, loc,
                                                  rewriter.getI16Type(), -1);
    // _MM_FROUND_CUR_DIRECTION.
    Value rounding =
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(), 4);
    // With vreduceps: every use of n must be a fraction t - n (and there
    // must be one).
    SmallVector<arith::SubFOp> fractions;
    bool fractionsOnly = reduce;
    for (arith::SubFOp sub : roundings)
      for (Operation *user : sub->getUsers()) {
        auto g = dyn_cast<arith::SubFOp>(user);
        if (!g || g.getLhs() != t || g.getRhs() != sub.getResult())
          fractionsOnly = false;
        else
          fractions.push_back(g);
      }
    Value exponent, factor = op.getLhs();
    if (fractionsOnly && !fractions.empty()) {
      rewriter.setInsertionPoint(shifted);
      Value half = buildFloatConstant(rewriter, loc, type, 0.5);
      // u = x c + 1/2 in one FMA where t = x c.
      Value u;
      auto product = t.getDefiningOp<arith::MulFOp>();
      if (product)
        u = math::FmaOp::create(rewriter, loc, product.getLhs(),
                                product.getRhs(), half);
      else
        u = arith::AddFOp::create(rewriter, loc, t, half);
      StringAttr intrinsic =
          rewriter.getStringAttr("llvm.x86.avx512.mask.reduce.ps.512");
      // imm 9: round down (01), precision exception suppressed (1000).
      Value imm =
          arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(), 9);
      Value frac = mapChunks(rewriter, loc, type, {u}, 16,
                             [&](ValueRange chunk) -> Value {
                               return LLVM::CallIntrinsicOp::create(
                                          rewriter, loc, lanes, intrinsic,
                                          ValueRange{chunk[0], imm, chunk[0],
                                                     allLanes, rounding})
                                   .getResult(0);
                             });
      // 2^g as a Horner polynomial in g alone (buildExpOfNonPositive's):
      // the same polynomial in r = g + 1/2, the reduction itself, takes
      // the subtraction out. Its coefficients, p(r - 1/2) expanded in
      // double, are rounded to f32 as p's were (the relative error stays
      // that of p's: 2.9 ulp against 2.8 at degree 5, 1.0e-4 at degree 3,
      // over every f32 g in [-1/2, 1/2]); the polynomial in g, and g, die
      // with the product they fed. Otherwise g = r - 1/2.
      std::optional<SmallVector<double>> coefficients;
      if (fractions.size() == 1)
        coefficients = hornerCoefficients(op.getLhs(), fractions.front());
      if (coefficients) {
        SmallVector<double> shifted = taylorShift(*coefficients, -0.5);
        rewriter.setInsertionPoint(op);
        auto constant = [&](double c) {
          return buildFloatConstant(rewriter, loc, type, c);
        };
        Value q = constant(shifted.back());
        for (double c : llvm::reverse(ArrayRef(shifted).drop_back()))
          q = math::FmaOp::create(rewriter, loc, q, frac, constant(c));
        factor = q;
      } else {
        Value g = arith::SubFOp::create(rewriter, loc, frac, half);
        for (arith::SubFOp fraction : fractions)
          rewriter.replaceOp(fraction, g);
      }
      // The underflow test on u.
      for (Operation *user : llvm::make_early_inc_range(t.getUsers())) {
        auto cmp = dyn_cast<arith::CmpFOp>(user);
        if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OLT ||
            cmp.getLhs() != t || !isFloat(cmp.getRhs(), -126.0))
          continue;
        rewriter.setInsertionPoint(cmp);
        Value bound = buildFloatConstant(rewriter, loc, type, -125.5);
        rewriter.replaceOpWithNewOp<arith::CmpFOp>(
            cmp, arith::CmpFPredicate::OLT, u, bound);
      }
      exponent = u;
    } else {
      // n where t + M was, ahead of every use.
      rewriter.setInsertionPoint(shifted);
      exponent = math::RoundEvenOp::create(rewriter, loc, t);
      for (arith::SubFOp sub : roundings)
        rewriter.replaceOp(sub, exponent);
    }
    rewriter.setInsertionPoint(op);
    // vscalefps on each 16 lanes of the flattened vectors.
    rewriter.replaceOp(
        op, mapChunks(rewriter, loc, type, {factor, exponent}, 16,
                      [&](ValueRange chunk) -> Value {
                        // x86vector.avx512.mask.scalef hands its operands in
                        // order to llvm.x86.avx512.mask.scalef.ps.512(a, b,
                        // passthrough, k, rounding), which computes a
                        // 2^floor(b): its "src" is the scaled value, its "a"
                        // the exponents (the integration tests check the
                        // numbers).
                        return x86vector::MaskScaleFOp::create(
                            rewriter, loc, lanes, chunk[0], chunk[1], chunk[0],
                            allLanes, rounding);
                      }));
    return success();
  }
};

/// Whether `type`'s two innermost dims are a static pair of contiguous
/// 16-bit values whose rows follow each other (strides 2, 1): they collapse
/// into one dim.
static bool hasContiguousPairs(MemRefType type) {
  int64_t rank = type.getRank();
  if (rank < 2 || type.getDimSize(rank - 1) != 2 ||
      ShapedType::isDynamic(type.getDimSize(rank - 2)) ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() != 16)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return strides[rank - 1] == 1 && strides[rank - 2] == 2;
}

/// The memref with its innermost pair dim merged into the one before it,
/// and the transfer's indices into it (the row's index doubled plus the
/// pair's).
static std::pair<Value, SmallVector<Value>>
collapsePairs(PatternRewriter &rewriter, Location loc, Value memref,
              ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t rank = type.getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank - 2; ++i)
    groups.push_back({i});
  groups.push_back({rank - 2, rank - 1});
  Value collapsed =
      memref::CollapseShapeOp::create(rewriter, loc, memref, groups);
  SmallVector<Value> newIndices(indices.drop_back(2));
  Value two = arith::ConstantIndexOp::create(rewriter, loc, 2);
  newIndices.push_back(arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, indices[rank - 2], two),
      indices[rank - 1]));
  return {collapsed, newIndices};
}

/// Whether `op` reads or writes whole pairs in bounds, unmasked, with a
/// minor identity map over all of the memref's dims.
static bool isWholePairTransfer(VectorTransferOpInterface op) {
  auto memrefType = dyn_cast<MemRefType>(op.getShapedType());
  VectorType vectorType = op.getVectorType();
  return memrefType && hasContiguousPairs(memrefType) && !op.getMask() &&
         vectorType.getRank() == memrefType.getRank() &&
         vectorType.getShape().back() == 2 &&
         op.getPermutationMap().isMinorIdentity() &&
         llvm::all_of(op.getInBoundsValues(), [](bool b) { return b; });
}

/// The vector of whole rows (`... x rows x 2cols`) holding a vector of
/// pairs (`... x rows x cols x 2`).
static VectorType pairRowsType(VectorType pairs) {
  SmallVector<int64_t> shape(pairs.getShape().drop_back());
  shape.back() *= 2;
  return VectorType::get(shape, pairs.getElementType());
}

/// A transfer of 16-bit pairs (`... x rows x cols x 2`, the pairs of each
/// row contiguous) as a transfer of whole rows (`... x rows x 2cols`): the
/// pair layouts' transposes read and write rows of 32 contiguous values,
/// which the transfer lowering otherwise split into one 32-bit load or
/// store per pair.
struct TransferReadPairsAsRows : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp op,
                                PatternRewriter &rewriter) const override {
    if (!isWholePairTransfer(op))
      return rewriter.notifyMatchFailure(op, "not a read of whole pairs");
    Location loc = op.getLoc();
    auto [collapsed, indices] =
        collapsePairs(rewriter, loc, op.getBase(), op.getIndices());
    VectorType type = op.getVectorType();
    VectorType rowsType = pairRowsType(type);
    Value rows = vector::TransferReadOp::create(
        rewriter, loc, rowsType, collapsed, indices, op.getPadding(),
        SmallVector<bool>(rowsType.getRank(), true));
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, type, rows);
    return success();
  }
};

struct TransferWritePairsAsRows : OpRewritePattern<vector::TransferWriteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferWriteOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<MemRefType>(op.getShapedType()) || !isWholePairTransfer(op))
      return rewriter.notifyMatchFailure(op, "not a write of whole pairs");
    Location loc = op.getLoc();
    auto [collapsed, indices] =
        collapsePairs(rewriter, loc, op.getBase(), op.getIndices());
    VectorType rowsType = pairRowsType(op.getVectorType());
    Value rows =
        vector::ShapeCastOp::create(rewriter, loc, rowsType, op.getVector());
    rewriter.replaceOpWithNewOp<vector::TransferWriteOp>(
        op, rows, collapsed, indices,
        SmallVector<bool>(rowsType.getRank(), true));
    return success();
  }
};

/// Whether `op` swaps dims `first` and `first + 1` of a vector of 16-bit
/// elements, keeps every other dim in place, and all dims before `first`
/// are units (the pair layouts' transposes, with their leading unit dims).
static bool swapsUnitLedDims(vector::TransposeOp op, int64_t first) {
  VectorType type = op.getSourceVectorType();
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  if (type.isScalable() || first < 0 || first + 1 >= rank ||
      !element.isIntOrFloat() || element.getIntOrFloatBitWidth() != 16)
    return false;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t from = i == first ? first + 1 : i == first + 1 ? first : i;
    if (perm[i] != from || (i < first && shape[i] != 1))
      return false;
  }
  return true;
}

/// A transpose of 32-bit pairs of 16-bit values (the bf16 K^T of the dot
/// products: a block of keys x E/2 pairs into E/2 x keys) as a transpose of
/// 32-bit lanes: the pairs bitcast to i32, the lanes x lanes i32 block
/// transposed (the 16 x 16 shuffle sequence on AVX-512), bitcast back.
/// Leading unit dims are dropped and restored with shape casts.
struct PairTransposeAsI32 : OpRewritePattern<vector::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getSourceVectorType();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t n = type.getRank();
    if (n < 3 || shape[n - 1] != 2 || !swapsUnitLedDims(op, n - 3))
      return rewriter.notifyMatchFailure(op, "not a transpose of pairs");
    Location loc = op.getLoc();
    int64_t rows = shape[n - 3], cols = shape[n - 2];
    Type half = type.getElementType(), i32 = rewriter.getI32Type();
    Value flat = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({rows, cols * 2}, half), op.getVector());
    Value lanes = vector::BitCastOp::create(
        rewriter, loc, VectorType::get({rows, cols}, i32), flat);
    Value swapped = vector::TransposeOp::create(rewriter, loc, lanes,
                                                ArrayRef<int64_t>{1, 0});
    Value back = vector::BitCastOp::create(
        rewriter, loc, VectorType::get({cols, rows * 2}, half), swapped);
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, op.getResultVectorType(),
                                                     back);
    return success();
  }
};

/// A transpose of two rows of 16-bit values into pairs (bf16 V laid out for
/// dot products: `... x 2 x n` into `... x n x 2`, leading dims units) as one
/// interleaving shuffle of the rows on i16 lanes, flat, so that the write's
/// shape cast folds into it (TransferWritePairsAsRows).
struct InterleaveRowsAsI16 : OpRewritePattern<vector::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getSourceVectorType();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = type.getRank();
    Type element = type.getElementType();
    if (rank < 2 || !(element.isBF16() || element.isF16()) ||
        shape[rank - 2] != 2 || !swapsUnitLedDims(op, rank - 2))
      return rewriter.notifyMatchFailure(op, "not two rows into pairs");
    Location loc = op.getLoc();
    int64_t n = shape[rank - 1];
    Type i16 = rewriter.getI16Type();
    Value rows = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({2 * n}, element), op.getVector());
    Value ints = arith::BitcastOp::create(
        rewriter, loc, VectorType::get({2 * n}, i16), rows);
    SmallVector<int64_t> mask;
    for (int64_t j = 0; j < n; ++j) {
      mask.push_back(j);
      mask.push_back(n + j);
    }
    Value pairs = vector::ShuffleOp::create(rewriter, loc, ints, ints, mask);
    Value back = arith::BitcastOp::create(
        rewriter, loc, VectorType::get({2 * n}, element), pairs);
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(
        op, op.getResultVectorType(), back);
    return success();
  }
};

/// A transpose of bf16 or f16 values (bf16 V laid out for dot products:
/// rows 2t and 2t + 1 interleaved) on i16 lanes: LLVM lowers shuffles of
/// 16-bit floats element by element (vpextrw / vmovw / vinserti per value),
/// of i16 as word permutes.
struct HalfTransposeAsI16 : OpRewritePattern<vector::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getSourceVectorType();
    Type element = type.getElementType();
    if (type.isScalable() || !(element.isBF16() || element.isF16()))
      return rewriter.notifyMatchFailure(op, "not 16-bit floats");
    Location loc = op.getLoc();
    Type i16 = rewriter.getI16Type();
    Value ints = arith::BitcastOp::create(rewriter, loc, type.clone(i16),
                                          op.getVector());
    Value swapped =
        vector::TransposeOp::create(rewriter, loc, ints, op.getPermutation());
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getResultVectorType(),
                                                  swapped);
    return success();
  }
};

/// f32 -> bf16 rounding of whole 32-value chunks on AVX512-BF16 as
/// `vcvtne2ps2bf16`, two vectors per instruction: LLVM lowers an `fptrunc`
/// to bfloat 16 values at a time (`vcvtneps2bf16` into a ymm) and joins the
/// halves with `vinsertf64x4`, three instructions for what this does in one.
/// Both round to nearest even and flush inputs below 2^-126 to zero. The
/// online softmax's P (rounded as it is computed, for the bf16 dot products
/// or AMX tiles of P V) and the prescaled Q take this form.
struct TruncFToBf16Pairs : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    auto sourceType = dyn_cast<VectorType>(op.getIn().getType());
    if (!type || !sourceType || !type.getElementType().isBF16() ||
        !sourceType.getElementType().isF32() || type.isScalable() ||
        type.getNumElements() % 32 != 0 || op.getRoundingmodeAttr() ||
        (op.getFastmathAttr() &&
         op.getFastmath() != arith::FastMathFlags::none))
      return rewriter.notifyMatchFailure(op,
                                         "not whole chunks of 32 f32 to bf16");
    Location loc = op.getLoc();
    auto pairType = VectorType::get({32}, rewriter.getBF16Type());
    StringAttr intrinsic =
        rewriter.getStringAttr("llvm.x86.avx512bf16.cvtne2ps2bf16.512");
    rewriter.replaceOp(
        op, mapChunks(rewriter, loc, type, {op.getIn()}, 32,
                      [&](ValueRange chunk) -> Value {
                        auto half = [&](int64_t offset) {
                          return vector::ExtractStridedSliceOp::create(
                              rewriter, loc, chunk[0],
                              ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{16},
                              ArrayRef<int64_t>{1});
                        };
                        // _mm512_cvtne2ps_pbh(a, b): lanes 0-15 from b,
                        // 16-31 from a.
                        return LLVM::CallIntrinsicOp::create(
                                   rewriter, loc, pairType, intrinsic,
                                   ValueRange{half(16), half(0)})
                            .getResult(0);
                      }));
    return success();
  }
};

struct AttnLowerVectors : attn::impl::AttnLowerVectorsBase<AttnLowerVectors> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    linalg::hoistRedundantVectorTransfers(func, /*verifyNonZeroTrip=*/true);

    // The reduction loops of register-tiled contractions (innermost loops
    // holding a vector.contract: one outer-product step per iteration, the
    // accumulators now loop-carried vectors),
    // unrolled by kContractionUnroll: with one step per iteration the
    // out-of-order core cannot keep both FMA units fed (a 6 x 16 AVX2 tile
    // on Zen 3: 47-67 GF/s rolled, 80-88 unrolled by 4, of a 94 GF/s peak).
    SmallVector<scf::ForOp> reductionLoops;
    func.walk([&](scf::ForOp loop) {
      Block *body = loop.getBody();
      if (body->getOps<scf::ForOp>().empty() &&
          !body->getOps<vector::ContractionOp>().empty())
        reductionLoops.push_back(loop);
    });
    for (scf::ForOp loop : reductionLoops) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      if (!trips || trips->getZExtValue() < 2)
        continue;
      (void)loopUnrollByFactor(
          loop, std::min<uint64_t>(kContractionUnroll, trips->getZExtValue()));
    }

    const CpuTarget &target = getCpuTarget(func);
    if (target.hasBf16DotProduct()) {
      // The factors of bf16 contractions read as one contiguous 1-d vector
      // where their memory allows (the columns' pairs, `1 x cols x 2` of a
      // row): read per pair otherwise (the pair dim alone is contiguous),
      // and LLVM assembles the vector 32 bits at a time. Only these reads
      // are flattened, and only where the innermost dim is one pair.
      SmallVector<Operation *> factorReads;
      func.walk([&](vector::ContractionOp contract) {
        if (!contract.getLhsType().getElementType().isBF16())
          return;
        for (Value factor : {contract.getLhs(), contract.getRhs()})
          if (auto read = factor.getDefiningOp<vector::TransferReadOp>())
            factorReads.push_back(read);
      });
      // So do the bf16 pairs of the sums PairSumAsBf16Dot takes (read per
      // pair, they would be assembled element by element).
      func.walk([&](vector::MultiDimReductionOp sum) {
        auto widen = sum.getSource().getDefiningOp<arith::ExtFOp>();
        auto read = widen ? widen.getIn().getDefiningOp<vector::TransferReadOp>()
                          : nullptr;
        if (read && read.getVectorType().getElementType().isBF16() &&
            read.getVectorType().getRank() >= 3 &&
            read.getVectorType().getShape().back() == 2)
          factorReads.push_back(read);
      });
      RewritePatternSet flatten(&getContext());
      vector::populateFlattenVectorTransferPatterns(
          flatten, /*targetVectorBitwidth=*/64);
      GreedyRewriteConfig onlyThese;
      onlyThese.setStrictness(GreedyRewriteStrictness::ExistingOps);
      (void)applyOpPatternsGreedily(factorReads, std::move(flatten), onlyThese);

      RewritePatternSet dots(&getContext());
      dots.add<ContractToBf16Dot, PairSumAsBf16Dot>(&getContext());
      if (failed(applyPatternsGreedily(func, std::move(dots))))
        return signalPassFailure();
    }

    // Reductions that keep the innermost dim (the online softmax's row sums
    // in lanes: rows x cols/lanes x lanes summed over the middle dim) are
    // vector adds of whole vectors (InnerParallel); the others, along the
    // vector (row max and sum, LayerNorm moments), are lowered below with
    // InnerReduction, which would transpose these into scalar adds.
    SmallVector<Operation *> outerReductions;
    func.walk([&](vector::MultiDimReductionOp op) {
      if (!op.isReducedDim(op.getSourceVectorType().getRank() - 1))
        outerReductions.push_back(op);
    });
    if (!outerReductions.empty()) {
      RewritePatternSet outer(&getContext());
      vector::populateVectorMultiReductionLoweringPatterns(
          outer, vector::VectorMultiReductionLowering::InnerParallel);
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      if (failed(applyOpPatternsGreedily(outerReductions, std::move(outer),
                                         config)))
        return signalPassFailure();
    }

    // The reads and writes of 16-bit transposes (the bf16 pair layouts of
    // K^T and V, once per call) as whole rows of pairs.
    // The transposes themselves go to integer lanes here too, so that the
    // shape casts between the rows and the pairs fold away before they are
    // lowered (element by element).
    SmallVector<Operation *> pairTransfers;
    func.walk([&](vector::TransposeOp transpose) {
      Type element = transpose.getSourceVectorType().getElementType();
      if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() != 16)
        return;
      pairTransfers.push_back(transpose);
      if (auto read =
              transpose.getVector().getDefiningOp<vector::TransferReadOp>())
        pairTransfers.push_back(read);
      for (Operation *user : transpose->getUsers())
        if (isa<vector::TransferWriteOp>(user))
          pairTransfers.push_back(user);
    });
    if (!pairTransfers.empty()) {
      RewritePatternSet rows(&getContext());
      rows.add<TransferReadPairsAsRows, TransferWritePairsAsRows>(
          &getContext());
      rows.add<PairTransposeAsI32, InterleaveRowsAsI16>(&getContext(),
                                                        /*benefit=*/2);
      rows.add<HalfTransposeAsI16>(&getContext());
      vector::ShapeCastOp::getCanonicalizationPatterns(rows, &getContext());
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      (void)applyOpPatternsGreedily(pairTransfers, std::move(rows), config);
    }

    RewritePatternSet patterns(&getContext());
    // f32 erf; erf in other element types stays with MLIR's patterns (as
    // before: f16 has its own approximation there, bf16 none).
    patterns.add<ErfAsRational>(&getContext(), /*benefit=*/2);
    patterns.add<RowReductionTree>(&getContext(), target.f32Lanes());
    if (target.hasFeature("avx512f") && target.f32Lanes() == 16)
      patterns.add<Exp2ScaleAsScalef>(&getContext(),
                                      target.hasFeature("avx512dq"));
    if (target.hasBf16DotProduct())
      patterns.add<TruncFToBf16Pairs>(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::LogOp::getOperationName() ||
             name == math::ErfOp::getOperationName() ||
             name == math::TanhOp::getOperationName();
    });
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    // Transposes of lanes x lanes blocks: the 16 x 16 in-register shuffle
    // sequence on AVX-512, one flat shuffle otherwise (K^T is transposed
    // once per call: O(L E) against the O(L^2 E) of the tiles).
    vector::populateVectorTransposeLoweringPatterns(
        patterns, target.f32Lanes() == 16
                      ? vector::VectorTransposeLowering::Shuffle16x16
                      : vector::VectorTransposeLowering::Shuffle1D);
    patterns.add<WidenContractFactors>(&getContext(), /*benefit=*/2);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorMaskOpLoweringPatterns(patterns);
    vector::populateVectorGatherLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();

    // Sums along a vector (softmax row sums, LayerNorm moments) may be
    // reassociated: without it LLVM adds the lanes one by one, in order, a
    // chain of 64 dependent adds per 64-wide row. maxnum reductions (only the
    // online softmax's row max, which merely stabilises exp: a NaN score
    // still reaches the output through exp(NaN - m)) may assume no NaN, or
    // LLVM compares lane by lane.
    func.walk([](vector::ReductionOp reduction) {
      if (!isa<FloatType>(reduction.getType()))
        return;
      arith::FastMathFlags flags = reduction.getFastmath();
      if (reduction.getKind() == vector::CombiningKind::ADD)
        flags = flags | arith::FastMathFlags::reassoc;
      else if (reduction.getKind() == vector::CombiningKind::MAXNUMF)
        flags = flags | arith::FastMathFlags::nnan;
      reduction.setFastmath(flags);
    });
  }
};

} // namespace
