//! The x86_64 and x86 trace points as ART's assembler emits them, disassembled by objdump, against
//! `tests/golden/x86.txt` (the listings `docs/hot-path.md` quotes). A change to the emitters or to
//! ART's assemblers that changes a byte fails here until the golden file is regenerated with
//! `HUBBLE_UPDATE_GOLDEN=1` (and the docs checked).
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use hubble_hotpath_x86::{Blobs, Isa, Kind};

fn objdump(isa: Isa, bytes: &[u8], dir: &Path) -> String {
    let bin = dir.join("blob.bin");
    std::fs::write(&bin, bytes).unwrap();
    let machine = match isa {
        Isa::X86_64 => "i386:x86-64",
        Isa::X86 => "i386",
    };
    let out = Command::new("objdump")
        .args(["-D", "-b", "binary", "-m", machine, "--no-show-raw-insn"])
        .arg(&bin)
        .output()
        .expect("objdump (binutils)");
    assert!(out.status.success(), "objdump failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with(' ') && l.contains(':'))
        .map(|l| l.trim_end().to_string() + "\n")
        .collect()
}

#[test]
fn listings_match_the_golden_file() {
    let blobs = Blobs::load();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let mut text = String::new();
    for (isa, kind, counter, cursor, method) in [
        (Isa::X86_64, Kind::Entry, "rdtsc", "rcx", "rdi"),
        (Isa::X86_64, Kind::EntryNarrow, "rdtsc", "rcx", "rdi"),
        (Isa::X86_64, Kind::Exit, "rdtsc", "rcx", "rdi"),
        (Isa::X86_64, Kind::Entry, "lfence-rdtsc", "rcx", "rdi"),
        (Isa::X86_64, Kind::Exit, "rdtscp", "r8", "rdi"),
        (Isa::X86, Kind::Entry, "rdtsc", "ecx", "esi"),
        (Isa::X86, Kind::Exit, "rdtsc", "ecx", "esi"),
    ] {
        let b = blobs.get(isa, kind, counter, cursor, method);
        writeln!(
            text,
            "== {} {kind:?} {counter} cursor={cursor} method={method}: inline 0..{:#x}, RET, out of line {:#x}..{:#x}",
            isa.name(),
            b.terminator,
            b.out_of_line,
            b.bytes.len()
        )
        .unwrap();
        text += &objdump(isa, &b.bytes, dir);
    }
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/x86.txt");
    if std::env::var_os("HUBBLE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &text).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap_or_default();
    assert!(
        want == text,
        "the emitted x86 bytes differ from {} (HUBBLE_UPDATE_GOLDEN=1 regenerates it):\n{text}",
        golden.display()
    );
}
