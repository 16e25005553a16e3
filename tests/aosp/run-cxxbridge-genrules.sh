#!/usr/bin/env bash
# Run Android.bp's cxxbridge genrules the way Soong would: each rule's cmd with $(location
# cxxbridge), $(in) and $(out) substituted, in a scratch directory, with cxxbridge-cmd at the
# version of the cxx crate in rust/Cargo.lock (AOSP builds cxxbridge from the same source as
# libcxx). Checks that every declared output is written and is what cxxbridge makes (the header
# declares the rust:: runtime it needs, the source defines the cxxbridge shims).
#
#   tests/aosp/run-cxxbridge-genrules.sh [--root DIR] OUTDIR
#
# Exits 3 (and says why) when the runtime crate has no #[cxx::bridge] yet: nothing to run.
# The script must be able to work on a copy (--root) whose lockfile has no cxx yet: it then
# uses a pinned version.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
root="$HUBBLE_ROOT"
if [ "${1:-}" = --root ]; then root="$2"; shift 2; fi
out_dir="${1:?OUTDIR}"

if ! grep -rlq '#\[cxx::bridge' "$root/rust/runtime/src" 2>/dev/null; then
  echo "no #[cxx::bridge] in rust/runtime/src yet: no genrule to run"
  exit 3
fi
version="$(awk '/^name = "cxx"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' "$root/rust/Cargo.lock")"
if [ -z "$version" ]; then
  version=1.0.205   # until the runtime crate depends on cxx (then the lockfile decides)
  hubble_log "rust/Cargo.lock has no cxx package yet: using cxxbridge-cmd $version"
fi
bin="$HUBBLE_CACHE/cxxbridge-$version/bin/cxxbridge"
if [ ! -x "$bin" ]; then
  hubble_log "building cxxbridge-cmd $version into $HUBBLE_CACHE/cxxbridge-$version (once)"
  nice cargo install --quiet --locked --version "=$version" --root "$HUBBLE_CACHE/cxxbridge-$version" cxxbridge-cmd -j 2 \
    || nice cargo install --quiet --version "=$version" --root "$HUBBLE_CACHE/cxxbridge-$version" cxxbridge-cmd -j 2
fi

rules="$(python3 "$root/tests/aosp/bp_check.py" --root "$root" --genrules cxxbridge)"
n="$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$rules")"
[ "$n" -gt 0 ] || hubble_die "Android.bp has no cxxbridge genrule"
mkdir -p "$out_dir"
for ((i = 0; i < n; i++)); do
  field() { python3 -c 'import json,sys; r=json.loads(sys.argv[1])[int(sys.argv[2])]; v=r[sys.argv[3]]; print(" ".join(v) if isinstance(v, list) else v)' "$rules" "$i" "$1"; }
  name="$(field name)" cmd="$(field cmd)" srcs="$(field srcs)" outs="$(field out)"
  ins="" outp=""
  for s in $srcs; do ins+=" $root/$s"; done
  for o in $outs; do mkdir -p "$(dirname "$out_dir/$o")"; outp+=" $out_dir/$o"; done
  cmd="${cmd//\$(location cxxbridge)/$bin}"
  cmd="${cmd//\$(in)/${ins# }}"
  cmd="${cmd//\$(out)/${outp# }}"
  echo "$name: $cmd"
  bash -c "$cmd"
  for o in $outs; do
    [ -s "$out_dir/$o" ] || hubble_die "$name did not write $o"
    case "$o" in
      *.h) grep -q 'namespace rust' "$out_dir/$o" || hubble_die "$name: $o does not look like a cxxbridge header" ;;
      *.cc) grep -q 'cxxbridge1\$' "$out_dir/$o" || hubble_die "$name: $o defines no cxxbridge1\$ shim" ;;
    esac
  done
done
echo "ran $n cxxbridge genrule(s) into $out_dir"
