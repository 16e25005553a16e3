#!/usr/bin/env bash
# The proving grounds' Rust (proving/): format and lints of every workspace there (the product
# crates they use are stage 10's), then the tests of proving/Cargo.toml's members. hotpath-emu's
# tests run in stage 40 (which fails a skipped qemu run), art-compile's compiler-dependent ones
# in 32, interp-replay's in 35 and hotpath-x86's in 41, each where its inputs are built.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT/proving"
cargo fmt -- --check
for own in interp-replay hotpath-x86; do
  cargo fmt --manifest-path "$own/Cargo.toml" -- --check
done
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked --exclude hubble-hotpath-emu
