//===- OptionBounds.h - the range of a pass's integer options ----*- C++ -*-===//
//
// Pass options are user input: a negative size would wrap, and one far past
// any real tile (an edge block of 10^5 unrolled, 2^32 lanes) made the
// lowering run for minutes or the compiled code allocate gigabytes. Every
// integer option of the attn passes and pipelines has a documented range,
// checked before anything is built.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_OPTIONBOUNDS_H
#define ATTN_LIB_TRANSFORMS_OPTIONBOUNDS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir::attn {

/// Upper bounds of the tile options: query / key rows per tile, CSR entries
/// per unrolled step, register-tile rows and columns, elementwise vector
/// width, GPU subgroup lanes, workgroup rows and workgroup memory.
constexpr int64_t kMaxTileRows = 4096;
constexpr int64_t kMaxEdgeBlock = 256;
constexpr int64_t kMaxRegisterRows = 32;
constexpr int64_t kMaxRegisterCols = 256;
constexpr int64_t kMaxVectorWidth = 1024;
constexpr int64_t kMaxThreads = 4096;
constexpr int64_t kMaxSubgroupSize = 128;
constexpr int64_t kMaxWorkgroupRows = 1024;
constexpr int64_t kMaxSharedMemory = int64_t(1) << 30;
/// attn-stack-tile-buffers' max-bytes: 1 MiB (libomp's worker threads get
/// 4 MiB of stack).
constexpr int64_t kMaxStackTileBytes = int64_t(1) << 20;

/// "PASS: NAME must be in [MIN, MAX]MEANING, got VALUE" at `op`'s location
/// (the op itself is not printed), or success.
inline LogicalResult checkOptionRange(Operation *op, llvm::StringRef pass,
                                      llvm::StringRef name, int64_t value,
                                      int64_t min, int64_t max,
                                      llvm::StringRef meaning = "") {
  if (value >= min && value <= max)
    return success();
  emitError(op->getLoc())
      << pass << ": " << name << " must be in [" << min << ", " << max << "]"
      << meaning << ", got " << value;
  return failure();
}

/// "OWNER: NAME must be in [0, 1], got VALUE" (VALUE as %g prints it) when
/// `value` is no fraction (NaN included), else "": the one check of a
/// density option, for passes and pipelines alike.
inline std::string fractionRangeError(llvm::StringRef owner,
                                      llvm::StringRef name, double value) {
  if (value >= 0.0 && value <= 1.0)
    return "";
  std::string text;
  llvm::raw_string_ostream(text) << owner << ": " << name
                                 << " must be in [0, 1], got "
                                 << llvm::format("%g", value);
  return text;
}

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_OPTIONBOUNDS_H
