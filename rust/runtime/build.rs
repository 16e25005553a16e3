//! Compiles the C++ half of the cxx bridge for host builds.
//!
//! On Android, Soong generates the same C++ with `cxxbridge` (Android.bp genrules) and libart
//! compiles it next to art/runtime/hubble/hubble_bridge.cc; this script does not run there.
//! On the host the bridge's C++ callees come from `host/bridge_double.cc` (a test double of ART)
//! unless the `art` feature says the crate is being linked into a real (host-built) libart.

fn main() {
    let art_files = "../../art-patches/files/runtime";
    let mut build = cxx_build::bridge("src/lib.rs");
    build.include(art_files).flag_if_supported("-std=c++17");
    if std::env::var_os("CARGO_FEATURE_ART").is_none() {
        build.file("host/bridge_double.cc");
        println!("cargo:rerun-if-changed=host/bridge_double.cc");
    }
    build.compile("hubble_runtime_bridge");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed={art_files}/hubble/hubble_bridge.h");
}
