#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Peer tools read what `hubble export` writes:
#   - .trace: Debian's dmtracedump (-o listing and profile report) against our decoder;
#   - Perfetto: decoded with Perfetto's own schema (the `perfetto` wheel's descriptors),
#     slice for slice against our decoder;
#   - Chrome JSON parses and balances; the flame-graph SVG is well-formed and names the
#     hottest method (from `hubble top`);
#   - Perfetto beside a system trace (`export --with`, tests/peers/check_perfetto_beside.py): a
#     system trace written with the wheel's protos (clock snapshots with BOOTTIME, MONOTONIC and
#     REALTIME apart, ProcessTree, sched_switch, an app's tracks), then Hubble's slices, each at
#     its wall-clock time through both files' snapshots and on the system trace's thread;
#   - the checkers fail on wrong inputs, a corrupted .trace, a Perfetto timestamp 1 ns off, a
#     system trace whose REALTIME is 1 ns off, Hubble's clock 1 ns off beside it and a thread
#     moved to another tid (they can fail);
#   - bad input: one-line error naming the file, exit 2, no output file (a cut Hubble trace, and
#     a --with file that is not a Perfetto trace or relates no clock to BOOTTIME).
# Inputs are synthetic trace files (rust/export/examples/synth.rs): several threads, 64- and
# 32-bit, wrapped rings (frames cut at the window start), different timer frequencies and
# reference pairs, unresolved methods; and version 4 files (rust/export/examples/synth_threads.rs:
# a many-thread pool's flush, threads with several runs and lost blocks), whose threads must be
# one track / one thread each.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT"

command -v dmtracedump >/dev/null || hubble_need_apt dmtracedump
if ! python3 -c 'import perfetto.protos.perfetto.trace.perfetto_trace_pb2' 2>/dev/null; then
  hubble_log "installing the perfetto Python wheel (schema descriptors)"
  python3 -m pip install --quiet perfetto 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages perfetto
fi

(cd rust && nice -n 10 cargo build --locked --release -p hubble-cli -p hubble-export --bins --examples)
HUBBLE="$HUBBLE_ROOT/rust/target/release/hubble"
SYNTH="$HUBBLE_ROOT/rust/target/release/examples/synth"
SYNTH_THREADS="$HUBBLE_ROOT/rust/target/release/examples/synth_threads"
export HUBBLE
PEERS="$HUBBLE_ROOT/tests/peers"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
passed=0 failed=0

t() {
  local name="$1"; shift
  local rc
  # Not in an `if`: errexit must stay active inside the subshell.
  set +e; ( set -euo pipefail; "$@" ) >"$WORK/log" 2>&1; rc=$?; set -e
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); printf '  ok    %s\n' "$name"; sed 's/^/        /' "$WORK/log" | grep -E 'OK:' || true
  else
    failed=$((failed + 1)); printf '  FAIL  %s\n' "$name"; sed 's/^/        | /' "$WORK/log" | tail -30
  fi
}

scenario() {  # scenario NAME SLOTS THREADS
  local dir="$WORK/$1"
  "$SYNTH" "$dir" "$2" "$3" >/dev/null
}
scenario three 8192 3      # 3 threads, 2 processes, 64+32-bit, wrapped and not
scenario one 2048 1        # 1 thread, wrapped
scenario big 262144 2      # 2 MiB rings
# Version 4, one file per scenario (64- and 32-bit): the two files share tids.
"$SYNTH_THREADS" "$WORK/v4" 2 >/dev/null
mkdir -p "$WORK/v4-32" && mv "$WORK/v4/threads-1.hubble" "$WORK/v4-32/"

check_all() {  # check_all SCENARIO
  local d="$WORK/$1" files
  files=("$d"/*.hubble)
  "$HUBBLE" export "${files[@]}" --format trace -o "$d/out.trace"
  python3 "$PEERS/check_dmtracedump.py" "$HUBBLE" "$d/out.trace" "${files[@]}"
  "$HUBBLE" export "${files[@]}" --format perfetto -o "$d/out.pftrace"
  python3 "$PEERS/check_perfetto.py" "$HUBBLE" "$d/out.pftrace" "${files[@]}"
  "$HUBBLE" export "${files[@]}" --format chrome-json -o "$d/out.json"
  python3 "$PEERS/check_json_svg.py" chrome "$d/out.json" "${files[@]}"
  "$HUBBLE" export "${files[@]}" --format svg -o "$d/out.svg"
  local hottest
  hottest="$("$HUBBLE" top --json -n 1 "${files[@]}" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["method"])')"
  python3 "$PEERS/check_json_svg.py" svg "$d/out.svg" "$hottest"
}
for s in three one big v4 v4-32; do t "peers read the $s scenario" check_all "$s"; done

beside() {  # beside SCENARIO [--perturb NS]: Hubble's slices beside a system trace of the device
  local d="$WORK/$1" files
  files=("$d"/*.hubble)
  shift
  python3 "$PEERS/check_perfetto_beside.py" system "$HUBBLE" "$d/system.pftrace" "${files[@]}" "$@"
  "$HUBBLE" export "${files[@]}" --format perfetto --with "$d/system.pftrace" -o "$d/merged.pftrace"
  python3 "$PEERS/check_perfetto_beside.py" check "$HUBBLE" "$d/system.pftrace" "$d/merged.pftrace" \
    "${files[@]}"
}
for s in three v4; do t "perfetto beside a system trace: the $s scenario" beside "$s"; done

# The checkers can fail: the same output against other inputs, and a flipped record.
must_fail() { if "$@" >"$WORK/neg" 2>&1; then cat "$WORK/neg"; return 1; fi; grep -q FAIL "$WORK/neg"; }
t "dmtracedump check rejects other inputs" must_fail \
  python3 "$PEERS/check_dmtracedump.py" "$HUBBLE" "$WORK/three/out.trace" "$WORK/one/"*.hubble
t "perfetto check rejects other inputs" must_fail \
  python3 "$PEERS/check_perfetto.py" "$HUBBLE" "$WORK/three/out.pftrace" "$WORK/one/"*.hubble
corrupt_trace() {
  cp "$WORK/one/out.trace" "$WORK/bad.trace"
  # Turn the last record's exit into an entry of the same method.
  python3 - "$WORK/bad.trace" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
b[-8] &= ~3
open(p, "wb").write(b)
PY
  must_fail python3 "$PEERS/check_dmtracedump.py" "$HUBBLE" "$WORK/bad.trace" "$WORK/one/"*.hubble
}
t "dmtracedump check rejects a corrupted record" corrupt_trace
# perfetto_edit IN OUT PYTHON: the perfetto trace IN written to OUT once PYTHON (statements on
# `t`, its perfetto_trace_pb2.Trace, with `pb` and `collections` imported) has changed it.
perfetto_edit() {
  python3 - "$1" "$2" "$3" <<'PY'
import collections, sys
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
t = pb.Trace()
t.ParseFromString(open(sys.argv[1], "rb").read())
exec(sys.argv[3])
open(sys.argv[2], "wb").write(t.SerializeToString())
PY
}
corrupt_perfetto() {
  # One slice's timestamp delta 1 ns off: with incremental timestamps every later step of its
  # sequence moves, and the check must see it.
  perfetto_edit "$WORK/three/out.pftrace" "$WORK/bad.pftrace" '
events = [p for p in t.packet if p.HasField("track_event")]
events[len(events) // 2].timestamp += 1'
  must_fail python3 "$PEERS/check_perfetto.py" "$HUBBLE" "$WORK/bad.pftrace" "$WORK/three/"*.hubble
}
t "perfetto check rejects a timestamp delta 1 ns off" corrupt_perfetto
split_v4_track() {
  # A v4 thread's later run moved to a track of its own: the thread is no longer one track.
  perfetto_edit "$WORK/v4/out.pftrace" "$WORK/split.pftrace" '
seqs = collections.defaultdict(list)
for p in t.packet:
    if p.HasField("trace_packet_defaults"):
        seqs[p.trace_packet_defaults.track_event_defaults.track_uuid].append(p)
shared = next(ps for ps in seqs.values() if len(ps) > 1)
shared[-1].trace_packet_defaults.track_event_defaults.track_uuid ^= 1 << 40'
  must_fail python3 "$PEERS/check_perfetto.py" "$HUBBLE" "$WORK/split.pftrace" "$WORK/v4/"*.hubble
}
t "perfetto check rejects a v4 thread split over two tracks" split_v4_track
t "dmtracedump check rejects a v4 file against another" must_fail \
  python3 "$PEERS/check_dmtracedump.py" "$HUBBLE" "$WORK/v4/out.trace" "$WORK/v4-32/"*.hubble
beside_perturbed() {
  # The system trace's REALTIME 1 ns later than the device's: every slice lands 1 ns early.
  cp -r "$WORK/one" "$WORK/one-perturbed"
  must_fail beside one-perturbed --perturb 1
}
t "perfetto beside check rejects a system trace's REALTIME 1 ns off" beside_perturbed
beside_edited() {  # beside_edited WHAT: one edit of Hubble's packets in a merged trace
  python3 - "$WORK/three/system.pftrace" "$WORK/three/merged.pftrace" "$WORK/edited.pftrace" "$1" <<'PY'
import sys
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
system, merged = pb.Trace(), pb.Trace()
system.ParseFromString(open(sys.argv[1], "rb").read())
merged.ParseFromString(open(sys.argv[2], "rb").read())
ours = merged.packet[len(system.packet):]
if sys.argv[4] == "clock":
    # Hubble's clock 1 ns off on one sequence: its snapshot's REALTIME.
    snap = next(p.clock_snapshot for p in ours if p.HasField("clock_snapshot"))
    next(c for c in snap.clocks if c.clock_id == pb.BuiltinClock.Value("BUILTIN_CLOCK_REALTIME")).timestamp += 1
else:
    # A thread track on another tid than its thread's.
    next(p for p in ours if p.track_descriptor.HasField("thread")).track_descriptor.thread.tid += 1
out = system.SerializeToString() + pb.Trace(packet=ours).SerializeToString()
open(sys.argv[3], "wb").write(out)
PY
  must_fail python3 "$PEERS/check_perfetto_beside.py" check "$HUBBLE" "$WORK/three/system.pftrace" \
    "$WORK/edited.pftrace" "$WORK/three/"*.hubble
}
t "perfetto beside check rejects Hubble's clock 1 ns off" beside_edited clock
t "perfetto beside check rejects a thread track on another tid" beside_edited tid

# refused RC NEEDLE: the export to never.pftrace that just ended with status RC (its stderr in
# $WORK/err) exited 2 with one line saying NEEDLE, and left nothing behind.
refused() {
  [ "$1" -eq 2 ] || { echo "exit $1, want 2"; return 1; }
  [ "$(wc -l < "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; return 1; }
  grep -q "$2" "$WORK/err" || { cat "$WORK/err"; return 1; }
  local leftovers=("$WORK"/*never.pftrace* "$WORK"/.*never.pftrace*)
  for f in "${leftovers[@]}"; do [ ! -e "$f" ] || { echo "left behind: $f"; return 1; }; done
}
bad_input() {
  local rc=0 files=("$WORK/one/"*.hubble)
  head -c 200 "${files[0]}" > "$WORK/cut.hubble"
  "$HUBBLE" export "$WORK/cut.hubble" --format perfetto -o "$WORK/never.pftrace" 2>"$WORK/err" || rc=$?
  refused "$rc" "cut.hubble"
}
t "truncated input: exit 2, one line naming the file, no output" bad_input
bad_with() {  # bad_with NAME NEEDLE: a system trace that cannot take Hubble's slices
  local rc=0 files=("$WORK/one/"*.hubble)
  "$HUBBLE" export "${files[@]}" --format perfetto --with "$WORK/$1" -o "$WORK/never.pftrace" \
    2>"$WORK/err" || rc=$?
  refused "$rc" "$1: $2"
}
not_perfetto() {  # a Hubble trace given as the system trace
  cp "$WORK/one/"*.hubble "$WORK/not-perfetto.pftrace"
  bad_with not-perfetto.pftrace "not a Perfetto trace"
}
no_snapshot() {  # the scenario's system trace without its clock snapshots
  perfetto_edit "$WORK/three/system.pftrace" "$WORK/no-snapshot.pftrace" '
t = pb.Trace(packet=[p for p in t.packet if not p.HasField("clock_snapshot")])'
  bad_with no-snapshot.pftrace "no clock snapshot relates BOOTTIME"
}
t "--with a file that is not a Perfetto trace: exit 2, one line naming it, no output" not_perfetto
t "--with a trace without clock snapshots: exit 2, one line naming it, no output" no_snapshot

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
