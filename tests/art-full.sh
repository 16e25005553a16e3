#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The whole patched libart.so with the Rust runtime linked in (scripts/art-build --full), run
# on its own or as CI stage 31 (tests/stages/31-art-full.sh): ~17 min of 2 cores cold, see
# docs/art-integration.md; warm, only what changed recompiles. Run it before merging changes
# to art-patches/ or rust/runtime's bridge:
#
#   tests/art-full.sh            fetch → apply → build --full (each step timed)
set -euo pipefail
# shellcheck source=../scripts/lib/common.sh
source "$(dirname "$0")/../scripts/lib/common.sh"
case "${1:-}" in -h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;; esac
cd "$HUBBLE_ROOT"
hubble_need_apt_files scripts/deps/art.apt
rc=0
hubble_step "art-fetch" scripts/art-fetch || rc=$?
[ $rc -eq 0 ] && { hubble_step "art-apply" scripts/art-apply || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "art-build --full" scripts/art-build --full -j2 || rc=$?; }
hubble_report_times
exit $rc
