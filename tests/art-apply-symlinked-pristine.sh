#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# scripts/art-apply must never write into the pristine tree, also when $HUBBLE_CACHE/art/pristine
# is a symbolic link (a private cache that shares another cache's pristine tree, as the helpers'
# recipe makes). `cp -al LINK DIR` copies the link itself, and the series was then applied
# through it into the shared tree (its .hubble-version removed, its files patched).
# Run by tests/stages/30-art-proving-ground.sh after art-fetch; needs only the pristine tree.
# The shared tree here is a hard-linked copy of pristine: a write through the link replaces or
# adds directory entries of the copy, never the real pristine's files.
set -euo pipefail
# shellcheck source=../scripts/lib/common.sh
source "$(dirname "$0")/../scripts/lib/common.sh"
# shellcheck source=../scripts/lib/art.sh
source "$HUBBLE_ROOT/scripts/lib/art.sh"
[ -f "$ART_PRISTINE/.hubble-version" ] || hubble_die "no pristine ART tree; run scripts/art-fetch first"

t="$(mktemp -d "$ART_CACHE/symlinked-pristine-test.XXXXXX")"  # on pristine's file system (hard links)
trap 'rm -rf "$t"' EXIT
cp -al "$ART_PRISTINE" "$t/shared-pristine"
mkdir -p "$t/cache/art"
ln -s "$t/shared-pristine" "$t/cache/art/pristine"
rc=0
out="$(HUBBLE_CACHE="$t/cache" "$HUBBLE_ROOT/scripts/art-apply" --work "$t/work" --no-aosp-check 2>&1)" || rc=$?
changed="$(diff -rq --no-dereference "$ART_PRISTINE" "$t/shared-pristine" || true)"
if [ -n "$changed" ]; then
  printf '%s\n' "$out" | tail -3 >&2
  printf '%s\n' "$changed" | head -5 >&2
  hubble_die "art-apply wrote into the pristine tree behind a symlinked \$HUBBLE_CACHE/art/pristine ($(wc -l <<<"$changed") entries changed)"
fi
[ $rc -eq 0 ] || { printf '%s\n' "$out" | tail -5 >&2; hubble_die "art-apply failed with a symlinked pristine"; }
[ -f "$t/work/runtime/hubble/trace_point.h" ] || hubble_die "art-apply produced no patched work tree"
hubble_log "art-apply with a symlinked pristine: the shared tree is untouched, the work tree patched"
