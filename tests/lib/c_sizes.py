#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The size rules of CONTRIBUTING, checked in C files.

    c_sizes.py [--max-function N] [--max-file N] FILE...

prints "FILE:LINE NAME LENGTH" for every function whose body (the lines
between its braces) is longer than N lines (default 100; LINE: where its
name is), and "FILE: LINES lines" for every file longer than N lines
(default 1000). Exit status 1 when it printed anything, 2 when it could
not check.

Functions are found by a parser, Universal Ctags (universal-ctags), which
gives each definition's first and last line whatever its layout: a
signature indented, split over lines, or after a macro such as SEC("xdp").
The files' function-like macros are made known to it (-I NAME+), so that
a macro call at file scope that defines functions (FENTRY_OR_KPROBE(...))
is not read as the start of a function that swallows the next one.
"""
import argparse
import json
import re
import subprocess
import sys

MACRO = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)\(", re.M)


def functions(files, texts):
    """(file, line, end, name) of every function definition in files"""
    macros = sorted({m for t in texts.values() for m in MACRO.findall(t)})
    cmd = ["ctags", "--language-force=C", "--kinds-C=f", "--fields=+ne",
           "--output-format=json", "-f", "-"]
    if macros:
        cmd += ["-I", ",".join(m + "+" for m in macros)]
    out = subprocess.run(cmd + files, capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and tag.get("kind") == "function":
            yield tag["path"], tag["line"], tag.get("end"), tag["name"]


def body_lines(lines, start, end):
    """lines between the braces of the function on lines start..end"""
    brace = start
    while brace < end and "{" not in lines[brace - 1]:
        brace += 1
    return max(end - brace - 1, 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-function", type=int, default=100)
    ap.add_argument("--max-file", type=int, default=1000)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()

    texts = {}
    for f in args.files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            texts[f] = fh.read()
    try:
        found = list(functions(args.files, texts))
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"c_sizes.py: ctags (universal-ctags): {e}", file=sys.stderr)
        return 2
    bad = 0
    for f in args.files:
        n = texts[f].count("\n")
        if n > args.max_file:
            print(f"{f}: {n} lines")
            bad += 1
    for path, line, end, name in sorted(found):
        if end is None:
            print(f"{path}:{line} {name}: no end found", file=sys.stderr)
            return 2
        length = body_lines(texts[path].split("\n"), line, end)
        if length > args.max_function:
            print(f"{path}:{line} {name} {length}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
