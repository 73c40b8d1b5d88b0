//===- MergeParallelRegions.cpp - one OpenMP team for consecutive loops ---===//
//
// convert-scf-to-openmp gives every scf.parallel its own omp.parallel: a
// call of attention with K^T laid out once per call starts the thread team
// twice, a model once per parallel layer. Each start wakes the team's
// threads (with OMP_WAIT_POLICY=passive or after KMP_BLOCKTIME, from
// sleep) and ends in a join. Consecutive omp.parallel regions of the same
// team size become one, their bodies in order with a barrier between.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNMERGEPARALLELREGIONS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// The team size of `op` when it is a plain region this pass may merge (0:
/// no num_threads, the OpenMP runtime's default team): one block without
/// arguments ending in omp.terminator, no cancellation of the region (it
/// would skip the merged bodies too), num_threads a constant or absent and
/// no other clause (no if, proc_bind, private, reduction or allocate
/// clause: every other operand and property at its default).
std::optional<int64_t> plainTeamSize(omp::ParallelOp op) {
  Region &region = op.getRegion();
  if (!region.hasOneBlock() || region.front().getNumArguments() != 0 ||
      !isa<omp::TerminatorOp>(region.front().getTerminator()))
    return std::nullopt;
  if (op.getProcBindKindAttr() || op.getPrivateSymsAttr() ||
      op.getReductionSymsAttr() || op.getReductionModAttr() ||
      op.getPrivateNeedsBarrierAttr())
    return std::nullopt;
  bool cancels = false;
  op.getRegion().walk([&](Operation *nested) {
    cancels |= isa<omp::CancelOp, omp::CancellationPointOp>(nested);
  });
  if (cancels)
    return std::nullopt;
  Value threads = op.getNumThreads();
  if (!threads)
    return op->getNumOperands() == 0 ? std::optional<int64_t>(0)
                                     : std::nullopt;
  APInt size;
  if (op->getNumOperands() != 1 || !matchPattern(threads, m_ConstantInt(&size)) ||
      size.getSExtValue() <= 0)
    return std::nullopt;
  return size.getSExtValue();
}

/// Whether `op` may move from between two regions to before the first:
/// no regions, and no memory effect other than allocating (constants,
/// views, allocations).
bool hoistable(Operation *op) {
  if (op->getNumRegions() != 0 || op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.hasEffect<MemoryEffects::Allocate>() &&
         !effects.hasEffect<MemoryEffects::Read>() &&
         !effects.hasEffect<MemoryEffects::Write>() &&
         !effects.hasEffect<MemoryEffects::Free>();
}

/// Whether the last op of `body` before its terminator ends in a barrier
/// of the whole team: a worksharing loop without nowait (OpenMP's implicit
/// barrier at the end of the construct), or an explicit barrier.
bool endsInBarrier(Block &body) {
  Operation *terminator = body.getTerminator();
  Operation *last = terminator->getPrevNode();
  if (!last)
    return false;
  if (isa<omp::BarrierOp>(last))
    return true;
  if (auto loop = dyn_cast<omp::WsloopOp>(last))
    return !loop.getNowaitAttr();
  return false;
}

/// Merges the omp.parallel regions following `first` in its block into it
/// while they are of the same team size and only hoistable ops lie between.
/// Returns the number merged.
int64_t mergeFollowing(omp::ParallelOp first) {
  std::optional<int64_t> size = plainTeamSize(first);
  if (!size)
    return 0;
  int64_t merged = 0;
  while (true) {
    SmallVector<Operation *> between;
    Operation *next = first->getNextNode();
    while (next && !isa<omp::ParallelOp>(next) && hoistable(next)) {
      between.push_back(next);
      next = next->getNextNode();
    }
    auto second = dyn_cast_or_null<omp::ParallelOp>(next);
    if (!second || plainTeamSize(second) != size)
      return merged;
    // The ops between only use values defined before `first` or by each
    // other (`first` has no results), so they keep their order before it.
    for (Operation *op : between)
      op->moveBefore(first);
    // The second body's num_threads constant may be one of them: it is now
    // before `first`, and `first` keeps its own.
    Block &into = first.getRegion().front();
    Block &from = second.getRegion().front();
    OpBuilder builder(into.getTerminator());
    if (!endsInBarrier(into))
      omp::BarrierOp::create(builder, second.getLoc());
    // Every thread of the team finished the first body's loops before any
    // starts the second's, as when the team was joined and started again.
    Operation *terminator = into.getTerminator();
    into.getOperations().splice(terminator->getIterator(),
                                from.getOperations(), from.begin(),
                                std::prev(from.end()));
    second.erase();
    ++merged;
  }
}

struct AttnMergeParallelRegions
    : attn::impl::AttnMergeParallelRegionsBase<AttnMergeParallelRegions> {
  void runOnOperation() override {
    SmallVector<omp::ParallelOp> regions;
    getOperation()->walk([&](omp::ParallelOp op) { regions.push_back(op); });
    llvm::SmallPtrSet<Operation *, 8> erased;
    for (omp::ParallelOp op : regions) {
      if (erased.contains(op))
        continue;
      // Remember the regions that merging will erase (they follow `op`).
      SmallVector<Operation *> following;
      for (Operation *n = op->getNextNode(); n; n = n->getNextNode())
        if (isa<omp::ParallelOp>(n))
          following.push_back(n);
      int64_t merged = mergeFollowing(op);
      for (int64_t i = 0; i < merged; ++i)
        erased.insert(following[i]);
    }
  }
};

} // namespace
