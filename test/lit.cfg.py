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
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "unit",
                   "attn_torch.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
config.substitutions.append(("%llvm_lib_dir", config.llvm_lib_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"])
llvm_config.use_default_substitutions()

# PyTorch and NumPy come from Debian and run with /usr/bin/python3; the python3
# first on PATH may be another interpreter without them.
torch_python = "/usr/bin/python3"
config.substitutions.append(("%torch_python", torch_python))

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.attn_tools_dir, append_path=True)

tools = [
    ToolSubst("attn-opt", unresolved="fatal"),
    ToolSubst("attn-run", unresolved="ignore"),
    ToolSubst("attn-compile", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, [config.attn_tools_dir, config.llvm_tools_dir])
