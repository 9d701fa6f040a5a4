#!/usr/bin/env python3
"""The JSON records README and the man pages document for one tool, checked
against records the tool printed: every key a documented record names (at
any depth) is in the tool's records of that type, and every documented
"time" is EPOCH_S.US, as the tool's are (seconds, six decimals).

usage: doc_json.py TOOL NDJSON [--absent KEY]... DOC...
A README is read from its "### TOOL" section only; a man page
(man/TOOL.h2m) whole. Keys in optional parts ([,"key":...]) may be
absent, and so may each --absent KEY (one the run cannot have: ifname
with -r). Prints each disagreement; exit 1 when there is one.
"""
import json
import re
import sys


def doc_text(path, tool):
    text = open(path).read()
    if path.endswith(".md"):
        m = re.search(r"^### %s\n(.*?)(?=^##)" % re.escape(tool), text, re.S | re.M)
        return m.group(1) if m else ""
    # roff: escapes out, continuation lines of an object joined
    text = re.sub(r"\\f[BIRP]|\\f\(CW", "", text).replace("\\-", "-")
    return re.sub(r"\n (?=\S)", "", text)


def doc_records(text):
    """(type, body) of every {"type":"X",...} written out"""
    out = []
    for m in re.finditer(r'\{"type":"(\w+)"', text):
        depth, i = 0, m.start()
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        out.append((m.group(1), text[m.start():i + 1]))
    return out


def keys(obj, acc):
    if isinstance(obj, dict):
        for k, v in obj.items():
            acc.add(k)
            keys(v, acc)
    elif isinstance(obj, list):
        for v in obj:
            keys(v, acc)
    return acc


def main():
    tool, ndjson = sys.argv[1], sys.argv[2]
    args, absent, docs = sys.argv[3:], set(), []
    while args:
        a = args.pop(0)
        if a == "--absent":
            absent.add(args.pop(0))
        else:
            docs.append(a)
    real, times = {}, []
    for line in open(ndjson):
        rec = json.loads(line)
        real.setdefault(rec["type"], set())
        keys(rec, real[rec["type"]])
        if "time" in rec:
            times.append(line.split('"time":', 1)[1].split(",", 1)[0])
    bad = []
    for t in times:
        if not re.fullmatch(r"\d{10}\.\d{6}", t):
            bad.append(f'{tool} printed "time":{t}, not EPOCH_S.US')
    checked = 0
    for doc in docs:
        for rtype, body in doc_records(doc_text(doc, tool)):
            tm = re.search(r'"time":([^,}]*)', body)
            if tm and tm.group(1) != "EPOCH_S.US":
                bad.append(f'{doc}: {rtype} documents "time":{tm.group(1)}, not EPOCH_S.US')
            if rtype not in real:
                continue
            checked += 1
            # optional parts: [ not opening a value ("key":[...])
            body = re.sub(r'(?<!:)\[[^\[\]]*(?:\[[^\]]*\][^\[\]]*)*\]', "", body)
            for k in re.findall(r'"(\w+)":', body):
                if k not in real[rtype] and k not in absent:
                    bad.append(f'{doc}: {rtype} documents "{k}", which {tool} does not print')
    if not checked:
        bad.append(f"no documented record of {tool} matched one it printed")
    print(f"{checked} documented records checked", file=sys.stderr)
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


main()
