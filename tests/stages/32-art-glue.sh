#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The ART-side glue (runtime/hubble/hubble_bridge.cc, thread_state.cc, lifecycle.cc) built with
# the patched headers and run against the real libart.so of stage 31 (tests/art-glue.sh). Cold:
# 21-51 s on 2 cores (four objects, two links); warm: only what changed is rebuilt, then ~5 s of
# tests. Fails, never skips, when stage 31's libart.so or the build root is missing.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
exec bash "$HUBBLE_ROOT/tests/art-glue.sh"
