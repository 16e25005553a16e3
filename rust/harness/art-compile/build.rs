//! Compiles the runtime's trace point (art-patches/files/runtime/hubble/trace_point.h,
//! unchanged) into the harness: its double of the unwinder writes the exits of the compiled
//! frames an exception pops with it, as patch 0021 has the runtime do (cpp/unwind_exit.cc).

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let runtime = manifest.join("../../../art-patches/files/runtime");
    let shim = manifest.join("cpp/unwind_exit.cc");
    println!("cargo:rerun-if-changed={}", shim.display());
    println!(
        "cargo:rerun-if-changed={}",
        runtime.join("hubble/trace_point.h").display()
    );
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .file(&shim)
        .include(&runtime)
        .warnings(true)
        .compile("hubble_unwind_exit");
}
