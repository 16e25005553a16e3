#!/usr/bin/env bash
# Fuzz smoke: every decoder under libFuzzer for a short time (HUBBLE_FUZZ_SECONDS, default 30),
# through scripts/fuzz (which also runs the long campaigns: docs/trace-format.md, "Fuzzing").
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
exec "$HUBBLE_ROOT/scripts/fuzz" --seconds "${HUBBLE_FUZZ_SECONDS:-30}"
