# REQUIRES: vulkan-runtime
# RUN: rm -rf %t && mkdir -p %t
# RUN: %torch_python %s attn-compile %t | FileCheck %s
#
# A ViT description end to end with its attention on the Vulkan device
# (attn-compile --target=vulkan: the kernels as SPIR-V on lavapipe without a
# GPU; patch embedding, MLPs and norms on the CPU) against PyTorch on the
# same random weights and images: torchvision's VisionTransformer itself,
# and the local-window and relative-position variants against the
# plain-torch forward of attn_torch.vit_forward (float64).
#
# CHECK: dense/torchvision/vulkan: OK
# CHECK: local/vulkan: OK
# CHECK: relative/vulkan: OK
# CHECK: all agree

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
import attn_torch as at  # noqa: E402

TOOL, TMP = sys.argv[1], sys.argv[2]
VULKAN = ["--target", "vulkan"]

base = {"kind": "vit", "image_size": 12, "channels": 3, "patch_size": 4,
        "hidden_dim": 32, "layers": 2, "heads": 4, "mlp_dim": 48, "classes": 7,
        "batch": 3, "normalize": {"mean": [0.5, 0.4, 0.3], "std": [0.2, 0.25, 0.3]}}
torch.manual_seed(0)
images = torch.rand(5, 3, 12, 12)  # 5 images: two calls of 3, the last padded
model = at.randomize(at.build_vit(base), seed=1, scale=0.3)
sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
ok = True

with torch.no_grad():
    model.eval()
    want = model(at.normalize(images, base))
got = at.run_attn_compile(TOOL, TMP, "dense", base, sd, {"images": images}, VULKAN)
ok &= at.compare("dense/torchvision/vulkan", got, want)

for variant, extra in [("local", {"window": 3}), ("relative", {"rel_clip": 4})]:
    spec = dict(base, attention=variant, **extra)
    weights = dict(sd)
    if variant == "relative":
        for n in range(spec["layers"]):
            key = f"encoder.layers.encoder_layer_{n}.self_attention.rel_bias"
            weights[key] = torch.randn(spec["heads"], 2 * spec["rel_clip"] + 1)
    w64 = {k: v.double() for k, v in weights.items()}
    want = at.vit_forward(w64, spec, at.normalize(images.double(), spec))
    got = at.run_attn_compile(TOOL, TMP, variant, spec, weights, {"images": images},
                              VULKAN)
    ok &= at.compare(f"{variant}/vulkan", got, want)

print("all agree" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
