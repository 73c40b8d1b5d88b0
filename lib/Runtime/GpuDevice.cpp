//===- GpuDevice.cpp - the GPU a tool's kernels will run on ---------------===//

#include "lib/Runtime/GpuDevice.h"
#include "lib/Runtime/Jit.h"

#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir::attn;
using llvm::createStringError;

std::string GpuDevice::pipeline() const {
  return "attn-gpu-pipeline{target=" + target +
         (chip.empty() ? "" : " chip=" + chip) +
         " subgroup-size=" + std::to_string(subgroupSize) + "}";
}

/// Loads the runtime library `file` of the build, or says why not.
static llvm::Expected<llvm::sys::DynamicLibrary> loadRuntime(
    const std::string &path, llvm::StringRef why) {
  if (!llvm::sys::fs::exists(path))
    return createStringError("the GPU runtime %s was not built%s",
                             path.c_str(), why.str().c_str());
  std::string error;
  auto lib = llvm::sys::DynamicLibrary::getPermanentLibrary(path.c_str(),
                                                            &error);
  if (!lib.isValid())
    return createStringError("cannot load %s: %s", path.c_str(),
                             error.c_str());
  return lib;
}

/// The runtime's attnGpuTakeKernelMilliseconds, if it has one.
static double (*kernelClock(llvm::sys::DynamicLibrary &lib))() {
  return reinterpret_cast<double (*)()>(
      lib.getAddressOfSymbol("attnGpuTakeKernelMilliseconds"));
}

llvm::Expected<GpuDevice> mlir::attn::findGpuDevice(llvm::StringRef target) {
  GpuDevice device;
  device.target = target.str();
  char name[256] = {0};
  if (target == "cuda") {
    device.library =
        runtimeLibraryPath("libattn_cuda_runtime.so", ATTN_RUNTIME_LIB_DIR);
    auto lib = loadRuntime(device.library, "");
    if (!lib)
      return lib.takeError();
    using InfoFn = int (*)(char *, int, int *, int *, char *, int);
    auto info = reinterpret_cast<InfoFn>(
        lib->getAddressOfSymbol("attnCudaDeviceInfo"));
    if (!info)
      return createStringError("%s has no attnCudaDeviceInfo",
                               device.library.c_str());
    char arch[32] = {0};
    if (info(name, sizeof(name), &device.subgroupSize, &device.sharedMemory,
             arch, sizeof(arch)))
      return createStringError("no CUDA device: %s", name);
    device.name = name;
    device.chip = arch;
    device.minSubgroupSize = device.maxSubgroupSize = device.subgroupSize;
    device.takeKernelMilliseconds = kernelClock(*lib);
    return device;
  }
  if (target != "vulkan")
    return createStringError("no runtime for GPU target '%s' (vulkan, cuda)",
                             target.str().c_str());
  device.library =
      runtimeLibraryPath("libattn_vulkan_runtime.so", ATTN_RUNTIME_LIB_DIR);
  auto lib = loadRuntime(device.library,
                         " (libvulkan-dev was missing when the project was "
                         "configured; scripts/install-deps.sh installs it)");
  if (!lib)
    return lib.takeError();
  using InfoFn = int (*)(char *, int, int *, int *);
  auto info = reinterpret_cast<InfoFn>(
      lib->getAddressOfSymbol("attnVulkanDeviceInfo"));
  if (!info)
    return createStringError("%s has no attnVulkanDeviceInfo",
                             device.library.c_str());
  if (info(name, sizeof(name), &device.subgroupSize, &device.sharedMemory))
    return createStringError("no Vulkan device: %s", name);
  device.name = name;
  device.minSubgroupSize = device.maxSubgroupSize = device.subgroupSize;
  using SizesFn = int (*)(int *, int *);
  if (auto sizes = reinterpret_cast<SizesFn>(
          lib->getAddressOfSymbol("attnVulkanSubgroupSizes")))
    sizes(&device.minSubgroupSize, &device.maxSubgroupSize);
  device.takeKernelMilliseconds = kernelClock(*lib);
  return device;
}
