"""What `hubble export` must write, computed independently of the exporters.

Events come from `hubble decode` (the trace-format owners' decoder, Nanoscope text:
`<ns>:<name>` / `<ns>:POP`, ns = floor(counter * 1e9 / hz)); the header fields are read straight
from the file (docs/trace-format.md). From these, per thread: the exact timer counters
(counter = ceil(ns * hz / 1e9), exact for hz <= 1 GHz), frames cut by the window start opened at
the window start (the start record, else the first event) as "<entered before the window>", frames running at the flush closed at the
reference counter, and every time placed on the wall clock:
    wall(c) = wall_clock_ns - floor((reference - c) * 1e9 / hz).
"""

import struct
import subprocess

BEFORE = "<entered before the window>"


class Header:
    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read(80 + 3 * (2 + 4096))
        if data[:8] != b"HUBBLTRC":
            raise ValueError(f"{path}: not a hubble trace")
        (self.hz, self.reference, self.wall) = struct.unpack_from("<QQQ", data, 16)
        (self.pid, self.tid) = struct.unpack_from("<II", data, 64)
        pos = 80
        strings = []
        for _ in range(3):
            (n,) = struct.unpack_from("<H", data, pos)
            strings.append(data[pos + 2 : pos + 2 + n].decode())
            pos += 2 + n
        self.thread_name, self.process_name, self.reason = strings
        # The window's oldest slot: a start record (lo = 3) means the window begins when tracing
        # (re)started, which is where frames cut by the window start open (docs/trace-format.md).
        (window_offset,) = struct.unpack_from("<I", data, 12)
        (window_bytes,) = struct.unpack_from("<Q", data, 56)
        self.start_ts = None
        if window_bytes >= 8:
            with open(path, "rb") as f:
                f.seek(window_offset)
                (slot,) = struct.unpack("<Q", f.read(8))
            if slot & 0xFFFFFFFF == 3:
                self.start_ts = slot >> 32

    def window_start(self, first_counter):
        """Full counter of the start record (it precedes the first event by < 2^32 ticks)."""
        if self.start_ts is None:
            return first_counter
        return first_counter - ((first_counter - self.start_ts) & 0xFFFFFFFF)

    def wall_ns(self, counter):
        if counter <= self.reference:
            return self.wall - (self.reference - counter) * 10**9 // self.hz
        return self.wall + (counter - self.reference) * 10**9 // self.hz


def steps(hubble, path):
    """[(wall_ns, 'B', name) | (wall_ns, 'E', None)] for one file, balanced."""
    h = Header(path)
    events = []
    if h.hz <= 10**9:
        # ns = floor(counter * 10^9 / hz) loses no tick at <= 1 GHz: recover the counter from the
        # Nanoscope text (and check that it is recoverable).
        out = subprocess.run([hubble, "decode", path], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            ns, _, name = line.partition(":")
            counter = -(-int(ns) * h.hz // 10**9)
            assert int(ns) == counter * 10**9 // h.hz, "counter recovery"
            events.append((counter, None if name == "POP" else name))
    else:
        # A faster clock (the x86 time-stamp counter): the counters themselves, and the Nanoscope
        # text must be exactly their floor(counter * 10^9 / hz).
        ticks = subprocess.run([hubble, "decode", "--format", "ticks", path], check=True,
                               capture_output=True, text=True).stdout.splitlines()
        text = subprocess.run([hubble, "decode", path], check=True, capture_output=True,
                              text=True).stdout.splitlines()
        assert len(ticks) == len(text), "ticks and Nanoscope text differ in length"
        for t, n in zip(ticks, text):
            counter, _, name = t.partition(":")
            ns, _, name2 = n.partition(":")
            assert name == name2 and int(ns) == int(counter) * 10**9 // h.hz, f"{t} vs {n}"
            events.append((int(counter), None if name == "POP" else name))
    depth = lowest = 0
    for _, name in events:
        depth += 1 if name is not None else -1
        lowest = min(lowest, depth)
    first = h.window_start(events[0][0]) if events else h.reference
    result = [(h.wall_ns(first), "B", BEFORE)] * (-lowest)
    depth = -lowest
    last = h.reference
    for counter, name in events:
        if name is None:
            result.append((h.wall_ns(counter), "E", None))
            depth -= 1
        else:
            result.append((h.wall_ns(counter), "B", name))
            depth += 1
        last = counter
    end = h.wall_ns(max(h.reference, last))
    result += [(end, "E", None)] * depth
    return h, result


PRIMS = {"void": "V", "boolean": "Z", "byte": "B", "char": "C", "short": "S", "int": "I",
         "long": "J", "float": "F", "double": "D"}


def descriptor(java):
    java = java.strip()
    dims = 0
    while java.endswith("[]"):
        java = java[:-2].strip()
        dims += 1
    base = PRIMS.get(java) or "L" + java.replace(".", "/") + ";"
    return "[" * dims + base


def dmtrace_name(name):
    """How dmtracedump prints a method: 'class.method signature'."""
    if name == BEFORE:
        return "hubble.<entered-before-the-window> ()"
    head, args = name, None
    if "(" in name and name.endswith(")"):
        i = name.index("(")
        head, args = name[:i], name[i + 1 : -1]
    ret = None
    if " " in head:
        ret, head = head.rsplit(" ", 1)
    if "." in head.strip(".") and not head.startswith("."):
        cls, meth = head.rsplit(".", 1)
    else:
        cls, meth = "hubble", head
    if args is not None:
        sig = "(" + "".join(descriptor(a) for a in args.split(",") if a.strip()) + ")"
        if ret:
            sig += descriptor(ret)
    else:
        sig = "()" + (descriptor(ret) if ret else "")
    return f"{cls}.{meth} {sig}"
