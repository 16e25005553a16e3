#!/usr/bin/env bash
# Run the Listing-1 benchmark (Hubble §8.1) on a device and append its RESULT lines to a file.
# Run it once on the Hubble image (tracing off and on) and once on a baseline image built from
# the same tree without art-patches, then: tests/device/bench_table.py HUBBLE.txt BASE.txt
#
#   tests/device/run-bench.sh --image hubble|base --out FILE [--apk PATH] [-s SERIAL]
#       [--abi ABI] [--work 0,1,10,100,1000] [--depth 10] [--iterations N] [--runs 10]
#       [--cooldown SECONDS] [--dry-run]
#
#   --image       hubble: runs with tracing off, then on (enables the package through
#                 scripts/hubble-device first); base: tracing off only
#   --out FILE    RESULT lines are appended here (with the device's fingerprint as a comment)
#   --apk PATH    HubbleBench.apk (default: found under $ANDROID_PRODUCT_OUT, from
#                 scripts/aosp-build ... HubbleBench)
#   --abi ABI     install for this ABI (e.g. armeabi-v7a for the 32-bit rows of Table 2, on
#                 devices with a 32-bit zygote)
#   --iterations  calls of Test() per run at work 0 (default 100000000; work w runs
#                 iterations/(w+1)); --runs measured runs after warm-up (default 10)
#   --cooldown S  sleep between experiments (thermal throttling skews results: the paper kept
#                 the phone on ice)
#   --dry-run     check prerequisites, print the adb commands, run nothing
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../scripts/lib/common.sh
source "$here/../../scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/aosp.sh
source "$here/../../scripts/lib/aosp.sh"

PKG=dev.hubble.bench
RUNNER="$PKG/.BenchInstrumentation"
image="" out="" apk="" serial="${ANDROID_SERIAL:-}" abi="" work="0,1,10,100,1000" depth=10
iterations="" runs=10 cooldown=0
while [ $# -gt 0 ]; do
  case "$1" in
    --image) image="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    --apk) apk="${2:?}"; shift 2 ;;
    -s|--serial) serial="${2:?}"; shift 2 ;;
    --abi) abi="${2:?}"; shift 2 ;;
    --work) work="${2:?}"; shift 2 ;;
    --depth) depth="${2:?}"; shift 2 ;;
    --iterations) iterations="${2:?}"; shift 2 ;;
    --runs) runs="${2:?}"; shift 2 ;;
    --cooldown) cooldown="${2:?}"; shift 2 ;;
    --dry-run) HUBBLE_DRY_RUN=1; shift ;;
    -h|--help) aosp_usage "$0"; exit 0 ;;
    *) hubble_die "unknown argument '$1' (try --help)" ;;
  esac
done
case "$image" in hubble|base) ;; *) hubble_die "--image hubble|base is required" ;; esac
[ -n "$out" ] || hubble_die "--out FILE is required"
[[ "$work" =~ ^[0-9]+(,[0-9]+)*$ ]] || hubble_die "--work takes numbers separated by commas"
for v in "$depth" "$runs" "$cooldown" ${iterations:+"$iterations"}; do
  [[ "$v" =~ ^[0-9]+$ ]] || hubble_die "--depth, --runs, --iterations and --cooldown take numbers"
done

aosp_need_cmd adb "install adb (apt-get install adb, or 'm adb' in the AOSP tree)"
if [ -z "$apk" ]; then
  if [ -n "${ANDROID_PRODUCT_OUT:-}" ]; then
    apk="$(find "$ANDROID_PRODUCT_OUT" -name HubbleBench.apk -print -quit 2>/dev/null || true)"
  fi
  [ -n "$apk" ] || aosp_missing "HubbleBench.apk: pass --apk, or lunch and build it (scripts/aosp-build HubbleBench) so \$ANDROID_PRODUCT_OUT has it"
elif [ ! -f "$apk" ]; then
  aosp_missing "$apk does not exist"
fi
aosp_check_missing

adb_() { if [ -n "$serial" ]; then adb -s "$serial" "$@"; else adb "$@"; fi; }
show_adb() { if [ -n "$serial" ]; then aosp_show adb -s "$serial" "$@"; else aosp_show adb "$@"; fi; }
[ "$(adb_ get-state 2>/dev/null | tr -d '\r')" = device ] || hubble_die "no device reachable over adb${serial:+ as $serial} (adb devices)"

fingerprint="$(adb_ shell getprop ro.build.fingerprint | tr -d '\r')"
hubble_log "device: $fingerprint"
install=(install -r)
[ -z "$abi" ] || install+=(--abi "$abi")
show_adb "${install[@]}" "$apk"
[ "$HUBBLE_DRY_RUN" = 1 ] || adb_ "${install[@]}" "$apk" >/dev/null

modes=(off)
if [ "$image" = hubble ]; then
  modes=(off on)
  dev=("$HUBBLE_ROOT/scripts/hubble-device")
  [ -z "$serial" ] || dev+=(-s "$serial")
  [ "$HUBBLE_DRY_RUN" = 0 ] || dev+=(--dry-run)
  "${dev[@]}" enable "$PKG" --restart
fi

[ "$HUBBLE_DRY_RUN" = 1 ] || printf '# %s image=%s %s\n' "$(date -u +%FT%TZ)" "$image" "$fingerprint" >> "$out"
for tracing in "${modes[@]}"; do
  for w in ${work//,/ }; do
    cmd=(shell am instrument -w -e image "$image" -e tracing "$tracing" -e work "$w"
         -e depth "$depth" -e runs "$runs")
    [ -z "$iterations" ] || cmd+=(-e iterations "$iterations")
    cmd+=("$RUNNER")
    show_adb "${cmd[@]}"
    [ "$HUBBLE_DRY_RUN" = 1 ] && continue
    result="$(adb_ "${cmd[@]}" | tr -d '\r')"
    if ! grep -q '^RESULT ' <<<"$result" || grep -q '^ERROR ' <<<"$result"; then
      printf '%s\n' "$result" >&2
      hubble_die "the benchmark failed for tracing=$tracing work=$w (output above)"
    fi
    grep -E '^(RESULT|WARMUP) ' <<<"$result" >> "$out"
    hubble_log "tracing=$tracing work=$w: $(grep -c '^RESULT ' <<<"$result") runs"
    [ "$cooldown" = 0 ] || sleep "$cooldown"
  done
done
hubble_log "results appended to $out"
hubble_log "table: tests/device/bench_table.py <hubble results> <baseline results>"
