#!/usr/bin/env bats
# The ART build root (scripts/lib/art.sh): two caches sharing one build root
# (HUBBLE_ART_BUILDROOT) mount their trees at the same /hubble/... paths: a run must wait for the
# other, and never compile a tree mounted by another.
# shellcheck disable=SC2154  # $out comes from helpers.bash: shellcheck does not follow bats' load
load helpers

setup() {
  test_setup
}

@test "art build root: a tree mounted by another run is refused, runs on one root wait" {
  local br="$BATS_TEST_TMPDIR/br" i
  local libs="source '$HUBBLE_ROOT/scripts/lib/common.sh'; source '$HUBBLE_ROOT/scripts/lib/art.sh'"
  mkdir -p "$br/root" "$br/a" "$br/b"
  expect_fail env HUBBLE_ART_BUILDROOT="$br/root" bash -c "$libs; trap art_umount_all EXIT
    art_lock_root; art_mount '$br/a' /hubble/x --bind; art_mount '$br/a' /hubble/x --bind
    art_mount '$br/b' /hubble/x --bind"
  contains "$out" "is a mount of another tree, not $br/b"
  ! mountpoint -q "$br/root/hubble/x" || fail "the mount outlived its run"
  # The holder closes bats' fd 3, which bats would otherwise wait on.
  env HUBBLE_ART_BUILDROOT="$br/root" bash -c "$libs; art_lock_root; touch '$br/held'; sleep 2" 3>&- &
  for ((i = 0; i < 600; i++)); do [ ! -e "$br/held" ] || break; sleep 0.1; done
  [ -e "$br/held" ] || fail "the first run never took the build root's lock"
  expect_ok env HUBBLE_ART_BUILDROOT="$br/root" bash -c "$libs; art_lock_root; echo got it"
  wait
  contains "$out" "waiting for another run using the build root $br/root"
  contains "$out" "got it"
}
