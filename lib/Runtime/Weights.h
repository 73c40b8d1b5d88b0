//===- Weights.h - safetensors weights and IDX datasets ---------*- C++ -*-===//
//
// Readers for the files a model run consumes besides .npy: safetensors
// checkpoints (the weights, named as in PyTorch) and IDX files (the format of
// (Fashion-)MNIST, optionally gzip-compressed).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_WEIGHTS_H
#define ATTN_LIB_RUNTIME_WEIGHTS_H

#include "lib/Runtime/Tensor.h"

#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::attn {

/// One tensor of a safetensors file, converted to f32 (floating dtypes) or
/// kept as i32/i64 (integer dtypes).
struct StoredTensor {
  HostTensor tensor;
  /// The dtype in the file: "F32", "F16", "BF16", "F64", "I64", ...
  std::string fileDType;
};

/// The tensors of a safetensors file by name (in header order).
struct Checkpoint {
  std::string path;
  llvm::StringMap<StoredTensor> tensors;
  std::vector<std::string> names;
};

/// Reads a .safetensors file: an 8-byte little-endian header length, a JSON
/// header `{name: {dtype, shape, data_offsets}, "__metadata__": {...}}` and the
/// raw little-endian data. F32, F16, BF16 and F64 become f32; I32 and I64 are
/// kept. Malformed headers, unknown dtypes and out-of-range or overlapping
/// offsets are errors naming the file and the tensor.
llvm::Expected<Checkpoint> readSafetensors(llvm::StringRef path);

/// Reads a checkpoint: a .safetensors file, or the index of a sharded one
/// (`*.safetensors.index.json`, as save_pretrained writes it: a JSON object
/// whose "weight_map" names, for every tensor, its shard in the index's
/// directory). The shards are read and merged; a tensor the index names but
/// its shard lacks, a tensor in two shards, or a shard name that is not a
/// plain file name is an error naming the index and the tensor.
llvm::Expected<Checkpoint> readCheckpoint(llvm::StringRef path);

/// Reads an IDX file (big-endian header, unsigned-byte data; gzip-compressed
/// when the file starts with the gzip magic) as an i32 tensor of the raw
/// byte values.
llvm::Expected<HostTensor> readIdx(llvm::StringRef path);

/// True when `path` looks like an IDX file (name ends in "-ubyte" or
/// "-ubyte.gz").
bool isIdxPath(llvm::StringRef path);

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_WEIGHTS_H
