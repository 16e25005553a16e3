# shellcheck shell=bash
# What host-VM scripts share: compile a Java program against mini-core and dex it, build a JNI
# library, wait for what a program running in the background must do.
# Sourced after scripts/lib/common.sh.

# hostvm_dex OUT.dex BOOT_CLASSES SOURCE.java... [-- JAVAC_ARG...]: javac -source 8 -target 8
# against the boot classes (mini-core's, as ART will see them), then dx --min-sdk-version=26
# (Debian bullseye's dalvik-exchange; d8 upstream) into OUT.dex. The classes go to a directory
# beside OUT (OUT without .dex, plus -classes), emptied first.
hostvm_dex() {
  local out="$1" boot="$2" srcs=() extra=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do srcs+=("$1"); shift; done
  [ $# -eq 0 ] || { shift; extra=("$@"); }
  local classes="${out%.dex}-classes"
  rm -rf "$classes"
  mkdir -p "$classes"
  javac -source 8 -target 8 -nowarn -Xlint:-options -bootclasspath "$boot" "${extra[@]}" \
    -d "$classes" "${srcs[@]}" >&2
  hostvm_dx "$out" "$classes"
}

# hostvm_dx OUT.dex INPUT...: class directories or jars dexed by dx --min-sdk-version=26.
hostvm_dx() {
  local out="$1"; shift
  nice -n 10 java -cp /usr/share/java/com.android.dx.jar com.android.dx.command.Main --dex \
    --min-sdk-version=26 --output="$out" "$@" >&2
}

# hostvm_plugin_dexes WORK DIR BOOT_CLASSES: each DIR/plugin-*/ (the sources of a plugin the
# program loads through a class loader of its own) dexed into WORK/plugin-*.dex; their paths in
# the array plugin_dexes.
hostvm_plugin_dexes() {
  local work="$1" dir="$2" boot="$3" plugin name
  plugin_dexes=()
  for plugin in "$dir"/plugin-*/; do
    [ -d "$plugin" ] || continue
    name="$(basename "$plugin")"
    hostvm_dex "$work/$name.dex" "$boot" "$plugin"*.java
    plugin_dexes+=("$work/$name.dex")
  done
}

# hostvm_jni_lib OUT.so SOURCE.c...: a user JNI library (the host JDK's jni.h, libc only), as an
# app's .so; art-run takes it as a --dex (it mounts every --dex file, the class path skips what
# is not a dex) and the program finds its path in java.class.path.
hostvm_jni_lib() {
  local out="$1" include
  shift
  include="$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")/include"
  gcc -shared -fPIC -O2 -Wall -Werror -I"$include" -I"$include/linux" -o "$out" "$@"
}

# hostvm_wait_for WHAT SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds; after
# SECONDS, says "no WHAT after SECONDSs" on stdout and fails. For a program the VM runs in the
# background: its "ready" line, a trace file it must leave.
hostvm_wait_for() {
  local what="$1" secs="$2" i; shift 2
  for ((i = 0; i < secs * 10; i++)); do "$@" && return 0; sleep 0.1; done
  echo "no $what after ${secs}s"; return 1
}

# hostvm_one_file GLOB: whether a file matches GLOB.
hostvm_one_file() { compgen -G "$1" >/dev/null; }
