#!/usr/bin/env bats
# scripts/hubble-device against the fake adb of tests/aosp/fake (properties, the ctl counter,
# run-as and root, pull), and the hubble CLI's side of the info/export contract it relies on.
# shellcheck disable=SC2154  # $out comes from helpers.bash: shellcheck does not follow bats' load
load helpers

PKG=com.example.app
DEVDIR="/data/data/$PKG/files/hubble"

setup_file() {
  make_bins
}
setup() {
  test_setup
}

dev_setup() {
  reset_device
  mkdir -p "$FAKE_DEV/fs$DEVDIR"
  printf 'trace-one' > "$FAKE_DEV/fs$DEVDIR/1700000000000-4242-4242-adb.hubble"
  printf 'trace-two' > "$FAKE_DEV/fs$DEVDIR/1700000000500-4242-4250-anr.hubble"
  printf 'partial' > "$FAKE_DEV/fs$DEVDIR/.1700000000900-4242-4242-adb.hubble.tmp"
  echo "$PKG" > "$FAKE_DEV/debuggable"
}
hd() { with_fakes scripts/hubble-device "$@"; }
# A fake hubble CLI that records its calls ($BATS_TEST_TMPDIR/hb/hubble).
fake_hubble() {
  mkdir -p "$BATS_TEST_TMPDIR/hb"
  cat > "$BATS_TEST_TMPDIR/hb/hubble" <<'EOF'
#!/bin/sh
echo "hubble $*" >> "$FAKE_LOG"
case "$1" in
  info) grep -q '^trace-' "$2" ;;
  export) [ "$2" = --help ] && exit 0; printf 'exported' > "$5" ;;
esac
EOF
  chmod +x "$BATS_TEST_TMPDIR/hb/hubble"
}

@test "hubble-device: missing adb" {
  expect_fail no_tools scripts/hubble-device status
  contains "$out" "'adb' not found on PATH"
}

@test "hubble-device: enable/disable/consent set the properties" {
  dev_setup
  expect_ok hd enable "$PKG" --restart
  [ "$(prop persist.hubble.consent)" = 1 ] || fail "consent not set"
  [ "$(prop debug.hubble.packages)" = "$PKG" ] || fail "packages: $(prop debug.hubble.packages)"
  in_order "setprop persist.hubble.consent '1'" "setprop debug.hubble.packages '$PKG'" "am force-stop $PKG"
  expect_ok hd enable org.other.app "$PKG"
  [ "$(prop debug.hubble.packages)" = "$PKG,org.other.app" ] || fail "packages after 2nd enable: $(prop debug.hubble.packages)"
  expect_ok hd disable "$PKG"
  [ "$(prop debug.hubble.packages)" = "org.other.app" ] || fail "packages after disable: $(prop debug.hubble.packages)"
  expect_ok hd enable '*'
  [ "$(prop debug.hubble.packages)" = '*' ] || fail "enable '*': $(prop debug.hubble.packages)"
  expect_fail hd enable 'bad;rm -rf /'
  contains "$out" "is not a package name"
  expect_ok hd consent off
  [ "$(prop persist.hubble.consent)" = 0 ] || fail "consent off"
}

@test "hubble-device: start/stop/flush/threads/config write debug.hubble.ctl with #n" {
  dev_setup
  expect_ok hd enable "$PKG"
  expect_ok hd start "$PKG"
  [ "$(prop debug.hubble.ctl)" = "$PKG start#1" ] || fail "ctl: $(prop debug.hubble.ctl)"
  expect_ok hd flush "$PKG" jank
  [ "$(prop debug.hubble.ctl)" = "$PKG flush jank#2" ] || fail "ctl: $(prop debug.hubble.ctl)"
  expect_ok hd flush "$PKG"
  [ "$(prop debug.hubble.ctl)" = "$PKG flush adb#3" ] || fail "ctl: $(prop debug.hubble.ctl)"
  expect_ok hd stop "$PKG"
  [ "$(prop debug.hubble.ctl)" = "$PKG stop#4" ] || fail "ctl: $(prop debug.hubble.ctl)"
  expect_ok hd threads "$PKG" 3
  [ "$(prop debug.hubble.ctl)" = "$PKG threads 3#5" ] || fail "ctl: $(prop debug.hubble.ctl)"
  expect_ok hd config ring_mb 64
  [ "$(prop debug.hubble.ring_mb)" = 64 ] || fail "ring_mb"
  expect_ok hd config retention 4,128
  [ "$(prop debug.hubble.retention)" = 4,128 ] || fail "retention"
  expect_fail hd config retention lots
  expect_ok hd config threads all
  [ "$(prop debug.hubble.threads)" = all ] || fail "threads all"
  expect_ok hd config budget_mb 32
  [ "$(prop debug.hubble.budget_mb)" = 32 ] || fail "budget_mb"
  expect_ok hd config tasks 1
  [ "$(prop debug.hubble.tasks)" = 1 ] || fail "tasks"
  expect_fail hd config tasks yes
  contains "$out" "tasks takes 1 (task records on) or 0 (off)"
  [ "$(prop debug.hubble.tasks)" = 1 ] || fail "a bad tasks value changed the property"
  expect_ok hd config anr_interval off
  [ "$(prop debug.hubble.anr_interval)" = off ] || fail "anr_interval"
  expect_fail hd config threads every
  expect_fail hd flush "$PKG" "bad reason"
  expect_ok hd start org.not.enabled
  contains "$out" "org.not.enabled is not in debug.hubble.packages"
  expect_ok hd status
  contains "$out" "debug.hubble.ctl"
  contains "$out" "debug.hubble.tasks"
  contains "$out" "org.not.enabled start#6"
}

@test "hubble-device: --dry-run changes nothing" {
  dev_setup
  expect_ok hd --dry-run enable "$PKG" --restart
  contains "$out" "+ adb shell setprop\\ persist.hubble.consent\\ \\'1\\'"
  [ -z "$(prop persist.hubble.consent)" ] || fail "dry run set consent"
  lacks "$(calls)" "setprop"
  lacks "$(calls)" "force-stop"
}

@test "hubble-device: a refused setprop is reported" {
  dev_setup; echo persist.hubble.consent > "$FAKE_DEV/deny_props"
  expect_fail hd enable "$PKG"
  contains "$out" "setprop persist.hubble.consent did not take"
  contains "$out" "SELinux"
}

@test "hubble-device: list and pull via run-as, then hubble info/export" {
  dev_setup; fake_hubble
  local pulled="$BATS_TEST_TMPDIR/pulled"
  expect_ok hd enable "$PKG"
  expect_ok hd list
  contains "$out" "$PKG ($DEVDIR, via run-as):"
  contains "$out" "1700000000000-4242-4242-adb.hubble"
  lacks "$out" ".tmp"
  expect_ok hd --hubble "$BATS_TEST_TMPDIR/hb/hubble" pull "$pulled" --export perfetto
  cmp -s "$pulled/$PKG/1700000000000-4242-4242-adb.hubble" "$FAKE_DEV/fs$DEVDIR/1700000000000-4242-4242-adb.hubble" || fail "file 1 differs"
  cmp -s "$pulled/$PKG/1700000000500-4242-4250-anr.hubble" "$FAKE_DEV/fs$DEVDIR/1700000000500-4242-4250-anr.hubble" || fail "file 2 differs"
  [ ! -e "$pulled/$PKG/.1700000000900-4242-4242-adb.hubble.tmp" ] || fail "a .tmp file was pulled"
  in_order "exec-out | run-as $PKG cat files/hubble/1700000000000-4242-4242-adb.hubble" \
    "hubble info $pulled/$PKG/1700000000000-4242-4242-adb.hubble" \
    "hubble export --format perfetto --output $pulled/$PKG/1700000000000-4242-4242-adb.perfetto-trace"
  [ "$(cat "$pulled/$PKG/1700000000500-4242-4250-anr.perfetto-trace")" = exported ] || fail "no export output"
}

@test "hubble-device: non-debuggable app needs --root; bad files are caught" {
  dev_setup; fake_hubble; : > "$FAKE_DEV/debuggable"
  expect_fail hd list "$PKG"
  contains "$out" "only debuggable apps"
  contains "$out" "--root"
  expect_ok hd --root --hubble "$BATS_TEST_TMPDIR/hb/hubble" pull "$BATS_TEST_TMPDIR/pulled-root" "$PKG"
  in_order "adb | root" "adb | pull | $DEVDIR/1700000000000-4242-4242-adb.hubble"
  cmp -s "$BATS_TEST_TMPDIR/pulled-root/$PKG/1700000000500-4242-4250-anr.hubble" "$FAKE_DEV/fs$DEVDIR/1700000000500-4242-4250-anr.hubble" || fail "root pull differs"
  printf 'garbage' > "$FAKE_DEV/fs$DEVDIR/1700000000600-1-1-adb.hubble"
  expect_fail hd --root --hubble "$BATS_TEST_TMPDIR/hb/hubble" pull "$BATS_TEST_TMPDIR/pulled-bad" "$PKG"
  contains "$out" "do not read as Hubble traces"
}

# hubble-device calls the real CLI as `hubble info FILE` and `hubble export --format F --output
# OUT FILE`: check that contract against the hubble binary of this tree.
@test "hubble-device: the hubble CLI takes the info/export arguments it passes" {
  local hubble="rust/target/debug/hubble" f
  if [ ! -x "$hubble" ]; then (cd rust && nice cargo build -q -p hubble-cli --locked); fi
  expect_ok "$hubble" export --help
  contains "$out" "--format"
  contains "$out" "--output"
  for f in perfetto trace chrome-json folded svg nanoscope; do contains "$out" "$f"; done
  printf 'not a trace' > "$BATS_TEST_TMPDIR/garbage.hubble"
  expect_fail "$hubble" info "$BATS_TEST_TMPDIR/garbage.hubble"
}

@test "hubble-device: no device" {
  dev_setup; echo absent > "$FAKE_DEV/state"
  expect_fail hd status
  contains "$out" "no device reachable over adb"
}
