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

#include "lib/Runtime/Budget.h"
#include "lib/Runtime/Json.h"
#include "lib/Runtime/Tensor.h"
#include "lib/Runtime/Weights.h"

#include "llvm/Support/Error.h"

#ifdef ATTN_FUZZ_GRAPH
#include "lib/Graph/Graph.h"
#endif

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

using namespace mlir::attn;

namespace {

/// A per-process scratch file named for what the reader expects (`suffix`).
std::string scratchPath(const char *suffix = nullptr) {
  std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  std::string target = ATTN_FUZZ_TARGET;
  return dir + "/attn-fuzz-" + std::to_string(getpid()) +
         (suffix ? suffix : target == "idx" ? "-ubyte.gz" : ".bin");
}

bool writeScratch(const uint8_t *data, size_t size,
                  const std::string &path = scratchPath()) {
  FILE *f = std::fopen(path.c_str(), "wb");
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

/// The budget the readers check claims against: small, so that what a file
/// claims is refused long before libFuzzer's -malloc_limit_mb.
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setMemoryBudget(64 << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string target = ATTN_FUZZ_TARGET;
#ifdef ATTN_FUZZ_GRAPH
  if (target == "graph") {
    // The first byte picks the format (even: SNAP edge list, odd: Matrix
    // Market); a graph that loads goes through the CSR, the reordering and
    // the block density, as the gat model does.
    if (size == 0)
      return 0;
    std::string path = scratchPath(data[0] % 2 ? ".mtx" : ".txt");
    if (!writeScratch(data + 1, size - 1, path))
      return 0;
    llvm::Expected<graph::EdgeList> g = graph::readGraph(path);
    std::remove(path.c_str());
    if (!g) {
      llvm::consumeError(g.takeError());
      return 0;
    }
    graph::CsrOptions options;
    options.symmetrize = data[0] & 2;
    options.selfLoops = data[0] & 4;
    graph::Csr csr = graph::buildInEdgeCsr(*g, options);
    graph::Csr reordered =
        graph::permute(csr, graph::reverseCuthillMcKee(csr));
    (void)graph::blockDensity(reordered, 64);
    return 0;
  }
#endif
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
