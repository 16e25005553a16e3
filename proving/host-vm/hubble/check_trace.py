#!/usr/bin/env python3
# Copyright (C) 2026 Hubble for AOSP. Licensed under the Apache License, Version 2.0.
"""Checks a trace Hubble wrote inside the host VM against the program's own account.

    check_trace.py HUBBLE TRACE STDOUT

STDOUT is what the program printed: lines `calls CLASS.METHOD N` (how many times it called the
method) and `parent CLASS.CHILD CLASS.PARENT` (every call of CHILD comes from PARENT). The trace
must be a 0600 file, resolve every method pointer (`hubble info`: 0 unresolved), and its call
tree (`hubble decode --format nanoscope`, replayed as a stack) must hold exactly N calls of each
counted method, each nested in its parent. Exits 1 naming the first difference.
"""
import os
import re
import stat
import subprocess
import sys


def fail(msg):
    print(f"check_trace: {msg}", file=sys.stderr)
    sys.exit(1)


def short(signature):
    # "int Calls.mid(int)" -> "Calls.mid"
    m = re.match(r"^(?:\S+ )?([\w.$<>]+)\(", signature)
    return m.group(1) if m else signature


def main():
    if len(sys.argv) != 4:
        fail("usage: check_trace.py HUBBLE TRACE STDOUT")
    hubble, trace, out = sys.argv[1:]
    mode = stat.S_IMODE(os.stat(trace).st_mode)
    if mode != 0o600:
        fail(f"{trace}: mode {mode:o}, not 600 (app-private)")
    want_calls, want_parent = {}, {}
    with open(out) as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and w[0] == "calls":
                want_calls[w[1]] = int(w[2])
            elif len(w) == 3 and w[0] == "parent":
                want_parent[w[1]] = w[2]
    if not want_calls:
        fail(f"{out}: the program printed no 'calls' line")
    info = subprocess.run([hubble, "info", trace], capture_output=True, text=True, check=True).stdout
    m = re.search(r"(\d+) unresolved", info)
    if not m or int(m.group(1)) != 0:
        fail(f"{trace}: not every method pointer resolved:\n{info}")
    text = subprocess.run([hubble, "decode", trace, "--format", "nanoscope"],
                          capture_output=True, text=True, check=True).stdout
    stack, calls, before = [], {}, 0
    for line in text.splitlines():
        _, _, what = line.partition(":")
        if what == "POP":
            if stack:
                stack.pop()
            else:
                before += 1  # a frame entered before the window began
            continue
        name = short(what)
        if name in want_parent:
            parent = short(stack[-1]) if stack else "<before the window>"
            if parent != want_parent[name]:
                fail(f"{trace}: {name} called from {parent}, not {want_parent[name]}")
        calls[name] = calls.get(name, 0) + 1
        stack.append(what)
    for name, n in sorted(want_calls.items()):
        if calls.get(name, 0) != n:
            fail(f"{trace}: {name} entered {calls.get(name, 0)} times, the program counted {n}")
    print(f"check_trace: {os.path.basename(trace)}: " +
          ", ".join(f"{k} {v}" for k, v in sorted(want_calls.items())) +
          f" as counted; {len(calls)} methods, all resolved; {before} exits of frames older than the window")


if __name__ == "__main__":
    main()
