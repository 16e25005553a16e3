#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The main job, shortened (issue 9's CI test): scripts/main-job --skip-art-build --quick runs a
# 40k-invocation cold start through the emitted A64 trace points in unicorn under the real
# control thread (the runtime's own duration trigger `doFrame>100ms=jank` → cooperative stop in
# the janky frame, issue 20 B; idle → forced stop), checks both flushed files slot for slot
# against the stream, exports with `hubble`, and checks the anomaly's .trace with dmtracedump
# and its Perfetto file with Perfetto's schema. (The whole libart.so build is
# tests/art-full.sh's and scripts/main-job's job; stage 30 compiles the touched ART files.)
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
scripts/main-job --skip-art-build --quick --out "$out"
# What the job printed is what it checked: assert the shape of the result too.
grep -q 'reason jank .*stop cooperative (doorbell).*SLOT FOR SLOT = the stream' "$out/run.txt"
grep -q 'reason startup-complete .*stop forced (thread native).*SLOT FOR SLOT = the stream' "$out/run.txt"
grep -q '"cooperative_stops": 1' "$out/report.json"
grep -q '"forced_stops": 1' "$out/report.json"
# The jank flush came from the runtime's trigger (no harness-side detector any more).
grep -q "runtime trigger 'jank' fired: android.view.Choreographer.doFrame ran" "$out/run.txt"
grep -q '"trigger_fired": {"reason": "jank", "method": "android.view.Choreographer.doFrame"' "$out/report.json"
for f in "$out"/*-jank.perfetto-trace "$out"/*-jank.trace "$out"/*-jank.svg; do
  [ -s "$f" ] || hubble_die "missing export $f"
done
grep -q 'com.example.app' "$out/top.txt"
hubble_log "main job (quick) OK"
