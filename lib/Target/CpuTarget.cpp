//===- CpuTarget.cpp - the CPU a module is compiled for -------------------===//

#include "lib/Target/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <mutex>

using namespace mlir;
using namespace mlir::attn;
using llvm::createStringError;

static void initializeTargets() {
  static std::once_flag flag;
  std::call_once(flag, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllTargets();
    llvm::InitializeAllAsmPrinters();
  });
}

bool CpuTarget::hasFeature(llvm::StringRef name) const {
  return llvm::is_contained(enabled, name);
}

/// `features` without blanks around its comma-separated items.
static std::string normalizeFeatures(llvm::StringRef features) {
  llvm::SmallVector<llvm::StringRef> list;
  features.split(list, ',', -1, /*KeepEmpty=*/false);
  std::string out;
  for (llvm::StringRef f : list)
    if (!f.trim().empty())
      out += (out.empty() ? "" : ",") + f.trim().str();
  return out;
}

/// Subtarget info for (triple, cpu, features); `features` is normalised
/// (normalizeFeatures). Errors name what is unknown.
static llvm::Expected<std::unique_ptr<llvm::MCSubtargetInfo>>
subtargetInfo(llvm::StringRef tripleName, llvm::StringRef cpu,
              llvm::StringRef features) {
  initializeTargets();
  llvm::Triple triple(tripleName);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return createStringError("unknown target triple '%s': %s",
                             tripleName.str().c_str(), error.c_str());
  std::unique_ptr<llvm::MCSubtargetInfo> base(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!base)
    return createStringError("no subtarget information for '%s'",
                             tripleName.str().c_str());
  if (!cpu.empty() && !base->isCPUStringValid(cpu))
    return createStringError(
        "unknown CPU '%s' for %s (names as llc's -mcpu, e.g. x86-64-v3, "
        "znver4, sapphirerapids, neoverse-n1)",
        cpu.str().c_str(), tripleName.str().c_str());
  llvm::SmallVector<llvm::StringRef> list;
  features.split(list, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef feature : list) {
    llvm::StringRef name = feature;
    if (!name.consume_front("+") && !name.consume_front("-"))
      return createStringError(
          "target feature '%s' must start with '+' or '-' (as llc's -mattr)",
          feature.str().c_str());
    if (!llvm::any_of(base->getAllProcessorFeatures(),
                      [&](const llvm::SubtargetFeatureKV &kv) {
                        return name == kv.Key;
                      }))
      return createStringError("unknown target feature '%s' for %s",
                               name.str().c_str(), tripleName.str().c_str());
  }
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target->createMCSubtargetInfo(triple, cpu, features));
}

/// The host's features that differ from what its CPU name implies.
static std::string hostFeatureDelta(llvm::StringRef triple,
                                    llvm::StringRef cpu) {
  auto info = subtargetInfo(triple, cpu, "");
  if (!info) {
    llvm::consumeError(info.takeError());
    return "";
  }
  std::string delta;
  for (auto &entry : llvm::sys::getHostCPUFeatures()) {
    const llvm::SubtargetFeatureKV *kv = nullptr;
    for (const llvm::SubtargetFeatureKV &f : (*info)->getAllProcessorFeatures())
      if (entry.getKey() == f.Key)
        kv = &f;
    if (!kv || (*info)->getFeatureBits()[kv->Value] == entry.getValue())
      continue;
    if (!delta.empty())
      delta += ',';
    delta += (entry.getValue() ? "+" : "-") + entry.getKey().str();
  }
  return delta;
}

bool CpuTarget::hasSlowBf16DotProduct() const {
  if (!hasBf16DotProduct())
    return false;
  if (llvm::is_contained({"sapphirerapids", "emeraldrapids", "graniterapids",
                          "graniterapids-d"},
                         llvm::StringRef(cpu)))
    return true;
  // A virtual machine may name another CPU (a Sapphire Rapids-class guest
  // detected as `rocketlake`) with the Xeon's features. AMX comes only with
  // Intel's Xeons (Sapphire Rapids and later); AVX512-FP16 without AVX10
  // only with Sapphire and Emerald Rapids (AMD's bf16 cores have neither;
  // AVX10 cores, such as Nova Lake, are unmeasured and keep the products).
  bool avx10 = llvm::any_of(
      llvm::ArrayRef<llvm::StringRef>{"avx10.1", "avx10.1-256", "avx10.1-512",
                                      "avx10.2", "avx10.2-256", "avx10.2-512"},
      [&](llvm::StringRef f) { return hasFeature(f); });
  return hasFeature("amx-tile") || hasFeature("amx-bf16") ||
         (hasFeature("avx512fp16") && !avx10);
}

llvm::Expected<CpuTarget> CpuTarget::get(llvm::StringRef triple,
                                         llvm::StringRef cpu,
                                         llvm::StringRef features) {
  CpuTarget t;
  t.triple = triple.empty() ? llvm::sys::getProcessTriple() : triple.str();
  bool isHost = cpu.empty() || cpu == "host" || cpu == "native";
  if (isHost) {
    if (llvm::Triple(t.triple).getArch() !=
        llvm::Triple(llvm::sys::getProcessTriple()).getArch())
      return createStringError("target CPU 'host' with triple '%s': the host "
                               "is %s; name a CPU for another architecture",
                               t.triple.c_str(),
                               llvm::sys::getProcessTriple().c_str());
    t.cpu = llvm::sys::getHostCPUName().str();
    t.features = hostFeatureDelta(t.triple, t.cpu);
    std::string extra = normalizeFeatures(features);
    if (!extra.empty())
      t.features += (t.features.empty() ? "" : ",") + extra;
  } else {
    t.cpu = cpu.str();
    t.features = normalizeFeatures(features);
  }
  auto info = subtargetInfo(t.triple, t.cpu, t.features);
  if (!info)
    return info.takeError();
  llvm::MCSubtargetInfo &sti = **info;
  for (const llvm::SubtargetFeatureKV &f : sti.getAllProcessorFeatures())
    if (sti.getFeatureBits()[f.Value])
      t.enabled.push_back(f.Key);
  llvm::Triple tt(t.triple);
  // What code for the triple assumes of every CPU: without it LLVM aborts
  // or miscompiles (f16 with -sse2 came out as zeros) instead of refusing.
  if (t.hasFeature("soft-float"))
    return createStringError("target features '%s': soft-float is not "
                             "supported (the kernels compute in the FPU's "
                             "vector registers)",
                             t.features.c_str());
  if (tt.isX86() && tt.isArch64Bit())
    for (const char *base : {"64bit", "x87", "sse2"})
      if (!t.hasFeature(base))
        return createStringError(
            "target CPU '%s' with features '%s' lacks '%s', which every "
            "x86-64 CPU has (the ABI's base instruction set): name an x86-64 "
            "CPU and keep its base features",
            t.cpu.c_str(), t.features.c_str(), base);
  if (tt.isX86()) {
    if (t.hasFeature("avx512f")) {
      t.vectorBits = 512, t.vectorRegisters = 32;
      t.isa = t.hasAmxBf16()          ? "AVX-512 + BF16 + AMX"
              : t.hasBf16DotProduct() ? "AVX-512 + BF16"
                                      : "AVX-512";
    } else if (t.hasFeature("avx")) {
      t.vectorBits = 256, t.vectorRegisters = 16;
      t.isa = t.hasFeature("avx2") ? "AVX2" : "AVX";
    } else if (t.hasFeature("sse2")) {
      t.vectorBits = 128, t.vectorRegisters = 16, t.isa = "SSE";
    }
  } else if (tt.isAArch64()) {
    if (t.hasFeature("neon")) {
      t.vectorBits = 128, t.vectorRegisters = 32, t.isa = "NEON";
    }
  }
  return t;
}

const CpuTarget &CpuTarget::host() {
  static const CpuTarget host = [] {
    auto t = CpuTarget::get("", "host", "");
    if (!t) {
      // The host's own name and features always resolve; keep a safe
      // default if LLVM does not know this machine.
      llvm::consumeError(t.takeError());
      CpuTarget generic;
      generic.triple = llvm::sys::getProcessTriple();
      generic.cpu = "generic";
      return generic;
    }
    return *t;
  }();
  return host;
}

llvm::Error CpuTarget::checkRunsOnHost(bool amxEmulated) const {
  const CpuTarget &h = host();
  if (llvm::Triple(triple).getArch() != llvm::Triple(h.triple).getArch())
    return createStringError(
        "code for %s does not run on this host (%s); emit an object instead",
        triple.c_str(), h.triple.c_str());
  // Instruction-set features only: the host reports each of those as
  // present or absent; tuning flags (fast-*, slow-*) are not in its list.
  static const llvm::StringMap<bool> hostFeatures =
      llvm::sys::getHostCPUFeatures();
  std::string missing;
  bool onlyAmx = true;
  for (const std::string &f : enabled) {
    bool tile = llvm::StringRef(f).starts_with("amx-");
    if (amxEmulated && tile)
      continue;
    auto it = hostFeatures.find(f);
    if (it != hostFeatures.end() && !it->second) {
      missing += (missing.empty() ? "" : ", ") + f;
      onlyAmx = onlyAmx && tile;
    }
  }
  if (!missing.empty())
    return createStringError(
        "target CPU '%s'%s%s needs features this host (%s) lacks: %s; the JIT "
        "runs code on this machine (emit an object to cross-compile%s)",
        cpu.c_str(), features.empty() ? "" : " with ", features.c_str(),
        h.cpu.c_str(), missing.c_str(),
        onlyAmx ? "; attn-run --emulate-amx runs AMX code on this host"
                : "");
  return llvm::Error::success();
}


llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
CpuTarget::createTargetMachine(bool pic) const {
  initializeTargets();
  llvm::Triple tt(triple);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(tt, error);
  if (!target)
    return createStringError("unknown target triple '%s': %s", triple.c_str(),
                             error.c_str());
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      tt, cpu, features, llvm::TargetOptions(),
      pic ? std::optional<llvm::Reloc::Model>(llvm::Reloc::PIC_)
          : std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return createStringError("cannot create a target machine for %s (%s)",
                             triple.c_str(), cpu.c_str());
  return machine;
}

void mlir::attn::setCpuTarget(Operation *module, const CpuTarget &target) {
  MLIRContext *ctx = module->getContext();
  ctx->getOrLoadDialect<LLVM::LLVMDialect>(); // #llvm.target_features
  if (!module->hasAttr(LLVM::LLVMDialect::getTargetTripleAttrName()))
    module->setAttr(LLVM::LLVMDialect::getTargetTripleAttrName(),
                    StringAttr::get(ctx, target.triple));
  module->walk([&](func::FuncOp func) {
    if (func.isExternal() || func->hasAttr("target_cpu"))
      return;
    func->setAttr("target_cpu", StringAttr::get(ctx, target.cpu));
    if (!target.features.empty())
      func->setAttr(LLVM::TargetFeaturesAttr::getAttributeName(),
                    LLVM::TargetFeaturesAttr::get(ctx, target.features));
  });
}

const CpuTarget &mlir::attn::getCpuTarget(Operation *op) {
  std::string triple, cpu, features;
  Operation *func = isa<FunctionOpInterface>(op)
                        ? op
                        : op->getParentOfType<FunctionOpInterface>();
  if (!func) // a module: its first function with a body that records one
    op->walk([&](FunctionOpInterface f) {
      if (f.isExternal() || !f->hasAttr("target_cpu"))
        return WalkResult::advance();
      func = f;
      return WalkResult::interrupt();
    });
  if (func) {
    if (auto name = func->getAttrOfType<StringAttr>("target_cpu"))
      cpu = name.str();
    if (auto attr = func->getAttrOfType<LLVM::TargetFeaturesAttr>(
            LLVM::TargetFeaturesAttr::getAttributeName()))
      features = attr.getFeaturesString();
  }
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto attr = p->getAttrOfType<StringAttr>(
            LLVM::LLVMDialect::getTargetTripleAttrName())) {
      triple = attr.str();
      break;
    }
  if (cpu.empty() && triple.empty())
    return CpuTarget::host();
  static std::mutex mutex;
  static llvm::StringMap<std::unique_ptr<CpuTarget>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::string key = triple + "|" + cpu + "|" + features;
  auto it = cache.find(key);
  if (it != cache.end())
    return *it->second;
  auto t = CpuTarget::get(triple, cpu, features);
  if (!t) {
    // Reported once per target; attn-set-target rejects such IR up front.
    op->emitWarning() << "target: " << llvm::toString(t.takeError())
                      << "; using the host";
    return *cache.try_emplace(key, std::make_unique<CpuTarget>(CpuTarget::host()))
                .first->second;
  }
  return *cache.try_emplace(key, std::make_unique<CpuTarget>(std::move(*t)))
              .first->second;
}

llvm::Error mlir::attn::checkNvptxChip(llvm::StringRef chip) {
  initializeTargets();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return createStringError("this LLVM has no NVPTX backend: %s",
                             error.c_str());
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  unsigned number = nvptxChipVersion(chip);
  bool known = info && info->isCPUStringValid(chip) && number != 0;
  if (!known)
    return createStringError("unknown NVIDIA chip '%s' (expected an "
                             "architecture LLVM's NVPTX backend knows, as "
                             "sm_80, sm_90a)",
                             chip.str().c_str());
  if (number < 70)
    return createStringError("NVIDIA chip '%s' is older than sm_70, which "
                             "the kernels need",
                             chip.str().c_str());
  return llvm::Error::success();
}

unsigned mlir::attn::nvptxChipVersion(llvm::StringRef chip) {
  unsigned number = 0;
  if (!chip.consume_front("sm_") ||
      chip.take_while(llvm::isDigit).getAsInteger(10, number))
    return 0;
  return number;
}
