"""Copies a safetensors file, adding a copy of every tensor named FROM.* as
TO.* (argv[3] = FROM:TO): plain Python, no safetensors package."""
import json
import struct
import sys

src, dst, rename = sys.argv[1], sys.argv[2], sys.argv[3]
old, new = rename.split(":")
data = open(src, "rb").read()
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
body = data[8 + n:]
meta = header.pop("__metadata__", None)
tensors = {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
           for k, v in header.items()}
for k, v in list(tensors.items()):
    if k.startswith(old + "."):
        tensors[new + k[len(old):]] = v
out, blob = {}, b""
for k, (dtype, shape, raw) in tensors.items():
    out[k] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(raw)]}
    blob += raw
if meta is not None:
    out["__metadata__"] = meta
text = json.dumps(out).encode()
text += b" " * (-len(text) % 8)
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + blob)
