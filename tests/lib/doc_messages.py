#!/usr/bin/env python3
"""Every message README's Troubleshooting quotes ("..."), as the tools
print it: each literal stretch of it (between the placeholders IFACE, N,
FILE, "..." and "(...)"), in order, must be in one string of the tools' C
sources, adjacent literals joined, %s and %d standing for anything. Prints each message not
found, one per line; exit 1 when there is one.

usage: doc_messages.py README.md SRC_DIR
"""
import pathlib
import re
import sys


def quoted_messages(readme):
    text = pathlib.Path(readme).read_text()
    m = re.search(r"^## Troubleshooting\n(.*?)^## ", text, re.S | re.M)
    section = re.sub(r"\s+", " ", m.group(1))
    # a backquoted command is not a message; what is quoted is
    section = re.sub(r"`[^`]*`", "", section)
    return [q for q in re.findall(r'"([^"]{8,})"', section)]


def source_strings(src):
    out = []
    for f in pathlib.Path(src).rglob("*.c"):
        text = f.read_text(errors="replace")
        # "a " "b" over lines is one literal
        text = re.sub(r'"\s*\n\s*"', "", text)
        out += re.findall(r'"((?:[^"\\\n]|\\.)*)"', text)
    return out


def fragments(msg):
    # placeholders: IFACE, N, FILE, ..., (...) and (id N, ...)
    parts = re.split(r"\([^)]*\.\.\.\)|\.\.\.|\b(?:IFACE|N|FILE|TOOL|ADDR)\b", msg)
    return [p.strip(" ,:;") for p in parts if p.strip(" ,:;")]


def found(frags, strings):
    """all of frags, in order, in one string (%s and the like: anything)"""
    pat = ".*".join(re.escape(f) for f in frags)
    for s in strings:
        s2 = re.sub(r"%[-0-9.*]*(?:ll|l|z)?[sduxfc]|%\d\$s", "\x00", s)
        if re.search(pat, s2):
            return True
    return False


def main():
    strings = source_strings(sys.argv[2])
    bad = 0
    msgs = quoted_messages(sys.argv[1])
    if not msgs:
        print("no quoted messages in Troubleshooting")
        sys.exit(1)
    for msg in msgs:
        if not found(fragments(msg), strings):
            print(f'"{msg}": no tool prints it')
            bad = 1
    sys.exit(bad)


main()
