//===- Json.cpp - JSON parsing with a nesting bound and unique keys -------===//

#include "lib/Runtime/Json.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir::attn;

namespace {
/// One open array or object of the scan.
struct Scope {
  bool isObject;
  bool expectKey;         // an object's next string is a key
  llvm::StringSet<> keys; // the object's keys so far
};
} // namespace

llvm::Expected<llvm::json::Value> mlir::attn::parseJson(llvm::StringRef text) {
  // One pass over the text before llvm::json (which recurses per level and
  // keeps the last of duplicate keys): nesting depth and duplicate keys, in
  // llvm::json's own error format "[line:column, byte=N]: message", which
  // the callers report. Keys are compared decoded (escapes resolved).
  unsigned line = 1, column = 0;
  bool inString = false, escaped = false;
  size_t stringStart = 0;
  llvm::SmallVector<Scope, 8> scopes;
  auto error = [&](size_t offset, const llvm::Twine &message) {
    return llvm::createStringError(llvm::formatv("[{0}:{1}, byte={2}]: {3}",
                                                 line, column, offset,
                                                 message.str())
                                       .str());
  };
  for (auto [offset, c] : llvm::enumerate(text)) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
        if (!scopes.empty() && scopes.back().isObject &&
            scopes.back().expectKey) {
          llvm::StringRef raw = text.slice(stringStart, offset);
          // Keys compare decoded: "he\u0061ds" is "heads" twice. A key
          // llvm::json cannot decode is left to its own error below.
          std::string key = raw.str();
          if (raw.contains('\\')) {
            if (llvm::Expected<llvm::json::Value> decoded =
                    llvm::json::parse(text.slice(stringStart - 1, offset + 1)))
              key = decoded->getAsString().value_or(raw).str();
            else
              llvm::consumeError(decoded.takeError());
          }
          if (!scopes.back().keys.insert(key).second)
            return error(offset, "duplicate key '" + key + "'");
          scopes.back().expectKey = false;
        }
      }
      continue;
    }
    if (c == '"') {
      inString = true;
      stringStart = offset + 1;
    } else if (c == '[' || c == '{') {
      if (scopes.size() >= kMaxJsonDepth)
        return error(offset, "JSON nested more than " +
                                 llvm::Twine(kMaxJsonDepth) + " levels deep");
      scopes.push_back({c == '{', c == '{', {}});
    } else if ((c == ']' || c == '}') && !scopes.empty()) {
      scopes.pop_back();
    } else if (c == ',' && !scopes.empty() && scopes.back().isObject) {
      scopes.back().expectKey = true;
    }
  }
  return llvm::json::parse(text);
}
