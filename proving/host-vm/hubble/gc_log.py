# Copyright (C) 2026 Hubble for AOSP. Licensed under the Apache License, Version 2.0.
"""ART's collection log lines, read by the host VM's measurements (gc-pauses, thread-churn).

With -XX:LongPauseLogThreshold=0 and -XX:LongGCLogThreshold=0 ART logs every collection as
`... GC freed ... paused P1[,P2...] total T` (runtime/gc/heap.cc 2879-2885), each duration as
PrettyDuration prints it (libartbase/base/time_utils.cc 51-57): "0" for none, else a number and
ns, us, ms or s.
"""
import re

_UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
_DURATION = re.compile(r"([\d.]+)(ns|us|ms|s)\b")
_GC = re.compile(r"GC freed .* paused (\S+) total (\S+)")


def us(text, who):
    """A PrettyDuration in microseconds; exits naming WHO on anything else."""
    if text.strip() == "0":
        return 0.0
    m = _DURATION.fullmatch(text.strip())
    if not m:
        raise SystemExit(f"{who}: cannot read the duration '{text}'")
    return float(m.group(1)) * _UNIT_US[m.group(2)]


def collections(log, who):
    """[(pauses in µs, total in µs)] for every collection the log holds."""
    return [([us(p, who) for p in m.group(1).split(",")], us(m.group(2), who))
            for m in _GC.finditer(log)]
