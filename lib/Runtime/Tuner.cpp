//===- Tuner.cpp - per-host tile choice for the CPU pipeline --------------===//

#include "lib/Runtime/Tuner.h"
#include "lib/Runtime/Json.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnOps.h"
#include "lib/Runtime/Budget.h"
#include "lib/Runtime/Jit.h"
#include "lib/Transforms/OptionBounds.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;
using llvm::createStringError;

std::string TileChoice::pipelineOptions() const {
  return llvm::formatv("block-q={0} block-k={1} register-rows={2} "
                       "register-cols={3}",
                       blockQ, blockK, registerRows, registerCols)
      .str();
}

std::string mlir::attn::tuningTarget(const CpuTarget &target) {
  return target.features.empty() ? target.cpu
                                 : target.cpu + " " + target.features;
}

std::string mlir::attn::tuningKey(func::FuncOp entry) {
  std::string key;
  llvm::raw_string_ostream os(key);
  // The attn ops of the functions it calls too (a model's layers).
  for (func::FuncOp func : reachedFunctions(entry)) {
    func.walk([&](Operation *op) {
      if (!isa<AttnDialect>(op->getDialect()))
        return;
      if (!key.empty())
        os << "; ";
      // Attributes by name, without the operand-segment bookkeeping.
      SmallVector<NamedAttribute> attrs;
      for (NamedAttribute a : op->getAttrDictionary())
        if (a.getName() != "operandSegmentSizes")
          attrs.push_back(a);
      os << op->getName().stripDialect() << " "
         << DictionaryAttr::get(op->getContext(), attrs);
      for (Type t : op->getOperandTypes())
        os << " " << t;
    });
  }
  return key;
}

std::string TuningCache::defaultPath() {
  if (const char *path = std::getenv("ATTN_TUNING_CACHE"))
    return path;
  llvm::SmallString<256> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    path = xdg;
  else if (const char *home = std::getenv("HOME"); home && *home)
    llvm::sys::path::append(path, home, ".cache");
  else
    path = ".";
  llvm::sys::path::append(path, "attn-mlir", "tuning.json");
  return std::string(path);
}

llvm::Expected<TuningCache> TuningCache::load(llvm::StringRef path) {
  TuningCache cache;
  if (!llvm::sys::fs::exists(path))
    return cache;
  // A regular file within the memory budget (a FIFO would block, /dev/zero
  // be read without end).
  auto buffer = readInputFile(path, /*isText=*/true);
  if (!buffer)
    return buffer.takeError();
  auto bad = [&](llvm::StringRef what) {
    return createStringError("%s: not an attn-mlir tuning cache: %s",
                             path.str().c_str(), what.str().c_str());
  };
  llvm::Expected<llvm::json::Value> json =
      parseJson((*buffer)->getBuffer());
  if (!json)
    return bad(llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root || root->getInteger("version") != 1)
    return bad("expected an object with \"version\": 1");
  const llvm::json::Array *entries = root->getArray("entries");
  if (!entries)
    return bad("expected an \"entries\" array");
  for (const llvm::json::Value &v : *entries) {
    const llvm::json::Object *e = v.getAsObject();
    if (!e)
      return bad("an entry is not an object");
    auto cpu = e->getString("cpu"), key = e->getString("key");
    auto threads = e->getInteger("threads"), bq = e->getInteger("block_q"),
         bk = e->getInteger("block_k"), rr = e->getInteger("register_rows"),
         rc = e->getInteger("register_cols");
    auto ms = e->getNumber("ms");
    if (!cpu || !key || !threads || !bq || !bk || !rr || !rc || !ms)
      return bad("an entry lacks one of cpu, key, threads, block_q, "
                 "block_k, register_rows, register_cols, ms (two strings, "
                 "64-bit integers and a number)");
    // The pipeline options' own ranges (0: the target's default).
    if (*bq < 0 || *bk < 0 || *rr < 0 || *rc < 0 || *threads < 0 ||
        *bq > kMaxTileRows || *bk > kMaxTileRows || *rr > kMaxRegisterRows ||
        *rc > kMaxRegisterCols || *threads > kMaxThreads)
      return bad(llvm::formatv(
                     "a tile size or thread count out of range (block_q, "
                     "block_k in [0, {0}], register_rows in [0, {1}], "
                     "register_cols in [0, {2}], threads in [0, {3}])",
                     kMaxTileRows, kMaxRegisterRows, kMaxRegisterCols,
                     kMaxThreads)
                     .str());
    cache.entries.push_back(
        {cpu->str(), key->str(), *threads, TileChoice{*bq, *bk, *rr, *rc},
         *ms});
  }
  return cache;
}

std::optional<TileChoice> TuningCache::find(llvm::StringRef path,
                                            llvm::StringRef target,
                                            llvm::StringRef key,
                                            int64_t threads) {
  llvm::Expected<TuningCache> cache = load(path);
  if (!cache) {
    llvm::errs() << "warning: tuning cache ignored: "
                 << llvm::toString(cache.takeError()) << "\n";
    return std::nullopt;
  }
  return cache->lookup(target, key, threads);
}

std::optional<TileChoice> TuningCache::lookup(llvm::StringRef cpu,
                                              llvm::StringRef key,
                                              int64_t threads) const {
  for (const Entry &e : entries)
    if (e.cpu == cpu && e.key == key && e.threads == threads)
      return e.choice;
  return std::nullopt;
}

void TuningCache::store(llvm::StringRef cpu, llvm::StringRef key,
                        int64_t threads, const TileChoice &choice, double ms) {
  for (Entry &e : entries)
    if (e.cpu == cpu && e.key == key && e.threads == threads) {
      e.choice = choice;
      e.ms = ms;
      return;
    }
  entries.push_back({cpu.str(), key.str(), threads, choice, ms});
}

llvm::Error TuningCache::save(llvm::StringRef path) const {
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return createStringError("%s: %s", dir.str().c_str(),
                               ec.message().c_str());
  llvm::json::Array list;
  for (const Entry &e : entries)
    list.push_back(llvm::json::Object{{"cpu", e.cpu},
                                      {"key", e.key},
                                      {"threads", e.threads},
                                      {"block_q", e.choice.blockQ},
                                      {"block_k", e.choice.blockK},
                                      {"register_rows", e.choice.registerRows},
                                      {"register_cols", e.choice.registerCols},
                                      {"ms", e.ms}});
  std::string temp = (path + ".tmp" + llvm::Twine(::getpid())).str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec);
    if (ec)
      return createStringError("%s: %s", temp.c_str(), ec.message().c_str());
    os << llvm::formatv(
        "{0:2}\n", llvm::json::Value(llvm::json::Object{
                       {"version", 1}, {"entries", std::move(list)}}));
    os.close();
    if (os.has_error()) {
      llvm::sys::fs::remove(temp);
      return createStringError("%s: write failed: %s", temp.c_str(),
                               os.error().message().c_str());
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return createStringError("%s: %s", path.str().c_str(),
                             ec.message().c_str());
  }
  return llvm::Error::success();
}

/// Calls `visit(query, key)` for every attn.sdpa and attn.mha of `func` and
/// the functions it reaches.
static void forEachAttention(func::FuncOp func,
                             llvm::function_ref<void(Value, Value)> visit) {
  for (func::FuncOp reached : reachedFunctions(func))
    reached.walk([&](Operation *op) {
      if (auto sdpa = dyn_cast<SdpaOp>(op))
        visit(sdpa.getQuery(), sdpa.getKey());
      else if (auto mha = dyn_cast<MhaOp>(op))
        visit(mha.getQuery(), mha.getKey());
    });
}

std::pair<int64_t, int64_t>
mlir::attn::attentionSequenceBounds(func::FuncOp func) {
  int64_t queries = 0, keys = 0;
  bool dynamic = false, none = true, bf16 = false;
  auto visit = [&](Value query, Value key) {
    auto q = cast<RankedTensorType>(query.getType());
    auto k = cast<RankedTensorType>(key.getType());
    none = false;
    if (q.getRank() < 2 || k.getRank() < 2 ||
        q.isDynamicDim(q.getRank() - 2) || k.isDynamicDim(k.getRank() - 2)) {
      dynamic = true;
      return;
    }
    bf16 = bf16 || q.getElementType().isBF16();
    queries = std::max(queries, q.getDimSize(q.getRank() - 2));
    keys = std::max(keys, k.getDimSize(k.getRank() - 2));
  };
  forEachAttention(func, visit);
  if (dynamic || none)
    return {0, 0};
  return {queries, bf16 ? 0 : keys};
}

bool mlir::attn::attentionOnAmx(func::FuncOp func, const CpuTarget &target) {
  if (!target.hasAmxBf16())
    return false;
  bool bf16 = false;
  forEachAttention(func, [&](Value query, Value) {
    bf16 = bf16 || getElementTypeOrSelf(query.getType()).isBF16();
  });
  return bf16;
}

std::vector<TileChoice> mlir::attn::tileCandidates(const CpuTarget &target,
                                                   int64_t maxQueryRows,
                                                   int64_t maxKeyRows,
                                                   bool amxTiles) {
  int64_t rows = target.registerTileRows(), cols = target.registerTileCols();
  // The multiple of `r` rows at or just below `size`.
  auto below = [](int64_t size, int64_t r) {
    return std::max(r, size / r * r);
  };
  // The target's heuristic first (all zeros): with it attn-tile may take
  // the register-row lowering of short key sequences, which given block
  // sizes turn off.
  std::vector<TileChoice> out{TileChoice{0, 0, 0, 0}};
  for (int64_t bk : {32, 64, 128})
    for (int64_t bq : {32, 48, 64, 96, 128, 256})
      out.push_back({below(bq, rows), bk, 0, 0});
  // One row fewer and more than the target's two-register tile (when it
  // fits the registers), and on targets with a wide tile (AVX-512's 6 x 64,
  // which the heuristic takes where the columns allow) that tile itself, at
  // the usual tile sizes; not where the contractions run on AMX tiles (see
  // the declaration).
  SmallVector<int64_t, 3> rowChoices{rows - 1, rows + 1};
  if (target.wideRegisterTileCols() > 0)
    rowChoices.push_back(rows);
  for (int64_t r : rowChoices)
    if (!amxTiles && r >= 1 && r <= target.maxRegisterTileRows())
      for (int64_t bq : {48, 64})
        out.push_back({below(bq, r), 64, r, cols});
  // Block sizes past the sequence tile as the sequence does.
  auto clamp = [](int64_t block, int64_t bound) {
    return bound > 0 ? std::min(block, bound) : block;
  };
  std::vector<TileChoice> distinct;
  for (const TileChoice &c : out) {
    TileChoice effective{clamp(c.blockQ, maxQueryRows),
                         clamp(c.blockK, maxKeyRows), c.registerRows,
                         c.registerCols};
    if (!llvm::is_contained(distinct, effective))
      distinct.push_back(effective);
  }
  return distinct;
}

llvm::Expected<std::vector<TuneResult>>
mlir::attn::tuneTiles(ModuleOp module, llvm::StringRef func,
                      llvm::ArrayRef<HostTensor *> inputs,
                      llvm::ArrayRef<HostTensor *> outputs, int64_t threads,
                      const CpuTarget &target,
                      const std::vector<TileChoice> &candidates,
                      unsigned calls,
                      const std::function<void(const TuneResult &)> &progress) {
  std::vector<TuneResult> results;
  std::string firstError;
  for (const TileChoice &choice : candidates) {
    OwningOpRef<ModuleOp> copy = module.clone();
    JitOptions options;
    options.pipeline = llvm::formatv("attn-cpu-pipeline{{threads={0} {1}}",
                                     threads, choice.pipelineOptions())
                           .str();
    options.targetCpu = target.cpu;
    options.targetFeatures = target.features;
    auto jit = JitModule::compile(*copy, options);
    if (!jit) {
      std::string message = llvm::toString(jit.takeError());
      if (firstError.empty())
        firstError = message;
      continue;
    }
    // One untimed call (first touch, thread start-up), then the median.
    if (llvm::Error err = (*jit)->invoke(func, inputs, outputs))
      return std::move(err);
    std::vector<double> times;
    for (unsigned c = 0; c < std::max(1u, calls); ++c) {
      auto t0 = std::chrono::steady_clock::now();
      cantFail((*jit)->invoke(func, inputs, outputs));
      times.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - t0)
                          .count());
    }
    std::sort(times.begin(), times.end());
    TuneResult r{choice, times[times.size() / 2] * 1e3};
    if (progress)
      progress(r);
    results.push_back(r);
  }
  if (results.empty())
    return createStringError("no tile candidate compiled: %s",
                             firstError.c_str());
  std::stable_sort(results.begin(), results.end(),
                   [](const TuneResult &a, const TuneResult &b) {
                     return a.ms < b.ms;
                   });
  return results;
}

llvm::Expected<TuneResult>
mlir::attn::tuneAndStore(ModuleOp module, func::FuncOp func,
                         llvm::ArrayRef<HostTensor *> inputs,
                         llvm::ArrayRef<HostTensor *> outputs, int64_t threads,
                         const CpuTarget &target, unsigned calls,
                         llvm::StringRef cachePath, llvm::raw_ostream &os) {
  llvm::Expected<TuningCache> cache = TuningCache::load(cachePath);
  if (!cache)
    return cache.takeError();
  auto [queries, keys] = attentionSequenceBounds(func);
  auto results = tuneTiles(module, func.getName(), inputs, outputs, threads,
                           target,
                           tileCandidates(target, queries, keys,
                                          attentionOnAmx(func, target)),
                           calls,
                           [&](const TuneResult &r) {
                             os << llvm::format(
                                 "  %-60s %9.3f ms\n",
                                 r.choice.pipelineOptions().c_str(), r.ms);
                             os.flush();
                           });
  if (!results)
    return results.takeError();
  const TuneResult &best = results->front();
  cache->store(tuningTarget(target), tuningKey(func), threads, best.choice,
               best.ms);
  if (llvm::Error err = cache->save(cachePath))
    return std::move(err);
  return best;
}
