//===- ModelKinds.h - the parsers of each model kind ------------*- C++ -*-===//
//
// Private to lib/Models: one parser per `kind`, each in its own file, reading
// the description's fields with a SpecReader and returning the checked model.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_MODELS_MODELKINDS_H
#define ATTN_LIB_MODELS_MODELKINDS_H

#include "lib/Models/Model.h"
#include "lib/Models/SpecReader.h"

namespace mlir::attn {

using ModelParser = std::unique_ptr<Model> (*)(SpecReader &,
                                               const ModelOverrides &);

std::unique_ptr<Model> parseVit(SpecReader &spec, const ModelOverrides &o);
std::unique_ptr<Model> parseTransformerEncoder(SpecReader &spec,
                                               const ModelOverrides &o);
std::unique_ptr<Model> parseGpt(SpecReader &spec, const ModelOverrides &o);
std::unique_ptr<Model> parseGat(SpecReader &spec, const ModelOverrides &o);

/// Hugging Face configs (config.json of the folder `folder`), by
/// `model_type`.
std::unique_ptr<Model> parseHfGpt2(SpecReader &spec, const ModelOverrides &o,
                                   llvm::StringRef folder);
std::unique_ptr<Model> parseHfVit(SpecReader &spec, const ModelOverrides &o,
                                  llvm::StringRef folder);
/// The first of a Hugging Face config's `architectures`, which must be one
/// of `supported`; `def` when the key is absent.
std::string readArchitecture(SpecReader &spec,
                             llvm::ArrayRef<llvm::StringRef> supported,
                             llvm::StringRef def);
/// The checkpoint of a Hugging Face folder: model.safetensors, else
/// model.safetensors.index.json (shards), else "" (the tools then need
/// --weights: a folder's model never runs seeded by accident).
std::string findFolderCheckpoint(llvm::StringRef folder);

/// The description's `batch` (default 1), unless --batch overrides it.
int64_t readBatch(SpecReader &spec, const ModelOverrides &o);

/// Checks that `dim` (at `key`) is divisible by `heads` (at `headsKey`).
void checkHeadsDivide(SpecReader &spec, llvm::StringRef dimKey, int64_t dim,
                      llvm::StringRef headsKey, int64_t heads);

/// Uniform in [-1, 1) from (seed, stream, index): the seeded initialisation.
float seededUniform(uint64_t seed, uint64_t stream, uint64_t index);

} // namespace mlir::attn

#endif // ATTN_LIB_MODELS_MODELKINDS_H
