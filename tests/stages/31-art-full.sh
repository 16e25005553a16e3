#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The whole patched libart.so with the Rust runtime (crate hubble-runtime) linked in, and the
# nm check that every bridge symbol resolves in both directions (scripts/art-build --full, via
# tests/art-full.sh). Cold it compiles all ~290 libart objects: ~17 min of 2 cores, which keeps
# the whole of .ci/run near 30 min (CI may run --full as long as the whole stays under 60); warm
# it relinks only.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
exec bash "$HUBBLE_ROOT/tests/art-full.sh"
