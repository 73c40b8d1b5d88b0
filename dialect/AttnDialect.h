//===- AttnDialect.h - attn dialect -----------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNDIALECT_H
#define ATTN_DIALECT_ATTNDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "dialect/AttnDialect.h.inc"
#include "dialect/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.h.inc"

#endif // ATTN_DIALECT_ATTNDIALECT_H
