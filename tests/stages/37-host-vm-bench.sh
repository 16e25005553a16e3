#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# What tracing costs on real ART (proving/host-vm/bench): CI runs the smallest set once, eight
# workloads in --mode jit under every configuration (the pristine VM, Hubble off, stopped, on
# in ring and in many-thread mode, ART's own method tracing to a file and streamed, ART's
# sampling), and checks only that every row is produced and every checksum agrees; no timing is
# checked here. The full table (docs/performance.md) is `proving/host-vm/bench/run`.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT"
hubble_need_apt_files scripts/deps/host-vm.apt
rc=0
hubble_step "overhead bench, smallest set (--quick)" proving/host-vm/bench/run --quick || rc=$?
hubble_report_times
exit $rc
