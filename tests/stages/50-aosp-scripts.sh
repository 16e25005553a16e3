#!/usr/bin/env bash
# AOSP integration, everything that can be checked without AOSP or a device:
#   - shellcheck on every shell script in scripts/ and tests/ (everyone's, not only AOSP's:
#     theirs fail the stage at warning severity, info/style findings are printed as notes);
#   - --help and --dry-run of the AOSP scripts against a fake AOSP tree made here (fake
#     envsetup.sh whose lunch/m record their calls), with fake adb, fastboot and cuttlefish
#     tools on PATH that record calls: right commands, right order, clear errors when repo,
#     adb, fastboot or launch_cvd is missing;
#   - scripts/aosp-apply on fixture patches (per-patch conflict report, idempotent re-run);
#   - scripts/hubble-device against the fake adb (properties, ctl counter, run-as/root, pull);
#   - Android.bp: bpfmt and tests/aosp/bp_check.py (plus a broken copy that must fail);
#   - the Listing-1 benchmark: javac, host JVM run through run-bench.sh and the fake adb, and
#     the Table-2 arithmetic on fixtures (tests/device/test_bench.py).
# Ends with 'N passed, M failed'.
# shellcheck disable=SC2016  # single-quoted scripts are for inner shells, on purpose
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT"

FAKE="$HUBBLE_ROOT/tests/aosp/fake"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
passed=0 failed=0 failures=()

# t NAME FUNCTION: run FUNCTION in a subshell with its output in $WORK/log/NAME; show it on failure.
mkdir -p "$WORK/log"
t() {
  local name="$1"; shift
  local log="$WORK/log/${name//[^A-Za-z0-9_.-]/_}"
  # Not in an `if` or `||`: there bash ignores errexit in the subshell too (even with set -e in
  # it), and a failed assertion in the middle of a test would not fail it.
  local t_rc
  set +e
  ( set -euo pipefail; "$@" ) >"$log" 2>&1
  t_rc=$?
  set -e
  if [ "$t_rc" -eq 0 ]; then
    passed=$((passed + 1)); printf '  ok    %s\n' "$name"
  else
    failed=$((failed + 1)); failures+=("$name"); printf '  FAIL  %s\n' "$name"
    sed 's/^/        | /' "$log" | tail -40
  fi
}
# Assertions (fail the current test with a message).
fail() { echo "ASSERTION: $*"; return 1; }
contains() { grep -qF -- "$2" <<<"$1" || fail "output lacks '$2'"$'\n'"--- output ---"$'\n'"$1"; }
lacks() { ! grep -qF -- "$2" <<<"$1" || fail "output has '$2'"; }
# expect_fail CMD...: the command must exit non-zero; its output is in $out.
expect_fail() { if out="$("$@" 2>&1)"; then fail "expected failure: $*"$'\n'"$out"; fi; }
expect_ok() { out="$("$@" 2>&1)" || fail "failed ($?): $*"$'\n'"$out"; }
# The calls recorded in the fake log, in order, as one string.
calls() { cat "$FAKE_LOG" 2>/dev/null || true; }
# Assert that the lines matching each pattern appear in this order in the fake log.
in_order() {
  local pat prev=0 n
  for pat in "$@"; do
    n="$(grep -nF -- "$pat" "$FAKE_LOG" | head -1 | cut -d: -f1)"
    [ -n "$n" ] || fail "no call matching '$pat' in:"$'\n'"$(calls)"
    [ "$n" -gt "$prev" ] || fail "'$pat' (line $n) comes before the previous step (line $prev):"$'\n'"$(calls)"
    prev="$n"
  done
}

# A PATH with the basic tools but without adb, fastboot, repo, launch_cvd (they may be installed
# on a developer's machine): a bin dir of symlinks to what the scripts use.
BASEBIN="$WORK/basebin"
mkdir -p "$BASEBIN"
for tool in bash sh env cat sed awk grep cut tr head tail sort uniq wc mkdir rm cp mv ln ls find \
            dirname basename date id df mktemp cmp paste seq sleep git rsync python3 printf touch \
            chmod readlink uname java stat realpath tee xargs; do
  p="$(command -v "$tool" 2>/dev/null)" && ln -sf "$p" "$BASEBIN/$tool"
done
FAKEBIN="$WORK/fakebin"    # adb + fastboot
mkdir -p "$FAKEBIN"
ln -s "$FAKE/adb" "$FAKEBIN/adb"
ln -s "$FAKE/fastboot" "$FAKEBIN/fastboot"
export FAKE_LOG="$WORK/calls.log" FAKE_DEV="$WORK/dev"
with_fakes() { PATH="$FAKEBIN:$BASEBIN" "$@"; }
no_tools() { PATH="$BASEBIN" "$@"; }
reset_device() {
  rm -rf "$FAKE_DEV" "$FAKE_LOG"; mkdir -p "$FAKE_DEV/props" "$FAKE_DEV/fs/data/data"
}

# A fake AOSP tree: build/envsetup.sh (fake lunch and m), art/ as a git repo holding the files
# the fixture patches touch and the ART test tools the run-test driver checks for.
make_tree() {  # make_tree DIR
  local top="$1"
  mkdir -p "$top/build" "$top/art/runtime" "$top/art/tools" "$top/art/test/testrunner" "$top/external/rust/cxx"
  cp "$FAKE/envsetup.sh" "$top/build/envsetup.sh"
  printf 'libart_cc_defaults {\n    name: "libart_defaults",\n    whole_static_libs: [\n        "libcpu_features",\n    ],\n}\n' > "$top/art/runtime/Android.bp"
  printf 'int main() { return 0; }\n' > "$top/art/runtime/runtime.cc"
  for s in buildbot-build.sh buildbot-setup-device.sh buildbot-sync.sh buildbot-teardown-device.sh buildbot-cleanup-device.sh; do
    printf '#!/bin/sh\necho "%s $*" >> "$FAKE_LOG"\n' "$s" > "$top/art/tools/$s"; chmod +x "$top/art/tools/$s"
  done
  printf '#!/bin/sh\necho "testrunner.py $*" >> "$FAKE_LOG"\n' > "$top/art/test/testrunner/testrunner.py"
  chmod +x "$top/art/test/testrunner/testrunner.py"
  git -C "$top/art" init -q
  git -C "$top/art" -c user.email=t@example.com -c user.name=t add -A
  git -C "$top/art" -c user.email=t@example.com -c user.name=t commit -q -m "android-14.0.0_r15 (fake)"
  git -C "$top/art" config user.email t@example.com
  git -C "$top/art" config user.name t
  while read -r _ where _; do
    case "$where" in ''|external/*) mkdir -p "$top/$where" ;; esac
  done < <(grep -v '^#' tests/aosp/aosp-modules.txt)
}
# Fixture patches against the fake tree: 0001 links libhubble_runtime into libart, 0002 edits
# the line 0001 added (so it applies only on top of 0001), 0003 conflicts.
make_patches() {  # make_patches DIR TREE
  local dir="$1" top="$2" scratch="$WORK/patchgen"
  rm -rf "$scratch" "$dir"; mkdir -p "$dir/patches" "$dir/files/runtime/hubble"
  cp -a "$top/art" "$scratch"
  (
    cd "$scratch"
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
  printf '#!/bin/bash\nexec ${RUN} "$@"\n' > "$1/2270-hubble-transitions/run"; chmod +x "$1/2270-hubble-transitions/run"
  mkdir -p "$1/2271-hubble-tasks/src"
  printf 'public class Main {}\n' > "$1/2271-hubble-tasks/src/Main.java"
  printf '#!/bin/bash\nexec ${RUN} "$@"\n' > "$1/2271-hubble-tasks/run"; chmod +x "$1/2271-hubble-tasks/run"
  printf 'not a run-test dir\n' > "$1/build-java.sh"
}

TREE="$WORK/aosp"
make_tree "$TREE"
PATCHES="$WORK/art-patches"
make_patches "$PATCHES" "$TREE"
export HUBBLE_ART_PATCHES="$PATCHES"
make_run_tests "$WORK/run-tests"
export HUBBLE_ART_RUN_TESTS="$WORK/run-tests"

# ------------------------------------------------------------------------------- shellcheck
hubble_log "shellcheck"
shell_files=()
while IFS= read -r f; do
  if [[ "$f" == *.sh ]] || head -1 "$f" | grep -qE '^#!.*(bash|/sh)' || grep -q '^# shellcheck shell=' "$f"; then
    shell_files+=("$f")
  fi
done < <(find scripts tests -type f ! -name '*.py' ! -name '*.java' ! -name '*.txt' ! -name '*.patch' ! -name '*.md' ! -name '*.xml' ! -path '*/__pycache__/*' | LC_ALL=C sort)
# The AOSP scripts must be clean at every severity. Everyone else's are checked at warning and
# above (a failure there is a real defect); their info/style findings are printed as notes for
# their owners and the lead, without failing the stage.
aosp_owned() {
  case "$1" in
    scripts/aosp-*|scripts/hubble-device|scripts/lib/aosp.sh|tests/aosp/*|tests/device/*|tests/stages/50-*) return 0 ;;
    *) return 1 ;;
  esac
}
for f in "${shell_files[@]}"; do
  if aosp_owned "$f"; then
    t "shellcheck $f" shellcheck -x -P SCRIPTDIR "$f"
  else
    t "shellcheck --severity=warning $f" shellcheck -x -P SCRIPTDIR --severity=warning "$f"
    if ! notes="$(shellcheck -x -P SCRIPTDIR -f gcc "$f" 2>&1)"; then
      printf '  note  shellcheck info/style findings in %s (owner: see docs/architecture.md):\n' "$f"
      printf '%s\n' "$notes" | sed 's/^/        | /' | head -20
    fi
  fi
done

# ------------------------------------------------------------------------------- --help
hubble_log "--help"
AOSP_SCRIPTS=(scripts/aosp-checkout scripts/aosp-apply scripts/aosp-build scripts/aosp-flash
              scripts/aosp-cuttlefish scripts/hubble-device tests/device/run-bench.sh
              tests/device/run-art-test.sh)
help_ok() {
  expect_ok no_tools "$1" --help
  contains "$out" "$(basename "$1")"
  contains "$out" "--dry-run"
}
for s in "${AOSP_SCRIPTS[@]}"; do t "help $s" help_ok "$s"; done
t "unknown option is refused" bash -c '! scripts/aosp-build --bogus 2>/dev/null'

# ------------------------------------------------------------------------------- missing tools
hubble_log "missing prerequisites"
missing_repo() {
  expect_fail no_tools scripts/aosp-checkout --dir "$WORK/co" --dry-run
  contains "$out" "'repo' not found on PATH"
  contains "$out" "apt-get install repo"
}
t "aosp-checkout: missing repo" missing_repo
checkout_dry() {
  mkdir -p "$WORK/repobin"; printf '#!/bin/sh\necho "repo $*" >> "$FAKE_LOG"\n' > "$WORK/repobin/repo"; chmod +x "$WORK/repobin/repo"
  rm -f "$FAKE_LOG"
  expect_ok env HOME="$WORK/home" GIT_CONFIG_GLOBAL="$WORK/gitconfig" PATH="$WORK/repobin:$BASEBIN" \
    bash -c 'git config --global user.email a@b; git config --global user.name a; scripts/aosp-checkout --dir "$0/co" --dry-run -j 4' "$WORK"
  contains "$out" "+ repo init -u https://android.googlesource.com/platform/manifest -b android-14.0.0_r15"
  contains "$out" "+ repo sync -c --no-tags -j4"
  [ ! -e "$FAKE_LOG" ] || fail "dry run ran repo: $(calls)"
  [ ! -e "$WORK/co" ] || fail "dry run created the checkout dir"
}
t "aosp-checkout: dry run prints repo init + sync, runs nothing" checkout_dry
missing_adb() {
  expect_fail no_tools scripts/hubble-device status
  contains "$out" "'adb' not found on PATH"
}
t "hubble-device: missing adb" missing_adb
no_tree() {
  expect_fail env -u ANDROID_BUILD_TOP bash -c 'cd "$1" && "$2"/scripts/aosp-build --dry-run' _ "$WORK" "$HUBBLE_ROOT"
  contains "$out" "no AOSP checkout"
  mkdir -p "$WORK/notaosp"
  expect_fail scripts/aosp-build --aosp "$WORK/notaosp" --dry-run
  contains "$out" "build/envsetup.sh is missing"
  contains "$out" "repo init"
}
t "aosp-build: no AOSP tree" no_tree
missing_fastboot() {
  mkdir -p "$TREE/out/target/product/oriole"; touch "$TREE/out/target/product/oriole/android-info.txt"
  expect_fail no_tools scripts/aosp-flash --aosp "$TREE" --target pixel:oriole --dry-run
  contains "$out" "fastboot: not on PATH and not in $TREE/out/host/linux-x86/bin"
  contains "$out" "adb: not on PATH"
}
t "aosp-flash: missing fastboot and adb" missing_fastboot
missing_launch_cvd() {
  expect_fail env HUBBLE_HOST_ARCH=aarch64 HUBBLE_KVM_DEV="$WORK/kvm" HUBBLE_TEST_GROUPS="kvm cvdnetwork render" \
    PATH="$FAKEBIN:$BASEBIN" scripts/aosp-cuttlefish start --aosp "$TREE" --dry-run
  contains "$out" "launch_cvd: not in $TREE/out/host/linux-x86/bin nor on PATH"
  contains "$out" "/dev/kvm: enable virtualization"
  contains "$out" "has no system.img/super.img"
}
t "aosp-cuttlefish: missing launch_cvd, kvm, images" missing_launch_cvd

# ------------------------------------------------------------------------------- aosp-apply
hubble_log "aosp-apply"
APPLY_TREE="$WORK/aosp-apply"
apply_conflict() {
  rm -rf "$APPLY_TREE"; cp -a "$TREE" "$APPLY_TREE"
  local p="$WORK/ap-conflict"; rm -rf "$p"; cp -a "$PATCHES" "$p"
  printf '0003-unrelated.patch\n' >> "$p/series"
  expect_fail env HUBBLE_ART_PATCHES="$p" scripts/aosp-apply --aosp "$APPLY_TREE" --dry-run --no-install
  contains "$out" "0001-runtime-Android.bp-link-libhubble_runtime.patch"
  grep -qE '0001-runtime-Android.bp-link-libhubble_runtime.patch +applies' <<<"$out" || fail "0001 not 'applies': $out"
  grep -qE '0002-runtime-Android.bp-comment.patch +applies' <<<"$out" || fail "0002 (on top of 0001) not 'applies': $out"
  grep -qE '0003-unrelated.patch +CONFLICT' <<<"$out" || fail "0003 not reported as CONFLICT: $out"
  contains "$out" "runtime/runtime.cc"
  contains "$out" "1 conflicting patch(es)"
  [ -z "$(git -C "$APPLY_TREE/art" status --porcelain)" ] || fail "dry run changed art/"
  # A real apply refuses and changes nothing.
  expect_fail env HUBBLE_ART_PATCHES="$p" scripts/aosp-apply --aosp "$APPLY_TREE" --no-install
  contains "$out" "nothing applied"
  [ "$(git -C "$APPLY_TREE/art" rev-list --count HEAD)" = 1 ] || fail "commits were made"
}
t "aosp-apply: dry run reports conflicts per patch" apply_conflict
apply_real() {
  rm -rf "$APPLY_TREE"; cp -a "$TREE" "$APPLY_TREE"
  expect_ok scripts/aosp-apply --aosp "$APPLY_TREE" --dry-run
  contains "$out" "2 to apply, 0 already applied"
  contains "$out" "would copy"
  expect_ok scripts/aosp-apply --aosp "$APPLY_TREE"
  [ "$(git -C "$APPLY_TREE/art" log --format=%s | tr '\n' '|')" = \
    "runtime/Android.bp: comment|runtime/Android.bp: link libhubble_runtime|Hubble: add the new ART files of art-patches/files|android-14.0.0_r15 (fake)|" ] \
    || fail "unexpected art/ history: $(git -C "$APPLY_TREE/art" log --oneline)"
  grep -q '"libhubble_runtime", // Hubble' "$APPLY_TREE/art/runtime/Android.bp" || fail "patches not in art/runtime/Android.bp"
  [ -f "$APPLY_TREE/art/runtime/hubble/sample.cc" ] || fail "files/ not copied"
  [ -f "$APPLY_TREE/art/test/2270-hubble-transitions/src/Main.java" ] || fail "run-test not copied to art/test/"
  [ -x "$APPLY_TREE/art/test/2270-hubble-transitions/run" ] || fail "run-test's run script lost its exec bit"
  [ ! -e "$APPLY_TREE/art/test/build-java.sh" ] || fail "a non-test file of tests/art-run-test was copied"
  [ -z "$(git -C "$APPLY_TREE/art" status --porcelain)" ] || fail "art/ left dirty: $(git -C "$APPLY_TREE/art" status --porcelain)"
  [ -f "$APPLY_TREE/external/hubble/Android.bp" ] || fail "repository not installed as external/hubble"
  [ -f "$APPLY_TREE/external/hubble/rust/runtime/Cargo.toml" ] || fail "rust/ not installed"
  [ ! -e "$APPLY_TREE/external/hubble/.git" ] || fail ".git copied"
  # Idempotent.
  expect_ok scripts/aosp-apply --aosp "$APPLY_TREE" --no-install
  grep -qE '0001-.* +already applied' <<<"$out" || fail "re-run: 0001 not 'already applied': $out"
  grep -qE '0002-.* +already applied' <<<"$out" || fail "re-run: 0002 not 'already applied': $out"
  contains "$out" "0 patch(es) applied, 2 already applied"
}
t "aosp-apply: applies in order, installs, re-run is a no-op" apply_real
apply_missing_crates() {
  local tree="$WORK/aosp-nocrates"; rm -rf "$tree"; cp -a "$TREE" "$tree"; rm -rf "$tree/external/rust/cxx"
  expect_fail scripts/aosp-apply --aosp "$tree" --dry-run
  contains "$out" "external/rust/cxx (defines libcxx, which Android.bp needs) is not in the tree"
}
t "aosp-apply: reports AOSP crates Android.bp needs" apply_missing_crates

# The real series on the real tree: the pure AOSP art/ of android-14.0.0_r15 that the proving
# ground fetched (stage 30, scripts/art-fetch) as a git checkout inside a fake AOSP top.
AOSP_ART="$HUBBLE_CACHE/art/aosp"
real_series() {
  local top="$WORK/realtree" n
  mkdir -p "$top/build"; cp "$FAKE/envsetup.sh" "$top/build/"
  cp -al "$AOSP_ART" "$top/art" 2>/dev/null || cp -a "$AOSP_ART" "$top/art"
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
    before="$(git -C "$top/art" show "HEAD~$n:$bp" > "$WORK/pristine.bp" && bpfmt -d "$WORK/pristine.bp")"
    [ "$(wc -l <<<"$after")" -le "$(wc -l <<<"$before")" ] || fail "the series leaves art/$bp less bpfmt-clean:"$'\n'"$after"
  done < <(git -C "$top/art" diff --name-only "HEAD~$n" -- '*.bp')
  rm -rf "$top"
}
if [ -d "$AOSP_ART/runtime" ] && [ -s art-patches/series ]; then
  t "aosp-apply: the real series with git am on android-14.0.0_r15's art/ (from stage 30's cache)" real_series
elif [ "${CI:-}" = true ]; then
  # Stage 30 fetches ART before this stage: under CI a missing tree is a broken run, not a skip.
  fail "the real series on the real art/ cannot be checked: $AOSP_ART not fetched (scripts/art-fetch)"
else
  printf '  skip  the real series on the real art/ (%s not fetched: scripts/art-fetch)\n' "$AOSP_ART"
fi

# A run-test's native code is built into ART's libarttest only when art/test/Android.bp lists it
# (libarttest-defaults srcs): without it the run-test's native methods do not link on a device.
# Patch 0030 adds ours; every run-test source must be in a patch's added Android.bp lines.
while IFS= read -r cc; do
  rel="${cc#tests/art-run-test/}"
  grep -qsE "^\+.*\"${rel//./\\.}\"" art-patches/patches/*.patch \
    || fail "$cc is not added to art/test/Android.bp (libarttest-defaults srcs) by any patch: on a device the run-test's native methods will not load"
done < <(find tests/art-run-test -mindepth 2 -name '*.cc' 2>/dev/null | LC_ALL=C sort)
hubble_log "every run-test's native source is built into libarttest by the series"

# Every new ART C++ file must be in its module's Android.bp srcs through the series (the host
# build picks them up by directory, Soong only by name): hubble_bridge.cc was missing from
# runtime/Android.bp until 0003 listed it, which would have left libart unlinkable on AOSP.
while IFS= read -r f; do
  rel="${f#*/}"
  grep -qsE "^\+.*\"${rel//./\\.}\"" art-patches/patches/*.patch \
    || fail "art-patches/files/$f is in no Android.bp srcs added by the series: Soong would not build it"
done < <(cd art-patches/files && find . -name '*.cc' ! -name '*_test.cc' | sed 's|^\./||' | LC_ALL=C sort)
hubble_log "every new ART source is in an Android.bp srcs list of the series"

# ------------------------------------------------------------------------------- aosp-build
hubble_log "aosp-build"
build_cf() {
  rm -f "$FAKE_LOG"
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
t "aosp-build: cuttlefish arm64, commands in order; dry run runs nothing" build_cf
build_unpatched() {
  expect_fail scripts/aosp-build --aosp "$TREE" --dry-run
  contains "$out" "external/hubble/Android.bp: the Hubble repository is not in the tree"
  contains "$out" "does not link libhubble_runtime"
}
t "aosp-build: refuses an unpatched tree" build_unpatched
build_pixel() {
  expect_fail scripts/aosp-build --aosp "$APPLY_TREE" --target pixel:oriole --dry-run
  contains "$out" "vendor/google_devices/oriole"
  contains "$out" "developers.google.com/android/drivers"
  mkdir -p "$APPLY_TREE/vendor/google_devices/oriole"
  expect_ok scripts/aosp-build --aosp "$APPLY_TREE" --target pixel:oriole --variant eng --dry-run
  contains "$out" "+ lunch aosp_oriole-eng"
  expect_fail scripts/aosp-build --aosp "$APPLY_TREE" --target aosp_oriole-userdebug --dry-run
  contains "$out" "not a lunch combo"
}
t "aosp-build: Pixel target needs vendor images" build_pixel
build_release() {
  local tree="$WORK/aosp-release"; rm -rf "$tree"; cp -a "$APPLY_TREE" "$tree"
  mkdir -p "$tree/build/release/release_configs"; touch "$tree/build/release/release_configs/trunk_staging.textproto"
  expect_ok scripts/aosp-build --aosp "$tree" --dry-run
  contains "$out" "+ lunch aosp_cf_arm64_phone-trunk_staging-userdebug"
  expect_ok scripts/aosp-build --aosp "$APPLY_TREE" --release ap1a --dry-run
  contains "$out" "+ lunch aosp_cf_arm64_phone-ap1a-userdebug"
}
t "aosp-build: release configs (3-part lunch) when the tree has them" build_release
build_absent_crates() {
  local tree="$WORK/aosp-noinferno"; rm -rf "$tree"; cp -a "$APPLY_TREE" "$tree"; rm -rf "$tree/external/rust/crates/inferno"
  rm -f "$FAKE_LOG"
  expect_ok scripts/aosp-build --aosp "$tree"
  contains "$out" "the tree lacks libinferno"
  in_order "lunch | aosp_cf_arm64_phone-userdebug" "m | ALLOW_MISSING_DEPENDENCIES | droid HubbleBench"
  rm -f "$FAKE_LOG"
  expect_ok scripts/aosp-build --aosp "$APPLY_TREE"
  in_order "m | droid hubble HubbleBench"
}
t "aosp-build: a tree without an imported crate builds with ALLOW_MISSING_DEPENDENCIES" build_absent_crates

# ------------------------------------------------------------------------------- aosp-flash
hubble_log "aosp-flash"
flash_setup() {
  reset_device
  mkdir -p "$APPLY_TREE/out/target/product/oriole"; touch "$APPLY_TREE/out/target/product/oriole/android-info.txt"
  echo 1 > "$FAKE_DEV/props/sys.boot_completed"
}
flash_ok() {
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
t "aosp-flash: reboot bootloader, check unlock, flashall, wait for boot" flash_ok
flash_locked() {
  flash_setup; echo bootloader > "$FAKE_DEV/state"; touch "$FAKE_DEV/locked"
  expect_fail with_fakes scripts/aosp-flash --aosp "$APPLY_TREE" --target pixel:oriole
  contains "$out" "bootloader of emulator-5554 is locked"
  contains "$out" "fastboot flashing unlock"
  lacks "$(calls)" "flashall"
}
t "aosp-flash: refuses a locked bootloader" flash_locked
flash_no_device() {
  flash_setup; echo absent > "$FAKE_DEV/state"
  expect_fail with_fakes scripts/aosp-flash --aosp "$APPLY_TREE" --target pixel:oriole
  contains "$out" "no device attached"
  expect_fail with_fakes scripts/aosp-flash --aosp "$APPLY_TREE" --target cf
  contains "$out" "scripts/aosp-cuttlefish start"
}
t "aosp-flash: no device; cuttlefish is not flashed" flash_no_device

# ------------------------------------------------------------------------------- cuttlefish
hubble_log "aosp-cuttlefish"
cf_setup() {
  reset_device; echo 0.0.0.0:6520 > "$FAKE_DEV/serial"; echo 1 > "$FAKE_DEV/props/sys.boot_completed"
  local bin="$APPLY_TREE/out/host/linux-x86/bin" prod="$APPLY_TREE/out/target/product/cf_arm64_phone"
  mkdir -p "$bin" "$prod"; touch "$prod/super.img" "$WORK/kvm"
  for x in launch_cvd stop_cvd cvd_status; do ln -sf "$FAKE/cvd-tool" "$bin/$x"; done
}
cf_env() { env HUBBLE_HOST_ARCH=aarch64 HUBBLE_KVM_DEV="$WORK/kvm" HUBBLE_TEST_GROUPS="kvm cvdnetwork render" PATH="$FAKEBIN:$BASEBIN" "$@"; }
cf_start() {
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
t "aosp-cuttlefish: launch_cvd --daemon, wait for boot, stop_cvd" cf_start
cf_host() {
  cf_setup
  expect_fail env HUBBLE_HOST_ARCH=x86_64 HUBBLE_KVM_DEV="$WORK/kvm" HUBBLE_TEST_GROUPS="kvm" PATH="$FAKEBIN:$BASEBIN" \
    scripts/aosp-cuttlefish start --aosp "$APPLY_TREE"
  contains "$out" "needs an arm64 host with KVM (this host is x86_64)"
  contains "$out" "group cvdnetwork"
  lacks "$(calls)" "launch_cvd"
  expect_ok env HUBBLE_HOST_ARCH=x86_64 HUBBLE_KVM_DEV="$WORK/nokvm" HUBBLE_TEST_GROUPS="kvm cvdnetwork render" PATH="$FAKEBIN:$BASEBIN" \
    scripts/aosp-cuttlefish start --aosp "$APPLY_TREE" --vm-manager qemu_cli --dry-run
  contains "$out" "--vm_manager=qemu_cli"
}
t "aosp-cuttlefish: arm64 guest on an x86_64 host, groups" cf_host

# ------------------------------------------------------------------------------- hubble-device
hubble_log "hubble-device"
PKG=com.example.app
DEVDIR="/data/data/$PKG/files/hubble"
dev_setup() {
  reset_device
  mkdir -p "$FAKE_DEV/fs$DEVDIR"
  printf 'trace-one' > "$FAKE_DEV/fs$DEVDIR/1700000000000-4242-4242-adb.hubble"
  printf 'trace-two' > "$FAKE_DEV/fs$DEVDIR/1700000000500-4242-4250-anr.hubble"
  printf 'partial' > "$FAKE_DEV/fs$DEVDIR/.1700000000900-4242-4242-adb.hubble.tmp"
  echo "$PKG" > "$FAKE_DEV/debuggable"
}
hd() { with_fakes scripts/hubble-device "$@"; }
prop() { cat "$FAKE_DEV/props/$1" 2>/dev/null || true; }
dev_enable() {
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
t "hubble-device: enable/disable/consent set the properties" dev_enable
dev_ctl() {
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
t "hubble-device: start/stop/flush/threads/config write debug.hubble.ctl with #n" dev_ctl
dev_dry() {
  dev_setup
  expect_ok hd --dry-run enable "$PKG" --restart
  contains "$out" "+ adb shell setprop\\ persist.hubble.consent\\ \\'1\\'"
  [ -z "$(prop persist.hubble.consent)" ] || fail "dry run set consent"
  lacks "$(calls)" "setprop"
  lacks "$(calls)" "force-stop"
}
t "hubble-device: --dry-run changes nothing" dev_dry
dev_selinux() {
  dev_setup; echo persist.hubble.consent > "$FAKE_DEV/deny_props"
  expect_fail hd enable "$PKG"
  contains "$out" "setprop persist.hubble.consent did not take"
  contains "$out" "SELinux"
}
t "hubble-device: a refused setprop is reported" dev_selinux
fake_hubble() {
  mkdir -p "$WORK/hb"
  cat > "$WORK/hb/hubble" <<'EOF'
#!/bin/sh
echo "hubble $*" >> "$FAKE_LOG"
case "$1" in
  info) grep -q '^trace-' "$2" ;;
  export) [ "$2" = --help ] && exit 0; printf 'exported' > "$5" ;;
esac
EOF
  chmod +x "$WORK/hb/hubble"
}
dev_pull_runas() {
  dev_setup; fake_hubble
  expect_ok hd enable "$PKG"
  expect_ok hd list
  contains "$out" "$PKG ($DEVDIR, via run-as):"
  contains "$out" "1700000000000-4242-4242-adb.hubble"
  lacks "$out" ".tmp"
  expect_ok hd --hubble "$WORK/hb/hubble" pull "$WORK/pulled" --export perfetto
  cmp -s "$WORK/pulled/$PKG/1700000000000-4242-4242-adb.hubble" "$FAKE_DEV/fs$DEVDIR/1700000000000-4242-4242-adb.hubble" || fail "file 1 differs"
  cmp -s "$WORK/pulled/$PKG/1700000000500-4242-4250-anr.hubble" "$FAKE_DEV/fs$DEVDIR/1700000000500-4242-4250-anr.hubble" || fail "file 2 differs"
  [ ! -e "$WORK/pulled/$PKG/.1700000000900-4242-4242-adb.hubble.tmp" ] || fail "a .tmp file was pulled"
  in_order "exec-out | run-as $PKG cat files/hubble/1700000000000-4242-4242-adb.hubble" \
    "hubble info $WORK/pulled/$PKG/1700000000000-4242-4242-adb.hubble" \
    "hubble export --format perfetto --output $WORK/pulled/$PKG/1700000000000-4242-4242-adb.perfetto-trace"
  [ "$(cat "$WORK/pulled/$PKG/1700000000500-4242-4250-anr.perfetto-trace")" = exported ] || fail "no export output"
}
t "hubble-device: list and pull via run-as, then hubble info/export" dev_pull_runas
dev_pull_root() {
  dev_setup; fake_hubble; : > "$FAKE_DEV/debuggable"
  expect_fail hd list "$PKG"
  contains "$out" "only debuggable apps"
  contains "$out" "--root"
  expect_ok hd --root --hubble "$WORK/hb/hubble" pull "$WORK/pulled-root" "$PKG"
  in_order "adb | root" "adb | pull | $DEVDIR/1700000000000-4242-4242-adb.hubble"
  cmp -s "$WORK/pulled-root/$PKG/1700000000500-4242-4250-anr.hubble" "$FAKE_DEV/fs$DEVDIR/1700000000500-4242-4250-anr.hubble" || fail "root pull differs"
  printf 'garbage' > "$FAKE_DEV/fs$DEVDIR/1700000000600-1-1-adb.hubble"
  expect_fail hd --root --hubble "$WORK/hb/hubble" pull "$WORK/pulled-bad" "$PKG"
  contains "$out" "do not read as Hubble traces"
}
t "hubble-device: non-debuggable app needs --root; bad files are caught" dev_pull_root
# hubble-device calls the real CLI as `hubble info FILE` and `hubble export --format F --output
# OUT FILE`: check that contract against the hubble binary of this tree.
cli_contract() {
  local hubble="rust/target/debug/hubble"
  if [ ! -x "$hubble" ]; then (cd rust && nice cargo build -q -p hubble-cli --locked); fi
  expect_ok "$hubble" export --help
  contains "$out" "--format"
  contains "$out" "--output"
  local f
  for f in perfetto trace chrome-json folded svg nanoscope; do contains "$out" "$f"; done
  printf 'not a trace' > "$WORK/garbage.hubble"
  expect_fail "$hubble" info "$WORK/garbage.hubble"
}
t "hubble-device: the hubble CLI takes the info/export arguments it passes" cli_contract
dev_no_device() {
  dev_setup; echo absent > "$FAKE_DEV/state"
  expect_fail hd status
  contains "$out" "no device reachable over adb"
}
t "hubble-device: no device" dev_no_device

# ------------------------------------------------------------------------------- run-test driver
hubble_log "run-art-test"
art_test() {
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
t "run-art-test: chroot steps in order, properties restored" art_test

# ------------------------------------------------------------------------------- Android.bp
hubble_log "Android.bp"
t "bpfmt: Android.bp parses and is formatted" bash -c 'd="$(bpfmt -d Android.bp)" && [ -z "$d" ] || { echo "$d"; exit 1; }'
t "bp_check: parser self-test" python3 tests/aosp/bp_check.py --self-test
t "bp_check: Android.bp consistent with the repository" python3 tests/aosp/bp_check.py
bp_broken() {
  local root="$WORK/bproot"; rm -rf "$root"; mkdir -p "$root"
  # Only the sources (never rust/target, which is gigabytes).
  rsync -a --exclude=/rust/target --exclude=/rust/fuzz --include='/Android.bp' --include='/rust/***' \
    --include='/tests/' --include='/tests/aosp/***' --include='/art-patches/***' --exclude='*' ./ "$root/"
  sed -i 's|"rust/format/src/lib.rs"|"rust/format/src/missing.rs"|; s|"libcrc32fast"|"libcrc32fast_typo"|; s|features: \["std"\],||' "$root/Android.bp"
  expect_fail python3 tests/aosp/bp_check.py --root "$root"
  contains "$out" "'rust/format/src/missing.rs' matches no file"
  contains "$out" "names 'libcrc32fast_typo', defined neither here nor in"
  contains "$out" "depends on 'crc32fast' but rustlibs lacks 'libcrc32fast'"
  contains "$out" "enables feature 'std' by default; Soong enables none by default"
  printf 'rust_library {\n    name: "x"\n    srcs: [],\n}\n' > "$root/Android.bp"
  expect_fail python3 tests/aosp/bp_check.py --root "$root"
  contains "$out" "parse error"
}
t "bp_check: catches a broken Android.bp" bp_broken

# The cxxbridge genrules' commands, run as Soong would (cxxbridge-cmd at rust/Cargo.lock's cxx
# version, built once into $HUBBLE_CACHE): on a sample bridge always, on the runtime crate's own
# bridge once it has one.
genrules_sample() {
  local root="$WORK/cxxroot"; rm -rf "$root"; mkdir -p "$root/rust/runtime/src" "$root/tests/aosp"
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
  expect_ok tests/aosp/run-cxxbridge-genrules.sh --root "$root" "$WORK/gen-sample"
  contains "$out" "ran 2 cxxbridge genrule(s)"
  # cxx's header declares the Rust functions for ART to call; the C++ callees are declared by
  # the header the bridge includes (hubble_bridge.h) and called from the generated source.
  grep -q 'void hubble_sample_attached(' "$WORK/gen-sample/hubble/runtime_bridge.rs.h" || fail "header lacks the Rust function"
  grep -q 'hubble_sample_attached' "$WORK/gen-sample/hubble/runtime_bridge.rs.cc" || fail "source lacks the Rust shim"
  grep -q '::hubble::hubble_sample_pretty_method' "$WORK/gen-sample/hubble/runtime_bridge.rs.cc" || fail "source does not call the C++ callee"
  grep -q '#include "hubble/hubble_bridge.h"' "$WORK/gen-sample/hubble/runtime_bridge.rs.cc" || fail "source does not include the bridge's C++ header"
}
t "cxxbridge genrules: Android.bp's commands on a sample bridge" genrules_sample
rc=0; out="$(tests/aosp/run-cxxbridge-genrules.sh "$WORK/gen-runtime" 2>&1)" || rc=$?
if [ "$rc" = 3 ] && [ "${CI:-}" = true ]; then
  fail "cxxbridge genrules on rust/runtime cannot run under CI: $out"
elif [ "$rc" = 3 ]; then
  printf '  skip  cxxbridge genrules on rust/runtime (%s)\n' "$out"
else
  genrules_runtime() { [ "$rc" = 0 ] || fail "$out"; echo "$out"; }
  t "cxxbridge genrules: Android.bp's commands on rust/runtime's bridge" genrules_runtime
fi

# ------------------------------------------------------------------------------- benchmark
hubble_log "Listing-1 benchmark"
CLASSES="$WORK/classes"
t "javac: benchmark sources (+ SDK stubs), -Xlint:all -Werror" bash -c \
  'mkdir -p "$0" && javac -Xlint:all -Werror -d "$0" $(find tests/device/bench/src tests/device/bench/stubs -name "*.java")' "$CLASSES"
t "bench: Table-2 arithmetic, refusals, host JVM run (python unittest)" \
  env HUBBLE_BENCH_CLASSES="$CLASSES" python3 -m unittest -v tests/device/test_bench.py
bench_driver() {
  reset_device
  touch "$WORK/HubbleBench.apk"
  rm -f "$WORK/hubble-runs.txt" "$WORK/base-runs.txt"
  expect_ok with_fakes tests/device/run-bench.sh --image hubble --out "$WORK/x.txt" --apk "$WORK/HubbleBench.apk" --dry-run
  contains "$out" "am instrument -w -e image hubble -e tracing on -e work 1000"
  lacks "$(calls)" "instrument"
  [ ! -e "$WORK/x.txt" ] || fail "dry run wrote results"
  export FAKE_BENCH_CLASSES="$CLASSES"
  expect_ok with_fakes tests/device/run-bench.sh --image hubble --out "$WORK/hubble-runs.txt" \
    --apk "$WORK/HubbleBench.apk" --work 0,10 --iterations 2000 --runs 3
  in_order "adb | install | -r | $WORK/HubbleBench.apk" "setprop debug.hubble.packages 'dev.hubble.bench'" \
    "am force-stop dev.hubble.bench" "-e | tracing | off | -e | work | 0" "-e | tracing | off | -e | work | 10" \
    "-e | tracing | on | -e | work | 0"
  [ "$(grep -c '^RESULT image=hubble tracing=on' "$WORK/hubble-runs.txt")" = 6 ] || fail "want 6 tracing-on runs"
  expect_ok with_fakes tests/device/run-bench.sh --image base --out "$WORK/base-runs.txt" \
    --apk "$WORK/HubbleBench.apk" --work 0,10 --iterations 2000 --runs 3
  [ "$(grep -c '^RESULT image=base tracing=off' "$WORK/base-runs.txt")" = 6 ] || fail "want 6 baseline runs"
  expect_ok python3 tests/device/bench_table.py "$WORK/hubble-runs.txt" "$WORK/base-runs.txt"
  contains "$out" "| Hubble tracing on | 64-bit |"
  contains "$out" "| Hubble tracing off | 64-bit |"
  contains "$out" "| 10 |"
  expect_fail with_fakes tests/device/run-bench.sh --image base --out "$WORK/y.txt" --dry-run
  contains "$out" "HubbleBench.apk: pass --apk"
}
t "run-bench: install, enable, instrument per mode/work; table from its output" bench_driver

# ------------------------------------------------------------------------ the ART build root
hubble_log "build root sharing"
# Two caches sharing one build root (HUBBLE_ART_BUILDROOT) mount their trees at the same
# /hubble/... paths: a run must wait for the other, and never compile a tree mounted by another.
buildroot_sharing() {
  local br="$WORK/br"
  local libs="source '$HUBBLE_ROOT/scripts/lib/common.sh'; source '$HUBBLE_ROOT/scripts/lib/art.sh'"
  mkdir -p "$br/root" "$br/a" "$br/b"
  expect_fail env HUBBLE_ART_BUILDROOT="$br/root" bash -c "$libs; trap art_umount_all EXIT
    art_lock_root; art_mount '$br/a' /hubble/x --bind; art_mount '$br/a' /hubble/x --bind
    art_mount '$br/b' /hubble/x --bind"
  contains "$out" "is a mount of another tree, not $br/b"
  ! mountpoint -q "$br/root/hubble/x" || fail "the mount outlived its run"
  env HUBBLE_ART_BUILDROOT="$br/root" bash -c "$libs; art_lock_root; touch '$br/held'; sleep 2" &
  while [ ! -e "$br/held" ]; do sleep 0.1; done
  expect_ok env HUBBLE_ART_BUILDROOT="$br/root" bash -c "$libs; art_lock_root; echo got it"
  wait
  contains "$out" "waiting for another run using the build root $br/root"
  contains "$out" "got it"
}
t "art build root: a tree mounted by another run is refused, runs on one root wait" buildroot_sharing

echo
if [ "$failed" -gt 0 ]; then
  printf 'failed: %s\n' "${failures[@]}"
fi
echo "aosp-scripts: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
