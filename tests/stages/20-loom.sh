#!/usr/bin/env bash
# loom models of the §6 start/stop protocol (rust/runtime/tests/loom.rs): every interleaving of
# the traced and the control thread, native-state path included, plus a model without the
# re-check that must fail; and of class-loader unloading against symbolization
# (tests/loom_unload.rs), plus a model without the generation check that must fail; and of
# many-thread mode's block hand-off and all-threads stop (tests/loom_pool.rs), with two models that
# must fail (a claim without the atomic step, a stop without the second doorbell). `--cfg loom` changes every crate's build, so it gets its own target
# directory (rust/target/loom) and leaves the workspace's artifacts alone.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT/rust"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$HUBBLE_ROOT/rust/target/loom" \
  cargo test --locked --release -p hubble-runtime --test loom --test loom_unload --test loom_pool
