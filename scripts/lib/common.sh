# shellcheck shell=bash
# Shared helpers for every script in scripts/ and tests/stages/. Source it; do not execute it.

HUBBLE_ROOT="${HUBBLE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
# Everything downloaded or built outside the repository lives here; scripts/art-clean removes it.
HUBBLE_CACHE="${HUBBLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hubble-aosp}"
export HUBBLE_ROOT HUBBLE_CACHE

hubble_log() { printf '\033[1m[hubble]\033[0m %s\n' "$*" >&2; }
hubble_die() { printf '\033[1;31m[hubble] error:\033[0m %s\n' "$*" >&2; exit 1; }

# Run a command as root: directly when we are root, through sudo otherwise.
hubble_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Install the Debian packages listed in the given files (one name per line, '#' comments),
# skipping those already installed. apt-get update runs at most once per call.
hubble_need_apt_files() {
  local missing=() pkg file
  for file in "$@"; do
    while read -r pkg; do
      pkg="${pkg%%#*}"; pkg="${pkg//[[:space:]]/}"
      [ -n "$pkg" ] || continue
      if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
      fi
    done < "$file"
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  hubble_log "installing Debian packages: ${missing[*]}"
  hubble_as_root apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive hubble_as_root apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# Install named Debian packages (same rules as above).
hubble_need_apt() {
  local tmp; tmp="$(mktemp)"
  printf '%s\n' "$@" > "$tmp"
  hubble_need_apt_files "$tmp"
  rm -f "$tmp"
}

# Time a named step; hubble_report_times prints the table at the end.
HUBBLE_TIMES=()
hubble_step() {
  local name="$1"; shift
  local t0 t1 rc=0
  t0=$(date +%s)
  hubble_log "── $name"
  "$@" || rc=$?
  t1=$(date +%s)
  HUBBLE_TIMES+=("$(printf '%-40s %6ss %s' "$name" "$((t1 - t0))" "$([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")")")
  return $rc
}
hubble_report_times() {
  local line
  printf '\n%-40s %7s\n' "step" "time" >&2
  for line in "${HUBBLE_TIMES[@]}"; do printf '%s\n' "$line" >&2; done
}

# hubble-fleet, the query engine behind `hubble fleet` (Apache DataFusion), built into its own
# target directory under the cache: a clean clone's rust/target would otherwise recompile
# DataFusion on every CI run; cargo's fingerprints keep it current with the sources. PROFILE is
# release (benchmarks) or engine-ci (CI: a fraction of the build, fast enough for a small fleet).
# The binary is copied next to rust/target/release/hubble, where `hubble fleet` looks for it.
hubble_build_fleet_engine() {
  local profile="${1:-engine-ci}" target="$HUBBLE_CACHE/cargo-fleet-engine"
  (cd "$HUBBLE_ROOT/rust" && CARGO_TARGET_DIR="$target" nice -n 10 cargo build --locked \
    --profile "$profile" -p hubble-fleet --features engine --bin hubble-fleet)
  mkdir -p "$HUBBLE_ROOT/rust/target/release"
  cp "$target/$profile/hubble-fleet" "$HUBBLE_ROOT/rust/target/release/hubble-fleet"
}
