//===- TensorTest.cpp - host tensors and the .npy reader/writer -----------===//

#include "lib/Runtime/Budget.h"
#include "lib/Runtime/Tensor.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mlir::attn;

namespace {

/// A path in a fresh temporary directory, removed with the fixture.
class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-npy", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(llvm::StringRef name) { return (dir + "/" + name).str(); }
  void writeRaw(llvm::StringRef name, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec);
    os << bytes;
  }
  /// The error message of reading `name`, or "" if it read.
  std::string readError(llvm::StringRef name) {
    auto t = readNpy(path(name));
    return t ? "" : llvm::toString(t.takeError());
  }
  llvm::SmallString<128> dir;
};

TEST_F(NpyTest, RoundTripsEveryDtypeAndRank) {
  for (DType dtype :
       {DType::f32, DType::f64, DType::i32, DType::i64, DType::f16}) {
    for (const std::vector<int64_t> &shape :
         std::vector<std::vector<int64_t>>{{}, {5}, {2, 3, 4}}) {
      HostTensor t(dtype, shape);
      for (int64_t i = 0; i < t.numElements(); ++i)
        t.setDouble(i, double(i) - 3.0);
      ASSERT_FALSE(writeNpy(path("t.npy"), t));
      auto back = readNpy(path("t.npy"));
      ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
      EXPECT_EQ(back->dtype(), dtype);
      EXPECT_EQ(back->shape(), llvm::ArrayRef<int64_t>(shape));
      for (int64_t i = 0; i < t.numElements(); ++i)
        EXPECT_EQ(back->getDouble(i), double(i) - 3.0);
    }
  }
}

TEST_F(NpyTest, ReadsVersion2Headers) {
  std::string header =
      "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
  header.append(64 - (12 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string file("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i)
    file += char((header.size() >> (8 * i)) & 0xff);
  file += header;
  int64_t data[2] = {7, -9};
  file.append(reinterpret_cast<const char *>(data), sizeof(data));
  writeRaw("v2.npy", file);
  auto t = readNpy(path("v2.npy"));
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->getInt(0), 7);
  EXPECT_EQ(t->getInt(1), -9);
}

TEST_F(NpyTest, RejectsMalformedFilesWithOneClearMessage) {
  EXPECT_NE(readError("missing.npy").find("cannot open"), std::string::npos);

  writeRaw("magic.npy", "PK\x03\x04 not numpy at all");
  EXPECT_NE(readError("magic.npy").find("not a .npy file"), std::string::npos);

  auto withHeader = [](llvm::StringRef dict) {
    std::string header = dict.str() + "\n";
    std::string file("\x93NUMPY\x01\x00", 8);
    file += char(header.size() & 0xff);
    file += char(header.size() >> 8);
    return file + header;
  };
  writeRaw(
      "fortran.npy",
      withHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }") +
          std::string(4, '\0'));
  EXPECT_NE(readError("fortran.npy").find("Fortran-order"), std::string::npos);

  writeRaw(
      "complex.npy",
      withHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"));
  EXPECT_NE(readError("complex.npy").find("unsupported dtype '<c8'"),
            std::string::npos);

  writeRaw(
      "short.npy",
      withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }") +
          std::string(4, '\0'));
  EXPECT_NE(readError("short.npy")
                .find("expected 12 data bytes for shape 3xf32, found 4"),
            std::string::npos);

  writeRaw("huge.npy",
           withHeader("{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (100000000000, 100000000000, 10), }"));
  EXPECT_NE(readError("huge.npy").find("expected more data bytes"),
            std::string::npos);

  writeRaw("noshape.npy",
           withHeader("{'descr': '<f4', 'fortran_order': False, }"));
  EXPECT_NE(readError("noshape.npy").find("no 'shape' field"),
            std::string::npos);

  writeRaw("badshape.npy",
           withHeader(
               "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }"));
  EXPECT_NE(readError("badshape.npy")
                .find("expected a non-negative dimension in 'shape', got 'x'"),
            std::string::npos);

  // The header is a dict with exactly NumPy's three keys, parsed strictly:
  // a 'shape' inside another key's string is no shape, a key twice, an
  // unknown key, a malformed tuple or bytes after the dict are errors (the
  // first two were read as shape 1x1x4x4 and as the first of the twins).
  const std::pair<const char *, const char *> strict[] = {
      {"{'comment': \"'shape': (1, 1, 4, 4)\", 'descr': '<f4', "
       "'fortran_order': False, 'shape': (16,)}",
       "unknown key 'comment'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (16,), "
       "'shape': (4,)}",
       "the key 'shape' twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 4, 4}",
       "expected ',' or ')' in 'shape', got '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,, 16)}",
       "expected a non-negative dimension in 'shape', got ','"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (16)}",
       "(n,) is a tuple, (n) a number"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (016,)}",
       "bad dimension '016'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (16,)} junk",
       "expected the end of the header after '}', got 'j'"},
      {"{'descr': '<f4', 'fortran_order': Nope, 'shape': (16,)}",
       "expected True or False after 'fortran_order'"},
  };
  for (auto [header, message] : strict) {
    writeRaw("strict.npy", withHeader(header) + std::string(64, '\0'));
    EXPECT_NE(readError("strict.npy").find(message), std::string::npos)
        << header << " -> " << readError("strict.npy");
  }
  // Double quotes are Python's too (np.load reads them).
  writeRaw("double.npy",
           withHeader("{\"descr\": \"<f4\", \"fortran_order\": False, "
                      "\"shape\": (2,)}") +
               std::string(8, '\0'));
  auto quoted = readNpy(path("double.npy"));
  ASSERT_TRUE(bool(quoted)) << llvm::toString(quoted.takeError());
  EXPECT_EQ(quoted->numElements(), 2);

  writeRaw("truncated.npy",
           std::string("\x93NUMPY\x01\x00\x40\x00{'descr'", 17));
  EXPECT_NE(readError("truncated.npy").find("truncated .npy header"),
            std::string::npos);
}

// 16-bit floats: stored as bit patterns, converted with round to nearest
// even; the patterns are the IEEE / bfloat16 encodings worked out by hand.
TEST(HalfTest, StoresRoundedBitPatterns) {
  HostTensor h(DType::f16, {4}), b(DType::bf16, {4});
  const double values[4] = {1.0, 65504.0, 1.0 + 0x1p-11, -2.5};
  for (int i = 0; i < 4; ++i) {
    h.setDouble(i, values[i]);
    b.setDouble(i, values[i]);
  }
  const uint16_t *hb = h.as<uint16_t>(), *bb = b.as<uint16_t>();
  EXPECT_EQ(hb[0], 0x3C00);
  EXPECT_EQ(hb[1], 0x7BFF); // the largest finite half
  EXPECT_EQ(hb[2], 0x3C00); // halfway between 1 and 1 + 2^-10: even
  EXPECT_EQ(hb[3], 0xC100);
  EXPECT_EQ(bb[0], 0x3F80);
  EXPECT_EQ(bb[1], 0x4780); // 65504 rounds up to 2^16 in bf16
  EXPECT_EQ(bb[2], 0x3F80);
  EXPECT_EQ(bb[3], 0xC020);
  EXPECT_EQ(h.getDouble(3), -2.5);
  EXPECT_EQ(b.getDouble(1), 65536.0);
  EXPECT_EQ(dtypeSize(DType::bf16), 2u);
}

// NumPy has no bfloat16: a bf16 tensor is written with its exact f32 values.
TEST_F(NpyTest, WritesBf16AsExactF32) {
  HostTensor b(DType::bf16, {3});
  b.setDouble(0, 1.0 / 3.0);
  b.setDouble(1, -7.0);
  b.setDouble(2, 1e30);
  ASSERT_FALSE(writeNpy(path("b.npy"), b));
  auto back = readNpy(path("b.npy"));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->dtype(), DType::f32);
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(back->getDouble(i), b.getDouble(i));
}

TEST(BudgetTest, SizesParseAndClaimsAreChecked) {
  auto size = [](const char *text) -> uint64_t {
    llvm::Expected<uint64_t> v = parseByteSize(text);
    if (!v) {
      llvm::consumeError(v.takeError());
      return 0;
    }
    return *v;
  };
  EXPECT_EQ(size("123"), 123u);
  EXPECT_EQ(size("64K"), 64u << 10);
  EXPECT_EQ(size("512M"), 512u << 20);
  EXPECT_EQ(size("8GiB"), uint64_t(8) << 30);
  EXPECT_EQ(size("1.5g"), uint64_t(3) << 29);
  EXPECT_EQ(size("2T"), uint64_t(2) << 40);
  for (const char *bad : {"", "0", "-1", "12Q", "G", "nan", "1e400"})
    EXPECT_EQ(size(bad), 0u) << bad;
  EXPECT_EQ(formatBytes(300), "300 bytes");
  EXPECT_EQ(formatBytes(3u << 29), "1.5 GiB");

  setMemoryBudget(1 << 20);
  llvm::scope_exit restore([] { setMemoryBudget(0); });
  llvm::Expected<HostTensor> fits =
      HostTensor::allocate(DType::f32, {256, 1024}, "t");
  EXPECT_TRUE(static_cast<bool>(fits)) << llvm::toString(fits.takeError());
  llvm::Expected<HostTensor> over =
      HostTensor::allocate(DType::f32, {257, 1024}, "t");
  ASSERT_FALSE(static_cast<bool>(over));
  EXPECT_EQ(llvm::toString(over.takeError()),
            "t (shape [257, 1024]) needs 1.0 MiB (1052672 bytes), more than "
            "the memory budget of 1.0 MiB (1048576 bytes; --memory-budget or "
            "ATTN_MEMORY_BUDGET sets it)");
  // A product past 2^64 is refused as such, not wrapped.
  llvm::Expected<HostTensor> wraps =
      HostTensor::allocate(DType::f32, {int64_t(1) << 62, 1}, "w");
  ASSERT_FALSE(static_cast<bool>(wraps));
  EXPECT_EQ(llvm::toString(wraps.takeError()),
            "w (shape [4611686018427387904, 1]): more than 2^64 bytes");
  // Empty tensors need nothing, whatever the other dimensions claim.
  llvm::Expected<HostTensor> empty =
      HostTensor::allocate(DType::f32, {int64_t(1) << 62, 0}, "e");
  EXPECT_TRUE(static_cast<bool>(empty)) << llvm::toString(empty.takeError());
  setMemoryBudget(0);
  EXPECT_GE(memoryBudget(), uint64_t(64) << 20);
}

} // namespace

