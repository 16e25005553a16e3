//! Compiles the C++ half of the cxx bridge for host builds.
//!
//! On Android, Soong generates the same C++ with `cxxbridge` (Android.bp genrules) and libart
//! compiles it next to art/runtime/hubble/hubble_bridge.cc; this script does not run there.
//! On the host the bridge's C++ callees come from `host/bridge_double.cc` (a test double of ART)
//! and, for the force stop's lock, the real `art/runtime/hubble/thread_state.cc` compiled against
//! `host/art-model/` (ART's suspend protocol, modelled from its source), unless the `art` feature
//! says the crate is being linked into a real (host-built) libart.
//!
//! In a cargo build for Android it also generates bionic's system property calls
//! (`src/props.rs`, `sys`) with bindgen from `system_properties.h`, as Soong's rust_bindgen does
//! with the same flags ([`SYSTEM_PROPERTIES_FLAGS`]). No cargo build here targets Android (no NDK
//! on this host), so that path is compiled only where one does.

/// bindgen's options for bionic's system property calls, as Android.bp's `bindgen_flags` of
/// libhubble_runtime_system_properties (tests/aosp/bp_check.py compares them).
const SYSTEM_PROPERTIES_FLAGS: &[&str] =
    &["--allowlist-function=__system_property_(find|read_callback|wait|area_serial)"];

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
        println!("cargo:rerun-if-changed={art_files}/hubble/trace_point.h");
    }
    build.include(art_files).flag_if_supported("-std=c++17");
    build.compile("hubble_runtime_bridge");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed={art_files}/hubble/hubble_bridge.h");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("android") {
        system_properties();
    }
}

/// `$OUT_DIR/system_properties.rs` (Android.bp's `source_stem`) from bionic's header, with the
/// NDK's sysroot that the Android cargo setup gives clang (bindgen passes the target; extra
/// arguments come from `BINDGEN_EXTRA_CLANG_ARGS_<target>`).
fn system_properties() {
    let mut builder = bindgen::Builder::default()
        .header("system_properties.h")
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    for flag in SYSTEM_PROPERTIES_FLAGS {
        builder = match flag.split_once('=') {
            Some(("--allowlist-function", regex)) => builder.allowlist_function(regex),
            _ => panic!("build.rs knows no bindgen flag {flag}"),
        };
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"))
        .join("system_properties.rs");
    builder
        .generate()
        .unwrap_or_else(|e| panic!("bindgen on system_properties.h: {e}"))
        .write_to_file(&out)
        .unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}
