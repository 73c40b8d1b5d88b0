//===- Json.cpp - JSON parsing with a nesting bound -----------------------===//

#include "lib/Runtime/Json.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::attn;

llvm::Expected<llvm::json::Value> mlir::attn::parseJson(llvm::StringRef text) {
  unsigned depth = 0, line = 1, column = 0;
  bool inString = false, escaped = false;
  for (auto [offset, c] : llvm::enumerate(text)) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        // llvm::json's own error format, which the callers report.
        return llvm::createStringError(
            "[%u:%u, byte=%zu]: JSON nested more than %u levels deep", line,
            column, offset, kMaxJsonDepth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}
