//===- GpuDevice.h - the GPU a tool's kernels will run on -------*- C++ -*-===//
//
// The GPU runtimes are shared libraries the JIT loads (the mgpu* launch API;
// lib/Runtime/VulkanRuntime.cpp). Tools ask them which device is there, so
// that kernels are compiled for its subgroup size, and hand the library to
// the JIT. A machine without the library or the device gets one error.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_GPUDEVICE_H
#define ATTN_LIB_RUNTIME_GPUDEVICE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::attn {

struct GpuDevice {
  std::string target;  ///< vulkan or cuda
  std::string name;    ///< the device's name
  std::string library; ///< the runtime library the JIT must load
  int subgroupSize = 0, sharedMemory = 0;
  /// The subgroup sizes kernels may be compiled for (Vulkan devices with
  /// subgroup-size control run a range; CUDA warps are 32).
  int minSubgroupSize = 0, maxSubgroupSize = 0;
  std::string chip; ///< cuda: the architecture (sm_80, sm_90a)
  /// The runtime's clock of the kernels themselves: the milliseconds the
  /// device spent in the kernels launched since the last call (without the
  /// runtime's copies, allocations and set-up), or -1 where it cannot tell.
  double (*takeKernelMilliseconds)() = nullptr;

  /// attn-gpu-pipeline's options for this device.
  std::string pipeline() const;
};

/// The device of `target` ("vulkan", "cuda"), or an error saying what is
/// missing.
llvm::Expected<GpuDevice> findGpuDevice(llvm::StringRef target);

} // namespace mlir::attn

#endif // ATTN_LIB_RUNTIME_GPUDEVICE_H
