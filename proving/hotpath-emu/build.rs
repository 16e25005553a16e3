//! Compiles the real trace-point emitters (art-patches/files/compiler/optimizing/hubble_*.cc)
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
    let repo = manifest.join("../..");
    let emitters = repo.join("art-patches/files/compiler/optimizing");
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
    for name in [
        "hubble_trace_point_arm64.cc",
        "hubble_trace_point_arm_vixl.cc",
    ] {
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
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out_dir.join("thread_offsets.rs"), offsets_rs(&offsets)).unwrap();
    pool_take(&repo, &manifest, &offsets, &out_dir, Isa::A64);
    pool_take(&repo, &manifest, &offsets, &out_dir, Isa::T32);
    pool_take(&repo, &manifest, &offsets, &out_dir, Isa::X86);
    nterp_a32(&repo, &manifest, &offsets, &out_dir);
}

#[derive(Clone, Copy, PartialEq)]
enum Isa {
    A64,
    T32,
    X86,
}

/// `-DTHREAD_<FIELD>_OFFSET=` for the five Hubble words and tid of one pointer size.
fn offset_defines(offsets: &Path, pointer: &str) -> Vec<String> {
    let text = fs::read_to_string(offsets).unwrap_or_default();
    let mut defines = Vec::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split('#').next().unwrap().split_whitespace().collect();
        if parts.len() == 3 && parts[1] == pointer {
            let name = match parts[0].strip_prefix("hubble_") {
                Some(field) => format!("HUBBLE_{}", field.to_uppercase()),
                None => parts[0].to_uppercase(),
            };
            defines.push(format!("-DTHREAD_{name}_OFFSET={}", parts[2]));
        }
    }
    assert_eq!(
        defines.len(),
        6,
        "thread-offsets.txt must give the five Hubble words and tid for {pointer}-byte pointers"
    );
    defines
}

fn run(tool: &str, args: &mut Command) {
    let status = args.status().unwrap_or_else(|e| {
        panic!("{tool}: {e} (Debian gcc-*-linux-gnu*, scripts/deps/hotpath.apt)")
    });
    assert!(status.success(), "{tool} failed: {args:?}");
}

/// Assembles the runtime's block-end function of `isa` (art-patches/files/runtime/hubble/
/// pool_arm64.S through cpp/pool_a64.S; pool_arm.S, T32, through cpp/pool_t32.S; pool_x86.S
/// through hotpath-x86's cpp/pool_x86.S) with the cross assembler and keeps its raw bytes:
/// position-independent code the tests (and the compiler harness) place in unicorn at an address
/// of their choice.
fn pool_take(repo: &Path, manifest: &Path, offsets: &Path, out_dir: &Path, isa: Isa) {
    let (source, harness, pointer, tools, name) = match isa {
        Isa::A64 => (
            "pool_arm64.S",
            "cpp/pool_a64.S",
            "8",
            "aarch64-linux-gnu",
            "a64",
        ),
        Isa::T32 => (
            "pool_arm.S",
            "cpp/pool_t32.S",
            "4",
            "arm-linux-gnueabihf",
            "t32",
        ),
        Isa::X86 => (
            "pool_x86.S",
            "../hotpath-x86/cpp/pool_x86.S",
            "4",
            "i686-linux-gnu",
            "x86",
        ),
    };
    let source = repo.join("art-patches/files/runtime/hubble").join(source);
    let harness = manifest.join(harness);
    println!("cargo:rerun-if-changed={}", source.display());
    println!(
        "cargo:rerun-if-changed={}",
        source.with_file_name("pool_layout.h").display()
    );
    println!("cargo:rerun-if-changed={}", harness.display());
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("../asm/art_functions.S").display()
    );
    let object = out_dir.join(format!("pool_{name}.o"));
    let gcc = format!("{tools}-gcc");
    run(
        &gcc,
        Command::new(&gcc)
            .args(["-c", "-x", "assembler-with-cpp"])
            .args(offset_defines(offsets, pointer))
            .arg("-I")
            .arg(repo.join("art-patches/files"))
            .arg(&harness)
            .arg("-o")
            .arg(&object),
    );
    let objcopy = format!("{tools}-objcopy");
    run(
        &objcopy,
        Command::new(&objcopy)
            .args(["-O", "binary", "--only-section=.text"])
            .arg(&object)
            .arg(out_dir.join(format!("pool_take_{name}.bin"))),
    );
}

/// nterp's arm macros (art-patches/files/runtime/hubble/nterp_arm.S, with its slow path and the
/// T32 block-end function it calls) through cpp/nterp_a32.S, linked at 0 (the slow path is
/// reached with BL, the function with BLX) and kept as raw bytes, with the offsets of the
/// wrappers and functions for the tests (`nterp_a32_symbols.rs`).
fn nterp_a32(repo: &Path, manifest: &Path, offsets: &Path, out_dir: &Path) {
    let hubble = repo.join("art-patches/files/runtime/hubble");
    let harness = manifest.join("cpp/nterp_a32.S");
    for f in ["nterp_arm.S", "pool_arm.S", "pool_layout.h"] {
        println!("cargo:rerun-if-changed={}", hubble.join(f).display());
    }
    println!("cargo:rerun-if-changed={}", harness.display());
    let elf = out_dir.join("nterp_a32.elf");
    run(
        "arm-linux-gnueabihf-gcc",
        Command::new("arm-linux-gnueabihf-gcc")
            .args(["-nostdlib", "-static", "-x", "assembler-with-cpp"])
            .args(["-Wl,-Ttext=0", "-Wl,--build-id=none", "-Wl,-e,0"])
            .args(offset_defines(offsets, "4"))
            .arg("-I")
            .arg(repo.join("art-patches/files"))
            .arg(&harness)
            .arg("-o")
            .arg(&elf),
    );
    run(
        "arm-linux-gnueabihf-objcopy",
        Command::new("arm-linux-gnueabihf-objcopy")
            .args(["-O", "binary", "--only-section=.text"])
            .arg(&elf)
            .arg(out_dir.join("nterp_a32.bin")),
    );
    let nm = Command::new("arm-linux-gnueabihf-nm")
        .arg(&elf)
        .output()
        .expect("arm-linux-gnueabihf-nm (binutils-arm-linux-gnueabihf)");
    let mut consts = String::new();
    for line in String::from_utf8(nm.stdout).unwrap().lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [addr, "T", name] = f.as_slice() {
            consts.push_str(&format!(
                "/// Offset of `{name}`.\npub const {}: u64 = 0x{addr};\n",
                name.to_uppercase()
            ));
        }
    }
    assert!(
        consts.contains("HUBBLE_POOL_TAKE"),
        "nterp_a32.elf has no hubble_pool_take"
    );
    fs::write(out_dir.join("nterp_a32_symbols.rs"), consts).unwrap();
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
