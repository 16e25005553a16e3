# shellcheck shell=bash
# What every host-VM script does to a Java program: compile it against mini-core and dex it.
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
  java -cp /usr/share/java/com.android.dx.jar com.android.dx.command.Main --dex \
    --min-sdk-version=26 --output="$out" "$classes" >&2
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
