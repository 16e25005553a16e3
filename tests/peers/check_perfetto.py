#!/usr/bin/env python3
"""Decodes a `hubble export --format perfetto` file with Perfetto's own schema (the Python
descriptors of the `perfetto` wheel) and checks it slice for slice against the inputs.

usage: check_perfetto.py HUBBLE_BINARY OUT.perfetto IN.hubble...
Checks: every packet parses as perfetto.protos.TracePacket; one sequence-less clock snapshot
makes BUILTIN_CLOCK_REALTIME the trace clock; one process track per pid (pid, name) and one
thread track per thread (pid, tid, name, parent = its process: one per file of versions 1-3, one
per section of a version 4 file); each thread's sequence starts
with SEQ_INCREMENTAL_STATE_CLEARED and defaults (its track); every packet that needs
incremental state says so (SEQ_NEEDS_INCREMENTAL_STATE) and comes after the clear; every
interned name is defined before use; the slice begin/end events of the sequences on a thread's
track (one per file of versions 1-3; one per run of a version 4 thread, in sequence order) equal
the expected steps (time, kind, name) exactly. Exits 1 with a message on the first difference.

Timestamps are resolved as Perfetto's trace processor does (ProtoTraceReader and
ClockSynchronizer): a packet's clock is its timestamp_clock_id, else its sequence's
TracePacketDefaults.timestamp_clock_id, else the trace clock. Ids 64-127 are clocks scoped to
the sequence, defined by a ClockSnapshot on that sequence. For an incremental clock
(Clock.is_incremental) each timestamp is a signed delta from the last value of that clock on the
sequence; a snapshot sets that value. A sequence clock converts to REALTIME through the snapshot
pairing the two whose value on the sequence clock is the latest not after the timestamp (else
the first): realtime = t + (snapshot REALTIME - snapshot clock). A clock snapshot packet's own
timestamp is not read. Anything else (other clocks, unit multipliers, multi-hop conversions)
fails the check.
"""

import bisect
import sys

from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from hubble_expect import threads as expected_threads

REALTIME = pb.BuiltinClock.Value("BUILTIN_CLOCK_REALTIME")


def fail(msg):
    print(f"check_perfetto: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def unknown_fields(msg, path=""):
    """Field numbers the schema does not define, anywhere in msg."""
    for field in UnknownFieldSet(msg):
        yield f"{path}#{field.field_number}"
    for desc, value in msg.ListFields():
        if desc.type == desc.TYPE_MESSAGE:
            items = value if desc.is_repeated else [value]
            for item in items:
                yield from unknown_fields(item, f"{path}.{desc.name}")


def main():
    hubble, out, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    trace = pb.Trace()
    with open(out, "rb") as f:
        data = f.read()
    trace.ParseFromString(data)
    packets = list(trace.packet)
    for i, p in enumerate(packets):
        unknown = list(unknown_fields(p))
        if unknown:
            fail(f"packet {i}: fields Perfetto's schema does not know: {unknown[:5]}")
    global_snapshots = [p for p in packets
                        if p.HasField("clock_snapshot") and not p.HasField("trusted_packet_sequence_id")]
    if (len(global_snapshots) != 1
            or global_snapshots[0].clock_snapshot.primary_trace_clock != REALTIME):
        fail("expected one sequence-less clock snapshot with primary_trace_clock = REALTIME")
    processes, threads = {}, {}
    for p in packets:
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            if td.HasField("process"):
                processes[td.uuid] = td
            if td.HasField("thread"):
                threads[td.uuid] = (td, p)
    seqs = {}  # sequence id -> state
    clocks = {}  # (sequence id, clock id) -> sequence-scoped clock domain
    for i, p in enumerate(packets):
        if not p.HasField("trusted_packet_sequence_id"):
            if p.HasField("track_event") or p.HasField("interned_data") or p.sequence_flags:
                fail(f"packet {i}: track event, interned data or sequence flags without a sequence")
            continue
        sid = p.trusted_packet_sequence_id
        st = seqs.setdefault(sid, {"names": {}, "events": [], "defaults": None, "cleared": False})
        # The order of ProtoTraceReader::ParsePacket: clear, defaults, interned data, clocks.
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            st["cleared"] = True
            st["names"] = {}
            st["defaults"] = None
        if p.HasField("trace_packet_defaults"):
            st["defaults"] = p.trace_packet_defaults
        needs = p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
        if p.HasField("interned_data"):
            if not st["cleared"] or not (needs or p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED):
                fail(f"sequence {sid}: interned data before the clear / flag missing")
            for n in p.interned_data.event_names:
                st["names"][n.iid] = n.name
        if p.HasField("clock_snapshot"):
            snap = p.clock_snapshot
            values = {c.clock_id: c for c in snap.clocks}
            if len(values) != len(snap.clocks):
                fail(f"sequence {sid}: a clock twice in one snapshot")
            for c in snap.clocks:
                if c.unit_multiplier_ns not in (0, 1):
                    fail(f"sequence {sid}: clock {c.clock_id} has a unit multiplier")
                if not 64 <= c.clock_id < 128:
                    if c.is_incremental:
                        fail(f"sequence {sid}: global clock {c.clock_id} is incremental")
                    continue
                if REALTIME not in values:
                    fail(f"sequence {sid}: clock {c.clock_id} not paired with REALTIME")
                dom = clocks.setdefault((sid, c.clock_id),
                                        {"incremental": c.is_incremental, "last": 0, "snaps": []})
                if dom["incremental"] != c.is_incremental:
                    fail(f"sequence {sid}: clock {c.clock_id} changes is_incremental")
                dom["last"] = c.timestamp
                dom["snaps"].append((c.timestamp, values[REALTIME].timestamp))
                if [t for t, _ in dom["snaps"]] != sorted(t for t, _ in dom["snaps"]):
                    fail(f"sequence {sid}: clock {c.clock_id} snapshots go backwards")
            continue  # the trace processor reads nothing else of a snapshot packet
        ts = None
        if p.HasField("timestamp"):
            d = st["defaults"]
            clock = (p.timestamp_clock_id if p.HasField("timestamp_clock_id")
                     else d.timestamp_clock_id if d is not None and d.HasField("timestamp_clock_id")
                     else REALTIME)
            if clock == REALTIME:
                ts = p.timestamp
            elif 64 <= clock < 128:
                dom = clocks.get((sid, clock))
                if dom is None:
                    fail(f"sequence {sid}: clock {clock} used before its snapshot")
                if not needs:
                    fail(f"sequence {sid}: sequence clock without SEQ_NEEDS_INCREMENTAL_STATE")
                if dom["incremental"]:
                    delta = p.timestamp - (1 << 64) if p.timestamp >= 1 << 63 else p.timestamp
                    dom["last"] += delta
                    t = dom["last"]
                else:
                    t = p.timestamp
                times = [c for c, _ in dom["snaps"]]
                k = max(bisect.bisect_right(times, t) - 1, 0)
                ts = t + dom["snaps"][k][1] - dom["snaps"][k][0]
            else:
                fail(f"sequence {sid}: unsupported clock {clock}")
        if p.HasField("track_event"):
            if not st["cleared"] or not needs:
                fail(f"sequence {sid}: event before incremental state was cleared / flag missing")
            if ts is None:
                fail(f"sequence {sid}: track event without a timestamp")
            d = st["defaults"]
            te = p.track_event
            if te.HasField("track_uuid"):
                track = te.track_uuid
            elif d is not None and d.HasField("track_event_defaults"):
                track = d.track_event_defaults.track_uuid
            else:
                fail(f"sequence {sid}: track event without a track")
            if te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                if te.HasField("name_iid"):
                    if te.name_iid not in st["names"]:
                        fail(f"sequence {sid}: name iid {te.name_iid} used before it is interned")
                    name = st["names"][te.name_iid]
                else:
                    name = te.name
                st["events"].append((track, ts, "B", name))
            elif te.type == pb.TrackEvent.TYPE_SLICE_END:
                st["events"].append((track, ts, "E", None))
            else:
                fail(f"unexpected track event type {te.type}")
    # One expectation per thread: a file of versions 1-3 is one, a version 4 file one per section,
    # whose runs are sequences of their own on the thread's one track.
    expected = [(p, t) for p in inputs for t in expected_threads(hubble, p)]
    if len(threads) != len(expected):
        fail(f"{len(threads)} thread tracks for {len(expected)} threads in the inputs")
    total = 0
    for path, (h, want) in expected:
        matches = [(u, td, p) for u, (td, p) in threads.items()
                   if td.thread.tid == h.tid and td.thread.pid == h.pid and td.thread.thread_name == h.thread_name]
        if not matches:
            fail(f"{path}: no thread track for pid {h.pid} tid {h.tid} '{h.thread_name}'")
        found = False
        for uuid, td, p in matches:
            proc = processes.get(td.parent_uuid)
            if proc is None or proc.process.pid != h.pid or proc.process.process_name != h.process_name:
                fail(f"{path}: thread track's parent is not process {h.pid} '{h.process_name}'")
            st = seqs.get(p.trusted_packet_sequence_id)
            if st is None or st["defaults"] is None or st["defaults"].track_event_defaults.track_uuid != uuid:
                fail(f"{path}: sequence defaults do not point at the thread track")
            on_track = [st2 for _, st2 in sorted(seqs.items())
                        if st2["defaults"] is not None
                        and st2["defaults"].track_event_defaults.track_uuid == uuid]
            events = [e for st2 in on_track for e in st2["events"]]
            got = [(ts, kind, name) for (track, ts, kind, name) in events]
            if any(track != uuid for (track, *_rest) in events):
                fail(f"{path}: events on a foreign track")
            if got == want:
                found = True
                break
            for i, (g, w) in enumerate(zip(got, want)):
                if g != w:
                    fail(f"{path}: step {i}: perfetto has {g}, expected {w}")
            fail(f"{path}: {len(got)} steps in perfetto, {len(want)} expected")
        if not found:
            fail(f"{path}: not matched")
        total += len(want)
    print(f"check_perfetto: OK: {len(packets)} packets, {len(expected)} thread(s), {total} slice "
          f"begin/end events identical to the decoder's")


if __name__ == "__main__":
    main()
