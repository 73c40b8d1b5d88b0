//===- Amx.cpp - running AMX code: permission, and a software fallback ----===//
//
// The emulator decodes the VEX-encoded AMX instructions (map 0F38, W0, L0)
// at the faulting instruction pointer, executes them on this thread's tile
// registers (thread-local, initial-exec: no allocation in the handler) and
// moves the instruction pointer past them. Semantics follow the pseudocode
// of Intel's SDM (vol. 2, "TDPBF16PS", "TILELOADD", "LDTILECFG"): rows past
// a tile's configured rows and bytes past its configured bytes per row are
// zeroed on every write; for tdpbf16ps, bf16 inputs that are denormal count
// as zero, the even and the odd elements of the pairs are summed separately
// over the reduction by f32 FMAs (round to nearest even, denormal results
// flushed to zero), and their sum is added to the accumulator (the current
// SDM's order; older revisions and Intel's intrinsics guide add each product
// to the accumulator in turn: the two differ only in rounding).
//
//===----------------------------------------------------------------------===//

#include "lib/Runtime/Amx.h"

#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <ucontext.h>
#define ATTN_AMX_EMULATOR 1
#endif

using namespace mlir::attn;

bool mlir::attn::cpuHasAmxBf16() {
#if defined(__x86_64__)
  // cpuid leaf 7: EDX bit 24 AMX-TILE, bit 22 AMX-BF16.
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 24 & 1) &&
         (d >> 22 & 1);
#else
  return false;
#endif
}

llvm::Error mlir::attn::requestAmxPermission() {
#if defined(ATTN_AMX_EMULATOR)
  // Linux's ARCH_REQ_XCOMP_PERM (the x86 prctl header of its uapi) and the
  // XSAVE component number of XTILEDATA.
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0)
    return llvm::createStringError(
        "the kernel refused AMX tile data (arch_prctl ARCH_REQ_XCOMP_PERM: "
        "%s): this host or kernel (Linux >= 5.16) has no AMX",
        std::strerror(errno));
  return llvm::Error::success();
#else
  return llvm::createStringError("AMX needs x86-64 Linux");
#endif
}

namespace {

std::atomic<uint64_t> emulated{0};
std::atomic<bool> installed{false};

#if defined(ATTN_AMX_EMULATOR)

constexpr int kTiles = 8, kRows = 16, kRowBytes = 64;

struct TileState {
  uint8_t palette = 0;
  uint8_t rows[kTiles] = {};
  uint16_t colsb[kTiles] = {};
  alignas(64) uint8_t data[kTiles][kRows][kRowBytes] = {};
};

__attribute__((tls_model("initial-exec"))) thread_local TileState tiles;

/// The SIGILL disposition before the emulator's (LLVM's stack-trace
/// handler in the tools), restored for illegal instructions it does not
/// execute.
struct sigaction previous;

/// Writes `message` and `ip` to stderr with async-signal-safe calls only.
void report(const char *message, const uint8_t *ip) {
  auto put = [](const char *text) {
    (void)!write(STDERR_FILENO, text, std::strlen(text));
  };
  char hex[19] = "0x";
  auto value = reinterpret_cast<uintptr_t>(ip);
  for (int i = 0; i < 16; ++i)
    hex[2 + i] = "0123456789abcdef"[(value >> (60 - 4 * i)) & 0xf];
  hex[18] = 0;
  put("attn AMX emulator: ");
  put(message);
  put(" at ");
  put(hex);
  put("\n");
}

/// gregs index of x86 register number 0-15 (rax, rcx, rdx, rbx, rsp, rbp,
/// rsi, rdi, r8-r15).
constexpr int kGreg[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
                           REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
                           REG_R12, REG_R13, REG_R14, REG_R15};

/// A decoded memory operand: the address (base + displacement) and, for
/// the SIB forms of tile loads and stores, the stride (index << scale, 0
/// without an index register).
struct Memory {
  uint64_t address = 0, stride = 0;
};

float bf16ToFloat(uint16_t bits) {
  // Denormal inputs (exponent 0) count as zero.
  if ((bits & 0x7f80) == 0)
    bits &= 0x8000;
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

float flushDenormal(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7f800000) == 0)
    bits &= 0x80000000;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

bool configured(int t) {
  return tiles.palette == 1 && tiles.rows[t] != 0 && tiles.colsb[t] != 0;
}

/// Executes the AMX instruction at `ip`; its length, or 0 when `ip` holds
/// no instruction this emulator executes (or an invalid use of one).
size_t execute(const uint8_t *ip, greg_t *gregs) {
  const uint8_t *p = ip;
  if (p[0] != 0xc4)
    return 0;
  bool rexR = !(p[1] & 0x80), rexX = !(p[1] & 0x40), rexB = !(p[1] & 0x20);
  int map = p[1] & 0x1f;
  bool w = p[2] & 0x80, l = p[2] & 0x04;
  int vvvv = (~p[2] >> 3) & 0xf, pp = p[2] & 3;
  uint8_t opcode = p[3], modrm = p[4];
  if (map != 2 || w || l)
    return 0;
  p += 5;
  int mod = modrm >> 6, reg = ((modrm >> 3) & 7) | (rexR ? 8 : 0),
      rm = modrm & 7;
  Memory mem;
  if (mod != 3) {
    int64_t base = 0;
    bool ripRelative = false;
    if (rm == 4) {
      uint8_t sib = *p++;
      int scale = sib >> 6, index = ((sib >> 3) & 7) | (rexX ? 8 : 0),
          baseReg = (sib & 7) | (rexB ? 8 : 0);
      if (index != 4)
        mem.stride = static_cast<uint64_t>(gregs[kGreg[index]]) << scale;
      if ((baseReg & 7) == 5 && mod == 0)
        mod = 2; // disp32 and no base
      else
        base = gregs[kGreg[baseReg]];
    } else if (rm == 5 && mod == 0) {
      ripRelative = true;
      mod = 2;
    } else {
      base = gregs[kGreg[rm | (rexB ? 8 : 0)]];
    }
    int64_t disp = 0;
    if (mod == 1) {
      disp = static_cast<int8_t>(*p++);
    } else if (mod == 2) {
      int32_t d;
      std::memcpy(&d, p, 4);
      p += 4;
      disp = d;
    }
    size_t length = static_cast<size_t>(p - ip);
    if (ripRelative)
      base = reinterpret_cast<int64_t>(ip) + static_cast<int64_t>(length);
    mem.address = static_cast<uint64_t>(base + disp);
  }
  size_t length = static_cast<size_t>(p - ip);
  auto *memory = reinterpret_cast<uint8_t *>(mem.address);

  if (opcode == 0x49 && mod != 3 && (pp == 0 || pp == 1) && vvvv == 0 &&
      reg == 0) {
    if (pp == 1) { // sttilecfg m512
      std::memset(memory, 0, 64);
      memory[0] = tiles.palette;
      for (int t = 0; t < kTiles; ++t) {
        std::memcpy(memory + 16 + 2 * t, &tiles.colsb[t], 2);
        memory[48 + t] = tiles.rows[t];
      }
      return length;
    }
    // ldtilecfg m512: palette 0 is the init state, palette 1 configures;
    // reserved bytes (2-15, tiles 8-15) must be zero (#GP otherwise).
    uint8_t palette = memory[0];
    if (palette > 1)
      return 0;
    for (int i = 2; i < 16; ++i)
      if (memory[i] != 0)
        return 0;
    for (int i = 16 + 2 * kTiles; i < 48; ++i)
      if (memory[i] != 0)
        return 0;
    for (int i = 48 + kTiles; i < 64; ++i)
      if (memory[i] != 0)
        return 0;
    tiles = TileState();
    if (palette == 0)
      return length;
    for (int t = 0; t < kTiles; ++t) {
      uint16_t colsb;
      std::memcpy(&colsb, memory + 16 + 2 * t, 2);
      uint8_t rows = memory[48 + t];
      if (colsb > kRowBytes || rows > kRows)
        return 0;
      tiles.colsb[t] = colsb;
      tiles.rows[t] = rows;
    }
    tiles.palette = 1;
    return length;
  }
  if (opcode == 0x49 && mod == 3 && pp == 0 && modrm == 0xc0 && vvvv == 0) {
    tiles = TileState(); // tilerelease
    return length;
  }
  if (opcode == 0x49 && mod == 3 && pp == 3 && rm == 0 && vvvv == 0 &&
      reg < kTiles) {
    if (!configured(reg))
      return 0;
    std::memset(tiles.data[reg], 0, sizeof(tiles.data[reg])); // tilezero
    return length;
  }
  if (opcode == 0x4b && mod != 3 && rm == 4 && vvvv == 0 &&
      reg < kTiles && pp != 0) {
    if (!configured(reg))
      return 0;
    int rows = tiles.rows[reg], colsb = tiles.colsb[reg];
    if (pp == 2) { // tilestored sibmem, tmm
      for (int r = 0; r < rows; ++r)
        std::memcpy(memory + r * mem.stride, tiles.data[reg][r], colsb);
      return length;
    }
    // tileloadd (F2) / tileloaddt1 (66) tmm, sibmem
    std::memset(tiles.data[reg], 0, sizeof(tiles.data[reg]));
    for (int r = 0; r < rows; ++r)
      std::memcpy(tiles.data[reg][r], memory + r * mem.stride, colsb);
    return length;
  }
  if (opcode == 0x5c && mod == 3 && pp == 2 && reg < kTiles && vvvv < kTiles) {
    // tdpbf16ps tmm1 (reg) += tmm2 (rm) . tmm3 (vvvv)
    int c = reg, a = rm | (rexB ? 8 : 0), b = vvvv;
    if (a >= kTiles || c == a || c == b || a == b || !configured(a) ||
        !configured(b) || !configured(c))
      return 0;
    int m = tiles.rows[c], n = tiles.colsb[c] / 4, k = tiles.colsb[a] / 4;
    if (tiles.colsb[c] % 4 != 0 || tiles.colsb[a] % 4 != 0 ||
        tiles.rows[a] != m || tiles.rows[b] != k || tiles.colsb[b] != 4 * n)
      return 0;
    for (int i = 0; i < m; ++i) {
      float acc[kRowBytes / 4], even[kRowBytes / 4] = {},
                                odd[kRowBytes / 4] = {};
      std::memcpy(acc, tiles.data[c][i], sizeof(acc));
      for (int kk = 0; kk < k; ++kk) {
        uint16_t a2[2], b2[2];
        std::memcpy(a2, &tiles.data[a][i][4 * kk], 4);
        for (int j = 0; j < n; ++j) {
          std::memcpy(b2, &tiles.data[b][kk][4 * j], 4);
          even[j] = flushDenormal(
              std::fmaf(bf16ToFloat(a2[0]), bf16ToFloat(b2[0]), even[j]));
          odd[j] = flushDenormal(
              std::fmaf(bf16ToFloat(a2[1]), bf16ToFloat(b2[1]), odd[j]));
        }
      }
      for (int j = 0; j < n; ++j)
        acc[j] = flushDenormal(flushDenormal(acc[j]) +
                               flushDenormal(even[j] + odd[j]));
      std::memset(tiles.data[c][i], 0, kRowBytes);
      std::memcpy(tiles.data[c][i], acc, 4 * n);
    }
    for (int i = m; i < kRows; ++i)
      std::memset(tiles.data[c][i], 0, kRowBytes);
    return length;
  }
  return 0;
}

void onIllegalInstruction(int signo, siginfo_t *info, void *context) {
  auto *uc = static_cast<ucontext_t *>(context);
  greg_t *gregs = uc->uc_mcontext.gregs;
  const auto *ip = reinterpret_cast<const uint8_t *>(gregs[REG_RIP]);
  // A SIGILL sent by a process (si_code <= 0) is not a fault at `ip`.
  if (info->si_code > 0) {
    if (size_t length = execute(ip, gregs)) {
      gregs[REG_RIP] += static_cast<greg_t>(length);
      emulated.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    report("illegal instruction (not an AMX instruction it executes, or an "
           "invalid use of one)",
           ip);
  }
  // Not ours: the previous disposition, as without the emulator (a fault
  // comes back when the instruction is retried; a sent signal is re-sent).
  sigaction(SIGILL, &previous, nullptr);
  if (info->si_code <= 0)
    raise(signo);
}

#endif // ATTN_AMX_EMULATOR

} // namespace

void mlir::attn::installAmxEmulator() {
#if defined(ATTN_AMX_EMULATOR)
  if (installed.exchange(true))
    return;
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = onIllegalInstruction;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGILL, &action, &previous);
#endif
}

bool mlir::attn::amxEmulatorInstalled() { return installed.load(); }

uint64_t mlir::attn::amxEmulatedInstructions() { return emulated.load(); }
