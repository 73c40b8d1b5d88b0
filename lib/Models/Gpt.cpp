//===- Gpt.cpp - GPT-2-style causal decoder --------------------------------===//
//
// Token and position embeddings, pre-norm blocks with causal attn.mha (the
// Conv1D c_attn / c_proj weights are stored in x out, so they are transposed
// into PyTorch's in_proj / out_proj layout in the IR), a gelu_new MLP, ln_f,
// and logits tied to the token embedding. Weight names are GPT-2's
// (Hugging Face GPT2Model state_dict).
//
//===----------------------------------------------------------------------===//

#include "lib/Models/ModelKinds.h"
#include "lib/Models/NetBuilder.h"
#include "lib/Transforms/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {

class Gpt : public Model {
public:
  using Model::basePrefix;
  using Model::batchSize;
  using Model::checkpointFile;
  using Model::folderPath;
  using Model::padded;
  int64_t vocab = 0, context = 0, seqLen = 0, dModel = 0, heads = 0,
          layers = 0, inner = 0;
  double eps = 1e-5;
  /// "gelu_new" (tanh approximation, GPT-2's), "gelu" (erf) or "relu".
  std::string activation = "gelu_new";
  /// The output: "logits" (tied to wte, or lm_head.weight when untied) or
  /// "last_hidden_state" (GPT2Model).
  bool lmHead = true, tied = true;
  /// Weight names' prefix ("transformer." for a GPT2LMHeadModel folder).
  std::string p0;

  void declare() {
    items = "sequences";
    padded = PaddedSequence{0, 1, 1};
    inputSpecs.push_back({"tokens", DType::i64, {batchSize, seqLen}});
    outputSpec = lmHead
                     ? TensorSpec{"logits", DType::f32, {batchSize, seqLen, vocab}}
                     : TensorSpec{"last_hidden_state", DType::f32,
                                  {batchSize, seqLen, dModel}};
    auto w = [&](std::string name, llvm::SmallVector<int64_t, 4> shape) {
      weightSpecs.push_back({p0 + name, DType::f32, std::move(shape)});
    };
    w("wte.weight", {vocab, dModel});
    w("wpe.weight", {context, dModel});
    for (int64_t n = 0; n < layers; ++n) {
      std::string p = "h." + std::to_string(n) + ".";
      w(p + "ln_1.weight", {dModel});
      w(p + "ln_1.bias", {dModel});
      w(p + "attn.c_attn.weight", {dModel, 3 * dModel});
      w(p + "attn.c_attn.bias", {3 * dModel});
      w(p + "attn.c_proj.weight", {dModel, dModel});
      w(p + "attn.c_proj.bias", {dModel});
      w(p + "ln_2.weight", {dModel});
      w(p + "ln_2.bias", {dModel});
      w(p + "mlp.c_fc.weight", {dModel, inner});
      w(p + "mlp.c_fc.bias", {inner});
      w(p + "mlp.c_proj.weight", {inner, dModel});
      w(p + "mlp.c_proj.bias", {dModel});
    }
    w("ln_f.weight", {dModel});
    w("ln_f.bias", {dModel});
    if (lmHead && !tied)
      weightSpecs.push_back({"lm_head.weight", DType::f32, {vocab, dModel}});
  }

  /// The weight-name prefix of block `n` ("transformer.h.3.").
  std::string blockName(int64_t n) const {
    return p0 + "h." + std::to_string(n) + ".";
  }

  Value weight(NetBuilder &net, const std::string &name) const {
    return net.weight(p0 + name);
  }

  Value activate(NetBuilder &net, Value x) const {
    return net.activation(activation, x);
  }

  // --- Generation over a K/V cache (docs/models.md, "Generation") ---

  int64_t headDim() const { return dModel / heads; }
  int64_t cacheLength() const override { return lmHead ? seqLen : 0; }

  std::vector<EntryPoint> generationEntryPoints(int64_t prefill) const override {
    if (!lmHead)
      return {};
    int64_t b = batchSize, hd = headDim();
    return {
        {"prefill",
         {{"tokens", DType::i64, {b, prefill}}},
         {{"logits", DType::f32, {b, prefill, vocab}},
          {"kv", DType::f32, {layers, 2, b, heads, prefill, hd}}}},
        {"decode",
         {{"token", DType::i64, {b, 1}},
          {"position", DType::i64, {b}},
          {"cache", DType::f32, {layers, 2, b, heads, seqLen, hd}}},
         {{"logits", DType::f32, {b, vocab}},
          {"kv", DType::f32, {layers, 2, b, heads, hd}}}}};
  }

  /// x[b, t, d] = wte[tokens[b, t], d] + wpe[position, d], the position t,
  /// or positions[b] when given (ids are checked by the caller).
  Value embed(NetBuilder &net, Value tokens, Value positions) const {
    OpBuilder &b = net.builder();
    Location loc = net.getLoc();
    MLIRContext *ctx = b.getContext();
    int64_t bsz = getShape(tokens)[0], len = getShape(tokens)[1];
    Value wte = weight(net, "wte.weight"), wpe = weight(net, "wpe.weight");
    SmallVector<Value> ins{tokens};
    SmallVector<AffineMap> maps{dimsMap(ctx, 3, {0, 1})};
    if (positions) {
      ins.push_back(positions);
      maps.push_back(dimsMap(ctx, 3, {0}));
    }
    return buildElementwise(
        b, loc, net.empty({bsz, len, dModel}), ins, maps,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value col = linalg::IndexOp::create(nb, nl, 2);
          Value row = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
          Value pos = positions ? arith::IndexCastOp::create(
                                      nb, nl, nb.getIndexType(), a[1])
                                      .getResult()
                                : linalg::IndexOp::create(nb, nl, 1).getResult();
          Value e = tensor::ExtractOp::create(nb, nl, wte, ValueRange{row, col});
          Value p = tensor::ExtractOp::create(nb, nl, wpe, ValueRange{pos, col});
          return arith::AddFOp::create(nb, nl, e, p).getResult();
        });
  }

  /// Columns [which * D, (which + 1) * D) of c_attn's output y (B x T x 3D)
  /// as B x H x T x hd.
  Value splitHeads(NetBuilder &net, Value y, int64_t which) const {
    OpBuilder &b = net.builder();
    MLIRContext *ctx = b.getContext();
    int64_t bsz = getShape(y)[0], len = getShape(y)[1], hd = headDim();
    AffineExpr bd, h, t, c;
    bindDims(ctx, bd, h, t, c);
    AffineMap read =
        AffineMap::get(4, 0, {bd, t, h * hd + c + which * dModel}, ctx);
    return buildElementwise(
        b, net.getLoc(), net.empty({bsz, heads, len, hd}), {y}, {read},
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  }

  /// B x H x T x hd heads merged, then c_proj of block `p`.
  Value mergeAndProject(NetBuilder &net, Value attn, const std::string &p) const {
    int64_t bsz = getShape(attn)[0], len = getShape(attn)[2];
    Value merged = net.reshape(net.transpose(attn, {0, 2, 1, 3}),
                               {bsz, len, dModel});
    return net.conv1d(merged, weight(net, p + "attn.c_proj.weight"),
                      weight(net, p + "attn.c_proj.bias"));
  }

  /// The offsets, sizes and strides of kv[layer, which] in a tensor of
  /// `shape` (layers x 2 x ...).
  struct KvSlice {
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };
  static KvSlice kvSlice(OpBuilder &b, ArrayRef<int64_t> shape,
                         OpFoldResult layer, int64_t which) {
    KvSlice s{SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(0)),
              {b.getIndexAttr(1), b.getIndexAttr(1)},
              SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(1))};
    s.offsets[0] = layer;
    s.offsets[1] = b.getIndexAttr(which);
    for (int64_t d : shape.drop_front(2))
      s.sizes.push_back(b.getIndexAttr(d));
    return s;
  }

  /// `part` (B x H x T x hd, or B x H x hd) into kv[layer, which].
  Value storeKv(NetBuilder &net, Value kv, Value part, int64_t layer,
                int64_t which) const {
    ArrayRef<int64_t> kvShape = getShape(kv);
    KvSlice s =
        kvSlice(net.builder(), kvShape, net.builder().getIndexAttr(layer), which);
    SmallVector<int64_t> full{1, 1};
    full.append(kvShape.begin() + 2, kvShape.end());
    return tensor::InsertSliceOp::create(net.builder(), net.getLoc(),
                                         net.reshape(part, full), kv, s.offsets,
                                         s.sizes, s.strides);
  }

  /// cache[layer, which] as B x H x Lc x hd (a slice: no copy).
  Value loadKv(NetBuilder &net, Value cache, OpFoldResult layer,
               int64_t which) const {
    ArrayRef<int64_t> shape = getShape(cache);
    KvSlice s = kvSlice(net.builder(), shape, layer, which);
    Value slice = tensor::ExtractSliceOp::create(
        net.builder(), net.getLoc(), cache, s.offsets, s.sizes, s.strides);
    return net.reshape(slice, shape.drop_front(2));
  }

  SmallVector<Value> buildEntry(NetBuilder &net, const EntryPoint &entry,
                                ValueRange inputs) const override {
    OpBuilder &b = net.builder();
    MLIRContext *ctx = b.getContext();
    bool decode = entry.name == "decode";
    Value tokens = inputs[0];
    int64_t bsz = batchSize, len = getShape(tokens)[1], hd = headDim();
    Value x = embed(net, tokens, decode ? inputs[1] : Value());
    Value kv = net.empty(entry.results[1].shape);
    // Each layer a call (NetBuilder::layer) returning its new x, k and v;
    // k and v go into the kv result here.
    SmallVector<Value> layerArgs{Value()};
    if (decode)
      layerArgs.append({inputs[1], inputs[2]});
    for (int64_t n = 0; n < layers; ++n) {
      layerArgs[0] = x;
      SmallVector<Value> out = net.layer(
          "h", n, [&](int64_t n) { return blockName(n); }, layerArgs,
          [&](NetBuilder &net, StringRef full, ValueRange args) {
      std::string p = full.drop_front(p0.size()).str();
      Value x = args[0];
      OpBuilder &b = net.builder();
      Location loc = net.getLoc();
      Value kNew, vNew;
      Value h = net.layerNorm(x, weight(net, p + "ln_1.weight"),
                              weight(net, p + "ln_1.bias"), eps);
      Value y = net.conv1d(h, weight(net, p + "attn.c_attn.weight"),
                           weight(net, p + "attn.c_attn.bias"));
      Value q = splitHeads(net, y, 0), k = splitHeads(net, y, 1),
            v = splitHeads(net, y, 2);
      Value attn;
      if (!decode) {
        // The prompt: causal attention over its own keys.
        auto type = RankedTensorType::get({bsz, heads, len, hd}, net.f32());
        attn = SdpaOp::create(b, loc, type, /*lse=*/Type(), q, k, v,
                              Value(), Value(), Value(), Value(), Value(),
                              Value(), Value(),
                              MaskKindAttr::get(ctx, MaskKind::causal),
                              IntegerAttr(), FloatAttr(),
                              AlignAttr::get(ctx, Align::bottom_right))
                   .getOutput();
        kNew = k;
        vNew = v;
      } else {
        // One query: the cache's first position[b] keys (a key tile past
        // them is never visited), then the new key, merged through the
        // log-sum-exp so that the cache is read, never copied.
        Value kc = loadKv(net, args[2], net.layerIndex(), 0),
              vc = loadKv(net, args[2], net.layerIndex(), 1);
        auto outType = RankedTensorType::get({bsz, heads, 1, hd}, net.f32());
        auto lseType = RankedTensorType::get({bsz, heads, 1}, net.f32());
        auto sdpa = SdpaOp::create(
            b, loc, outType, lseType, q, kc, vc, /*kv_lengths=*/args[1],
            Value(), Value(), Value(), Value(), Value(), Value(),
            MaskKindAttr::get(ctx, MaskKind::dense), IntegerAttr(), FloatAttr(),
            AlignAttr::get(ctx, Align::bottom_right));
        Value q3 = net.reshape(q, {bsz, heads, hd}),
              k3 = net.reshape(k, {bsz, heads, hd}),
              v3 = net.reshape(v, {bsz, heads, hd});
        // s[b, h] = q . k_new / sqrt(hd), the new key's score.
        Value s = buildContraction(b, loc, q3, dimsMap(ctx, 3, {0, 1, 2}), k3,
                                   dimsMap(ctx, 3, {0, 1, 2}), {bsz, heads},
                                   dimsMap(ctx, 3, {0, 1}));
        double scale = 1.0 / std::sqrt(static_cast<double>(hd));
        Value merged = buildElementwise(
            b, loc, net.empty({bsz, heads, hd}),
            {net.reshape(sdpa.getOutput(), {bsz, heads, hd}),
             net.reshape(sdpa.getLse(), {bsz, heads}), s, v3},
            {dimsMap(ctx, 3, {0, 1, 2}), dimsMap(ctx, 3, {0, 1}),
             dimsMap(ctx, 3, {0, 1}), dimsMap(ctx, 3, {0, 1, 2})},
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Type f = a[0].getType();
              Value sn = arith::MulFOp::create(
                  nb, nl, a[2], buildFloatConstant(nb, nl, f, scale));
              Value m = arith::MaximumFOp::create(nb, nl, a[1], sn);
              Value wc = math::ExpOp::create(
                  nb, nl, arith::SubFOp::create(nb, nl, a[1], m));
              Value wn = math::ExpOp::create(
                  nb, nl, arith::SubFOp::create(nb, nl, sn, m));
              Value num = arith::AddFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, a[0], wc),
                  arith::MulFOp::create(nb, nl, a[3], wn));
              return arith::DivFOp::create(
                         nb, nl, num, arith::AddFOp::create(nb, nl, wc, wn))
                  .getResult();
            });
        attn = net.reshape(merged, {bsz, heads, 1, hd});
        kNew = k3;
        vNew = v3;
      }
      x = net.add(x, mergeAndProject(net, attn, p));
      return SmallVector<Value>{mlpBlock(net, x, p), kNew, vNew};
          });
      x = out[0];
      kv = storeKv(net, kv, out[1], n, 0);
      kv = storeKv(net, kv, out[2], n, 1);
    }
    Value logits = head(net, x, weight(net, "wte.weight"));
    if (decode)
      logits = net.reshape(logits, {bsz, vocab});
    return {logits, kv};
  }

  llvm::Expected<HostTensor> defaultInput(size_t index,
                                          uint64_t seed) const override {
    HostTensor t(DType::i64, inputSpecs[index].shape);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.as<int64_t>()[i] = static_cast<int64_t>(
          (seededUniform(seed, 2000, i) + 1.0f) * 0.5f * vocab) % vocab;
    return t;
  }

  llvm::Error validateInput(size_t, const HostTensor &t) const override {
    for (int64_t i = 0; i < t.numElements(); ++i) {
      int64_t id = t.getInt(i);
      if (id < 0 || id >= vocab)
        return llvm::createStringError(
            "input 'tokens': token id %lld at flat index %lld is outside [0, "
            "%lld) (vocab_size)",
            (long long)id, (long long)i, (long long)vocab);
    }
    return llvm::Error::success();
  }

  bool ignoresUnreadTensor(llvm::StringRef name) const override {
    // Older GPT-2 checkpoints store the causal mask buffers (h.N.attn.bias,
    // h.N.attn.masked_bias); a tied or base model leaves lm_head.weight.
    return name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias") ||
           name == "lm_head.weight";
  }

  Value buildForward(NetBuilder &net, ValueRange inputs) const override {
    Value x = embed(net, inputs[0], /*positions=*/Value());

    AttentionMask causal;
    causal.kind = MaskKind::causal;
    for (int64_t n = 0; n < layers; ++n)
      x = net.layer("h", n, [&](int64_t n) { return blockName(n); }, x,
                    [&](NetBuilder &net, StringRef full, ValueRange args) {
        std::string p = full.drop_front(p0.size()).str();
        Value x = args[0];
        Value h = net.layerNorm(x, weight(net, p + "ln_1.weight"),
                                weight(net, p + "ln_1.bias"), eps);
        h = net.selfAttention(
            h, net.transpose(weight(net, p + "attn.c_attn.weight"), {1, 0}),
            weight(net, p + "attn.c_attn.bias"),
            net.transpose(weight(net, p + "attn.c_proj.weight"), {1, 0}),
            weight(net, p + "attn.c_proj.bias"), heads, causal);
        x = net.add(x, h);
        return SmallVector<Value>{mlpBlock(net, x, p)};
      })[0];
    return head(net, x, weight(net, "wte.weight"));
  }

  /// x + c_proj(act(c_fc(ln_2(x)))) of block `p`.
  Value mlpBlock(NetBuilder &net, Value x, const std::string &p) const {
    Value h = net.layerNorm(x, weight(net, p + "ln_2.weight"),
                            weight(net, p + "ln_2.bias"), eps);
    h = activate(net, net.conv1d(h, weight(net, p + "mlp.c_fc.weight"),
                                 weight(net, p + "mlp.c_fc.bias")));
    return net.add(x, net.conv1d(h, weight(net, p + "mlp.c_proj.weight"),
                                 weight(net, p + "mlp.c_proj.bias")));
  }

  /// ln_f, then the logits (tied to the token embedding, as
  /// GPT2LMHeadModel's lm_head, or lm_head.weight) or the hidden state.
  Value head(NetBuilder &net, Value x, Value wte) const {
    x = net.layerNorm(x, weight(net, "ln_f.weight"), weight(net, "ln_f.bias"),
                      eps);
    if (!lmHead)
      return x;
    Value w = tied ? wte : net.weight("lm_head.weight");
    // A decode step's one row per sequence: the V x D weight read along its
    // rows, not transposed per call (that transpose took half the step).
    ArrayRef<int64_t> shape = getShape(x);
    if (shape[0] * shape[1] <= kFewRows)
      return net.linearFewRows(x, w, /*bias=*/Value());
    return net.linear(x, w, /*bias=*/Value());
  }

  /// Rows up to which a product reads its weight untransposed.
  static constexpr int64_t kFewRows = 8;
};

} // namespace

/// The checks both parsers share, then the weight list.
/// `seqLenOption`: the length is attn-compile's --seq-len, not a key.
static void finishGpt(SpecReader &spec, Gpt &m, llvm::StringRef embdKey,
                      llvm::StringRef headKey, bool seqLenOption) {
  if (spec.failed())
    return;
  checkHeadsDivide(spec, embdKey, m.dModel, headKey, m.heads);
  if (m.seqLen > m.context) {
    if (seqLenOption)
      spec.failOption("seq-len", "n_positions",
                      llvm::Twine(m.seqLen) + " exceeds the model's "
                          "n_positions " + llvm::Twine(m.context));
    else
      spec.fail("seq_len", "sequence length " + llvm::Twine(m.seqLen) +
                               " exceeds n_positions " +
                               llvm::Twine(m.context));
  }
  m.declare();
}

std::unique_ptr<Model> mlir::attn::parseGpt(SpecReader &spec,
                                            const ModelOverrides &o) {
  auto m = std::make_unique<Gpt>();
  m->vocab = spec.integer("vocab_size");
  m->context = spec.integer("n_positions");
  m->dModel = spec.integer("n_embd");
  m->layers = spec.integer("n_layer", std::nullopt, 1, SpecReader::kMaxLayers);
  m->heads = spec.integer("n_head");
  m->seqLen = spec.integer("seq_len");
  if (o.seqLen)
    m->seqLen = o.seqLen;
  m->batchSize = readBatch(spec, o);
  m->eps = spec.positiveNumber("layer_norm_epsilon", 1e-5);
  m->inner = 4 * m->dModel;
  finishGpt(spec, *m, "n_embd", "n_head", o.seqLen != 0);
  return m;
}

std::unique_ptr<Model> mlir::attn::parseHfGpt2(SpecReader &spec,
                                               const ModelOverrides &o,
                                               llvm::StringRef folder) {
  auto m = std::make_unique<Gpt>();
  // GPT2Config's fields (transformers' defaults where it has them).
  std::string arch = readArchitecture(spec, {"GPT2LMHeadModel", "GPT2Model"},
                                      "GPT2LMHeadModel");
  m->lmHead = arch == "GPT2LMHeadModel";
  m->basePrefix = "transformer.";
  m->p0 = m->lmHead ? "transformer." : "";
  m->vocab = spec.integer("vocab_size", 50257);
  m->context = spec.integer("n_positions", 1024);
  m->dModel = spec.integer("n_embd", 768);
  m->layers = spec.integer("n_layer", 12, 1, SpecReader::kMaxLayers);
  m->heads = spec.integer("n_head", 12);
  m->inner = spec.isUnset("n_inner") ? 4 * m->dModel : spec.integer("n_inner");
  m->eps = spec.positiveNumber("layer_norm_epsilon", 1e-5);
  std::string act = spec.choice(
      "activation_function", {"gelu_new", "gelu_pytorch_tanh", "gelu", "relu"},
      llvm::StringRef("gelu_new"));
  m->activation = act == "gelu_pytorch_tanh" ? "gelu_new" : act;
  m->tied = spec.boolean("tie_word_embeddings", true);
  // Settings that change what the model computes and that it does not
  // implement: one error each rather than different numbers.
  spec.check(spec.boolean("scale_attn_weights", true), "scale_attn_weights",
             "false (unscaled attention scores) is not supported");
  spec.check(!spec.boolean("scale_attn_by_inverse_layer_idx", false),
             "scale_attn_by_inverse_layer_idx", "true is not supported");
  spec.check(!spec.boolean("add_cross_attention", false),
             "add_cross_attention", "true (an encoder-decoder GPT-2) is not "
                                    "supported");
  // In f32, upcasting and reordering changes nothing.
  (void)spec.boolean("reorder_and_upcast_attn", false);
  spec.ignoreUnread();
  m->seqLen = o.seqLen ? o.seqLen : m->context;
  m->batchSize = o.batch ? o.batch : 1;
  m->checkpointFile = findFolderCheckpoint(folder);
  m->folderPath = folder.str();
  finishGpt(spec, *m, "n_embd", "n_head", o.seqLen != 0);
  return m;
}
