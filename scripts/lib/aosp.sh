# shellcheck shell=bash
# Shared by scripts/aosp-*, scripts/hubble-device and tests/device/*.sh. Source after
# lib/common.sh. Nothing here builds or touches a device by itself.

# --dry-run: print what would be done, run only read-only queries.
HUBBLE_DRY_RUN="${HUBBLE_DRY_RUN:-0}"

# Print a command the way it would be typed, then run it (unless this is a dry run).
aosp_show() {
  local out="" a
  for a in "$@"; do out+=" $(printf '%q' "$a")"; done
  printf '+%s\n' "$out"
}
aosp_run() {
  aosp_show "$@"
  [ "$HUBBLE_DRY_RUN" = 1 ] && return 0
  "$@"
}

# Collect missing prerequisites, then report all of them at once.
AOSP_MISSING=()
aosp_missing() { AOSP_MISSING+=("$*"); }
aosp_need_cmd() {  # aosp_need_cmd NAME HOW-TO-GET-IT
  command -v "$1" >/dev/null 2>&1 || aosp_missing "'$1' not found on PATH: $2"
}
aosp_check_missing() {
  [ "${#AOSP_MISSING[@]}" -eq 0 ] && return 0
  local m
  printf '\033[1;31m[hubble] missing prerequisites:\033[0m\n' >&2
  for m in "${AOSP_MISSING[@]}"; do printf '  - %s\n' "$m" >&2; done
  exit 1
}

# The AOSP checkout: --aosp DIR, else $ANDROID_BUILD_TOP, else the current directory if it
# looks like one. Dies with what is missing.
aosp_resolve_top() {  # aosp_resolve_top [DIR] -> prints absolute path
  local top="${1:-${ANDROID_BUILD_TOP:-}}"
  if [ -z "$top" ]; then
    if [ -f build/envsetup.sh ]; then top="$PWD"; else
      hubble_die "no AOSP checkout: pass --aosp DIR or set ANDROID_BUILD_TOP (a 'repo sync'ed tree with build/envsetup.sh)"
    fi
  fi
  [ -d "$top" ] || hubble_die "AOSP checkout '$top' does not exist"
  top="$(cd "$top" && pwd)"
  [ -f "$top/build/envsetup.sh" ] || hubble_die "'$top' is not an AOSP checkout: build/envsetup.sh is missing (repo init -u https://android.googlesource.com/platform/manifest -b android-14.0.0_r15 && repo sync)"
  [ -d "$top/art" ] || hubble_die "'$top' has no art/ project"
  printf '%s\n' "$top"
}

# Lunch targets. android-14.0.0_r15 is expected to take <product>-<variant>; trees with release
# configs take <product>-<release>-<variant> (trunk_staging when the tree defines it, else pass
# --release NAME).
AOSP_CF_PRODUCT=aosp_cf_arm64_phone
aosp_products_help() {
  cat <<'EOF'
targets (--target):
  cf              aosp_cf_arm64_phone   cuttlefish arm64 (runs on an arm64 host with KVM)
  cf-x86_64       aosp_cf_x86_64_phone  cuttlefish x86_64 (for x86_64 hosts; no 32-bit arm ART)
  pixel:CODENAME  aosp_CODENAME         a Pixel supported by the checked-out AOSP release, e.g.
                  oriole (6), raven (6 Pro), bluejay (6a), panther (7), cheetah (7 Pro),
                  lynx (7a), felix (Fold), tangorpro (Tablet); needs the matching vendor
                  images unpacked in the tree (vendor/google_devices/CODENAME)
  PRODUCT         any other product name, used as is
EOF
}
aosp_product() {  # aosp_product TARGET -> product name
  case "$1" in
    cf|cf-arm64) echo "$AOSP_CF_PRODUCT" ;;
    cf-x86_64) echo aosp_cf_x86_64_phone ;;
    pixel:*)
      local c="${1#pixel:}"
      [[ "$c" =~ ^[a-z0-9_]+$ ]] || hubble_die "bad Pixel codename '$c'"
      echo "aosp_$c" ;;
    *-*) hubble_die "--target takes a product (e.g. aosp_oriole), not a lunch combo: pass --variant/--release" ;;
    *)
      [[ "$1" =~ ^[A-Za-z0-9_]+$ ]] || hubble_die "bad product '$1'"
      echo "$1" ;;
  esac
}
aosp_tree_has_release_configs() {
  [ -d "$1/build/release" ] && [ -n "$(find "$1/build/release" -maxdepth 3 -name 'trunk_staging*' -print -quit)" ]
}
aosp_combo() {  # aosp_combo TOP PRODUCT VARIANT RELEASE -> lunch combo
  local top="$1" product="$2" variant="$3" release="$4"
  case "$variant" in user|userdebug|eng) ;; *) hubble_die "bad variant '$variant' (user, userdebug, eng)" ;; esac
  if [ -z "$release" ] && aosp_tree_has_release_configs "$top"; then release=trunk_staging; fi
  if [ -n "$release" ]; then echo "$product-$release-$variant"; else echo "$product-$variant"; fi
}

# Run a command inside `source build/envsetup.sh && lunch COMBO` in the AOSP tree.
aosp_in_env() {  # aosp_in_env TOP COMBO CMD...
  local top="$1" combo="$2"; shift 2
  # shellcheck disable=SC2016  # expanded by the inner shell
  bash -c 'set -eo pipefail; cd "$1"; combo="$2"; shift 2
    source build/envsetup.sh >/dev/null
    lunch "$combo" >/dev/null
    "$@"' _ "$top" "$combo" "$@"
}
aosp_show_env() {  # the same, for the record (dry runs print it)
  local top="$1" combo="$2"; shift 2
  aosp_show cd "$top"
  aosp_show source build/envsetup.sh
  aosp_show lunch "$combo"
  aosp_show "$@"
}

# Where the lunch'ed build puts things (read-only: runs lunch, prints VAR=value lines).
aosp_build_vars() {  # aosp_build_vars TOP COMBO
  # shellcheck disable=SC2016  # expanded by the inner shell
  aosp_in_env "$1" "$2" bash -c 'printf "ANDROID_PRODUCT_OUT=%s\nANDROID_HOST_OUT=%s\n" "$ANDROID_PRODUCT_OUT" "$ANDROID_HOST_OUT"'
}

# adb / fastboot: from PATH, else from the AOSP host out dir.
aosp_find_tool() {  # aosp_find_tool NAME [HOST_OUT] -> path or nothing
  if command -v "$1" >/dev/null 2>&1; then command -v "$1"; return 0; fi
  if [ -n "${2:-}" ] && [ -x "$2/bin/$1" ]; then echo "$2/bin/$1"; return 0; fi
  return 1
}

# Print the comment block at the top of a script (after the #! line) as its --help.
aosp_usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"; }

# Wait until the device answers adb and has finished booting.
aosp_wait_boot() {  # aosp_wait_boot ADB SERIAL TIMEOUT_S
  local adb="$1" serial="$2" timeout="$3" t=0
  aosp_run "$adb" -s "$serial" wait-for-device
  [ "$HUBBLE_DRY_RUN" = 1 ] && return 0
  while [ "$("$adb" -s "$serial" shell getprop sys.boot_completed 2>/dev/null | tr -d '\r')" != 1 ]; do
    [ "$t" -lt "$timeout" ] || hubble_die "device $serial did not finish booting in ${timeout}s"
    sleep 5; t=$((t + 5))
  done
  hubble_log "device $serial booted"
}
