# RUN: rm -rf %t && mkdir -p %t
# RUN: %torch_python %s attn-compile %t | FileCheck %s
#
# attn-compile's gpt against a plain-torch GPT-2 (Hugging Face GPT2Model
# names; Conv1D weights stored in x out; gelu_new; logits tied to wte) on the
# same weights and token ids. float64 oracle.
#
# CHECK: gpt/attn-cpu-pipeline: OK
# CHECK: gpt/attn-reference-pipeline: OK
# CHECK: all agree

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_torch as at  # noqa: E402

TOOL, TMP = sys.argv[1], sys.argv[2]
spec = {"kind": "gpt", "vocab_size": 50, "n_positions": 24, "n_embd": 32, "n_layer": 2,
        "n_head": 4, "seq_len": 11, "batch": 2}
torch.manual_seed(0)
gpt = at.randomize(at.GPT2(spec), seed=3, scale=0.2).eval()
sd = {k: v.detach().clone() for k, v in gpt.state_dict().items()}
tokens = torch.randint(0, spec["vocab_size"], (3, spec["seq_len"]))  # 3 sequences, batch 2
with torch.no_grad():
    want = gpt.double()(tokens)
ok = True
for p in ["attn-cpu-pipeline", "attn-reference-pipeline"]:
    got = at.run_attn_compile(TOOL, TMP, "gpt", spec, sd, {"tokens": tokens}, ["--pipeline", p])
    ok &= at.compare(f"gpt/{p}", got, want)
print("all agree" if ok else "MISMATCH")
