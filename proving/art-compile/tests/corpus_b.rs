//! Corpus part (b): ART's own `test/*/smali/` methods, unchanged (the pinned tree,
//! $HUBBLE_CACHE/art/work/test), assembled per test by Debian's smali. Every method the harness
//! can build is compiled for arm64, thumb2, x86_64 and x86, traced and untraced; every compiled
//! one runs on random inputs: the eight results agree (no oracle: ART's tests compute their
//! expected values in Java), the ring equals the call tree the harness observed, no trace point
//! changes what it must not. Methods that invoke run through the invoke dispatch
//! (src/dispatch.rs) on arm64, thumb2 and x86 (unicorn) only; so do instance methods, on a
//! new object of their class (every field zero, as `new` leaves it; src/heap.rs). Prints how
//! many were compiled and executed and each skip's reason.
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{harness_or_skip, Rng};
use hubble_art_compile::dispatch::Linker;
use hubble_art_compile::heap::{class_of_descriptor, object_address, ObjectSpec};
use hubble_art_compile::{canonical, check_traced, AllEntry, Arg, Runner};

fn random_arg(rng: &mut Rng, ty: u8) -> Arg {
    let small = [
        0u64,
        1,
        u64::MAX,
        2,
        3,
        7,
        10,
        100,
        0x7fff_ffff,
        0x8000_0000,
    ];
    // Mostly small values: ART's tests loop on their arguments, and a loop bounded by random
    // 32-bit bits is a hang to an emulator.
    let bits = match rng.below(4) {
        0 => small[rng.below(small.len() as u64) as usize],
        1 | 2 => rng.below(64),
        _ => rng.next(),
    };
    let bits = match ty {
        b'F' => u64::from((bits as i64 as f32).to_bits()),
        b'D' => (bits as i64 as f64).to_bits(),
        b'J' => bits,
        _ => canonical(ty, bits),
    };
    Arg { ty, bits }
}

fn same(ty: u8, a: u64, b: u64) -> bool {
    match ty {
        b'F' => a == b || (f32::from_bits(a as u32).is_nan() && f32::from_bits(b as u32).is_nan()),
        b'D' => a == b || (f64::from_bits(a).is_nan() && f64::from_bits(b).is_nan()),
        _ => a == b,
    }
}

/// Assembles every test's smali/ directory into DIR/NAME.dex in one JVM (Debian's smali
/// library, tests/compiler-corpus/tools/SmaliBatch.java); returns the names that assembled.
fn assemble_all(tests: &[PathBuf], dir: &Path) -> Vec<String> {
    let smali_jar = "/usr/share/java/smali.jar";
    let classes = dir.join("smali-batch");
    let src = common::corpus_dir().join("tools/SmaliBatch.java");
    let st = Command::new("javac")
        .arg("-cp")
        .arg(smali_jar)
        .arg("-d")
        .arg(&classes)
        .arg(&src)
        .status()
        .expect("javac");
    assert!(st.success(), "javac {}", src.display());
    let out = Command::new("java")
        .arg("-cp")
        .arg(format!("{}:{smali_jar}", classes.display()))
        .arg("SmaliBatch")
        .arg(dir)
        .args(tests.iter().map(|t| t.join("smali")))
        .output()
        .expect("java");
    assert!(out.status.success(), "SmaliBatch failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("ok ").map(str::to_string))
        .collect()
}

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn corpus_b_art_test_smali_methods() {
    let Some(h) = harness_or_skip() else { return };
    let inputs: usize = std::env::var("HUBBLE_CORPUS_B_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let tests_dir = h
        .libdir
        .join("../../../work/test")
        .canonicalize()
        .expect("the pinned ART tree's test/ ($HUBBLE_CACHE/art/work/test)");
    let dir = std::env::temp_dir().join(format!("hubble-corpus-b-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut tests: Vec<PathBuf> = std::fs::read_dir(&tests_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("smali").is_dir())
        .collect();
    tests.sort();
    // Per skip reason, the methods it stopped (printed with the count when there are few).
    let mut skips: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (mut methods, mut compiled, mut executed) = (0usize, 0usize, 0usize);
    let (mut invoking, mut executed_invoking) = (0usize, 0usize);
    let (mut instance, mut executed_instance) = (0usize, 0usize);
    // Native x86_64 runs of invoking methods (their invokes dispatched by the child).
    let mut native_runs = 0usize;
    let mut rng = Rng::new(0xb0b);
    let assembled = assemble_all(&tests, &dir);
    for test in &tests {
        let name = test.file_name().unwrap().to_string_lossy().to_string();
        if !assembled.contains(&name) {
            skips
                .entry("smali cannot assemble the test".into())
                .or_default()
                .push(name.clone());
            continue;
        }
        let dex = dir.join(format!("{name}.dex"));
        let entries = h
            .compile_all(&dex, &dir.join(&name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for entry in entries {
            methods += 1;
            let (method, traced, untraced) = match entry {
                AllEntry::Skipped { reason, method } => {
                    skips.entry(reason).or_default().push(method);
                    continue;
                }
                AllEntry::Compiled {
                    method,
                    traced,
                    untraced,
                } => (method, *traced, *untraced),
            };
            compiled += 1;
            let ret = traced.shorty.as_bytes()[0];
            // invoke-static is dispatched into the callees' code (src/dispatch.rs).
            let callees = dir.join("callees");
            let lt = std::rc::Rc::new(Linker::new(&h, &dex, true, &callees));
            let lu = std::rc::Rc::new(Linker::new(&h, &dex, false, &callees));
            let mut rt = Runner::linked(&traced, &lt).unwrap();
            let mut ru = Runner::linked(&untraced, &lu).unwrap();
            invoking += usize::from(!traced.invokes.is_empty());
            instance += usize::from(!traced.is_static);
            // An instance method runs on a new object of its declaring class.
            let receiver = (!traced.is_static).then(|| ObjectSpec {
                class: class_of_descriptor(&method).to_string(),
                fields: Vec::new(),
            });
            if let Some(r) = &receiver {
                rt.set_objects(std::slice::from_ref(r)).unwrap();
                ru.set_objects(std::slice::from_ref(r)).unwrap();
            }
            let mut skip: Option<String> = None;
            let mut no_native = false;
            let (mut ran, mut hung) = (0usize, 0usize);
            'inputs: for _ in 0..inputs {
                let mut args: Vec<Arg> = receiver
                    .iter()
                    .map(|_| Arg {
                        ty: b'L',
                        bits: object_address(0),
                    })
                    .collect();
                args.extend(
                    traced.shorty.as_bytes()[1..]
                        .iter()
                        .map(|&ty| random_arg(&mut rng, ty)),
                );
                let mut outcomes = Vec::new();
                for (c, r) in [(&traced, &mut rt), (&untraced, &mut ru)] {
                    for i in 0..c.isas.len() {
                        let native = c.isas[i].isa == "x86_64";
                        if native && (!c.isas[i].tries.is_empty() || no_native) {
                            // No native exception delivery: arm64, thumb2 and x86 only.
                            continue;
                        }
                        match r.run(c, i, &args) {
                            Ok(o) => {
                                native_runs +=
                                    usize::from(native && (!c.invokes.is_empty() || !c.is_static));
                                outcomes.push((c.traced, o))
                            }
                            // What only the native child lacks (exception delivery, a runtime
                            // helper) ends this method's x86_64 runs, not the others'.
                            Err(e)
                                if native
                                    && (e.contains("x86_64 invoke dispatch")
                                        || e.contains("native child does not provide")) =>
                            {
                                no_native = true;
                                continue;
                            }
                            Err(e) if e.contains("did not return") => {
                                // This input makes the method loop too long for the emulator:
                                // try others (three such inputs end the method's runs).
                                hung += 1;
                                if hung == 3 {
                                    skip =
                                        Some("runs past the instruction limit on 3 inputs".into());
                                    break 'inputs;
                                }
                                continue 'inputs;
                            }
                            Err(e) => {
                                // What the harness cannot provide (an entrypoint, x86_64
                                // exception delivery) ends this method's runs with its reason.
                                let e = e.split(" (").next().unwrap_or(&e).to_string();
                                skip = Some(format!("{}: {e}", c.isas[i].isa));
                                break 'inputs;
                            }
                        }
                    }
                }
                ran += 1;
                let first = &outcomes[0].1;
                for (was_traced, o) in &outcomes {
                    assert_eq!(
                        o.exception, first.exception,
                        "{name} {method} {args:x?}: {} threw {:?}, {} {:?}",
                        o.isa, o.exception, first.isa, first.exception
                    );
                    // A run that threw has no result (the registers are whatever they were).
                    assert!(
                        o.exception.is_some()
                            || same(ret, canonical(ret, o.result), canonical(ret, first.result)),
                        "{name} {method} {args:x?}: {} (traced {was_traced}) {:#x}, {} {:#x}",
                        o.isa,
                        o.result,
                        first.isa,
                        first.result
                    );
                    if *was_traced {
                        let p = check_traced(o);
                        assert!(p.is_empty(), "{name} {method} {args:x?}: {p:#?}");
                    }
                }
            }
            match skip {
                Some(reason) if ran == 0 => skips
                    .entry(format!("not executed: {reason}"))
                    .or_default()
                    .push(method.clone()),
                _ if ran == 0 => skips
                    .entry("not executed: no input finished".into())
                    .or_default()
                    .push(method.clone()),
                _ => {
                    executed += 1;
                    executed_invoking += usize::from(!traced.invokes.is_empty());
                    executed_instance += usize::from(!traced.is_static);
                }
            }
        }
    }
    eprintln!(
        "corpus (b): {} ART tests with smali, {methods} methods: {compiled} compiled for arm64, thumb2, x86_64 and x86 (traced and untraced), {executed} executed (each on up to {inputs} random inputs; an input that runs past the instruction limit is dropped)",
        tests.len()
    );
    eprintln!(
        "corpus (b) invokes: {invoking} compiled methods invoke, {executed_invoking} of them \
         executed through the dispatcher"
    );
    eprintln!(
        "corpus (b) instance methods: {instance} compiled, {executed_instance} executed on a new \
         object of their class; {native_runs} native x86_64 runs of invoking or instance \
         methods (their calls and fields served by the child)"
    );
    for (reason, which) in &skips {
        let n = which.len();
        if n <= 8 {
            eprintln!("corpus (b) skipped {n:4}: {reason} ({})", which.join(", "));
        } else {
            eprintln!("corpus (b) skipped {n:4}: {reason}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Regression floors at today's figures (docs/compiler-harness.md): fewer means the harness
    // or the compiler lost methods it handled.
    assert!(compiled >= 400, "only {compiled} methods compiled");
    assert!(executed >= 310, "only {executed} methods executed");
    assert!(
        executed_invoking >= 55,
        "only {executed_invoking} invoking methods executed"
    );
    assert!(
        executed_instance >= 110,
        "only {executed_instance} instance methods executed"
    );
}
