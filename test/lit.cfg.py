# -*- Python -*-
# lit configuration of the attn-mlir test suite.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "unit", "lib",
                   "attn_torch.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
# test/fake-cuda/FakeCuda.cpp's libcuda.so.1 (a stand-in NVIDIA driver).
config.substitutions.append(("%fake_cuda_dir",
                             os.path.join(config.attn_obj_root, "test", "fake-cuda")))
config.substitutions.append(("%llvm_lib_dir", config.llvm_lib_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                     "CUDA_HOME"])
llvm_config.use_default_substitutions()

# PyTorch and NumPy come from Debian and run with /usr/bin/python3; the python3
# first on PATH may be another interpreter without them.
torch_python = "/usr/bin/python3"
config.substitutions.append(("%torch_python", torch_python))
# util-linux's script(1) runs a command on a pseudo-terminal (progress.test).
if shutil.which("script"):
    config.available_features.add("script")
config.substitutions.append(("%hf", os.path.join(config.test_source_root, "Inputs", "hf")))
config.substitutions.append(("%pyg", os.path.join(config.test_source_root, "Inputs", "pyg")))

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.attn_tools_dir, append_path=True)

tools = [
    ToolSubst("attn-opt", unresolved="fatal"),
    ToolSubst("attn-run", unresolved="ignore"),
    ToolSubst("attn-compile", unresolved="ignore"),
    ToolSubst("attn-bench", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, [config.attn_tools_dir, config.llvm_tools_dir])

# What this machine can run (never what a test expects it to be): tests of
# code for a named x86 target run only where the host executes that target's
# instructions; the AVX2 run under qemu-user needs an AVX-512 host (the one
# class whose native JIT would not take the AVX2 path by itself).
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()

_flags = _cpu_flags()
if {"avx2", "fma", "f16c", "bmi2", "movbe"} <= _flags:
    config.available_features.add("host-x86-64-v3")
if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= _flags:
    config.available_features.add("host-x86-64-v4")
    # bf16 dot products (vdpbf16ps): Zen 4 and later, Cooper Lake,
    # Sapphire Rapids and later.
    if "avx512_bf16" in _flags:
        config.available_features.add("host-avx512bf16")
    # AMX tile products (tdpbf16ps): Sapphire Rapids and later. Elsewhere
    # the runtime's AMX emulator runs them (attn-run --emulate-amx).
    if {"amx_tile", "amx_bf16"} <= _flags:
        config.available_features.add("host-amx")
    # Not in the sanitizer build: ASan's shadow memory does not map under
    # qemu-user (attn-run exits at once, printing nothing); the plain
    # build's run covers the AVX2 path.
    if shutil.which("qemu-x86_64") and getattr(
        config, "attn_sanitize", "OFF"
    ).upper() not in ("ON", "TRUE", "1", "YES"):
        config.available_features.add("qemu-avx2")

# The reader fuzzers are built where clang's fuzzer runtime is (fuzz/).
if os.path.exists(os.path.join(config.attn_obj_root, "bin", "attn-fuzz-json")):
    config.available_features.add("fuzzers")
# The model-loader and IR harnesses exist in the sanitizer build only.
if os.path.exists(os.path.join(config.attn_obj_root, "bin", "attn-fuzz-model")):
    config.available_features.add("toolkit-fuzzers")
# The sanitizer build: ASan's allocator reports a failed allocation itself
# (tests of what the tools do then are for the plain build).
if getattr(config, "attn_sanitize", "OFF").upper() in ("ON", "TRUE", "1", "YES"):
    config.available_features.add("sanitizers")
# ASan's and UBSan's settings reach the tools of the sanitizer build.
for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

# GPU code without a GPU: the Vulkan runtime is built where libvulkan-dev is
# (scripts/install-deps.sh installs it and lavapipe, so the test command has
# both); ptxas where the CUDA toolkit is.
if os.path.exists(os.path.join(config.attn_obj_root, "lib",
                               "libattn_vulkan_runtime.so")):
    config.available_features.add("vulkan-runtime")
_ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas"
    if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if _ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _ptxas))
# An NVIDIA driver (the CUDA runtime's dlopen target): only device machines.
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
if shutil.which("spirv-val") and shutil.which("spirv-dis"):
    config.available_features.add("spirv-tools")
config.substitutions.append(("%mlir_translate",
                             os.path.join(config.llvm_tools_dir, "mlir-translate")))

# Tests never read a user's tuning cache (~/.cache/attn-mlir/tuning.json).
config.environment["ATTN_TUNING_CACHE"] = os.path.join(
    config.test_exec_root, "no-such-tuning-cache.json")
