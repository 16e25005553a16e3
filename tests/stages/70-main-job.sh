#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The main job as a newcomer runs it: `scripts/main-job --quick`, ART step included, from a
# cache that only the main job's own steps have filled. Every other stage shares
# ~/.cache/hubble-aosp, so a step of the job that leans on something another stage left there
# (a generated header in the work tree, a build output) passes in CI and fails on a fresh
# machine. Here the job gets a new HUBBLE_CACHE seeded with the outputs of its own expensive
# steps only, none of them remade by hand:
#   - art-fetch's download (src/, hard links: apt never rewrites a file in place) and unpacked
#     trees (art/pristine, art/aosp, symbolic links: stage 30 proves art-apply never writes
#     through a linked pristine tree);
#   - art-build --root's build root, shared (HUBBLE_ART_BUILDROOT, one user at a time);
#   - a copy of art-build --full's tree (art/full), so the job's own art-build --full relinks
#     at most instead of spending 17 minutes.
# The work tree (art-apply), its debian/out, and the x86_64 blobs (hotpath-x86-gen) are made
# by the job itself, and so are the host VM's dalvikvm and mini-core (ART's JIT is built in the
# copied art/full). Then: both flushed files slot for slot, exports, peer checks, the
# many-thread scene and the real-ART scene, which only a full run reaches.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/art.sh
source "$HUBBLE_ROOT/scripts/lib/art.sh"
cd "$HUBBLE_ROOT"

mkdir -p "$(dirname "$HUBBLE_CACHE")"
fresh="$(mktemp -d "$HUBBLE_CACHE.fresh.XXXXXX")"
out="$(mktemp -d)"
trap 'art_safe_rm "$fresh"; rm -rf "$out"' EXIT
mkdir -p "$fresh/art"
[ -d "$ART_SRC_CACHE" ] && cp -al "$ART_SRC_CACHE" "$fresh/src"
for seed in "$ART_PRISTINE" "$ART_AOSP"; do
  [ -e "$seed" ] && ln -s "$seed" "$fresh/art/$(basename "$seed")"
done
if [ -d "$ART_CACHE/full" ]; then
  cp -a --reflink=auto "$ART_CACHE/full" "$fresh/art/full"
fi
hubble_log "fresh cache $fresh: $(cd "$fresh" && find . -maxdepth 2 -mindepth 1 | sort | tr '\n' ' ')"

HUBBLE_CACHE="$fresh" HUBBLE_ART_BUILDROOT="$ART_BUILDROOT" scripts/main-job --quick --out "$out"

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
# The many-thread scene ran (step 7), from blobs this cache's own hotpath-x86-gen made.
[ -s "$out/tasks/hubble-tasks.txt" ] || hubble_die "the many-thread scene left no hubble-tasks.txt"
ls "$fresh"/hotpath-x86/blobs-*.txt >/dev/null
# The real-ART scene ran (step 8): both flushes checked against the app, exported and read.
grep -q '^check_frames: .*-jank.hubble: reason jank' "$out/real-art/check.txt"
grep -q '^check_trace: .*-jank.hubble,.*-anr.hubble: .* as counted' "$out/real-art/check.txt"
for f in "$out"/real-art/*-jank.perfetto-trace "$out"/real-art/*-anr.trace; do
  [ -s "$f" ] || hubble_die "missing export $f"
done
hubble_log "main job (quick, full, fresh cache) OK"
