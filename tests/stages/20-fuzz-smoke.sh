#!/usr/bin/env bash
# Fuzz smoke: every decoder under libFuzzer for a short time (HUBBLE_FUZZ_SECONDS, default 30).
# The seed corpus starts from valid trace files (version 3, and version 4 with its thread
# sections) so mutations reach past the magic and checksum; the pool target (the many-thread
# block layout, `thread_streams`) starts from a real PoolWriter image.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
seconds="${HUBBLE_FUZZ_SECONDS:-30}"
cd "$HUBBLE_ROOT/rust"
if ! cargo fuzz --version >/dev/null 2>&1; then
  hubble_log "installing cargo-fuzz"
  cargo install --locked cargo-fuzz >/dev/null
fi
seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
cargo run -q -p hubble-format --example sample_trace "$seeds/sample.hubble"
cargo run -q -p hubble-format --example sample_threads "$seeds/sample-v4.hubble" "$seeds/pool.bin"
# cargo-fuzz needs nightly-only flags (sanitizers); the stable toolchain accepts them with
# RUSTC_BOOTSTRAP, which is the only toolchain this machine can have.
export RUSTC_BOOTSTRAP=1
cd fuzz
for target in container ring64 ring32 threads pool; do
  corpus="$seeds/$target"
  mkdir -p "$corpus"
  case "$target" in
    container|threads) cp "$seeds/sample.hubble" "$seeds/sample-v4.hubble" "$corpus/" ;;
    pool) cp "$seeds/pool.bin" "$corpus/" ;;
  esac
  hubble_log "fuzzing $target for ${seconds}s"
  log="$seeds/$target.log"
  if ! cargo fuzz run "$target" "$corpus" -- -max_total_time="$seconds" -print_final_stats=1 \
      > "$log" 2>&1; then
    tail -n 40 "$log" >&2
    hubble_die "fuzz target $target failed (crash inputs, if any, in rust/fuzz/artifacts/$target)"
  fi
  grep -E '^(stat::number_of_executed_units|Done)' "$log" >&2 || true
done
