//===- Budget.h - the memory budget of sizes an input claims ----*- C++ -*-===//
//
// Every allocation whose size comes from an input (a file's header, a model
// description, a graph's ids, the static shapes of an IR function) is
// checked against one memory budget before anything is allocated, so that a
// 100-byte file claiming a terabyte is one error naming the size, never an
// allocation the kernel kills. The budget is, in order: what a tool's
// --memory-budget sets (setMemoryBudget), the ATTN_MEMORY_BUDGET environment
// variable, or the default: half of what the process may use (the physical
// memory, or less under a ulimit -v / -d or a cgroup memory.max). Sizes read "4G", "512M", "64K" or a number of bytes (powers of
// 1024; "GiB"/"GB" spellings accepted).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_BUDGET_H
#define ATTN_LIB_RUNTIME_BUDGET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <string>

namespace mlir::attn {

/// What this process may use: the physical memory, RLIMIT_AS /
/// RLIMIT_DATA or the cgroup's memory.max, whichever is least (at least
/// 128 MiB). A budget a tool is given may not exceed it.
uint64_t processMemoryLimit();

/// Half of processMemoryLimit() (at least 64 MiB).
uint64_t defaultMemoryBudget();

/// The budget in force (see the file comment); the environment and the
/// default are read once per process. A malformed ATTN_MEMORY_BUDGET is
/// ignored here; tools report it through configureMemoryBudget.
uint64_t memoryBudget();

/// Sets the budget for this process (0 restores the environment's or the
/// default).
void setMemoryBudget(uint64_t bytes);

/// For tools: applies `option` (a --memory-budget value; empty: none) or
/// else checks ATTN_MEMORY_BUDGET. A malformed or zero size, or one above
/// processMemoryLimit(), is an error naming its source.
llvm::Error configureMemoryBudget(llvm::StringRef option);

/// "4G", "512M", "64K", "1.5G", "123" (bytes); error text says what is
/// expected.
llvm::Expected<uint64_t> parseByteSize(llvm::StringRef text);

/// "12.0 GiB", "512.0 MiB", "300 bytes".
std::string formatBytes(uint64_t bytes);

/// An error unless `bytes` fits in the budget: "WHAT needs N (B bytes),
/// more than the memory budget of M (--memory-budget or
/// ATTN_MEMORY_BUDGET sets it)".
llvm::Error checkBudget(uint64_t bytes, const llvm::Twine &what);

/// The bytes of a dense tensor of `shape` with `elementBytes`-byte
/// elements, with every product checked: a negative dimension, a product
/// past 2^64 or one over the budget is an error naming `what` (which should
/// say the shape or type).
llvm::Expected<uint64_t> checkedTensorBytes(llvm::ArrayRef<int64_t> shape,
                                            uint64_t elementBytes,
                                            const llvm::Twine &what);

/// Checks that `path` names a regular file (a device such as /dev/zero, or
/// a pipe, would be read without end) whose size fits the memory budget.
/// Errors read "PATH: cannot open: REASON" or "PATH: cannot open: not a
/// regular file ...".
llvm::Error checkInputFile(llvm::StringRef path);

/// Reads the whole file at `path` for a reader, after checkInputFile (the
/// buffer is not null-terminated).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, bool isText);

/// For tools: an allocation that fails (a size that fit the budget, but
/// memory the rest of the process or other processes hold) ends it with one
/// line "TOOL: error: out of memory ..." naming the budget, and exit status
/// 1, instead of LLVM's abort. Call after llvm::InitLLVM.
void installOutOfMemoryError(const char *tool);

/// "[2, 3, 4]".
std::string shapeString(llvm::ArrayRef<int64_t> shape);

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_BUDGET_H
