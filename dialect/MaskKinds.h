//===- MaskKinds.h - the one definition of each attention mask kind -*- C++ -*-===//
//
// Every built-in mask kind (`#attn.mask<...>`) is defined here once, in
// MaskKinds.cpp: the attributes it takes, its element predicate, the key
// span a range of query rows can see, and when a (rows x keys) tile is fully
// allowed. The definitions are written once over an index algebra and
// evaluated two ways: as IR (arith ops on index values, what the lowerings
// emit) and on integers (compile-time decisions, and the unit test that
// checks every definition against the C++ oracle). Every lowering (the
// reference linalg lowering, attn-tile, the edge-list lowering,
// attn-simplify-masks) asks these functions and nothing else; the oracle in
// lib/Runtime/Reference.cpp stays independent of them.
//
// Positions are absolute: a query row i sits at ia = i + (Lk - Lq); keys at j.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_MASKKINDS_H
#define ATTN_DIALECT_MASKKINDS_H

#include "dialect/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <optional>

namespace mlir::attn {

/// The integer parameters of a mask: attributes of the op named by
/// maskParameterNames(), declared by the kinds' definitions in MaskKinds.cpp
/// (not in ODS: a new parameter is one row there), absent ones std::nullopt.
struct MaskParams {
  MaskKind kind = MaskKind::dense;
  /// (name, value) of each parameter present; names are maskParameterNames()'s.
  SmallVector<std::pair<StringRef, int64_t>, 3> values;

  /// Reads the kind and the parameter attributes of an attn.sdpa / attn.mha.
  static MaskParams of(Operation *op);
  /// The parameter called `name` (one of maskParameterNames()).
  std::optional<int64_t> get(StringRef name) const;
  /// Sets the parameter called `name` (one of maskParameterNames()).
  void set(StringRef name, int64_t value);
  /// Writes the kind and the parameters onto an attn.sdpa / attn.mha,
  /// removing parameter attributes the new kind does not have.
  void applyTo(Operation *op) const;
};

/// The op attributes that hold mask parameters, for every kind: what the
/// verifier checks, attn.mha forwards to attn.sdpa and the oracle receives.
ArrayRef<StringRef> maskParameterNames();

/// Checks the op's attributes that are neither declared by its ODS
/// definition nor dialect-prefixed (`dialect.name`, discardable): each must
/// be a mask parameter holding an i64. A misspelled parameter is one error
/// naming the parameters there are.
LogicalResult verifyMaskParamAttrs(Operation *op);

/// Checks that `params` has the attributes its kind requires and no other,
/// with valid values; `emitError` reports the first problem.
LogicalResult verifyMaskParams(const MaskParams &params,
                               function_ref<InFlightDiagnostic()> emitError);

/// Whether the kind is defined by positions alone (false: graph, whose mask
/// is data the lowering reads from its CSR operands).
bool isPositionalMask(MaskKind kind);

//===----------------------------------------------------------------------===//
// As IR (index values; a null Value is "no condition", i.e. true)
//===----------------------------------------------------------------------===//

/// i1: the kind allows key `j` for the query at position `ia`; null when it
/// allows every key (dense, and graph, whose mask is the lowering's data).
Value buildMaskAllowed(OpBuilder &b, Location loc, const MaskParams &params,
                       Value ia, Value j);

/// Inclusive bounds of the keys that any query in [iaLo, iaHi] may see
/// (null: unbounded on that side). Every allowed key lies inside; keys
/// outside never need to be visited.
struct KeySpan {
  Value first, last;
};
KeySpan buildMaskKeySpan(OpBuilder &b, Location loc, const MaskParams &params,
                         Value iaLo, Value iaHi);

/// When every key in [jLo, jHi] is allowed for every query in [iaLo, iaHi]:
/// an i1 condition (null: always), or std::nullopt when the definition can
/// never promise it (the tile is partial: the element mask is applied).
std::optional<Value> buildMaskFull(OpBuilder &b, Location loc,
                                   const MaskParams &params, Value iaLo,
                                   Value iaHi, Value jLo, Value jHi);

//===----------------------------------------------------------------------===//
// On integers (the same definitions)
//===----------------------------------------------------------------------===//

bool maskAllowed(const MaskParams &params, int64_t ia, int64_t j);

/// std::nullopt bounds are unbounded.
struct IntKeySpan {
  std::optional<int64_t> first, last;
};
IntKeySpan maskKeySpan(const MaskParams &params, int64_t iaLo, int64_t iaHi);

/// True when the rectangle is provably fully allowed.
bool maskFull(const MaskParams &params, int64_t iaLo, int64_t iaHi,
              int64_t jLo, int64_t jHi);

} // namespace mlir::attn

#endif // ATTN_DIALECT_MASKKINDS_H
