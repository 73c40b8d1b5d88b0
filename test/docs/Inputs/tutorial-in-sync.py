"""Checks that docs/writing-a-pass.md shows the code that is in the tree.

usage: tutorial-in-sync.py SRC_ROOT

Every line of each ```cpp block of the tutorial must be a line of the source
file of the pass it shows (the block naming `LocalCoveringAllKeys` shows
lib/Transforms/SimplifyMasks.cpp, `ScaleIntoQuery` FoldScale.cpp; blank
lines and a line "..." are skipped), and every `// RUN:` line it quotes must
be a RUN line of the test it names. Prints one line per difference, exit 1.
"""
import os
import re
import sys

root = sys.argv[1]
doc_path = os.path.join(root, "docs", "writing-a-pass.md")
doc = open(doc_path).read()
SOURCES = {
    "LocalCoveringAllKeys": "lib/Transforms/SimplifyMasks.cpp",
    "ScaleIntoQuery": "lib/Transforms/FoldScale.cpp",
}
TESTS = [
    "test/Transforms/simplify-masks.mlir",
    "test/Integration/simplify-masks.mlir",
    "test/Transforms/fold-scale.mlir",
    "test/Integration/fold-scale.mlir",
]


def lines_of(path):
    return {l.strip() for l in open(os.path.join(root, path))}


problems = []
blocks = re.findall(r"```(\w*)\n(.*?)```", doc, re.DOTALL)
checked = 0
for lang, body in blocks:
    if lang == "cpp":
        names = [n for n in SOURCES if n in body]
        if not names:
            continue
        source = SOURCES[names[0]]
        known = lines_of(source)
        for line in body.splitlines():
            text = line.strip()
            if not text or text == "...":
                continue
            checked += 1
            if text not in known:
                problems.append(f"{source}: no line '{text}'")
    for line in body.splitlines():
        if line.startswith("// RUN:"):
            checked += 1
            if not any(line.strip() in lines_of(t) for t in TESTS):
                problems.append(f"no test has the RUN line '{line.strip()}'")
for p in problems:
    print("tutorial: " + p)
if problems:
    sys.exit(1)
print(f"tutorial: {checked} lines, all in the tree")
