//===- Vit.cpp - Vision Transformer (torchvision VisionTransformer) -------===//
//
// conv_proj as a patch matrix times the flattened kernel, the class token,
// position embeddings, pre-norm encoder layers (attn.mha with the dense,
// local-window or relative-position-bias mask), the final LayerNorm on the
// class token and the classification head. Weight names are those of
// torchvision.models.VisionTransformer's state_dict.
//
//===----------------------------------------------------------------------===//

#include "lib/Models/ModelKinds.h"
#include "lib/Models/NetBuilder.h"
#include "lib/Transforms/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

class Vit : public Model {
public:
  using Model::basePrefix;
  using Model::batchSize;
  using Model::checkpointFile;
  using Model::folderPath;
  int64_t image = 0, channels = 0, patch = 0, hidden = 0, layers = 0,
          heads = 0, mlp = 0, classes = 0, window = 0, relClip = 0;
  std::string attention;
  std::vector<double> mean, stdDev;
  double eps = 1e-6;
  /// Hugging Face's ViTModel / ViTForImageClassification names and layout
  /// (separate query/key/value, every token through the final LayerNorm)
  /// instead of torchvision's.
  bool hf = false;
  /// Classification logits (else HF ViTModel's last_hidden_state).
  bool classify = true;
  bool qkvBias = true;
  /// "gelu" (erf), "gelu_new" (tanh) or "relu".
  std::string activation = "gelu";
  /// The base model's weight prefix in use ("vit." under a head).
  std::string p0;

  int64_t tokens() const {
    return (image / patch) * (image / patch) + 1;
  }
  std::string layerPrefix(int64_t n) const {
    if (hf)
      return p0 + "encoder.layer." + std::to_string(n) + ".";
    return "encoder.layers.encoder_layer_" + std::to_string(n) + ".";
  }

  /// The weights' names in the two layouts (torchvision's, Hugging Face's).
  std::string classToken() const {
    return hf ? p0 + "embeddings.cls_token" : "class_token";
  }
  std::string patchProj() const {
    return hf ? p0 + "embeddings.patch_embeddings.projection" : "conv_proj";
  }
  std::string posEmbedding() const {
    return hf ? p0 + "embeddings.position_embeddings" : "encoder.pos_embedding";
  }
  std::string norm1() const { return hf ? "layernorm_before" : "ln_1"; }
  std::string norm2() const { return hf ? "layernorm_after" : "ln_2"; }
  std::string outProj() const {
    return hf ? "attention.output.dense" : "self_attention.out_proj";
  }
  std::string fc1() const { return hf ? "intermediate.dense" : "mlp.0"; }
  std::string fc2() const { return hf ? "output.dense" : "mlp.3"; }
  std::string finalNorm() const {
    return hf ? p0 + "layernorm" : "encoder.ln";
  }
  std::string classifier() const { return hf ? "classifier" : "heads.head"; }

  void declare() {
    items = "images";
    inputSpecs.push_back({"images", DType::f32, {batchSize, channels, image, image}});
    outputSpec = classify ? TensorSpec{"logits", DType::f32, {batchSize, classes}}
                          : TensorSpec{"last_hidden_state", DType::f32,
                                       {batchSize, tokens(), hidden}};
    auto w = [&](std::string name, llvm::SmallVector<int64_t, 4> shape) {
      weightSpecs.push_back({std::move(name), DType::f32, std::move(shape)});
    };
    w(classToken(), {1, 1, hidden});
    w(patchProj() + ".weight", {hidden, channels, patch, patch});
    w(patchProj() + ".bias", {hidden});
    w(posEmbedding(), {1, tokens(), hidden});
    for (int64_t n = 0; n < layers; ++n) {
      std::string p = layerPrefix(n);
      w(p + norm1() + ".weight", {hidden});
      w(p + norm1() + ".bias", {hidden});
      if (hf) {
        for (const char *part : {"query", "key", "value"}) {
          std::string q = p + "attention.attention." + part;
          w(q + ".weight", {hidden, hidden});
          if (qkvBias)
            w(q + ".bias", {hidden});
        }
      } else {
        w(p + "self_attention.in_proj_weight", {3 * hidden, hidden});
        w(p + "self_attention.in_proj_bias", {3 * hidden});
      }
      w(p + outProj() + ".weight", {hidden, hidden});
      w(p + outProj() + ".bias", {hidden});
      if (attention == "relative")
        w(p + "self_attention.rel_bias", {heads, 2 * relClip + 1});
      w(p + norm2() + ".weight", {hidden});
      w(p + norm2() + ".bias", {hidden});
      w(p + fc1() + ".weight", {mlp, hidden});
      w(p + fc1() + ".bias", {mlp});
      w(p + fc2() + ".weight", {hidden, mlp});
      w(p + fc2() + ".bias", {hidden});
    }
    w(finalNorm() + ".weight", {hidden});
    w(finalNorm() + ".bias", {hidden});
    if (classify) {
      w(classifier() + ".weight", {classes, hidden});
      w(classifier() + ".bias", {classes});
    }
  }

  /// The packed in-projection of layer `p` ([3D, D] and [3D]): torchvision
  /// stores it so; Hugging Face's query/key/value rows are stacked here (a
  /// copy of 3 D^2 floats per call, against the projection's 3 B T D^2
  /// multiply-adds).
  std::pair<Value, Value> inProjection(NetBuilder &net,
                                       const std::string &p) const {
    if (!hf)
      return {net.weight(p + "self_attention.in_proj_weight"),
              net.weight(p + "self_attention.in_proj_bias")};
    SmallVector<Value, 3> ws, bs;
    for (const char *part : {"query", "key", "value"}) {
      std::string q = p + "attention.attention." + part;
      ws.push_back(net.weight(q + ".weight"));
      if (qkvBias)
        bs.push_back(net.weight(q + ".bias"));
    }
    return {net.concat(ws), qkvBias ? net.concat(bs) : Value()};
  }

  Value activate(NetBuilder &net, Value x) const {
    return net.activation(activation, x);
  }

  bool ignoresUnreadTensor(llvm::StringRef name) const override {
    if (!hf)
      return false;
    // A ViTModel checkpoint's pooler (neither model computes it), and a
    // ViTForImageClassification checkpoint's classifier read as a ViTModel.
    llvm::StringRef base = name;
    base.consume_front(basePrefix);
    return base.starts_with("pooler.") ||
           (!classify && name.starts_with("classifier."));
  }

  Value buildForward(NetBuilder &net, ValueRange inputs) const override {
    OpBuilder &b = net.builder();
    Location loc = net.getLoc();
    MLIRContext *ctx = b.getContext();
    int64_t bsz = batchSize, grid = image / patch, n = grid * grid,
            t = tokens();
    Value x = inputs[0];

    // Per-channel normalisation (x - mean[c]) / std[c].
    if (!mean.empty()) {
      SmallVector<float> m, inv;
      for (int64_t c = 0; c < channels; ++c) {
        m.push_back(static_cast<float>(mean[mean.size() == 1 ? 0 : c]));
        inv.push_back(static_cast<float>(1.0 / stdDev[stdDev.size() == 1 ? 0 : c]));
      }
      auto type = RankedTensorType::get({channels}, net.f32());
      Value mc = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, ArrayRef<float>(m)));
      Value ic = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, ArrayRef<float>(inv)));
      x = buildElementwise(
          b, loc, net.empty(getShape(x)), {x, mc, ic},
          {dimsMap(ctx, 4, {0, 1, 2, 3}), dimsMap(ctx, 4, {1}),
           dimsMap(ctx, 4, {1})},
          [](OpBuilder &nb, Location nl, ValueRange a) {
            return arith::MulFOp::create(
                       nb, nl, arith::SubFOp::create(nb, nl, a[0], a[1]), a[2])
                .getResult();
          });
    }

    // conv_proj (kernel = stride = patch): patches (B*N x C*P*P) times the
    // flattened kernel.
    Value img6 = net.reshape(x, {bsz, channels, grid, patch, grid, patch});
    // patches[b, gh, gw, c, i, j] = img6[b, c, gh, i, gw, j]
    Value patches = net.transpose(img6, {0, 2, 4, 1, 3, 5});
    Value kernel = net.reshape(net.weight(patchProj() + ".weight"),
                               {hidden, channels * patch * patch});
    Value emb = net.linear(net.reshape(patches, {bsz * n, channels * patch * patch}),
                           kernel, net.weight(patchProj() + ".bias"));
    emb = net.reshape(emb, {bsz, n, hidden});

    // [class token; patch embeddings] + position embeddings.
    Value cls = net.reshape(net.weight(classToken()), {hidden});
    Value clsRows = buildElementwise(
        b, loc, net.empty({bsz, 1, hidden}), {cls}, {dimsMap(ctx, 3, {2})},
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    Value seq = net.empty({bsz, t, hidden});
    auto insert = [&](Value src, Value dst, int64_t offset, int64_t rows) {
      return tensor::InsertSliceOp::create(
          b, loc, src, dst,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset),
                                 b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(bsz), b.getIndexAttr(rows),
                                 b.getIndexAttr(hidden)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                 b.getIndexAttr(1)});
    };
    seq = insert(clsRows, seq, 0, 1);
    seq = insert(emb, seq, 1, n);
    Value pos = net.reshape(net.weight(posEmbedding()), {t, hidden});
    x = net.addBroadcast(seq, pos, {1, 2});

    AttentionMask mask;
    if (attention == "local") {
      mask.kind = MaskKind::local;
      mask.windowLeft = mask.windowRight = window;
    }
    for (int64_t l = 0; l < layers; ++l)
      x = net.layer(
          "layer", l, [&](int64_t n) { return layerPrefix(n); }, x,
          [&](NetBuilder &net, StringRef prefix, ValueRange args) {
      std::string p = prefix.str();
      Value x = args[0];
      AttentionMask layerMask = mask;
      if (attention == "relative") {
        layerMask.relBias = net.weight(p + "self_attention.rel_bias");
        layerMask.relClip = relClip;
      }
      Value h = net.layerNorm(x, net.weight(p + norm1() + ".weight"),
                              net.weight(p + norm1() + ".bias"), eps);
      auto [inW, inB] = inProjection(net, p);
      h = net.selfAttention(h, inW, inB, net.weight(p + outProj() + ".weight"),
                            net.weight(p + outProj() + ".bias"), heads,
                            layerMask);
      x = net.add(x, h);
      h = net.layerNorm(x, net.weight(p + norm2() + ".weight"),
                        net.weight(p + norm2() + ".bias"), eps);
      h = activate(net, net.linear(h, net.weight(p + fc1() + ".weight"),
                                   net.weight(p + fc1() + ".bias")));
      h = net.linear(h, net.weight(p + fc2() + ".weight"),
                     net.weight(p + fc2() + ".bias"));
      return SmallVector<Value>{net.add(x, h)};
          })[0];

    // Hugging Face's ViTModel: every token through the final LayerNorm.
    if (!classify)
      return net.layerNorm(x, net.weight(finalNorm() + ".weight"),
                           net.weight(finalNorm() + ".bias"), eps);
    // The class token's row through the final LayerNorm and the head (the
    // LayerNorm is per token, so normalising only that row is the same).
    Value first = tensor::ExtractSliceOp::create(
        b, loc, x,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                               b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(bsz), b.getIndexAttr(1),
                               b.getIndexAttr(hidden)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(1)});
    Value row = net.reshape(first, {bsz, hidden});
    row = net.layerNorm(row, net.weight(finalNorm() + ".weight"),
                        net.weight(finalNorm() + ".bias"), eps);
    return net.linear(row, net.weight(classifier() + ".weight"),
                      net.weight(classifier() + ".bias"));
  }
};

} // namespace

std::unique_ptr<Model> mlir::attn::parseVit(SpecReader &spec,
                                            const ModelOverrides &o) {
  auto m = std::make_unique<Vit>();
  m->image = spec.integer("image_size");
  m->channels = spec.integer("channels", 3);
  m->patch = spec.integer("patch_size");
  m->hidden = spec.integer("hidden_dim");
  m->layers = spec.integer("layers", std::nullopt, 1, SpecReader::kMaxLayers);
  m->heads = spec.integer("heads");
  m->mlp = spec.integer("mlp_dim");
  m->classes = spec.integer("classes");
  m->eps = spec.positiveNumber("layer_norm_eps", 1e-6);
  m->batchSize = readBatch(spec, o);
  m->attention = spec.choice("attention", {"dense", "local", "relative"},
                             llvm::StringRef("dense"));
  if (m->attention == "local")
    m->window = spec.integer("window", std::nullopt, 0);
  if (m->attention == "relative")
    m->relClip = spec.integer("rel_clip", std::nullopt, 1);
  if (const llvm::json::Object *norm = spec.object("normalize", false)) {
    SpecReader n(spec.getSource(), *norm, "normalize");
    m->mean = n.numbers("mean");
    m->stdDev = n.numbers("std");
    auto checkCount = [&](llvm::StringRef key, size_t count) {
      n.check(count == 1 || count == static_cast<size_t>(m->channels), key,
              "expected 1 or " + llvm::Twine(m->channels) +
                  " (channels) values");
    };
    checkCount("mean", m->mean.size());
    checkCount("std", m->stdDev.size());
    n.check(llvm::all_of(m->mean,
                         [](double d) {
                           return std::abs(d) <=
                                  std::numeric_limits<float>::max();
                         }),
            "mean", "expected means in f32's range (|mean| <= 3.4e38)");
    n.check(llvm::all_of(m->stdDev,
                         [](double d) {
                           return d > 0 && SpecReader::inF32Range(d);
                         }),
            "std",
            "expected standard deviations > 0 in f32's normal range (1.2e-38 "
            "to 3.4e38: the pixels are divided by them in f32)");
    llvm::consumeError(n.finish());
  }
  if (spec.failed())
    return m;
  spec.check(m->image % m->patch == 0, "patch_size",
             "image_size " + llvm::Twine(m->image) +
                 " is not divisible by patch_size " + llvm::Twine(m->patch));
  checkHeadsDivide(spec, "hidden_dim", m->hidden, "heads", m->heads);
  m->declare();
  return m;
}

std::unique_ptr<Model> mlir::attn::parseHfVit(SpecReader &spec,
                                              const ModelOverrides &o,
                                              llvm::StringRef folder) {
  auto m = std::make_unique<Vit>();
  m->hf = true;
  // ViTConfig's fields (transformers' defaults where it has them).
  std::string arch = readArchitecture(
      spec, {"ViTForImageClassification", "ViTModel"}, "ViTModel");
  m->classify = arch == "ViTForImageClassification";
  m->basePrefix = "vit.";
  m->p0 = m->classify ? "vit." : "";
  m->image = spec.integer("image_size", 224);
  m->patch = spec.integer("patch_size", 16);
  m->channels = spec.integer("num_channels", 3);
  m->hidden = spec.integer("hidden_size", 768);
  m->layers = spec.integer("num_hidden_layers", 12, 1, SpecReader::kMaxLayers);
  m->heads = spec.integer("num_attention_heads", 12);
  m->mlp = spec.integer("intermediate_size", 3072);
  std::string act =
      spec.choice("hidden_act", {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"},
                  llvm::StringRef("gelu"));
  m->activation = act == "gelu_pytorch_tanh" ? "gelu_new" : act;
  m->eps = spec.positiveNumber("layer_norm_eps", 1e-12);
  m->qkvBias = spec.boolean("qkv_bias", true);
  // PretrainedConfig: as many labels as id2label names (it wins over a
  // conflicting num_labels), else num_labels, else 2.
  if (m->classify) {
    if (const llvm::json::Object *labels =
            spec.isUnset("id2label") ? nullptr : spec.object("id2label", false))
      m->classes = static_cast<int64_t>(labels->size());
    else if (!spec.isUnset("num_labels"))
      m->classes = spec.integer("num_labels");
    else
      m->classes = 2;
    spec.check(m->classes >= 1, "id2label", "expected at least one label");
  }
  spec.ignoreUnread();
  m->attention = "dense";
  m->batchSize = o.batch ? o.batch : 1;
  m->checkpointFile = findFolderCheckpoint(folder);
  m->folderPath = folder.str();
  if (spec.failed())
    return m;
  spec.check(m->image % m->patch == 0, "patch_size",
             "image_size " + llvm::Twine(m->image) +
                 " is not divisible by patch_size " + llvm::Twine(m->patch));
  checkHeadsDivide(spec, "hidden_size", m->hidden, "num_attention_heads",
                   m->heads);
  m->declare();
  return m;
}
