//===- attn-bench.cpp - attention peers side by side ---------------------===//
//
// Google Benchmark suite: attn-mlir's tiled CPU pipeline (JIT-compiled once,
// outside the timed loop), its reference lowering, the OpenBLAS-unfused peer
// and the Halide peer (AOT, bench/halide), on the same inputs, per mask family,
// length, head dim and thread count. Counters: dense-equivalent GFLOP/s (4 Lq
// Lk E per head) and useful GFLOP/s (allowed pairs only); the context holds the
// measured FMA peak and the OpenBLAS kernel. scripts/bench-table.py turns the
// JSON into a table. With --check, each attn-mlir configuration's output is
// compared with the C++ reference (sampled rows at large L) before it is
// timed, and a mismatch makes the run fail. gpt-decode / gpt-forward time
// one generated token with and without the K/V cache.
//
//   attn-bench [--full] [--check] [--benchmark_filter=...]
//              [--benchmark_format=json]
//
//===----------------------------------------------------------------------===//

#include "bench/Peak.h"
#include "bench/UnfusedAttention.h"
#include "lib/Graph/Graph.h"
#include "lib/Models/Model.h"
#include "lib/Runtime/Evaluate.h"
#include "lib/Runtime/Jit.h"
#include "lib/Runtime/Reference.h"
#include "lib/Target/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include "HalideBuffer.h"
#include "halide_attention_causal.h"
#include "halide_attention_dense.h"
#include "halide_attention_graph.h"
#include "halide_attention_local.h"
#include "halide_attention_padding.h"
#include "halide_attention_relbias.h"

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

using namespace mlir;
using namespace mlir::attn;

namespace {

struct Config {
  std::string family;
  int64_t len, dim, heads = 8;
  int threads;

  /// "dense-bf16" runs "dense" on bf16 tensors (bf16 dot products where the
  /// target has them, else computed in f32).
  std::string elementType() const {
    return llvm::StringRef(family).ends_with("-bf16") ? "bf16" : "f32";
  }
  std::string maskFamily() const {
    llvm::StringRef f(family);
    f.consume_back("-bf16");
    return f.str();
  }

  std::string name() const {
    return llvm::formatv("{0}/L{1}/E{2}/T{3}", family, len, dim, threads);
  }
};

/// Graph-structured families: "graph<d>-shuffled" / "graph<d>-rcm" (graph
/// mask of a shuffled banded graph with d % density, without / with reverse
/// Cuthill-McKee reordering; the pipeline's default lowering, which is the
/// edge-list one up to its graph-edge-density), the same with "-tiles"
/// (block-mask tiles forced: where reordering shows) and "biasmask<d>" (the
/// same graph as a dense -inf additive bias: what a user without graph masks
/// would write).
struct GraphFamily {
  int64_t density = 0; // percent; 0 = not a graph-structured family
  bool rcm = false, asBias = false, tiles = false;
};

GraphFamily parseGraphFamily(const std::string &family) {
  GraphFamily g;
  llvm::StringRef f(family);
  if (f.consume_front("biasmask")) {
    g.asBias = true;
  } else if (f.consume_front("graph") && !f.empty()) {
    g.tiles = f.consume_back("-tiles");
    g.rcm = f.consume_back("-rcm");
    f.consume_back("-shuffled");
  } else {
    return {};
  }
  if (f.getAsInteger(10, g.density))
    return {};
  return g;
}

/// The attn.sdpa function of one benchmark family; `nnz` sizes col_idx of
/// the graph families.
std::string moduleFor(const Config &c, int64_t nnz) {
  std::string qkv = llvm::formatv("tensor<1x{0}x{1}x{2}x{3}>", c.heads, c.len,
                                  c.dim, c.elementType());
  std::string args = llvm::formatv("%q: {0}, %k: {0}, %v: {0}", qkv);
  std::string types = llvm::formatv("{0}, {0}, {0}", qkv);
  std::string operands, attrs, region;
  if (c.maskFamily() == "causal") {
    attrs = "{mask = #attn.mask<causal>}";
  } else if (c.family == "local") {
    attrs = "{mask = #attn.mask<local>, window_left = 128 : i64, "
            "window_right = 128 : i64}";
  } else if (c.family == "relbias") {
    std::string t = llvm::formatv("tensor<{0}x129xf32>", c.heads);
    args += ", %rb: " + t;
    types += ", " + t;
    operands = " rel_bias(%rb)";
    attrs = "{rel_clip = 64 : i64}";
  } else if (c.family == "padding") {
    args += ", %len: tensor<1xi32>";
    types += ", tensor<1xi32>";
    operands = " kv_lengths(%len)";
  } else if (parseGraphFamily(c.family).asBias) {
    std::string t = llvm::formatv("tensor<1x1x{0}x{0}xf32>", c.len);
    args += ", %bias: " + t;
    types += ", " + t;
    operands = " bias(%bias)";
  } else if (c.family == "causal-region") {
    region = " mask_mod {\n"
             "  ^bb0(%b: index, %h: index, %i: index, %j: index):\n"
             "    %c = arith.cmpi sle, %j, %i : index\n"
             "    attn.yield %c : i1\n"
             "  }";
  } else if (c.family == "documents16") {
    std::string t = llvm::formatv("tensor<{0}xi32>", c.len);
    args += ", %doc: " + t; // read by the region, not an operand
    region = llvm::formatv(
        " mask_mod {{\n"
        "  ^bb0(%b: index, %h: index, %i: index, %j: index):\n"
        "    %di = tensor.extract %doc[%i] : {0}\n"
        "    %dj = tensor.extract %doc[%j] : {0}\n"
        "    %c = arith.cmpi eq, %di, %dj : i32\n"
        "    attn.yield %c : i1\n"
        "  }",
        t);
  } else if (c.family == "documents16-bias") {
    std::string t = llvm::formatv("tensor<1x1x{0}x{0}xf32>", c.len);
    args += ", %bias: " + t;
    types += ", " + t;
    operands = " bias(%bias)";
  } else if (c.family == "graph" || parseGraphFamily(c.family).density) {
    std::string rp = llvm::formatv("tensor<{0}xi32>", c.len + 1);
    std::string ci = llvm::formatv("tensor<{0}xi32>", nnz);
    args += ", %rp: " + rp + ", %ci: " + ci;
    types += ", " + rp + ", " + ci;
    operands = " graph(%rp, %ci)";
    attrs = "{mask = #attn.mask<graph>}";
  }
  return llvm::formatv("func.func @attn({0}) -> {1} {{\n"
                       "  %o = attn.sdpa %q, %k, %v{2} {3} : ({4}) -> {1}{5}\n"
                       "  return %o : {1}\n}\n",
                       args, qkv, operands, attrs, types, region);
}

/// Compiled function, its inputs and its output buffer, built once per
/// (config, pipeline) and reused by every call of the benchmark.
struct Prepared {
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<JitModule> jit;
  std::vector<HostTensor> inputs, outputs;
  UnfusedMask mask;
  double usefulPairs = 0;  ///< allowed (i, j) pairs per head
  double blockDensity = 1; ///< non-empty 64 x 64 tiles of the mask
  std::vector<float> scratch, out;
  std::vector<uint8_t> graphMask; ///< Halide peer: dense [L][L] graph mask
  bool checked = false;           ///< --check passed for this output
  std::string name;               ///< the benchmark's, for --check's report
};

/// Compiled functions and peer inputs, by pipeline and config; cleared before
/// exit (ExecutionEngines must go before LLVM's static state does).
std::map<std::string, std::unique_ptr<Prepared>> &cache() {
  static std::map<std::string, std::unique_ptr<Prepared>> prepared;
  return prepared;
}

MLIRContext &context() {
  static MLIRContext *ctx = createRuntimeContext().release();
  return *ctx;
}

/// Parses the family's module, generates inputs (fixed kv_length 3L/4),
/// derives the peer's mask and counts allowed pairs.
std::unique_ptr<Prepared> prepareInputs(const Config &c) {
  auto p = std::make_unique<Prepared>();
  int64_t l = c.len;
  GraphFamily gf = parseGraphFamily(c.family);
  graph::Csr csr;
  if (gf.density) {
    int64_t degree = std::max<int64_t>(1, l * gf.density / 100);
    csr = graph::buildInEdgeCsr(
        graph::shuffledBanded(l, degree, 4 * degree, /*seed=*/1));
    if (gf.rcm)
      csr = graph::permute(csr, graph::reverseCuthillMcKee(csr));
    p->blockDensity = graph::blockDensity(csr, 64);
  }
  p->module = parseSourceString<ModuleOp>(
      moduleFor(c, gf.density ? csr.numEdges() : l * l / 20), &context());
  auto func = p->module->lookupSymbol<func::FuncOp>("attn");
  p->inputs = generateInputs(func, /*seed=*/1, /*magnitude=*/1.0);
  UnfusedMask &m = p->mask;
  if (gf.density) {
    // The generated graph replaces the random CSR (or becomes the bias).
    p->usefulPairs = 0;
    std::vector<char> seen(l);
    for (int64_t i = 0; i < l; ++i) {
      std::fill(seen.begin(), seen.end(), 0);
      for (int64_t e = csr.rowPtr[i]; e < csr.rowPtr[i + 1]; ++e)
        p->usefulPairs += !seen[csr.colIdx[e]]++;
    }
    if (gf.asBias) {
      float *bias = p->inputs[3].as<float>();
      std::fill(bias, bias + l * l, -std::numeric_limits<float>::infinity());
      for (int64_t i = 0; i < l; ++i)
        for (int64_t e = csr.rowPtr[i]; e < csr.rowPtr[i + 1]; ++e)
          bias[i * l + csr.colIdx[e]] = 0.f;
    } else {
      for (int64_t i = 0; i <= l; ++i)
        p->inputs[3].setInt(i, csr.rowPtr[i]);
      for (int64_t e = 0; e < csr.numEdges(); ++e)
        p->inputs[4].setInt(e, csr.colIdx[e]);
    }
    return p;
  }
  if (llvm::StringRef(c.family).starts_with("documents16")) {
    // 16 documents of L/16 tokens: as ids for the region, as a -inf bias
    // for the dense comparison.
    int64_t docLen = l / 16;
    if (c.family == "documents16") {
      for (int64_t i = 0; i < l; ++i)
        p->inputs[3].setInt(i, i / docLen);
    } else {
      float *bias = p->inputs[3].as<float>();
      for (int64_t i = 0; i < l; ++i)
        for (int64_t j = 0; j < l; ++j)
          bias[i * l + j] = i / docLen == j / docLen
                                ? 0.f
                                : -std::numeric_limits<float>::infinity();
    }
    p->usefulPairs = 16.0 * double(docLen) * double(docLen);
    return p;
  }
  if (c.maskFamily() == "causal" || c.family == "causal-region") {
    m.kind = UnfusedMask::causal;
    p->usefulPairs = double(l) * double(l + 1) / 2;
  } else if (c.family == "local") {
    m.kind = UnfusedMask::local;
    m.windowLeft = m.windowRight = 128;
    for (int64_t i = 0; i < l; ++i)
      p->usefulPairs +=
          double(std::min(l - 1, i + 128) - std::max<int64_t>(0, i - 128) + 1);
  } else if (c.family == "relbias") {
    m.kind = UnfusedMask::relativeBias;
    m.relTable = p->inputs[3].as<float>();
    m.relClip = 64;
    p->usefulPairs = double(l) * double(l);
  } else if (c.family == "padding") {
    m.kind = UnfusedMask::padding;
    m.kvLength = 3 * l / 4;
    p->inputs[3].setInt(0, m.kvLength);
    p->usefulPairs = double(l) * double(m.kvLength);
  } else if (c.family == "graph") {
    m.kind = UnfusedMask::graph;
    m.rowPtr = p->inputs[3].as<int32_t>();
    m.colIdx = p->inputs[4].as<int32_t>();
    // Distinct (i, j) pairs: duplicates of the random CSR count once.
    std::vector<char> seen(l);
    for (int64_t i = 0; i < l; ++i) {
      std::fill(seen.begin(), seen.end(), 0);
      for (int32_t e = m.rowPtr[i]; e < m.rowPtr[i + 1]; ++e)
        p->usefulPairs += !seen[m.colIdx[e]]++;
    }
  } else {
    p->usefulPairs = double(l) * double(l);
  }
  return p;
}

void setCounters(benchmark::State &state, const Config &c, double pairs,
                 double blockDensity = 1) {
  state.counters["block_density"] = blockDensity;
  double perPair = 4.0 * double(c.dim) * double(c.heads);
  state.counters["flops_dense"] =
      benchmark::Counter(perPair * double(c.len) * double(c.len),
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["flops_useful"] = benchmark::Counter(
      perPair * pairs, benchmark::Counter::kIsIterationInvariantRate);
}

/// --check: every attn-mlir configuration's output is compared with the C++
/// reference before it is timed; a mismatch fails the benchmark and the run.
bool checkOutputs = false;
bool checkFailed = false;

/// Compares the first call's output of @attn with the C++ reference: at
/// large L only about 64 query rows per head (one per L/64 rows, at offsets
/// that cover every position in a tile, and the last; the reference is a
/// naive double loop), all of them for GAT. The
/// tolerance is attn-run --check's: 1e-5 times the largest |expected| (two
/// units in the last place for f16 / bf16 results).
/// False (and the benchmark skipped with the reason) on a mismatch.
bool checkAgainstReference(benchmark::State &state, Prepared &p,
                           const std::string &name) {
  auto func = p.module->lookupSymbol<func::FuncOp>("attn");
  std::vector<const HostTensor *> in;
  for (HostTensor &t : p.inputs)
    in.push_back(&t);
  // sdpa output [B, H, L, Ev]; GAT output [N, H*C] (rank 2): all rows.
  const HostTensor &got = p.outputs[0];
  bool sampled = got.shape().size() == 4;
  int64_t rows = sampled ? got.shape()[2] : 1;
  int64_t stride = sampled ? std::max<int64_t>(1, rows / 64) : 1;
  auto expected = evaluateWithReference(func, in, stride);
  if (!expected) {
    state.SkipWithError(("--check: " + llvm::toString(expected.takeError()))
                            .c_str());
    checkFailed = true;
    return false;
  }
  const HostTensor &want = (*expected)[0];
  int64_t rowSize = sampled ? got.shape()[3] : got.numElements();
  int64_t outer = got.numElements() / (rows * rowSize);
  auto checkedRow = [&](int64_t i) {
    return reference::isSampledRow(i, rows, stride);
  };
  double scale = 0, maxErr = 0;
  int64_t checked = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < rows; ++i) {
        if (!checkedRow(i))
          continue;
        for (int64_t x = 0; x < rowSize; ++x) {
          int64_t at = (o * rows + i) * rowSize + x;
          double w = want.getDouble(at), g = got.getDouble(at);
          if (pass == 0) {
            if (std::isfinite(w))
              scale = std::max(scale, std::abs(w));
            continue;
          }
          ++checked;
          // NaN never passes; infinities (lse of masked rows) must match.
          double err = std::isfinite(g) && std::isfinite(w) ? std::abs(g - w)
                       : g == w ? 0.0
                                : std::numeric_limits<double>::infinity();
          maxErr = std::max(maxErr, err);
        }
      }
  double tolerance =
      referenceTolerance(got.dtype(), 1e-5) * std::max(scale, 1e-30);
  bool ok = maxErr <= tolerance;
  std::string line = llvm::formatv(
      "--check {0}: {1} of {2} values vs the C++ reference, max |error| "
      "{3:e2} (tolerance {4:e2}): {5}",
      name, checked, got.numElements(), maxErr, tolerance,
      ok ? "OK" : "MISMATCH");
  llvm::errs() << line << "\n";
  if (!ok) {
    checkFailed = true;
    state.SkipWithError(line.c_str());
  }
  return ok;
}

/// JIT-compiles `p->module` with `pipeline` (once) and times calls of @attn,
/// after one untimed call (first touch of buffers, thread start-up; with
/// --check its output is compared with the reference first). False when
/// compilation, the first call or the check failed (the benchmark is
/// skipped).
bool compileAndTime(benchmark::State &state, Prepared &p,
                    const std::string &pipeline) {
  if (!p.jit) {
    OwningOpRef<ModuleOp> lowered = p.module->clone();
    JitOptions options;
    options.pipeline = pipeline;
    auto jit = JitModule::compile(*lowered, options);
    if (!jit) {
      state.SkipWithError(llvm::toString(jit.takeError()).c_str());
      return false;
    }
    p.jit = std::move(*jit);
    p.outputs = std::move(*p.jit->allocateResults("attn"));
  }
  std::vector<HostTensor *> in, out;
  for (HostTensor &t : p.inputs)
    in.push_back(&t);
  for (HostTensor &t : p.outputs)
    out.push_back(&t);
  if (llvm::Error err = p.jit->invoke("attn", in, out)) {
    state.SkipWithError(llvm::toString(std::move(err)).c_str());
    return false;
  }
  if (checkOutputs && !p.checked) {
    if (!checkAgainstReference(state, p, p.name))
      return false;
    p.checked = true;
  }
  for (auto _ : state)
    cantFail(p.jit->invoke("attn", in, out));
  return true;
}

/// attn-mlir through `pipeline`.
void runMlir(benchmark::State &state, const Config &c,
             const std::string &pipeline) {
  std::unique_ptr<Prepared> &p = cache()[pipeline + "|" + c.name()];
  if (!p) {
    p = prepareInputs(c);
    p->name = pipeline + " " + c.name();
  }
  if (compileAndTime(state, *p, pipeline))
    setCounters(state, c, p->usefulPairs, p->blockDensity);
}

/// The OpenBLAS-unfused peer on the same inputs.
void runOpenBlas(benchmark::State &state, const Config &c) {
  std::unique_ptr<Prepared> &p = cache()["openblas|" + c.name()];
  if (!p) {
    p = prepareInputs(c);
    p->scratch.resize(c.threads * (c.len * c.len + c.len));
    p->out.resize(c.heads * c.len * c.dim);
  }
  auto call = [&] {
    unfusedAttention(p->inputs[0].as<float>(), p->inputs[1].as<float>(),
                     p->inputs[2].as<float>(), p->out.data(), p->scratch.data(),
                     c.heads, c.len, c.dim, c.threads, p->mask);
  };
  call(); // untimed warm-up, as for every peer
  for (auto _ : state) {
    call();
    benchmark::DoNotOptimize(p->out.data());
  }
  setCounters(state, c, p->usefulPairs);
}

/// The Halide peer (AOT, one function per family) on the same inputs.
void runHalide(benchmark::State &state, const Config &c) {
  using HalideFn =
      int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, int32_t,
              halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);
  static const std::map<std::string, HalideFn> functions{
      {"dense", halide_attention_dense},
      {"causal", halide_attention_causal},
      {"local", halide_attention_local},
      {"relbias", halide_attention_relbias},
      {"padding", halide_attention_padding},
      {"graph", halide_attention_graph}};
  std::unique_ptr<Prepared> &p = cache()["halide|" + c.name()];
  if (!p) {
    p = prepareInputs(c);
    p->out.resize(c.heads * c.len * c.dim);
    // The graph family reads a dense u8 mask [i][j] built from the CSR.
    if (c.family == "graph") {
      p->graphMask.assign(c.len * c.len, 0);
      for (int64_t i = 0; i < c.len; ++i)
        for (int32_t e = p->mask.rowPtr[i]; e < p->mask.rowPtr[i + 1]; ++e)
          p->graphMask[i * c.len + p->mask.colIdx[e]] = 1;
    } else {
      p->graphMask.assign(1, 0);
    }
  }
  // Halide is x-first: our row-major [H, L, E] is its [E, L, H].
  auto view = [&](float *data) {
    return Halide::Runtime::Buffer<float>(data, int(c.dim), int(c.len),
                                          int(c.heads));
  };
  auto q = view(p->inputs[0].as<float>()), k = view(p->inputs[1].as<float>()),
       v = view(p->inputs[2].as<float>()), out = view(p->out.data());
  std::vector<float> noTable(c.heads, 0.f);
  Halide::Runtime::Buffer<float> table =
      c.family == "relbias"
          ? Halide::Runtime::Buffer<float>(p->inputs[3].as<float>(), 129,
                                           int(c.heads))
          : Halide::Runtime::Buffer<float>(noTable.data(), 1, int(c.heads));
  int graphExtent = c.family == "graph" ? int(c.len) : 1;
  Halide::Runtime::Buffer<uint8_t> graph(p->graphMask.data(), graphExtent,
                                         graphExtent);
  int kvLength = c.family == "padding" ? int(p->mask.kvLength) : int(c.len);
  // A fresh pool per benchmark: a pool that grew to two threads keeps
  // both working whatever halide_set_num_threads says afterwards.
  halide_shutdown_thread_pool();
  halide_set_num_threads(c.threads);
  HalideFn fn = functions.at(c.family);
  if (int err = fn(q, k, v, kvLength, table, graph, out)) { // warm-up
    state.SkipWithError(("Halide error " + std::to_string(err)).c_str());
    return;
  }
  for (auto _ : state)
    fn(q, k, v, kvLength, table, graph, out);
  setCounters(state, c, p->usefulPairs);
}

/// attn-mlir's tiled pipeline on `c` (c.threads threads).
void registerTiled(const Config &c) {
  std::string tiled =
      llvm::formatv("attn-cpu-pipeline{{threads={0}}", c.threads);
  benchmark::RegisterBenchmark(
      ("attn-mlir/" + c.name()).c_str(),
      [c, tiled](benchmark::State &s) { runMlir(s, c, tiled); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

/// bf16 attention (bf16 dot products with f32 accumulation on AVX512-BF16
/// targets, else computed in f32) next to PyTorch's bf16 SDPA: attn-mlir
/// only (the C peers take f32).
void registerReducedPrecision(bool full) {
  std::vector<int64_t> lens = full ? std::vector<int64_t>{1024, 4096, 8192}
                                   : std::vector<int64_t>{1024, 4096};
  for (std::string family : {"dense-bf16", "causal-bf16"})
    for (int64_t len : lens)
      for (int threads : {1, 2})
        registerTiled(Config{family, len, 64, 8, threads});
}

void registerAll(bool full) {
  std::vector<std::string> families{"dense",   "causal",  "local",
                                    "relbias", "padding", "graph"};
  std::vector<int64_t> lens =
      full ? std::vector<int64_t>{512, 1024, 2048, 4096, 8192}
           : std::vector<int64_t>{512, 1024, 2048, 4096};
  std::vector<int64_t> dims =
      full ? std::vector<int64_t>{64, 128} : std::vector<int64_t>{64};
  for (const std::string &family : families)
    for (int64_t dim : dims)
      for (int64_t len : lens)
        for (int threads : {1, 2}) {
          Config c{family, len, dim, 8, threads};
          std::string suffix = c.name();
          registerTiled(c);
          benchmark::RegisterBenchmark(
              ("openblas-unfused/" + suffix).c_str(),
              [c](benchmark::State &s) { runOpenBlas(s, c); })
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
          benchmark::RegisterBenchmark(
              ("halide/" + suffix).c_str(),
              [c](benchmark::State &s) { runHalide(s, c); })
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
          if (len == 512 && threads == 1)
            benchmark::RegisterBenchmark(
                ("attn-mlir-reference/" + suffix).c_str(),
                [c](benchmark::State &s) {
                  runMlir(s, c, "attn-reference-pipeline");
                })
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
        }
}

/// Variants written as mask_mod regions next to their built-in or dense-bias
/// forms: causal as a region vs the causal kind (L = 4096), 16 documents
/// from a doc-id tensor vs the same mask as a -inf bias (L = 8192, 2048 for
/// quick runs); attn-mlir only (PyTorch's FlexAttention in peers/).
void registerVariants(bool full) {
  // The plain causal family at the same sizes is registered by registerAll.
  std::vector<std::pair<std::string, int64_t>> runs{
      {"causal-region", full ? 4096 : 1024},
      {"documents16", full ? 8192 : 2048},
      {"documents16-bias", full ? 8192 : 2048}};
  for (auto [family, len] : runs)
    for (int threads : {1, 2})
      registerTiled(Config{family, len, 64, 8, threads});
}

/// Graph-masked vs dense-masked attention at L = 4096 (and 1024 for quick
/// runs), with and without reordering; attn-mlir only.
void registerGraphMasks() {
  for (int64_t density : {1, 5, 20})
    for (int64_t len : {1024, 4096})
      for (int threads : {1, 2})
        for (std::string kind :
             {"graph%d-shuffled", "graph%d-rcm", "graph%d-shuffled-tiles",
              "graph%d-rcm-tiles", "biasmask%d"}) {
          std::string family = llvm::formatv(
              kind.replace(kind.find("%d"), 2, "{0}").c_str(), density);
          Config c{family, len, 64, 8, threads};
          std::string pipeline = llvm::formatv(
              "attn-cpu-pipeline{{threads={0}{1}}", threads,
              parseGraphFamily(family).tiles ? " graph-edge-density=0" : "");
          benchmark::RegisterBenchmark(
              ("attn-mlir/" + c.name()).c_str(),
              [c, pipeline](benchmark::State &s) { runMlir(s, c, pipeline); })
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
        }
}

/// Fused vs unfused GAT (PyG GATConv sizes: F = 64 input features, H = 8
/// heads of C = 8 channels, concat, self loops) on an Erdos-Renyi graph of
/// `nodes` nodes and average in-degree 16. Counter: edges per second
/// (CSR edges + self loops).
void runGat(benchmark::State &state, int64_t nodes,
            const std::string &pipeline) {
  std::unique_ptr<Prepared> &p =
      cache()[pipeline + "|gat" + std::to_string(nodes)];
  int64_t f = 64, heads = 8, ch = 8;
  if (!p) {
    p = std::make_unique<Prepared>();
    graph::Csr csr =
        graph::buildInEdgeCsr(graph::erdosRenyi(nodes, 16, /*seed=*/1));
    std::string module = llvm::formatv(
        "func.func @attn(%x: tensor<{0}x{1}xf32>, %w: tensor<{2}x{1}xf32>, "
        "%as: tensor<{3}x{4}xf32>, %ad: tensor<{3}x{4}xf32>, "
        "%rp: tensor<{5}xi32>, %ci: tensor<{6}xi32>) -> tensor<{0}x{2}xf32> "
        "{{\n"
        "  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : "
        "(tensor<{0}x{1}xf32>, "
        "tensor<{2}x{1}xf32>, tensor<{3}x{4}xf32>, tensor<{3}x{4}xf32>, "
        "tensor<{5}xi32>, tensor<{6}xi32>) -> tensor<{0}x{2}xf32>\n"
        "  return %y : tensor<{0}x{2}xf32>\n}\n",
        nodes, f, heads * ch, heads, ch, nodes + 1, csr.numEdges());
    p->module = parseSourceString<ModuleOp>(module, &context());
    auto func = p->module->lookupSymbol<func::FuncOp>("attn");
    p->inputs = generateInputs(func, /*seed=*/1, /*magnitude=*/1.0);
    for (int64_t i = 0; i <= nodes; ++i)
      p->inputs[4].setInt(i, csr.rowPtr[i]);
    for (int64_t e = 0; e < csr.numEdges(); ++e)
      p->inputs[5].setInt(e, csr.colIdx[e]);
    p->usefulPairs = double(csr.numEdges() + nodes);
    p->name = pipeline + " gat N" + std::to_string(nodes);
  }
  if (!compileAndTime(state, *p, pipeline))
    return;
  state.counters["edges_per_s"] = benchmark::Counter(
      p->usefulPairs, benchmark::Counter::kIsIterationInvariantRate);
}

void registerGat() {
  for (int threads : {1, 2})
    for (bool fused : {true, false}) {
      std::string pipeline =
          llvm::formatv("{0}attn-cpu-pipeline{{threads={1}}",
                        fused ? "" : "attn-lower-gat-unfused,", threads);
      std::string name =
          llvm::formatv("{0}/N100000/D16/H8/C8/T{1}",
                        fused ? "gat-fused" : "gat-unfused", threads);
      benchmark::RegisterBenchmark(
          name.c_str(),
          [pipeline](benchmark::State &s) { runGat(s, 100000, pipeline); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
}

/// GPT generation: one @decode step with `ctx` cached positions against
/// @forward over the whole prefix of `ctx` tokens (what a token costs when
/// generating without a cache), on one seeded GPT: 4 layers, width 384, 6
/// heads, vocabulary 4096, a cache of 512 positions. Counters: flops per call
/// (2 x the multiply-adds of projections, MLP, logits and attention) and
/// tokens/s.
constexpr int64_t kGptLayers = 4, kGptWidth = 384, kGptHeads = 6,
                  kGptVocab = 4096, kGptCache = 512;

/// 2 x multiply-adds of `tokens` new tokens attending to `keys` keys each
/// (on average).
double gptFlops(double tokens, double keys) {
  double d = kGptWidth;
  double perToken = kGptLayers * 12 * d * d + kGptVocab * d;
  return 2 * tokens * (perToken + kGptLayers * 2 * keys * d);
}

/// The seeded GPT compiled for `seqLen` positions, or null (error in `why`).
std::unique_ptr<Model> loadGpt(int64_t seqLen, std::string &why) {
  llvm::SmallString<128> path;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "attn-bench-gpt", "json", fd, path)) {
    why = ec.message();
    return nullptr;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << llvm::formatv("{{\"kind\": \"gpt\", \"vocab_size\": {0}, "
                        "\"n_positions\": {1}, \"n_embd\": {2}, \"n_layer\": "
                        "{3}, \"n_head\": {4}, \"seq_len\": {5}}",
                        kGptVocab, kGptCache, kGptWidth, kGptLayers, kGptHeads,
                        seqLen);
  }
  llvm::Expected<std::unique_ptr<Model>> m = Model::load(path);
  llvm::sys::fs::remove(path);
  if (!m) {
    why = llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

void runGpt(benchmark::State &state, bool decode, int64_t ctx) {
  std::string why;
  std::unique_ptr<Model> model = loadGpt(decode ? kGptCache : ctx, why);
  if (!model) {
    state.SkipWithError(why.c_str());
    return;
  }
  llvm::Expected<HostTensor> weights = packWeights(*model, nullptr, 1);
  if (!weights) {
    state.SkipWithError(llvm::toString(weights.takeError()).c_str());
    return;
  }
  OwningOpRef<ModuleOp> module;
  std::string fn = decode ? "decode" : "forward";
  if (decode) {
    module = ModuleOp::create(UnknownLoc::get(&context()));
    model->addGeneration(*module, /*prefillLength=*/8);
  } else {
    module = model->build(context());
  }
  JitOptions options;
  options.pipeline = "attn-cpu-pipeline";
  auto jit = JitModule::compile(*module, options);
  if (!jit) {
    state.SkipWithError(llvm::toString(jit.takeError()).c_str());
    return;
  }
  llvm::Expected<std::vector<HostTensor>> results =
      (*jit)->allocateResults(fn);
  const FunctionType *sig = (*jit)->signature(fn);
  if (!results || !sig) {
    state.SkipWithError(results ? "no signature"
                                : llvm::toString(results.takeError()).c_str());
    return;
  }
  std::vector<HostTensor> inputs;
  for (Type t : sig->getInputs().drop_back()) {
    auto rt = cast<RankedTensorType>(t);
    HostTensor h(*dtypeOf(rt.getElementType()), rt.getShape());
    for (int64_t i = 0; i < h.numElements(); ++i)
      h.setDouble(i, h.dtype() == DType::i64 ? (i * 7) % kGptVocab
                                             : 0.01 * ((i % 13) - 6));
    inputs.push_back(std::move(h));
  }
  if (decode)
    inputs[1].setInt(0, ctx); // the new token's position: ctx cached keys
  std::vector<HostTensor *> in, out;
  for (HostTensor &t : inputs)
    in.push_back(&t);
  in.push_back(&*weights);
  for (HostTensor &t : *results)
    out.push_back(&t);
  if (llvm::Error err = (*jit)->invoke(fn, in, out)) { // warm-up
    state.SkipWithError(llvm::toString(std::move(err)).c_str());
    return;
  }
  for (auto _ : state)
    cantFail((*jit)->invoke(fn, in, out));
  // Per generated token: decode computes one; the forward recomputes ctx
  // tokens (causal: ctx / 2 keys each on average) to get one.
  double flops = decode ? gptFlops(1, ctx + 1) : gptFlops(ctx, (ctx + 1) / 2.0);
  state.counters["flops_per_token"] = flops;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tokens_per_s"] =
      benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

void registerGeneration() {
  for (int64_t ctx : {32, 64, 128, 256, 511})
    benchmark::RegisterBenchmark(
        ("gpt-decode/ctx" + std::to_string(ctx)).c_str(),
        [ctx](benchmark::State &s) { runGpt(s, /*decode=*/true, ctx); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  benchmark::RegisterBenchmark(
      "gpt-forward/ctx256",
      [](benchmark::State &s) { runGpt(s, /*decode=*/false, 256); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

} // namespace

int main(int argc, char **argv) {
  bool full = false;
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--full") == 0)
      full = true;
    else if (std::strcmp(argv[i], "--check") == 0)
      checkOutputs = true;
    else
      args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());

  // OpenMP threads that spin long after their last parallel region steal
  // the core from the next benchmark's threads on a 2-core machine
  // (measured: 3x slowdowns with libomp's default 200 ms), and threads that
  // sleep at once (OMP_WAIT_POLICY=passive) must be woken for every region
  // and barrier: bf16 causal attention on AMX tiles, L = 1024, two threads
  // 0.98-1.03 ms against 0.79-0.83 (docs/Rationale.md, "Threads"). libomp
  // spins 1 ms, then sleeps (as libgomp, PyTorch's OpenMP, spins a while by
  // default); an OMP_WAIT_POLICY or KMP_BLOCKTIME of the environment wins.
  if (!std::getenv("OMP_WAIT_POLICY"))
    setenv("KMP_BLOCKTIME", "1", /*overwrite=*/0);
  const char *waitPolicy = std::getenv("OMP_WAIT_POLICY");
  const char *blocktime = std::getenv("KMP_BLOCKTIME");
  benchmark::AddCustomContext("OMP_WAIT_POLICY",
                              waitPolicy ? waitPolicy : "(unset)");
  benchmark::AddCustomContext("KMP_BLOCKTIME",
                              blocktime ? blocktime : "(unset)");
  const char *coretype = std::getenv("OPENBLAS_CORETYPE");
  benchmark::AddCustomContext("openblas_core", openblasCoreName());
  benchmark::AddCustomContext("OPENBLAS_CORETYPE",
                              coretype ? coretype : "(unset)");
  FmaPeak peak1 = measureFmaPeak(1), peak2 = measureFmaPeak(2);
  benchmark::AddCustomContext("fma_peak_gflops_1t",
                              std::to_string(peak1.gflops));
  benchmark::AddCustomContext("fma_peak_gflops_2t",
                              std::to_string(peak2.gflops));
  benchmark::AddCustomContext("fma_peak_isa", peak1.isa);
  const CpuTarget &target = CpuTarget::host();
  // bf16 attention runs on bf16 dot products where the target has them.
  if (target.hasBf16DotProduct()) {
    FmaPeak dot1 = measureBf16DotPeak(1), dot2 = measureBf16DotPeak(2);
    benchmark::AddCustomContext("bf16_dot_peak_gflops_1t",
                                std::to_string(dot1.gflops));
    benchmark::AddCustomContext("bf16_dot_peak_gflops_2t",
                                std::to_string(dot2.gflops));
  }
  // ... and on AMX tiles where it has AMX.
  if (target.hasAmxBf16()) {
    FmaPeak amx1 = measureAmxBf16Peak(1), amx2 = measureAmxBf16Peak(2);
    benchmark::AddCustomContext("amx_bf16_peak_gflops_1t",
                                std::to_string(amx1.gflops));
    benchmark::AddCustomContext("amx_bf16_peak_gflops_2t",
                                std::to_string(amx2.gflops));
  }
  benchmark::AddCustomContext("target_cpu", target.cpu);
  benchmark::AddCustomContext("target_isa", target.isaName().str());

  registerAll(full);
  registerReducedPrecision(full);
  registerGraphMasks();
  registerVariants(full);
  registerGat();
  registerGeneration();
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data()))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  cache().clear();
  if (checkFailed) {
    llvm::errs() << "attn-bench: --check found mismatches (see above)\n";
    return 1;
  }
  return 0;
}
