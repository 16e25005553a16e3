#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# ART proving ground: fetch AOSP ART android-14.0.0_r15 (Debian's android-platform-art
# 14.0.0+r15), apply art-patches/, compile every file the series adds or changes in the trixie
# build root, check art-patches/thread-offsets.txt; and prove apply fails loudly on a broken
# or fuzzy patch (tests/fixtures/art-patches-{broken,fuzz}) and never writes into a pristine
# tree shared through a symlink (tests/art-apply-symlinked-pristine.sh). The whole libart.so (--full) is
# built by the next stage (31-art-full, tests/art-full.sh); see docs/art-integration.md.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT"

# 0. The build root's mounts never reach the host: art_safe_rm unmounts what is bound into a
#    tree before removing it (a bound directory's files survive), and the chroot's /dev is its
#    own tmpfs, so the host's /dev/null stays a device through everything below.
# shellcheck source=../../scripts/lib/art.sh
source "$HUBBLE_ROOT/scripts/lib/art.sh"
safe_rm_selftest() {
  local t; t="$(mktemp -d)"
  mkdir -p "$t/root/inside" "$t/precious"
  echo keep > "$t/precious/file"
  hubble_as_root mount --bind "$t/precious" "$t/root/inside"
  art_safe_rm "$t/root"
  [ -f "$t/precious/file" ] || hubble_die "art_safe_rm removed files of a directory bound into the tree"
  [ ! -e "$t/root" ] || hubble_die "art_safe_rm left $t/root"
  rm -rf "$t"
  hubble_log "art_safe_rm: unmounted before removing, bound files kept"
}
safe_rm_selftest
host_dev_null_check() {
  [ -c /dev/null ] || hubble_die "the host's /dev/null is no longer a character device"
}
trap host_dev_null_check EXIT

# 1. A broken patch must fail apply, naming the patch, the file and the hunk; a patch that
#    needs fuzz must be refused. Checked first: it is fast and needs only the pristine tree.
hubble_step "art-fetch" scripts/art-fetch
fx_work="$(mktemp -d)"
trap 'rm -rf "$fx_work"; host_dev_null_check' EXIT
expect_apply_failure() {  # expect_apply_failure FIXTURE REGEX...
  local fixture="$1" out rc=0 re; shift
  out="$(scripts/art-apply --patches "tests/fixtures/$fixture" --work "$fx_work/w" --no-aosp-check 2>&1)" || rc=$?
  [ $rc -ne 0 ] || { printf '%s\n' "$out" >&2; hubble_die "$fixture: art-apply succeeded but must fail"; }
  for re in "$@"; do
    grep -qE "$re" <<<"$out" || { printf '%s\n' "$out" >&2; hubble_die "$fixture: art-apply output lacks /$re/"; }
  done
  [ ! -e "$fx_work/w/.hubble-applied" ] || hubble_die "$fixture: a work tree was produced despite the failure"
  hubble_log "$fixture: art-apply failed as it must"
}
expect_apply_failure art-patches-broken \
  '0001-broken-context\.patch: file runtime/thread\.h: Hunk #2 FAILED'
expect_apply_failure art-patches-fuzz \
  '0001-needs-fuzz\.patch: file runtime/thread\.h: Hunk #1 FAILED' 'would apply with fuzz; refused'
# ... and pristine stays untouched when the cache's pristine is a symlink to a shared tree.
"$HUBBLE_ROOT/tests/art-apply-symlinked-pristine.sh"

# 2. The real series.
hubble_step "art-apply" scripts/art-apply
hubble_step "art-build --touched" scripts/art-build --touched -j2
hubble_report_times
