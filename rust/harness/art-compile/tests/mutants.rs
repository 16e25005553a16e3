//! The checks of the compiler harness can fail: the same methods compiled by harnesses whose
//! arm64 trace-point emitter is broken on purpose (cpp/mutate.sh, built by `scripts/art-build
//! --compiler`) must be rejected, while the real emitter passes the same runs.
//!   clobber: every trace point writes x2, a register it does not own (the register check and,
//!            for a method whose second argument lives in x2, the result catch it);
//!   noexit:  exits branch past their store (the ring no longer equals the call the harness
//!            made);
//!   clobber-t32: the thumb2 emitter writes a low register that is none of the temps the
//!            register allocator gave the node (r1 in sumLoop's entry, its first argument);
//!   noexit-x86_64: the x86_64 emitter's exits jump past their store (run natively: the ring
//!            the child sends back no longer equals the call).
mod common;

use common::{corpus_dex, harness_or_skip};
use hubble_art_compile::{check_traced, execute, parse_args};

const METHOD: &str = "LArith;->sumLoop(II)I";

fn problems(h: &hubble_art_compile::Harness, dir: &std::path::Path, isa: &str) -> Vec<String> {
    let dex = corpus_dex(dir);
    let c = h
        .compile(&dex, METHOD, isa, true, &dir.join("m.txt"))
        .expect("compile");
    let args = parse_args(&c.shorty, "5,7").unwrap();
    let o = execute(&c, &c.isas[0], &args).expect("run");
    let mut p = check_traced(&o);
    // sumLoop(5, 7) = sum of (i * 7 + 5) for i < 5 = 95 (computed by hand).
    if o.result != 95 {
        p.push(format!("result {} instead of 95", o.result as i32));
    }
    p
}

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("hubble-mutants-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn real_emitter_passes_and_both_mutants_are_caught() {
    let Some(h) = harness_or_skip() else { return };
    for isa in ["arm64", "thumb2", "x86_64"] {
        let ok = problems(&h, &dir(&format!("real-{isa}")), isa);
        assert!(ok.is_empty(), "the real {isa} emitter fails: {ok:?}");
    }

    let clobber = problems(
        &h.mutant("clobber").expect("mutant"),
        &dir("clobber"),
        "arm64",
    );
    assert!(
        clobber.iter().any(|p| p.contains("register 2 changed")),
        "the clobbering mutant was not caught by the register check: {clobber:?}"
    );

    let noexit = problems(
        &h.mutant("noexit").expect("mutant"),
        &dir("noexit"),
        "arm64",
    );
    assert!(
        noexit.iter().any(|p| p.contains("ring")),
        "the exit-dropping mutant was not caught by the ring check: {noexit:?}"
    );
    let t32 = problems(
        &h.mutant("clobber-t32").expect("mutant"),
        &dir("clobber-t32"),
        "thumb2",
    );
    assert!(
        t32.iter().any(|p| p.contains("register 1 changed")),
        "the thumb2 clobbering mutant was not caught by the register check: {t32:?}"
    );
    let x86 = problems(
        &h.mutant("noexit-x86_64").expect("mutant"),
        &dir("noexit-x86_64"),
        "x86_64",
    );
    assert!(
        x86.iter().any(|p| p.contains("ring")),
        "the x86_64 exit-dropping mutant was not caught by the ring check: {x86:?}"
    );
    for name in [
        "real-arm64",
        "real-thumb2",
        "real-x86_64",
        "clobber",
        "noexit",
        "clobber-t32",
        "noexit-x86_64",
    ] {
        let d = std::env::temp_dir().join(format!("hubble-mutants-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(d);
    }
    eprintln!(
        "mutants caught:\n  clobber: {clobber:?}\n  noexit: {noexit:?}\n  clobber-t32: {t32:?}\n  \
         noexit-x86_64: {x86:?}"
    );
}
