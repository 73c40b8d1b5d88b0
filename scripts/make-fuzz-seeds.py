#!/usr/bin/env python3
"""Writes the seed corpora of the reader fuzzers (test/fuzz/corpus/).

usage: scripts/make-fuzz-seeds.py [OUT_DIR]   (default test/fuzz/corpus)

A few small valid files per reader (and their truncations are left to the
fuzzer): .npy of each dtype, safetensors with one and two tensors, IDX
(plain and gzip), JSON descriptions and headers; and each input a fuzzer
found a bug with, as a regression seed.
"""
import gzip
import json
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "test", "fuzz", "corpus")


def write(kind, name, data):
    os.makedirs(os.path.join(out, kind), exist_ok=True)
    with open(os.path.join(out, kind, name), "wb") as f:
        f.write(data)


def npy(descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, "(" + "".join(f"{d}, " for d in shape) + ")")
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


write("npy", "f32-2x3", npy("<f4", [2, 3], struct.pack("<6f", *range(6))))
write("npy", "i64-4", npy("<i8", [4], struct.pack("<4q", 1, -2, 3, 4)))
write("npy", "f16-scalar", npy("<f2", [], struct.pack("<H", 0x3C00)))


def safetensors(entries, data):
    header = json.dumps(entries).encode()
    return struct.pack("<Q", len(header)) + header + data


write("safetensors", "one", safetensors(
    {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}},
    struct.pack("<4f", 1, 2, 3, 4)))
write("safetensors", "two", safetensors(
    {"__metadata__": {"format": "pt"},
     "a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]},
     "b": {"dtype": "I64", "shape": [1], "data_offsets": [4, 12]}},
    struct.pack("<2H", 0x3F80, 0xC0A0) + struct.pack("<q", 7)))

idx = b"\0\0\x08\x02" + struct.pack(">2I", 2, 3) + bytes([1, 2, 3, 253, 254, 255])
write("idx", "plain", idx)
write("idx", "zipped", gzip.compress(idx, mtime=0))
# Found by attn-fuzz-idx: dims 4248828159 x 4286447616 x 0 (an empty tensor
# whose other dims overflowed the element count's product).
write("idx", "regression-huge-dims-zero",
      b"\0\0\x08\x03\xfd?\xf8\xff\xff~\0\0\0\0\0\0")

write("json", "description", json.dumps(
    {"kind": "gpt", "vocab_size": 20, "n_positions": 8, "n_embd": 16,
     "n_layer": 1, "n_head": 2, "seq_len": 6}).encode())
write("json", "nested", b'{"a": [1, {"b": [true, null, "x\\"y"]}], "c": -1.5e3}')


# Graphs: the first byte picks the format (even: edge list, odd: Matrix
# Market) and the CSR options (2: symmetrize, 4: self loops).
write("graph", "edges", b"\x00# a SNAP edge list\n0 1\n1 2\n2 0\n3 1\n")
write("graph", "edges-symmetric-loops", b"\x06% comment\n0 1\n1 1\n\n4 2\n")
write("graph", "mtx-pattern", b"\x01%%MatrixMarket matrix coordinate pattern general\n"
      b"% comment\n4 4 3\n1 2\n2 3\n4 1\n")
write("graph", "mtx-real-symmetric", b"\x03%%MatrixMarket matrix coordinate real symmetric\n"
      b"3 3 2\n2 1 0.5\n3 3 -1e3\n")
