//! Compiles the real trace-point emitters (art-patches/files/compiler/optimizing/hubble/*.cc)
//! and the small host driver against Debian's libvixl-dev, and turns
//! art-patches/thread-offsets.txt (the real `Thread` offsets) into Rust constants.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const FIELDS: [&str; 5] = [
    "hubble_cursor",
    "hubble_limit",
    "hubble_stop",
    "hubble_begin",
    "hubble_end",
];

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest.join("../../..");
    let emitters = repo.join("art-patches/files/compiler/optimizing/hubble");
    let driver = manifest.join("cpp/driver.cc");

    let cflags = Command::new("pkg-config")
        .args(["--cflags", "vixl"])
        .output()
        .expect("pkg-config not found (scripts/deps/hotpath.apt)");
    assert!(
        cflags.status.success(),
        "pkg-config --cflags vixl failed: install libvixl-dev (scripts/deps/hotpath.apt)"
    );
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .warnings(true)
        .extra_warnings(true);
    build.flag("-Wno-deprecated-declarations");
    for flag in String::from_utf8(cflags.stdout).unwrap().split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-I") {
            build.include(dir);
        } else if let Some(def) = flag.strip_prefix("-D") {
            let (k, v) = def
                .split_once('=')
                .map_or((def, None), |(k, v)| (k, Some(v)));
            build.define(k, v);
        }
    }
    build.include(&emitters);
    for name in ["trace_point_arm64.cc", "trace_point_arm_vixl.cc"] {
        build.file(emitters.join(name));
    }
    build.file(&driver);
    build.compile("hubble_hotpath_driver");
    println!("cargo:rustc-link-lib=dylib=vixl");
    println!("cargo:rerun-if-changed={}", emitters.display());
    for entry in fs::read_dir(&emitters).unwrap() {
        println!("cargo:rerun-if-changed={}", entry.unwrap().path().display());
    }
    println!("cargo:rerun-if-changed={}", driver.display());

    let offsets = repo.join("art-patches/thread-offsets.txt");
    println!("cargo:rerun-if-changed={}", offsets.display());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("thread_offsets.rs");
    fs::write(out, offsets_rs(&offsets)).unwrap();
}

/// `<field> <ptr_size> <offset>` lines (`#` comments) → `A64` and `ARM32` offset arrays in the
/// order cursor, limit, stop, begin, end.
fn offsets_rs(path: &Path) -> String {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(_) => {
            println!(
                "cargo:warning={} is missing: using the layout patch 0001 implies \
                 (block first in tlsPtr_) with a placeholder tlsPtr_ offset",
                path.display()
            );
            return "/// Placeholder (thread-offsets.txt missing).\npub const SOURCE: &str = \"placeholder\";\n\
                    pub const A64: [i32; 5] = [136, 144, 152, 160, 168];\n\
                    pub const ARM32: [i32; 5] = [128, 132, 136, 140, 144];\n"
                .to_string();
        }
    };
    let mut a64 = [None; 5];
    let mut arm32 = [None; 5];
    for line in text.lines() {
        let line = line.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        assert!(parts.len() == 3, "bad line in thread-offsets.txt: {line}");
        let Some(index) = FIELDS.iter().position(|f| *f == parts[0]) else {
            continue;
        };
        let offset: i32 = parts[2].parse().expect("offset");
        match parts[1] {
            "8" => a64[index] = Some(offset),
            "4" => arm32[index] = Some(offset),
            other => panic!("bad pointer size {other} in thread-offsets.txt"),
        }
    }
    let list = |v: [Option<i32>; 5], what: &str| {
        v.iter()
            .enumerate()
            .map(|(i, o)| {
                o.unwrap_or_else(|| panic!("thread-offsets.txt lacks {} for {what}", FIELDS[i]))
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "/// From art-patches/thread-offsets.txt.\npub const SOURCE: &str = \"thread-offsets.txt\";\n\
         pub const A64: [i32; 5] = [{}];\npub const ARM32: [i32; 5] = [{}];\n",
        list(a64, "pointer size 8"),
        list(arm32, "pointer size 4")
    )
}
