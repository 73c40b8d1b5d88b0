//===- StackTileBuffers.cpp - a parallel tile's temporaries on the stack --===//
//
// The body of an scf.forall (a query tile of attention, a block of GAT
// nodes) allocates its temporaries after bufferization with memref.alloc and
// frees them at its end: a malloc and a free per buffer and tile. Once the
// forall is loops, small static ones go on the stack: in a parallel loop as
// allocas in a memref.alloca_scope around the body (each iteration takes
// them from its thread's stack and gives them back), in a sequential loop
// as allocas in the function's frame, one for every iteration.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/OptionBounds.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSTACKTILEBUFFERS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// The bytes of a static, identity-layout memref of int, float or index
/// elements (index taken as 8 bytes), or nullopt (also past int64).
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  Type element = type.getElementType();
  int64_t bits = element.isIndex() ? 64
                 : element.isIntOrFloat()
                     ? int64_t(element.getIntOrFloatBitWidth())
                     : 0;
  if (bits == 0 || bits % 8 != 0)
    return std::nullopt;
  int64_t bytes = bits / 8;
  for (int64_t dim : type.getShape())
    if (llvm::MulOverflow(bytes, dim, bytes))
      return std::nullopt;
  return bytes;
}

/// Whether the uses of `value` (an allocation of `body` or a view of it)
/// stay within one iteration: every use is in the block or nested in it,
/// and none hands the buffer on where it could outlive the iteration or be
/// freed elsewhere: no yield or other terminator, no loop or branch
/// operand (an iter_arg), no call (a callee might keep it), no
/// deallocation outside the block itself; memrefs made of it (views,
/// casts) are followed.
bool staysInIteration(Value value, Block *body) {
  for (Operation *user : value.getUsers()) {
    if (!body->findAncestorOpInBlock(*user))
      return false;
    if (isa<memref::DeallocOp>(user)) {
      if (user->getBlock() != body)
        return false;
      continue;
    }
    if (user->hasTrait<OpTrait::IsTerminator>() ||
        isa<RegionBranchOpInterface, CallOpInterface>(user))
      return false;
    // Any memref an op makes of it (views, casts) may alias it.
    for (Value result : user->getResults())
      if (isa<BaseMemRefType>(result.getType()) &&
          !staysInIteration(result, body))
        return false;
  }
  return true;
}

/// Whether `alloc`, in `body`, lives and dies there: freed exactly once by
/// a memref.dealloc in the block itself, every use within the iteration.
bool livesInBlock(memref::AllocOp alloc, Block *body) {
  int64_t deallocs = 0;
  for (Operation *user : alloc->getUsers())
    if (isa<memref::DeallocOp>(user))
      ++deallocs;
  return deallocs == 1 && staysInIteration(alloc.getResult(), body);
}

/// Whether the ops between `loop` and the function run it on one thread
/// (sequential control flow only: a loop under a parallel op, an OpenMP or
/// async region, is not).
bool runsSequentially(Operation *loop) {
  for (Operation *parent = loop->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<func::FuncOp>(parent))
      return true;
    if (!isa<scf::ForOp, scf::IfOp, scf::WhileOp, scf::ExecuteRegionOp,
             scf::IndexSwitchOp, memref::AllocaScopeOp>(parent))
      return false;
  }
  return false;
}

/// The allocations of `body` that may go on the stack, in order, while
/// `budget` (decremented) allows.
SmallVector<memref::AllocOp> candidates(Block *body, int64_t &budget) {
  SmallVector<memref::AllocOp> taken;
  for (Operation &op : *body) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc || !alloc.getDynamicSizes().empty() ||
        !alloc.getSymbolOperands().empty())
      continue;
    std::optional<int64_t> size = staticBytes(alloc.getType());
    if (!size || *size > budget || !livesInBlock(alloc, body))
      continue;
    budget -= *size;
    taken.push_back(alloc);
  }
  return taken;
}

/// `alloc` as a memref.alloca at the builder's insertion point; its
/// deallocations go.
void toAlloca(OpBuilder &builder, memref::AllocOp alloc) {
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  auto alloca = memref::AllocaOp::create(builder, alloc.getLoc(),
                                         alloc.getType(),
                                         alloc.getAlignmentAttr());
  alloc.replaceAllUsesWith(alloca.getResult());
  alloc.erase();
}

struct StackTileBuffers
    : attn::impl::AttnStackTileBuffersBase<StackTileBuffers> {
  using AttnStackTileBuffersBase::AttnStackTileBuffersBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (failed(attn::checkOptionRange(func, "attn-stack-tile-buffers",
                                      "max-bytes", maxBytes, 0,
                                      attn::kMaxStackTileBytes)))
      return signalPassFailure();
    if (func.isExternal())
      return;
    // Parallel loops: each iteration's buffers on its thread's stack, in a
    // scope that gives them back at the iteration's end.
    func.walk([&](scf::ParallelOp loop) {
      // Outermost parallel loops only: a nested one's body would take the
      // whole budget again on the same thread's stack.
      if (loop.getNumResults() != 0 || loop.getInitVals().size() != 0 ||
          !runsSequentially(loop))
        return;
      int64_t budget = maxBytes;
      SmallVector<memref::AllocOp> taken =
          candidates(loop.getBody(), budget);
      if (taken.empty())
        return;
      Block *body = loop.getBody();
      Operation *terminator = body->getTerminator();
      OpBuilder builder(loop.getContext());
      builder.setInsertionPointToStart(body);
      auto scope =
          memref::AllocaScopeOp::create(builder, loop.getLoc(), TypeRange());
      Block *inner = builder.createBlock(&scope.getBodyRegion());
      inner->getOperations().splice(inner->end(), body->getOperations(),
                                    std::next(Block::iterator(scope)),
                                    Block::iterator(terminator));
      builder.setInsertionPointToEnd(inner);
      memref::AllocaScopeReturnOp::create(builder, loop.getLoc());
      for (memref::AllocOp alloc : taken) {
        builder.setInsertionPoint(alloc);
        toAlloca(builder, alloc);
      }
    });
    // Sequential loops (a forall on one thread): one buffer in the
    // function's frame serves every iteration; the budget is the
    // function's.
    int64_t budget = maxBytes;
    SmallVector<memref::AllocOp> taken;
    func.walk([&](scf::ForOp loop) {
      if (!runsSequentially(loop))
        return;
      taken.append(candidates(loop.getBody(), budget));
    });
    OpBuilder builder(func.getContext());
    builder.setInsertionPointToStart(&func.getBody().front());
    for (memref::AllocOp alloc : taken)
      toAlloca(builder, alloc);
  }
};

} // namespace
