#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Bounded mutation testing: every mutant cargo-mutants makes of the slot
# encoding (rust/format/src/slot.rs: modes, packing, entry/exit/start/pad encoders, the one file
# every writer, decoder and emitter test builds on) must be caught by hubble-format's tests.
# Fails on a survivor; the equivalent mutants are excluded, each with its reason, in
# rust/.cargo/mutants.toml. cargo-mutants 27.1.0 is installed once into
# $HUBBLE_CACHE/tools/cargo-mutants-27.1.0 (cold: see docs/tools.md). Runs in place (warm target
# dir of stage 10; cargo-mutants restores each file) and checks that the tree is unchanged after.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
version=27.1.0
tools="$HUBBLE_CACHE/tools/cargo-mutants-$version"
if ! "$tools/bin/cargo-mutants" mutants --version 2>/dev/null | grep -qx "cargo-mutants $version"; then
  hubble_log "installing cargo-mutants $version into $tools"
  t0=$(date +%s)
  # --debug: cargo-mutants spends its time in the tests it runs, not in itself, and an
  # unoptimized build compiles in a fraction of the release build's time on a cold CI machine.
  nice -n 10 cargo install --locked --quiet --debug "cargo-mutants@$version" --root "$tools" \
    || hubble_die "cargo install cargo-mutants@$version failed"
  hubble_log "cargo-mutants installed in $(( $(date +%s) - t0 ))s"
fi
export PATH="$tools/bin:$PATH"
cd "$HUBBLE_ROOT/rust"
shard=(-p hubble-format -f format/src/slot.rs)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
git diff --quiet -- format/src/slot.rs || hubble_die "format/src/slot.rs has uncommitted changes: cargo-mutants --in-place would test (and restore) them"
n=$(cargo mutants "${shard[@]}" --list | wc -l)
hubble_log "cargo mutants ${shard[*]}: $n mutants (excluded as equivalent: rust/.cargo/mutants.toml)"
rc=0
# --timeout: a mutant whose tests run this long is a loop that never ends (caught); the tests
# take ~15 s, so a slow machine does not turn a survivor into a timeout.
nice -n 10 cargo mutants "${shard[@]}" --in-place --timeout 300 --no-shuffle -o "$out" \
  > "$out/run.log" 2>&1 || rc=$?
git diff --quiet -- format/src || hubble_die "cargo-mutants left format/src modified (git diff)"
grep -E '^(ok|MISSED|TIMEOUT|unviable)' "$out/run.log" | tail -5 >&2 || true
tail -2 "$out/run.log" >&2
if [ -s "$out/mutants.out/missed.txt" ]; then
  sed 's/^/  MISSED /' "$out/mutants.out/missed.txt" >&2
  hubble_die "surviving mutants: kill each with a test, or list it as equivalent (with why) in rust/.cargo/mutants.toml"
fi
case $rc in
  0) hubble_log "every mutant caught" ;;
  3) hubble_log "every mutant caught (some by a timeout: $(wc -l < "$out/mutants.out/timeout.txt"))" ;;
  *) tail -30 "$out/run.log" >&2; hubble_die "cargo mutants failed (exit $rc)" ;;
esac
