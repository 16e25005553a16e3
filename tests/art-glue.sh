#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The ART-side glue on the host (CI stage 32, after stage 31 built libart.so): runtime/hubble/
# hubble_bridge.cc, thread_state.cc, lifecycle.cc and tasks.cc, compiled from art-patches/files
# with the patched ART headers and libart's own flags inside the trixie build root, linked with
# the real $HUBBLE_CACHE/art/full/debian/out/libart.so.0 (scripts/art-build --full) and run
# there: tests/art-glue/bridge_test.cc, lifecycle_test.cc and tasks_test.cc (real Threads,
# ThreadList, locks, suspend protocol, ShadowFrames and identity hash codes; what stands in for
# a Runtime is described in tests/art-glue/glue_test.h). The headers come from the --full tree
# (libart's include paths first), which art-apply copies from art-patches/files.
#
#   tests/art-glue.sh            build (incremental, objects in $HUBBLE_CACHE/art/glue) and run
#   GLUE_ONLY=name tests/art-glue.sh   only the tests whose name contains `name`
set -euo pipefail
# shellcheck source=../scripts/lib/common.sh
source "$(dirname "$0")/../scripts/lib/common.sh"
# shellcheck source=../scripts/lib/art.sh
source "$(dirname "$0")/../scripts/lib/art.sh"
case "${1:-}" in -h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;; esac
cd "$HUBBLE_ROOT"
full="$ART_CACHE/full"
art_buildroot_ready || hubble_die "no build root at $ART_BUILDROOT: run scripts/art-build --root (CI: stage 31)"
[ -f "$full/debian/out/libart.so.0" ] \
  || hubble_die "no $full/debian/out/libart.so.0: run tests/art-full.sh or scripts/art-build --full first (CI: stage 31)"
[ -f "$full/debian/hubble-include/hubble/runtime_bridge.rs.h" ] \
  || hubble_die "no cxx bridge headers in $full/debian/hubble-include (made by scripts/art-build --full)"
trap art_umount_all EXIT
art_lock full   # the --full tree is read; no art-build --full may change it meanwhile
# The tests link against libart.so.0 as --full linked and checked it, with the Rust runtime
# inside; a libart relinked by libart.mk's own rule lacks every bridge symbol, and each test
# would fail to link with a page of undefined cxxbridge names: say what is wrong instead.
so="$full/debian/out/libart.so.0"
art_libart_linked_by_full "$so" \
  || hubble_die "$so is not the library scripts/art-build --full linked (with the Rust runtime) and checked: run that again"
out="$ART_CACHE/glue"
mkdir -p "$out"
# make compares times, and every checkout's sources are mounted at the same /hubble/glue-src:
# objects another checkout built later than these sources were written would pass for current.
# A different checkout than last time starts from no objects.
if [ "$(cat "$out/.checkout" 2>/dev/null)" != "$HUBBLE_ROOT" ]; then
  find "$out" -mindepth 1 -delete
  echo "$HUBBLE_ROOT" > "$out/.checkout"
fi
art_mount proc /proc -t proc
art_mount_dev
art_mount "$full" /hubble/art-full --bind
art_mount "$HUBBLE_ROOT/tests/art-glue" /hubble/glue-src --bind
art_mount "$ART_PATCHES" /hubble/glue-patches --bind
art_mount "$out" /hubble/glue-out --bind
t0=$(date +%s)
art_in_root "$ART_BUILD_ENV
cd /hubble/art-full
nice -n 10 make -s -j2 -f /hubble/glue-src/glue.mk GLUE_SRC=/hubble/glue-src \
  GLUE_FILES=/hubble/glue-patches/files/runtime GLUE_OUT=/hubble/glue-out glue-tests \
  > /hubble/glue-out/build.log 2>&1 || { grep -E 'error|undefined|\*\*\*' /hubble/glue-out/build.log | head -40; exit 1; }"
hubble_log "art-glue tests built in $(( $(date +%s) - t0 ))s (log: $out/build.log)"
art_libart_linked_by_full "$so" \
  || hubble_die "building the glue tests changed $so (tests/art-glue/glue.mk must never remake libart)"
# Patch 0027 as linked into libart.so (x86_64 here): the first call SignalCatcher::HandleSigQuit
# makes is hubble::OnSigQuit, before the dump builds its first stream (signal_catcher.cc 117-143),
# and OnSigQuit calls nothing but SigQuitReceived (lifecycle_test checks it waits for no lock).
sigquit_calls() {  # sigquit_calls MANGLED: the call/jmp targets of one function, in order
  objdump -d --no-show-raw-insn --disassemble="$1" "$full/debian/out/libart.so.0" \
    | sed -n 's/^.*\s\(call\|jmp\)\s\+[0-9a-f]\+ <\([^>+]*\)\(+0x[0-9a-f]*\)\?>.*$/\2/p'
}
first="$(sigquit_calls _ZN3art13SignalCatcher13HandleSigQuitEv | head -1)"
[ "$first" = _ZN3art6hubble9OnSigQuitEv ] \
  || hubble_die "libart.so: SignalCatcher::HandleSigQuit's first call is '${first:-none}', not hubble::OnSigQuit (patch 0027)"
others="$(sigquit_calls _ZN3art6hubble9OnSigQuitEv | grep -v -x -e _ZN3art6hubble9OnSigQuitEv -e '_ZN3art6hubble15SigQuitReceivedEv@plt' || true)"
[ -z "$others" ] || hubble_die "libart.so: hubble::OnSigQuit calls more than SigQuitReceived: $others"
hubble_log "libart.so: HandleSigQuit calls hubble::OnSigQuit first; OnSigQuit calls only SigQuitReceived"
# -Xgc:CMC on the command line: libart reads it at load (gc/collector/mark_compact.cc 156-166)
# and runs as Android 14 devices with the userfaultfd GC do (no read barrier, no heap needed to
# register a thread). GLUE_ONLY passes through.
rc=0
art_in_root "cd /tmp
export GLUE_ONLY='${GLUE_ONLY:-}'; [ -n \"\$GLUE_ONLY\" ] || unset GLUE_ONLY
echo '== bridge_test (hubble_bridge.cc, thread_state.cc)'
GLUE_OFFSETS=/hubble/glue-patches/thread-offsets.txt /hubble/glue-out/bridge_test -Xgc:CMC" || rc=1
art_in_root "cd /tmp
export GLUE_ONLY='${GLUE_ONLY:-}'; [ -n \"\$GLUE_ONLY\" ] || unset GLUE_ONLY
echo '== lifecycle_test (lifecycle.cc)'
/hubble/glue-out/lifecycle_test -Xgc:CMC" || rc=1
art_in_root "cd /tmp
export GLUE_ONLY='${GLUE_ONLY:-}'; [ -n \"\$GLUE_ONLY\" ] || unset GLUE_ONLY
echo '== tasks_test (task_hooks.h, tasks.cc)'
/hubble/glue-out/tasks_test -Xgc:CMC" || rc=1
if [ $rc -eq 0 ]; then hubble_log "art-glue OK"; else hubble_log "art-glue FAILED"; fi
exit $rc
