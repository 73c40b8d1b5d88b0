//===- Tensor.h - host tensors and .npy files -------------------*- C++ -*-===//
//
// A dense, C-order host tensor that the JIT runtime hands to compiled code as
// a memref descriptor, and the .npy reader/writer that moves tensors in and
// out of NumPy/PyTorch.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_TENSOR_H
#define ATTN_LIB_RUNTIME_TENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mlir::attn {

/// Element types. f16 (IEEE half) and bf16 (bfloat16) are stored as their
/// 16-bit patterns; getDouble/setDouble convert (round to nearest even).
enum class DType { f32, f64, i32, i64, f16, bf16 };

/// True for f32, f64, f16 and bf16.
bool isFloat(DType t);

/// Size in bytes of one element.
size_t dtypeSize(DType t);
/// "f32", "i64", ...
llvm::StringRef dtypeName(DType t);

/// A dense row-major tensor owning 64-byte-aligned storage.
class HostTensor {
public:
  HostTensor() = default;
  HostTensor(DType dtype, llvm::ArrayRef<int64_t> shape);
  /// A zeroed tensor whose shape an input chose: the byte count is checked
  /// (overflow, the memory budget of Budget.h) before anything is
  /// allocated; the error names `what` and the shape.
  static llvm::Expected<HostTensor> allocate(DType dtype,
                                             llvm::ArrayRef<int64_t> shape,
                                             const llvm::Twine &what);

  DType dtype() const { return type; }
  llvm::ArrayRef<int64_t> shape() const { return dims; }
  int64_t rank() const { return dims.size(); }
  int64_t numElements() const;
  size_t numBytes() const { return numElements() * dtypeSize(type); }

  void *data() { return storage.get(); }
  const void *data() const { return storage.get(); }
  template <typename T> T *as() { return static_cast<T *>(data()); }
  template <typename T> const T *as() const {
    return static_cast<const T *>(data());
  }

  /// Element `i` (flat index) converted to double / int64, whatever the dtype.
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);

  /// A deep copy.
  HostTensor clone() const;
  /// A copy with every element converted to `dtype` (rounded to nearest
  /// even into 16-bit floats).
  HostTensor converted(DType dtype) const;

  /// "2x8x128x64xf32".
  std::string typeString() const;

private:
  struct AlignedFree {
    void operator()(void *p) const;
  };
  DType type = DType::f32;
  llvm::SmallVector<int64_t, 4> dims;
  std::unique_ptr<void, AlignedFree> storage;
};

/// The flat index of the first element that is NaN or infinite (-inf
/// allowed when `allowNegInf`: an additive mask), if any; integers never.
std::optional<int64_t> firstNonFinite(const HostTensor &tensor,
                                      bool allowNegInf = false);

/// "nan", "inf" or "-inf" for a value that is not finite.
llvm::StringRef nonFiniteName(double v);

/// An error unless every element is finite: "WHAT: element N is nan (an
/// input must be finite)".
llvm::Error checkFinite(const HostTensor &tensor, const llvm::Twine &what);

/// Mean and largest magnitude of the finite elements, and how many are not
/// finite: the one-line summary the tools print of a result.
struct TensorSummary {
  double mean = 0, absMax = 0;
  int64_t nonFinite = 0;
};
TensorSummary summarize(const HostTensor &tensor);

/// Reads a .npy file (format v1/v2/v3, C order, little-endian f2/f4/f8/i4/i8).
llvm::Expected<HostTensor> readNpy(llvm::StringRef path);
/// Writes `tensor` as a version-1 .npy file (bf16, which NumPy lacks, as its
/// exact f32 values).
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &tensor);

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_TENSOR_H
