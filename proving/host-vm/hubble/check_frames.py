#!/usr/bin/env python3
# Copyright (C) 2026 Hubble for AOSP. Licensed under the Apache License, Version 2.0.
"""Checks the file a duration trigger flushed inside the host VM against the program.

    check_frames.py HUBBLE TRACE STDOUT REASON THRESHOLD_MS [THREAD]

STDOUT holds `frames N slow K` (Frames.java). The file must be 0600 with every method resolved,
say REASON, and its main thread's Frames.doFrame calls, timed from the trace alone, must be the
program's: all N (the trigger fires after the slow frame ends; the window holds what came
before it), exactly one of them over THRESHOLD_MS, and that one the K-th (counted from 0). In a
many-thread file, THREAD (default main) is the one whose frames count.
"""
import os
import re
import stat
import subprocess
import sys


def fail(msg):
    print(f"check_frames: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) not in (6, 7):
        fail("usage: check_frames.py HUBBLE TRACE STDOUT REASON THRESHOLD_MS [THREAD]")
    hubble, trace, out, reason, threshold = sys.argv[1:6]
    ui = sys.argv[6] if len(sys.argv) == 7 else "main"
    threshold_ns = int(threshold) * 1_000_000
    if stat.S_IMODE(os.stat(trace).st_mode) != 0o600:
        fail(f"{trace}: not 0600")
    m = re.search(r"^frames (\d+) slow (\d+)$", open(out).read(), re.M)
    if not m:
        fail(f"{out}: no 'frames N slow K' line")
    frames, slow = int(m.group(1)), int(m.group(2))
    info = subprocess.run([hubble, "info", trace], capture_output=True, text=True, check=True).stdout
    if not re.search(rf"^reason:\s+{re.escape(reason)}\b", info, re.M):
        fail(f"{trace}: the reason is not {reason}:\n{info}")
    if not re.search(r" 0 unresolved", info):
        fail(f"{trace}: not every method resolved:\n{info}")
    text = subprocess.run([hubble, "decode", trace, "--format", "nanoscope"],
                          capture_output=True, text=True, check=True).stdout
    stack, durations, thread = [], [], ui
    header = re.compile(r"^thread \d+ (.*), run \d+ of \d+")
    for line in text.splitlines():
        h = header.match(line)
        if h:
            thread = h.group(1)
            continue
        ts, _, what = line.partition(":")
        if not ts.isdigit() or thread != ui:
            continue
        if what == "POP":
            if stack:
                name, start = stack.pop()
                if ".doFrame(" in name:
                    durations.append(int(ts) - start)
            continue
        stack.append((what, int(ts)))
    # The trigger fires when the slow frame ends: the frames after it may or may not be in the
    # window (the flush comes at a tick); every one up to it must be.
    if len(durations) < slow + 1:
        fail(f"{trace}: {len(durations)} doFrame calls, want at least {slow + 1}")
    over = [i for i, d in enumerate(durations) if d > threshold_ns]
    if over != [slow]:
        fail(f"{trace}: frames over {threshold} ms: {over} (durations "
             f"{[round(d / 1e6, 1) for d in durations]} ms), want [{slow}]")
    print(f"check_frames: {os.path.basename(trace)}: reason {reason}; {len(durations)} of "
          f"{frames} frames in the window, frame {slow} took {durations[slow] / 1e6:.1f} ms, "
          f"the others at most {max(d for i, d in enumerate(durations) if i != slow) / 1e6:.1f} ms")


if __name__ == "__main__":
    main()
