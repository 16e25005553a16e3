//! Corpus part (a) (tests/compiler-corpus): smali methods assembled by Debian's smali into a
//! real .dex, compiled by the patched ART compiler for arm64, thumb2 and x86_64, with and
//! without the trace nodes, and run on random inputs. Per method, ISA and input: the result
//! equals the Java twin's on OpenJDK, with tracing and without, on all three back ends; on every
//! traced ISA the decoded ring equals the call the harness made (entry of the ArtMethod* it
//! passed, exit when it saw the return) and untraced code leaves the ring alone; on the emulated
//! ISAs no trace point changed a register or stack slot outside its declared clobbers.
//!
//! Needs `scripts/art-build --full --compiler` (the harness program), smali and a JDK. Without
//! them the test says so and passes, except under CI=true, where it fails.
mod common;

use common::{compile_both, corpus_dex, harness_or_skip, inputs, oracle, Rng};
use hubble_art_compile::{canonical, check_traced, Runner};

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn corpus_a_matches_openjdk_on_every_isa_with_and_without_tracing() {
    let Some(harness) = harness_or_skip() else {
        return;
    };
    let dir = tempdir();
    let dex = corpus_dex(&dir);
    let methods = oracle::list(&dir, &["Arith", "Pressure"]);
    assert!(
        methods.len() >= 15,
        "oracle listed only {} methods",
        methods.len()
    );
    let n = inputs::per_method();
    let mut rng = Rng::new(0x4855_4242_4c45);
    let mut checked = 0usize;
    for (desc, shorty) in &methods {
        let (traced, plain) = compile_both(&harness, &dex, desc, shorty, &dir);
        for code in &traced.isas {
            let entries = code.trace_points.iter().filter(|t| t.entry).count();
            assert_eq!(entries, 1, "{desc} {}: {entries} trace entries", code.isa);
            assert!(
                code.trace_points.iter().any(|t| !t.entry),
                "{desc} {}: no exit",
                code.isa
            );
        }
        let args_list = inputs::inputs(&mut rng, shorty, n);
        let (class, name) = oracle::split(desc);
        let want = oracle::run(&dir, &class, &name, &args_list);
        let ret = shorty.as_bytes()[0];
        let mut traced_runner = Runner::new(&traced).unwrap();
        let mut plain_runner = Runner::new(&plain).unwrap();
        for (args, want) in args_list.iter().zip(&want) {
            let want_exception = want.strip_prefix("throw ").map(str::to_string);
            let want: u64 = if want == "void" || want_exception.is_some() {
                0
            } else {
                u64::from_str_radix(want, 16)
                    .unwrap_or_else(|_| panic!("{desc}: oracle said {want}"))
            };
            for (compiled, runner) in [(&traced, &mut traced_runner), (&plain, &mut plain_runner)] {
                for (i, code) in compiled.isas.iter().enumerate() {
                    let o = runner
                        .run(compiled, i, args)
                        .unwrap_or_else(|e| panic!("{desc} {} {args:x?}: {e}", code.isa));
                    assert_eq!(
                        o.exception, want_exception,
                        "{desc} {} args {args:x?}: exception differs from OpenJDK's",
                        code.isa
                    );
                    let got = if o.exception.is_some() {
                        0
                    } else {
                        canonical(ret, o.result)
                    };
                    assert!(
                        inputs::same(ret, got, want),
                        "{desc} {} (traced: {}) args {args:x?}: {got:#x}, OpenJDK {want:#x}",
                        code.isa,
                        compiled.traced
                    );
                    if compiled.traced {
                        let problems = check_traced(&o);
                        assert!(problems.is_empty(), "{desc} args {args:x?}: {problems:#?}");
                        // Natively (x86_64) only the ring shows which trace points ran. A
                        // frame an exception left gets its exit from the unwinder instead.
                        let own = if o.exception.is_some() { 1 } else { 2 };
                        assert!(
                            o.trace_points_run >= own || o.executed.is_none(),
                            "{desc} {}: trace points not run",
                            code.isa
                        );
                    } else {
                        assert!(
                            o.records.is_empty(),
                            "{desc} {}: untraced code wrote the ring",
                            code.isa
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "corpus (a): {} methods, {n} inputs each, {checked} runs checked",
        methods.len()
    );
}

fn tempdir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "hubble-corpus-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
