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
  using Model::batchSize;
  int64_t image = 0, channels = 0, patch = 0, hidden = 0, layers = 0,
          heads = 0, mlp = 0, classes = 0, window = 0, relClip = 0;
  std::string attention;
  std::vector<double> mean, stdDev;
  double eps = 1e-6;

  int64_t tokens() const {
    return (image / patch) * (image / patch) + 1;
  }
  std::string layerPrefix(int64_t n) const {
    return "encoder.layers.encoder_layer_" + std::to_string(n) + ".";
  }

  void declare() {
    items = "images";
    inputSpecs.push_back({"images", DType::f32, {batchSize, channels, image, image}});
    outputSpec = {"logits", DType::f32, {batchSize, classes}};
    auto w = [&](std::string name, llvm::SmallVector<int64_t, 4> shape) {
      weightSpecs.push_back({std::move(name), DType::f32, std::move(shape)});
    };
    w("class_token", {1, 1, hidden});
    w("conv_proj.weight", {hidden, channels, patch, patch});
    w("conv_proj.bias", {hidden});
    w("encoder.pos_embedding", {1, tokens(), hidden});
    for (int64_t n = 0; n < layers; ++n) {
      std::string p = layerPrefix(n);
      w(p + "ln_1.weight", {hidden});
      w(p + "ln_1.bias", {hidden});
      w(p + "self_attention.in_proj_weight", {3 * hidden, hidden});
      w(p + "self_attention.in_proj_bias", {3 * hidden});
      w(p + "self_attention.out_proj.weight", {hidden, hidden});
      w(p + "self_attention.out_proj.bias", {hidden});
      if (attention == "relative")
        w(p + "self_attention.rel_bias", {heads, 2 * relClip + 1});
      w(p + "ln_2.weight", {hidden});
      w(p + "ln_2.bias", {hidden});
      w(p + "mlp.0.weight", {mlp, hidden});
      w(p + "mlp.0.bias", {mlp});
      w(p + "mlp.3.weight", {hidden, mlp});
      w(p + "mlp.3.bias", {hidden});
    }
    w("encoder.ln.weight", {hidden});
    w("encoder.ln.bias", {hidden});
    w("heads.head.weight", {classes, hidden});
    w("heads.head.bias", {classes});
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
    Value kernel = net.reshape(net.weight("conv_proj.weight"),
                               {hidden, channels * patch * patch});
    Value emb = net.linear(net.reshape(patches, {bsz * n, channels * patch * patch}),
                           kernel, net.weight("conv_proj.bias"));
    emb = net.reshape(emb, {bsz, n, hidden});

    // [class token; patch embeddings] + position embeddings.
    Value cls = net.reshape(net.weight("class_token"), {hidden});
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
    Value pos = net.reshape(net.weight("encoder.pos_embedding"), {t, hidden});
    x = net.addBroadcast(seq, pos, {1, 2});

    AttentionMask mask;
    if (attention == "local") {
      mask.kind = MaskKind::local;
      mask.windowLeft = mask.windowRight = window;
    }
    for (int64_t l = 0; l < layers; ++l) {
      std::string p = layerPrefix(l);
      if (attention == "relative") {
        mask.relBias = net.weight(p + "self_attention.rel_bias");
        mask.relClip = relClip;
      }
      Value h = net.layerNorm(x, net.weight(p + "ln_1.weight"),
                              net.weight(p + "ln_1.bias"), eps);
      h = net.selfAttention(h, net.weight(p + "self_attention.in_proj_weight"),
                            net.weight(p + "self_attention.in_proj_bias"),
                            net.weight(p + "self_attention.out_proj.weight"),
                            net.weight(p + "self_attention.out_proj.bias"),
                            heads, mask);
      x = net.add(x, h);
      h = net.layerNorm(x, net.weight(p + "ln_2.weight"),
                        net.weight(p + "ln_2.bias"), eps);
      h = net.gelu(net.linear(h, net.weight(p + "mlp.0.weight"),
                              net.weight(p + "mlp.0.bias")));
      h = net.linear(h, net.weight(p + "mlp.3.weight"),
                     net.weight(p + "mlp.3.bias"));
      x = net.add(x, h);
    }

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
    row = net.layerNorm(row, net.weight("encoder.ln.weight"),
                        net.weight("encoder.ln.bias"), eps);
    return net.linear(row, net.weight("heads.head.weight"),
                      net.weight("heads.head.bias"));
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
    n.check(llvm::all_of(m->stdDev, [](double d) { return d > 0; }), "std",
            "standard deviations must be positive");
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
