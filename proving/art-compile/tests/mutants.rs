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
//!            the child sends back no longer equals the call);
//!   noexit-x86: the same in the x86 emitter (run in unicorn: the ring no longer equals the
//!            call the harness made);
//!   clobber-x86: the x86 emitter writes ESI (its first non-temp candidate; sumLoop keeps its
//!            second argument there across the entry), which the register check catches.
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
fn real_emitters_pass_and_every_mutant_is_caught() {
    let Some(h) = harness_or_skip() else { return };
    for isa in ["arm64", "thumb2", "x86_64", "x86"] {
        let ok = problems(&h, &dir(&format!("real-{isa}")), isa);
        assert!(ok.is_empty(), "the real {isa} emitter fails: {ok:?}");
    }

    // (mutant, ISA, text its report must contain, the check that must report it)
    let mutants = [
        (
            "clobber",
            "arm64",
            "register 2 changed",
            "the register check",
        ),
        ("noexit", "arm64", "ring", "the ring check"),
        (
            "clobber-t32",
            "thumb2",
            "register 1 changed",
            "the register check",
        ),
        ("noexit-x86_64", "x86_64", "ring", "the ring check"),
        ("noexit-x86", "x86", "ring", "the ring check"),
        (
            "clobber-x86",
            "x86",
            "register 6 changed",
            "the register check",
        ),
    ];
    let mut caught = Vec::new();
    for (kind, isa, report, check) in mutants {
        let p = problems(&h.mutant(kind).expect("mutant"), &dir(kind), isa);
        assert!(
            p.iter().any(|p| p.contains(report)),
            "the {isa} mutant {kind} was not caught by {check}: {p:?}"
        );
        caught.push(format!("  {kind}: {p:?}"));
    }
    for name in ["real-arm64", "real-thumb2", "real-x86_64", "real-x86"]
        .into_iter()
        .chain(mutants.map(|m| m.0))
    {
        let d = std::env::temp_dir().join(format!("hubble-mutants-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(d);
    }
    eprintln!("mutants caught:\n{}", caught.join("\n"));
}
