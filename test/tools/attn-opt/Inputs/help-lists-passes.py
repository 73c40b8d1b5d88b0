"""Checks that attn-opt --help lists every attn pass and pipeline up front.

usage: help-lists-passes.py HELP_OUTPUT ATTN_PASSES_MD

The passes are those documented in the ODS-generated reference (one
"### `-name`" heading each); the pipelines are registered in C++ and named
here. Prints one line per problem and exits 1, or a summary line.
"""
import re
import sys

FIRST_LINES = 40
PIPELINES = ["attn-cpu-pipeline", "attn-gpu-pipeline", "attn-reference-pipeline"]

help_lines = open(sys.argv[1]).read().splitlines()
passes = re.findall(r"^### `-(attn-[a-z0-9-]+)`", open(sys.argv[2]).read(),
                    re.MULTILINE)
head = help_lines[:FIRST_LINES]
problems = []
if not passes:
    problems.append("no attn pass found in " + sys.argv[2])
for name in passes + PIPELINES:
    if not any(re.match(r"\s*--" + re.escape(name) + r"\s+- \S", l)
               for l in head):
        problems.append(f"--{name} is not listed (with its summary) in the "
                        f"first {FIRST_LINES} lines of --help: add it to "
                        f"kAttnPasses (or kAttnPipelines) in "
                        f"tools/attn-opt/attn-opt.cpp")
for p in problems:
    print("help: " + p)
if problems:
    sys.exit(1)
print(f"help: {len(passes)} attn passes and {len(PIPELINES)} pipelines in "
      f"the first {FIRST_LINES} lines")
