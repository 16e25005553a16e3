#!/usr/bin/env python3
# Copyright (C) 2026 Hubble for AOSP. Licensed under the Apache License, Version 2.0.
"""Checks a trace Hubble wrote inside the host VM against the program's own account.

    check_trace.py HUBBLE TRACE[,TRACE...] STDOUT [THREAD,...]

STDOUT is what the program printed: lines `calls CLASS.METHOD N` (how many times it called the
method), `calls THREAD CLASS.METHOD N` (how many times the thread named THREAD called it: a
many-thread file holds every thread) and `parent CLASS.CHILD CLASS.PARENT` (every call of CHILD
comes from PARENT). The trace must be a 0600 file, resolve every method pointer (`hubble info`:
0 unresolved), and its call tree (`hubble decode --format nanoscope`, replayed as a stack per
thread) must hold exactly N calls of each counted method, each nested in its parent. Exits 1
naming the first difference. With THREADS, only those threads' `calls THREAD ...` lines are
checked (a ring-mode file traces only some threads). Several many-thread files, in the order they
were flushed, are one stream per thread: each holds what its threads wrote since the previous
flush, so together they must hold every call once, and a frame open at one flush goes on in the
next file.
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
    if len(sys.argv) not in (4, 5):
        fail("usage: check_trace.py HUBBLE TRACE STDOUT [THREAD,...]")
    hubble, traces, out = sys.argv[1:4]
    traces = traces.split(",")
    only = set(sys.argv[4].split(",")) if len(sys.argv) == 5 else None
    for trace in traces:
        mode = stat.S_IMODE(os.stat(trace).st_mode)
        if mode != 0o600:
            fail(f"{trace}: mode {mode:o}, not 600 (app-private)")
    want_calls, want_parent = {}, {}
    with open(out) as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and w[0] == "calls":
                want_calls[(None, w[1])] = int(w[2])
            elif len(w) == 4 and w[0] == "calls" and (only is None or w[1] in only):
                want_calls[(w[1], w[2])] = int(w[3])
            elif len(w) == 3 and w[0] == "parent":
                want_parent[w[1]] = w[2]
    if not want_calls:
        fail(f"{out}: the program printed no 'calls' line")
    stacks, calls, before, reused = {}, {}, 0, 0
    for trace in traces:
        info = subprocess.run([hubble, "info", trace], capture_output=True, text=True, check=True).stdout
        m = re.search(r"(\d+) unresolved", info)
        if not m or int(m.group(1)) != 0:
            fail(f"{trace}: not every method pointer resolved:\n{info}")
        m = re.search(r"^reused:\s+(\d+)", info, re.M)
        reused += int(m.group(1)) if m else 0
        text = subprocess.run([hubble, "decode", trace, "--format", "nanoscope"],
                              capture_output=True, text=True, check=True).stdout
        # A one-thread file names its thread in `hubble info`; a many-thread file, run by run.
        named = re.search(r"^thread:\s+(.*) \(tid \d+\)$", info, re.M)
        thread = named.group(1) if named else None
        header = re.compile(r"^thread (\d+) (.*), run \d+ of \d+")
        for line in text.splitlines():
            h = header.match(line)
            if h:
                thread = h.group(2)
                if len(traces) == 1:
                    stacks[thread] = []  # each run starts afresh: what came before is not in it
                continue
            _, _, what = line.partition(":")
            stack = stacks.setdefault(thread, [])
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
                    fail(f"{trace}: {name} called from {parent} on thread {thread}, not {want_parent[name]}")
            for key in {(None, name), (thread, name)}:
                calls[key] = calls.get(key, 0) + 1
            stack.append(what)
    trace = ",".join(os.path.basename(t) for t in traces)
    for (t, name), n in sorted(want_calls.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        got = calls.get((t, name), 0)
        if got != n:
            where = f" on thread {t}" if t else ""
            fail(f"{trace}: {name} entered {got} times{where}, the program counted {n}")
    counted = ", ".join(f"{t + ' ' if t else ''}{m} {n}"
                        for (t, m), n in sorted(want_calls.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])))
    methods = len({m for (t, m) in calls if t is None})
    print(f"check_trace: {trace}: {counted} as counted; {methods} methods, "
          f"all resolved; {before} exits of frames older than the window"
          + (f"; {reused} methods of an unloaded loader named apart from a later method "
             "at their address" if reused else ""))


if __name__ == "__main__":
    main()
