// bindgen's input for src/props.rs's `sys` (Android only): bionic's system property calls, read
// by build.rs in a cargo build for Android and by Android.bp's rust_bindgen
// libhubble_runtime_system_properties under Soong (the same flags: bp_check.py compares them).
#include <sys/system_properties.h>
