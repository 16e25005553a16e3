#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Deobfuscation (`--mapping`, docs/deobfuscation.md) against a real obfuscator: Debian's
# ProGuard 6.2.2 obfuscates a Java program three ways, and every method name hubble prints
# with the mapping must be what ProGuard's ReTrace gives for the same obfuscated frame
# (proving/deobf/run). The hand-written R8 cases are cargo tests (rust/deobf, rust/cli), run
# by stage 10.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT"

hubble_need_apt_files scripts/deps/deobf.apt
hubble_step "deobfuscation against ProGuard's ReTrace" proving/deobf/run
hubble_report_times
