#!/usr/bin/env python3
"""Reads a `hubble export --format trace` file with Debian's dmtracedump and checks what it
says against the inputs (decoded by `hubble decode`, see hubble_expect.py).

usage: check_dmtracedump.py HUBBLE_BINARY OUT.trace IN.hubble...
dmtracedump exits 0 even on a malformed key section, so only its stdout counts:
  * `dmtracedump -o`: the thread list, and every record — thread, enter/exit, µs since the
    trace start, class.method signature — equals the expected steps, in each thread's order,
    with no mismatched exit ('!') and no depth under- or overflow ('-'/'+');
  * the profile report: every method's call count ("calls N+R" in the inclusive table; a method
    with no inclusive µs is not listed there) and exclusive µs ("Exclusive elapsed times") equal
    what the expected steps give on the same µs clock.
"""

import collections
import re
import subprocess
import sys

from hubble_expect import dmtrace_name, threads as expected_threads

RECORD = re.compile(r"^\s*(\d+) (ent|xit|unr)(.)\s+(\d+)(.)(\.*)(.*)$")


def fail(msg):
    print(f"check_dmtracedump: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    hubble, trace, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    # One expectation per thread: a file of versions 1-3 is one, a version 4 file one per section.
    expected = [(p, t) for p in inputs for t in expected_threads(hubble, p)]
    start_us = min(s[0][0] for _, (_, s) in expected if s) // 1000

    listing = subprocess.run(["dmtracedump", "-o", trace], capture_output=True, text=True).stdout
    lines = listing.splitlines()
    try:
        t = lines.index(next(l for l in lines if l.startswith("Threads (")))
        r = lines.index("Trace (threadID action usecs class.method signature):")
    except (StopIteration, ValueError):
        fail("dmtracedump -o printed no thread list / trace header:\n" + listing[:2000])
    threads = {}
    for l in lines[t + 1 : r]:
        tid, _, name = l.partition(" ")
        threads[int(tid)] = name
    if len(threads) != len(expected):
        fail(f"dmtracedump lists {len(threads)} threads for {len(expected)} in the inputs")
    got = collections.defaultdict(list)
    for l in lines[r + 1 :]:
        m = RECORD.match(l)
        if not m:
            fail(f"unparsable record line: {l!r}")
        tid, action, mismatch, us, note, _dots, name = m.groups()
        if mismatch == "!" or note in "-+":
            fail(f"dmtracedump flags an unbalanced record: {l!r}")
        got[int(tid)].append((int(us), action, name))

    want_calls = collections.Counter()
    want_self = collections.Counter()
    want_incl = collections.Counter()
    for path, (h, s) in expected:
        candidates = [tid for tid, name in threads.items()
                      if name == h.thread_name or name == f"{h.thread_name} (tid {h.tid})"]
        tid = h.tid if h.tid in candidates else (candidates[0] if len(candidates) == 1 else None)
        if tid is None:
            fail(f"{path}: thread '{h.thread_name}' (tid {h.tid}) not in the thread list {threads}")
        want, stack = [], []
        for ns, kind, name in s:
            us = ns // 1000 - start_us
            if kind == "B":
                stack.append([dmtrace_name(name), us, 0])
                want.append((us, "ent", stack[-1][0]))
                want_calls[stack[-1][0]] += 1
            else:
                n, entered, children = stack.pop()
                want.append((us, "xit", n))
                want_self[n] += (us - entered) - children
                want_incl[n] += us - entered
                if stack:
                    stack[-1][2] += us - entered
        if got[tid] != want:
            for i, (g, w) in enumerate(zip(got[tid], want)):
                if g != w:
                    fail(f"{path}: record {i}: dmtracedump says {g}, expected {w}")
            fail(f"{path}: {len(got[tid])} records from dmtracedump, {len(want)} expected")
        del got[tid]
    if got:
        fail(f"records of unexpected threads: {sorted(got)}")

    report = subprocess.run(["dmtracedump", trace], capture_output=True, text=True).stdout
    calls, excl = {}, {}
    section = None
    for l in report.splitlines():
        if l.startswith("Exclusive elapsed times for each method, not including"):
            section = "excl"
        elif l.startswith("Inclusive elapsed times for each method and its parents"):
            section = "incl"
        elif l.startswith("Exclusive elapsed time for each class"):
            section = None
        elif section == "excl":
            m = re.match(r"^\s*(\d+)\s+[\d.]+\s+[\d.]+\s+\[\d+\] (.*)$", l)
            if m:
                excl[m.group(2)] = int(m.group(1))
        elif section == "incl":
            m = re.match(r"^\[\d+\]\s+[\d.]+%\s+(\d+)\+(\d+)\s+\d+ (.*)$", l)
            if m and m.group(3) != "(toplevel)":
                calls[m.group(3)] = int(m.group(1)) + int(m.group(2))
    if not calls or not excl:
        fail("no profile tables in dmtracedump's report:\n" + report[:2000])
    # dmtracedump's inclusive table stops at the first method with no elapsed time (its list is
    # sorted by inclusive time): a method whose every call took under a microsecond is not in it.
    want_calls = {k: n for k, n in want_calls.items() if want_incl[k] > 0}
    if calls != want_calls:
        diff = {k: (calls.get(k), want_calls.get(k)) for k in set(calls) | set(want_calls)
                if calls.get(k) != want_calls.get(k)}
        fail(f"call counts differ (dmtracedump, expected): {list(diff.items())[:5]}")
    excl.pop("(toplevel)", None)
    for name, us in want_self.items():
        if excl.get(name, 0) != us:
            fail(f"exclusive µs of {name}: dmtracedump {excl.get(name)}, expected {us}")
    records = sum(len(s) for _, (_, s) in expected)
    print(f"check_dmtracedump: OK: {len(expected)} thread(s), {records} records listed as expected, "
          f"{len(calls)} methods' call counts and exclusive times match the profile report")


if __name__ == "__main__":
    main()
