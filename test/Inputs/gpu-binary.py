"""Writes the object of every gpu.binary in MLIR text (stdin) to files.

Usage: gpu-binary.py PREFIX, MLIR text on stdin, writes PREFIX.0, PREFIX.1, ... (in
the order of the binaries) and prints how many. An object's bytes are the
quoted string of `#gpu.object<target, "...">`, with MLIR's escapes (\\XX
hex, \\\\, \\")."""

import re
import sys



def unescape(raw):
    out, i = bytearray(), 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            nxt = raw[i + 1]
            if nxt in '\\"':
                out.append(ord(nxt))
                i += 2
            elif nxt in "nt":
                out.append(10 if nxt == "n" else 9)
                i += 2
            else:
                out.append(int(raw[i + 1:i + 3], 16))
                i += 3
        else:
            out.extend(c.encode("latin-1"))
            i += 1
    return bytes(out)


text = sys.stdin.read()
# SPIR-V objects: #gpu.object<#spirv.target_env<...>, "bytes">; NVVM's
# (format isa): #gpu.object<#nvvm.target<...>, properties = {...},
# assembly = "ptx">.
STRING = r'"((?:[^"\\]|\\.)*)"'
objects = re.findall(r'#gpu\.object<#spirv[^"]*' + STRING, text) + re.findall(
    r'#gpu\.object<#nvvm[^\n]*?assembly = ' + STRING, text)
if not objects:
    sys.exit("gpu-binary.py: no gpu.binary object in the input")
for n, raw in enumerate(objects):
    with open(f"{sys.argv[1]}.{n}", "wb") as f:
        f.write(unescape(raw))
print(f"gpu-binary.py: {len(objects)} object(s)")
