//===- Budget.cpp - the memory budget of sizes an input claims ------------===//

#include "lib/Runtime/Budget.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>
#include <unistd.h>

using namespace mlir::attn;
using llvm::StringRef;

namespace {
constexpr uint64_t kGiB = uint64_t(1) << 30;
std::atomic<uint64_t> budgetOverride{0};
} // namespace

uint64_t mlir::attn::processMemoryLimit() {
  // The physical memory, or less when an address-space / data limit
  // (ulimit -v, -d) or the cgroup's memory.max says so.
  uint64_t available = 8 * kGiB;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    available = static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit limit;
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      available = std::min<uint64_t>(available, limit.rlim_cur);
  }
  // cgroup v2: this process's group ("0::/PATH" in /proc/self/cgroup) and
  // each group above it may set memory.max ("max": no limit).
  std::string group;
  if (FILE *f = std::fopen("/proc/self/cgroup", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof(line), f))
      if (StringRef(line).starts_with("0::"))
        group = StringRef(line).drop_front(3).rtrim("\n").str();
    std::fclose(f);
  }
  for (StringRef dir = group;; dir = dir.rsplit('/').first) {
    std::string path = "/sys/fs/cgroup" + dir.rtrim("/").str() + "/memory.max";
    if (FILE *f = std::fopen(path.c_str(), "r")) {
      unsigned long long bytes;
      if (std::fscanf(f, "%llu", &bytes) == 1)
        available = std::min<uint64_t>(available, bytes);
      std::fclose(f);
    }
    if (dir.empty() || !dir.contains('/'))
      break;
  }
  return std::max<uint64_t>(available, 128 << 20);
}

uint64_t mlir::attn::defaultMemoryBudget() {
  return std::max<uint64_t>(processMemoryLimit() / 2, 64 << 20);
}

/// An error unless `bytes`, a budget from `source`, fits what the process
/// may use (a budget above it would let claimed sizes through to the
/// kernel's OOM killer).
static llvm::Error checkBudgetLimit(uint64_t bytes, StringRef source) {
  uint64_t limit = mlir::attn::processMemoryLimit();
  if (bytes <= limit)
    return llvm::Error::success();
  return llvm::createStringError(
      std::errc::invalid_argument,
      "%s: %s is more than this process may use, %s (the physical memory, "
      "or less under ulimit -v / -d or a cgroup's memory.max)",
      source.str().c_str(), mlir::attn::formatBytes(bytes).c_str(),
      mlir::attn::formatBytes(limit).c_str());
}

llvm::Expected<uint64_t> mlir::attn::parseByteSize(StringRef text) {
  StringRef t = text.trim();
  StringRef number =
      t.take_while([](char c) { return llvm::isDigit(c) || c == '.'; });
  StringRef unit = t.drop_front(number.size()).trim();
  auto bad = [&] {
    return llvm::createStringError(
        std::errc::invalid_argument,
        "invalid size '%s': expected a positive number of bytes with an "
        "optional unit K, M, G or T (powers of 1024), e.g. 8G or 512M",
        text.str().c_str());
  };
  double value;
  if (number.empty() || number.getAsDouble(value) || !(value > 0))
    return bad();
  std::string u = unit.lower();
  double scale;
  if (u.empty() || u == "b")
    scale = 1;
  else if (u == "k" || u == "kb" || u == "kib")
    scale = 1024.0;
  else if (u == "m" || u == "mb" || u == "mib")
    scale = 1024.0 * 1024;
  else if (u == "g" || u == "gb" || u == "gib")
    scale = 1024.0 * 1024 * 1024;
  else if (u == "t" || u == "tb" || u == "tib")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return bad();
  double bytes = std::floor(value * scale);
  if (!(bytes >= 1) || bytes >= 18446744073709551616.0)
    return bad();
  return static_cast<uint64_t>(bytes);
}

/// ATTN_MEMORY_BUDGET parsed (nullopt when unset), or why it is malformed.
static llvm::Expected<std::optional<uint64_t>> environmentBudget() {
  const char *env = std::getenv("ATTN_MEMORY_BUDGET");
  if (!env)
    return std::nullopt;
  llvm::Expected<uint64_t> parsed = parseByteSize(env);
  if (!parsed)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "ATTN_MEMORY_BUDGET: %s",
                                   llvm::toString(parsed.takeError()).c_str());
  return *parsed;
}

uint64_t mlir::attn::memoryBudget() {
  if (uint64_t set = budgetOverride.load())
    return set;
  // The environment and the machine are read once per process: every
  // claimed size (each value of a function, each tensor of a file) asks.
  static const uint64_t resolved = [] {
    llvm::Expected<std::optional<uint64_t>> env = environmentBudget();
    if (env && *env)
      return **env;
    if (!env)
      llvm::consumeError(env.takeError()); // reported by configureMemoryBudget
    return defaultMemoryBudget();
  }();
  return resolved;
}

void mlir::attn::setMemoryBudget(uint64_t bytes) { budgetOverride = bytes; }

llvm::Error mlir::attn::configureMemoryBudget(StringRef option) {
  if (!option.empty()) {
    llvm::Expected<uint64_t> parsed = parseByteSize(option);
    if (!parsed)
      return llvm::createStringError(
          std::errc::invalid_argument, "--memory-budget: %s",
          llvm::toString(parsed.takeError()).c_str());
    if (llvm::Error err = checkBudgetLimit(*parsed, "--memory-budget"))
      return err;
    setMemoryBudget(*parsed);
    return llvm::Error::success();
  }
  llvm::Expected<std::optional<uint64_t>> env = environmentBudget();
  if (!env)
    return env.takeError();
  if (*env)
    return checkBudgetLimit(**env, "ATTN_MEMORY_BUDGET");
  return llvm::Error::success();
}

static const char *outOfMemoryTool = "attn";

void mlir::attn::installOutOfMemoryError(const char *tool) {
  outOfMemoryTool = tool;
  // Resolve the environment's or the default budget now: the handler reads
  // it, and its first resolution allocates (and reads files).
  (void)memoryBudget();
  // Called by LLVM's new-handler (installed by InitLLVM) and by LLVM's own
  // allocation failures; it must not allocate, nor return.
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *, bool) {
        char message[512];
        int n = std::snprintf(
            message, sizeof(message),
            "%s: error: out of memory: an allocation failed although it fit "
            "the memory budget of %.1f GiB (the rest of the process or other "
            "processes hold the memory; a lower --memory-budget or "
            "ATTN_MEMORY_BUDGET refuses such sizes before allocating)\n",
            outOfMemoryTool, double(memoryBudget()) / double(1ull << 30));
        if (n > 0) {
          ssize_t ignored = ::write(
              2, message, std::min<size_t>(size_t(n), sizeof(message) - 1));
          (void)ignored;
        }
        ::_exit(1);
      },
      nullptr);
}

std::string mlir::attn::formatBytes(uint64_t bytes) {
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return buf;
}

llvm::Error mlir::attn::checkBudget(uint64_t bytes, const llvm::Twine &what) {
  uint64_t budget = memoryBudget();
  if (bytes <= budget)
    return llvm::Error::success();
  if (bytes == UINT64_MAX) // a count that overflowed on its way here
    return llvm::createStringError(
        std::errc::not_enough_memory,
        "%s needs more than 2^64 bytes, more than the memory budget of %s",
        what.str().c_str(), formatBytes(budget).c_str());
  return llvm::createStringError(
      std::errc::not_enough_memory,
      "%s needs %s (%llu bytes), more than the memory budget of %s (%llu "
      "bytes; --memory-budget or ATTN_MEMORY_BUDGET sets it)",
      what.str().c_str(), formatBytes(bytes).c_str(),
      static_cast<unsigned long long>(bytes), formatBytes(budget).c_str(),
      static_cast<unsigned long long>(budget));
}

llvm::Error mlir::attn::checkInputFile(StringRef path) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return llvm::createStringError(ec, "%s: cannot open: %s",
                                   path.str().c_str(), ec.message().c_str());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::createStringError(
        std::errc::invalid_argument,
        "%s: cannot open: not a regular file (a device or a pipe has no "
        "size to check)",
        path.str().c_str());
  return checkBudget(status.getSize(), path + ": the file");
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mlir::attn::readInputFile(StringRef path, bool isText) {
  if (llvm::Error err = checkInputFile(path))
    return std::move(err);
  auto buffer = llvm::MemoryBuffer::getFile(path, isText,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot open: %s",
                                   path.str().c_str(),
                                   buffer.getError().message().c_str());
  return std::move(*buffer);
}

std::string mlir::attn::shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

llvm::Expected<uint64_t>
mlir::attn::checkedTensorBytes(llvm::ArrayRef<int64_t> shape,
                               uint64_t elementBytes, const llvm::Twine &what) {
  uint64_t bytes = elementBytes;
  bool empty = false, overflow = false;
  for (int64_t d : shape) {
    if (d < 0)
      return llvm::createStringError(
          std::errc::invalid_argument, "%s: negative dimension in shape %s",
          what.str().c_str(), shapeString(shape).c_str());
    empty |= d == 0;
    overflow |= __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes);
  }
  if (empty)
    return 0;
  if (overflow)
    return llvm::createStringError(std::errc::value_too_large,
                                   "%s: more than 2^64 bytes",
                                   what.str().c_str());
  if (llvm::Error err = checkBudget(bytes, what))
    return std::move(err);
  return bytes;
}
