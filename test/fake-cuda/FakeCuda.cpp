//===- FakeCuda.cpp - A stand-in NVIDIA driver for the runtime's tests ----===//
//
// libcuda.so.1 for tests on machines without an NVIDIA GPU: the functions
// of the driver API that lib/Runtime/CudaRuntime.cpp dlopens, answering as
// one device would ("Fake sm_90 GPU", compute capability 9.0, 32-lane
// warps, 48 KiB of shared memory per block) with device memory in host
// memory. It runs no kernel: a launch only succeeds or fails. The tests put
// its folder first in LD_LIBRARY_PATH (lit's %fake_cuda_dir) and choose
// its behaviour with FAKE_CUDA:
//   no-device     cuInit fails (CUDA_ERROR_NO_DEVICE)
//   bad-ptx       cuModuleLoadData fails (CUDA_ERROR_INVALID_PTX)
//   launch-fails  cuLaunchKernel fails (CUDA_ERROR_LAUNCH_FAILED)
//   sync-fails    cuCtxSynchronize fails with a code cuGetErrorString does
//                 not know (it then sets the text to NULL, as the driver)
//   (unset)       every call succeeds
// and, with FAKE_CUDA_PTX=FILE, writes the PTX it is handed to FILE (the
// runtime's JIT path loads PTX text), so that FileCheck can read what the
// tools would have run on a device.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
using CUresult = int;
constexpr CUresult kSuccess = 0;
constexpr CUresult kNoDevice = 100;
constexpr CUresult kInvalidPtx = 218;
constexpr CUresult kLaunchFailed = 719;

bool mode(const char *name) {
  const char *m = std::getenv("FAKE_CUDA");
  return m && std::strcmp(m, name) == 0;
}
int context, module, function;
} // namespace

extern "C" {

CUresult cuInit(unsigned) { return mode("no-device") ? kNoDevice : kSuccess; }

CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}

CUresult cuDeviceGet(int *device, int) {
  *device = 0;
  return kSuccess;
}

CUresult cuDeviceGetName(char *name, int size, int) {
  std::snprintf(name, static_cast<size_t>(size), "Fake sm_90 GPU");
  return kSuccess;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case 8: // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
    *value = 48 * 1024;
    return kSuccess;
  case 10: // CU_DEVICE_ATTRIBUTE_WARP_SIZE
    *value = 32;
    return kSuccess;
  case 75: // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    *value = 9;
    return kSuccess;
  case 76: // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    *value = 0;
    return kSuccess;
  default:
    return 1; // CUDA_ERROR_INVALID_VALUE
  }
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int) {
  *ctx = &context;
  return kSuccess;
}

CUresult cuCtxSetCurrent(void *) { return kSuccess; }

CUresult cuModuleLoadData(void **result, const void *image) {
  if (const char *path = std::getenv("FAKE_CUDA_PTX")) {
    if (std::FILE *f = std::fopen(path, "a")) {
      std::fputs(static_cast<const char *>(image), f);
      std::fclose(f);
    }
  }
  if (mode("bad-ptx"))
    return kInvalidPtx;
  *result = &module;
  return kSuccess;
}

CUresult cuModuleUnload(void *) { return kSuccess; }

CUresult cuModuleGetFunction(void **result, void *, const char *) {
  *result = &function;
  return kSuccess;
}

CUresult cuMemAlloc_v2(std::uint64_t *pointer, size_t bytes) {
  void *p = std::malloc(bytes);
  if (!p)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  *pointer = reinterpret_cast<std::uintptr_t>(p);
  return kSuccess;
}

CUresult cuMemFree_v2(std::uint64_t pointer) {
  std::free(reinterpret_cast<void *>(static_cast<std::uintptr_t>(pointer)));
  return kSuccess;
}

CUresult cuMemcpyHtoD_v2(std::uint64_t to, const void *from, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(static_cast<std::uintptr_t>(to)), from,
              bytes);
  return kSuccess;
}

CUresult cuMemcpyDtoH_v2(void *to, std::uint64_t from, size_t bytes) {
  std::memcpy(to, reinterpret_cast<const void *>(static_cast<std::uintptr_t>(from)),
              bytes);
  return kSuccess;
}

CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, void *, void **,
                        void **) {
  return mode("launch-fails") ? kLaunchFailed : kSuccess;
}

CUresult cuCtxSynchronize() { return mode("sync-fails") ? 12345 : kSuccess; }

CUresult cuGetErrorString(CUresult result, const char **text) {
  switch (result) {
  case kNoDevice:
    *text = "no CUDA-capable device is detected";
    return kSuccess;
  case kInvalidPtx:
    *text = "a PTX JIT compilation failed";
    return kSuccess;
  case kLaunchFailed:
    *text = "unspecified launch failure";
    return kSuccess;
  default:
    *text = nullptr;
    return 1;
  }
}

} // extern "C"
