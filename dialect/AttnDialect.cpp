//===- AttnDialect.cpp - attn dialect registration ------------------------===//

#include "dialect/AttnDialect.h"
#include "dialect/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "dialect/AttnDialect.cpp.inc"
#include "dialect/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.cpp.inc"

/// `<keyword>` of an enum attribute; an unknown keyword is one error in the
/// user's words: what was written, what the attribute accepts.
template <typename Enum>
static FailureOr<Enum>
parseEnumKeyword(AsmParser &parser, StringRef what, StringRef choices,
                 llvm::function_ref<std::optional<Enum>(StringRef)> symbolize) {
  StringRef keyword;
  if (parser.parseLess())
    return failure();
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<Enum> value = symbolize(keyword);
  if (!value)
    return parser.emitError(loc)
           << "unknown " << what << " '" << keyword << "'; expected one of "
           << choices;
  if (parser.parseGreater())
    return failure();
  return *value;
}

/// "a, b, c": every case of an I32EnumAttr, in declaration order.
template <typename Enum>
static std::string enumChoices(uint32_t maxValue,
                               llvm::function_ref<StringRef(Enum)> stringify) {
  std::string s;
  for (uint32_t v = 0; v <= maxValue; ++v)
    s += (v ? ", " : "") + stringify(static_cast<Enum>(v)).str();
  return s;
}

Attribute MaskKindAttr::parse(AsmParser &parser, Type) {
  std::string choices = enumChoices<MaskKind>(
      getMaxEnumValForMaskKind(), [](MaskKind k) { return stringifyMaskKind(k); });
  FailureOr<MaskKind> kind = parseEnumKeyword<MaskKind>(
      parser, "mask kind", choices,
      [](StringRef s) { return symbolizeMaskKind(s); });
  return succeeded(kind) ? MaskKindAttr::get(parser.getContext(), *kind)
                         : Attribute();
}

void MaskKindAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyMaskKind(getValue()) << '>';
}

Attribute AlignAttr::parse(AsmParser &parser, Type) {
  std::string choices = enumChoices<Align>(
      getMaxEnumValForAlign(), [](Align a) { return stringifyAlign(a); });
  FailureOr<Align> align = parseEnumKeyword<Align>(
      parser, "alignment", choices,
      [](StringRef s) { return symbolizeAlign(s); });
  return succeeded(align) ? AlignAttr::get(parser.getContext(), *align)
                          : Attribute();
}

void AlignAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyAlign(getValue()) << '>';
}

Attribute HeadCombineAttr::parse(AsmParser &parser, Type) {
  std::string choices = enumChoices<HeadCombine>(
      getMaxEnumValForHeadCombine(),
      [](HeadCombine c) { return stringifyHeadCombine(c); });
  FailureOr<HeadCombine> combine = parseEnumKeyword<HeadCombine>(
      parser, "head combination", choices,
      [](StringRef s) { return symbolizeHeadCombine(s); });
  return succeeded(combine)
             ? HeadCombineAttr::get(parser.getContext(), *combine)
             : Attribute();
}

void HeadCombineAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyHeadCombine(getValue()) << '>';
}

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/AttnAttrs.cpp.inc"
      >();
}
