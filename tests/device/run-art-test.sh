#!/usr/bin/env bash
# Run the Hubble ART run-tests (tests/art-run-test/<NNNN>-hubble*) on a device or
# cuttlefish, with ART's chroot method (art/test/README.chroot.md of android-14): build ART
# for the target, push it into a chroot on the device, run the test there, tear down.
#
#   tests/device/run-art-test.sh [--aosp DIR] [--test NAME] [--lunch COMBO] [--32|--64]
#                                [--skip-build] [--keep-chroot] [--dry-run]
#
#   --test NAME    one run-test (default: every NNNN-hubble-* one in tests/art-run-test/,
#                  which scripts/aosp-apply copies to art/test/)
#   --lunch COMBO  default aosp_arm64-eng (README.chroot.md's full-tree target for arm64)
#   --32 | --64    which ART to test (default --64)
#   --skip-build   reuse the last art/tools/buildbot-build.sh --target
#   --keep-chroot  leave the chroot on the device (default: teardown and cleanup)
#   --dry-run      check prerequisites, print the steps, run nothing
#
# The device must allow `adb root` (userdebug or eng). The test runs in a dalvikvm process
# with no package name, so the script enables Hubble for every process ('*') and gives consent
# for the duration of the run, and restores both properties afterwards.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../scripts/lib/common.sh
source "$here/../../scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/aosp.sh
source "$here/../../scripts/lib/aosp.sh"

aosp="" test="" combo="aosp_arm64-eng" bits=64 build=1 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --aosp) aosp="${2:?}"; shift 2 ;;
    --test) test="${2:?}"; shift 2 ;;
    --lunch) combo="${2:?}"; shift 2 ;;
    --32) bits=32; shift ;;
    --64) bits=64; shift ;;
    --skip-build) build=0; shift ;;
    --keep-chroot) keep=1; shift ;;
    --dry-run) HUBBLE_DRY_RUN=1; shift ;;
    -h|--help) aosp_usage "$0"; exit 0 ;;
    *) hubble_die "unknown argument '$1' (try --help)" ;;
  esac
done

top="$(aosp_resolve_top "$aosp")"
tests=()
if [ -z "$test" ]; then
  run_tests="${HUBBLE_ART_RUN_TESTS:-$HUBBLE_ROOT/tests/art-run-test}"
  patches="${HUBBLE_ART_PATCHES:-$HUBBLE_ROOT/art-patches}"
  mapfile -t tests < <(find "$run_tests" "$patches/files/test" -mindepth 1 -maxdepth 1 -type d \
    -name '[0-9][0-9][0-9][0-9]-hubble*' -printf '%f\n' 2>/dev/null | sort -u)
  [ "${#tests[@]}" -gt 0 ] || hubble_die "no Hubble run-test (NNNN-hubble-*) in $run_tests or $patches/files/test: pass --test NAME"
else
  tests=("$test")
fi
for t in "${tests[@]}"; do
  [ -d "$top/art/test/$t" ] || aosp_missing "art/test/$t is not in the tree: run scripts/aosp-apply --aosp $top"
done
for t in art/tools/buildbot-build.sh art/tools/buildbot-setup-device.sh art/tools/buildbot-sync.sh \
         art/tools/buildbot-teardown-device.sh art/tools/buildbot-cleanup-device.sh art/test/testrunner/testrunner.py; do
  [ -e "$top/$t" ] || aosp_missing "$t is not in the tree (an incomplete art/ project)"
done
aosp_need_cmd adb "install adb (apt-get install adb, or 'm adb' in the tree)"
aosp_check_missing
[ "$(adb get-state 2>/dev/null | tr -d '\r')" = device ] || hubble_die "no device reachable over adb (adb devices; set ANDROID_SERIAL if there are several)"

steps=()
[ "$build" = 0 ] || steps+=("art/tools/buildbot-build.sh --target")
steps+=("art/tools/buildbot-cleanup-device.sh" "art/tools/buildbot-setup-device.sh" "art/tools/buildbot-sync.sh")
run_step="art/test/testrunner/testrunner.py --target --$bits"
for t in "${tests[@]}"; do run_step+=" -t $t"; done
down=("art/tools/buildbot-teardown-device.sh" "art/tools/buildbot-cleanup-device.sh")

hubble_log "run-tests ${tests[*]} on the device, ${bits}-bit, ART built with lunch $combo"
aosp_run adb root
aosp_run adb wait-for-device
old_consent="$(adb shell getprop persist.hubble.consent | tr -d '\r')"
old_packages="$(adb shell getprop debug.hubble.packages | tr -d '\r')"
restore() {
  aosp_run adb shell "setprop persist.hubble.consent '${old_consent:-0}'; setprop debug.hubble.packages '$old_packages'"
}
trap restore EXIT
aosp_run adb shell "setprop persist.hubble.consent 1; setprop debug.hubble.packages '*'"

script="export ART_TEST_CHROOT=/data/local/art-test-chroot"
for s in "${steps[@]}" "$run_step"; do script+=$'\n'"$s"; done
if [ "$keep" = 0 ]; then
  teardown=""
  for s in "${down[@]}"; do teardown+="$s; "; done
  script="trap '$teardown' EXIT"$'\n'"$script"
fi
aosp_show_env "$top" "$combo" bash -c "$script"
if [ "$HUBBLE_DRY_RUN" = 1 ]; then
  hubble_log "dry run: nothing built or run"
  exit 0
fi
aosp_in_env "$top" "$combo" bash -euo pipefail -c "$script"
hubble_log "run-tests ${tests[*]} passed"
