//===- Weights.cpp - safetensors weights and IDX datasets -----------------===//

#include "lib/Runtime/Weights.h"
#include "lib/Runtime/Budget.h"
#include "lib/Runtime/Json.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/ScopeExit.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

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
  auto bufOr = readInputFile(path, /*isText=*/false);
  if (!bufOr)
    return bufOr.takeError();
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
  Expected<llvm::json::Value> header = parseJson(headerText);
  if (!header)
    return createStringError("%s: bad JSON header: %s", p.c_str(),
                             llvm::toString(header.takeError()).c_str());
  const llvm::json::Object *entries = header->getAsObject();
  if (!entries)
    return createStringError("%s: the header is not a JSON object", p.c_str());

  Checkpoint ckpt;
  ckpt.path = p;
  // Each tensor's byte range and its index in ckpt.names.
  std::vector<std::tuple<uint64_t, uint64_t, size_t>> ranges;
  // What the converted tensors hold in memory (16-bit floats become f32):
  // their sum must fit the memory budget.
  uint64_t heldBytes = 0;
  for (const auto &kv : *entries) {
    std::string name = kv.first.str();
    if (name == "__metadata__") {
      // The format's metadata: an object of strings.
      const llvm::json::Object *meta = kv.second.getAsObject();
      bool strings = meta != nullptr;
      if (meta)
        for (const auto &m : *meta)
          strings &= m.second.getAsString().has_value();
      if (!strings)
        return createStringError("%s: __metadata__ must be an object of "
                                 "strings",
                                 p.c_str());
      continue;
    }
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
    if (!begin || !end)
      return bad("data_offsets must be two integers [begin, end]");
    if (*begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > data.size())
      return bad("data_offsets outside the " + llvm::Twine(data.size()) +
                 "-byte data section");
    // The bytes the shape claims, checked against the span (and so against
    // the file) before anything is allocated; a product past 2^64 is
    // certainly more than the file holds.
    uint64_t need = dtype->bytes;
    bool overflow = false;
    for (int64_t d : dims)
      overflow |= __builtin_mul_overflow(need, uint64_t(d), &need);
    if (llvm::is_contained(dims, 0)) // no element, whatever the others claim
      need = 0, overflow = false;
    if (overflow || static_cast<uint64_t>(*end - *begin) != need)
      return bad("data_offsets span " + llvm::Twine(*end - *begin) +
                 " bytes, but the shape and dtype need " +
                 (overflow ? llvm::Twine("more than 2^64")
                           : llvm::Twine(need)));
    uint64_t held = need / dtype->bytes * dtypeSize(dtype->target);
    heldBytes += held;
    if (llvm::Error err = checkBudget(
            heldBytes, p + ": its tensors up to '" + name + "'"))
      return std::move(err);
    HostTensor tensor(dtype->target, dims);
    ranges.push_back({*begin, *end, ckpt.names.size()});
    convert(*dtype, data.data() + *begin, tensor);
    ckpt.names.push_back(name);
    ckpt.tensors[name] = StoredTensor{std::move(tensor), dtype->name.str()};
  }
  // The tensors neither overlap nor leave bytes of the data section to no
  // tensor, as the format requires (bytes of no tensor were accepted
  // silently); one sweep over the ranges by offset.
  llvm::sort(ranges);
  uint64_t covered = 0;
  std::optional<uint64_t> unclaimed; // the first byte of no tensor
  for (auto [b, e, index] : ranges) {
    if (b == e)
      continue; // an empty tensor holds no bytes
    if (b < covered)
      return createStringError("%s: tensor '%s': data overlaps another "
                               "tensor's",
                               p.c_str(), ckpt.names[index].c_str());
    if (b > covered && !unclaimed)
      unclaimed = covered;
    covered = e;
  }
  if (!unclaimed && covered != data.size())
    unclaimed = covered;
  if (unclaimed)
    return createStringError(
        "%s: bytes %llu.. of the %zu-byte data section belong to no tensor "
        "(safetensors requires the tensors to cover it without gaps)",
        p.c_str(), (unsigned long long)*unclaimed, data.size());
  return ckpt;
}

bool mlir::attn::isIdxPath(StringRef path) {
  return path.ends_with("-ubyte") || path.ends_with("-ubyte.gz");
}

Expected<Checkpoint> mlir::attn::readCheckpoint(StringRef path) {
  if (!path.ends_with(".index.json"))
    return readSafetensors(path);
  std::string p = path.str();
  auto bufOr = readInputFile(path, /*isText=*/true);
  if (!bufOr)
    return bufOr.takeError();
  Expected<llvm::json::Value> index = parseJson((*bufOr)->getBuffer());
  if (!index)
    return createStringError("%s: bad JSON: %s", p.c_str(),
                             llvm::toString(index.takeError()).c_str());
  const llvm::json::Object *root = index->getAsObject();
  const llvm::json::Object *map = root ? root->getObject("weight_map") : nullptr;
  if (!map)
    return createStringError("%s: expected a JSON object with an object "
                             "\"weight_map\" (tensor name: shard file)",
                             p.c_str());
  // Each shard once, with the tensors the index puts in it.
  std::vector<std::string> shards;
  llvm::StringMap<std::vector<std::string>> wanted;
  for (const auto &kv : *map) {
    std::optional<StringRef> file = kv.second.getAsString();
    if (!file || file->empty() || *file == "." || *file == ".." ||
        file->find_first_of("/\\") != StringRef::npos)
      return createStringError("%s: weight_map: tensor '%s': expected the "
                               "file name of a shard in the index's "
                               "directory",
                               p.c_str(), kv.first.str().c_str());
    auto [it, fresh] = wanted.try_emplace(*file);
    if (fresh)
      shards.push_back(file->str());
    it->second.push_back(kv.first.str());
  }
  Checkpoint merged;
  merged.path = p;
  uint64_t total = 0;
  StringRef dir = llvm::sys::path::parent_path(path);
  for (const std::string &shard : shards) {
    llvm::SmallString<256> shardPath(dir);
    llvm::sys::path::append(shardPath, shard);
    Expected<Checkpoint> part = readSafetensors(shardPath);
    if (!part)
      return createStringError("%s: shard %s: %s", p.c_str(), shard.c_str(),
                               llvm::toString(part.takeError()).c_str());
    for (const std::string &name : wanted[shard])
      if (!part->tensors.count(name))
        return createStringError("%s: weight_map puts tensor '%s' in %s, "
                                 "which does not hold it",
                                 p.c_str(), name.c_str(), shard.c_str());
    llvm::StringSet<> listed;
    for (const std::string &name : wanted[shard])
      listed.insert(name);
    for (const std::string &name : part->names) {
      // Every tensor of a shard is in the index, at that shard (the index
      // is what transformers reads; a tensor it omits would be ignored).
      if (!listed.contains(name))
        return createStringError(
            "%s: shard %s holds tensor '%s', which weight_map %s", p.c_str(),
            shard.c_str(), name.c_str(),
            map->get(name) ? "puts in another shard" : "does not list");
      StoredTensor &t = part->tensors[name];
      total += t.tensor.numBytes();
      if (!merged.tensors.try_emplace(name, std::move(t)).second)
        return createStringError("%s: tensor '%s' is in two shards (the "
                                 "second: %s)",
                                 p.c_str(), name.c_str(), shard.c_str());
      merged.names.push_back(name);
    }
    // The shards together, as they are held.
    if (llvm::Error err = checkBudget(total, p + ": the tensors of its shards"))
      return std::move(err);
  }
  return merged;
}

Expected<HostTensor> mlir::attn::readIdx(StringRef path) {
  std::string p = path.str();
  gzFile file = gzopen(p.c_str(), "rb"); // reads plain files as they are
  if (!file)
    return createStringError("%s: cannot open", p.c_str());
  llvm::scope_exit closeFile([&] { gzclose(file); });
  // Exactly `n` more bytes into `out`, or fewer at the end of the data.
  auto readUpTo = [&](std::string &out, size_t n) -> bool {
    char chunk[1 << 16];
    while (n > 0) {
      int got = gzread(file, chunk, static_cast<unsigned>(
                                        std::min<size_t>(n, sizeof(chunk))));
      if (got < 0)
        return false;
      if (got == 0)
        break;
      out.append(chunk, got);
      n -= got;
    }
    return true;
  };
  // The header first: its sizes decide how much is read, never the
  // decompressed size of whatever the file holds (a gzip bomb).
  std::string bytes;
  if (!readUpTo(bytes, 4))
    return createStringError("%s: corrupt gzip data", p.c_str());
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0)
    return createStringError("%s: not an IDX file (bad magic)", p.c_str());
  if (static_cast<uint8_t>(bytes[2]) != 0x08)
    return createStringError("%s: IDX data type 0x%02x, expected 0x08 "
                             "(unsigned byte)",
                             p.c_str(), static_cast<uint8_t>(bytes[2]));
  unsigned rank = static_cast<uint8_t>(bytes[3]);
  if (rank == 0 || !readUpTo(bytes, 4 * rank) || bytes.size() < 4 + 4 * rank)
    return createStringError("%s: truncated IDX header", p.c_str());
  llvm::SmallVector<int64_t, 4> dims;
  uint64_t count = 1;
  bool overflow = false;
  for (unsigned i = 0; i < rank; ++i) {
    dims.push_back(llvm::support::endian::read32be(bytes.data() + 4 + 4 * i));
    overflow |= __builtin_mul_overflow(count, uint64_t(dims.back()), &count);
  }
  // Read as bytes, held as i32: 5 bytes per value within the budget,
  // checked before anything is read (the data must be there too; a caller
  // converting the values checks its copy).
  if (overflow || count > UINT64_MAX / 5)
    return createStringError("%s: IDX header declares over 2^64 values",
                             p.c_str());
  if (llvm::Error err = checkBudget(
          count * 5, p + ": IDX header's " + std::to_string(count) + " values"))
    return std::move(err);
  size_t offset = 4 + 4 * rank;
  // One byte past the declared values tells a file that holds more.
  if (!readUpTo(bytes, count + 1))
    return createStringError("%s: corrupt gzip data", p.c_str());
  if (bytes.size() - offset != count)
    return createStringError("%s: IDX header declares %llu values, the file "
                             "holds %s",
                             p.c_str(), static_cast<unsigned long long>(count),
                             bytes.size() - offset > count
                                 ? "more"
                                 : std::to_string(bytes.size() - offset).c_str());
  HostTensor t(DType::i32, dims);
  for (size_t i = 0; i < count; ++i)
    t.as<int32_t>()[i] = static_cast<uint8_t>(bytes[offset + i]);
  return t;
}
