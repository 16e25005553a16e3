# shellcheck shell=bash
# Shared setup of the AOSP script tests, tests/aosp/*.bats (bats-core; each file does
# `load helpers`), run by tests/stages/50-aosp-scripts.sh:
#   - test_setup (every test): the repository root as working directory, pipefail, and a fake
#     device ($FAKE_DEV) and call log ($FAKE_LOG) of its own in $BATS_TEST_TMPDIR for the fakes
#     of tests/aosp/fake;
#   - make_bins (setup_file): $BASEBIN, the basic tools without adb, fastboot, repo or
#     launch_cvd (a developer may have them installed), and $FAKEBIN, the fake adb and fastboot;
#   - the fake AOSP tree, the fixture patches and run-tests, and the tree with them applied
#     (make_tree, make_patches, make_run_tests, make_applied_tree), in $BATS_FILE_TMPDIR;
#   - assertions that fail the test with a message: contains, lacks, expect_ok, expect_fail (the
#     command's output is then in $out), in_order (calls in the fake log, in this order).
# `bats tests/aosp` runs every case but the per-script shellcheck ones, which the stage generates
# (tests/aosp/gen-shellcheck-bats).
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/common.sh"

FAKE="$HUBBLE_ROOT/tests/aosp/fake"
# Made once per file (setup_file), read-only for the tests.
BASEBIN="$BATS_FILE_TMPDIR/basebin"
FAKEBIN="$BATS_FILE_TMPDIR/fakebin"       # adb + fastboot
TREE="$BATS_FILE_TMPDIR/aosp"             # the fake AOSP tree (make_tree)
PATCHES="$BATS_FILE_TMPDIR/art-patches"   # fixture art-patches (make_patches)
RUN_TESTS="$BATS_FILE_TMPDIR/run-tests"   # fixture tests/art-run-test (make_run_tests)
APPLIED="$BATS_FILE_TMPDIR/aosp-applied"  # $TREE after scripts/aosp-apply (make_applied_tree)

test_setup() {
  cd "$HUBBLE_ROOT" || return
  set -o pipefail
  export FAKE_LOG="$BATS_TEST_TMPDIR/calls.log" FAKE_DEV="$BATS_TEST_TMPDIR/dev"
}

# ---------------------------------------------------------------------------------- assertions
fail() { echo "ASSERTION: $*"; return 1; }
contains() { grep -qF -- "$2" <<<"$1" || fail "output lacks '$2'"$'\n'"--- output ---"$'\n'"$1"; }
lacks() { ! grep -qF -- "$2" <<<"$1" || fail "output has '$2'"; }
# expect_fail CMD...: the command must exit non-zero; its output is in $out.
expect_fail() { if out="$("$@" 2>&1)"; then fail "expected failure: $*"$'\n'"$out"; fi; }
# expect_ok CMD...: the command must exit zero; its output is in $out.
expect_ok() { out="$("$@" 2>&1)" || fail "failed ($?): $*"$'\n'"$out"; }
# The calls recorded in the fake log, in order, as one string.
calls() { cat "$FAKE_LOG" 2>/dev/null || true; }
# Assert that the lines matching each pattern appear in this order in the fake log.
in_order() {
  local pat prev=0 n
  for pat in "$@"; do
    n="$(grep -nF -- "$pat" "$FAKE_LOG" 2>/dev/null | head -1 | cut -d: -f1 || true)"
    [ -n "$n" ] || fail "no call matching '$pat' in:"$'\n'"$(calls)"
    [ "$n" -gt "$prev" ] || fail "'$pat' (line $n) comes before the previous step (line $prev):"$'\n'"$(calls)"
    prev="$n"
  done
}

# ---------------------------------------------------------------------------------- shellcheck
# Someone else's script (the cases of tests/aosp/gen-shellcheck-bats): fails at warning severity
# and above; its info/style findings are printed as notes (TAP comments on bats' fd 3) for its
# owner and the lead, without failing.
shellcheck_others() {
  local notes
  if ! notes="$(shellcheck -x -P SCRIPTDIR -f gcc "$1" 2>&1)"; then
    printf '# note  shellcheck info/style findings in %s (owner: see docs/architecture.md):\n' "$1" >&3
    printf '%s\n' "$notes" | sed -n '1,20s/^/#         | /p' >&3
  fi
  shellcheck -x -P SCRIPTDIR --severity=warning "$1"
}

# ------------------------------------------------------------------------- PATHs and the device
make_bins() {
  mkdir -p "$BASEBIN" "$FAKEBIN"
  local tool p
  for tool in bash sh env cat sed awk grep cut tr head tail sort uniq wc mkdir rm cp mv ln ls find \
              dirname basename date id df mktemp cmp paste seq sleep git rsync python3 printf touch \
              chmod readlink uname java stat realpath tee xargs; do
    if p="$(command -v "$tool" 2>/dev/null)"; then ln -sf "$p" "$BASEBIN/$tool"; fi
  done
  ln -sf "$FAKE/adb" "$FAKEBIN/adb"
  ln -sf "$FAKE/fastboot" "$FAKEBIN/fastboot"
}
with_fakes() { PATH="$FAKEBIN:$BASEBIN" "$@"; }
no_tools() { PATH="$BASEBIN" "$@"; }
reset_device() {
  rm -rf "$FAKE_DEV" "$FAKE_LOG"; mkdir -p "$FAKE_DEV/props" "$FAKE_DEV/fs/data/data"
}
# A system property of the fake device.
prop() { cat "$FAKE_DEV/props/$1" 2>/dev/null || true; }

# ----------------------------------------------------------------------------- the fake AOSP tree
# A fake AOSP tree: build/envsetup.sh (fake lunch and m), art/ as a git repo holding the files
# the fixture patches touch and the ART test tools the run-test driver checks for.
make_tree() {  # make_tree DIR
  local top="$1" s where
  mkdir -p "$top/build" "$top/art/runtime" "$top/art/tools" "$top/art/test/testrunner" "$top/external/rust/cxx"
  cp "$FAKE/envsetup.sh" "$top/build/envsetup.sh"
  printf 'libart_cc_defaults {\n    name: "libart_defaults",\n    whole_static_libs: [\n        "libcpu_features",\n    ],\n}\n' > "$top/art/runtime/Android.bp"
  printf 'int main() { return 0; }\n' > "$top/art/runtime/runtime.cc"
  for s in buildbot-build.sh buildbot-setup-device.sh buildbot-sync.sh buildbot-teardown-device.sh buildbot-cleanup-device.sh; do
    # shellcheck disable=SC2016  # $* and $FAKE_LOG are for the generated script
    printf '#!/bin/sh\necho "%s $*" >> "$FAKE_LOG"\n' "$s" > "$top/art/tools/$s"; chmod +x "$top/art/tools/$s"
  done
  # shellcheck disable=SC2016  # same
  printf '#!/bin/sh\necho "testrunner.py $*" >> "$FAKE_LOG"\n' > "$top/art/test/testrunner/testrunner.py"
  chmod +x "$top/art/test/testrunner/testrunner.py"
  git -C "$top/art" init -q
  git -C "$top/art" -c user.email=t@example.com -c user.name=t add -A
  git -C "$top/art" -c user.email=t@example.com -c user.name=t commit -q -m "android-14.0.0_r15 (fake)"
  git -C "$top/art" config user.email t@example.com
  git -C "$top/art" config user.name t
  while read -r _ where _; do
    case "$where" in ''|external/*) mkdir -p "$top/$where" ;; esac
  done < <(grep -v '^#' "$HUBBLE_ROOT/tests/aosp/aosp-modules.txt")
}
# Fixture patches against the fake tree: 0001 links libhubble_runtime into libart, 0002 edits
# the line 0001 added (so it applies only on top of 0001), 0003 conflicts.
make_patches() {  # make_patches DIR TREE
  local dir="$1" top="$2" scratch="$BATS_FILE_TMPDIR/patchgen"
  rm -rf "$scratch" "$dir"; mkdir -p "$dir/patches" "$dir/files/runtime/hubble"
  cp -a "$top/art" "$scratch"
  (
    cd "$scratch" || exit
    sed -i 's/"libcpu_features",/"libcpu_features",\n        "libhubble_runtime",/' runtime/Android.bp
    git commit -qam "runtime/Android.bp: link libhubble_runtime"
    sed -i 's/"libhubble_runtime",/"libhubble_runtime", \/\/ Hubble/' runtime/Android.bp
    git commit -qam "runtime/Android.bp: comment"
    git format-patch -q -2 -o "$dir/patches"
    sed -i 's/return 0;/return 1;/' runtime/runtime.cc
    git commit -qam "unrelated"
    git format-patch -q -1 --start-number 3 -o "$dir/patches"
  )
  # 0003 is made to conflict: its context no longer matches the tree.
  sed -i 's/^-int main() { return 0; }/-int main() { return 42; }/' "$dir/patches/0003-unrelated.patch"
  printf '# fixture series\n0001-runtime-Android.bp-link-libhubble_runtime.patch\n0002-runtime-Android.bp-comment.patch\n' > "$dir/series"
  printf '// new ART file\n' > "$dir/files/runtime/hubble/sample.cc"
}
# Fixture run-tests (tests/art-run-test layout): scripts/aosp-apply copies them to art/test/.
make_run_tests() {  # make_run_tests DIR
  rm -rf "$1"; mkdir -p "$1/2270-hubble-transitions/src"
  printf 'public class Main {}\n' > "$1/2270-hubble-transitions/src/Main.java"
  # shellcheck disable=SC2016  # ${RUN} and $@ are for the generated script
  printf '#!/bin/bash\nexec ${RUN} "$@"\n' > "$1/2270-hubble-transitions/run"; chmod +x "$1/2270-hubble-transitions/run"
  mkdir -p "$1/2271-hubble-tasks/src"
  printf 'public class Main {}\n' > "$1/2271-hubble-tasks/src/Main.java"
  # shellcheck disable=SC2016  # same
  printf '#!/bin/bash\nexec ${RUN} "$@"\n' > "$1/2271-hubble-tasks/run"; chmod +x "$1/2271-hubble-tasks/run"
  printf 'not a run-test dir\n' > "$1/build-java.sh"
}
# $APPLIED: a copy of $TREE with the fixture patches and run-tests applied and this repository
# installed by scripts/aosp-apply (the cases "aosp-apply: applies in order, ..." check that run):
# the tree the aosp-build, aosp-flash, aosp-cuttlefish and run-art-test cases start from.
make_applied_tree() {
  rm -rf "$APPLIED"; cp -a "$TREE" "$APPLIED"
  local log="$BATS_FILE_TMPDIR/aosp-applied.log"
  if ! HUBBLE_ART_PATCHES="$PATCHES" HUBBLE_ART_RUN_TESTS="$RUN_TESTS" \
      "$HUBBLE_ROOT/scripts/aosp-apply" --aosp "$APPLIED" >"$log" 2>&1; then
    cat "$log"; return 1
  fi
}
# applied_tree: sets APPLY_TREE to this test's own copy of $APPLIED (the cases add files to it).
applied_tree() {
  APPLY_TREE="$BATS_TEST_TMPDIR/aosp-apply"
  cp -a "$APPLIED" "$APPLY_TREE"
}
