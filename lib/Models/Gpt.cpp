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
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

class Gpt : public Model {
public:
  using Model::batchSize;
  int64_t vocab = 0, context = 0, seqLen = 0, dModel = 0, heads = 0,
          layers = 0;
  double eps = 1e-5;

  void declare() {
    items = "sequences";
    inputSpecs.push_back({"tokens", DType::i64, {batchSize, seqLen}});
    outputSpec = {"logits", DType::f32, {batchSize, seqLen, vocab}};
    auto w = [&](std::string name, llvm::SmallVector<int64_t, 4> shape) {
      weightSpecs.push_back({std::move(name), DType::f32, std::move(shape)});
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
      w(p + "mlp.c_fc.weight", {dModel, 4 * dModel});
      w(p + "mlp.c_fc.bias", {4 * dModel});
      w(p + "mlp.c_proj.weight", {4 * dModel, dModel});
      w(p + "mlp.c_proj.bias", {dModel});
    }
    w("ln_f.weight", {dModel});
    w("ln_f.bias", {dModel});
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

  Value buildForward(NetBuilder &net, ValueRange inputs) const override {
    OpBuilder &b = net.builder();
    Location loc = net.getLoc();
    MLIRContext *ctx = b.getContext();
    Value wte = net.weight("wte.weight");
    Value wpe = net.reshape(
        tensor::ExtractSliceOp::create(
            b, loc, net.weight("wpe.weight"),
            ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(seqLen),
                                   b.getIndexAttr(dModel)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)}),
        {seqLen, dModel});
    // x[b, t, d] = wte[tokens[b, t], d] + wpe[t, d] (ids checked at run time).
    Value x = buildElementwise(
        b, loc, net.empty({batchSize, seqLen, dModel}), {inputs[0], wpe},
        {dimsMap(ctx, 3, {0, 1}), dimsMap(ctx, 3, {1, 2})},
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value row = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
          Value col = linalg::IndexOp::create(nb, nl, 2);
          Value e = tensor::ExtractOp::create(nb, nl, wte, ValueRange{row, col});
          return arith::AddFOp::create(nb, nl, e, a[1]).getResult();
        });

    AttentionMask causal;
    causal.kind = MaskKind::causal;
    for (int64_t n = 0; n < layers; ++n) {
      std::string p = "h." + std::to_string(n) + ".";
      Value h = net.layerNorm(x, net.weight(p + "ln_1.weight"),
                              net.weight(p + "ln_1.bias"), eps);
      h = net.selfAttention(h, net.transpose(net.weight(p + "attn.c_attn.weight"), {1, 0}),
                            net.weight(p + "attn.c_attn.bias"),
                            net.transpose(net.weight(p + "attn.c_proj.weight"), {1, 0}),
                            net.weight(p + "attn.c_proj.bias"), heads, causal);
      x = net.add(x, h);
      h = net.layerNorm(x, net.weight(p + "ln_2.weight"),
                        net.weight(p + "ln_2.bias"), eps);
      h = net.geluTanh(net.conv1d(h, net.weight(p + "mlp.c_fc.weight"),
                                  net.weight(p + "mlp.c_fc.bias")));
      x = net.add(x, net.conv1d(h, net.weight(p + "mlp.c_proj.weight"),
                                net.weight(p + "mlp.c_proj.bias")));
    }
    x = net.layerNorm(x, net.weight("ln_f.weight"), net.weight("ln_f.bias"),
                      eps);
    // Logits tied to the token embedding (GPT2LMHeadModel's lm_head).
    return net.linear(x, wte, /*bias=*/Value());
  }
};

} // namespace

std::unique_ptr<Model> mlir::attn::parseGpt(SpecReader &spec,
                                            const ModelOverrides &o) {
  auto m = std::make_unique<Gpt>();
  m->vocab = spec.integer("vocab_size");
  m->context = spec.integer("n_positions");
  m->dModel = spec.integer("n_embd");
  m->layers = spec.integer("n_layer", std::nullopt, 1, SpecReader::kMaxLayers);
  m->heads = spec.integer("n_head");
  m->seqLen = spec.integer("seq_len");
  m->batchSize = readBatch(spec, o);
  m->eps = spec.positiveNumber("layer_norm_epsilon", 1e-5);
  if (spec.failed())
    return m;
  checkHeadsDivide(spec, "n_embd", m->dModel, "n_head", m->heads);
  spec.check(m->seqLen <= m->context, "seq_len",
             "seq_len " + llvm::Twine(m->seqLen) + " exceeds n_positions " +
                 llvm::Twine(m->context));
  m->declare();
  return m;
}
