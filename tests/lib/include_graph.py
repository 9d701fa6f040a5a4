#!/usr/bin/env python3
"""The include graph between the tree's folders, from the sources' own
quoted #include lines (python3 include_graph.py ROOT [FILE...]).

A file's folder is its room: tools/<tool>/ (with everything under it),
tools/lib/, bpf/lib/, btf/, bench/, tests/unit/. A quoted include is
resolved as the Makefile's include path does: the including file's own
folder first, then tools/, bpf/, bpf/lib/, btf/, then the tool folders
(rocediag sees the tools it uses); generated headers (skeletons,
vmlinux.h) resolve to none and are left out.

Prints one "FROM -> TO: FILE includes HEADER" line per edge between two
folders, then "circle: A -> B -> ... -> A" for every circle between
folders, and "up: ..." for every edge from a shared library (tools/lib,
bpf/lib) into a tool's folder. Exit status 1 when there is a circle or an
edge up, else 0."""
import os
import re
import subprocess
import sys

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
LIBS = ("tools/lib", "bpf/lib")


def room(path):
    parts = path.split("/")
    if parts[0] == "tools" and len(parts) > 2:
        return "/".join(parts[:2])
    if parts[0] == "bpf" and len(parts) > 2:
        return "/".join(parts[:2])
    return os.path.dirname(path) or "."


def files_of(root, args):
    if args:
        return [os.path.relpath(os.path.abspath(a), root) for a in args]
    out = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"],
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.split() if not f.startswith("vmlinux/")]


def resolve(root, src, name, tool_dirs):
    cands = [os.path.join(os.path.dirname(src), name)]
    cands += [os.path.join(d, name) for d in ("tools", "bpf", "bpf/lib", "btf")]
    cands += [os.path.join(d, name) for d in tool_dirs]
    for c in cands:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def circles(edges):
    found, seen = [], set()

    def walk(node, path):
        for nxt in sorted(edges.get(node, ())):
            if nxt in path:
                cyc = path[path.index(nxt):] + [nxt]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    found.append(cyc)
            else:
                walk(nxt, path + [nxt])

    for n in sorted(edges):
        walk(n, [n])
    return found


def main():
    root = os.path.abspath(sys.argv[1])
    tools = os.path.join(root, "tools")
    tool_dirs = sorted("tools/" + d for d in os.listdir(tools)
                       if d != "lib" and os.path.isdir(os.path.join(tools, d)))
    edges, bad = {}, 0
    for f in files_of(root, sys.argv[2:]):
        try:
            lines = open(os.path.join(root, f), errors="replace").read().splitlines()
        except OSError:
            continue
        for line in lines:
            m = INC.match(line)
            if not m:
                continue
            to = resolve(root, f, m.group(1), tool_dirs)
            if to is None or room(to) == room(f):
                continue
            a, b = room(f), room(to)
            print(f"{a} -> {b}: {f} includes {to}")
            edges.setdefault(a, set()).add(b)
            if a in LIBS and b not in LIBS:
                print(f"up: {f} includes {to}")
                bad = 1
    for c in circles(edges):
        print("circle: " + " -> ".join(c))
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
