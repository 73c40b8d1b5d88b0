//===- Json.h - JSON parsing with a nesting bound ---------------*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level: a file of a few
// hundred kilobytes of `[[[[...` overflows the stack. Every reader of JSON in
// the toolkit (model descriptions, safetensors headers, the tuning cache,
// HF configs) parses through parseJson, which first checks the nesting.
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
/// at most kMaxJsonDepth deep; a deeper document is an error in
/// llvm::json's format ("[line:column, byte=N]: message") at the bracket
/// that passes the limit.
llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef text);

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_JSON_H
