//! Compiles the C++ half of the cxx bridge for host builds.
//!
//! On Android, Soong generates the same C++ with `cxxbridge` (Android.bp genrules) and libart
//! compiles it next to art/runtime/hubble/hubble_bridge.cc; this script does not run there.
//! On the host the bridge's C++ callees come from `host/bridge_double.cc` (a test double of ART)
//! and, for the force stop's lock, the real `art/runtime/hubble/thread_state.cc` compiled against
//! `host/art-model/` (ART's suspend protocol, modelled from its source), unless the `art` feature
//! says the crate is being linked into a real (host-built) libart.

fn main() {
    let art_files = "../../art-patches/files/runtime";
    let mut build = cxx_build::bridge("src/lib.rs");
    if std::env::var_os("CARGO_FEATURE_ART").is_none() {
        // The model of ART's headers comes first: thread_state.cc's "thread.h" is the model's.
        build
            .include("host/art-model")
            .file("host/bridge_double.cc")
            .file("host/art-model/model.cc")
            .file(format!("{art_files}/hubble/thread_state.cc"));
        println!("cargo:rerun-if-changed=host");
        println!("cargo:rerun-if-changed={art_files}/hubble/thread_state.cc");
    }
    build.include(art_files).flag_if_supported("-std=c++17");
    build.compile("hubble_runtime_bridge");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed={art_files}/hubble/hubble_bridge.h");
}
