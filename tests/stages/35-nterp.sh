#!/usr/bin/env bash
# ART runtime integration (docs/art-runtime-integration.md): the interpreter's C++ trace point
# replayed on the host against hubble_format::RingWriter, and nterp's arm64, x86_64 and x86 macros
# executed against it; the ART run-test's Java compiles with javac; nterp with Hubble's trace points
# assembles for arm64, arm and x86 (cross assemblers / clang, offsets generated for those ISAs) and
# builds for x86_64 (Debian's libart.mk), and the runtime sources of patches 0020-0039 compile in
# the trixie build root (made by stage 30).
set -euo pipefail
# shellcheck source=/dev/null
source "$(dirname "$0")/../../scripts/lib/common.sh"

hubble_log "interp-replay: runtime/hubble/trace_point.h and nterp macros vs RingWriter"
(cd "$HUBBLE_ROOT/proving/interp-replay" && nice -n 10 cargo test --locked -j2 2>&1 \
  | grep -E "^(test |test result|error|failures|---- )|panicked")

hubble_log "javac: tests/art-run-test"
"$HUBBLE_ROOT/tests/art-run-test/build-java.sh"

hubble_log "nterp and runtime sources"
# cxxbridge (the cxx crate's code generator, same version as rust/Cargo.lock's cxx) generates the
# bridge header runtime/hubble/lifecycle.cc includes.
cxx_version="$(awk '/^name = "cxx"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' "$HUBBLE_ROOT/rust/Cargo.lock")"
if ! command -v cxxbridge >/dev/null && [ -n "$cxx_version" ]; then
  if [ ! -x "$HUBBLE_CACHE/cxxbridge/bin/cxxbridge" ]; then
    hubble_log "installing cxxbridge-cmd $cxx_version into $HUBBLE_CACHE/cxxbridge"
    nice -n 10 cargo install --locked --quiet "cxxbridge-cmd@$cxx_version" --root "$HUBBLE_CACHE/cxxbridge" -j2
  fi
  export PATH="$HUBBLE_CACHE/cxxbridge/bin:$PATH"
fi
cc=--cc
"$HUBBLE_ROOT/scripts/art-nterp-check" $cc
