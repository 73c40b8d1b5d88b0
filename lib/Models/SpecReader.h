//===- SpecReader.h - checked access to a JSON model description -*- C++ -*-===//
//
// Reads the fields of one JSON object of a model description with their
// types and ranges checked. The first problem is kept as an error naming the
// file, the line of the offending key and the key; unknown keys are errors
// too (finish()).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_MODELS_SPECREADER_H
#define ATTN_LIB_MODELS_SPECREADER_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::attn {

/// The source of a description: its path, text, parsed value, and the line
/// of every key and array element by path ("heads", "layers[1].heads").
struct SpecSource {
  std::string path;
  std::string text;
  llvm::json::Value root = nullptr;
  llvm::StringMap<unsigned> lines;
  /// First error seen by any reader of this source.
  std::string error;

  /// The largest description file read (descriptions are a few hundred
  /// bytes; weights and graphs live in their own files).
  static constexpr uint64_t kMaxBytes = 1 << 20;

  /// Reads and parses `path`; syntax errors carry the line and column.
  static llvm::Expected<std::unique_ptr<SpecSource>> load(llvm::StringRef path);
};

class SpecReader {
public:
  /// Reads `object` found at `prefix` ("" for the root, "layers[0]", ...).
  SpecReader(SpecSource &source, const llvm::json::Object &object,
             std::string prefix = "");

  bool has(llvm::StringRef key) const { return fields.get(key) != nullptr; }
  /// Whether `key` is absent or JSON null (Hugging Face configs write unset
  /// fields as null).
  bool isUnset(llvm::StringRef key) const {
    const llvm::json::Value *v = fields.get(key);
    return !v || v->kind() == llvm::json::Value::Null;
  }
  /// Marks every key read: for files written by other tools (Hugging Face
  /// config.json), whose other keys are theirs (dropout rates, token ids,
  /// version strings) and carry nothing a compiled model computes with.
  void ignoreUnread() {
    for (const auto &kv : fields)
      used.insert(kv.first);
  }

  /// Integer in [`min`, `max`]; required unless `def` is given. The
  /// default bound, 2^31 - 1, keeps every product of two description sizes
  /// inside int64 (the model builders multiply them; the bytes of the
  /// tensors they make are checked against the memory budget).
  int64_t integer(llvm::StringRef key, std::optional<int64_t> def = {},
                  int64_t min = 1, int64_t max = kMaxInteger);
  static constexpr int64_t kMaxInteger = (int64_t(1) << 31) - 1;
  /// The most layers a description may stack (each declares its weights
  /// before any size is checked).
  static constexpr int64_t kMaxLayers = 1024;
  double number(llvm::StringRef key, std::optional<double> def = {});
  /// A number > 0 in f32's normal range, [1.2e-38, 3.4e38] (epsilons, which
  /// the models add in f32: a larger one is inf there, a smaller one 0 or a
  /// denormal).
  double positiveNumber(llvm::StringRef key, std::optional<double> def = {});
  /// Whether `d` is 0 or in f32's normal range in magnitude.
  static bool inF32Range(double d);
  bool boolean(llvm::StringRef key, std::optional<bool> def = {});
  /// A string from `allowed`.
  std::string choice(llvm::StringRef key,
                     llvm::ArrayRef<llvm::StringRef> allowed,
                     std::optional<llvm::StringRef> def = {});
  std::string string(llvm::StringRef key, std::optional<std::string> def = {});
  /// A non-empty array of numbers.
  std::vector<double> numbers(llvm::StringRef key);
  /// A nested object or array (null when absent and not required).
  const llvm::json::Object *object(llvm::StringRef key, bool required);
  const llvm::json::Array *array(llvm::StringRef key, bool required);

  /// Records "FILE:LINE: key 'KEY': MESSAGE" unless an error is recorded.
  void fail(llvm::StringRef key, const llvm::Twine &message);
  /// Records "--OPTION: MESSAGE (FILE:LINE, key 'KEY')" unless an error is
  /// recorded: a command-line value that conflicts with the description's
  /// `key` (the option is what to change, the key what it was held to).
  void failOption(llvm::StringRef option, llvm::StringRef key,
                  const llvm::Twine &message);
  /// fail() unless `ok`.
  void check(bool ok, llvm::StringRef key, const llvm::Twine &message);
  bool failed() const { return !source.error.empty(); }

  /// Reports keys that were never read; then the first recorded error.
  llvm::Error finish();

  /// The path of `key` in this object ("layers[1].heads").
  std::string path(llvm::StringRef key) const;
  SpecSource &getSource() { return source; }

private:
  const llvm::json::Value *get(llvm::StringRef key, bool required);

  SpecSource &source;
  const llvm::json::Object &fields;
  std::string prefix;
  llvm::StringSet<> used;
};

} // namespace mlir::attn

#endif // ATTN_LIB_MODELS_SPECREADER_H
