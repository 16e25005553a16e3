# shellcheck shell=bash
# Fake build/envsetup.sh for tests/stages/50-aosp-scripts.sh: lunch and m record their calls in
# $FAKE_LOG; lunch sets the variables the real one does (ANDROID_BUILD_TOP, ANDROID_PRODUCT_OUT,
# ANDROID_HOST_OUT, TARGET_PRODUCT) and puts the host out bin dir on PATH.
lunch() {
  printf 'lunch | %s\n' "$*" >> "$FAKE_LOG"
  local combo="$1" product
  product="${combo%%-*}"
  case "$combo" in *-user|*-userdebug|*-eng) ;; *) echo "Invalid lunch combo: $combo" >&2; return 1 ;; esac
  export ANDROID_BUILD_TOP="$PWD" TARGET_PRODUCT="$product"
  export ANDROID_PRODUCT_OUT="$PWD/out/target/product/${product#aosp_}"
  export ANDROID_HOST_OUT="$PWD/out/host/linux-x86"
  export PATH="$ANDROID_HOST_OUT/bin:$PATH"
}
m() { printf 'm | %s%s\n' "${ALLOW_MISSING_DEPENDENCIES:+ALLOW_MISSING_DEPENDENCIES | }" "$*" >> "$FAKE_LOG"; }
