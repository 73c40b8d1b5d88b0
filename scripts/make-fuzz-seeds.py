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


# Model descriptions (one per kind, small) and attn IR for the toolkit
# harnesses of the sanitizer build.
write("model", "vit", json.dumps({"kind": "vit", "image_size": 8, "channels": 1,
      "patch_size": 4, "hidden_dim": 16, "layers": 1, "heads": 2, "mlp_dim": 24,
      "classes": 3, "batch": 2, "attention": "local", "window": 1}).encode())
write("model", "gpt", json.dumps({"kind": "gpt", "vocab_size": 20, "n_positions": 8,
      "n_embd": 16, "n_layer": 1, "n_head": 2, "seq_len": 6}).encode())
write("model", "transformer-encoder", json.dumps({"kind": "transformer-encoder",
      "d_model": 16, "heads": 2, "dim_feedforward": 24, "layers": 1,
      "seq_len": 5, "batch": 2}).encode())
write("model", "gat", json.dumps({"kind": "gat", "graph": "/nonexistent/graph.txt",
      "in_features": 4, "layers": [{"heads": 2, "channels": 2}]}).encode())
write("model", "gat-minibatch", json.dumps({"kind": "gat", "in_features": 4,
      "layers": [{"heads": 2, "channels": 2, "in_channels": [4, 4],
                  "graph": "/nonexistent/hop2.txt", "size": [9, 4]},
                 {"channels": 2, "graph": "/nonexistent/hop1.txt",
                  "size": [4, 2]}]}).encode())
sdpa = """func.func @f(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}
"""
write("ir", "sdpa-causal", sdpa.encode())
write("ir", "sdpa-local", sdpa.replace("#attn.mask<causal>", "#attn.mask<local>, window_left = 2 : i64, window_right = 1 : i64").encode())
write("ir", "score-mod", b"""func.func @f(%q: tensor<1x1x4x8xf32>, %t: tensor<4xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %x = tensor.extract %t[%j] : tensor<4xf32>
      %r = arith.addf %s, %x : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x1x4x8xf32>
}
""")
write("ir", "gat", b"""func.func @f(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>) -> tensor<6x8xf32> {
  %y = attn.gat %x, %w, %as, %ad graph(%rp, %ci) : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}
""")
# Hand-written code around an attn op: attn-runtime-checks instruments its
# loads, stores, slices, linalg op and assert (as attn-run lowers it).
write("ir", "runtime-checks", b"""#map = affine_map<(d0) -> (d0 * 2)>
func.func @f(%q: tensor<1x1x4x8xf32>, %m: memref<8xf32>, %n: index) -> tensor<1x1x4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %m[%i] : memref<8xf32>
    %v = vector.load %m[%i] : memref<8xf32>, vector<4xf32>
    vector.store %v, %m[%c0] : memref<8xf32>, vector<4xf32>
    memref.store %x, %m[%c1] : memref<8xf32>
  }
  affine.for %j = 0 to 3 {
    %y = affine.load %m[%j * 2] : memref<8xf32>
  }
  %t = bufferization.to_tensor %m : memref<8xf32> to tensor<8xf32>
  %s = tensor.extract_slice %t[0] [%n] [1] : tensor<8xf32> to tensor<?xf32>
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.copy ins(%s : tensor<?xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %ok = arith.cmpi slt, %n, %c1 : index
  cf.assert %ok, "n < 1"
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}
""")
# Brackets nested past MLIR's parser stack (attn-opt segfaulted): refused
# before parsing by checkIrNesting.
write("ir", "regression-deep-nesting",
      b"func.func @f() attributes {a = " + b"[" * 5000 + b"]" * 5000 +
      b"} { return }\n")
# Bipartite layers (target(...)): sources x, destinations x_dst.
write("ir", "gat-bipartite", b"""func.func @f(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<5xi64>, %ci: tensor<10xi64>, %xd: tensor<4x5xf32>, %wd: tensor<8x5xf32>, %ea: tensor<10x5xf32>) -> (tensor<4x8xf32>, tensor<14x2xf32>) {
  %y, %a = attn.gat %x, %w, %as, %ad graph(%rp, %ci) target(%xd, %wd) : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5xi64>, tensor<10xi64>, tensor<4x5xf32>, tensor<8x5xf32>) -> (tensor<4x8xf32>, tensor<14x2xf32>)
  %v = attn.gatv2 %x, %w, %wd, %as graph(%rp, %ci) target(%xd) edge(%ea, %wd) : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<8x5xf32>, tensor<2x4xf32>, tensor<5xi64>, tensor<10xi64>, tensor<4x5xf32>, tensor<10x5xf32>, tensor<8x5xf32>) -> tensor<4x8xf32>
  return %y, %a : tensor<4x8xf32>, tensor<14x2xf32>
}
""")
# attn-fuzz-ir: a score_mod whose block is empty (the verifier asked it for a
# terminator: heap-buffer-overflow).
write("ir", "regression-empty-region", b"""func.func @f(%q: tensor<1x1x4x8xf32>, %t: tensor<4xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    }
  return %o : tensor<1x1x4x8xf32>
}
""")
# GAT seeds with the ops' newer operands and results.
write("ir", "gat-alpha-edge", b"""func.func @f(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %as: tensor<2x4xf32>, %ad: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>, %ea: tensor<10x2xf32>, %we: tensor<8x2xf32>) -> (tensor<6x8xf32>, tensor<16x2xf32>) {
  %y, %a = attn.gat %x, %w, %as, %ad graph(%rp, %ci) edge(%ea, %we, %as) : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>, tensor<10x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>) -> (tensor<6x8xf32>, tensor<16x2xf32>)
  return %y, %a : tensor<6x8xf32>, tensor<16x2xf32>
}
""")
write("ir", "gatv2", b"""func.func @f(%x: tensor<6x3xf32>, %w: tensor<8x3xf32>, %att: tensor<2x4xf32>, %rp: tensor<7xi64>, %ci: tensor<10xi64>, %b: tensor<8xf32>) -> tensor<6x8xf32> {
  %y = attn.gatv2 %x, %w, %w, %att graph(%rp, %ci) bias_src(%b) bias_dst(%b) : (tensor<6x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x4xf32>, tensor<7xi64>, tensor<10xi64>, tensor<8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}
""")
