//! Generates hubble_layout from ART's headers (layout.hpp) with bindgen.
//!
//! Soong runs the same bindgen on the same wrapper (Android.bp's `rust_bindgen`
//! `libhubble_layout`, whose `bindgen_flags` are [`FLAGS`] word for word: tests/aosp/bp_check.py
//! compares them); its crate is the generated file itself, which `src/lib.rs` includes here.

use std::path::PathBuf;

/// bindgen's options as its command-line flags, the form Android.bp's `bindgen_flags` takes.
const FLAGS: &[&str] = &[
    "--use-core",
    "--disable-name-namespacing",
    "--allowlist-var=HUBBLE_(POOL|BLOCK)_.*",
    "--allowlist-var=art::hubble::tp::k(Mark.*|IdentityMask)",
    "--allowlist-type=art::hubble::tp::(BlockWord|TaskKind)",
    "--constified-enum-module=art::hubble::tp::(BlockWord|TaskKind)",
];

/// The generated file's name (Android.bp's `source_stem`, plus `.rs`).
const OUTPUT: &str = "layout.rs";

fn main() {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let runtime = manifest.join("../../art-patches/files/runtime");
    let mut builder = bindgen::Builder::default()
        .header(manifest.join("layout.hpp").to_str().expect("UTF-8 path"))
        .clang_arg(format!("-I{}", runtime.display()))
        .clang_arg("-std=c++17")
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    for flag in FLAGS {
        builder = apply(builder, flag);
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join(OUTPUT);
    builder
        .generate()
        .unwrap_or_else(|e| panic!("bindgen on layout.hpp (libclang: libclang-dev): {e}"))
        .write_to_file(&out)
        .unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}

/// `flag` on the builder, as the bindgen command line takes it.
fn apply(builder: bindgen::Builder, flag: &str) -> bindgen::Builder {
    let (name, value) = flag.split_once('=').unwrap_or((flag, ""));
    match name {
        "--use-core" => builder.use_core(),
        "--disable-name-namespacing" => builder.disable_name_namespacing(),
        "--allowlist-var" => builder.allowlist_var(value),
        "--allowlist-type" => builder.allowlist_type(value),
        "--constified-enum-module" => builder.constified_enum_module(value),
        _ => panic!("build.rs knows no bindgen flag {flag}"),
    }
}
