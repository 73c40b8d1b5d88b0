//===- CudaRuntime.cpp - the mgpu* launch API over the CUDA driver --------===//
//
// The GPU pipeline's target=cuda embeds PTX (gpu-module-to-binary
// format=isa); its host code calls mgpuModuleLoadJIT / mgpuModuleGetFunction
// / mgpuLaunchKernel. This library implements them over the CUDA driver API,
// found at run time (dlopen of libcuda.so.1): it builds and loads on a
// machine without the driver, and says so when asked for a device.
//
// Calling convention: as the Vulkan runtime's (buffer, size) pairs from the
// host (gpu-to-llvm intersperse-sizes-for-kernels); the kernel itself takes
// bare device pointers. Each launch copies the host buffers into device
// memory, passes the device pointers, and copies back what changed (the
// simple scheme of a first GPU path: transfers are part of every launch).
// Two CUDA events around each launch give the kernels' own time
// (attnGpuTakeKernelMilliseconds), which attn-run prints beside the call's.
//
// Errors print one line naming what is wrong and exit with status 1.
//
//===----------------------------------------------------------------------===//

#include <dlfcn.h>

#include <cerrno> // program_invocation_short_name
#include <cstdint>
#include <type_traits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

// The few driver API types and entry points used (the CUDA headers are not
// needed to build this).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
struct CUevent_st;
using CUevent = CUevent_st *;
constexpr int kAttrMaxSharedPerBlock = 8;   // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
constexpr int kAttrWarpSize = 10;           // CU_DEVICE_ATTRIBUTE_WARP_SIZE
constexpr int kAttrMajor = 75;              // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrMinor = 76;              // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, void *,
                             void **, void **);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, void *);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);

  CUdevice device = 0;
  CUcontext context = nullptr;
  std::mutex lock; ///< launches are serialised
  std::string name, error;
  int warpSize = 0, sharedMemory = 0, major = 0, minor = 0;
  /// The events around each launch (created with the context), and the
  /// kernels' milliseconds since attnGpuTakeKernelMilliseconds.
  CUevent start = nullptr, stop = nullptr;
  double kernelMs = 0;
};

[[noreturn]] void fail(const std::string &what) {
  // As the tools' own errors ("attn-run: error: ..."): the runtime is
  // a library the JIT loads into them.
  std::fprintf(stderr, "%s: error: CUDA runtime: %s\n",
               program_invocation_short_name, what.c_str());
  std::fflush(stderr);
  std::exit(1);
}

Driver &driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      d.error = "no CUDA driver (libcuda.so.1 not found: this machine has "
                "no NVIDIA driver)";
      return;
    }
    bool ok = true;
    auto load = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      if (!fn) {
        d.error = std::string("libcuda.so.1 has no ") + name;
        ok = false;
      }
    };
    load(d.cuInit, "cuInit");
    load(d.cuDeviceGetCount, "cuDeviceGetCount");
    load(d.cuDeviceGet, "cuDeviceGet");
    load(d.cuDeviceGetName, "cuDeviceGetName");
    load(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    load(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    load(d.cuCtxSetCurrent, "cuCtxSetCurrent");
    load(d.cuModuleLoadData, "cuModuleLoadData");
    load(d.cuModuleUnload, "cuModuleUnload");
    load(d.cuModuleGetFunction, "cuModuleGetFunction");
    load(d.cuMemAlloc, "cuMemAlloc_v2");
    load(d.cuMemFree, "cuMemFree_v2");
    load(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    load(d.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    load(d.cuLaunchKernel, "cuLaunchKernel");
    load(d.cuCtxSynchronize, "cuCtxSynchronize");
    load(d.cuGetErrorString, "cuGetErrorString");
    if (!ok)
      return;
    int count = 0;
    if (d.cuInit(0) != 0 || d.cuDeviceGetCount(&count) != 0 || count < 1) {
      d.error = "the CUDA driver found no device";
      return;
    }
    char name[256] = {0};
    d.cuDeviceGet(&d.device, 0);
    d.cuDeviceGetName(name, sizeof(name), d.device);
    d.name = name;
    d.cuDeviceGetAttribute(&d.warpSize, kAttrWarpSize, d.device);
    d.cuDeviceGetAttribute(&d.sharedMemory, kAttrMaxSharedPerBlock, d.device);
    d.cuDeviceGetAttribute(&d.major, kAttrMajor, d.device);
    d.cuDeviceGetAttribute(&d.minor, kAttrMinor, d.device);
    if (d.cuDevicePrimaryCtxRetain(&d.context, d.device) != 0) {
      d.error = "cuDevicePrimaryCtxRetain failed on '" + d.name + "'";
      d.context = nullptr;
      return;
    }
    // The events of the kernels' clock; without them (a driver that lacks
    // them, or fails to create them) the kernels are still run, only not
    // timed.
    auto optional = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      return fn != nullptr;
    };
    d.cuCtxSetCurrent(d.context);
    bool events = optional(d.cuEventCreate, "cuEventCreate") &&
                  optional(d.cuEventRecord, "cuEventRecord") &&
                  optional(d.cuEventElapsedTime, "cuEventElapsedTime");
    if (!events || d.cuEventCreate(&d.start, 0) != 0 ||
        d.cuEventCreate(&d.stop, 0) != 0)
      d.start = d.stop = nullptr;
  });
  return d;
}

Driver &readyDriver() {
  Driver &d = driver();
  if (!d.context)
    fail(d.error);
  d.cuCtxSetCurrent(d.context);
  return d;
}

void check(Driver &d, CUresult r, const char *call) {
  if (r == 0)
    return;
  // The driver sets the text to NULL for a code it does not know.
  const char *text = nullptr;
  if (d.cuGetErrorString(r, &text) != 0 || !text)
    fail(std::string(call) + " failed: CUDA error " + std::to_string(r));
  fail(std::string(call) + " failed: " + text);
}

} // namespace

extern "C" {

void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  Driver &d = readyDriver();
  CUmodule module = nullptr;
  check(d, d.cuModuleLoadData(&module, data), "cuModuleLoadData (PTX)");
  return module;
}

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  Driver &d = readyDriver();
  CUmodule module = nullptr;
  check(d, d.cuModuleLoadData(&module, data), "cuModuleLoadData");
  return module;
}

void mgpuModuleUnload(void *module) {
  Driver &d = driver();
  if (d.context)
    d.cuModuleUnload(static_cast<CUmodule>(module));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  Driver &d = readyDriver();
  CUfunction f = nullptr;
  check(d, d.cuModuleGetFunction(&f, static_cast<CUmodule>(module), name),
        "cuModuleGetFunction");
  return f;
}

void *mgpuStreamCreate() {
  static int stream;
  return &stream; // launches are synchronous
}
void mgpuStreamSynchronize(void *) {}
void mgpuStreamDestroy(void *) {}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void * /*stream*/,
                      void **params, void ** /*extra*/, size_t paramsCount) {
  Driver &d = readyDriver();
  std::lock_guard<std::mutex> guard(d.lock);
  if (blockX != d.warpSize)
    fail("the kernel was compiled for " + std::to_string(blockX) +
         " lanes per row; a warp of '" + d.name + "' has " +
         std::to_string(d.warpSize));
  if (paramsCount % 2)
    fail("kernel arguments must be (buffer, size) pairs "
         "(gpu-to-llvm{use-bare-pointers-for-kernels "
         "intersperse-sizes-for-kernels})");
  size_t n = paramsCount / 2;
  std::vector<void *> host(n);
  std::vector<size_t> bytes(n);
  std::vector<CUdeviceptr> device(n);
  std::vector<void *> args(n);
  for (size_t i = 0; i < n; ++i) {
    host[i] = *static_cast<void **>(params[2 * i]);
    bytes[i] = *static_cast<size_t *>(params[2 * i + 1]);
    check(d, d.cuMemAlloc(&device[i], bytes[i] ? bytes[i] : 4), "cuMemAlloc");
    check(d, d.cuMemcpyHtoD(device[i], host[i], bytes[i]), "cuMemcpyHtoD");
    args[i] = &device[i];
  }
  if (d.start)
    check(d, d.cuEventRecord(d.start, nullptr), "cuEventRecord");
  check(d,
        d.cuLaunchKernel(static_cast<CUfunction>(function),
                         static_cast<unsigned>(gridX),
                         static_cast<unsigned>(gridY),
                         static_cast<unsigned>(gridZ),
                         static_cast<unsigned>(blockX),
                         static_cast<unsigned>(blockY),
                         static_cast<unsigned>(blockZ),
                         static_cast<unsigned>(sharedMemBytes), nullptr,
                         args.data(), nullptr),
        "cuLaunchKernel");
  if (d.start)
    check(d, d.cuEventRecord(d.stop, nullptr), "cuEventRecord");
  check(d, d.cuCtxSynchronize(), "the kernel (cuCtxSynchronize)");
  if (d.start) {
    // cuCtxSynchronize waited for the stop event too.
    float ms = 0;
    check(d, d.cuEventElapsedTime(&ms, d.start, d.stop), "cuEventElapsedTime");
    d.kernelMs += ms;
  }
  // Back to the host only what changed: inputs are never written, and the
  // caller's inputs may be read-only memory (or shared by another call).
  std::vector<char> staging;
  for (size_t i = 0; i < n; ++i) {
    staging.resize(bytes[i]);
    check(d, d.cuMemcpyDtoH(staging.data(), device[i], bytes[i]),
          "cuMemcpyDtoH");
    if (std::memcmp(host[i], staging.data(), bytes[i]) != 0)
      std::memcpy(host[i], staging.data(), bytes[i]);
    d.cuMemFree(device[i]);
  }
}

/// For tools: the milliseconds the device spent in the kernels launched
/// since the last call (CUDA events recorded before and after each launch,
/// so without the runtime's copies and allocations), and starts the count
/// again; -1 where there is no device or no events.
double attnGpuTakeKernelMilliseconds() {
  Driver &d = driver();
  std::lock_guard<std::mutex> guard(d.lock);
  if (!d.context || !d.start)
    return -1;
  double ms = d.kernelMs;
  d.kernelMs = 0;
  return ms;
}

/// For tools: the device the kernels will run on. Returns 0 and fills the
/// fields (`arch`: e.g. "sm_90a" for compute capability 9.0), or -1 and
/// writes why there is none into `name`.
int attnCudaDeviceInfo(char *name, int nameSize, int *warpSize,
                       int *sharedMemory, char *arch, int archSize) {
  Driver &d = driver();
  const std::string &text = d.context ? d.name : d.error;
  if (nameSize > 0)
    std::snprintf(name, static_cast<size_t>(nameSize), "%s", text.c_str());
  if (!d.context)
    return -1;
  *warpSize = d.warpSize;
  *sharedMemory = d.sharedMemory;
  // Hopper's wgmma / TMA need the architecture-specific sm_90a.
  std::snprintf(arch, static_cast<size_t>(archSize), "sm_%d%d%s", d.major,
                d.minor, d.major == 9 ? "a" : "");
  return 0;
}

} // extern "C"
