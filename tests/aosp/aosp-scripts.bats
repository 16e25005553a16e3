#!/usr/bin/env bats
# The AOSP scripts without AOSP or a device: --help, clear errors when repo, fastboot or
# launch_cvd is missing, scripts/aosp-apply on fixture patches (per-patch conflict report,
# idempotent re-run) and on the real series, aosp-build, aosp-flash, aosp-cuttlefish and
# tests/device/run-art-test.sh, against the fake AOSP tree of helpers.bash (fake envsetup.sh whose
# lunch/m record their calls) and the fake adb, fastboot and cuttlefish tools of tests/aosp/fake.
# shellcheck disable=SC2016  # single-quoted scripts are for inner shells, on purpose
# shellcheck disable=SC2154,SC2153  # $out, $TREE, ... come from helpers.bash: shellcheck does not follow bats' load
load helpers

setup_file() {
  make_bins
  make_tree "$TREE"
  make_patches "$PATCHES" "$TREE"
  make_run_tests "$RUN_TESTS"
  make_applied_tree
}
setup() {
  test_setup
  export HUBBLE_ART_PATCHES="$PATCHES" HUBBLE_ART_RUN_TESTS="$RUN_TESTS"
}

# ------------------------------------------------------------------------------------- --help
help_ok() {
  expect_ok no_tools "$1" --help
  contains "$out" "$(basename "$1")"
  contains "$out" "--dry-run"
}
@test "help scripts/aosp-checkout" { help_ok scripts/aosp-checkout; }
@test "help scripts/aosp-apply" { help_ok scripts/aosp-apply; }
@test "help scripts/aosp-build" { help_ok scripts/aosp-build; }
@test "help scripts/aosp-flash" { help_ok scripts/aosp-flash; }
@test "help scripts/aosp-cuttlefish" { help_ok scripts/aosp-cuttlefish; }
@test "help scripts/hubble-device" { help_ok scripts/hubble-device; }
@test "help tests/device/run-bench.sh" { help_ok tests/device/run-bench.sh; }
@test "help tests/device/run-art-test.sh" { help_ok tests/device/run-art-test.sh; }

@test "unknown option is refused" {
  expect_fail scripts/aosp-build --bogus
}

# ------------------------------------------------------------------------ missing prerequisites
@test "aosp-checkout: missing repo" {
  expect_fail no_tools scripts/aosp-checkout --dir "$BATS_TEST_TMPDIR/co" --dry-run
  contains "$out" "'repo' not found on PATH"
  contains "$out" "apt-get install repo"
}

@test "aosp-checkout: dry run prints repo init + sync, runs nothing" {
  local w="$BATS_TEST_TMPDIR"
  mkdir -p "$w/repobin"; printf '#!/bin/sh\necho "repo $*" >> "$FAKE_LOG"\n' > "$w/repobin/repo"; chmod +x "$w/repobin/repo"
  expect_ok env HOME="$w/home" GIT_CONFIG_GLOBAL="$w/gitconfig" PATH="$w/repobin:$BASEBIN" \
    bash -c 'git config --global user.email a@b; git config --global user.name a; scripts/aosp-checkout --dir "$0/co" --dry-run -j 4' "$w"
  contains "$out" "+ repo init -u https://android.googlesource.com/platform/manifest -b android-14.0.0_r15"
  contains "$out" "+ repo sync -c --no-tags -j4"
  [ ! -e "$FAKE_LOG" ] || fail "dry run ran repo: $(calls)"
  [ ! -e "$w/co" ] || fail "dry run created the checkout dir"
}

@test "aosp-build: no AOSP tree" {
  expect_fail env -u ANDROID_BUILD_TOP bash -c 'cd "$1" && "$2"/scripts/aosp-build --dry-run' _ "$BATS_TEST_TMPDIR" "$HUBBLE_ROOT"
  contains "$out" "no AOSP checkout"
  mkdir -p "$BATS_TEST_TMPDIR/notaosp"
  expect_fail scripts/aosp-build --aosp "$BATS_TEST_TMPDIR/notaosp" --dry-run
  contains "$out" "build/envsetup.sh is missing"
  contains "$out" "repo init"
}

@test "aosp-flash: missing fastboot and adb" {
  local tree="$BATS_TEST_TMPDIR/aosp"; cp -a "$TREE" "$tree"
  mkdir -p "$tree/out/target/product/oriole"; touch "$tree/out/target/product/oriole/android-info.txt"
  expect_fail no_tools scripts/aosp-flash --aosp "$tree" --target pixel:oriole --dry-run
  contains "$out" "fastboot: not on PATH and not in $tree/out/host/linux-x86/bin"
  contains "$out" "adb: not on PATH"
}

@test "aosp-cuttlefish: missing launch_cvd, kvm, images" {
  expect_fail env HUBBLE_HOST_ARCH=aarch64 HUBBLE_KVM_DEV="$BATS_TEST_TMPDIR/kvm" HUBBLE_TEST_GROUPS="kvm cvdnetwork render" \
    PATH="$FAKEBIN:$BASEBIN" scripts/aosp-cuttlefish start --aosp "$TREE" --dry-run
  contains "$out" "launch_cvd: not in $TREE/out/host/linux-x86/bin nor on PATH"
  contains "$out" "/dev/kvm: enable virtualization"
  contains "$out" "has no system.img/super.img"
}

# ----------------------------------------------------------------------------------- aosp-apply
@test "aosp-apply: dry run reports conflicts per patch" {
  local tree="$BATS_TEST_TMPDIR/aosp-apply" p="$BATS_TEST_TMPDIR/ap-conflict"
  cp -a "$TREE" "$tree"; cp -a "$PATCHES" "$p"
  printf '0003-unrelated.patch\n' >> "$p/series"
  expect_fail env HUBBLE_ART_PATCHES="$p" scripts/aosp-apply --aosp "$tree" --dry-run --no-install
  contains "$out" "0001-runtime-Android.bp-link-libhubble_runtime.patch"
  grep -qE '0001-runtime-Android.bp-link-libhubble_runtime.patch +applies' <<<"$out" || fail "0001 not 'applies': $out"
  grep -qE '0002-runtime-Android.bp-comment.patch +applies' <<<"$out" || fail "0002 (on top of 0001) not 'applies': $out"
  grep -qE '0003-unrelated.patch +CONFLICT' <<<"$out" || fail "0003 not reported as CONFLICT: $out"
  contains "$out" "runtime/runtime.cc"
  contains "$out" "1 conflicting patch(es)"
  [ -z "$(git -C "$tree/art" status --porcelain)" ] || fail "dry run changed art/"
  # A real apply refuses and changes nothing.
  expect_fail env HUBBLE_ART_PATCHES="$p" scripts/aosp-apply --aosp "$tree" --no-install
  contains "$out" "nothing applied"
  [ "$(git -C "$tree/art" rev-list --count HEAD)" = 1 ] || fail "commits were made"
}

@test "aosp-apply: applies in order, installs, re-run is a no-op" {
  local tree="$BATS_TEST_TMPDIR/aosp-apply"; cp -a "$TREE" "$tree"
  expect_ok scripts/aosp-apply --aosp "$tree" --dry-run
  contains "$out" "2 to apply, 0 already applied"
  contains "$out" "would copy"
  expect_ok scripts/aosp-apply --aosp "$tree"
  [ "$(git -C "$tree/art" log --format=%s | tr '\n' '|')" = \
    "runtime/Android.bp: comment|runtime/Android.bp: link libhubble_runtime|Hubble: add the new ART files of art-patches/files|android-14.0.0_r15 (fake)|" ] \
    || fail "unexpected art/ history: $(git -C "$tree/art" log --oneline)"
  grep -q '"libhubble_runtime", // Hubble' "$tree/art/runtime/Android.bp" || fail "patches not in art/runtime/Android.bp"
  [ -f "$tree/art/runtime/hubble/sample.cc" ] || fail "files/ not copied"
  [ -f "$tree/art/test/2270-hubble-transitions/src/Main.java" ] || fail "run-test not copied to art/test/"
  [ -x "$tree/art/test/2270-hubble-transitions/run" ] || fail "run-test's run script lost its exec bit"
  [ ! -e "$tree/art/test/build-java.sh" ] || fail "a non-test file of tests/art-run-test was copied"
  [ -z "$(git -C "$tree/art" status --porcelain)" ] || fail "art/ left dirty: $(git -C "$tree/art" status --porcelain)"
  [ -f "$tree/external/hubble/Android.bp" ] || fail "repository not installed as external/hubble"
  [ -f "$tree/external/hubble/rust/runtime/Cargo.toml" ] || fail "rust/ not installed"
  [ ! -e "$tree/external/hubble/.git" ] || fail ".git copied"
  # Idempotent.
  expect_ok scripts/aosp-apply --aosp "$tree" --no-install
  grep -qE '0001-.* +already applied' <<<"$out" || fail "re-run: 0001 not 'already applied': $out"
  grep -qE '0002-.* +already applied' <<<"$out" || fail "re-run: 0002 not 'already applied': $out"
  contains "$out" "0 patch(es) applied, 2 already applied"
}

@test "aosp-apply: reports AOSP crates Android.bp needs" {
  local tree="$BATS_TEST_TMPDIR/aosp-nocrates"; cp -a "$TREE" "$tree"; rm -rf "$tree/external/rust/cxx"
  expect_fail scripts/aosp-apply --aosp "$tree" --dry-run
  contains "$out" "external/rust/cxx (defines libcxx, which Android.bp needs) is not in the tree"
}

# The real series on the real tree: the pure AOSP art/ of android-14.0.0_r15 that the proving
# ground fetched (stage 30, scripts/art-fetch) as a git checkout inside a fake AOSP top.
@test "aosp-apply: the real series with git am on android-14.0.0_r15's art/ (from stage 30's cache)" {
  local aosp_art="$HUBBLE_CACHE/art/aosp"
  if [ ! -d "$aosp_art/runtime" ] || [ ! -s art-patches/series ]; then
    # Stage 30 fetches ART before this stage: under CI a missing tree is a broken run, not a skip.
    [ "${CI:-}" != true ] || fail "the real series on the real art/ cannot be checked: $aosp_art not fetched (scripts/art-fetch)"
    skip "the real series on the real art/ ($aosp_art not fetched: scripts/art-fetch)"
  fi
  local top="$BATS_TEST_TMPDIR/realtree" n
  mkdir -p "$top/build"; cp "$FAKE/envsetup.sh" "$top/build/"
  cp -al "$aosp_art" "$top/art" 2>/dev/null || cp -a "$aosp_art" "$top/art"
  git -C "$top/art" init -q
  git -C "$top/art" add -A
  git -C "$top/art" -c user.email=t@example.com -c user.name=t commit -q -m "android-14.0.0_r15"
  git -C "$top/art" config user.email t@example.com; git -C "$top/art" config user.name t
  n="$(grep -cvE '^[[:space:]]*(#|$)' art-patches/series)"
  expect_ok env -u HUBBLE_ART_PATCHES -u HUBBLE_ART_RUN_TESTS scripts/aosp-apply --aosp "$top" --dry-run --no-install
  contains "$out" "$n to apply, 0 already applied, 0 conflicting patch(es), 0 conflicting file(s)"
  expect_ok env -u HUBBLE_ART_PATCHES -u HUBBLE_ART_RUN_TESTS scripts/aosp-apply --aosp "$top" --no-install
  [ "$(git -C "$top/art" rev-list --count HEAD)" = $((n + 2)) ] || fail "want $((n + 2)) commits: $(git -C "$top/art" log --oneline)"
  expect_ok env -u HUBBLE_ART_PATCHES -u HUBBLE_ART_RUN_TESTS scripts/aosp-apply --aosp "$top" --no-install
  contains "$out" "0 patch(es) applied, $n already applied"
  # Every Android.bp the series changes still parses, and is no less bpfmt-clean than upstream.
  local bp before after
  while read -r bp; do
    after="$(bpfmt -d "$top/art/$bp")" || fail "patched art/$bp does not parse: $after"
    before="$(git -C "$top/art" show "HEAD~$n:$bp" > "$BATS_TEST_TMPDIR/pristine.bp" && bpfmt -d "$BATS_TEST_TMPDIR/pristine.bp")"
    [ "$(wc -l <<<"$after")" -le "$(wc -l <<<"$before")" ] || fail "the series leaves art/$bp less bpfmt-clean:"$'\n'"$after"
  done < <(git -C "$top/art" diff --name-only "HEAD~$n" -- '*.bp')
  rm -rf "$top"
}

# ----------------------------------------------------------------------------------- aosp-build
@test "aosp-build: cuttlefish arm64, commands in order; dry run runs nothing" {
  applied_tree
  expect_ok scripts/aosp-build --aosp "$APPLY_TREE" --dry-run
  contains "$out" "+ lunch aosp_cf_arm64_phone-userdebug"
  contains "$out" "+ m droid hubble HubbleBench"
  [ ! -e "$FAKE_LOG" ] || fail "dry run ran lunch or m: $(calls)"
  expect_ok scripts/aosp-build --aosp "$APPLY_TREE" -j8
  in_order "lunch | aosp_cf_arm64_phone-userdebug" "m | -j8 droid hubble HubbleBench"
  rm -f "$FAKE_LOG"
  expect_ok scripts/aosp-build --aosp "$APPLY_TREE" libart hubble
  in_order "lunch | aosp_cf_arm64_phone-userdebug" "m | libart hubble"
}

@test "aosp-build: refuses an unpatched tree" {
  expect_fail scripts/aosp-build --aosp "$TREE" --dry-run
  contains "$out" "external/hubble/Android.bp: the Hubble repository is not in the tree"
  contains "$out" "does not link libhubble_runtime"
}

@test "aosp-build: Pixel target needs vendor images" {
  applied_tree
  expect_fail scripts/aosp-build --aosp "$APPLY_TREE" --target pixel:oriole --dry-run
  contains "$out" "vendor/google_devices/oriole"
  contains "$out" "developers.google.com/android/drivers"
  mkdir -p "$APPLY_TREE/vendor/google_devices/oriole"
  expect_ok scripts/aosp-build --aosp "$APPLY_TREE" --target pixel:oriole --variant eng --dry-run
  contains "$out" "+ lunch aosp_oriole-eng"
  expect_fail scripts/aosp-build --aosp "$APPLY_TREE" --target aosp_oriole-userdebug --dry-run
  contains "$out" "not a lunch combo"
}

@test "aosp-build: release configs (3-part lunch) when the tree has them" {
  applied_tree
  local tree="$BATS_TEST_TMPDIR/aosp-release"; cp -a "$APPLY_TREE" "$tree"
  mkdir -p "$tree/build/release/release_configs"; touch "$tree/build/release/release_configs/trunk_staging.textproto"
  expect_ok scripts/aosp-build --aosp "$tree" --dry-run
  contains "$out" "+ lunch aosp_cf_arm64_phone-trunk_staging-userdebug"
  expect_ok scripts/aosp-build --aosp "$APPLY_TREE" --release ap1a --dry-run
  contains "$out" "+ lunch aosp_cf_arm64_phone-ap1a-userdebug"
}

@test "aosp-build: a tree without an imported crate builds with ALLOW_MISSING_DEPENDENCIES" {
  applied_tree
  local tree="$BATS_TEST_TMPDIR/aosp-noinferno"; cp -a "$APPLY_TREE" "$tree"; rm -rf "$tree/external/rust/crates/inferno"
  expect_ok scripts/aosp-build --aosp "$tree"
  contains "$out" "the tree lacks libinferno"
  in_order "lunch | aosp_cf_arm64_phone-userdebug" "m | ALLOW_MISSING_DEPENDENCIES | droid HubbleBench"
  rm -f "$FAKE_LOG"
  expect_ok scripts/aosp-build --aosp "$APPLY_TREE"
  in_order "m | droid hubble HubbleBench"
}

# ----------------------------------------------------------------------------------- aosp-flash
flash_setup() {
  applied_tree
  reset_device
  mkdir -p "$APPLY_TREE/out/target/product/oriole"; touch "$APPLY_TREE/out/target/product/oriole/android-info.txt"
  echo 1 > "$FAKE_DEV/props/sys.boot_completed"
}

@test "aosp-flash: reboot bootloader, check unlock, flashall, wait for boot" {
  flash_setup
  expect_ok with_fakes scripts/aosp-flash --aosp "$APPLY_TREE" --target pixel:oriole --dry-run
  contains "$out" "+ $FAKEBIN/adb -s emulator-5554 reboot bootloader"
  contains "$out" "ANDROID_PRODUCT_OUT=$APPLY_TREE/out/target/product/oriole $FAKEBIN/fastboot -s emulator-5554 flashall"
  lacks "$(calls)" "reboot"
  lacks "$(calls)" "flashall"
  rm -f "$FAKE_LOG"
  expect_ok with_fakes scripts/aosp-flash --aosp "$APPLY_TREE" --target pixel:oriole --wipe
  in_order "lunch | aosp_oriole-userdebug" "adb | devices" "fastboot | devices" \
    "adb | -s | emulator-5554 | reboot | bootloader" "fastboot | -s | emulator-5554 | getvar | unlocked" \
    "fastboot | -s | emulator-5554 | flashall | -w" "flashall from $APPLY_TREE/out/target/product/oriole" \
    "adb | -s | emulator-5554 | wait-for-device" "adb | -s | emulator-5554 | shell | getprop | sys.boot_completed"
}

@test "aosp-flash: refuses a locked bootloader" {
  flash_setup; echo bootloader > "$FAKE_DEV/state"; touch "$FAKE_DEV/locked"
  expect_fail with_fakes scripts/aosp-flash --aosp "$APPLY_TREE" --target pixel:oriole
  contains "$out" "bootloader of emulator-5554 is locked"
  contains "$out" "fastboot flashing unlock"
  lacks "$(calls)" "flashall"
}

@test "aosp-flash: no device; cuttlefish is not flashed" {
  flash_setup; echo absent > "$FAKE_DEV/state"
  expect_fail with_fakes scripts/aosp-flash --aosp "$APPLY_TREE" --target pixel:oriole
  contains "$out" "no device attached"
  expect_fail with_fakes scripts/aosp-flash --aosp "$APPLY_TREE" --target cf
  contains "$out" "scripts/aosp-cuttlefish start"
}

# ------------------------------------------------------------------------------ aosp-cuttlefish
cf_setup() {
  applied_tree
  reset_device; echo 0.0.0.0:6520 > "$FAKE_DEV/serial"; echo 1 > "$FAKE_DEV/props/sys.boot_completed"
  local bin="$APPLY_TREE/out/host/linux-x86/bin" prod="$APPLY_TREE/out/target/product/cf_arm64_phone" x
  mkdir -p "$bin" "$prod"; touch "$prod/super.img" "$BATS_TEST_TMPDIR/kvm"
  for x in launch_cvd stop_cvd cvd_status; do ln -sf "$FAKE/cvd-tool" "$bin/$x"; done
}
cf_env() { env HUBBLE_HOST_ARCH=aarch64 HUBBLE_KVM_DEV="$BATS_TEST_TMPDIR/kvm" HUBBLE_TEST_GROUPS="kvm cvdnetwork render" PATH="$FAKEBIN:$BASEBIN" "$@"; }

@test "aosp-cuttlefish: launch_cvd --daemon, wait for boot, stop_cvd" {
  cf_setup
  expect_ok cf_env scripts/aosp-cuttlefish start --aosp "$APPLY_TREE" --dry-run
  contains "$out" "launch_cvd --daemon --cpus=4 --memory_mb=8192"
  lacks "$(calls)" "launch_cvd"
  rm -f "$FAKE_LOG"
  expect_ok cf_env scripts/aosp-cuttlefish start --aosp "$APPLY_TREE" --cpus 8 -- --gpu_mode=guest_swiftshader
  in_order "lunch | aosp_cf_arm64_phone-userdebug" "launch_cvd | --daemon | --cpus=8 | --memory_mb=8192 | --gpu_mode=guest_swiftshader" \
    "launch_cvd images from $APPLY_TREE/out/target/product/cf_arm64_phone" \
    "adb | -s | 0.0.0.0:6520 | wait-for-device" "adb | -s | 0.0.0.0:6520 | shell | getprop | sys.boot_completed"
  rm -f "$FAKE_LOG"
  expect_ok cf_env scripts/aosp-cuttlefish stop --aosp "$APPLY_TREE"
  in_order "stop_cvd"
}

@test "aosp-cuttlefish: arm64 guest on an x86_64 host, groups" {
  cf_setup
  expect_fail env HUBBLE_HOST_ARCH=x86_64 HUBBLE_KVM_DEV="$BATS_TEST_TMPDIR/kvm" HUBBLE_TEST_GROUPS="kvm" PATH="$FAKEBIN:$BASEBIN" \
    scripts/aosp-cuttlefish start --aosp "$APPLY_TREE"
  contains "$out" "needs an arm64 host with KVM (this host is x86_64)"
  contains "$out" "group cvdnetwork"
  lacks "$(calls)" "launch_cvd"
  expect_ok env HUBBLE_HOST_ARCH=x86_64 HUBBLE_KVM_DEV="$BATS_TEST_TMPDIR/nokvm" HUBBLE_TEST_GROUPS="kvm cvdnetwork render" PATH="$FAKEBIN:$BASEBIN" \
    scripts/aosp-cuttlefish start --aosp "$APPLY_TREE" --vm-manager qemu_cli --dry-run
  contains "$out" "--vm_manager=qemu_cli"
}

# ------------------------------------------------------------------------------ run-test driver
@test "run-art-test: chroot steps in order, properties restored" {
  applied_tree
  reset_device
  printf 'com.example.app' > "$FAKE_DEV/props/debug.hubble.packages"
  expect_ok with_fakes tests/device/run-art-test.sh --aosp "$APPLY_TREE" --dry-run
  contains "$out" "+ lunch aosp_arm64-eng"
  contains "$out" "testrunner.py --target --64 -t 2270-hubble-transitions -t 2271-hubble-tasks"
  lacks "$(calls)" "buildbot"
  expect_ok with_fakes tests/device/run-art-test.sh --aosp "$APPLY_TREE" --test 2271-hubble-tasks --dry-run
  contains "$out" "testrunner.py --target --64 -t 2271-hubble-tasks"
  lacks "$out" "-t 2270-hubble-transitions"
  rm -f "$FAKE_LOG"
  expect_ok with_fakes tests/device/run-art-test.sh --aosp "$APPLY_TREE" --32
  in_order "adb | root" "setprop persist.hubble.consent 1; setprop debug.hubble.packages '*'" \
    "lunch | aosp_arm64-eng" "buildbot-build.sh --target" "buildbot-cleanup-device.sh" \
    "buildbot-setup-device.sh" "buildbot-sync.sh" "testrunner.py --target --32 -t 2270-hubble-transitions -t 2271-hubble-tasks" \
    "buildbot-teardown-device.sh" "setprop debug.hubble.packages 'com.example.app'"
  [ "$(prop debug.hubble.packages)" = com.example.app ] || fail "packages not restored: $(prop debug.hubble.packages)"
  expect_fail with_fakes tests/device/run-art-test.sh --aosp "$TREE" --test 9999-none --dry-run
  contains "$out" "art/test/9999-none is not in the tree"
}
