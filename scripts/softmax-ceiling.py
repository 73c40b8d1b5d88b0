#!/usr/bin/env python3
"""How fast dense f32 attention could be with a free softmax, on this host.

For each (L, E), it lowers a dense `attn.sdpa` (B 1, H 8) with
attn-cpu-pipeline's own tiling (`linalg-only=true`) and derives a second
program from that IR: the same tiles, transposes, copies and both
contractions, but the second contraction multiplies the raw score tile by V
(not exp(S - m)) and the loop no longer carries the row max and sums, so the
row max, exp, row sums and rescales are dead and vanish. Both programs are
compiled by the rest of the pipeline and timed by attn-run on each thread
count (the heuristic's tiles for both: no tuning cache); the second one's
numbers are meaningless (it is a timing bound, not attention). With the
peers' virtualenv (scripts/install-peers.sh), PyTorch's SDPA is timed too
(bench/peers/torch_peers.py), and the table gives both programs' speed
against it:

  scripts/softmax-ceiling.py [--L 1024,4096] [--E 64,128] [--threads 1,2]
                             [--repeat N] [--no-peers] [--print-ir]
                             [--target-cpu CPU] [--target-features F]

--target-cpu / --target-features compile for another target of this host, as
attn-run's options (e.g. --target-cpu=x86-64-v3: AVX2 code; the environment
reaches the peers, so ATEN_CPU_CAPABILITY=avx2 holds SDPA to AVX2 too).

--print-ir prints the derived IR of the first L and E and times nothing
(test/bench/softmax-ceiling.test checks that the edit still applies); with
--strip-target, without the target attributes attn-opt recorded, so that
attn-run compiles it for whichever host runs it (scripts/device-bundle.sh
packs such files for scripts/cpu-check.sh: the tiles in the IR, 256 x 64
blocks for these shapes, are the same on every x86 target; the register
tiles are chosen later, by attn-run's pipeline, for its host).

The edit is made on the IR's structure (the query tile's key loop with three
carried values, its two contractions); if the IR no longer has that shape the
script stops with an error rather than timing something else.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(os.environ.get("ATTN_BUILD_DIR", os.path.join(ROOT, "build")), "bin")
PEERS_PY = os.path.join(os.environ.get("ATTN_PEERS_VENV", "/opt/attn-peers"), "bin", "python")
PEERS_SCRIPT = os.path.join(ROOT, "bench", "peers", "torch_peers.py")

SDPA = """func.func @f(%q: tensor<1x8x{L}x{E}xf32>, %k: tensor<1x8x{L}x{E}xf32>, %v: tensor<1x8x{L}x{E}xf32>) -> tensor<1x8x{L}x{E}xf32> {{
  %o = attn.sdpa %q, %k, %v : (tensor<1x8x{L}x{E}xf32>, tensor<1x8x{L}x{E}xf32>, tensor<1x8x{L}x{E}xf32>) -> tensor<1x8x{L}x{E}xf32>
  return %o : tensor<1x8x{L}x{E}xf32>
}}
"""

LOOP = re.compile(r"= scf\.for %\w+ = [^\n]*iter_args\((%\w+) = [^,]+, (%\w+) = [^,]+, (%\w+) = [^)]+\)")
CONTRACTION = re.compile(
    r"(%\w+) = linalg\.generic \{indexing_maps = \[#\w+, #\w+, #\w+\], "
    r"iterator_types = \[\"parallel\", \"parallel\", \"reduction\"\]\} "
    r"ins\((%\w+), (%\w+) : [^)]*\) outs\((%\w+) : ")
YIELD = re.compile(r"scf\.yield (%[\w#]+), (%[\w#]+), (%[\w#]+) :")


def fail(msg):
    sys.exit(f"softmax-ceiling: {msg}")


def contractions_only(ir):
    """The IR with the softmax of the key loop cut out (see the docstring)."""
    loops = list(LOOP.finditer(ir))
    if len(loops) != 1:
        fail(f"expected one key loop carrying three values, found {len(loops)}")
    loop = loops[0]
    m_arg, l_arg, acc_arg = loop.groups()
    body_end = ir.index("scf.yield", loop.end())
    body = ir[loop.end():body_end]
    found = list(CONTRACTION.finditer(body))
    if len(found) != 2:
        fail(f"expected two contractions in the key loop, found {len(found)}")
    scores, p_tile, out = found[0].group(1), found[1].group(2), found[1].group(4)
    second = found[1]
    new_second = second.group(0).replace(f"ins({p_tile}, ", f"ins({scores}, ", 1) \
                                .replace(f"outs({out} : ", f"outs({acc_arg} : ", 1)
    body = body[:second.start()] + new_second + body[second.end():]
    y = YIELD.match(ir, body_end)
    if not y or y.group(3) != second.group(1):
        fail("the key loop's yield is not (max, sums, the second contraction)")
    new_yield = f"scf.yield {m_arg}, {l_arg}, {y.group(3)} :"
    return ir[:loop.end()] + body + new_yield + ir[y.end():]


def target_options(args):
    """attn-cpu-pipeline's target options for --target-cpu/--target-features."""
    opts = []
    if args.target_cpu:
        opts.append(f"target-cpu={args.target_cpu}")
    if args.target_features:
        opts.append(f"target-features={args.target_features}")
    return opts


TARGET_ATTRS = (re.compile(r' attributes \{llvm\.target_triple = "[^"]*"\}'),
                re.compile(r' attributes \{target_cpu = "[^"]*"'
                           r'(, target_features = #llvm\.target_features<\[[^\]]*\]>)?\}'))


def strip_target(ir):
    """The IR without the module's triple and the function's CPU and features."""
    for attr in TARGET_ATTRS:
        ir = attr.sub("", ir)
    if "target_cpu" in ir or "llvm.target_triple" in ir:
        fail("could not strip the target attributes")
    return ir


def attn_run(path, threads, repeat, args, no_cache):
    # The lowered IR names its target on its function too (attn-run keeps it).
    # An empty tuning cache: tuned tiles would apply to the attn.sdpa
    # program only (the other one has no attn op left to tile).
    cmd = [os.path.join(BIN, "attn-run"), path, "--repeat", str(repeat),
           "--num-threads", str(threads), "--tuning-cache", no_cache] + \
        ["--" + o for o in target_options(args)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"run: best ([\d.]+) ms, median ([\d.]+) ms", out.stdout + out.stderr)
    if out.returncode != 0 or not m:
        fail(f"{' '.join(cmd)} failed:\n{(out.stdout + out.stderr)[-2000:]}")
    return float(m.group(2))


def sdpa_ms(l, e, threads):
    cmd = [PEERS_PY, PEERS_SCRIPT, "--family", "dense", "--impl", "sdpa", "--L", str(l),
           "--E", str(e), "--threads", str(threads), "--no-check"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            if row.get("ms") is None:
                print(f"softmax-ceiling: SDPA L={l} E={e} T={threads}: {row.get('error')}",
                      file=sys.stderr)
            return row.get("ms")
    print(f"softmax-ceiling: {' '.join(cmd)} printed no result:\n{out.stderr[-2000:]}",
          file=sys.stderr)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--L", default="1024,4096")
    ap.add_argument("--E", default="64,128")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=0,
                    help="timed calls (default: 30 at L <= 1024, 3 above)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--target-cpu", default="")
    ap.add_argument("--target-features", default="")
    ap.add_argument("--print-ir", action="store_true",
                    help="print the IR without the softmax for the first L and E; time nothing")
    ap.add_argument("--strip-target", action="store_true",
                    help="with --print-ir: without the target attributes")
    args = ap.parse_args()
    # As attn-bench and cpu-check.sh: idle OpenMP threads spin 1 ms (libomp's
    # KMP_BLOCKTIME), then sleep rather than spin on the other core.
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("KMP_BLOCKTIME", "1")
    peers = not args.no_peers and not args.print_ir and os.path.exists(PEERS_PY)
    if not args.no_peers and not args.print_ir and not peers:
        print(f"softmax-ceiling: no {PEERS_PY} (scripts/install-peers.sh): SDPA not timed",
              file=sys.stderr)
    if not args.print_ir:
        print("| L | E | threads | attn-mlir ms | without softmax ms | softmax share |"
              + (" SDPA ms | vs SDPA | bound vs SDPA |" if peers else ""))
        print("|---|---|---|---|---|---|" + ("---|---|---|" if peers else ""))
    with tempfile.TemporaryDirectory() as tmp:
        no_cache = os.path.join(tmp, "no-tuning-cache.json")
        for l in map(int, args.L.split(",")):
            for e in map(int, args.E.split(",")):
                full = os.path.join(tmp, f"d{l}-{e}.mlir")
                with open(full, "w") as f:
                    f.write(SDPA.format(L=l, E=e))
                lowered = subprocess.run(
                    [os.path.join(BIN, "attn-opt"), full,
                     "--attn-cpu-pipeline=" + " ".join(["linalg-only=true"] + target_options(args))],
                    capture_output=True, text=True)
                if lowered.returncode != 0:
                    fail(f"attn-opt failed on L={l} E={e}:\n{lowered.stderr[-2000:]}")
                bound_ir = contractions_only(lowered.stdout)
                if args.print_ir:
                    print(strip_target(bound_ir) if args.strip_target else bound_ir, end="")
                    return
                bound = os.path.join(tmp, f"d{l}-{e}-bound.mlir")
                with open(bound, "w") as f:
                    f.write(bound_ir)
                repeat = args.repeat or (30 if l <= 1024 else 3)
                for t in map(int, args.threads.split(",")):
                    ours = attn_run(full, t, repeat, args, no_cache)
                    ceiling = attn_run(bound, t, repeat, args, no_cache)
                    row = (f"| {l} | {e} | {t} | {ours:.2f} | {ceiling:.2f} | "
                           f"{100 * (ours - ceiling) / ours:.1f} % |")
                    if peers:
                        ms = sdpa_ms(l, e, t)
                        row += (f" {ms:.2f} | {ms / ours:.2f}x | {ms / ceiling:.2f}x |"
                                if ms is not None else " - | - | - |")
                    print(row, flush=True)


if __name__ == "__main__":
    main()
