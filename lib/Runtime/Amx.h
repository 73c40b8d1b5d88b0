//===- Amx.h - running AMX code: permission, and a software fallback -----===//
//
// Code for a target with AMX (attn-lower-amx's tile products) needs the
// kernel's permission to use the tile registers (Linux: arch_prctl
// ARCH_REQ_XCOMP_PERM) before its first tile instruction. On a host without
// AMX the same code can still run for testing: the AMX emulator executes
// each tile instruction in software from the SIGILL it raises (the rest of
// the code runs natively), so that the numerics of AMX kernels are checked
// on any host with the kernels' other instructions.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_AMX_H
#define ATTN_LIB_RUNTIME_AMX_H

#include "llvm/Support/Error.h"

#include <cstdint>

namespace mlir::attn {

/// Whether this CPU has AMX-TILE and AMX-BF16 (cpuid), whether or not the
/// kernel grants them (requestAmxPermission).
bool cpuHasAmxBf16();

/// Asks the kernel for this process's permission to use AMX tile data
/// (needed once, before any thread runs a tile instruction); an error says
/// why it was refused (no AMX on this host, a kernel older than 5.16).
llvm::Error requestAmxPermission();

/// Installs the AMX emulator: a SIGILL handler that executes the AMX
/// instructions LLVM emits (ldtilecfg, sttilecfg, tileloadd, tileloaddt1,
/// tilestored, tilezero, tilerelease, tdpbf16ps) on per-thread tile
/// registers in memory, as Intel's SDM defines them, and resumes after the
/// instruction. Any other illegal instruction (or a SIGILL another process
/// sends) gets the disposition SIGILL had before: by default the process
/// ends. Meant for tests of AMX code on hosts without AMX: each emulated
/// instruction costs a signal.
void installAmxEmulator();

/// Whether installAmxEmulator has run in this process.
bool amxEmulatorInstalled();

/// How many tile instructions the emulator has executed so far (all
/// threads).
uint64_t amxEmulatedInstructions();

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_AMX_H
