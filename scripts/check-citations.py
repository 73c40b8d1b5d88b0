#!/usr/bin/env python3
"""Fails when a document or a source comment cites a file that is not in the
repository.

Usage: check-citations.py [ROOT]   (ROOT defaults to this script's repository)

Scans the repository's files (`git ls-files`: tracked, plus untracked files
that git does not ignore) whose names end in .md .td .cpp .h .py .mlir .test
.sh .c .txt, and `.ci/run`. What is read of each file:

  - .md, .test: everything;
  - .td: everything but `include "..."` lines (ODS descriptions are docs);
  - .cpp .h .c .mlir: comments;
  - .py: comments and docstrings;
  - .sh .txt (CMake), .ci/run: `#` comments.

Two kinds of citation are checked:

  (a) Markdown links with a relative target (not http:, https:, mailto: or
      a #anchor): the target, without its #anchor, must exist relative to
      the citing file (a file or a folder holding files);
  (b) bare file names ending in .md .td .cpp .h .py .sh .c .json .mlir .test
      (`docs/Rationale.md`, `LinalgBuilders.cpp`). A name with a folder
      (`lib/Transforms/TileSdpa.cpp`) must exist relative to the repository
      root or to the citing file's folder, or be the tail of a file's path
      (`Transforms/TileSdpa.cpp`); a plain name (`TileSdpa.cpp`) passes when
      a file of that name exists anywhere in the repository. A name `X` also
      passes when `X.in` exists (CMake configures X from it into the build
      tree), and a name that the citing file itself defines as a split-file
      part (`#--- NAME` or `//--- NAME`, see `split-file`) is present. Paths
      rooted in a variable or placeholder (`%attn_src_root/...`, `$OUT/...`,
      `<Name>.cpp`) and absolute paths are not checked.

Names that are legitimately outside the repository are listed in ALLOWED
below, each with the reason. Prints one line per dangling citation,
`FILE:LINE: cites 'NAME', which is not in the repository`, and exits 1; or
`check-citations: N files, M citations, all present` and exits 0.
"""

import io
import os
import re
import subprocess
import sys
import tokenize

SCANNED_SUFFIXES = (".md", ".td", ".cpp", ".h", ".py", ".mlir", ".test", ".sh",
                    ".c", ".txt")
SCANNED_NAMES = (".ci/run",)

# Names cited on purpose that are not files of this repository. Matched
# against the cited name as written and against its last component.
ALLOWED = {
    # Output files and placeholders of the usage examples.
    "vit.h",        # the header `attn-compile --emit=obj -o vit.o` writes
    "FILE.h",       # the header `--emit=obj -o FILE` writes
    "FILE.mlir",    # any input file of attn-run
    "MODEL.json",   # any model description of attn-compile
    "vit.json",     # the file named in an example error message
}
# Upstream include trees (MLIR's and LLVM's headers in code examples).
ALLOWED_PREFIXES = ("mlir/", "llvm/")
SPLIT_FILE_PART = re.compile(r"^\s*(?:#|//|;)\s*--- (\S+)\s*$", re.M)

CITED_EXT = r"(?:cpp|json|mlir|test|md|td|py|sh|c|h)"
# A file name: starts with a word character that does not continue a path, a
# variable or a placeholder, and is not followed by more of a name
# (`Passes.h.inc`, `config.test_format`).
BARE_NAME = re.compile(r"(?<![\w./<>%$*{}@~+-])"
                       r"([A-Za-z0-9_][\w.+/-]*\." + CITED_EXT + r")"
                       r"(?![\w+/-]|\.\w)")
MD_LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL_LINK = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|#)")


def repository_files(root):
    """Relative paths of the repository's files (tracked and not ignored)."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"],
            check=True, capture_output=True).stdout.decode("utf-8")
        paths = [p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        # Not a git checkout: every file but build trees and caches.
        paths = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".git"
                       and not d.startswith("build") and d != "__pycache__"]
            for name in files:
                paths.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted({p for p in paths
                   if os.path.isfile(os.path.join(root, p))})


def line_comments(text, marker_at):
    """Fragments from a comment marker found by `marker_at` to the end of
    each line, as (line number, text)."""
    fragments = []
    for number, line in enumerate(text.split("\n"), 1):
        start = marker_at(line)
        if start is not None:
            fragments.append((number, line[start:]))
    return fragments


def hash_comment_start(line):
    """Start of a shell/CMake `#` comment: a `#` beginning a word, outside
    quotes."""
    quote = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1  # an escaped character
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t;("):
            return i
        i += 1
    return None


def c_comments(text, char_literals=True):
    """Comments of C, C++ and MLIR text, as (line number, text)."""
    fragments = []
    i, n, line = 0, len(text), 1
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            fragments.append((line, text[i:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            fragments.append((line, text[i:end]))
            line += text.count("\n", i, end)
            i = end
        elif text.startswith('R"', i) and char_literals:
            match = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not match:
                i += 1
                continue
            end = text.find(")" + match.group(1) + '"', i)
            end = n if end < 0 else end + len(match.group(1)) + 2
            line += text.count("\n", i, end)
            i = end
        elif ch == '"' or (ch == "'" and char_literals
                           and not text[i - 1:i].isalnum()):
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return fragments


def python_comments(text):
    """Comments and docstrings of Python source, as (line number, text)."""
    fragments = []
    try:
        previous = tokenize.NEWLINE
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                fragments.append((token.start[0], token.string))
            elif token.type == tokenize.STRING and previous in (
                    tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                fragments.append((token.start[0], token.string))
            if token.type not in (tokenize.COMMENT, tokenize.NL):
                previous = token.type
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return line_comments(text, hash_comment_start)
    return fragments


def scanned_text(path, text):
    """The parts of a file that are documentation, as (line number, text)."""
    if path.endswith((".md", ".test")):
        return [(1, text)]
    if path.endswith(".td"):
        return [(number, line) for number, line in
                enumerate(text.split("\n"), 1)
                if not re.match(r'\s*include\s+"', line)]
    if path.endswith((".cpp", ".h", ".c")):
        return c_comments(text)
    if path.endswith(".mlir"):
        return c_comments(text, char_literals=False)
    if path.endswith(".py"):
        return python_comments(text)
    return line_comments(text, hash_comment_start)


class Repository:
    def __init__(self, root, files):
        self.root = root
        self.files = set(files)
        self.folders = {os.path.dirname(p) for p in files}
        for folder in list(self.folders):
            while folder:
                folder = os.path.dirname(folder)
                self.folders.add(folder)
        self.basenames = {os.path.basename(p) for p in files}

    def exists(self, relative):
        """A file or a folder holding files, relative to the root."""
        if relative.startswith("../") or relative == "..":
            return False
        relative = relative.rstrip("/")
        return relative in self.files or relative in self.folders

    def resolve(self, folder, name):
        return os.path.normpath(os.path.join(folder, name)).replace(os.sep, "/")

    def has_link_target(self, citing, target):
        target = target.split("#", 1)[0].split("?", 1)[0]
        if not target:
            return True
        if target.startswith("/"):
            return self.exists(target.lstrip("/"))
        return self.exists(self.resolve(os.path.dirname(citing), target))

    def has_named_file(self, citing, name, parts):
        if (name in ALLOWED or os.path.basename(name) in ALLOWED
                or name.startswith(ALLOWED_PREFIXES) or name in parts):
            return True
        name = name[2:] if name.startswith("./") else name
        candidates = {self.resolve(".", name),
                      self.resolve(os.path.dirname(citing), name)}
        if any(self.exists(c) or c + ".in" in self.files for c in candidates):
            return True
        if "/" not in name:
            return name in self.basenames or name + ".in" in self.basenames
        tail = "/" + name.lstrip("./")
        return any(f.endswith(tail) for f in self.files)


def check(root):
    files = repository_files(root)
    repo = Repository(root, files)
    scanned = [p for p in files
               if p.endswith(SCANNED_SUFFIXES) or p in SCANNED_NAMES]
    citations = 0
    dangling = []
    for path in scanned:
        with open(os.path.join(root, path), encoding="utf-8",
                  errors="replace") as f:
            text = f.read()
        parts = set(SPLIT_FILE_PART.findall(text))
        for start_line, fragment in scanned_text(path, text):
            links = set()
            for match in MD_LINK.finditer(fragment):
                target = match.group(1)
                links.add(match.start(1))
                if EXTERNAL_LINK.match(target):
                    continue
                citations += 1
                if not repo.has_link_target(path, target):
                    line = start_line + fragment.count("\n", 0, match.start())
                    dangling.append((path, line, target))
            for match in BARE_NAME.finditer(fragment):
                if match.start(1) in links:
                    continue  # a link target, checked above
                name = match.group(1)
                citations += 1
                if not repo.has_named_file(path, name, parts):
                    line = start_line + fragment.count("\n", 0, match.start())
                    dangling.append((path, line, name))
    for path, line, name in dangling:
        print(f"{path}:{line}: cites '{name}', which is not in the repository")
    if dangling:
        return 1
    print(f"check-citations: {len(scanned)} files, {citations} citations, "
          "all present")
    return 0


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    root = argv[1] if len(argv) == 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.abspath(root)
    if not os.path.isdir(root):
        print(f"check-citations: {root}: not a folder", file=sys.stderr)
        return 2
    return check(root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
