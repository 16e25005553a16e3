#!/usr/bin/env bash
# Compile every run-test's Java under tests/art-run-test/ with javac (CI: tests/stages/35-nterp.sh).
# The ART test helpers they declare (ensureJitCompiled, ...) are `native` methods of Main, so
# javac needs no stubs; dalvik.* classes are reached by reflection. Fails on any warning.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
n=0
for t in "$here"/*/; do
  [ -d "$t/src" ] || continue
  name="$(basename "$t")"
  for part in src src-ex; do
    [ -d "$t/$part" ] || continue
    mkdir -p "$out/$name/$part"
    mapfile -t files < <(find "$t/$part" -name '*.java' | sort)
    javac --release 17 -Xlint:all -Werror -d "$out/$name/$part" "${files[@]}"
    n=$((n + ${#files[@]}))
  done
  if [ ! -f "$t/expected-stdout.txt" ] || [ ! -f "$t/info.txt" ] || [ ! -x "$t/run" ]; then
    echo "$name: expected-stdout.txt, info.txt and an executable run are required" >&2
    exit 1
  fi
done
[ $n -gt 0 ] || { echo "no run-test Java found" >&2; exit 1; }
echo "javac: $n files compiled"
