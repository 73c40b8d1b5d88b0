//===- ElideResultCopies.cpp - results computed in their out-parameters ---===//
//
// After buffer-results-to-out-params, a private function whose result was a
// reshaped view of one of its own buffers (a model layer computed on
// [tokens, features] and returned as [batch, tokens, features]) ends with a
// copy of that buffer into its out-parameter. When every caller passes a
// buffer of its own there, the function can compute into the out-parameter
// directly: the buffer becomes the inverse reshape of the out-parameter and
// the copy goes away.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNELIDERESULTCOPIES
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// A static shape and the identity layout map (not a strided layout that
/// happens to be contiguous: reshapes of it would type differently).
bool isPlainStatic(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() &&
         isa<AffineMapAttr>(memref.getLayout()) &&
         memref.getLayout().isIdentity();
}

/// Whether `call` passes as operand `index` a memref.alloc of the caller's
/// that nothing sees before the call returns: the alloc is in the call's
/// block (a fresh buffer each time the call runs, not one carried around a
/// loop into the next call's inputs) and every other use of it comes after
/// the call, in that block (so no other operand is the buffer or a view of
/// it).
bool passesOwnBuffer(func::CallOp call, unsigned index) {
  if (index >= call.getNumOperands())
    return false;
  Value buffer = call.getOperand(index);
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != call->getBlock())
    return false;
  for (OpOperand &use : buffer.getUses()) {
    if (use.getOwner() == call) {
      if (use.getOperandNumber() != index)
        return false;
      continue;
    }
    Operation *after = call->getBlock()->findAncestorOpInBlock(*use.getOwner());
    if (!after || !call->isBeforeInBlock(after))
      return false;
  }
  return true;
}

/// The calls of `func` when every use of its symbol is a direct func.call
/// passing its own buffer as out-parameter `index`; nullopt otherwise.
std::optional<SmallVector<func::CallOp>>
exclusiveOutCalls(func::FuncOp func, unsigned index, ModuleOp module) {
  std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
  if (!uses)
    return std::nullopt;
  SmallVector<func::CallOp> calls;
  for (SymbolTable::SymbolUse use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call || !passesOwnBuffer(call, index))
      return std::nullopt;
    calls.push_back(call);
  }
  return calls;
}

/// Rewrites `copy` (a copy at the end of `func` into its argument `out`)
/// when its source is a chain of expand_shape / collapse_shape from a
/// memref.alloc of the function's body: the alloc is replaced by the
/// inverse chain applied to `out`. Returns whether it did.
bool elide(func::FuncOp func, memref::CopyOp copy, BlockArgument out,
           ModuleOp module) {
  if (!out.hasOneUse() || !isPlainStatic(out.getType()) ||
      copy.getSource().getType() != out.getType())
    return false;
  // The views from the copy's source back to the buffer.
  SmallVector<Operation *> chain;
  Value value = copy.getSource();
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
      break;
    if (!isPlainStatic(def->getOperand(0).getType()))
      return false;
    chain.push_back(def);
    value = def->getOperand(0);
  }
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  if (!alloc || !isPlainStatic(alloc.getType()))
    return false;
  std::optional<SmallVector<func::CallOp>> calls =
      exclusiveOutCalls(func, out.getArgNumber(), module);
  if (!calls)
    return false;

  // The buffer as a view of `out`, built where the alloc was.
  OpBuilder builder(alloc);
  Location loc = alloc.getLoc();
  Value view = out;
  for (Operation *step : chain) {
    auto srcType = cast<MemRefType>(step->getOperand(0).getType());
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(step)) {
      view = memref::CollapseShapeOp::create(
          builder, loc, srcType, view, expand.getReassociationIndices());
    } else {
      auto collapse = cast<memref::CollapseShapeOp>(step);
      view = memref::ExpandShapeOp::create(
          builder, loc, srcType, view, collapse.getReassociationIndices(),
          getAsIndexOpFoldResult(builder.getContext(), srcType.getShape()));
    }
  }
  // The callers' buffers keep at least the alignment the function's had.
  if (std::optional<uint64_t> alignment = alloc.getAlignment())
    for (func::CallOp call : *calls) {
      auto buffer =
          call.getOperand(out.getArgNumber()).getDefiningOp<memref::AllocOp>();
      if (buffer.getAlignment().value_or(0) < *alignment)
        buffer.setAlignment(*alignment);
    }
  alloc.getResult().replaceAllUsesWith(view);
  alloc.erase();
  copy.erase();
  for (Operation *step : chain)
    if (step->use_empty())
      step->erase();
  return true;
}

struct ElideResultCopies
    : attn::impl::AttnElideResultCopiesBase<ElideResultCopies> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      // Public functions' callers may pass an out-parameter that aliases an
      // input; one block, so that the copies are the last writes.
      if (func.isPublic() || func.isExternal() ||
          !func.getBody().hasOneBlock())
        continue;
      Block &body = func.getBody().front();
      // The copies into arguments right before the return.
      SmallVector<memref::CopyOp> copies;
      for (Operation *op = body.getTerminator()->getPrevNode(); op;
           op = op->getPrevNode()) {
        auto copy = dyn_cast<memref::CopyOp>(op);
        auto out = copy ? dyn_cast<BlockArgument>(copy.getTarget()) : nullptr;
        if (!out || out.getOwner() != &body)
          break;
        copies.push_back(copy);
      }
      for (memref::CopyOp copy : copies)
        elide(func, copy, cast<BlockArgument>(copy.getTarget()), module);
    }
  }
};

} // namespace
