//! Capstone listings of every emitted sequence, checked against tests/golden/*.txt.
//! Refresh deliberately with `HUBBLE_BLESS=1 cargo test -p hubble-hotpath-emu --test golden`
//! (and re-read docs/hot-path.md, which quotes them).
mod common;

use common::disasm::{listing, Isa};
use hubble_hotpath_emu::*;

fn render(isa: Isa) -> String {
    let mut s = String::new();
    let kinds = [
        ("entry", Kind::Entry),
        ("entry, pointer known < 4 GiB", Kind::EntryNarrow),
        ("exit", Kind::Exit),
    ];
    for isb in [false, true] {
        let opts = Options {
            isb,
            ..Options::default()
        };
        for (name, kind) in kinds {
            let (blob, what) = match isa {
                Isa::A64 => (
                    emit_a64(kind, 0, &thread_offsets::A64, opts),
                    "x0 = ArtMethod*, x19 = Thread*",
                ),
                Isa::T32 => (
                    emit_t32(kind, 0, [4, 5, 6], &thread_offsets::ARM32, opts),
                    "r0 = ArtMethod*, r9 = Thread*, temps r4 r5 r6",
                ),
            };
            let isb = if isb { ", ISB option" } else { "" };
            s.push_str(&format!("## {name}{isb} ({what})\n"));
            s.push_str(&listing(isa, &blob));
            s.push('\n');
        }
    }
    if isa == Isa::A64 {
        s.push_str("## Nanoscope's entry (its wiki), same encoder\n");
        s.push_str(&listing(
            isa,
            &emit_nanoscope_a64(thread_offsets::A64[field::CURSOR], Terminator::Trap),
        ));
    }
    s.push_str(&format!(
        "# thread offsets from {}\n",
        thread_offsets::SOURCE
    ));
    s
}

fn check(isa: Isa, file: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(file);
    let got = render(isa);
    if std::env::var_os("HUBBLE_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        got == want,
        "{} differs from the emitted code; diff:\n{}",
        path.display(),
        diff(&want, &got)
    );
}

fn diff(want: &str, got: &str) -> String {
    let (w, g): (Vec<_>, Vec<_>) = (want.lines().collect(), got.lines().collect());
    let mut out = String::new();
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (
            w.get(i).copied().unwrap_or(""),
            g.get(i).copied().unwrap_or(""),
        );
        if a != b {
            out.push_str(&format!("-{a}\n+{b}\n"));
        }
    }
    out
}

#[test]
fn a64_listing_matches_golden() {
    check(Isa::A64, "a64.txt");
}

#[test]
fn t32_listing_matches_golden() {
    check(Isa::T32, "t32.txt");
}
