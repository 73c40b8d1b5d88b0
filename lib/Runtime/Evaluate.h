//===- Evaluate.h - attn functions on the C++ reference ---------*- C++ -*-===//
//
// Runs a function made of attn ops on the naive C++ reference kernels (the
// test oracle), generates seeded inputs that respect each operand's role
// (lengths, CSR graphs, slopes), and validates user-given inputs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_EVALUATE_H
#define ATTN_LIB_RUNTIME_EVALUATE_H

#include "lib/Runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <vector>

namespace mlir::attn {

/// Evaluates `func` with the C++ reference: every op in its body must be an
/// attn op (or func.return); operands are function arguments or results of
/// earlier attn ops. With `rowStride` > 1, attn.sdpa computes only one query
/// row per `rowStride` (reference::isSampledRow) and the last; the others
/// are zero.
llvm::Expected<std::vector<HostTensor>>
evaluateWithReference(func::FuncOp func,
                      llvm::ArrayRef<const HostTensor *> inputs,
                      int64_t rowStride = 1);

/// The relative tolerance of a result of `dtype` checked against the C++
/// reference: `rtol`, and at least two units in the last place of a 16-bit
/// result (the reference rounds its double result once, compiled code an
/// f32 result: the two may differ by one unit, 2^-7 relative for bf16 and
/// 2^-10 for f16).
double referenceTolerance(DType dtype, double rtol);

/// Seeded inputs for `func`'s arguments. Arguments that feed an attn op get
/// values that fit their role: kv_lengths in [0, Lk] (the last batch fully
/// padded when B > 1), a random CSR graph with empty rows for row_ptr/col_idx,
/// ALiBi's geometric slopes, document ids (integer tensors a mask_mod reads
/// at q_idx or kv_idx) as sorted runs of 0..7 along their last dimension.
/// Other floats are uniform in [-magnitude, magnitude], other integers in
/// [0, 3].
std::vector<HostTensor> generateInputs(func::FuncOp func, uint64_t seed,
                                       double magnitude);

/// Checks the inputs: first every shape and dtype against `func`'s argument
/// types, then the values attn ops cannot take: kv_lengths outside [0, Lk],
/// a CSR whose row_ptr is not monotone from 0 to nnz, or whose col_idx
/// leaves [0, Lk); NaN / inf values; index inputs a region uses outside the
/// tensor they index. Errors name the input ("@f input 3 (ids.npy)": the
/// file it came from, when `sources[i]` is not empty).
llvm::Error validateInputs(func::FuncOp func,
                           llvm::ArrayRef<const HostTensor *> inputs,
                           llvm::ArrayRef<std::string> sources = {});

/// Gives `func`'s dynamic dimensions (`?`) the sizes of its inputs:
/// `shapes[i]`, when set, is argument i's (an --input file's); every
/// argument with a dynamic dimension needs one, of its rank and static
/// sizes. The attn ops' results get the shapes their operands imply (the
/// other ops must have static results), then the function's type follows
/// its return, and the function is verified again. A function without
/// dynamic dimensions is left as it is.
llvm::Error
specializeDynamicShapes(func::FuncOp func,
                        llvm::ArrayRef<std::optional<std::vector<int64_t>>> shapes);

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_EVALUATE_H
