#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Check rocelat --svg's picture against a capture's ground truth
(tests/lib/roce_captures.py's JSON):

    svg_check.py FILE.svg TRUTH.json
    svg_check.py --list FILE.svg


Parsed as XML (a malformed file fails here). Every flow of the truth with
samples has one panel whose dots (circles) are exactly its samples, with
its exact p50/p99; no other panel; panels worst first (highest p50); the
heatmap's cells add up to every sample. Prints what it compared; exits 1
on the first difference. --list prints each panel, worst first, as
"requester responder qpn sport samples dots p50_ns p99_ns", for a live
run's checks.
"""
import json
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("svg_check: " + msg, file=sys.stderr)
    sys.exit(1)


def parse(svg_path):
    root = ET.parse(svg_path).getroot()
    if root.tag != NS + "svg":
        fail("root is %s, not svg" % root.tag)
    return root


def dots_of(g):
    return [c for s in g.iter(NS + "g") if s.get("class") == "samples"
            for c in s.iter(NS + "circle")]


def list_panels(svg_path):
    for g in parse(svg_path).iter(NS + "g"):
        if g.get("class") == "flow":
            print(g.get("data-requester"), g.get("data-responder"), g.get("data-qpn"),
                  g.get("data-sport"), g.get("data-samples"), len(dots_of(g)),
                  g.get("data-p50-ns"), g.get("data-p99-ns"))


def main(svg_path, truth_path):
    root = parse(svg_path)
    truth = json.load(open(truth_path))
    want = {(f["requester"], f["responder"], f["dqpn"]): f
            for f in truth["flows"] if f["samples"]}
    panels = [g for g in root.iter(NS + "g") if g.get("class") == "flow"]
    seen = set()
    for g in panels:
        key = (g.get("data-requester"), g.get("data-responder"), int(g.get("data-qpn")))
        f = want.get(key)
        if f is None:
            fail("panel %s: flow %s not in the truth" % (g.get("id"), key))
        if key in seen:
            fail("flow %s drawn twice" % (key,))
        seen.add(key)
        dots = dots_of(g)
        got = (len(dots), int(g.get("data-samples")), int(g.get("data-p50-ns")),
               int(g.get("data-p99-ns")), int(g.get("data-sport")))
        exp = (f["samples"], f["samples"], f["p50"], f["p99"], f["sport"])
        print("%s %s: dots, samples, p50, p99, sport: want %s got %s"
              % (g.get("id"), key, exp, got))
        if got != exp:
            fail("flow %s differs" % (key,))
        lines = [p for p in g.iter(NS + "polyline") if p.get("class") in ("p50", "p99")]
        if len(lines) != 2 or not all(p.get("points").strip() for p in lines):
            fail("flow %s: no p50/p99 lines" % (key,))
    if seen != set(want):
        fail("flows not drawn: %s" % sorted(set(want) - seen))
    p50s = [int(g.get("data-p50-ns")) for g in panels]
    if p50s != sorted(p50s, reverse=True):
        fail("panels not worst first: p50 %s" % p50s)
    total = sum(f["samples"] for f in want.values())
    heat = [g for g in root.iter(NS + "g") if g.get("class") == "heatmap"]
    cells = sum(int(r.get("data-n")) for h in heat for r in h.iter(NS + "rect")
                if r.get("data-n"))
    print("heatmap: %d samples in its cells, truth %d" % (cells, total))
    if len(heat) != 1 or cells != total:
        fail("heatmap holds %d samples, not %d" % (cells, total))
    # self-contained: nothing fetched when it is shown
    for el in root.iter():
        for k, v in el.attrib.items():
            if k.endswith("href") or "url(" in v:
                fail("external reference %s=%s" % (k, v))
        if el.tag in (NS + "script", NS + "image", NS + "foreignObject"):
            fail("element %s in a self-contained picture" % el.tag)


if __name__ == "__main__":
    if sys.argv[1] == "--list":
        list_panels(sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2])
