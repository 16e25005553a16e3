#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Fleet scale, on a small generated fleet:
#   - fleet-gen makes traces from the main job's workload over three app versions, five device
#     models and three anomaly reasons, with a regression planted in the newest version;
#   - `hubble export --format parquet` and `hubble summary --parquet` turn them into the fleet
#     tables, one batch per version (`--meta app.version=…`, as an upload pipeline knows it);
#   - `hubble fleet growth` must rank the planted method first;
#   - the standard queries, unchanged, give the same rows on DuckDB's and Spark's own engines
#     (tests/fleet/crosscheck.py);
#   - bad input: a truncated and a corrupt file in a batch are named, the rest exported, the
#     exit status non-zero; a Parquet part of another schema version is refused by name.
set -euo pipefail
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$HUBBLE_ROOT"

TRACES="${HUBBLE_FLEET_TRACES:-200}"
# DuckDB's and Spark's Python packages, pinned, in a venv cached by their versions.
VENV="$HUBBLE_CACHE/fleet-venv-duckdb2.0.1-pyspark4.3.0"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import duckdb, pyspark' 2>/dev/null; then
  hubble_log "installing duckdb and pyspark (PyPI) into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet duckdb==2.0.1 pyspark==4.3.0
fi
command -v java >/dev/null || hubble_die "no java for Spark (scripts/deps/aosp.apt installs default-jdk-headless)"

(cd rust && nice -n 10 cargo build --locked --release -p hubble-cli --bin hubble)
(cd proving && nice -n 10 cargo build --locked --release -p hubble-main-job --bin fleet-gen)
hubble_build_fleet_engine engine-ci
HUBBLE="$HUBBLE_ROOT/rust/target/release/hubble"
GEN="$HUBBLE_ROOT/proving/target/release/fleet-gen"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$GEN" --out "$WORK/uploads" --traces "$TRACES" | tee "$WORK/gen.txt"
planted_version="$(awk -F'\t' '$1 == "planted" {print $2}' "$WORK/gen.txt")"
planted_method="$(awk -F'\t' '$1 == "planted" {print $3}' "$WORK/gen.txt" | sed 's/ +[0-9]* us per call$//')"
versions=()
while IFS=$'\t' read -r v _; do versions+=("$v"); done < <(grep -v '^planted' "$WORK/gen.txt")
[ "${#versions[@]}" -ge 2 ] || hubble_die "fleet-gen made fewer than two versions"

for v in "${versions[@]}"; do
  "$HUBBLE" export --format parquet -o "$WORK/fleet" --meta "app.version=$v" "$WORK/uploads/$v"/*.hubble
  "$HUBBLE" summary --parquet "$WORK/fleet" --meta "app.version=$v" \
    --signatures tests/fleet/signatures.txt "$WORK/uploads/$v"/*.hubble
done

# The planted regression comes first between the last two versions.
base="${versions[-2]}" head="${versions[-1]}"
[ "$head" = "$planted_version" ] || hubble_die "the regression is planted in $planted_version, not the newest version $head"
"$HUBBLE" fleet growth "$WORK/fleet" --base "$base" --head "$head" | tee "$WORK/growth.txt" | head -5
first="$("$HUBBLE" fleet growth "$WORK/fleet" --base "$base" --head "$head" --json \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0][0])')"
[ "$first" = "$planted_method" ] || hubble_die "growth ranks '$first' first, the planted regression is '$planted_method'"
hubble_log "OK: growth $base → $head ranks the planted regression first: $first"
"$HUBBLE" fleet signatures "$WORK/fleet" | head -8
"$HUBBLE" fleet anomalies "$WORK/fleet" | head -8

# Same SQL, same files, DuckDB's and Spark's engines.
"$VENV/bin/python" tests/fleet/crosscheck.py --root "$WORK/fleet" --hubble "$HUBBLE" \
  --base "$base" --head "$head"

# Bad input in a batch: named, skipped, the others exported, non-zero exit.
mkdir -p "$WORK/bad"
good=("$WORK/uploads/$head"/*.hubble)
cp "${good[0]}" "$WORK/bad/a-good.hubble"
cp "${good[1]}" "$WORK/bad/b-good.hubble"
head -c 1000 "${good[2]}" > "$WORK/bad/c-truncated.hubble"
cp "${good[3]}" "$WORK/bad/d-corrupt.hubble"
printf '\xff' | dd of="$WORK/bad/d-corrupt.hubble" bs=1 seek=200 conv=notrunc status=none
set +e
"$HUBBLE" export --format parquet -o "$WORK/bad-out" "$WORK/bad"/*.hubble 2>"$WORK/bad.err"
rc=$?
set -e
cat "$WORK/bad.err"
[ "$rc" -ne 0 ] || hubble_die "a batch with bad files exited 0"
grep -q 'c-truncated.hubble.*truncated' "$WORK/bad.err" || hubble_die "the truncated file is not named as truncated"
grep -q 'd-corrupt.hubble.*corrupt' "$WORK/bad.err" || hubble_die "the corrupt file is not named as corrupt"
rows="$("$HUBBLE" fleet sql "$WORK/bad-out" 'SELECT COUNT(*) AS n FROM traces' --json \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0][0])')"
[ "$rows" = 2 ] || hubble_die "the batch exported $rows traces, want the 2 good ones"
hubble_log "OK: bad files named and skipped, the 2 good ones exported, exit $rc"

# A part of another schema version: refused by name.
"$VENV/bin/python" - "$WORK/fleet/traces" <<'PY'
import glob, sys
import duckdb
src = sorted(glob.glob(sys.argv[1] + "/*.parquet"))[0]
duckdb.sql(f"COPY (SELECT * FROM read_parquet('{src}')) TO '{sys.argv[1]}/zz-v2.parquet' "
           "(FORMAT parquet, KV_METADATA {'hubble.table': 'traces', 'hubble.schema': '2'})")
PY
set +e
"$HUBBLE" fleet top "$WORK/fleet" >/dev/null 2>"$WORK/v2.err"
rc=$?
set -e
cat "$WORK/v2.err"
if [ "$rc" -eq 0 ] || ! grep -q 'zz-v2.parquet.*schema version 2' "$WORK/v2.err"; then
  hubble_die "a schema version 2 part was not refused by name"
fi
hubble_log "OK: a part of schema version 2 is refused by name"
