"""What `hubble export` must write, computed independently of the exporters.

A version 4 file (many threads) gives one expectation per thread (`threads`).

Events come from `hubble decode` (the trace-format owners' decoder, Nanoscope text:
`<ns>:<name>` / `<ns>:POP`, ns = floor(counter * 1e9 / hz)); the header fields are read straight
from the file (docs/trace-format.md). From these, per thread: the exact timer counters
(counter = ceil(ns * hz / 1e9), exact for hz <= 1 GHz), frames cut by the window start opened at
the window start (the start record, else the first event) as "<entered before the window>", frames running at the flush closed at the
reference counter, and every time placed on the wall clock:
    wall(c) = wall_clock_ns - floor((reference - c) * 1e9 / hz).
"""

import re
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


class ThreadHeader:
    """What a version 4 file says about one thread, and the process fields it shares."""

    def __init__(self, process, tid, thread_name):
        self.hz, self.reference, self.wall = process.hz, process.reference, process.wall
        self.pid, self.process_name = process.pid, process.process_name
        self.tid, self.thread_name = tid, thread_name

    def wall_ns(self, counter):
        return Header.wall_ns(self, counter)


class ProcessHeader:
    """A version 4 file's header and thread sections (docs/trace-format.md §5, "Version 4"),
    read here from the bytes: the fields the checks need, each thread's tid, name and runs."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        if data[:8] != b"HUBBLTRC" or struct.unpack_from("<H", data, 8)[0] != 4:
            raise ValueError(f"{path}: not a version 4 hubble trace")
        metadata, threads = data[11], struct.unpack_from("<I", data, 12)[0]
        (self.hz, self.reference, self.wall) = struct.unpack_from("<QQQ", data, 16)
        (self.pid, symbols) = struct.unpack_from("<II", data, 40)
        pos = 48

        def string():
            nonlocal pos
            (n,) = struct.unpack_from("<H", data, pos)
            pos += 2 + n
            return data[pos - n : pos].decode()

        self.process_name = string()
        self.reason = string()
        for _ in range(symbols):
            pos += 8
            string()
        for _ in range(2 * metadata):
            string()
        self.threads = []
        for _ in range(threads):
            (tid, runs, anchors) = struct.unpack_from("<III", data, pos)
            pos += 12
            name = string()
            pos += 16 * anchors
            seqs, starts = [], []
            for _ in range(runs):
                (first, blocks, _ticket, _counter, slots) = struct.unpack_from("<IIQQQ", data, pos)
                pos += 32
                # A run a thread went on in behind a start record at the previous flush decodes
                # from that record, its window's start (a slot whose low word is 3: no method
                # pointer, wide entry or task payload has that low word).
                start = None
                for k in range(slots):
                    (slot,) = struct.unpack_from("<Q", data, pos + 8 * k)
                    if slot & 0xFFFFFFFF == 3:
                        start = slot >> 32
                pos += 8 * slots
                seqs.append((first, first + blocks - 1))
                starts.append(start)
            header = ThreadHeader(self, tid, name)
            header.run_starts = starts
            self.threads.append((header, seqs))


RUN = re.compile(r"^thread (\d+) (.*), run (\d+) of (\d+), seq (\d+)\.\.(\d+)$")


def is_v4(path):
    with open(path, "rb") as f:
        head = f.read(10)
    return head[:8] == b"HUBBLTRC" and struct.unpack_from("<H", head, 8)[0] == 4


def threads(hubble, path):
    """[(header, steps)] per thread of a file of any version: one for versions 1-3 (`steps`),
    one per thread section for version 4. A version 4 thread's runs come from `hubble decode
    --format ticks` (a `thread <tid> <name>, run k of n, seq a..b` line before each, checked
    against the file's own sections); each run is balanced on its own: frames cut at its start
    open at its first event, frames open at its end close at the flush (the thread's newest run)
    or at its newest event (an older one, which is placed on the wall clock through that event's
    counter L: wall(L) - floor((L - c) * 1e9 / hz), docs/trace-format.md §5)."""
    if not is_v4(path):
        return [steps(hubble, path)]
    p = ProcessHeader(path)
    ticks = subprocess.run([hubble, "decode", "--format", "ticks", path], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    text = subprocess.run([hubble, "decode", path], check=True, capture_output=True,
                          text=True).stdout.splitlines()
    assert len(ticks) == len(text), "ticks and Nanoscope text differ in length"
    runs = []  # (tid, name, k, n, first, last, events)
    for t, n in zip(ticks, text):
        m = RUN.match(t)
        if m:
            assert t == n, f"run headers differ: {t} / {n}"
            tid, name, k, count, first, last = m.groups()
            runs.append((int(tid), name, int(k), int(count), int(first), int(last), []))
        elif t.startswith("records lost before this run"):
            assert t == n
        else:
            counter, _, name = t.partition(":")
            ns, _, name2 = n.partition(":")
            assert name == name2 and int(ns) == int(counter) * 10**9 // p.hz, f"{t} vs {n}"
            runs[-1][6].append((int(counter), None if name == "POP" else name))
    out = []
    for h, seqs in p.threads:
        mine = [r for r in runs if r[0] == h.tid]
        assert [(r[4], r[5]) for r in mine] == seqs, f"{path}: tid {h.tid}: runs {mine} vs {seqs}"
        assert all(r[1] == h.thread_name and r[3] == len(seqs) for r in mine)
        result = []
        for k, (_, _, _, _, _, _, events) in enumerate(mine):
            if not events:
                # A run kept only to be decoded from its start record, with nothing after it:
                # the thread wrote nothing since the previous flush, and no writer shows it.
                continue
            newest = k + 1 == len(mine)
            last = events[-1][0]

            def wall(c, newest=newest, last=last):
                if newest:
                    return h.wall_ns(c)
                return h.wall_ns(last) - (last - c) * 10**9 // h.hz

            depth = lowest = 0
            for _, name in events:
                depth += 1 if name is not None else -1
                lowest = min(lowest, depth)
            # Frames cut at the window start open there: at the run's start record (its full
            # counter precedes the first event by less than 2^32 ticks), else the first event.
            opened = events[0][0]
            if h.run_starts[k] is not None:
                opened -= (opened - h.run_starts[k]) & 0xFFFFFFFF
            result += [(wall(opened), "B", BEFORE)] * (-lowest)
            depth = -lowest
            for counter, name in events:
                result.append((wall(counter), "E" if name is None else "B", name))
                depth += -1 if name is None else 1
            end = max(h.reference, last) if newest else last
            result += [(wall(end), "E", None)] * depth
        out.append((h, result))
    return out


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
