//===- RegionEvaluator.h - score_mod / mask_mod regions on doubles -*- C++ -*-===//
//
// The oracle's reading of an attn.sdpa / attn.mha region: a small
// interpreter of its arith, math and tensor.extract ops (floats in double,
// each f32 result rounded to f32 as the compiled code rounds it; integers in
// 64 bits, wrapped to their width), independent of every lowering (no region
// is compiled for the check). Captured tensors are read from the host tensors the caller
// binds to them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_REGIONEVALUATOR_H
#define ATTN_LIB_RUNTIME_REGIONEVALUATOR_H

#include "lib/Runtime/Tensor.h"

#include "mlir/IR/Region.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::attn {

class RegionEvaluator {
public:
  /// Prepares `region` (one block ending in attn.yield). `captured` gives
  /// the host tensor of every value defined above the region that it reads;
  /// an op the interpreter does not know, or a captured value without a
  /// tensor, is an error naming it.
  static llvm::Expected<std::unique_ptr<RegionEvaluator>>
  create(Region &region, StringRef name,
         const llvm::DenseMap<Value, const HostTensor *> &captured);

  /// Runs the region on `args` (floats as doubles, index values as
  /// integers, in block-argument order); returns the yielded value (a
  /// double, or 0/1 for i1). A captured tensor read out of bounds records
  /// an error (see error()) and yields 0.
  double run(llvm::ArrayRef<double> args);

  /// The first error met by run(), or empty.
  const std::string &error() const { return firstError; }
  /// Records `message` as the error unless one is recorded (for a caller
  /// that checks what run() yields).
  void noteError(std::string message) {
    if (firstError.empty())
      firstError = std::move(message);
  }

  ~RegionEvaluator();

private:
  RegionEvaluator() = default;
  struct Instr;
  std::vector<Instr> program;
  std::vector<bool> isFloat; // per slot
  unsigned numArgs = 0, numSlots = 0, result = 0;
  std::vector<double> f;
  std::vector<int64_t> i;
  std::string firstError;
  std::string name;
};

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_REGIONEVALUATOR_H
