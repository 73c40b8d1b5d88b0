//===- Tuner.h - per-host tile choice for the CPU pipeline ------*- C++ -*-===//
//
// Sweeps attn-cpu-pipeline's tile options (block-q, block-k, register tile)
// for one function on this host, and caches the fastest in a JSON file keyed
// by CPU name, the function's attention shapes and the thread count, where
// attn-run and attn-compile find it when no tile option is given.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_TUNER_H
#define ATTN_LIB_RUNTIME_TUNER_H

#include "lib/Runtime/Tensor.h"
#include "lib/Target/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

/// attn-cpu-pipeline's tile options (0: the target's heuristic).
struct TileChoice {
  int64_t blockQ = 0, blockK = 0, registerRows = 0, registerCols = 0;
  /// As pipeline options: `block-q=48 block-k=64 register-rows=6
  /// register-cols=16`.
  std::string pipelineOptions() const;
  bool operator==(const TileChoice &o) const {
    return blockQ == o.blockQ && blockK == o.blockK &&
           registerRows == o.registerRows && registerCols == o.registerCols;
  }
};

/// The target part of a tuning's key: the CPU name and its feature
/// differences (`znver4 -avx512f` is not `znver4`: other register tiles).
std::string tuningTarget(const CpuTarget &target);

/// What a tuning is keyed by inside a target and thread count: every attn op of
/// `func` and of the functions it calls (reachedFunctions: a model's layer
/// functions, each once) with its attributes and operand types, in order
/// (`sdpa {mask=causal} 1x8x4096x64xf32 ...; ...`). Weights and batch values
/// do not enter it.
std::string tuningKey(func::FuncOp func);

/// The cache file: `{"version": 1, "entries": [{"cpu" (tuningTarget), "key", "threads",
/// "block_q", "block_k", "register_rows", "register_cols", "ms"}, ...]}`.
class TuningCache {
public:
  /// $ATTN_TUNING_CACHE, else $XDG_CACHE_HOME/attn-mlir/tuning.json, else
  /// ~/.cache/attn-mlir/tuning.json.
  static std::string defaultPath();
  /// Reads `path`; a missing file is an empty cache, a malformed one an
  /// error naming the file.
  static llvm::Expected<TuningCache> load(llvm::StringRef path);
  /// The entry for (target, key, threads) in the cache at `path`; a missing
  /// or malformed cache gives none (the latter with a warning on stderr:
  /// compiling never fails because of a cache).
  static std::optional<TileChoice> find(llvm::StringRef path,
                                        llvm::StringRef target,
                                        llvm::StringRef key, int64_t threads);

  std::optional<TileChoice> lookup(llvm::StringRef cpu, llvm::StringRef key,
                                   int64_t threads) const;
  /// Adds or replaces the entry of (cpu, key, threads).
  void store(llvm::StringRef cpu, llvm::StringRef key, int64_t threads,
             const TileChoice &choice, double ms);
  /// Writes the cache (creating its folder) to a temporary file renamed over
  /// `path`, so a concurrent reader never sees half a file.
  llvm::Error save(llvm::StringRef path) const;

private:
  struct Entry {
    std::string cpu, key;
    int64_t threads;
    TileChoice choice;
    double ms;
  };
  std::vector<Entry> entries;
};

/// The candidates swept for `target`: the target's heuristic (zeros: the
/// tiles attn-tile and attn-vectorize choose, or attn-tile's register rows
/// for short key sequences), block-q near {32, 48, 64, 96, 128, 256}
/// (rounded down to whole two-register tiles) x block-k in {32, 64, 128}
/// with the heuristic's register tiles, and two-register tiles of one row
/// fewer and more (on targets with a wide tile, such as AVX-512's 6 x 64,
/// also the two-register 8 x 32 itself) at block-q near 48 and 64, block-k
/// 64. attn-tile clamps block sizes to
/// the sequence, so with `maxQueryRows` / `maxKeyRows` (the longest query /
/// key sequence of the attention ops tuned; 0: unknown) each candidate's
/// block sizes are clamped to them, and candidates that then tile the same
/// way are listed once. With `amxTiles` (bf16 attention on a target with
/// AMX-BF16, attentionOnAmx) the register tiles of one row fewer and more
/// are left out: their query blocks (42, 45, 63 rows) are not multiples of
/// AMX's 16-row tiles, so their contractions are not AMX's (on Sapphire,
/// Emerald and Granite Rapids they are computed in f32, on other AMX
/// targets in `vdpbf16ps` register tiles: 5x the time on an Emerald Rapids
/// core), and the register tile matters to the AMX path's contractions not
/// at all.
std::vector<TileChoice> tileCandidates(const CpuTarget &target,
                                       int64_t maxQueryRows = 0,
                                       int64_t maxKeyRows = 0,
                                       bool amxTiles = false);

/// Whether the attention of `func` (attn.sdpa / attn.mha of it and the
/// functions it reaches) has bf16 operands and `target` has AMX-BF16: its
/// contractions then run on AMX tiles (attn-lower-amx).
bool attentionOnAmx(func::FuncOp func, const CpuTarget &target);

/// The longest query and key sequences of the attn.sdpa and attn.mha ops of
/// `func` and the functions it reaches (reachedFunctions), each 0 when one is dynamic or there are none; the key sequence also
/// 0 when an op has bf16 operands (attn-tile's bf16 dot-product tiles keep
/// block-k past the sequence: padded keys).
std::pair<int64_t, int64_t> attentionSequenceBounds(func::FuncOp func);

struct TuneResult {
  TileChoice choice;
  double ms = 0; ///< median of the timed calls
};

/// Compiles `func` of `module` (left untouched) with attn-cpu-pipeline for
/// every candidate (`threads` OpenMP threads, for `target`, which must run
/// here) and times `calls` calls on `inputs` / `outputs`. Results sorted
/// fastest first; `progress` sees each as it is measured. Candidates that
/// fail to compile are skipped.
llvm::Expected<std::vector<TuneResult>>
tuneTiles(ModuleOp module, llvm::StringRef func,
          llvm::ArrayRef<HostTensor *> inputs,
          llvm::ArrayRef<HostTensor *> outputs, int64_t threads,
          const CpuTarget &target, const std::vector<TileChoice> &candidates,
          unsigned calls,
          const std::function<void(const TuneResult &)> &progress);

/// What `--tune` does in the tools: tuneTiles over `target`'s candidates,
/// each result printed to `os` as it is measured, and the fastest stored in
/// the cache at `cachePath` under (tuningTarget(target), tuningKey(func),
/// threads). A malformed cache is an error before anything is timed.
llvm::Expected<TuneResult>
tuneAndStore(ModuleOp module, func::FuncOp func,
             llvm::ArrayRef<HostTensor *> inputs,
             llvm::ArrayRef<HostTensor *> outputs, int64_t threads,
             const CpuTarget &target, unsigned calls,
             llvm::StringRef cachePath, llvm::raw_ostream &os);

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_TUNER_H
