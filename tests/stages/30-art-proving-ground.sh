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

# 3. ART's cpplint, as ART's PREUPLOAD.cfg runs it (`cpplint --quiet <files>`, with the
#    CPPLINT.cfg at the root of ART's tree), on every C++ file the series adds or changes, in the
#    patched work tree. A finding fails the stage when it is in our lines: any line of a new file,
#    or a line a patch adds to one of ART's files; findings in ART's own lines are ART's and only
#    counted. cpplint is pinned to 1.6.1: 2.x adds checks that ART's hook does not run (e.g.
#    whitespace/indent_namespace, which ART's own code fails ~150 times in these files alone).
#    The tree is reached through a link named `art`: CPPLINT.cfg's `root=..` makes the header
#    guards ART_<path>, as in an AOSP checkout.
art_cpplint() {
  local want=1.6.1 have tmp f n=0 line file lineno total=0 ours=0
  have="$(python3 -W ignore -m cpplint --version 2>/dev/null | sed -n 's/^cpplint \([0-9.]*\)$/\1/p')"
  if [ "$have" != "$want" ]; then
    python3 -m pip install --quiet "cpplint==$want" 2>/dev/null \
      || python3 -m pip install --quiet --break-system-packages "cpplint==$want"
  fi
  tmp="$(mktemp -d)"
  ln -s "$ART_WORK" "$tmp/art"
  local files=()
  while IFS= read -r f; do
    case "$f" in *.cc|*.h) files+=("$f") ;; esac
  done < <(art_touched_files "$ART_PATCHES")
  # Our lines, as FILE:LINE (FILE:* for a new file).
  for f in "${files[@]}"; do
    if [ -f "$ART_PRISTINE/$f" ]; then
      diff --unchanged-line-format= --old-line-format= --new-line-format="$f:%dn
" "$ART_PRISTINE/$f" "$ART_WORK/$f" || true
    else
      echo "$f:*"
    fi
  done > "$tmp/ours"
  (cd "$tmp/art" && python3 -W ignore -m cpplint --quiet "${files[@]/#/$tmp/art/}") > "$tmp/out" 2>&1 || true
  while IFS= read -r line; do
    line="${line#"$tmp/art/"}"
    [[ "$line" =~ ^([^:]+):([0-9]+): ]] || continue
    file="${BASH_REMATCH[1]}" lineno="${BASH_REMATCH[2]}"
    total=$((total + 1))
    if grep -qxF -e "$file:*" -e "$file:$lineno" "$tmp/ours"; then
      ours=$((ours + 1))
      printf '  %s\n' "$line" >&2
    fi
  done < "$tmp/out"
  n=${#files[@]}
  rm -rf "$tmp"
  [ "$n" -gt 0 ] || hubble_die "cpplint: no C++ file among the series' files"
  hubble_log "cpplint $want: $n files checked (new or changed by the series), $total findings, $ours in the series' lines"
  [ "$ours" -eq 0 ] || hubble_die "cpplint: $ours finding(s) in lines the series adds (above); fix them"
}
hubble_step "cpplint" art_cpplint

hubble_step "art-build --touched" scripts/art-build --touched -j2
hubble_report_times
