#!/usr/bin/env bash
# The x86_64 and x86 trace points: the bytes ART's own assemblers emit
# (scripts/hotpath-x86-gen: the emitters and compiler/utils/x86*/assembler_x86*.cc built in the
# trixie build root, linked against stage 31's libart.so.0; cached by their inputs) run natively,
# x86_64 as a 64-bit and x86 as a static 32-bit process, against hubble_format::RingWriter slot
# for slot, single-stepped and at full speed, with register-preservation checks and mutants that
# must fail (proving/hotpath-x86). Then the Listing-1 benchmark in its short form: every row
# must be produced (no timing is asserted). Last, the main job's short cold start with
# `--isa x86_64`: the stream runs natively through the same x86_64 bytes while hubble-runtime's
# real control thread stops (cooperatively, then forced), flushes and restarts it; every file
# slot for slot, exported and read back by dmtracedump and Perfetto's schema; and the
# many-thread scene (scripts/main-job step 7: four threads in one pool, task records, an ANR
# flush; every record and `hubble tasks`' queuing figures exact), plus its test, where a tampered
# file and a wrong figure must each fail the check (ignored in stage 10: it needs the blobs).
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
hubble_need_apt_files "$HUBBLE_ROOT/scripts/deps/hotpath-x86.apt"
blobs="$("$HUBBLE_ROOT/scripts/hotpath-x86-gen")"
hubble_log "hotpath-x86: $blobs"
(cd "$HUBBLE_ROOT/proving/hotpath-x86" &&
  HUBBLE_X86_BLOBS="$blobs" nice -n 10 cargo test --locked -j2 -- --test-threads 2 --nocapture 2>&1 \
  | grep -E "^(test |test result|error|failures|---- |mutant |  [a-z])|panicked|instructions executed")
"$HUBBLE_ROOT/scripts/hotpath-bench" --quick --blobs "$blobs"
(cd "$HUBBLE_ROOT/proving" && HUBBLE_X86_BLOBS="$blobs" nice -n 10 cargo test --locked -p hubble-main-job \
  --test tasks -- --ignored 2>&1 | grep -E "^(test |test result|error|failures|---- )|panicked|main-job tasks")
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$HUBBLE_ROOT/scripts/main-job" --skip-art-build --quick --isa x86_64 --out "$out"
