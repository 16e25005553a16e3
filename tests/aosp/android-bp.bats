#!/usr/bin/env bats
# Android.bp: bpfmt and tests/aosp/bp_check.py (plus a broken copy that must fail), the
# cxxbridge genrules run as Soong would, and the Android.bp srcs lists the art-patches series
# must add for the run-tests' native code and the new ART sources.
# shellcheck disable=SC2016  # single-quoted scripts are for inner shells, on purpose
# shellcheck disable=SC2154  # $out comes from helpers.bash: shellcheck does not follow bats' load
load helpers

setup() {
  test_setup
}

@test "bpfmt: Android.bp parses and is formatted" {
  local d
  d="$(bpfmt -d Android.bp)" || fail "bpfmt -d Android.bp failed: $d"
  [ -z "$d" ] || fail "Android.bp is not bpfmt-formatted:"$'\n'"$d"
}

@test "bp_check: parser self-test" {
  python3 tests/aosp/bp_check.py --self-test
}

@test "bp_check: Android.bp consistent with the repository" {
  python3 tests/aosp/bp_check.py
}

@test "bp_check: catches a broken Android.bp" {
  local root="$BATS_TEST_TMPDIR/bproot"; mkdir -p "$root"
  # Only the sources (never rust/target, which is gigabytes).
  rsync -a --exclude=/rust/target --exclude=/rust/fuzz --include='/Android.bp' --include='/rust/***' \
    --include='/tests/' --include='/tests/aosp/***' --include='/art-patches/***' --exclude='*' ./ "$root/"
  sed -i 's|"rust/format/src/lib.rs"|"rust/format/src/missing.rs"|; s|"libcrc32fast"|"libcrc32fast_typo"|; s|features: \["std"\],||' "$root/Android.bp"
  # bindgen: a flag only cargo passes, one only Soong passes, a crate named otherwise.
  sed -i 's|"--disable-name-namespacing",||; s|"--use-core",|"--use-core", "--no-layout-tests",|; s|crate_name: "hubble_layout"|crate_name: "hubble_layout_bindgen"|' "$root/Android.bp"
  expect_fail python3 tests/aosp/bp_check.py --root "$root"
  contains "$out" "'rust/format/src/missing.rs' matches no file"
  contains "$out" "names 'libcrc32fast_typo', defined neither here nor in"
  contains "$out" "depends on 'crc32fast' but rustlibs lacks 'libcrc32fast'"
  contains "$out" "enables feature 'std' by default; Soong enables none by default"
  contains "$out" "rust/layout/build.rs passes bindgen '--disable-name-namespacing', which bindgen_flags lacks"
  contains "$out" "bindgen flag '--no-layout-tests' is not in rust/layout/build.rs"
  contains "$out" "crate_name 'hubble_layout_bindgen' is not hubble_layout"
  printf 'rust_library {\n    name: "x"\n    srcs: [],\n}\n' > "$root/Android.bp"
  expect_fail python3 tests/aosp/bp_check.py --root "$root"
  contains "$out" "parse error"
}

# The cxxbridge genrules' commands, run as Soong would (cxxbridge-cmd at rust/Cargo.lock's cxx
# version, built once into $HUBBLE_CACHE): on a sample bridge always, on the runtime crate's own
# bridge once it has one.
@test "cxxbridge genrules: Android.bp's commands on a sample bridge" {
  local root="$BATS_TEST_TMPDIR/cxxroot" gen="$BATS_TEST_TMPDIR/gen-sample"
  mkdir -p "$root/rust/runtime/src" "$root/tests/aosp"
  cp Android.bp "$root/"; cp rust/Cargo.lock "$root/rust/"; cp tests/aosp/bp_check.py "$root/tests/aosp/"
  cat > "$root/rust/runtime/src/lib.rs" <<'EOF2'
#[cxx::bridge(namespace = "hubble")]
mod ffi {
    extern "Rust" {
        fn hubble_sample_attached(tid: u32);
    }
    unsafe extern "C++" {
        include!("hubble/hubble_bridge.h");
        fn hubble_sample_pretty_method(method: u64) -> String;
    }
}
fn hubble_sample_attached(_tid: u32) {}
EOF2
  expect_ok tests/aosp/run-cxxbridge-genrules.sh --root "$root" "$gen"
  contains "$out" "ran 2 cxxbridge genrule(s)"
  # cxx's header declares the Rust functions for ART to call; the C++ callees are declared by
  # the header the bridge includes (hubble_bridge.h) and called from the generated source.
  grep -q 'void hubble_sample_attached(' "$gen/hubble/runtime_bridge.rs.h" || fail "header lacks the Rust function"
  grep -q 'hubble_sample_attached' "$gen/hubble/runtime_bridge.rs.cc" || fail "source lacks the Rust shim"
  grep -q '::hubble::hubble_sample_pretty_method' "$gen/hubble/runtime_bridge.rs.cc" || fail "source does not call the C++ callee"
  grep -q '#include "hubble/hubble_bridge.h"' "$gen/hubble/runtime_bridge.rs.cc" || fail "source does not include the bridge's C++ header"
}

@test "cxxbridge genrules: Android.bp's commands on rust/runtime's bridge" {
  local rc=0
  out="$(tests/aosp/run-cxxbridge-genrules.sh "$BATS_TEST_TMPDIR/gen-runtime" 2>&1)" || rc=$?
  if [ "$rc" = 3 ]; then
    [ "${CI:-}" != true ] || fail "cxxbridge genrules on rust/runtime cannot run under CI: $out"
    skip "cxxbridge genrules on rust/runtime ($out)"
  fi
  echo "$out"
  [ "$rc" = 0 ] || fail "run-cxxbridge-genrules.sh exited $rc"
}

# each_added_to_an_android_bp PREFIX WHY < FILES: fails at the first of FILES that no patch of
# the series adds to an Android.bp's srcs, where each is named by its path with PREFIX (a glob
# pattern) cut from its front; WHY says what its absence breaks.
each_added_to_an_android_bp() {
  local f rel
  while IFS= read -r f; do
    # shellcheck disable=SC2295  # PREFIX is a pattern on purpose
    rel="${f#$1}"
    grep -qsE "^\+.*\"${rel//./\\.}\"" art-patches/patches/*.patch || fail "$f $2"
  done
}

# A run-test's native code is built into ART's libarttest only when art/test/Android.bp lists it
# (libarttest-defaults srcs): without it the run-test's native methods do not link on a device.
# Patch 0030 adds ours; every run-test source must be in a patch's added Android.bp lines.
@test "series: every run-test's native source is built into libarttest" {
  each_added_to_an_android_bp 'tests/art-run-test/' \
    "is not added to art/test/Android.bp (libarttest-defaults srcs) by any patch: on a device the run-test's native methods will not load" \
    < <(find tests/art-run-test -mindepth 2 -name '*.cc' 2>/dev/null | LC_ALL=C sort)
}

# Every new ART C++ file must be in its module's Android.bp srcs through the series (the host
# build picks them up by directory, Soong only by name): hubble_bridge.cc was missing from
# runtime/Android.bp until 0003 listed it, which would have left libart unlinkable on AOSP.
@test "series: every new ART source is in an Android.bp srcs list of the series" {
  # Named from the module's directory: art-patches/files/runtime/hubble/x.cc is hubble/x.cc.
  each_added_to_an_android_bp 'art-patches/files/*/' \
    "is in no Android.bp srcs added by the series: Soong would not build it" \
    < <(find art-patches/files -name '*.cc' ! -name '*_test.cc' | LC_ALL=C sort)
}
