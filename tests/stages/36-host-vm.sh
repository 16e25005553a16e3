#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The host VM: ART 14 itself, booted imageless on this host from the mini-core boot class path
# (proving/host-vm), runs Java programs in --mode int (the switch interpreter), nterp and jit
# (ART's JIT through libart-compiler.so), on the patched libart (stage 31's, no Hubble property
# set) and on the pristine one built beside it; every run's stdout and exit status must equal
# the program's expected ones, so the patched VM prints what the pristine VM prints. Then
# Hubble inside it (proving/host-vm/hubble): programs traced with the device's properties,
# flushed by the thread-name hook, each trace equal to the program's own count of its calls,
# in JIT mode through code ART's JIT compiled, a plugin's class loader unloaded mid-trace
# included; the triggers, as on a device: a debug.hubble.ctl flush mid-run, SIGQUIT's ANR
# flush in ring and many-thread mode, a duration trigger on the program's own method; and
# flushes of every thread while workers loop, GCs suspend everything and a thread sleeps in
# native code; ART's run-tests untraced, then traced (ring and many-thread mode).
# Cold, the pristine libart and both compilers add ≈ 25 min of 2 cores; warm, a hash each.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT"
hubble_need_apt_files scripts/deps/host-vm.apt scripts/deps/kotlin.apt
rc=0
hubble_step "fetch, apply, art-build --full (tests/art-full.sh)" bash tests/art-full.sh || rc=$?
[ $rc -eq 0 ] && { hubble_step "art-build --compiler" scripts/art-build --compiler -j2 || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "art-build --full --pristine" scripts/art-build --full --pristine -j2 || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "art-build --compiler --pristine" scripts/art-build --compiler --pristine -j2 || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "host-vm-build" scripts/host-vm-build || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "host-vm-build --pristine" scripts/host-vm-build --pristine || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "mini-core's templates: expansion and refusals" \
  python3 -m unittest proving/host-vm/mini-core/test_templates.py || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "mini-core" proving/host-vm/mini-core/build || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "programs on both VMs, three modes" proving/host-vm/tests/run || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "Hubble inside the VM, three modes" proving/host-vm/hubble/run || rc=$?; }
[ $rc -eq 0 ] && { hubble_step "Hubble's triggers inside the VM" proving/host-vm/hubble/triggers || rc=$?; }
# 1500 flushes asked 20 ms apart (≈ 1 min); the script's default, 10 000, takes ≈ 5 min.
[ $rc -eq 0 ] && { hubble_step "stops under real suspension: 1500 flushes" \
  proving/host-vm/hubble/suspension --flushes 1500 --period 20 || rc=$?; }
# Kotlin coroutines (kotlinc, kotlinx-coroutines 1.0.1) on the VM: both programs' output in jit,
# and the kotlinx one traced in every mode, each dispatch and resumption as the program counted,
# then with task records on: every dispatch paired with its run as the program made them.
[ $rc -eq 0 ] && { hubble_step "Kotlin coroutines: output (jit), traced and task records (three modes)" \
  bash -c 'proving/host-vm/coroutines/run --mode jit && proving/host-vm/coroutines/run --trace &&
           proving/host-vm/coroutines/run --tasks' || rc=$?; }
# ART's own run-tests: 494 pass in all three modes (proving/host-vm/run-tests/README.md, 22 min);
# CI runs a fixed sample, every 8th of them (ci.txt), ≈ 5 min.
[ $rc -eq 0 ] && { hubble_step "ART's run-tests (ci.txt), three modes" \
  proving/host-vm/run-tests/run --jobs 2 --list proving/host-vm/run-tests/ci.txt || rc=$?; }
# The same tests traced by Hubble, ring and many-thread mode, a flush forced as each ends: the
# output as untraced, and the trace whole; CI takes the first 30 of ci.txt (≈ 2 min a mode).
for m in ring pool; do
  [ $rc -eq 0 ] && { hubble_step "ART's run-tests traced ($m), first 30 of ci.txt, three modes" \
    proving/host-vm/run-tests/run --jobs 2 --hubble $m --list proving/host-vm/run-tests/ci.txt \
    --limit 30 || rc=$?; }
done
# The three that spin without calls: every many-thread flush has to stop them at a checkpoint.
[ $rc -eq 0 ] && { hubble_step "run-tests that spin without calls, traced (pool), three modes" \
  proving/host-vm/run-tests/run --hubble pool 121-simple-suspend-check 579-inline-infinite \
  830-goto-zero || rc=$?; }
hubble_report_times
exit $rc
