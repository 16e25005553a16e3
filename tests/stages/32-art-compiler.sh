#!/usr/bin/env bash
# The patched ART optimizing compiler compiles real dex methods and what it emits runs:
# scripts/art-build --compiler builds libart-compiler (arm, arm64, x86, x86_64 back ends and
# the JNI compiler) and the harness hubble-compile-method on stage 31's tree (cold ~10 min of 2
# cores; warm it compiles nothing), then proving/art-compile's tests run: corpus (a)
# (tests/compiler-corpus, assembled by smali) on 1000 random inputs per method, on arm64, thumb2
# and x86 in unicorn and x86_64 natively, traced and untraced, against the Java twins on OpenJDK;
# the decoded ring against the call the harness made; registers and stack across every trace
# point; call trees (recursion, a 7-frame tree, calls in a loop, an exception 3 frames down)
# run compiled end to end through the harness's invoke dispatch, the ring against every
# dispatch and return it observed; instance methods on receivers of several classes (instance
# fields, virtual, direct, super and interface calls) against OpenJDK, fields included; a generated method long enough that the trace points'
# out-of-line branches cross tens of KiB; corpus (b), ART's own test/*/smali/ methods: every
# one the harness can build compiled for the four ISAs, run on 20 random inputs, skip reasons
# counted; exceptions caught by compiled handlers; JNI stubs from ART's JNI compiler (normal,
# synchronized, @FastNative, references, an exception left pending) around native code clang
# compiled for each native ABI; and the mutant emitters must be caught. Under CI=true nothing
# here may skip.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT"
hubble_need_apt_files scripts/deps/art.apt scripts/deps/compiler-harness.apt scripts/deps/hotpath.apt
[ -f "$HUBBLE_CACHE/art/full/debian/out/libart.so.0" ] \
  || hubble_die "no $HUBBLE_CACHE/art/full/debian/out/libart.so.0: stage 31 (art-build --full) must run first"
t0=$(date +%s)
scripts/art-build --compiler -j2
hubble_log "art-build --compiler: $(( $(date +%s) - t0 ))s"
cd proving
# The harness finds the programs through these (proving/art-compile/src/lib.rs).
export HUBBLE_CACHE HUBBLE_ART_BUILDROOT="${HUBBLE_ART_BUILDROOT:-$HUBBLE_CACHE/buildroot/trixie}"
# The ignored tests are the ones that need the compiler; --include-ignored runs them here.
log="$HUBBLE_CACHE/art-compiler-tests.log"
# A call still running after 2M emulated instructions counts as a hang (corpus (b) drops the input).
HUBBLE_MAX_INSNS="${HUBBLE_MAX_INSNS:-2000000}" HUBBLE_CORPUS_INPUTS="${HUBBLE_CORPUS_INPUTS:-1000}" \
  nice -n 10 cargo test --locked -p hubble-art-compile \
  -- --include-ignored --nocapture --test-threads 2 > "$log" 2>&1 \
  || { grep -E "^(test |test result|failures|---- )|panicked" "$log" | head -40; hubble_die "compiler harness tests failed (log: $log)"; }
grep -E "^test result|corpus \((a|b)\)|^  L(Calls|Far|Shape|Square);|^far |mutants caught|^JNI stubs|^pool (x86_64|arm64|thumb2|x86):" "$log"
! grep -q "SKIPPED" "$log" || hubble_die "a compiler harness test skipped"
grep -q "corpus (a):" "$log" || hubble_die "corpus (a) did not run"
for isa in arm64 thumb2 x86 x86_64; do
  grep -q "^pool $isa:" "$log" || hubble_die "pool mode did not run for $isa"
done
grep -q "corpus (a) calls:" "$log" || hubble_die "corpus (a)'s call trees did not run"
grep -q "corpus (a) objects:" "$log" || hubble_die "corpus (a)'s instance methods did not run"
grep -q "^far thumb2 (ring wrapping" "$log" || hubble_die "the long method did not run"
grep -q "^far x86 (ring wrapping" "$log" || hubble_die "the long method did not run on x86"
grep -q "mutants caught" "$log" || hubble_die "the mutant test did not run"
grep -q "corpus (b):" "$log" || hubble_die "corpus (b) did not run"
grep -q "^JNI stubs:" "$log" || hubble_die "the JNI stubs did not run"
grep -q "^pool x86_64:" "$log" || hubble_die "compiled x86_64 code in pool mode did not run"
grep -q "^pool arm64:" "$log" || hubble_die "compiled arm64 code in pool mode did not run"
