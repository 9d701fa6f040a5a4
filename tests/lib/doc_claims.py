#!/usr/bin/env python3
"""README's "checked by" sentences against tests/README.md's table of them.

usage: doc_claims.py ROOT
- every tests/... file README names lies inside the sentence of a row of
  the table ("## Checked by", and its list of files named without a
  test) for that file: README's text with backquotes left out and
  whitespace folded, the row's first column a part of it;
- every row's sentence is in README, its file exists, and each test the
  row names is one of that file's tests (@test names for bats, a string
  in it for any other file);
- every test README names in parentheses after a file
  (FILE.bats ("part of a name")) is part of one of that file's test names.
Prints each disagreement; exit 1 when there is one, 0 with a count.
"""
import os
import re
import sys

PATH = re.compile(r"tests/[A-Za-z0-9_/.-]*\.(?:bats|c|py|sh|yml)")


def fold(text):
    return re.sub(r"\s+", " ", text.replace("`", ""))


def table_rows(readme):
    """(sentence, file, [tests] or None) of the tables under Checked by"""
    sec = re.search(r"^## Checked by\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
    rows = []
    for line in (sec.group(1) if sec else "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not line.startswith("|") or cells[1] in ("file", "---"):
            continue
        tests = re.findall(r"`([^`]+)`", cells[2])
        rows.append((fold(cells[0]), cells[1], tests if tests else None))
    return rows


def test_names(root, path):
    text = open(os.path.join(root, path)).read()
    if path.endswith(".bats"):
        return [n.replace('\\"', '"') for n in
                re.findall(r'^@test "(.*)" \{$', text, re.M)], text
    return None, text


def has_test(root, path, name, part=False):
    names, text = test_names(root, path)
    if names is None:
        return name in text
    return any(name in n for n in names) if part else name in names


def main():
    root = sys.argv[1]
    readme = fold(open(os.path.join(root, "README.md")).read())
    rows = table_rows(open(os.path.join(root, "tests/README.md")).read())
    bad = []
    spans = []
    for sentence, path, tests in rows:
        at = readme.find(sentence)
        if at < 0:
            bad.append("row not in README: %s" % sentence)
            continue
        spans.append((at, at + len(sentence), path))
        if not os.path.exists(os.path.join(root, path)):
            bad.append("no such file: %s" % path)
            continue
        for t in tests or []:
            if not has_test(root, path, t):
                bad.append("%s has no test %r" % (path, t))
    for m in PATH.finditer(readme):
        if not any(a <= m.start() and m.end() <= b and p == m.group(0) for a, b, p in spans):
            bad.append("README names %s outside the table: ...%s..." %
                       (m.group(0), readme[max(0, m.start() - 60):m.end() + 20]))
    for m in re.finditer(r"(tests/[A-Za-z0-9_/.-]*\.bats) \(\"([^\"]+)\"\)", readme):
        if os.path.exists(os.path.join(root, m.group(1))) and \
                not has_test(root, m.group(1), m.group(2), part=True):
            bad.append("%s has no test named like %r" % (m.group(1), m.group(2)))
    for b in bad:
        print(b)
    if not bad:
        print("%d rows, %d mentions of test files in README" %
              (len(rows), len(PATH.findall(readme))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
