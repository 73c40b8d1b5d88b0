//===- TransformerEncoder.cpp - torch.nn.TransformerEncoder ---------------===//
//
// Stacked torch.nn.TransformerEncoderLayer: self-attention (attn.mha, key
// padding as kv_lengths), feed-forward linear1 -> relu|gelu -> linear2, and
// LayerNorms after (default) or before (norm_first) each block; an optional
// final norm (TransformerEncoder's `norm`). Weight names are the module's
// state_dict names.
//
//===----------------------------------------------------------------------===//

#include "lib/Models/ModelKinds.h"
#include "lib/Models/NetBuilder.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

class TransformerEncoder : public Model {
public:
  using Model::batchSize;
  using Model::padded;
  int64_t seqLen = 0, dModel = 0, heads = 0, ffn = 0, layers = 0;
  bool batchFirst = true, normFirst = false, padding = false, finalNorm = false;
  std::string activation;
  double eps = 1e-5;

  void declare() {
    items = "sequences";
    chunks = batchFirst;
    // Shorter batch-first sequences are padded; their keys are masked out
    // through `lengths` (fitToLength), so the result is exact.
    if (padding && batchFirst)
      padded = PaddedSequence{0, 1, 1};
    llvm::SmallVector<int64_t, 4> io =
        batchFirst ? llvm::SmallVector<int64_t, 4>{batchSize, seqLen, dModel}
                   : llvm::SmallVector<int64_t, 4>{seqLen, batchSize, dModel};
    inputSpecs.push_back({"src", DType::f32, io});
    if (padding)
      inputSpecs.push_back({"lengths", DType::i64, {batchSize}});
    outputSpec = {"output", DType::f32, io};
    auto w = [&](std::string name, llvm::SmallVector<int64_t, 4> shape) {
      weightSpecs.push_back({std::move(name), DType::f32, std::move(shape)});
    };
    for (int64_t n = 0; n < layers; ++n) {
      std::string p = "layers." + std::to_string(n) + ".";
      w(p + "self_attn.in_proj_weight", {3 * dModel, dModel});
      w(p + "self_attn.in_proj_bias", {3 * dModel});
      w(p + "self_attn.out_proj.weight", {dModel, dModel});
      w(p + "self_attn.out_proj.bias", {dModel});
      w(p + "linear1.weight", {ffn, dModel});
      w(p + "linear1.bias", {ffn});
      w(p + "linear2.weight", {dModel, ffn});
      w(p + "linear2.bias", {dModel});
      w(p + "norm1.weight", {dModel});
      w(p + "norm1.bias", {dModel});
      w(p + "norm2.weight", {dModel});
      w(p + "norm2.bias", {dModel});
    }
    if (finalNorm) {
      w("norm.weight", {dModel});
      w("norm.bias", {dModel});
    }
  }

  llvm::Expected<HostTensor> defaultInput(size_t index,
                                          uint64_t seed) const override {
    if (index == 0)
      return Model::defaultInput(index, seed);
    // Lengths: a mix of full and padded sequences, each at least 1.
    HostTensor t(DType::i64, {batchSize});
    for (int64_t b = 0; b < batchSize; ++b)
      t.as<int64_t>()[b] = b % 2 ? seqLen : 1 + (seqLen - 1) * (b + 1) / (batchSize + 1);
    return t;
  }

  llvm::Error validateInput(size_t index,
                            const HostTensor &t) const override {
    if (index != 1)
      return llvm::Error::success();
    for (int64_t b = 0; b < t.numElements(); ++b) {
      int64_t len = t.getInt(b);
      if (len < 0 || len > seqLen)
        return llvm::createStringError(
            "input 'lengths'[%lld] = %lld is outside [0, %lld] (seq_len)",
            (long long)b, (long long)len, (long long)seqLen);
    }
    return llvm::Error::success();
  }

  llvm::Error fitToLength(std::vector<HostTensor> &inputs,
                          const std::vector<bool> &given,
                          int64_t length) const override {
    HostTensor &lengths = inputs[1];
    for (int64_t b = 0; b < lengths.numElements(); ++b) {
      if (!given[1]) {
        lengths.setInt(b, length);
      } else if (lengths.getInt(b) > length) {
        return llvm::createStringError(
            "input 'lengths'[%lld] = %lld exceeds the %lld positions of "
            "'src' (padded to seq_len %lld)",
            (long long)b, (long long)lengths.getInt(b), (long long)length,
            (long long)seqLen);
      }
    }
    return llvm::Error::success();
  }

  Value buildForward(NetBuilder &net, ValueRange inputs) const override {
    Value x = inputs[0];
    if (!batchFirst)
      x = net.transpose(x, {1, 0, 2});
    // Each layer a call (NetBuilder::layer) of x and the key lengths.
    SmallVector<Value> layerArgs{x};
    if (padding)
      layerArgs.push_back(inputs[1]);
    for (int64_t n = 0; n < layers; ++n) {
      layerArgs[0] = x;
      x = net.layer(
          "layers", n,
          [](int64_t n) { return "layers." + std::to_string(n) + "."; },
          layerArgs, [&](NetBuilder &net, StringRef prefix, ValueRange args) {
      std::string p = prefix.str();
      Value x = args[0];
      AttentionMask mask;
      if (padding)
        mask.kvLengths = args[1];
      auto norm = [&](Value v, const char *which) {
        return net.layerNorm(v, net.weight(p + which + ".weight"),
                             net.weight(p + which + ".bias"), eps);
      };
      auto attention = [&](Value v) {
        return net.selfAttention(
            v, net.weight(p + "self_attn.in_proj_weight"),
            net.weight(p + "self_attn.in_proj_bias"),
            net.weight(p + "self_attn.out_proj.weight"),
            net.weight(p + "self_attn.out_proj.bias"), heads, mask);
      };
      auto feedForward = [&](Value v) {
        Value h = net.linear(v, net.weight(p + "linear1.weight"),
                             net.weight(p + "linear1.bias"));
        h = activation == "gelu" ? net.gelu(h) : net.relu(h);
        return net.linear(h, net.weight(p + "linear2.weight"),
                          net.weight(p + "linear2.bias"));
      };
      if (normFirst) {
        x = net.add(x, attention(norm(x, "norm1")));
        x = net.add(x, feedForward(norm(x, "norm2")));
      } else {
        x = norm(net.add(x, attention(x)), "norm1");
        x = norm(net.add(x, feedForward(x)), "norm2");
      }
      return SmallVector<Value>{x};
          })[0];
    }
    if (finalNorm)
      x = net.layerNorm(x, net.weight("norm.weight"), net.weight("norm.bias"),
                        eps);
    if (!batchFirst)
      x = net.transpose(x, {1, 0, 2});
    return x;
  }
};

} // namespace

std::unique_ptr<Model>
mlir::attn::parseTransformerEncoder(SpecReader &spec, const ModelOverrides &o) {
  auto m = std::make_unique<TransformerEncoder>();
  m->dModel = spec.integer("d_model");
  m->heads = spec.integer("heads");
  m->ffn = spec.integer("dim_feedforward");
  m->layers = spec.integer("layers", std::nullopt, 1, SpecReader::kMaxLayers);
  m->seqLen = spec.integer("seq_len");
  if (o.seqLen)
    m->seqLen = o.seqLen;
  m->batchSize = readBatch(spec, o);
  m->batchFirst = spec.boolean("batch_first", true);
  m->normFirst = spec.boolean("norm_first", false);
  m->activation = spec.choice("activation", {"relu", "gelu"},
                              llvm::StringRef("relu"));
  m->padding = spec.boolean("padding_mask", false);
  m->finalNorm = spec.boolean("final_norm", false);
  m->eps = spec.positiveNumber("layer_norm_eps", 1e-5);
  if (spec.failed())
    return m;
  checkHeadsDivide(spec, "d_model", m->dModel, "heads", m->heads);
  m->declare();
  return m;
}
