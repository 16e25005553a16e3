//! Compiles the runtime's trace point (art-patches/files/runtime/hubble/trace_point.h,
//! unchanged) into the harness: its double of the unwinder writes the exits of the compiled
//! frames an exception pops with it, as patch 0021 has the runtime do (cpp/unwind_exit.cc).
//! On an x86_64 host, also the pool's block-end function (runtime/hubble/pool_x86_64.S,
//! unchanged, through hotpath-x86's wrapper of ART's function macros) at the offsets of
//! art-patches/thread-offsets.txt: compiled x86_64 code runs natively in many-thread mode and
//! calls it (src/native.rs).

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let files = manifest.join("../../art-patches/files");
    let runtime = files.join("runtime");
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
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
        let wrapper = manifest.join("../hotpath-x86/cpp/pool_x86_64.S");
        let offsets = manifest.join("../../art-patches/thread-offsets.txt");
        let macros = manifest.join("../asm/art_functions.S");
        let sources = [
            runtime.join("hubble/pool_x86_64.S"),
            runtime.join("hubble/pool_layout.h"),
        ];
        for f in [&wrapper, &offsets, &macros].into_iter().chain(&sources) {
            println!("cargo:rerun-if-changed={}", f.display());
        }
        let text = std::fs::read_to_string(&offsets).expect("art-patches/thread-offsets.txt");
        let mut build = cc::Build::new();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 3 || f[1] != "8" {
                continue;
            }
            let name = match f[0] {
                "tid" => "THREAD_TID_OFFSET".to_string(),
                field => format!("THREAD_{}_OFFSET", field.to_uppercase()),
            };
            build.define(&name, f[2]);
        }
        build
            .file(&wrapper)
            .include(&files)
            .compile("hubble_pool_take_x86_64");
    }
}
