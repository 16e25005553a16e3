#!/usr/bin/env python3
"""Chrome JSON and flame-graph SVG checks.

usage: check_json_svg.py chrome OUT.json IN.hubble...   (needs HUBBLE in the environment)
       check_json_svg.py svg OUT.svg HOTTEST_METHOD_NAME
chrome: the file parses as JSON; per (pid, tid) B/E events balance, never go below zero, are
        in time order, and equal the expected steps (names; µs times to the ns).
svg:    the file is well-formed XML with an <svg> root, and some frame's title names the hottest
        method.
"""

import collections
import json
import os
import sys
import xml.etree.ElementTree as ET

from hubble_expect import threads as expected_threads


def fail(msg):
    print(f"check_json_svg: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def chrome(out, inputs):
    with open(out) as f:
        doc = json.load(f)
    origin = int(doc["otherData"]["wall_clock_origin_ns"])
    per = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "M":
            continue
        if e["ph"] not in "BE":
            fail(f"unexpected phase {e['ph']}")
        per[(e["pid"], e["tid"])].append((round(e["ts"] * 1000) + origin, e["ph"], e.get("name")))
    total = 0
    expected = [(p, t) for p in inputs for t in expected_threads(os.environ["HUBBLE"], p)]
    for path, (h, want) in expected:
        got = per.pop((h.pid, h.tid), [])
        depth = 0
        for i, (t, ph, _) in enumerate(got):
            depth += 1 if ph == "B" else -1
            if depth < 0 or (i and t < got[i - 1][0]):
                fail(f"{path}: unbalanced or out of order at event {i}")
        if depth != 0:
            fail(f"{path}: {depth} slices never end")
        if got != want:
            fail(f"{path}: events differ from the decoder's (first: {next((g, w) for g, w in zip(got, want) if g != w) if got and want else (len(got), len(want))})")
        total += len(got)
    if per:
        fail(f"events of unexpected threads {list(per)}")
    print(f"check_json_svg: OK: chrome JSON parses, {total} B/E events balance and match")


def svg(out, hottest):
    root = ET.parse(out).getroot()
    if not root.tag.endswith("svg"):
        fail(f"root element is {root.tag}")
    titles = [t.text or "" for t in root.iter() if t.tag.endswith("title")]
    if not any(t.startswith(hottest + " (") for t in titles):
        fail(f"no frame titled '{hottest}' among {len(titles)} frames")
    print(f"check_json_svg: OK: SVG well-formed, {len(titles)} frames, names the hottest: {hottest}")


if __name__ == "__main__":
    if sys.argv[1] == "chrome":
        chrome(sys.argv[2], sys.argv[3:])
    else:
        svg(sys.argv[2], sys.argv[3])
