//===- Model.cpp - model descriptions and their MLIR builders -------------===//

#include "lib/Models/Model.h"
#include "lib/Models/ModelKinds.h"
#include "lib/Models/NetBuilder.h"
#include "lib/Runtime/Budget.h"
#include "lib/Runtime/Weights.h"

#include "dialect/AttnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

int64_t TensorSpec::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string TensorSpec::shapeString() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Model::~Model() = default;

void Model::setLayout() {
  offsets.clear();
  weightIndex.clear();
  packedElements = 0;
  for (const TensorSpec &w : weightSpecs) {
    weightIndex.try_emplace(w.name, offsets.size());
    offsets.push_back(packedElements);
    // 16 floats: every weight starts on a 64-byte boundary.
    packedElements += (w.numElements() + 15) / 16 * 16;
  }
}

std::optional<size_t> Model::findWeight(llvm::StringRef name) const {
  auto it = weightIndex.find(name);
  if (it == weightIndex.end())
    return std::nullopt;
  return it->second;
}

/// A Hugging Face folder's config.json, by its `model_type`.
static std::unique_ptr<Model> parseHfConfig(SpecReader &spec,
                                            const ModelOverrides &overrides,
                                            llvm::StringRef folder,
                                            std::string &kind) {
  std::string type = spec.choice("model_type", {"gpt2", "vit"});
  if (spec.failed())
    return nullptr;
  kind = type == "gpt2" ? "gpt" : "vit";
  return type == "gpt2" ? parseHfGpt2(spec, overrides, folder)
                        : parseHfVit(spec, overrides, folder);
}

llvm::Expected<std::unique_ptr<Model>>
Model::load(llvm::StringRef path, const ModelOverrides &overrides) {
  // A Hugging Face folder: its config.json (save_pretrained's layout).
  std::string file = path.str(), folder;
  if (llvm::sys::fs::is_directory(path)) {
    folder = file;
    llvm::SmallString<256> config(path);
    llvm::sys::path::append(config, "config.json");
    file = std::string(config);
    if (!llvm::sys::fs::exists(file))
      return llvm::createStringError(
          "%s: a directory without config.json (a Hugging Face model folder, "
          "as save_pretrained writes it, has config.json and "
          "model.safetensors)",
          path.str().c_str());
  }
  llvm::Expected<std::unique_ptr<SpecSource>> source = SpecSource::load(file);
  if (!source)
    return source.takeError();
  const llvm::json::Object *root = (*source)->root.getAsObject();
  if (!root)
    return llvm::createStringError("%s:1: the model description must be a "
                                   "JSON object",
                                   file.c_str());
  SpecReader spec(**source, *root);
  // config.json given directly: its folder is the file's.
  bool hf = !folder.empty() ||
            (!spec.has("kind") && spec.has("model_type"));
  if (hf && folder.empty())
    folder = llvm::sys::path::parent_path(file).str();
  static const std::pair<llvm::StringRef, ModelParser> kinds[] = {
      {"vit", parseVit},
      {"transformer-encoder", parseTransformerEncoder},
      {"gpt", parseGpt},
      {"gat", parseGat}};
  std::string kind;
  std::unique_ptr<Model> model;
  if (hf) {
    model = parseHfConfig(spec, overrides, folder.empty() ? "." : folder, kind);
  } else {
    kind = spec.choice("kind", {"vit", "transformer-encoder", "gpt", "gat"});
    for (auto [name, parse] : kinds)
      if (!spec.failed() && name == kind)
        model = parse(spec, overrides);
  }
  if (llvm::Error err = spec.finish())
    return std::move(err);
  model->kindName = kind;
  if (llvm::Error err = model->checkSizes(file))
    return std::move(err);
  model->setLayout();
  return model;
}

std::string mlir::attn::readArchitecture(SpecReader &spec,
                                         llvm::ArrayRef<llvm::StringRef> supported,
                                         llvm::StringRef def) {
  if (spec.isUnset("architectures"))
    return def.str();
  const llvm::json::Array *a = spec.array("architectures", true);
  std::string list;
  for (llvm::StringRef s : supported)
    list += (list.empty() ? "" : ", ") + s.str();
  std::optional<llvm::StringRef> first =
      a && !a->empty() ? (*a)[0].getAsString() : std::nullopt;
  if (!first) {
    spec.fail("architectures", "expected an array of class names (" + list +
                                   ")");
    return def.str();
  }
  if (!llvm::is_contained(supported, *first)) {
    spec.fail("architectures", "'" + *first + "' is not supported (" + list +
                                   " are)");
    return def.str();
  }
  return first->str();
}

std::string mlir::attn::findFolderCheckpoint(llvm::StringRef folder) {
  for (const char *name : {"model.safetensors", "model.safetensors.index.json"}) {
    llvm::SmallString<256> p(folder);
    llvm::sys::path::append(p, name);
    if (llvm::sys::fs::exists(p))
      return std::string(p);
  }
  return "";
}

std::string Model::alternativeName(llvm::StringRef name) const {
  if (basePrefix.empty())
    return "";
  if (name.starts_with(basePrefix))
    return name.drop_front(basePrefix.size()).str();
  return basePrefix + name.str();
}

llvm::Error Model::checkSizes(llvm::StringRef path) const {
  // Every tensor a run allocates (inputs of one call, the packed weights,
  // the output), with checked products, and their sum, against the memory
  // budget: a description's sizes are claims like a file header's.
  uint64_t total = 0;
  auto add = [&](const TensorSpec &t, llvm::StringRef role) -> llvm::Error {
    llvm::Expected<uint64_t> bytes = checkedTensorBytes(
        t.shape, dtypeSize(t.dtype),
        path + ": " + role + " '" + t.name + "' of shape " + t.shapeString());
    if (!bytes)
      return bytes.takeError();
    // Each weight is padded to 64 bytes in the packed buffer.
    if (__builtin_add_overflow(total, (*bytes + 63) / 64 * 64, &total))
      total = UINT64_MAX;
    return llvm::Error::success();
  };
  for (const TensorSpec &t : inputSpecs)
    if (llvm::Error err = add(t, "input"))
      return err;
  for (const TensorSpec &t : weightSpecs)
    if (llvm::Error err = add(t, "weight"))
      return err;
  if (llvm::Error err = add(outputSpec, "output"))
    return err;
  for (const TensorSpec &t : extraOutputSpecs)
    if (llvm::Error err = add(t, "output"))
      return err;
  return checkBudget(total, path + ": the inputs, weights and output of one "
                                   "call together");
}

static Type tensorType(OpBuilder &b, const TensorSpec &t) {
  Type elem;
  switch (t.dtype) {
  case DType::f32:
    elem = b.getF32Type();
    break;
  case DType::f64:
    elem = b.getF64Type();
    break;
  case DType::f16:
    elem = b.getF16Type();
    break;
  case DType::bf16:
    elem = b.getBF16Type();
    break;
  case DType::i32:
    elem = b.getI32Type();
    break;
  case DType::i64:
    elem = b.getI64Type();
    break;
  }
  return RankedTensorType::get(t.shape, elem);
}

void Model::addFunction(
    ModuleOp module, const EntryPoint &entry,
    llvm::function_ref<SmallVector<Value>(NetBuilder &, ValueRange)> body) const {
  MLIRContext *ctx = module.getContext();
  Location loc = NameLoc::get(StringAttr::get(ctx, kindName));
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<DictionaryAttr> argAttrs;
  auto named = [&](llvm::StringRef name) {
    return b.getDictionaryAttr(
        b.getNamedAttr("attn.name", b.getStringAttr(name)));
  };
  for (const TensorSpec &in : entry.inputs) {
    argTypes.push_back(tensorType(b, in));
    argAttrs.push_back(named(in.name));
  }
  argTypes.push_back(RankedTensorType::get({packedElements}, b.getF32Type()));
  argAttrs.push_back(named("weights"));
  for (const TensorSpec &out : entry.results)
    resultTypes.push_back(tensorType(b, out));
  auto func = func::FuncOp::create(b, loc, entry.name,
                                   b.getFunctionType(argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
  Block *block = func.addEntryBlock();
  b.setInsertionPointToStart(block);
  NetBuilder net(b, loc, *this, block->getArguments().back());
  SmallVector<Value> results = body(net, block->getArguments().drop_back());
  func::ReturnOp::create(b, loc, results);
}

OwningOpRef<ModuleOp> Model::build(MLIRContext &ctx) const {
  ctx.loadDialect<AttnDialect, func::FuncDialect, linalg::LinalgDialect,
                  tensor::TensorDialect, arith::ArithDialect,
                  math::MathDialect>();
  OwningOpRef<ModuleOp> module =
      ModuleOp::create(NameLoc::get(StringAttr::get(&ctx, kindName)));
  EntryPoint forward{"forward", inputSpecs, {outputSpec}};
  forward.results.insert(forward.results.end(), extraOutputSpecs.begin(),
                         extraOutputSpecs.end());
  addFunction(*module, forward, [&](NetBuilder &net, ValueRange inputs) {
    return buildForwardResults(net, inputs);
  });
  return module;
}

void Model::addGeneration(ModuleOp module, int64_t prefillLength) const {
  for (const EntryPoint &entry : generationEntryPoints(prefillLength))
    addFunction(module, entry, [&](NetBuilder &net, ValueRange inputs) {
      return buildEntry(net, entry, inputs);
    });
}

int64_t mlir::attn::readBatch(SpecReader &spec, const ModelOverrides &o) {
  int64_t batch = spec.integer("batch", 1);
  return o.batch ? o.batch : batch;
}

void mlir::attn::checkHeadsDivide(SpecReader &spec, llvm::StringRef dimKey,
                                  int64_t dim, llvm::StringRef headsKey,
                                  int64_t heads) {
  spec.check(dim % heads == 0, headsKey,
             dimKey + " " + llvm::Twine(dim) + " is not divisible by " +
                 headsKey + " " + llvm::Twine(heads));
}

float mlir::attn::seededUniform(uint64_t seed, uint64_t stream,
                                uint64_t index) {
  // splitmix64 of the three, top 24 bits as a fraction.
  uint64_t z = seed * 0x9e3779b97f4a7c15ull ^ (stream + 1) * 0xbf58476d1ce4e5b9ull ^
               (index + 1) * 0x94d049bb133111ebull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / static_cast<float>(1 << 23) - 1.0f;
}

llvm::Expected<HostTensor> Model::defaultInput(size_t index,
                                               uint64_t seed) const {
  const TensorSpec &spec = inputSpecs[index];
  HostTensor t(spec.dtype, spec.shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, seededUniform(seed, 1000 + index, i));
  return t;
}

llvm::Error Model::validateInput(size_t, const HostTensor &) const {
  return llvm::Error::success();
}

void Model::prepareInputs(std::vector<HostTensor> &) const {}

void Model::finishOutput(HostTensor &) const {}

void Model::initWeight(size_t index, float *data, uint64_t seed) const {
  const TensorSpec &spec = weightSpecs[index];
  llvm::StringRef name = spec.name;
  int64_t n = spec.numElements();
  // Norm gains 1 and biases 0 (as PyTorch initialises them); everything else
  // uniform in +-1/sqrt(last dim), like nn.Linear's fan-in bound.
  bool isNormGain = spec.shape.size() == 1 && name.ends_with(".weight");
  bool isBias = name.ends_with("bias") && !name.ends_with("rel_bias");
  float bound = 1.0f / std::sqrt(static_cast<float>(spec.shape.back()));
  for (int64_t i = 0; i < n; ++i)
    data[i] = isNormGain ? 1.0f
              : isBias   ? 0.0f
                         : bound * seededUniform(seed, index, i);
}

llvm::Expected<HostTensor> mlir::attn::packWeights(const Model &model,
                                                   const Checkpoint *checkpoint,
                                                   uint64_t seed) {
  HostTensor packed(DType::f32, {model.packedWeightElements()});
  ArrayRef<TensorSpec> specs = model.weights();
  llvm::StringSet<> read;
  for (size_t i = 0; i < specs.size(); ++i) {
    float *dst = packed.as<float>() + model.weightOffset(i);
    const TensorSpec &spec = specs[i];
    if (!checkpoint) {
      model.initWeight(i, dst, seed);
      continue;
    }
    auto it = checkpoint->tensors.find(spec.name);
    if (it == checkpoint->tensors.end()) {
      std::string other = model.alternativeName(spec.name);
      if (!other.empty())
        it = checkpoint->tensors.find(other);
    }
    if (it == checkpoint->tensors.end()) {
      std::string other = model.alternativeName(spec.name);
      return llvm::createStringError(
          "%s: tensor '%s'%s is missing (the %s model expects shape %s)",
          checkpoint->path.c_str(), spec.name.c_str(),
          other.empty() ? "" : (" (or '" + other + "')").c_str(),
          model.kind().str().c_str(), spec.shapeString().c_str());
    }
    const HostTensor &found = it->second.tensor;
    TensorSpec foundSpec{spec.name, found.dtype(),
                         llvm::SmallVector<int64_t, 4>(found.shape())};
    if (found.dtype() != DType::f32)
      return llvm::createStringError(
          "%s: tensor '%s' has dtype %s, expected a floating-point dtype (F32, "
          "F16, BF16 or F64) of shape %s",
          checkpoint->path.c_str(), spec.name.c_str(),
          it->second.fileDType.c_str(), spec.shapeString().c_str());
    if (found.shape() != ArrayRef<int64_t>(spec.shape))
      return llvm::createStringError(
          "%s: tensor '%s' has shape %s, expected %s",
          checkpoint->path.c_str(), spec.name.c_str(),
          foundSpec.shapeString().c_str(), spec.shapeString().c_str());
    if (llvm::Error err = checkFinite(found, checkpoint->path + ": tensor '" +
                                                 spec.name + "'"))
      return std::move(err);
    std::memcpy(dst, found.data(), found.numBytes());
    read.insert(it->first());
  }
  if (!checkpoint)
    return packed;
  std::vector<llvm::StringRef> unread;
  for (const std::string &name : checkpoint->names)
    if (!read.contains(name) && !model.ignoresUnreadTensor(name))
      unread.push_back(name);
  if (!unread.empty()) {
    const HostTensor &first = checkpoint->tensors.find(unread[0])->second.tensor;
    TensorSpec firstSpec{unread[0].str(), first.dtype(),
                         llvm::SmallVector<int64_t, 4>(first.shape())};
    return llvm::createStringError(
        "%s: %zu tensor(s) the %s model does not read, the first '%s' (shape "
        "%s): the checkpoint is for another model (more layers, a norm or "
        "head the description lacks); every tensor must be one of the "
        "model's weights, as PyTorch's load_state_dict(strict=True) requires",
        checkpoint->path.c_str(), unread.size(), model.kind().str().c_str(),
        unread[0].str().c_str(), firstSpec.shapeString().c_str());
  }
  return packed;
}
