"""Checks that docs/writing-a-pass.md shows the code that is in the tree.

usage: tutorial-in-sync.py SRC_ROOT

Every line of each ```cpp block of the tutorial must be a line of the source
file of the pass it shows (the block naming `MaskCoveringAllKeys` shows
lib/Transforms/SimplifyMasks.cpp, `ScaleIntoQuery` FoldScale.cpp), every
line of a ```tablegen block a line of lib/Transforms/Passes.td, and every
line of an ```mlir block that holds a RUN line a line of one of the tests
it quotes (blank lines and "..." lines are skipped everywhere; "(...)" and
"{ ... }" elisions end a line's comparison). Prints one line per
difference and exits 1.
"""
import os
import re
import sys

root = sys.argv[1]
doc_path = os.path.join(root, "docs", "writing-a-pass.md")
doc = open(doc_path).read()
SOURCES = {
    "MaskCoveringAllKeys": "lib/Transforms/SimplifyMasks.cpp",
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


def blocks_of(text):
    """(language, lines) of each fenced block opened at column 0."""
    out, lang, body = [], None, []
    for line in text.splitlines():
        if lang is None:
            if line.startswith("```"):
                lang, body = line[3:].strip(), []
        elif line == "```":
            out.append((lang, body))
            lang = None
        else:
            body.append(line)
    return out


def compared(line):
    """The part of a shown line that must appear in the tree."""
    text = line.strip()
    for elision in ("(...)", "{ ... }"):
        if elision in text:
            text = text[: text.index(elision)].rstrip()
    return text


problems = []
checked = 0
test_lines = set().union(*(lines_of(t) for t in TESTS))
for lang, body in blocks_of(doc):
    joined = "\n".join(body)
    if lang == "cpp":
        names = [n for n in SOURCES if n in joined]
        if not names:
            continue
        source, known = SOURCES[names[0]], lines_of(SOURCES[names[0]])
    elif lang == "tablegen":
        source, known = "lib/Transforms/Passes.td", lines_of(
            "lib/Transforms/Passes.td")
    elif lang == "mlir" and "// RUN:" in joined:
        source, known = "the quoted tests", test_lines
    else:
        continue
    for line in body:
        text = compared(line)
        if not text or text == "...":
            continue
        checked += 1
        if text not in known and not any(k.startswith(text) for k in known):
            problems.append(f"{source}: no line '{text}'")
for p in problems:
    print("tutorial: " + p)
if problems:
    sys.exit(1)
print(f"tutorial: {checked} lines, all in the tree")
