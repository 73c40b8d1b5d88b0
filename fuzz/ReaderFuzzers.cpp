//===- ReaderFuzzers.cpp - libFuzzer harnesses of the file readers --------===//
//
// One harness per reader, chosen at compile time by ATTN_FUZZ_TARGET: the
// bytes libFuzzer generates are written to a file and read back through the
// reader's public entry point (the readers take paths). A reader must
// return a value or an llvm::Error, never crash, leak, read out of bounds
// (ASan), hit undefined behaviour (UBSan) or allocate what a file merely
// claims (libFuzzer's -rss_limit_mb / -malloc_limit_mb).
//
//===----------------------------------------------------------------------===//

#include "lib/Runtime/Json.h"
#include "lib/Runtime/Tensor.h"
#include "lib/Runtime/Weights.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

using namespace mlir::attn;

namespace {

/// A per-process scratch file named for what the reader expects.
const std::string &scratchPath() {
  static const std::string path = [] {
    std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
    return dir + "/attn-fuzz-" + std::to_string(getpid()) +
           (std::string(ATTN_FUZZ_TARGET) == "idx" ? "-ubyte.gz" : ".bin");
  }();
  return path;
}

bool writeScratch(const uint8_t *data, size_t size) {
  FILE *f = std::fopen(scratchPath().c_str(), "wb");
  if (!f)
    return false;
  bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

template <typename T> void consume(llvm::Expected<T> result) {
  if (!result)
    llvm::consumeError(result.takeError());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string target = ATTN_FUZZ_TARGET;
  if (target == "json") {
    consume(parseJson(llvm::StringRef(reinterpret_cast<const char *>(data),
                                      size)));
    return 0;
  }
  if (!writeScratch(data, size))
    return 0;
  if (target == "npy")
    consume(readNpy(scratchPath()));
  else if (target == "safetensors")
    consume(readSafetensors(scratchPath()));
  else if (target == "idx")
    consume(readIdx(scratchPath()));
  std::remove(scratchPath().c_str());
  return 0;
}
