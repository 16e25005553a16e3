//! Corpus (a), call trees and a long method (tests/compiler-corpus: Calls, Far). Methods that
//! invoke other methods of the dex run compiled end to end: the harness dispatches every
//! `invoke-static` the compiled code makes (src/dispatch.rs, the double of
//! art_quick_invoke_static_trampoline_with_access_check) into the callee's code, compiled by the
//! same patched compiler. Per method, ISA and input:
//! * the result (or exception) equals the Java twin's on OpenJDK, traced and untraced;
//! * the call tree the harness itself observed (each dispatch it performed, each return it saw)
//!   has the shape of the Java program's (a model of Calls.java below: number of calls and of
//!   distinct methods), so a dispatch skipped or doubled fails even where the ring agrees;
//! * the decoded ring equals that call tree, slot for slot: an entry of the callee's
//!   `ArtMethod*` per dispatch, an exit per return, in order, and after an exception an exit
//!   for every frame it popped, written by the runtime's own trace point as patch 0021 has the
//!   unwinder do (src/unwind.rs);
//! * registers and stack across every trace point of every method, as in corpus (a).
//!
//! x86 runs them all through the same dispatch (unicorn); x86_64 runs them natively, its static
//! invokes dispatched by the child (src/native_dispatch.rs: the same call-tree and ring checks),
//! except where an exception is thrown or caught (no native exception delivery).
//!
//! Needs `scripts/art-build --full --compiler`, smali, a JDK and python3 (tools/gen_far.py).
mod common;

use std::rc::Rc;

use common::{compile_both, corpus_dex, harness_or_skip, inputs, oracle, Rng};
use hubble_art_compile::dispatch::Linker;
use hubble_art_compile::emu::Machine;
use hubble_art_compile::{canonical, check_traced, disasm, method_value, Arg, Outcome, Runner};

fn fib_calls(n: i32) -> usize {
    if n < 2 {
        1
    } else {
        1 + fib_calls(n - 1) + fib_calls(n - 2)
    }
}

/// (value, calls) of Calls.ack.
fn ack(m: i32, n: i32) -> (i32, usize) {
    if m == 0 {
        (n + 1, 1)
    } else if n == 0 {
        let (v, c) = ack(m - 1, 1);
        (v, c + 1)
    } else {
        let (inner, c1) = ack(m, n - 1);
        let (v, c2) = ack(m - 1, inner);
        (v, 1 + c1 + c2)
    }
}

/// The call tree of Calls.java / Far.java on `args`, independently of the harness: the calls
/// it makes (the public method's own included) and how many distinct methods they call.
fn model(name: &str, args: &[Arg]) -> (usize, usize) {
    let int = |i: usize| args[i].bits as i32;
    match name {
        "fib" => {
            let n = (int(0) & 0x7fff_ffff) % 13;
            (1 + fib_calls(n), 2)
        }
        "ackermann" => {
            let (m, n) = ((int(0) & 0x7fff_ffff) % 4, (int(1) & 0x7fff_ffff) % 4);
            (1 + ack(m, n).1, 2)
        }
        // tree, 2 t1, 4 t2, each t2: t3, mix, 2 t4, 2 t5, 2 nop, 2 t6.
        "tree" => (1 + 2 + 4 * 11, 9),
        "sumSquares" => {
            let k = (int(0) & 31) as usize;
            (1 + k, if k > 0 { 2 } else { 1 })
        }
        "divDeep" => (3, 3),
        "catchUp" => (3, 3),
        "catchHere" | "catchPhi" | "catchSuper" | "catchMiss" | "catchWrong" => (1, 1),
        "far" => (1, 1),
        other => panic!("no model of {other}: add it to corpus_calls.rs"),
    }
}

/// The oracle's answer as (exception, bits).
fn parse_want(desc: &str, want: &str) -> (Option<String>, u64) {
    let exception = want.strip_prefix("throw ").map(str::to_string);
    let bits = if want == "void" || exception.is_some() {
        0
    } else {
        u64::from_str_radix(want, 16).unwrap_or_else(|_| panic!("{desc}: oracle said {want}"))
    };
    (exception, bits)
}

/// Maximum nesting of the observed call tree.
fn depth(calls: &[(bool, u64)]) -> usize {
    let (mut d, mut max) = (0usize, 0usize);
    for c in calls {
        if c.0 {
            d += 1;
            max = max.max(d);
        } else {
            d -= 1;
        }
    }
    max
}

#[test]
#[ignore = "needs python3 (scripts/deps/compiler-harness.apt): run by tests/stages/32-art-compiler.sh"]
fn the_generated_long_method_is_the_generators_output() {
    // tools/gen_far.py writes smali/Far.smali and java/Far.java; the committed files must be
    // exactly its output (edit the script, not the files).
    let dir = common::tempdir("calls", "gen");
    std::fs::create_dir_all(dir.join("smali")).unwrap();
    std::fs::create_dir_all(dir.join("java")).unwrap();
    let corpus = common::corpus_dir();
    let st = std::process::Command::new("python3")
        .arg(corpus.join("tools/gen_far.py"))
        .arg(&dir)
        .status()
        .expect("python3");
    assert!(st.success());
    for f in ["smali/Far.smali", "java/Far.java"] {
        let want = std::fs::read_to_string(dir.join(f)).unwrap();
        let got = std::fs::read_to_string(corpus.join(f)).unwrap();
        assert!(want == got, "{f} differs from tools/gen_far.py's output");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn call_trees_run_compiled_and_the_ring_equals_the_dispatches() {
    let Some(harness) = harness_or_skip() else {
        return;
    };
    let dir = common::tempdir("calls", "trees");
    let dex = corpus_dex(&dir);
    let methods = oracle::list(&dir, &["Calls", "Far"]);
    assert_eq!(methods.len(), 12, "oracle listed {methods:?}");
    let n = inputs::per_method();
    let mut rng = Rng::new(0x4341_4c4c_5354);
    let traced_linker = Rc::new(Linker::new(&harness, &dex, true, &dir.join("callees")));
    let plain_linker = Rc::new(Linker::new(&harness, &dex, false, &dir.join("callees")));
    let (mut runs, mut dispatches, mut x86_skipped) = (0usize, 0usize, 0usize);
    let mut x86_64_runs = 0usize;
    let mut tampered = 0usize;
    let mut total_caught = 0usize;
    let mut summary = Vec::new();
    for (desc, shorty) in &methods {
        let (traced, plain) = compile_both(&harness, &dex, desc, shorty, &dir);
        let (class, name) = oracle::split(desc);
        let args_list = inputs::inputs(&mut rng, shorty, n);
        let want = oracle::run(&dir, &class, &name, &args_list);
        let ret = shorty.as_bytes()[0];
        let mut traced_runner = Runner::linked(&traced, &traced_linker).unwrap();
        let mut plain_runner = Runner::linked(&plain, &plain_linker).unwrap();
        let (mut max_depth, mut max_calls, mut threw) = (0usize, 0usize, 0usize);
        let mut caught = 0usize;
        for (args, want) in args_list.iter().zip(&want) {
            let (want_exception, want) = parse_want(desc, want);
            let (model_calls, model_methods) = model(&name, args);
            for (compiled, runner) in [(&traced, &mut traced_runner), (&plain, &mut plain_runner)] {
                for (i, code) in compiled.isas.iter().enumerate() {
                    // Natively there is no exception delivery.
                    if code.isa == "x86_64" && (want_exception.is_some() || !code.tries.is_empty())
                    {
                        x86_skipped += 1;
                        continue;
                    }
                    let o = runner
                        .run(compiled, i, args)
                        .unwrap_or_else(|e| panic!("{desc} {} {args:x?}: {e}", code.isa));
                    let what = format!(
                        "{desc} {} (traced: {}) args {args:x?}",
                        code.isa, compiled.traced
                    );
                    assert_eq!(
                        o.exception, want_exception,
                        "{what}: exception differs from OpenJDK's"
                    );
                    let got = if o.exception.is_some() {
                        0
                    } else {
                        canonical(ret, o.result)
                    };
                    assert!(
                        inputs::same(ret, got, want),
                        "{what}: {got:#x}, OpenJDK {want:#x}"
                    );
                    runs += 1;
                    caught += o.caught.len();
                    total_caught += o.caught.len();
                    if code.isa == "x86_64" {
                        x86_64_runs += 1;
                    }
                    // The call tree the harness observed against the Java program's.
                    let common::Observed {
                        entries,
                        returns,
                        distinct,
                    } = common::observed(&o.calls);
                    assert_eq!(entries.len(), model_calls, "{what}: calls {:x?}", o.calls);
                    assert_eq!(distinct, model_methods, "{what}: calls {:x?}", o.calls);
                    assert_eq!(entries[0], method_value(&code.isa), "{what}");
                    // Every frame returns, or is popped by the exception with the exit the
                    // unwinder writes (patch 0021, src/unwind.rs).
                    assert_eq!(returns, entries.len(), "{what}: calls {:x?}", o.calls);
                    if o.exception.is_some() {
                        threw += 1;
                        assert_eq!(
                            o.calls.last(),
                            Some(&(false, 0)),
                            "{what}: the unwinder's exits come last"
                        );
                    }
                    if compiled.traced {
                        let problems = check_traced(&o);
                        assert!(problems.is_empty(), "{what}: {problems:#?}");
                        if entries.len() > 2 && returns == entries.len() && tampered < 4 {
                            // The check can fail: a dispatch the harness did not see, or one
                            // it saw with another ArtMethod*, no longer matches the ring.
                            let mut dropped = o.clone();
                            let k = dropped.calls.iter().rposition(|c| c.0).unwrap();
                            dropped.calls.remove(k + 1);
                            dropped.calls.remove(k);
                            assert!(!check_traced(&dropped).is_empty(), "{what}");
                            let mut other = o.clone();
                            other.calls[k].1 ^= 0x40;
                            assert!(!check_traced(&other).is_empty(), "{what}");
                            tampered += 1;
                        }
                        // The exits of frames an exception popped are the unwinder's, not
                        // compiled trace points: they are among the trailing returns.
                        let unwound = if o.exception.is_some() {
                            o.calls.iter().rev().take_while(|c| !c.0).count()
                        } else if !o.caught.is_empty() {
                            // Frames popped on the way to a handler: among the returns.
                            returns
                        } else {
                            0
                        };
                        // (Natively nothing counts the trace points that ran: executed is None.)
                        assert!(
                            o.executed.is_none()
                                || o.trace_points_run >= entries.len() + returns - unwound,
                            "{what}: {} trace points ran for {} calls and {returns} returns",
                            o.trace_points_run,
                            entries.len()
                        );
                        dispatches += entries.len() - 1;
                    } else {
                        assert!(o.records.is_empty(), "{what}: untraced code wrote the ring");
                    }
                    max_depth = max_depth.max(depth(&o.calls));
                    max_calls = max_calls.max(entries.len());
                }
            }
        }
        let loaded = traced_runner
            .machine(0)
            .map(|m| m.loaded_methods().len())
            .unwrap_or(0);
        summary.push(format!(
            "{desc}: {n} inputs, up to {max_calls} calls {max_depth} frames deep, {loaded} \
             method(s) loaded, {threw} runs threw, {caught} exceptions caught in compiled code"
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(tampered > 0, "no call tree was tampered with");
    // The catch handlers ran (catchHere/Phi/Up/Super/Miss throw on a quarter to a half of the
    // inputs; each caught exception returned the handler's value, checked against OpenJDK).
    assert!(total_caught > 0, "no exception was caught in compiled code");
    eprintln!(
        "corpus (a) calls: {} methods, {n} inputs each, {runs} runs checked, {dispatches} \
         traced dispatches checked against the ring, {} callees compiled (traced and \
         untraced), {x86_64_runs} of the runs native x86_64 (its invokes dispatched by the \
         child), {x86_skipped} x86_64 runs of throwing or catching calls not made (no native \
         exception delivery), {total_caught} exceptions caught in compiled code, \
         {tampered} tampered call trees rejected",
        methods.len(),
        traced_linker.compiles() + plain_linker.compiles()
    );
    for s in summary {
        eprintln!("  {s}");
    }
}

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn a_long_method_branches_across_its_body_to_its_out_of_line_halves() {
    let Some(harness) = harness_or_skip() else {
        return;
    };
    let dir = common::tempdir("calls", "far");
    let dex = corpus_dex(&dir);
    let desc = "LFar;->far(II)I";
    let traced = harness
        .compile(&dex, desc, "arm64,thumb2,x86", true, &dir.join("t.txt"))
        .unwrap_or_else(|e| panic!("{desc}: {e}"));
    let plain = harness
        .compile(&dex, desc, "arm64,thumb2,x86", false, &dir.join("u.txt"))
        .unwrap_or_else(|e| panic!("{desc}: {e}"));
    let n = inputs::per_method().min(300);
    let mut rng = Rng::new(0x4641_5221);
    let args_list = inputs::inputs(&mut rng, "III", n);
    let want = oracle::run(&dir, "Far", "far", &args_list);
    for (k, code) in traced.isas.iter().enumerate() {
        let entry = code
            .trace_points
            .iter()
            .find(|t| t.entry)
            .expect("an entry trace point");
        // The entry's branch to its out-of-line half crosses the whole body.
        let distance = entry.out_of_line.0 - entry.inline.1;
        assert!(
            distance > 16 << 10,
            "{}: the entry's out-of-line half is only {distance} bytes away",
            code.isa
        );
        let branches = disasm::branches(code).unwrap();
        let far_out = branches
            .iter()
            .filter(|b| b.at >= entry.inline.0 && b.at < entry.inline.1)
            .find(|b| b.target >= entry.out_of_line.0 || b.target > entry.inline.1 + 4096)
            .unwrap_or_else(|| {
                panic!(
                    "{}: no branch from the entry to its out-of-line half",
                    code.isa
                )
            });
        // Veneers: a conditional branch of the method's own code (not a trace point's
        // out-of-line half, whose short branches lead to its own B.W) whose target is an
        // unconditional branch onwards, emitted by VIXL because the real target is out of the
        // conditional encoding's range.
        let starts_b: std::collections::HashSet<usize> = branches
            .iter()
            .filter(|b| matches!(b.mnemonic.as_str(), "b" | "b.w"))
            .map(|b| b.at)
            .collect();
        let in_out_of_line = |at: usize| {
            code.trace_points
                .iter()
                .any(|t| at >= t.out_of_line.0 && at < t.out_of_line.1)
        };
        let veneered: Vec<&disasm::Branch> = branches
            .iter()
            .filter(|b| {
                !matches!(b.mnemonic.as_str(), "b" | "b.w")
                    && starts_b.contains(&b.target)
                    && !in_out_of_line(b.at)
            })
            .collect();
        if code.isa == "arm64" {
            // The `if (x < 0)` over HEAD (> 32 KiB) is a TBZ on the sign bit (+-32 KiB).
            assert!(
                veneered.iter().any(|b| b.mnemonic.starts_with("tb")),
                "arm64: no TBZ/TBNZ through a veneer: {veneered:?}"
            );
        }
        eprintln!(
            "far {}: {} bytes traced ({} untraced, {} dex code units); entry {} at {:#x} → \
             out-of-line half at {:#x} ({} bytes); {} branches, {} through a veneer: {:?}",
            code.isa,
            code.code.len(),
            plain.isas[k].code.len(),
            traced.dex_code_units,
            far_out.mnemonic,
            far_out.at,
            far_out.target,
            far_out.target.abs_diff(far_out.at),
            branches.len(),
            veneered.len(),
            veneered.iter().take(4).collect::<Vec<_>>()
        );
        // Run it with the ring's first free slot at its end: the first record (the entry's, at
        // the far end of the branch) wraps through the out-of-line half, on both ISAs.
        let mut m = Machine::new(code, &traced.shorty, traced.is_static).unwrap();
        for wrap in [false, true] {
            m.set_ring_start(wrap.then(|| Machine::ring_slots() - 1));
            let mut out_of_line = 0usize;
            for (args, want) in args_list.iter().zip(&want) {
                let (_, want) = parse_want(desc, want);
                let r = m
                    .call(args, method_value(&code.isa))
                    .unwrap_or_else(|e| panic!("{} {args:x?}: {e}", code.isa));
                assert_eq!(canonical(b'I', r.result), want, "{} {args:x?}", code.isa);
                let ran_out_of_line = r.out_of_line_run;
                let o = Outcome::emulated(&code.isa, r);
                let problems = check_traced(&o);
                assert!(
                    problems.is_empty(),
                    "{} wrap {wrap} {args:x?}: {problems:#?}",
                    code.isa
                );
                out_of_line += ran_out_of_line;
            }
            // arm64 entries of an ArtMethod* above 4 GiB always take the out-of-line half (two
            // slots); thumb2's and x86's (32-bit: one slot, limit = end) only when the ring
            // wraps.
            if wrap || code.isa == "arm64" {
                assert!(
                    out_of_line >= args_list.len(),
                    "{} wrap {wrap}: out-of-line halves ran {out_of_line} times in {} calls",
                    code.isa,
                    args_list.len()
                );
            }
            eprintln!(
                "far {} (ring {}): {} calls, out-of-line halves ran {out_of_line} times",
                code.isa,
                if wrap {
                    "wrapping at the first record"
                } else {
                    "fresh"
                },
                args_list.len()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn an_invoke_of_a_method_the_dex_does_not_define_throws_no_such_method_error() {
    let Some(harness) = harness_or_skip() else {
        return;
    };
    // Not in the corpus (no Java twin can call a method that does not exist): the runtime's
    // resolution fails, artInvokeCommon returns the failure value and the trampoline delivers
    // NoSuchMethodError; the ring holds the caller's entry and the exit the unwinder writes
    // for it (patch 0021).
    let dir = common::tempdir("calls", "missing");
    let smali = dir.join("Missing.smali");
    std::fs::write(
        &smali,
        ".class public LMissing;\n.super Ljava/lang/Object;\n\
         .method public static callsNothing(I)I\n    .registers 2\n\
         \x20   invoke-static {p0}, LNowhere;->gone(I)I\n    move-result v0\n    return v0\n\
         .end method\n",
    )
    .unwrap();
    let dex = dir.join("missing.dex");
    let st = std::process::Command::new("smali")
        .arg("a")
        .arg("-o")
        .arg(&dex)
        .arg(&smali)
        .status()
        .expect("smali");
    assert!(st.success());
    let desc = "LMissing;->callsNothing(I)I";
    let c = harness
        .compile(&dex, desc, "arm64,thumb2,x86", true, &dir.join("t.txt"))
        .unwrap_or_else(|e| panic!("{desc}: {e}"));
    assert_eq!(c.invokes.len(), 1, "{:?}", c.invokes);
    let linker = Rc::new(Linker::new(&harness, &dex, true, &dir.join("callees")));
    let mut runner = Runner::linked(&c, &linker).unwrap();
    for (i, code) in c.isas.iter().enumerate() {
        let o = runner
            .run(&c, i, &[Arg { ty: b'I', bits: 5 }])
            .unwrap_or_else(|e| panic!("{}: {e}", code.isa));
        assert_eq!(
            o.exception.as_deref(),
            Some("java.lang.NoSuchMethodError"),
            "{}",
            code.isa
        );
        assert_eq!(
            o.calls,
            vec![(true, method_value(&code.isa)), (false, 0)],
            "{}",
            code.isa
        );
        let problems = check_traced(&o);
        assert!(problems.is_empty(), "{}: {problems:#?}", code.isa);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
