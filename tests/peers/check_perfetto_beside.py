#!/usr/bin/env python3
"""`hubble export --format perfetto --with SYSTEM`: Hubble's slices beside a system trace.

usage: check_perfetto_beside.py system HUBBLE SYSTEM.perfetto IN.hubble... [--perturb NS]
       check_perfetto_beside.py check HUBBLE SYSTEM.perfetto MERGED.perfetto IN.hubble...

`system` writes, with the `perfetto` wheel's protos, a system trace of the device the inputs came
from, as traced lays one out: the service's clock snapshots (BOOTTIME, MONOTONIC, MONOTONIC_RAW
and REALTIME, each offset from the others by a nonzero amount, from before the inputs' first step
to after their last), a ProcessTree naming every input's process and thread (and two of the
system's), ftrace sched_switch bundles switching the inputs' threads in and out, and an app's
TrackEvent sequence (its own incremental clock 64, a process and a thread track whose uuids are
the ones Hubble's export uses on its own, a slice). Its sequence ids are 1, 2, 3 and 7, which
Hubble's export uses on its own too. `--perturb NS` moves REALTIME in every snapshot by NS: the
trace then says the clocks are not what the check expects, and the check must fail.

`check` reads MERGED with Perfetto's schema and requires: it begins with SYSTEM's bytes, then
Hubble's packets, none on a sequence of SYSTEM's, none naming a track uuid of SYSTEM's, none
setting the trace clock, every field known to the schema; timestamps resolved as trace
processor's ClockSynchronizer does (ClockSnapshot series per set of clocks, sequence-scoped
clocks 64-127, incremental clocks, the shortest path of snapshots, in each hop the latest
snapshot not after the timestamp, else the first) put every step of every input's thread on the
trace clock (BOOTTIME) at exactly the BOOTTIME of its wall-clock time (as the `system` command
laid the clocks out, not as the snapshots say), and converted back to REALTIME through the
trace's snapshots, at exactly its wall-clock time, with its kind and name; each thread's slices
are on one thread track whose ThreadDescriptor pid and tid are the thread's, and a thread of
that process in SYSTEM's ProcessTree, switched in by its sched_switch events; that track's
parent is a process track of the thread's pid. Exits 1 with a message on the first difference.
"""

import bisect
import collections
import sys

from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from hubble_expect import threads as expected_threads

REALTIME = pb.BuiltinClock.Value("BUILTIN_CLOCK_REALTIME")
MONOTONIC = pb.BuiltinClock.Value("BUILTIN_CLOCK_MONOTONIC")
MONOTONIC_RAW = pb.BuiltinClock.Value("BUILTIN_CLOCK_MONOTONIC_RAW")
BOOTTIME = pb.BuiltinClock.Value("BUILTIN_CLOCK_BOOTTIME")
CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE

# BOOTTIME at the inputs' first step: the device has been up 1 h 23 min and a bit. MONOTONIC
# stops in suspend, MONOTONIC_RAW drifts from it: all three differ from each other and from
# REALTIME by amounts no rounding makes equal.
BOOT_AT_FIRST_STEP = 4_980_123_456_789
SUSPENDED_NS = 3_210_987_654
RAW_BEHIND_NS = 17_171
# Hubble's own track uuids (rust/export/src/perfetto.rs, process_uuid and thread_uuid), which the
# system trace takes so that the export must move its own.
HUBBLE_PROCESS_UUID = 0x4855_4242_0000_0000
HUBBLE_THREAD_UUID = 0x4855_4254 << 32
APP_SEQUENCE = 7


def fail(msg):
    print(f"check_perfetto_beside: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def inputs_of(hubble, paths):
    """[(path, header, steps)] per thread of the inputs (hubble_expect's independent reading)."""
    return [(p, h, steps) for p in paths for h, steps in expected_threads(hubble, p)]


def realtime_offset(threads):
    """REALTIME - BOOTTIME on the device, from the inputs' first step."""
    first = min(s[0][0] for _, _, s in threads if s)
    return first - BOOT_AT_FIRST_STEP


def unknown_fields(msg, path=""):
    for field in UnknownFieldSet(msg):
        yield f"{path}#{field.field_number}"
    for desc, value in msg.ListFields():
        if desc.type == desc.TYPE_MESSAGE:
            for item in (value if desc.is_repeated else [value]):
                yield from unknown_fields(item, f"{path}.{desc.name}")


# --- system ---------------------------------------------------------------------------------


def write_system(hubble, out, paths, perturb):
    threads = inputs_of(hubble, paths)
    offset = realtime_offset(threads)
    first = min(s[0][0] for _, _, s in threads if s) - offset
    last = max(s[-1][0] for _, _, s in threads if s) - offset
    start, end = first - 1_000_000_000, last + 1_000_000_000
    trace = pb.Trace()

    def packet(seq, ts=None):
        p = trace.packet.add()
        p.trusted_packet_sequence_id = seq
        p.trusted_uid = 9999 if seq == 1 else 10123
        if ts is not None:
            p.timestamp = ts
        return p

    def snapshot(boot):
        p = packet(1, boot)
        for clock, value in [(BOOTTIME, boot), (MONOTONIC, boot - SUSPENDED_NS),
                             (MONOTONIC_RAW, boot - SUSPENDED_NS - RAW_BEHIND_NS),
                             (REALTIME, boot + offset + perturb)]:
            c = p.clock_snapshot.clocks.add()
            c.clock_id, c.timestamp = clock, value

    snapshot(start)
    # The service's config packet, and others the export must copy without reading.
    packet(1, start).trace_config.buffers.add().size_kb = 65536
    tree = packet(2, start + 1000).process_tree
    pids = {}
    for _, h, _ in threads:
        pids.setdefault(h.pid, h.process_name)
        t = tree.threads.add()
        t.tid, t.tgid, t.name = h.tid, h.pid, h.thread_name[:15]
    for pid, name in [(1, "/system/bin/init"), (1000, "system_server")] + sorted(pids.items()):
        p = tree.processes.add()
        p.pid, p.ppid = pid, 0 if pid == 1 else 1
        p.cmdline.append(name)
    t = tree.threads.add()
    t.tid, t.tgid, t.name = 1017, 1000, "binder:1000_2"
    # The inputs' threads take turns on CPU 0 across the whole trace, with binder in between.
    bundle = packet(3).ftrace_events
    bundle.cpu = 0
    ring = [(h.tid, h.thread_name[:15]) for _, h, _ in threads] + [(1017, "binder:1000_2")]
    step = max((end - start) // (8 * len(ring)), 1)
    prev = (0, "swapper/0")
    for k, ts in enumerate(range(start + step, end, step)):
        nxt = ring[k % len(ring)]
        e = bundle.event.add()
        e.timestamp, e.pid = ts, prev[0]
        s = e.sched_switch
        s.prev_comm, s.prev_pid, s.prev_prio, s.prev_state = prev[1], prev[0], 120, 1
        s.next_comm, s.next_pid, s.next_prio = nxt[1], nxt[0], 120
        prev = nxt
    # An app's SDK sequence: its own sequence clock 64, tracks with Hubble's uuids.
    main = threads[0][1]
    p = packet(APP_SEQUENCE)
    p.sequence_flags = CLEARED
    p.first_packet_on_sequence = True
    for clock, value, incremental in [(BOOTTIME, first, False), (64, first, True)]:
        c = p.clock_snapshot.clocks.add()
        c.clock_id, c.timestamp, c.is_incremental = clock, value, incremental
    p = packet(APP_SEQUENCE)
    p.sequence_flags = NEEDS
    p.trace_packet_defaults.timestamp_clock_id = 64
    td = p.track_descriptor
    td.uuid = HUBBLE_PROCESS_UUID | main.pid
    td.process.pid, td.process.process_name = main.pid, main.process_name
    p = packet(APP_SEQUENCE)
    p.sequence_flags = NEEDS
    td = p.track_descriptor
    td.uuid, td.parent_uuid = HUBBLE_THREAD_UUID | main.tid, HUBBLE_PROCESS_UUID | main.pid
    td.thread.pid, td.thread.tid, td.thread.thread_name = main.pid, main.tid, main.thread_name
    for delta, kind in [(1_000, pb.TrackEvent.TYPE_SLICE_BEGIN), (2_000_000, pb.TrackEvent.TYPE_SLICE_END)]:
        p = packet(APP_SEQUENCE, delta)
        p.sequence_flags = NEEDS
        p.track_event.type = kind
        p.track_event.track_uuid = HUBBLE_THREAD_UUID | main.tid
        if kind == pb.TrackEvent.TYPE_SLICE_BEGIN:
            p.track_event.name = "Choreographer#doFrame"
    for k in range(1, 5):
        snapshot(start + (end - start) * k // 4)
    with open(out, "wb") as f:
        f.write(trace.SerializeToString())
    print(f"check_perfetto_beside: wrote {out}: {len(trace.packet)} packets, "
          f"REALTIME - BOOTTIME = {offset + perturb} ns")


# --- check ----------------------------------------------------------------------------------


class Clocks:
    """Trace processor's ClockSynchronizer (src/trace_processor/util/clock_synchronizer.cc):
    a clock is (id, sequence) for ids 64-127, (id, 0) otherwise."""

    def __init__(self):
        self.domains = {}  # clock -> {"incremental", "last", "series": {hash: [(ts, snapshot)]}}
        self.edges = set()  # (src, dst, hash)
        self.non_monotonic = set()
        self.snapshots = 0

    def add(self, clocks):
        """clocks: [(clock, ts, incremental)] of one snapshot."""
        sid = self.snapshots
        self.snapshots += 1
        key = tuple(c for c, _, _ in clocks)
        for clock, ts, incremental in clocks:
            d = self.domains.setdefault(clock, {"incremental": incremental, "last": 0, "series": {}})
            if d["incremental"] != incremental:
                fail(f"clock {clock} changes is_incremental")
            d["last"] = ts
            series = d["series"].setdefault(key, [])
            if series and ts < series[-1][0]:
                if clock == (BOOTTIME, 0):
                    fail("the trace clock goes backwards between snapshots")
                self.non_monotonic.add(clock)
                self.edges = {e for e in self.edges if e[0] != clock}
            series.append((ts, sid))
        for a, _, _ in clocks:
            for b, _, _ in clocks:
                if a != b and a not in self.non_monotonic:
                    self.edges.add((a, b, key))

    def to_ns(self, clock, ts):
        d = self.domains.get(clock)
        if d is None:
            return None
        if not d["incremental"]:
            return ts
        d["last"] += ts - (1 << 64) if ts >= 1 << 63 else ts
        return d["last"]

    def path(self, src, dst):
        queue = collections.deque([(src, [])])
        while queue:
            clock, hops = queue.popleft()
            if len(hops) >= 4:
                continue
            for e in sorted((e for e in self.edges if e[0] == clock), key=lambda e: (e[1], e[2])):
                if e[1] == dst:
                    return hops + [e]
                queue.append((e[1], hops + [e]))
        return None

    def convert(self, src, ns, dst):
        if src == dst:
            return ns
        hops = self.path(src, dst)
        if hops is None:
            return None
        for a, b, key in hops:
            series = self.domains[a]["series"][key]
            k = max(bisect.bisect_right([t for t, _ in series], ns) - 1, 0)
            t, sid = series[k]
            other = {s: v for v, s in self.domains[b]["series"][key]}
            ns += other[sid] - t
        return ns


def check(hubble, system_path, merged_path, paths):
    with open(system_path, "rb") as f:
        system_bytes = f.read()
    with open(merged_path, "rb") as f:
        merged_bytes = f.read()
    if not merged_bytes.startswith(system_bytes):
        fail(f"{merged_path} does not begin with {system_path}'s bytes")
    system = pb.Trace()
    system.ParseFromString(system_bytes)
    merged = pb.Trace()
    merged.ParseFromString(merged_bytes)
    n_system = len(system.packet)
    ours = list(merged.packet)[n_system:]
    if not ours:
        fail("no packets after the system trace's")

    # What the system trace holds.
    system_seqs = {p.trusted_packet_sequence_id for p in system.packet}
    system_uuids = set()
    system_threads = {}  # tid -> pid
    system_processes = set()
    switched_in = set()
    for p in system.packet:
        if p.HasField("track_descriptor"):
            system_uuids |= {p.track_descriptor.uuid, p.track_descriptor.parent_uuid} - {0}
            if p.track_descriptor.HasField("thread"):
                th = p.track_descriptor.thread
                system_threads[th.tid] = th.pid
        if p.HasField("track_event") and p.track_event.HasField("track_uuid"):
            system_uuids.add(p.track_event.track_uuid)
        if p.HasField("process_tree"):
            system_processes |= {q.pid for q in p.process_tree.processes}
            for t in p.process_tree.threads:
                if system_threads.get(t.tid, t.tgid) != t.tgid:
                    fail(f"the system trace gives tid {t.tid} two processes")
                system_threads[t.tid] = t.tgid
        if p.HasField("ftrace_events"):
            switched_in |= {e.sched_switch.next_pid for e in p.ftrace_events.event
                            if e.HasField("sched_switch")}

    # Hubble's packets: on sequences and tracks of their own, the trace clock left alone.
    for i, p in enumerate(ours):
        unknown = list(unknown_fields(p))
        if unknown:
            fail(f"Hubble packet {i}: fields Perfetto's schema does not know: {unknown[:5]}")
        if p.HasField("trusted_packet_sequence_id") and p.trusted_packet_sequence_id in system_seqs:
            fail(f"Hubble packet {i} is on the system trace's sequence {p.trusted_packet_sequence_id}")
        if p.HasField("clock_snapshot"):
            if p.clock_snapshot.HasField("primary_trace_clock"):
                fail(f"Hubble packet {i} sets the trace clock")
            if not p.HasField("trusted_packet_sequence_id"):
                fail(f"Hubble packet {i}: a clock snapshot outside a sequence")
        if p.HasField("track_descriptor"):
            for u in (p.track_descriptor.uuid, p.track_descriptor.parent_uuid):
                if u in system_uuids:
                    fail(f"Hubble packet {i} takes the system trace's track uuid {u:#x}")

    # Every packet in file order through trace processor's rules.
    clocks = Clocks()
    seqs = {}
    processes, tracks = {}, {}
    events = collections.defaultdict(list)  # sequence -> [(track, boot ns, kind, name)]
    for i, p in enumerate(merged.packet):
        is_ours = i >= n_system
        sid = p.trusted_packet_sequence_id
        st = seqs.setdefault(sid, {"defaults": None, "names": {}, "cleared": False})
        if p.sequence_flags & CLEARED:
            st.update(defaults=None, names={}, cleared=True)
        if p.HasField("trace_packet_defaults"):
            st["defaults"] = p.trace_packet_defaults
        for n in p.interned_data.event_names:
            st["names"][n.iid] = n.name
        if p.HasField("clock_snapshot"):
            clocks.add([((c.clock_id, sid if 64 <= c.clock_id < 128 else 0), c.timestamp,
                         c.is_incremental) for c in p.clock_snapshot.clocks])
            continue
        if p.HasField("track_descriptor") and is_ours:
            td = p.track_descriptor
            (tracks if td.HasField("thread") else processes)[td.uuid] = (td, sid)
        if not p.HasField("timestamp"):
            continue
        d = st["defaults"]
        clock = (p.timestamp_clock_id if p.HasField("timestamp_clock_id")
                 else d.timestamp_clock_id if d is not None and d.HasField("timestamp_clock_id")
                 else BOOTTIME)
        clock = (clock, sid if 64 <= clock < 128 else 0)
        ns = clocks.to_ns(clock, p.timestamp)
        boot = None if ns is None else clocks.convert(clock, ns, (BOOTTIME, 0))
        if not is_ours or not p.HasField("track_event"):
            continue
        if boot is None:
            fail(f"Hubble packet {i - n_system}: clock {clock} does not convert to BOOTTIME")
        if not st["cleared"] or not p.sequence_flags & NEEDS:
            fail(f"sequence {sid}: event before its incremental state was cleared / flag missing")
        te = p.track_event
        track = te.track_uuid if te.HasField("track_uuid") else d.track_event_defaults.track_uuid
        if te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            if te.name_iid not in st["names"]:
                fail(f"sequence {sid}: name iid {te.name_iid} not interned")
            events[sid].append((track, boot, "B", st["names"][te.name_iid]))
        elif te.type == pb.TrackEvent.TYPE_SLICE_END:
            events[sid].append((track, boot, "E", None))
        else:
            fail(f"unexpected track event type {te.type}")

    # Each input thread: its steps on one thread track, at their BOOTTIME, on the system's thread.
    expected = inputs_of(hubble, paths)
    offset = realtime_offset(expected)
    if len(tracks) != len(expected):
        fail(f"{len(tracks)} Hubble thread tracks for {len(expected)} threads in the inputs")
    total = 0
    for path, h, want in expected:
        mine = [u for u, (td, _) in tracks.items()
                if (td.thread.pid, td.thread.tid, td.thread.thread_name) == (h.pid, h.tid, h.thread_name)]
        if len(mine) != 1:
            fail(f"{path}: {len(mine)} thread tracks for pid {h.pid} tid {h.tid} '{h.thread_name}'")
        uuid = mine[0]
        td, _ = tracks[uuid]
        if system_threads.get(h.tid) != h.pid:
            fail(f"{path}: the system trace has no thread {h.tid} of process {h.pid}")
        if h.tid not in switched_in or h.pid not in system_processes:
            fail(f"{path}: the system trace never runs thread {h.tid} / names process {h.pid}")
        parent = processes.get(td.parent_uuid)
        if parent is None or parent[0].process.pid != h.pid:
            fail(f"{path}: thread track's parent is not a process track of pid {h.pid}")
        got = [e for sid in sorted(events) for e in events[sid] if e[0] == uuid]
        on_track = [sid for sid in events if any(e[0] == uuid for e in events[sid])]
        if any(e[0] != uuid for sid in on_track for e in events[sid]):
            fail(f"{path}: a sequence of this thread writes on another track")
        if len(got) != len(want):
            fail(f"{path}: {len(got)} steps in the merged trace, {len(want)} expected")
        for k, ((_, boot, kind, name), (wall, wkind, wname)) in enumerate(zip(got, want)):
            if (kind, name) != (wkind, wname):
                fail(f"{path}: step {k}: {kind} {name!r}, expected {wkind} {wname!r}")
            if boot != wall - offset:
                fail(f"{path}: step {k} ({kind} {name!r}) at BOOTTIME {boot}, expected "
                     f"{wall - offset} (wall {wall}): {boot - (wall - offset):+} ns")
            back = clocks.convert((BOOTTIME, 0), boot, (REALTIME, 0))
            if back != wall:
                fail(f"{path}: step {k} back on REALTIME is {back}, the file says {wall}")
        total += len(want)
    print(f"check_perfetto_beside: OK: {n_system} system packets then {len(ours)} of Hubble's, "
          f"{len(expected)} thread(s) on the system trace's threads, {total} slice begin/end "
          f"events at their wall-clock time (REALTIME - BOOTTIME = {offset} ns)")


def main():
    args = sys.argv[1:]
    if args[:1] == ["system"]:
        perturb = 0
        if "--perturb" in args:
            k = args.index("--perturb")
            perturb = int(args[k + 1])
            del args[k : k + 2]
        write_system(args[1], args[2], args[3:], perturb)
    elif args[:1] == ["check"]:
        check(args[1], args[2], args[3], args[4:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
