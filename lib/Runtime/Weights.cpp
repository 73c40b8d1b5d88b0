//===- Weights.cpp - safetensors weights and IDX datasets -----------------===//

#include "lib/Runtime/Weights.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>
#include <zlib.h>

using namespace mlir::attn;
using llvm::createStringError;
using llvm::Expected;
using llvm::StringRef;

namespace {

/// IEEE half to float.
float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

float bfloatToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

struct FileDType {
  StringRef name;
  size_t bytes;
  DType target;
};

const FileDType kDTypes[] = {
    {"F32", 4, DType::f32}, {"F16", 2, DType::f32}, {"BF16", 2, DType::f32},
    {"F64", 8, DType::f32}, {"I32", 4, DType::i32}, {"I64", 8, DType::i64},
};

/// Converts `count` little-endian elements of `dtype` at `src` into `dst`.
void convert(const FileDType &dtype, const char *src, HostTensor &dst) {
  int64_t count = dst.numElements();
  if (dtype.name == "F32" || dtype.name == "I32" || dtype.name == "I64") {
    std::memcpy(dst.data(), src, dst.numBytes());
    return;
  }
  float *out = dst.as<float>();
  for (int64_t i = 0; i < count; ++i) {
    if (dtype.name == "F64") {
      double d;
      std::memcpy(&d, src + 8 * i, 8);
      out[i] = static_cast<float>(d);
    } else {
      uint16_t h = llvm::support::endian::read16le(src + 2 * i);
      out[i] = dtype.name == "F16" ? halfToFloat(h) : bfloatToFloat(h);
    }
  }
}

} // namespace

Expected<Checkpoint> mlir::attn::readSafetensors(StringRef path) {
  std::string p = path.str();
  auto bufOr = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bufOr)
    return createStringError(bufOr.getError(), "%s: cannot open: %s",
                             p.c_str(), bufOr.getError().message().c_str());
  StringRef bytes = (*bufOr)->getBuffer();
  if (bytes.size() < 8)
    return createStringError("%s: not a safetensors file (shorter than its "
                             "8-byte header length)",
                             p.c_str());
  uint64_t headerLen = llvm::support::endian::read64le(bytes.data());
  if (headerLen > bytes.size() - 8)
    return createStringError("%s: header length %llu exceeds the file size "
                             "%zu",
                             p.c_str(), (unsigned long long)headerLen,
                             bytes.size());
  StringRef headerText = bytes.substr(8, headerLen);
  StringRef data = bytes.substr(8 + headerLen);
  Expected<llvm::json::Value> header = llvm::json::parse(headerText);
  if (!header)
    return createStringError("%s: bad JSON header: %s", p.c_str(),
                             llvm::toString(header.takeError()).c_str());
  const llvm::json::Object *entries = header->getAsObject();
  if (!entries)
    return createStringError("%s: the header is not a JSON object", p.c_str());

  Checkpoint ckpt;
  ckpt.path = p;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto &kv : *entries) {
    std::string name = kv.first.str();
    if (name == "__metadata__")
      continue;
    auto bad = [&](const llvm::Twine &what) {
      return createStringError("%s: tensor '%s': %s", p.c_str(), name.c_str(),
                               what.str().c_str());
    };
    const llvm::json::Object *entry = kv.second.getAsObject();
    if (!entry)
      return bad("expected an object {dtype, shape, data_offsets}");
    std::optional<StringRef> dtypeName = entry->getString("dtype");
    const llvm::json::Array *shape = entry->getArray("shape");
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!dtypeName || !shape || !offsets || offsets->size() != 2)
      return bad("expected keys dtype (string), shape (array) and "
                 "data_offsets ([begin, end])");
    const FileDType *dtype = nullptr;
    for (const FileDType &d : kDTypes)
      if (d.name == *dtypeName)
        dtype = &d;
    if (!dtype)
      return bad("unsupported dtype '" + *dtypeName +
                 "' (expected F32, F16, BF16, F64, I32 or I64)");
    llvm::SmallVector<int64_t, 4> dims;
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> v = d.getAsInteger();
      if (!v || *v < 0)
        return bad("shape entries must be non-negative integers");
      dims.push_back(*v);
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger(),
                           end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > data.size())
      return bad("data_offsets outside the " + llvm::Twine(data.size()) +
                 "-byte data section");
    HostTensor tensor(dtype->target, dims);
    if (static_cast<uint64_t>(*end - *begin) !=
        tensor.numElements() * dtype->bytes)
      return bad("data_offsets span " + llvm::Twine(*end - *begin) +
                 " bytes, but the shape and dtype need " +
                 llvm::Twine(tensor.numElements() * dtype->bytes));
    for (auto [b, e] : ranges)
      if (static_cast<uint64_t>(*begin) < e && b < static_cast<uint64_t>(*end))
        return bad("data overlaps another tensor's");
    ranges.push_back({*begin, *end});
    convert(*dtype, data.data() + *begin, tensor);
    ckpt.names.push_back(name);
    ckpt.tensors[name] = StoredTensor{std::move(tensor), dtype->name.str()};
  }
  return ckpt;
}

bool mlir::attn::isIdxPath(StringRef path) {
  return path.ends_with("-ubyte") || path.ends_with("-ubyte.gz");
}

Expected<HostTensor> mlir::attn::readIdx(StringRef path) {
  std::string p = path.str();
  gzFile file = gzopen(p.c_str(), "rb"); // reads plain files as they are
  if (!file)
    return createStringError("%s: cannot open", p.c_str());
  std::string bytes;
  char chunk[1 << 16];
  int n;
  while ((n = gzread(file, chunk, sizeof(chunk))) > 0)
    bytes.append(chunk, n);
  bool readError = n < 0;
  gzclose(file);
  if (readError)
    return createStringError("%s: corrupt gzip data", p.c_str());
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0)
    return createStringError("%s: not an IDX file (bad magic)", p.c_str());
  if (static_cast<uint8_t>(bytes[2]) != 0x08)
    return createStringError("%s: IDX data type 0x%02x, expected 0x08 "
                             "(unsigned byte)",
                             p.c_str(), static_cast<uint8_t>(bytes[2]));
  unsigned rank = static_cast<uint8_t>(bytes[3]);
  if (rank == 0 || bytes.size() < 4 + 4 * rank)
    return createStringError("%s: truncated IDX header", p.c_str());
  llvm::SmallVector<int64_t, 4> dims;
  size_t count = 1;
  for (unsigned i = 0; i < rank; ++i) {
    dims.push_back(llvm::support::endian::read32be(bytes.data() + 4 + 4 * i));
    count *= dims.back();
  }
  size_t offset = 4 + 4 * rank;
  if (bytes.size() - offset != count)
    return createStringError("%s: IDX header declares %zu values, the file "
                             "holds %zu",
                             p.c_str(), count, bytes.size() - offset);
  HostTensor t(DType::i32, dims);
  for (size_t i = 0; i < count; ++i)
    t.as<int32_t>()[i] = static_cast<uint8_t>(bytes[offset + i]);
  return t;
}
