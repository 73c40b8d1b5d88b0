//===- Json.h - JSON parsing with a nesting bound ---------------*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level: a file of a few
// hundred kilobytes of `[[[[...` overflows the stack, and of a key written
// twice it keeps one silently. Every reader of JSON in the toolkit (model
// descriptions, safetensors headers, the tuning cache) parses through
// parseJson, which first checks the nesting and the keys.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_JSON_H
#define ATTN_LIB_RUNTIME_JSON_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace mlir::attn {

/// Deepest nesting of arrays and objects any reader accepts (real files
/// nest a few levels; 64 leaves room and stays far from the stack's limit).
constexpr unsigned kMaxJsonDepth = 64;

/// llvm::json::parse of `text`, after checking that arrays and objects nest
/// at most kMaxJsonDepth deep and that no object repeats a key (llvm::json
/// would silently keep one of them); either is an error in llvm::json's
/// format ("[line:column, byte=N]: message") at the bracket or key.
llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef text);

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_JSON_H
