# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the scripts that source this file
# Shared by scripts/art-fetch, art-apply, art-build and tests/stages/30-art-proving-ground.sh.
# Source after lib/common.sh. Everything lives under $HUBBLE_CACHE (scripts/art-clean removes it):
#
#   $HUBBLE_CACHE/src/                       .dsc + tarballs from `apt-get source --download-only`
#   $HUBBLE_CACHE/art/pristine/              Debian's tree: AOSP + debian/ + debian/patches applied
#   $HUBBLE_CACHE/art/aosp/                  the same without debian/patches (pure AOSP files)
#   $HUBBLE_CACHE/art/VERSION                the exact Debian version fetched (revision recorded)
#   $HUBBLE_CACHE/art/work/                  pristine + art-patches (what gets compiled)
#   $HUBBLE_CACHE/buildroot/trixie/          the trixie build root (debootstrap + build-deps)

ART_UPSTREAM_VERSION="14.0.0+r15"           # == AOSP android-14.0.0_r15
ART_SRC_PACKAGE="android-platform-art"
ART_SUITE="trixie"
ART_MIRROR="${HUBBLE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ART_CACHE="$HUBBLE_CACHE/art"
ART_SRC_CACHE="$HUBBLE_CACHE/src"
ART_PRISTINE="$ART_CACHE/pristine"
ART_AOSP="$ART_CACHE/aosp"
ART_WORK="$ART_CACHE/work"
ART_BUILDROOT="${HUBBLE_ART_BUILDROOT:-$HUBBLE_CACHE/buildroot/$ART_SUITE}"
ART_PATCHES="$HUBBLE_ROOT/art-patches"
RUST_DIR="$HUBBLE_ROOT/rust"
# Where the work tree and the Rust target dir appear inside the build root.
ART_IN_ROOT=/hubble/art
RUST_IN_ROOT=/hubble/rust-target

# Patches of the series, in order (blank lines and '#' comments skipped), one path per line.
art_series() {
  local series="${1:-$ART_PATCHES/series}" line
  [ -f "$series" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line%%#*}"; line="${line//[[:space:]]/}"
    [ -n "$line" ] && printf '%s\n' "$line"
  done < "$series"
}

# Files (paths inside ART) the series adds or changes: new files under files/, and every
# `+++ b/<path>` of every patch in the series. Sorted, unique.
art_touched_files() {
  local patches_dir="${1:-$ART_PATCHES}" p
  {
    if [ -d "$patches_dir/files" ]; then
      (cd "$patches_dir/files" && find . -type f ! -name '.*' | sed 's|^\./||')
    fi
    while read -r p; do
      [ -f "$patches_dir/patches/$p" ] || continue
      sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patches_dir/patches/$p"
    done < <(art_series "$patches_dir/series")
  } | sort -u
}

# The environment debian/rules exports for dh_auto_build, computed inside the build root, plus
# -ftrivial-auto-var-init=zero, which Soong's global cflags default to: ART is built as AOSP
# builds it. Without it ClassLinker::AssignVTableIndexes reads an alloca'd BitVector it never
# clears, and an imageless boot dies on a random String vtable ("Class mismatch").
# shellcheck disable=SC2016  # expanded inside the build root, not here
ART_BUILD_ENV='
export DEB_BUILD_MAINT_OPTIONS="hardening=+all optimize=-lto"
export DEB_CFLAGS_MAINT_APPEND="-fPIC -std=gnu17 -gdwarf-4 -ftrivial-auto-var-init=zero"
export DEB_CXXFLAGS_MAINT_APPEND="-fPIC -std=gnu++2a -gdwarf-4 -ftrivial-auto-var-init=zero"
export DEB_LDFLAGS_MAINT_APPEND="-fPIC -fuse-ld=lld -Wl,--build-id=sha1"
export DEB_CPPFLAGS_MAINT_APPEND="-DNDEBUG -UDEBUG -I/usr/include/android -fmessage-length=0 -fno-exceptions -fno-strict-aliasing -no-canonical-prefixes -Wno-c99-designator -Wno-gnu-designator -Wno-gnu-folding-constant"
export DEB_HOST_MULTIARCH="$(dpkg-architecture -qDEB_HOST_MULTIARCH)"
export DEB_HOST_ARCH="$(dpkg-architecture -qDEB_HOST_ARCH)"
export CC=clang CXX=clang++
eval "$(dpkg-buildflags --export=sh)"
'

# Run inside the build root, in a tree (cd'd into it) after $ART_BUILD_ENV: makes the files
# every compile of that tree includes, debian/out/operator_out.cc and debian/out/asm_defines.h.
# Each script that compiles ART files in a tree runs it itself, whatever ran before in that tree.
ART_GENERATED_HEADERS="$(cat <<'END_OF_SNIPPET'
mkdir -p debian/out
# asm_defines.h: libart.mk only knows it depends on asm_defines.cc, not on thread.h/thread.def
# (which the series changes), so it is always regenerated, and replaced only if it changed.
# make -B, not rm + make: the compiler writes the .s through a temporary file, so a run killed
# here leaves the previous .s in place, never none (a missing .s makes any later make that names
# asm_defines.h remake it and recompile what includes it).
{ nice -n 10 make -s -f debian/libart.mk debian/out/operator_out.cc
  nice -n 10 make -s -B -f debian/libart.mk debian/out/asm_defines.s
  tools/cpp-define-generator/make_header.py debian/out/asm_defines.s > debian/out/asm_defines.h.new
} >debian/hubble-generated.log 2>&1 || { cat debian/hubble-generated.log; exit 1; }
cmp -s debian/out/asm_defines.h.new debian/out/asm_defines.h || mv debian/out/asm_defines.h.new debian/out/asm_defines.h
rm -f debian/out/asm_defines.h.new
# The fresh .s must not look newer than an unchanged header, or libart.mk's rule remakes the
# header and everything including it recompiles (the compiler's two largest files); nor older
# than asm_defines.cc, or the same happens at the next make that names the header. An unchanged
# header older than a rewritten asm_defines.cc is stamped now: what includes it rebuilds once.
[ ! tools/cpp-define-generator/asm_defines.cc -nt debian/out/asm_defines.h ] || touch debian/out/asm_defines.h
touch -r debian/out/asm_defines.h debian/out/asm_defines.s
END_OF_SNIPPET
)"

# Is the build root fully provisioned?
art_buildroot_ready() { [ -f "$ART_BUILDROOT/.hubble-deps-ok" ]; }

# Whether the libart.so.0 at $1 is the one `scripts/art-build --full` last linked, with the Rust
# runtime, and checked (every bridge symbol defined): its size and time are those --full wrote
# to debian/hubble-rust/linked.stamp beside it. Another make that includes libart.mk can relink
# it without the runtime (HUBBLE_RUNTIME_LIB is --full's alone).
art_libart_linked_by_full() {
  local stamp
  stamp="$(dirname "$1")/../hubble-rust/linked.stamp"
  [ -f "$1" ] && [ "$(stat -c '%s %Y' "$1")" = "$(cat "$stamp" 2>/dev/null)" ]
}

# The same for the unpatched libart.so.0 of `scripts/art-build --full --pristine` (Debian's tree
# as fetched, $ART_CACHE/pristine-full): the size and time it wrote to
# debian/hubble-pristine/linked.stamp beside it.
art_libart_linked_by_pristine() {
  local stamp
  stamp="$(dirname "$1")/../hubble-pristine/linked.stamp"
  [ -f "$1" ] && [ "$(stat -c '%s %Y' "$1")" = "$(cat "$stamp" 2>/dev/null)" ]
}

ART_MOUNTS=()
art_mount() {  # art_mount SRC DEST-IN-ROOT [--bind|-t proc]
  local src="$1" dest="$ART_BUILDROOT$2"; shift 2
  mkdir -p "$dest"
  if ! mountpoint -q "$dest"; then
    hubble_as_root mount "$@" "$src" "$dest"
    ART_MOUNTS+=("$dest")
  elif [ "${1:-}" = --bind ] && [ "$(stat -c %d:%i "$src")" != "$(stat -c %d:%i "$dest")" ]; then
    # Another tree is mounted where ours goes (a killed run's leftover, or a checkout with another
    # HUBBLE_CACHE sharing this build root): compiling there would compile that tree, silently.
    hubble_die "$dest is a mount of another tree, not $src (another checkout sharing the build root $ART_BUILDROOT, or a killed run: umount $dest)"
  fi
}

# The build root's mount points (/hubble/...) are the same for every cache that shares the root
# (HUBBLE_ART_BUILDROOT): one user at a time, held until the process exits. Taken after the
# cache's own tree lock (art_lock), never before one, so two runs cannot wait on each other;
# a child of the holder (art-build running another script) inherits it through the environment.
art_lock_root() {
  [ "${HUBBLE_BUILDROOT_LOCKED:-}" = "$ART_BUILDROOT" ] && return 0
  local fd
  exec {fd}>"$ART_BUILDROOT.lock"
  if ! flock -n "$fd"; then
    hubble_log "waiting for another run using the build root $ART_BUILDROOT ($ART_BUILDROOT.lock)"
    flock "$fd"
  fi
  export HUBBLE_BUILDROOT_LOCKED="$ART_BUILDROOT"
}
art_umount_all() {
  local i
  for ((i = ${#ART_MOUNTS[@]} - 1; i >= 0; i--)); do
    hubble_as_root umount "${ART_MOUNTS[$i]}" 2>/dev/null || hubble_as_root umount -l "${ART_MOUNTS[$i]}" || true
  done
  ART_MOUNTS=()
}

# A private /dev for the build root: a tmpfs with the few device nodes a compiler, apt and
# dpkg need. The host's /dev is never bind-mounted in: a package script in the chroot, or an
# `rm -rf` of a root whose mounts outlived a killed run, would otherwise reach the host's
# device nodes (a host /dev/null turned into a regular file breaks every later cargo run).
art_mount_dev() {
  local dev="$ART_BUILDROOT/dev" node
  mkdir -p "$dev"
  mountpoint -q "$dev" && return 0
  hubble_as_root mount -t tmpfs -o mode=755,nosuid,size=64m hubble-dev "$dev"
  ART_MOUNTS+=("$dev")
  for node in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
    # shellcheck disable=SC2086  # name, major, minor
    set -- $node
    hubble_as_root mknod -m 666 "$dev/$1" c "$2" "$3"
  done
  hubble_as_root ln -s /proc/self/fd "$dev/fd"
  hubble_as_root ln -s /proc/self/fd/0 "$dev/stdin"
  hubble_as_root ln -s /proc/self/fd/1 "$dev/stdout"
  hubble_as_root ln -s /proc/self/fd/2 "$dev/stderr"
  hubble_as_root mkdir -m 1777 "$dev/shm"
}

# Mount points at or under DIR, deepest first, as /proc/self/mountinfo spells them (a space
# is \040 there, so DIR is escaped the same way; umount takes the decoded path, so spaces are
# decoded back).
art_mounts_under() {
  local dir
  dir="$(realpath -m "$1")"
  dir="${dir// /\\040}"
  awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print length($5) "\t" $5 }' \
    /proc/self/mountinfo | sort -rn | cut -f2- | sed 's/\\040/ /g'
}

# rm -rf for trees that may have had things mounted into them (the build root, trees bound
# into it): unmounts what is mounted under DIR first and refuses to go on if anything stays
# mounted; --one-file-system as a second guard. Never follows a mount into the host.
art_safe_rm() {
  local dir="$1" m left
  [ -e "$dir" ] || return 0
  while IFS= read -r m; do
    [ -n "$m" ] || continue
    hubble_as_root umount "$m" 2>/dev/null || hubble_as_root umount -l "$m" || true
  done < <(art_mounts_under "$dir")
  left="$(art_mounts_under "$dir")"
  [ -z "$left" ] || hubble_die "refusing to remove $dir: still mounted under it: $(tr '\n' ' ' <<<"$left")"
  hubble_as_root rm -rf --one-file-system "$dir"
}

# Take the build root and mount /proc and a private /dev into it: what every run inside it needs
# (scripts/host-vm-build and art-build --pristine mount their own trees beside). The
# caller must `trap art_umount_all EXIT`.
art_mount_base() {
  art_lock_root
  art_mount proc /proc -t proc
  art_mount_dev
}

# Mount /proc, a private /dev, the work tree and the Rust target dir into the build root. The
# caller must `trap art_umount_all EXIT`.
art_mount_all() {
  art_mount_base
  if [ -d "$ART_WORK" ]; then art_mount "$ART_WORK" "$ART_IN_ROOT" --bind; fi
  mkdir -p "$RUST_DIR/target"
  art_mount "$RUST_DIR/target" "$RUST_IN_ROOT" --bind
}

# Run a bash script inside the build root with a clean environment.
art_in_root() {
  hubble_as_root chroot "$ART_BUILDROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive /bin/bash -euo pipefail -c "$1"
}

# Serialize users of one tree (art-apply and art-build on the work tree, --full on its own
# tree): several engineers share one cache on one machine. art_lock NAME waits for the lock;
# it is released when the process exits (or by art_unlock NAME).
declare -A ART_LOCK_FDS=()
art_lock() {
  local name="$1" fd
  mkdir -p "$ART_CACHE"
  exec {fd}>"$ART_CACHE/.lock-$name"
  if ! flock -n "$fd"; then
    hubble_log "waiting for another art-* run on the $name tree ($ART_CACHE/.lock-$name)"
    flock "$fd"
  fi
  ART_LOCK_FDS[$name]=$fd
}
art_unlock() {
  local fd="${ART_LOCK_FDS[$1]:-}"
  [ -n "$fd" ] || return 0
  flock -u "$fd"; exec {fd}>&-
  unset "ART_LOCK_FDS[$1]"
}
