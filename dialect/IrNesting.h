//===- IrNesting.h - bound the nesting of MLIR text before parsing -*- C++ -*-===//
//
// MLIR's parser recurses once per nested attribute, type or region: a few
// thousand `[` in a 30 KB file overflow its stack (a segfault, not an
// error). It also converts a decimal integer literal digit by digit into an
// APInt, in time about cubic in its length: a 20 000-digit literal took 22 s
// to parse. The tools that parse user IR (attn-opt, attn-run, the IR fuzzer)
// first scan the text and refuse nesting deeper, and numbers longer, than
// any real module has.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_IRNESTING_H
#define ATTN_DIALECT_IRNESTING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::attn {

/// The most brackets (`(`, `[`, `{`, `<`) MLIR text may nest: far beyond
/// real IR (a module's regions, a dense literal's rank, a type's nesting are
/// tens), far below what overflows the parser's stack (thousands; fewer
/// under the sanitizers).
constexpr int64_t kMaxIrNesting = 512;

/// The most decimal digits in a row MLIR text may have: an i8192 constant
/// has 2 467; 4 096 digits parse in well under a second.
constexpr int64_t kMaxIrDigits = 4096;

/// The widest integer type (`iN`, `siN`, `uiN`) MLIR text may name: MLIR
/// allows 2^24 - 1 bits, where every constant and operation is an APInt of
/// that width (three 4 096-digit constants of i16777215 took 17 s); no
/// attention model needs more than 64.
constexpr int64_t kMaxIrIntegerBits = 1024;

namespace detail {
inline bool isIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.' ||
         c == '%' || c == '@' || c == '#' || c == '^' || c == '!' ||
         c == '-';
}
/// The width N of an integer type `iN` / `siN` / `uiN` whose digits start
/// at `digits` in `text` (the `i` at `digits - 1`), or -1 when the letters
/// are part of an identifier or name an attribute (`i2048 = 1`). Shapes
/// (`4xi64`, `?xi8`, `[4]xi1`, `*xi8`) count; leading zeros of the width
/// are MLIR's too (`i016` is i16).
inline int64_t integerTypeWidth(llvm::StringRef text, size_t digits) {
  size_t start = digits - 1; // the 'i'
  if (start > 0 && (text[start - 1] == 's' || text[start - 1] == 'u'))
    --start;
  if (start > 0 && isIdentifierChar(text[start - 1])) {
    char before = text[start - 1];
    char twoBefore = start > 1 ? text[start - 2] : ' ';
    bool shape = before == 'x' &&
                 ((twoBefore >= '0' && twoBefore <= '9') ||
                  twoBefore == '?' || twoBefore == ']' || twoBefore == '*');
    if (!shape)
      return -1;
  }
  size_t end = digits;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9')
    ++end;
  if (end < text.size() && isIdentifierChar(text[end]))
    return -1;
  size_t after = end;
  while (after < text.size() && (text[after] == ' ' || text[after] == '\t'))
    ++after;
  if (after < text.size() && text[after] == '=')
    return -1;
  llvm::StringRef number = text.slice(digits, end).ltrim('0');
  if (number.empty())
    return 0;
  int64_t width;
  if (number.size() > 18)
    return INT64_MAX;
  if (number.getAsInteger(10, width))
    return -1;
  return width;
}
} // namespace detail

/// One error naming `name`:LINE:COLUMN of the first bracket past
/// `maxDepth`, the first run of more than `kMaxIrDigits` decimal digits or
/// the first integer type wider than `kMaxIrIntegerBits`, or success.
/// String literals and `//` comments are skipped; the `>` of `->` closes
/// nothing, nor do `<=` / `>=` in an affine map or set open or close; the
/// names of an affine map's dimensions and symbols are not types.
inline llvm::Error checkIrNesting(llvm::StringRef text, llvm::StringRef name,
                                  int64_t maxDepth = kMaxIrNesting) {
  int64_t depth = 0;
  // Inside `affine_map<...>` / `affine_set<...>` (from the depth before its
  // `<`; -1 outside): bare identifiers there are dimensions and symbols
  // (`(i2048) -> (i2048)`), not types, and `>=` compares.
  int64_t affineDepth = -1;
  unsigned line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
      continue;
    }
    if (c == '"') {
      // To the closing quote (a backslash escapes the next character), or
      // before the end of the line.
      while (i + 1 < text.size() && text[i + 1] != '"' && text[i + 1] != '\n')
        i += text[i + 1] == '\\' && i + 2 < text.size() && text[i + 2] != '\n'
                 ? 2
                 : 1;
      if (i + 1 < text.size() && text[i + 1] == '"')
        ++i;
      continue;
    }
    if (c == 'a' && affineDepth < 0 &&
        (i == 0 || !detail::isIdentifierChar(text[i - 1])) &&
        (text.substr(i).starts_with("affine_map") ||
         text.substr(i).starts_with("affine_set"))) {
      size_t next = i + llvm::StringRef("affine_map").size();
      while (next < text.size() && (text[next] == ' ' || text[next] == '\t'))
        ++next;
      if (next < text.size() && text[next] == '<') {
        affineDepth = depth;
        i = next - 1; // the `<` comes next
        continue;
      }
    }
    if (c == 'i' && affineDepth < 0 && i + 1 < text.size() &&
        text[i + 1] >= '0' && text[i + 1] <= '9') {
      int64_t width = detail::integerTypeWidth(text, i + 1);
      if (width > kMaxIrIntegerBits)
        return llvm::createStringError(
            "%s:%u:%zu: an integer type of %s bits (at most %lld: MLIR "
            "computes with every value of it at that width): refused before "
            "parsing",
            name.str().c_str(), line,
            i - lineStart + 1 -
                (i > lineStart && (text[i - 1] == 's' || text[i - 1] == 'u')),
            width == INT64_MAX ? "more than 10^18"
                               : std::to_string(width).c_str(),
            (long long)kMaxIrIntegerBits);
      continue;
    }
    if (c >= '0' && c <= '9') {
      size_t start = i;
      while (i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9')
        ++i;
      if (int64_t(i - start + 1) > kMaxIrDigits)
        return llvm::createStringError(
            "%s:%u:%zu: a number of %zu digits (at most %lld; MLIR's parser "
            "takes time cubic in the length): refused before parsing",
            name.str().c_str(), line, start - lineStart + 1, i - start + 1,
            (long long)kMaxIrDigits);
      continue;
    }
    // In an affine map or set, `<` and `>` before `=` (`<=`, `> =`:
    // MLIR's lexer takes them apart) compare.
    if (affineDepth >= 0 && (c == '<' || c == '>')) {
      size_t next = i + 1;
      while (next < text.size() &&
             (text[next] == ' ' || text[next] == '\t' || text[next] == '\n'))
        ++next;
      if (next < text.size() && text[next] == '=')
        continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > maxDepth)
        return llvm::createStringError(
            "%s:%u:%zu: brackets nested deeper than %lld (MLIR's parser would "
            "overflow its stack): refused before parsing",
            name.str().c_str(), line, i - lineStart + 1, (long long)maxDepth);
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && !(i > 0 && text[i - 1] == '-'))) {
      depth = depth > 0 ? depth - 1 : 0;
      if (depth <= affineDepth)
        affineDepth = -1;
    }
  }
  return llvm::Error::success();
}

} // namespace mlir::attn

#endif // ATTN_DIALECT_IRNESTING_H
