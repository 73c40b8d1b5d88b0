//===- Tensor.cpp - host tensors and .npy files ---------------------------===//

#include "lib/Runtime/Tensor.h"
#include "lib/Runtime/Budget.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace mlir::attn;
using llvm::createStringError;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

size_t mlir::attn::dtypeSize(DType t) {
  switch (t) {
  case DType::f16:
  case DType::bf16:
    return 2;
  case DType::f32:
  case DType::i32:
    return 4;
  case DType::f64:
  case DType::i64:
    return 8;
  }
  llvm_unreachable("unknown dtype");
}

bool mlir::attn::isFloat(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::f16 ||
         t == DType::bf16;
}

/// The 16-bit float semantics of f16 / bf16.
static const llvm::fltSemantics &halfSemantics(DType t) {
  return t == DType::f16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat();
}

static double halfBitsToDouble(DType t, uint16_t bits) {
  llvm::APFloat v(halfSemantics(t), llvm::APInt(16, bits));
  bool lost;
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return v.convertToDouble();
}

static uint16_t doubleToHalfBits(DType t, double d) {
  llvm::APFloat v(d);
  bool lost;
  v.convert(halfSemantics(t), llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
}

StringRef mlir::attn::dtypeName(DType t) {
  switch (t) {
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::f32:
    return "f32";
  case DType::f64:
    return "f64";
  case DType::i32:
    return "i32";
  case DType::i64:
    return "i64";
  }
  llvm_unreachable("unknown dtype");
}

std::optional<int64_t> mlir::attn::firstNonFinite(const HostTensor &t,
                                                  bool allowNegInf) {
  if (!isFloat(t.dtype()))
    return std::nullopt;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = t.getDouble(i);
    if (!std::isfinite(v) && !(allowNegInf && v < 0 && std::isinf(v)))
      return i;
  }
  return std::nullopt;
}

StringRef mlir::attn::nonFiniteName(double v) {
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

llvm::Error mlir::attn::checkFinite(const HostTensor &t,
                                    const llvm::Twine &what) {
  std::optional<int64_t> bad = firstNonFinite(t);
  if (!bad)
    return llvm::Error::success();
  return llvm::createStringError(
      std::errc::invalid_argument,
      "%s: element %lld is %s (an input must be finite)", what.str().c_str(),
      static_cast<long long>(*bad),
      nonFiniteName(t.getDouble(*bad)).str().c_str());
}

TensorSummary mlir::attn::summarize(const HostTensor &t) {
  TensorSummary summary;
  double sum = 0;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = t.getDouble(i);
    if (!std::isfinite(v)) {
      ++summary.nonFinite;
      continue;
    }
    sum += v;
    summary.absMax = std::max(summary.absMax, std::fabs(v));
  }
  int64_t finite = t.numElements() - summary.nonFinite;
  summary.mean = finite ? sum / static_cast<double>(finite) : 0.0;
  return summary;
}

void HostTensor::AlignedFree::operator()(void *p) const { std::free(p); }

HostTensor::HostTensor(DType dtype, llvm::ArrayRef<int64_t> shape)
    : type(dtype), dims(shape.begin(), shape.end()) {
  size_t bytes = (numBytes() + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, bytes ? bytes : 64);
  if (!p)
    llvm::report_bad_alloc_error("out of memory allocating a host tensor");
  std::memset(p, 0, bytes ? bytes : 64);
  storage.reset(p);
}

llvm::Expected<HostTensor> HostTensor::allocate(DType dtype,
                                                llvm::ArrayRef<int64_t> shape,
                                                const llvm::Twine &what) {
  if (llvm::Error err =
          checkedTensorBytes(shape, dtypeSize(dtype),
                             what + " (shape " + shapeString(shape) + ")")
              .takeError())
    return std::move(err);
  return HostTensor(dtype, shape);
}

int64_t HostTensor::numElements() const {
  // A zero dimension makes the tensor empty whatever the others are (a
  // reader may accept [2^32, 2^32, 0]); the product of the others is
  // checked: a shape past 2^63 elements is no tensor this process can hold,
  // and the readers refuse such shapes before constructing one.
  if (llvm::is_contained(dims, 0))
    return 0;
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n))
      llvm::report_fatal_error("host tensor shape with more than 2^63 "
                               "elements");
  return n;
}

double HostTensor::getDouble(int64_t i) const {
  switch (type) {
  case DType::f16:
  case DType::bf16:
    return halfBitsToDouble(type, as<uint16_t>()[i]);
  case DType::f32:
    return as<float>()[i];
  case DType::f64:
    return as<double>()[i];
  case DType::i32:
    return as<int32_t>()[i];
  case DType::i64:
    return static_cast<double>(as<int64_t>()[i]);
  }
  llvm_unreachable("unknown dtype");
}

int64_t HostTensor::getInt(int64_t i) const {
  switch (type) {
  case DType::i32:
    return as<int32_t>()[i];
  case DType::i64:
    return as<int64_t>()[i];
  default:
    return static_cast<int64_t>(getDouble(i));
  }
}

void HostTensor::setDouble(int64_t i, double v) {
  switch (type) {
  case DType::f16:
  case DType::bf16:
    as<uint16_t>()[i] = doubleToHalfBits(type, v);
    return;
  case DType::f32:
    as<float>()[i] = static_cast<float>(v);
    return;
  case DType::f64:
    as<double>()[i] = v;
    return;
  case DType::i32:
  case DType::i64:
    setInt(i, static_cast<int64_t>(v));
    return;
  }
}

void HostTensor::setInt(int64_t i, int64_t v) {
  switch (type) {
  case DType::i32:
    as<int32_t>()[i] = static_cast<int32_t>(v);
    return;
  case DType::i64:
    as<int64_t>()[i] = v;
    return;
  default:
    setDouble(i, static_cast<double>(v));
  }
}

HostTensor HostTensor::clone() const {
  HostTensor copy(type, dims);
  std::memcpy(copy.data(), data(), numBytes());
  return copy;
}

HostTensor HostTensor::converted(DType dtype) const {
  HostTensor copy(dtype, dims);
  for (int64_t i = 0; i < numElements(); ++i)
    copy.setDouble(i, getDouble(i));
  return copy;
}

std::string HostTensor::typeString() const {
  std::string s;
  for (int64_t d : dims)
    s += std::to_string(d) + "x";
  return s + dtypeName(type).str();
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

static const char kMagic[] = "\x93NUMPY";

static StringRef npyDescr(DType t) {
  switch (t) {
  case DType::f16:
    return "<f2";
  case DType::bf16: // written as f32 (writeNpy)
  case DType::f32:
    return "<f4";
  case DType::f64:
    return "<f8";
  case DType::i32:
    return "<i4";
  case DType::i64:
    return "<i8";
  }
  llvm_unreachable("unknown dtype");
}

/// Extracts the value of `'key':` from a .npy header dict.
static Expected<StringRef> headerField(StringRef header, StringRef key,
                                       StringRef path) {
  size_t pos = header.find(("'" + key + "'").str());
  if (pos == StringRef::npos)
    return createStringError("%s: .npy header has no '%s' field",
                             path.str().c_str(), key.str().c_str());
  StringRef rest = header.drop_front(pos + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return createStringError("%s: malformed .npy header near '%s'",
                             path.str().c_str(), key.str().c_str());
  return rest.ltrim();
}

Expected<HostTensor> mlir::attn::readNpy(StringRef path) {
  auto bufOr = readInputFile(path, /*isText=*/false);
  if (!bufOr)
    return bufOr.takeError();
  StringRef data = (*bufOr)->getBuffer();
  std::string p = path.str();
  if (data.size() < 10 || !data.starts_with(StringRef(kMagic, 6)))
    return createStringError("%s: not a .npy file (bad magic)", p.c_str());
  uint8_t major = data[6];
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = uint8_t(data[8]) | (size_t(uint8_t(data[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12)
      return createStringError("%s: truncated .npy header", p.c_str());
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= size_t(uint8_t(data[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return createStringError("%s: unsupported .npy version %d", p.c_str(),
                             major);
  }
  if (data.size() < offset + headerLen)
    return createStringError("%s: truncated .npy header", p.c_str());
  StringRef header = data.substr(offset, headerLen);

  auto descr = headerField(header, "descr", path);
  if (!descr)
    return descr.takeError();
  DType dtype;
  if (descr->starts_with("'<f4'") || descr->starts_with("'float32'"))
    dtype = DType::f32;
  else if (descr->starts_with("'<f2'"))
    dtype = DType::f16;
  else if (descr->starts_with("'<f8'"))
    dtype = DType::f64;
  else if (descr->starts_with("'<i4'"))
    dtype = DType::i32;
  else if (descr->starts_with("'<i8'"))
    dtype = DType::i64;
  else
    return createStringError(
        "%s: unsupported dtype %s (expected <f2, <f4, <f8, <i4 "
        "or <i8)",
        p.c_str(),
        descr->take_until([](char c) { return c == ','; }).str().c_str());

  auto order = headerField(header, "fortran_order", path);
  if (!order)
    return order.takeError();
  if (!order->starts_with("False"))
    return createStringError("%s: Fortran-order arrays are not supported",
                             p.c_str());

  auto shapeField = headerField(header, "shape", path);
  if (!shapeField)
    return shapeField.takeError();
  StringRef shapeStr = *shapeField;
  if (!shapeStr.consume_front("("))
    return createStringError("%s: malformed shape in .npy header", p.c_str());
  shapeStr = shapeStr.take_until([](char c) { return c == ')'; });
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<StringRef> parts;
  shapeStr.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t d;
    if (part.getAsInteger(10, d) || d < 0)
      return createStringError("%s: bad dimension '%s' in .npy shape",
                               p.c_str(), part.str().c_str());
    shape.push_back(d);
  }

  // Check the size against the file before allocating anything.
  size_t dataOffset = offset + headerLen, available = data.size() - dataOffset;
  uint64_t bytes = dtypeSize(dtype);
  std::string shapeText;
  for (int64_t d : shape) {
    shapeText += std::to_string(d) + "x";
    if (bytes != UINT64_MAX &&
        __builtin_mul_overflow(bytes, uint64_t(d), &bytes))
      bytes = UINT64_MAX; // Overflowed: certainly more than the file holds.
  }
  shapeText += dtypeName(dtype).str();
  if (bytes != available)
    return createStringError(
        "%s: expected %s data bytes for shape %s, found %zu", p.c_str(),
        bytes == UINT64_MAX ? "more" : std::to_string(bytes).c_str(),
        shapeText.c_str(), available);
  // Its bytes are the file's (readInputFile checked those).
  HostTensor t(dtype, shape);
  std::memcpy(t.data(), data.data() + dataOffset, t.numBytes());
  return t;
}

Error mlir::attn::writeNpy(StringRef path, const HostTensor &source) {
  // NumPy has no bfloat16: its values are written exactly as f32.
  HostTensor widened;
  if (source.dtype() == DType::bf16)
    widened = source.converted(DType::f32);
  const HostTensor &tensor = source.dtype() == DType::bf16 ? widened : source;
  // NumPy's tuple syntax: "()", "(n,)", "(a, b)".
  std::string shape = "(";
  llvm::ListSeparator sep(", ");
  for (int64_t d : tensor.shape())
    shape += std::string(StringRef(sep)) + std::to_string(d);
  shape += tensor.rank() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + npyDescr(tensor.dtype()).str() +
                       "', 'fortran_order': False, 'shape': " + shape;
  header += ", }";
  // Pad so that magic + version + length + header is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return createStringError(ec, "%s: cannot write: %s", path.str().c_str(),
                             ec.message().c_str());
  os.write(kMagic, 6);
  os << char(1) << char(0) << char(header.size() & 0xff)
     << char((header.size() >> 8) & 0xff) << header;
  os.write(static_cast<const char *>(tensor.data()), tensor.numBytes());
  os.close();
  if (os.has_error())
    return createStringError(os.error(), "%s: write failed",
                             path.str().c_str());
  return Error::success();
}
