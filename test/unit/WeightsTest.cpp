//===- WeightsTest.cpp - safetensors and IDX readers ----------------------===//
//
// Files written byte by byte here (no PyTorch): every dtype's conversion to
// f32 against hand-computed values, and one error per malformed file.
//
//===----------------------------------------------------------------------===//

#include "lib/Runtime/Weights.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <string>
#include <zlib.h>

using namespace mlir::attn;

namespace {

class WeightsTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-weights", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(llvm::StringRef name) { return (dir + "/" + name).str(); }

  /// A safetensors file with `header` (JSON) and `data`.
  std::string safetensors(llvm::StringRef name, llvm::StringRef header,
                          llvm::StringRef data) {
    std::string bytes(8, '\0');
    uint64_t n = header.size();
    std::memcpy(bytes.data(), &n, 8);
    bytes += header.str() + data.str();
    write(name, bytes);
    return path(name);
  }
  void write(llvm::StringRef name, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec);
    os << bytes;
  }
  std::string error(llvm::StringRef file) {
    auto c = readSafetensors(file);
    return c ? "" : llvm::toString(c.takeError());
  }
  llvm::SmallString<128> dir;
};

template <typename T> std::string bytesOf(std::initializer_list<T> values) {
  std::string s;
  for (T v : values)
    s.append(reinterpret_cast<const char *>(&v), sizeof(T));
  return s;
}

TEST_F(WeightsTest, ConvertsEveryFloatDtypeToF32) {
  // F16 0x3C00 = 1, 0xC000 = -2, 0x3555 ~ 0.33325, 0x0001 = 2^-24;
  // BF16 0x3F80 = 1, 0xC0A0 = -5; F64 0.1.
  std::string data = bytesOf<float>({1.5f, -2.25f}) +
                     bytesOf<uint16_t>({0x3C00, 0xC000, 0x3555, 0x0001}) +
                     bytesOf<uint16_t>({0x3F80, 0xC0A0}) + bytesOf<double>({0.1}) +
                     bytesOf<int64_t>({-7, 9});
  std::string file = safetensors(
      "all.safetensors",
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("h":{"dtype":"F16","shape":[2,2],"data_offsets":[8,16]},)"
      R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[16,20]},)"
      R"("d":{"dtype":"F64","shape":[],"data_offsets":[20,28]},)"
      R"("i":{"dtype":"I64","shape":[2],"data_offsets":[28,44]},)"
      R"("__metadata__":{"format":"pt"}})",
      data);
  auto ckpt = readSafetensors(file);
  ASSERT_TRUE(static_cast<bool>(ckpt)) << llvm::toString(ckpt.takeError());
  EXPECT_EQ(ckpt->names.size(), 5u);
  const HostTensor &a = ckpt->tensors["a"].tensor;
  EXPECT_EQ(a.as<float>()[1], -2.25f);
  const HostTensor &h = ckpt->tensors["h"].tensor;
  EXPECT_EQ(h.dtype(), DType::f32);
  EXPECT_EQ(h.shape(), llvm::ArrayRef<int64_t>({2, 2}));
  EXPECT_EQ(h.as<float>()[0], 1.0f);
  EXPECT_EQ(h.as<float>()[1], -2.0f);
  EXPECT_NEAR(h.as<float>()[2], 0.33325f, 1e-5);
  EXPECT_EQ(h.as<float>()[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(ckpt->tensors["h"].fileDType, "F16");
  EXPECT_EQ(ckpt->tensors["b"].tensor.as<float>()[1], -5.0f);
  EXPECT_EQ(ckpt->tensors["d"].tensor.rank(), 0);
  EXPECT_EQ(ckpt->tensors["d"].tensor.as<float>()[0], 0.1f);
  EXPECT_EQ(ckpt->tensors["i"].tensor.dtype(), DType::i64);
  EXPECT_EQ(ckpt->tensors["i"].tensor.as<int64_t>()[0], -7);
}

TEST_F(WeightsTest, RejectsMalformedFiles) {
  std::string f32 = bytesOf<float>({1, 2, 3, 4});
  write("long-header", bytesOf<uint64_t>({100}) + "{}");
  EXPECT_NE(error(path("long-header"))
                .find("header length 100 exceeds the file size 10"),
            std::string::npos);
  write("tiny", "abc");
  EXPECT_NE(error(path("tiny")).find("shorter than its 8-byte header length"),
            std::string::npos);
  EXPECT_NE(error(safetensors("json", "{not json", f32)).find("bad JSON header"),
            std::string::npos);
  EXPECT_NE(error(safetensors("dtype",
                              R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})",
                              f32))
                .find("tensor 'w': unsupported dtype 'U8'"),
            std::string::npos);
  EXPECT_NE(error(safetensors("range",
                              R"({"w":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})",
                              f32))
                .find("tensor 'w': data_offsets outside the 16-byte data section"),
            std::string::npos);
  EXPECT_NE(error(safetensors("size",
                              R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})",
                              f32))
                .find("span 16 bytes, but the shape and dtype need 12"),
            std::string::npos);
  EXPECT_NE(error(safetensors("overlap",
                              R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                              f32))
                .find("tensor 'b': data overlaps another tensor's"),
            std::string::npos);
  EXPECT_NE(error(path("missing")).find("cannot open"), std::string::npos);
  // Bytes of no tensor, metadata that is not strings, offsets that are not
  // integers: each was accepted or blamed on the data section.
  EXPECT_NE(error(safetensors("trailing",
                              R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                              f32))
                .find("bytes 8.. of the 16-byte data section belong to no "
                      "tensor"),
            std::string::npos);
  EXPECT_NE(error(safetensors("gap",
                              R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                              f32))
                .find("bytes 0.. of the 16-byte data section belong to no "
                      "tensor"),
            std::string::npos);
  EXPECT_NE(error(safetensors("middle-gap",
                              R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                              f32))
                .find("bytes 4.. of the 16-byte data section belong to no "
                      "tensor"),
            std::string::npos);
  EXPECT_NE(error(safetensors("metadata",
                              R"({"__metadata__":{"format":7},)"
                              R"("w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                              f32))
                .find("__metadata__ must be an object of strings"),
            std::string::npos);
  EXPECT_NE(error(safetensors("offsets",
                              R"({"w":{"dtype":"F32","shape":[4],"data_offsets":["0","16"]}})",
                              f32))
                .find("data_offsets must be two integers"),
            std::string::npos);
  EXPECT_EQ(error(safetensors("empty-and-meta",
                              R"({"__metadata__":{"format":"pt"},)"
                              R"("e":{"dtype":"F32","shape":[0],"data_offsets":[16,16]},)"
                              R"("w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                              f32)),
            "");
}

TEST_F(WeightsTest, ReadsPlainAndGzippedIdx) {
  // 2 x 3 unsigned bytes.
  std::string idx = std::string("\0\0\x08\x02", 4) + std::string("\0\0\0\x02", 4) +
                    std::string("\0\0\0\x03", 4) + "\x01\x02\x03\xfd\xfe\xff";
  write("plain-ubyte", idx);
  gzFile gz = gzopen(path("zipped-ubyte.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzwrite(gz, idx.data(), idx.size());
  gzclose(gz);
  for (const char *name : {"plain-ubyte", "zipped-ubyte.gz"}) {
    EXPECT_TRUE(isIdxPath(name));
    auto t = readIdx(path(name));
    ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
    EXPECT_EQ(t->shape(), llvm::ArrayRef<int64_t>({2, 3}));
    EXPECT_EQ(t->as<int32_t>()[0], 1);
    EXPECT_EQ(t->as<int32_t>()[5], 255);
  }
  write("short-ubyte", idx.substr(0, idx.size() - 1));
  auto t = readIdx(path("short-ubyte"));
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_NE(llvm::toString(t.takeError()).find("declares 6 values, the file holds 5"),
            std::string::npos);
  write("float-ubyte", std::string("\0\0\x0d\x01\0\0\0\x01", 8) + "abcd");
  t = readIdx(path("float-ubyte"));
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_NE(llvm::toString(t.takeError()).find("expected 0x08 (unsigned byte)"),
            std::string::npos);
}

TEST_F(WeightsTest, SizesClaimedByTheFileAreCheckedBeforeAllocating) {
  // 2^40 floats (4 TiB) claimed by a 100-byte file, and a shape whose byte
  // count passes 2^64: errors, nothing allocated.
  std::string f32 = bytesOf<float>({1, 2});
  EXPECT_NE(error(safetensors("huge",
                              R"({"w":{"dtype":"F32","shape":[1048576,1048576],"data_offsets":[0,8]}})",
                              f32))
                .find("span 8 bytes, but the shape and dtype need 4398046511104"),
            std::string::npos);
  EXPECT_NE(error(safetensors("wraps",
                              R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
                              f32))
                .find("need more than 2^64"),
            std::string::npos);
}

TEST_F(WeightsTest, IdxReadsOnlyWhatItsHeaderDeclares) {
  // A gzip bomb: a header declaring 4 values followed by 64 MiB of zeros
  // (64 KiB compressed) is refused after reading 5 values, not inflated.
  std::string header = std::string("\0\0\x08\x01", 4) + std::string("\0\0\0\x04", 4);
  gzFile gz = gzopen(path("bomb-ubyte.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzwrite(gz, header.data(), header.size());
  std::string zeros(1 << 20, '\0');
  for (int i = 0; i < 64; ++i)
    gzwrite(gz, zeros.data(), zeros.size());
  gzclose(gz);
  auto t = readIdx(path("bomb-ubyte.gz"));
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_NE(llvm::toString(t.takeError()).find("declares 4 values, the file holds more"),
            std::string::npos);
  // Found by attn-fuzz-idx: a zero dimension makes an empty tensor, however
  // large the others (their product overflowed int64 before).
  write("empty-ubyte", std::string("\0\0\x08\x03\xfd?\xf8\xff\xff~\0\0\0\0\0\0", 16));
  t = readIdx(path("empty-ubyte"));
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->numElements(), 0);
  // 2^16 x 2^16 x 2^16 values: over the memory budget (checked before
  // reading the data).
  write("claims-ubyte", std::string("\0\0\x08\x03", 4) +
                            std::string("\0\x01\0\0\0\x01\0\0\0\x01\0\0", 12) + "x");
  t = readIdx(path("claims-ubyte"));
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_NE(llvm::toString(t.takeError()).find("IDX header's 281474976710656 values needs "),
            std::string::npos);
}

} // namespace
