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

/// `<keyword>` of an enum attribute (one of `Enum`'s cases, 0 to
/// `maxValue`); an unknown keyword is one error in the user's words: what
/// was written, and every keyword the attribute accepts.
template <typename AttrT, typename Enum>
static Attribute
parseEnumAttr(AsmParser &parser, StringRef what, uint32_t maxValue,
              llvm::function_ref<StringRef(Enum)> stringify,
              llvm::function_ref<std::optional<Enum>(StringRef)> symbolize) {
  StringRef keyword;
  if (parser.parseLess())
    return {};
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return {};
  std::optional<Enum> value = symbolize(keyword);
  if (!value) {
    std::string choices;
    for (uint32_t v = 0; v <= maxValue; ++v)
      choices += (v ? ", " : "") + stringify(static_cast<Enum>(v)).str();
    parser.emitError(loc) << "unknown " << what << " '" << keyword
                          << "'; expected one of " << choices;
    return {};
  }
  if (parser.parseGreater())
    return {};
  return AttrT::get(parser.getContext(), *value);
}

Attribute MaskKindAttr::parse(AsmParser &parser, Type) {
  return parseEnumAttr<MaskKindAttr, MaskKind>(
      parser, "mask kind", getMaxEnumValForMaskKind(),
      [](MaskKind k) { return stringifyMaskKind(k); },
      [](StringRef s) { return symbolizeMaskKind(s); });
}

void MaskKindAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyMaskKind(getValue()) << '>';
}

Attribute AlignAttr::parse(AsmParser &parser, Type) {
  return parseEnumAttr<AlignAttr, Align>(
      parser, "alignment", getMaxEnumValForAlign(),
      [](Align a) { return stringifyAlign(a); },
      [](StringRef s) { return symbolizeAlign(s); });
}

void AlignAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyAlign(getValue()) << '>';
}

Attribute HeadCombineAttr::parse(AsmParser &parser, Type) {
  return parseEnumAttr<HeadCombineAttr, HeadCombine>(
      parser, "head combination", getMaxEnumValForHeadCombine(),
      [](HeadCombine c) { return stringifyHeadCombine(c); },
      [](StringRef s) { return symbolizeHeadCombine(s); });
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
