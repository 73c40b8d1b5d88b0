//===- VulkanRuntime.cpp - the mgpu* launch API over Vulkan 1.3 -----------===//
//
// The host code that gpu-to-llvm and the gpu.binary translation produce
// calls mgpuModuleLoad / mgpuModuleGetFunction / mgpuLaunchKernel (MLIR 22
// ships no Vulkan implementation of them). This library implements them
// over one Vulkan 1.3 device created once per process (f16, 16-bit storage
// and subgroup-size control enabled where the device has them), with one
// compute pipeline per kernel. The JIT loads it for --target=vulkan.
//
// Calling convention (gpu-to-llvm{use-bare-pointers-for-kernels
// intersperse-sizes-for-kernels}): params holds, per kernel argument, a
// pointer to the buffer's address and a pointer to its size in bytes;
// argument k is storage buffer binding k of descriptor set 0 (the default
// ABI of convert-gpu-to-spirv). The workgroup size is in the SPIR-V
// (LocalSize); the launch's block x size is the subgroup size the kernel
// was compiled for, which the pipeline requires (or the device must have).
//
// Buffers: host memory is copied into host-visible device buffers before
// the dispatch, and what the kernel changed is copied back after it
// (lavapipe's device memory is host memory; on a discrete GPU these copies
// are the cost of this simple scheme, and the kernel reads host memory
// across the bus: device-local buffers with staging copies are the next
// step, to be measured on one). Calls are serialised by one lock.
// Timestamps before and after each dispatch give the kernels' own time
// (attnGpuTakeKernelMilliseconds), which attn-run prints beside the call's.
//
// Errors (no device, a kernel the device cannot run) print one line naming
// what is wrong and exit with status 1: the compiled code has no error path.
//
//===----------------------------------------------------------------------===//

#include <vulkan/vulkan.h>

#include <cerrno> // program_invocation_short_name
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string &what) {
  // As the tools' own errors ("attn-run: error: ..."): the runtime is
  // a library the JIT loads into them.
  std::fprintf(stderr, "%s: error: Vulkan runtime: %s\n",
               program_invocation_short_name, what.c_str());
  std::fflush(stderr);
  std::exit(1);
}

void check(VkResult r, const char *call) {
  if (r != VK_SUCCESS)
    fail(std::string(call) + " failed (VkResult " + std::to_string(r) + ")");
}

struct Device {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory{};
  std::string name;
  uint32_t subgroupSize = 0, minSubgroupSize = 0, maxSubgroupSize = 0;
  uint32_t sharedMemory = 0, maxInvocations = 0, maxStorageBuffers = 0;
  bool sizeControl = false, fullSubgroups = false;
  /// Kernel timing: two timestamps around each dispatch (none where the
  /// queue family has no valid timestamp bits), their tick in nanoseconds,
  /// and the kernels' milliseconds since attnGpuTakeKernelMilliseconds.
  VkQueryPool timestamps = VK_NULL_HANDLE;
  uint32_t timestampBits = 0;
  double timestampPeriod = 0;
  double kernelMs = 0;
  /// Launches and lazily created pipelines share the queue and the pool.
  std::mutex lock;
  std::string error; // why there is no device
};

/// The device, created on first use.
Device &device() {
  static Device d;
  static std::once_flag once;
  std::call_once(once, [] {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "attn-mlir";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    if (vkCreateInstance(&ici, nullptr, &d.instance) != VK_SUCCESS) {
      d.error = "no Vulkan instance (is a Vulkan driver installed? On a "
                "machine without a GPU, Mesa's lavapipe: mesa-vulkan-drivers)";
      return;
    }
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(d.instance, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    vkEnumeratePhysicalDevices(d.instance, &count, devices.data());
    // The first device with Vulkan 1.3 and a compute queue.
    for (VkPhysicalDevice p : devices) {
      VkPhysicalDeviceProperties props;
      vkGetPhysicalDeviceProperties(p, &props);
      if (props.apiVersion < VK_API_VERSION_1_3)
        continue;
      uint32_t nf = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(p, &nf, nullptr);
      std::vector<VkQueueFamilyProperties> families(nf);
      vkGetPhysicalDeviceQueueFamilyProperties(p, &nf, families.data());
      for (uint32_t f = 0; f < nf; ++f)
        if (families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) {
          d.physical = p;
          d.family = f;
          d.name = props.deviceName;
          d.sharedMemory = props.limits.maxComputeSharedMemorySize;
          d.maxInvocations = props.limits.maxComputeWorkGroupInvocations;
          d.maxStorageBuffers =
              props.limits.maxPerStageDescriptorStorageBuffers;
          d.timestampBits = families[f].timestampValidBits;
          d.timestampPeriod = props.limits.timestampPeriod;
          break;
        }
      if (d.physical)
        break;
    }
    if (!d.physical) {
      d.error = "no Vulkan 1.3 device with a compute queue (" +
                std::to_string(count) + " device(s) found)";
      return;
    }
    VkPhysicalDeviceVulkan13Properties p13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
    VkPhysicalDeviceVulkan11Properties p11{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, &p13};
    VkPhysicalDeviceProperties2 props2{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p11};
    vkGetPhysicalDeviceProperties2(d.physical, &props2);
    d.subgroupSize = p11.subgroupSize;
    // What every kernel of the GPU pipeline needs: subgroup arithmetic in
    // compute shaders and 64-bit integers (its indices are 64-bit).
    if (!(p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
        !(p11.subgroupSupportedOperations &
          VK_SUBGROUP_FEATURE_ARITHMETIC_BIT)) {
      d.error = "device '" + d.name +
                "' has no subgroup arithmetic in compute shaders";
      d.physical = VK_NULL_HANDLE;
      return;
    }
    d.minSubgroupSize = p13.minSubgroupSize;
    d.maxSubgroupSize = p13.maxSubgroupSize;

    // Enable what the kernels use, where the device has it.
    VkPhysicalDeviceVulkan13Features f13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
    VkPhysicalDeviceVulkan11Features f11{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
    VkPhysicalDeviceFeatures2 has{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                  &f11};
    vkGetPhysicalDeviceFeatures2(d.physical, &has);
    if (!has.features.shaderInt64) {
      d.error = "device '" + d.name + "' has no 64-bit integers (shaderInt64)";
      d.physical = VK_NULL_HANDLE;
      return;
    }
    VkPhysicalDeviceVulkan13Features e13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    e13.subgroupSizeControl = f13.subgroupSizeControl;
    e13.computeFullSubgroups = f13.computeFullSubgroups;
    VkPhysicalDeviceVulkan12Features e12{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &e13};
    e12.shaderFloat16 = f12.shaderFloat16;
    VkPhysicalDeviceVulkan11Features e11{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &e12};
    e11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
    VkPhysicalDeviceFeatures2 enable{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &e11};
    // i64 index tensors (kv_lengths, CSR) are read as i64.
    enable.features.shaderInt64 = has.features.shaderInt64;
    // Narrow integer arithmetic of regions (an index cast to i8 wraps).
    enable.features.shaderInt16 = has.features.shaderInt16;
    e12.shaderInt8 = f12.shaderInt8;
    d.sizeControl = f13.subgroupSizeControl &&
                    (p13.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
    d.fullSubgroups = f13.computeFullSubgroups;

    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = d.family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &enable};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    if (vkCreateDevice(d.physical, &dci, nullptr, &d.device) != VK_SUCCESS) {
      d.error = "vkCreateDevice failed on '" + d.name + "'";
      d.physical = VK_NULL_HANDLE;
      return;
    }
    vkGetDeviceQueue(d.device, d.family, 0, &d.queue);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = d.family;
    check(vkCreateCommandPool(d.device, &pci, nullptr, &d.pool),
          "vkCreateCommandPool");
    vkGetPhysicalDeviceMemoryProperties(d.physical, &d.memory);
    if (d.timestampBits > 0 && d.timestampPeriod > 0) {
      VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qpi.queryCount = 2;
      if (vkCreateQueryPool(d.device, &qpi, nullptr, &d.timestamps) !=
          VK_SUCCESS)
        d.timestamps = VK_NULL_HANDLE;
    }
  });
  return d;
}

Device &readyDevice() {
  Device &d = device();
  if (!d.device)
    fail(d.error);
  return d;
}

struct Kernel;

struct Module {
  VkShaderModule shader = VK_NULL_HANDLE;
  std::map<std::string, std::unique_ptr<Kernel>> kernels;
};

struct Kernel {
  Module *module = nullptr;
  std::string name;
  uint32_t bindings = 0, subgroupSize = 0;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

/// The compute pipeline of `k` for `bindings` storage buffers and a
/// workgroup whose x size is `subgroupSize`, created once.
void preparePipeline(Device &d, Kernel &k, uint32_t bindings,
                     uint32_t subgroupSize) {
  if (k.pipeline) {
    if (k.bindings != bindings || k.subgroupSize != subgroupSize)
      fail("kernel '" + k.name + "' launched with a different signature");
    return;
  }
  // A row is exactly one subgroup: the size is required of the pipeline
  // where the device can be told, else it must be the device's.
  bool required = d.sizeControl && subgroupSize >= d.minSubgroupSize &&
                  subgroupSize <= d.maxSubgroupSize;
  if (!required && subgroupSize != d.subgroupSize)
    fail("kernel '" + k.name + "' was compiled for subgroup size " +
         std::to_string(subgroupSize) + "; device '" + d.name + "' has " +
         std::to_string(d.subgroupSize) +
         (d.sizeControl ? " (it can require " +
                              std::to_string(d.minSubgroupSize) + " to " +
                              std::to_string(d.maxSubgroupSize) + ")"
                        : "") +
         ": compile with subgroup-size=" + std::to_string(d.subgroupSize) +
         " (attn-gpu-pipeline's option; attn-compile --gpu-subgroup-size)");
  if (bindings > d.maxStorageBuffers)
    fail("kernel '" + k.name + "' binds " + std::to_string(bindings) +
         " storage buffers; device '" + d.name + "' allows " +
         std::to_string(d.maxStorageBuffers));
  std::vector<VkDescriptorSetLayoutBinding> slots(bindings);
  for (uint32_t i = 0; i < bindings; ++i)
    slots[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo sci{
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sci.bindingCount = bindings;
  sci.pBindings = slots.data();
  check(vkCreateDescriptorSetLayout(d.device, &sci, nullptr, &k.setLayout),
        "vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.setLayoutCount = 1;
  lci.pSetLayouts = &k.setLayout;
  check(vkCreatePipelineLayout(d.device, &lci, nullptr, &k.layout),
        "vkCreatePipelineLayout");

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo size{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  size.requiredSubgroupSize = subgroupSize;
  VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cci.stage.pNext = required ? &size : nullptr;
  // Lanes of a row are one subgroup: x is the subgroup size.
  if (d.fullSubgroups)
    cci.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cci.stage.module = k.module->shader;
  cci.stage.pName = k.name.c_str();
  cci.layout = k.layout;
  check(vkCreateComputePipelines(d.device, VK_NULL_HANDLE, 1, &cci, nullptr,
                                 &k.pipeline),
        "vkCreateComputePipelines");
  k.bindings = bindings;
  k.subgroupSize = subgroupSize;
}

uint32_t hostVisibleType(Device &d, uint32_t bits) {
  VkMemoryPropertyFlags want =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < d.memory.memoryTypeCount; ++i)
    if ((bits & (1u << i)) &&
        (d.memory.memoryTypes[i].propertyFlags & want) == want)
      return i;
  fail("no host-visible, coherent memory type on '" + d.name + "'");
}

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void *mapped = nullptr;
};

} // namespace

extern "C" {

void *mgpuModuleLoad(void *data, size_t size) {
  Device &d = readyDevice();
  if (size % 4)
    fail("a SPIR-V module is a whole number of 32-bit words, got " +
         std::to_string(size) + " bytes");
  auto *m = new Module;
  VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  ci.codeSize = size;
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), data, size);
  ci.pCode = words.data();
  check(vkCreateShaderModule(d.device, &ci, nullptr, &m->shader),
        "vkCreateShaderModule");
  return m;
}

void mgpuModuleUnload(void *module) {
  auto *m = static_cast<Module *>(module);
  Device &d = device();
  if (d.device) {
    for (auto &[name, k] : m->kernels) {
      vkDestroyPipeline(d.device, k->pipeline, nullptr);
      vkDestroyPipelineLayout(d.device, k->layout, nullptr);
      vkDestroyDescriptorSetLayout(d.device, k->setLayout, nullptr);
    }
    vkDestroyShaderModule(d.device, m->shader, nullptr);
  }
  delete m;
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  std::lock_guard<std::mutex> guard(device().lock);
  auto *m = static_cast<Module *>(module);
  std::unique_ptr<Kernel> &k = m->kernels[name];
  if (!k) {
    k = std::make_unique<Kernel>();
    k->module = m;
    k->name = name;
  }
  return k.get();
}

void *mgpuStreamCreate() {
  static int stream;
  return &stream; // launches are synchronous
}
void mgpuStreamSynchronize(void *) {}
void mgpuStreamDestroy(void *) {}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t /*sharedMemBytes*/,
                      void * /*stream*/, void **params, void ** /*extra*/,
                      size_t paramsCount) {
  Device &d = readyDevice();
  std::lock_guard<std::mutex> guard(d.lock);
  auto &k = *static_cast<Kernel *>(function);
  if (paramsCount % 2)
    fail("kernel '" + k.name +
         "': arguments must be (buffer, size) pairs "
         "(gpu-to-llvm{use-bare-pointers-for-kernels "
         "intersperse-sizes-for-kernels})");
  uint32_t n = static_cast<uint32_t>(paramsCount / 2);
  if (blockX * blockY * blockZ > intptr_t(d.maxInvocations))
    fail("kernel '" + k.name + "' has " +
         std::to_string(blockX * blockY * blockZ) +
         " invocations per workgroup; device '" + d.name + "' allows " +
         std::to_string(d.maxInvocations) + " (lower rows=)");
  preparePipeline(d, k, n, static_cast<uint32_t>(blockX));

  std::vector<Buffer> buffers(n);
  std::vector<void *> host(n);
  std::vector<size_t> bytes(n);
  for (uint32_t i = 0; i < n; ++i) {
    host[i] = *static_cast<void **>(params[2 * i]);
    bytes[i] = *static_cast<size_t *>(params[2 * i + 1]);
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = std::max<size_t>(bytes[i], 4);
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    check(vkCreateBuffer(d.device, &bci, nullptr, &buffers[i].buffer),
          "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(d.device, buffers[i].buffer, &req);
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = hostVisibleType(d, req.memoryTypeBits);
    check(vkAllocateMemory(d.device, &mai, nullptr, &buffers[i].memory),
          "vkAllocateMemory");
    check(vkBindBufferMemory(d.device, buffers[i].buffer, buffers[i].memory, 0),
          "vkBindBufferMemory");
    check(vkMapMemory(d.device, buffers[i].memory, 0, VK_WHOLE_SIZE, 0,
                      &buffers[i].mapped),
          "vkMapMemory");
    std::memcpy(buffers[i].mapped, host[i], bytes[i]);
  }

  VkDescriptorPoolSize poolSize{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                std::max<uint32_t>(n, 1)};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &poolSize;
  VkDescriptorPool pool;
  check(vkCreateDescriptorPool(d.device, &dpi, nullptr, &pool),
        "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = pool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &k.setLayout;
  VkDescriptorSet set;
  check(vkAllocateDescriptorSets(d.device, &dai, &set),
        "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos(n);
  std::vector<VkWriteDescriptorSet> writes(n);
  for (uint32_t i = 0; i < n; ++i) {
    infos[i] = {buffers[i].buffer, 0, VK_WHOLE_SIZE};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(d.device, n, writes.data(), 0, nullptr);

  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = d.pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd;
  check(vkAllocateCommandBuffers(d.device, &cai, &cmd),
        "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1,
                          &set, 0, nullptr);
  if (d.timestamps) {
    vkCmdResetQueryPool(cmd, d.timestamps, 0, 2);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, d.timestamps,
                        0);
  }
  vkCmdDispatch(cmd, static_cast<uint32_t>(gridX),
                static_cast<uint32_t>(gridY), static_cast<uint32_t>(gridZ));
  if (d.timestamps)
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                        d.timestamps, 1);
  check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  check(vkCreateFence(d.device, &fci, nullptr, &fence), "vkCreateFence");
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  check(vkQueueSubmit(d.queue, 1, &submit, fence), "vkQueueSubmit");
  check(vkWaitForFences(d.device, 1, &fence, VK_TRUE, UINT64_MAX),
        "vkWaitForFences");
  if (d.timestamps) {
    uint64_t ticks[2] = {0, 0};
    check(vkGetQueryPoolResults(d.device, d.timestamps, 0, 2, sizeof(ticks),
                                ticks, sizeof(uint64_t),
                                VK_QUERY_RESULT_64_BIT |
                                    VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    uint64_t mask = d.timestampBits >= 64 ? ~uint64_t(0)
                                          : (uint64_t(1) << d.timestampBits) - 1;
    d.kernelMs +=
        double((ticks[1] - ticks[0]) & mask) * d.timestampPeriod * 1e-6;
  }

  // Back to the host only what changed: inputs are never written, and the
  // caller's inputs may be read-only memory (or shared by another call).
  for (uint32_t i = 0; i < n; ++i) {
    if (std::memcmp(host[i], buffers[i].mapped, bytes[i]) != 0)
      std::memcpy(host[i], buffers[i].mapped, bytes[i]);
    vkUnmapMemory(d.device, buffers[i].memory);
    vkDestroyBuffer(d.device, buffers[i].buffer, nullptr);
    vkFreeMemory(d.device, buffers[i].memory, nullptr);
  }
  vkDestroyFence(d.device, fence, nullptr);
  vkFreeCommandBuffers(d.device, d.pool, 1, &cmd);
  vkDestroyDescriptorPool(d.device, pool, nullptr);
}

/// For tools: the milliseconds the device spent in the kernels launched
/// since the last call (timestamps written before and after each dispatch,
/// so without the runtime's copies, allocations and set-up), and starts the
/// count again; -1 where the device has no timestamps on its queue.
double attnGpuTakeKernelMilliseconds() {
  Device &d = device();
  std::lock_guard<std::mutex> guard(d.lock);
  if (!d.timestamps)
    return -1;
  double ms = d.kernelMs;
  d.kernelMs = 0;
  return ms;
}

/// For tools: the device the kernels will run on. Returns 0 and fills the
/// fields, or -1 and writes why there is none into `name`.
int attnVulkanDeviceInfo(char *name, int nameSize, int *subgroupSize,
                         int *sharedMemory) {
  Device &d = device();
  const std::string &text = d.device ? d.name : d.error;
  if (nameSize > 0) {
    std::snprintf(name, static_cast<size_t>(nameSize), "%s", text.c_str());
  }
  if (!d.device)
    return -1;
  *subgroupSize = static_cast<int>(d.subgroupSize);
  *sharedMemory = static_cast<int>(d.sharedMemory);
  return 0;
}

/// For tools: the subgroup sizes a kernel may be compiled for on this
/// device, [*min, *max] (the device's one size where it cannot be told to
/// run another). Returns -1 without a device.
int attnVulkanSubgroupSizes(int *min, int *max) {
  Device &d = device();
  if (!d.device)
    return -1;
  *min = static_cast<int>(d.sizeControl ? d.minSubgroupSize : d.subgroupSize);
  *max = static_cast<int>(d.sizeControl ? d.maxSubgroupSize : d.subgroupSize);
  return 0;
}

} // extern "C"
