#!/usr/bin/env bash
# The product's Rust workspace (rust/): module cycles (proving/'s too), format, lints, then every
# test.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
# No module cycles in any crate (the allowed ones are listed, each with its reason, and the
# list may only shrink: a line that matches nothing fails too).
"$HUBBLE_ROOT/scripts/check-module-cycles"
cd "$HUBBLE_ROOT/rust"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# hubble as AOSP's Soong modules build it (Android.bp): without the default `parquet` feature.
cargo clippy -p hubble-cli --bin hubble --no-default-features --locked -- -D warnings
cargo test --workspace --locked
# ... and its tests of that build: the fleet options say why they cannot run there.
cargo test -p hubble-cli --no-default-features --locked --test no_parquet
