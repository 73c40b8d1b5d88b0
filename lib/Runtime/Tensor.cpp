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
#include <cctype>
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

namespace {
/// The .npy header: a Python dict literal with exactly the keys 'descr' (a
/// string), 'fortran_order' (True / False) and 'shape' (a tuple of
/// non-negative integers), padded with spaces and ended by a newline, as
/// NumPy writes it and np.load accepts it. Parsed strictly: a key twice, an
/// unknown key, a malformed tuple or anything after the dict is an error
/// naming the byte.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  llvm::SmallVector<int64_t> shape;
};

class NpyHeaderParser {
public:
  NpyHeaderParser(StringRef text, StringRef path) : text(text), path(path) {}

  Expected<NpyHeader> parse() {
    NpyHeader h;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    skipSpaces();
    if (!eat('{'))
      return error("'{'");
    skipSpaces();
    while (!peek('}')) {
      std::string key;
      if (!string(key))
        return error("a quoted key ('descr', 'fortran_order', 'shape')");
      skipSpaces();
      if (!eat(':'))
        return error("':' after '" + key + "'");
      skipSpaces();
      bool *seen = key == "descr"           ? &seenDescr
                   : key == "fortran_order" ? &seenOrder
                   : key == "shape"         ? &seenShape
                                            : nullptr;
      if (!seen)
        return createStringError("%s: .npy header has an unknown key '%s' "
                                 "(expected 'descr', 'fortran_order', "
                                 "'shape')",
                                 path.str().c_str(), key.c_str());
      if (*seen)
        return createStringError("%s: .npy header has the key '%s' twice",
                                 path.str().c_str(), key.c_str());
      *seen = true;
      if (key == "descr") {
        if (!string(h.descr))
          return error("a quoted dtype after 'descr'");
      } else if (key == "fortran_order") {
        if (word("True"))
          h.fortranOrder = true;
        else if (!word("False"))
          return error("True or False after 'fortran_order'");
      } else if (llvm::Error err = tuple(h.shape)) {
        return std::move(err);
      }
      skipSpaces();
      if (eat(',')) {
        skipSpaces();
        continue;
      }
      if (!peek('}'))
        return error("',' or '}'");
    }
    ++pos; // '}'
    // NumPy pads with spaces to its alignment and ends with a newline.
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t'))
      ++pos;
    if (pos < text.size() && text[pos] == '\n')
      ++pos;
    if (pos != text.size())
      return error("the end of the header after '}'");
    for (auto [seen, key] : {std::pair{seenDescr, "descr"},
                             {seenOrder, "fortran_order"},
                             {seenShape, "shape"}})
      if (!seen)
        return createStringError("%s: .npy header has no '%s' field",
                                 path.str().c_str(), key);
    return h;
  }

private:
  Error error(const llvm::Twine &expected) {
    std::string got =
        pos < text.size()
            ? (std::isprint(static_cast<unsigned char>(text[pos]))
                   ? "'" + std::string(1, text[pos]) + "'"
                   : "byte " + std::to_string(unsigned(uint8_t(text[pos]))))
            : "the end";
    return createStringError("%s: malformed .npy header at byte %zu: "
                             "expected %s, got %s",
                             path.str().c_str(), pos,
                             expected.str().c_str(), got.c_str());
  }
  void skipSpaces() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t'))
      ++pos;
  }
  bool peek(char c) const { return pos < text.size() && text[pos] == c; }
  bool eat(char c) {
    if (!peek(c))
      return false;
    ++pos;
    return true;
  }
  bool word(StringRef w) {
    if (!text.substr(pos).starts_with(w))
      return false;
    size_t end = pos + w.size();
    if (end < text.size() &&
        (std::isalnum(static_cast<unsigned char>(text[end])) ||
         text[end] == '_'))
      return false;
    pos = end;
    return true;
  }
  /// A Python string literal in single or double quotes, without escapes
  /// (dtype strings and the three keys have none).
  bool string(std::string &out) {
    if (!peek('\'') && !peek('"'))
      return false;
    char quote = text[pos];
    size_t end = text.find(quote, pos + 1);
    if (end == StringRef::npos)
      return false;
    StringRef body = text.slice(pos + 1, end);
    if (body.contains('\\') || body.contains('\n') || body.contains('\0'))
      return false;
    out = body.str();
    pos = end + 1;
    return true;
  }
  /// `()`, `(n,)`, `(a, b)`, `(a, b,)`: non-negative decimal integers.
  Error tuple(llvm::SmallVectorImpl<int64_t> &dims) {
    if (!eat('('))
      return error("a tuple '(...)' after 'shape'");
    skipSpaces();
    bool trailingComma = false;
    while (!peek(')')) {
      trailingComma = false;
      size_t start = pos;
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
      StringRef digits = text.slice(start, pos);
      int64_t d;
      if (digits.empty())
        return error("a non-negative dimension in 'shape'");
      if ((digits.size() > 1 && digits[0] == '0') ||
          digits.getAsInteger(10, d))
        return createStringError("%s: bad dimension '%s' in .npy shape",
                                 path.str().c_str(), digits.str().c_str());
      dims.push_back(d);
      skipSpaces();
      if (eat(',')) {
        trailingComma = true;
        skipSpaces();
        continue;
      }
      if (!peek(')'))
        return error("',' or ')' in 'shape'");
    }
    // Python needs the comma of a one-element tuple: (4) is an int.
    if (dims.size() == 1 && !trailingComma)
      return error("',' after the one dimension of 'shape' ((n,) is a "
                   "tuple, (n) a number)");
    ++pos; // ')'
    return Error::success();
  }

  StringRef text, path;
  size_t pos = 0;
};
} // namespace

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

  Expected<NpyHeader> parsed = NpyHeaderParser(header, path).parse();
  if (!parsed)
    return parsed.takeError();
  StringRef descr = parsed->descr;
  DType dtype;
  if (descr == "<f4" || descr == "float32")
    dtype = DType::f32;
  else if (descr == "<f2")
    dtype = DType::f16;
  else if (descr == "<f8")
    dtype = DType::f64;
  else if (descr == "<i4")
    dtype = DType::i32;
  else if (descr == "<i8")
    dtype = DType::i64;
  else
    return createStringError("%s: unsupported dtype '%s' (expected <f2, <f4, "
                             "<f8, <i4 or <i8)",
                             p.c_str(), parsed->descr.c_str());
  if (parsed->fortranOrder)
    return createStringError("%s: Fortran-order arrays are not supported",
                             p.c_str());
  llvm::SmallVector<int64_t> shape = parsed->shape;

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
  if (os.has_error()) {
    // Cleared, or the stream's destructor reports it again as a fatal error.
    std::error_code failure = os.error();
    os.clear_error();
    return createStringError(failure, "%s: cannot write: %s",
                             path.str().c_str(), failure.message().c_str());
  }
  return Error::success();
}
