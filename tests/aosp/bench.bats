#!/usr/bin/env bats
# The Listing-1 benchmark: javac, the host JVM run through tests/device/run-bench.sh and the fake
# adb (whose `am instrument` runs the benchmark class on the host), and the Table-2 arithmetic on
# fixtures (tests/device/test_bench.py).
# shellcheck disable=SC2154  # $out comes from helpers.bash: shellcheck does not follow bats' load
load helpers

# The benchmark's classes, compiled once for the cases that run them ($CLASSES; the javac case
# compiles them again, with -Xlint:all -Werror).
CLASSES="$BATS_FILE_TMPDIR/classes"
bench_sources() { find tests/device/bench/src tests/device/bench/stubs -name "*.java"; }

setup_file() {
  make_bins
  cd "$HUBBLE_ROOT" || return
  local -a srcs
  mapfile -t srcs < <(bench_sources)
  mkdir -p "$CLASSES"
  javac -d "$CLASSES" "${srcs[@]}"
}
setup() {
  test_setup
}

@test "javac: benchmark sources (+ SDK stubs), -Xlint:all -Werror" {
  local -a srcs
  mapfile -t srcs < <(bench_sources)
  [ "${#srcs[@]}" -gt 0 ] || fail "no benchmark sources"
  javac -Xlint:all -Werror -d "$BATS_TEST_TMPDIR/classes" "${srcs[@]}"
}

@test "bench: Table-2 arithmetic, refusals, host JVM run (python unittest)" {
  env HUBBLE_BENCH_CLASSES="$CLASSES" python3 -m unittest -v tests/device/test_bench.py
}

@test "run-bench: install, enable, instrument per mode/work; table from its output" {
  local w="$BATS_TEST_TMPDIR"
  reset_device
  touch "$w/HubbleBench.apk"
  expect_ok with_fakes tests/device/run-bench.sh --image hubble --out "$w/x.txt" --apk "$w/HubbleBench.apk" --dry-run
  contains "$out" "am instrument -w -e image hubble -e tracing on -e work 1000"
  lacks "$(calls)" "instrument"
  [ ! -e "$w/x.txt" ] || fail "dry run wrote results"
  export FAKE_BENCH_CLASSES="$CLASSES"
  expect_ok with_fakes tests/device/run-bench.sh --image hubble --out "$w/hubble-runs.txt" \
    --apk "$w/HubbleBench.apk" --work 0,10 --iterations 2000 --runs 3
  in_order "adb | install | -r | $w/HubbleBench.apk" "setprop debug.hubble.packages 'dev.hubble.bench'" \
    "am force-stop dev.hubble.bench" "-e | tracing | off | -e | work | 0" "-e | tracing | off | -e | work | 10" \
    "-e | tracing | on | -e | work | 0"
  [ "$(grep -c '^RESULT image=hubble tracing=on' "$w/hubble-runs.txt")" = 6 ] || fail "want 6 tracing-on runs"
  expect_ok with_fakes tests/device/run-bench.sh --image base --out "$w/base-runs.txt" \
    --apk "$w/HubbleBench.apk" --work 0,10 --iterations 2000 --runs 3
  [ "$(grep -c '^RESULT image=base tracing=off' "$w/base-runs.txt")" = 6 ] || fail "want 6 baseline runs"
  expect_ok python3 tests/device/bench_table.py "$w/hubble-runs.txt" "$w/base-runs.txt"
  contains "$out" "| Hubble tracing on | 64-bit |"
  contains "$out" "| Hubble tracing off | 64-bit |"
  contains "$out" "| 10 |"
  expect_fail with_fakes tests/device/run-bench.sh --image base --out "$w/y.txt" --dry-run
  contains "$out" "HubbleBench.apk: pass --apk"
}
