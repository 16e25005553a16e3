#!/usr/bin/env python3
"""Decodes a `hubble export --format perfetto` file with Perfetto's own schema (the Python
descriptors of the `perfetto` wheel) and checks it slice for slice against the inputs.

usage: check_perfetto.py HUBBLE_BINARY OUT.perfetto IN.hubble...
Checks: every packet parses as perfetto.protos.TracePacket; a clock snapshot makes
BUILTIN_CLOCK_REALTIME the trace clock; one process track per pid (pid, name) and one thread
track per input (pid, tid, name, parent = its process); each thread's sequence starts with
SEQ_INCREMENTAL_STATE_CLEARED and defaults (REALTIME clock, its track); every interned name is
defined before use; the sequence's slice begin/end events equal the expected steps (time, kind,
name) exactly. Exits 1 with a message on the first difference.
"""

import sys

from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from hubble_expect import steps

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
    snapshots = [p for p in packets if p.HasField("clock_snapshot")]
    if len(snapshots) != 1 or snapshots[0].clock_snapshot.primary_trace_clock != REALTIME:
        fail("expected one clock snapshot with primary_trace_clock = REALTIME")
    processes, threads = {}, {}
    for p in packets:
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            if td.HasField("process"):
                processes[td.uuid] = td
            if td.HasField("thread"):
                threads[td.uuid] = (td, p)
    seqs = {}  # sequence id -> state
    for p in packets:
        if p.HasField("track_descriptor") or p.HasField("track_event"):
            if not p.HasField("trusted_packet_sequence_id"):
                if p.HasField("track_event"):
                    fail("track event without a sequence")
                continue
            sid = p.trusted_packet_sequence_id
            st = seqs.setdefault(sid, {"names": {}, "events": [], "defaults": None, "cleared": False})
            if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
                st["cleared"] = True
                st["names"] = {}
            if p.HasField("trace_packet_defaults"):
                st["defaults"] = p.trace_packet_defaults
            for n in p.interned_data.event_names:
                st["names"][n.iid] = n.name
            if p.HasField("track_event"):
                if not st["cleared"] or not (p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE):
                    fail(f"sequence {sid}: event before incremental state was cleared / flag missing")
                d = st["defaults"]
                clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else d.timestamp_clock_id
                if clock != REALTIME:
                    fail(f"sequence {sid}: clock {clock}, want REALTIME")
                te = p.track_event
                track = te.track_uuid if te.HasField("track_uuid") else d.track_event_defaults.track_uuid
                if te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                    if te.HasField("name_iid"):
                        if te.name_iid not in st["names"]:
                            fail(f"sequence {sid}: name iid {te.name_iid} used before it is interned")
                        name = st["names"][te.name_iid]
                    else:
                        name = te.name
                    st["events"].append((track, p.timestamp, "B", name))
                elif te.type == pb.TrackEvent.TYPE_SLICE_END:
                    st["events"].append((track, p.timestamp, "E", None))
                else:
                    fail(f"unexpected track event type {te.type}")
    if len(threads) != len(inputs):
        fail(f"{len(threads)} thread tracks for {len(inputs)} inputs")
    total = 0
    for path in inputs:
        h, want = steps(hubble, path)
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
            if st is None or st["defaults"].track_event_defaults.track_uuid != uuid:
                fail(f"{path}: sequence defaults do not point at the thread track")
            got = [(ts, kind, name) for (track, ts, kind, name) in st["events"]]
            if any(track != uuid for (track, *_rest) in st["events"]):
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
    print(f"check_perfetto: OK: {len(packets)} packets, {len(inputs)} thread(s), {total} slice "
          f"begin/end events identical to the decoder's")


if __name__ == "__main__":
    main()
