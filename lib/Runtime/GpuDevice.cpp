//===- GpuDevice.cpp - the GPU a tool's kernels will run on ---------------===//

#include "lib/Runtime/GpuDevice.h"

#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir::attn;
using llvm::createStringError;

std::string GpuDevice::pipeline() const {
  return "attn-gpu-pipeline{target=" + target +
         " subgroup-size=" + std::to_string(subgroupSize) + "}";
}

llvm::Expected<GpuDevice> mlir::attn::findGpuDevice(llvm::StringRef target) {
  if (target != "vulkan")
    return createStringError("no runtime for GPU target '%s' (vulkan)",
                             target.str().c_str());
  GpuDevice device;
  device.target = target.str();
  device.library = ATTN_RUNTIME_LIB_DIR "/libattn_vulkan_runtime.so";
  if (!llvm::sys::fs::exists(device.library))
    return createStringError(
        "the Vulkan runtime %s was not built (libvulkan-dev was missing "
        "when the project was configured; scripts/install-deps.sh installs "
        "it)",
        device.library.c_str());
  std::string error;
  auto lib = llvm::sys::DynamicLibrary::getPermanentLibrary(
      device.library.c_str(), &error);
  if (!lib.isValid())
    return createStringError("cannot load %s: %s", device.library.c_str(),
                             error.c_str());
  using InfoFn = int (*)(char *, int, int *, int *);
  auto info = reinterpret_cast<InfoFn>(
      lib.getAddressOfSymbol("attnVulkanDeviceInfo"));
  if (!info)
    return createStringError("%s has no attnVulkanDeviceInfo",
                             device.library.c_str());
  char name[256] = {0};
  if (info(name, sizeof(name), &device.subgroupSize, &device.sharedMemory))
    return createStringError("no Vulkan device: %s", name);
  device.name = name;
  return device;
}
