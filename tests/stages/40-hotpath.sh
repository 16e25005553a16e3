#!/usr/bin/env bash
# Hot path: proving/hotpath-emu's tests (the emitted bytes in unicorn and qemu-aarch64, the golden
# listings, the block-end functions under the real control plane), where a skipped qemu run
# fails; and docs/performance.md must match what the emitted code measures today. scripts/hotpath-perf
# prints llvm-mca's per-core tables (A55, A510, A76, N1 as the A76 class, V1 as the X1 class;
# ART's TraceProfiler and Nanoscope beside ours) into this stage's log.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT/proving"
[ -z "${HUBBLE_SKIP_QEMU:-}" ] || hubble_die "HUBBLE_SKIP_QEMU is set: the qemu-aarch64 run is required in CI"
nice -n 10 cargo test --locked -p hubble-hotpath-emu -- --test-threads 2
"$HUBBLE_ROOT/scripts/hotpath-perf" --check
