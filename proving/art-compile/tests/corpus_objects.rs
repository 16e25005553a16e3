//! Corpus (a), instance methods (tests/compiler-corpus: Shape, Square, Cube, Scalable). The
//! patched compiler compiles instance methods (with no class linker: `this` typed as an
//! unresolved class, fields and calls on objects built unresolved, cpp/stand-in-*.patch); the
//! harness lays out a receiver of a class chosen per input, with random field values, and runs
//! the method on it, dispatching every invoke-virtual, -direct, -super and -interface by the
//! receiver's class and serving every iget/iput (src/dispatch.rs, src/heap.rs); exceptions are
//! objects, so try/finally runs as javac compiles it (a catch-all handler that loads the
//! exception with move-exception, runs the finally and rethrows it with throw). Per method,
//! ISA, receiver class and input:
//! * the result (or exception) and every field of the receiver afterwards equal the Java
//!   twin's on OpenJDK on the same receiver, traced and untraced;
//! * the call tree the harness observed has the shape of the Java program's (`model`: calls
//!   and distinct methods, which differ by receiver class: an override or a super chain
//!   dispatched wrongly changes them);
//! * the decoded ring equals that call tree, and no trace point changed a register or stack
//!   slot outside its clobbers.
//!
//! arm64, thumb2 and x86 in unicorn; x86_64 natively, its child laying out the same heap and
//! serving the calls and fields itself (src/native_dispatch.rs), except the calls that throw or
//! catch (no native exception delivery: counted and said).
mod common;

use std::rc::Rc;

use common::{compile_both, corpus_dex, harness_or_skip, inputs, oracle, Rng};
use hubble_art_compile::dispatch::Linker;
use hubble_art_compile::heap::{object_address, Classes, ObjectSpec};
use hubble_art_compile::{canonical, check_traced, method_value, Arg, Runner};

/// The entry methods, their shorty, and the receiver classes each runs on. The harness calls
/// the entry's own code (as a direct call does) and the oracle calls it through reflection
/// (a virtual call), so no receiver class overrides its entry method.
const ENTRIES: &[(&str, &str, &[&str])] = &[
    (
        "LShape;->describe(I)I",
        "II",
        &["LShape;", "LSquare;", "LCube;"],
    ),
    (
        "LShape;->measure(D)D",
        "DD",
        &["LShape;", "LSquare;", "LCube;"],
    ),
    ("LShape;->same()I", "I", &["LShape;", "LSquare;", "LCube;"]),
    ("LShape;->nullSelf(I)I", "II", &["LShape;", "LCube;"]),
    ("LSquare;->viaIface(I)I", "II", &["LSquare;", "LCube;"]),
    ("LSquare;->mix(JF)J", "JJF", &["LSquare;", "LCube;"]),
    ("LSquare;->grow(I)I", "II", &["LSquare;"]),
    ("LShape;->rethrow(II)I", "III", &["LShape;", "LSquare;"]),
    ("LShape;->outer(II)I", "III", &["LShape;", "LCube;"]),
];

/// Inputs shaped where random bits would almost never reach a path: the divisor of
/// rethrow/outer is 0, 1 or 2 (a third of the calls divide by zero).
fn shape(name: &str, args: &mut [Arg]) {
    if name == "rethrow" || name == "outer" {
        args[1].bits = canonical(b'I', args[1].bits % 3);
    }
}

/// The call tree of the Java twins, independently of the harness: (calls, distinct methods),
/// the entry's own call included. `kind()` runs one method per class up the chain (super
/// calls), `grow` on a Cube runs Cube's and then Square's.
fn model(name: &str, receiver: &str, args: &[Arg]) -> (usize, usize) {
    let chain = match receiver {
        "LShape;" => 1,
        "LSquare;" => 2,
        _ => 3,
    };
    match name {
        // describe, kind() up the chain, helper.
        "describe" => (2 + chain, 2 + chain),
        "measure" => (2, 2),
        "same" | "mix" | "grow" => (1, 1),
        // rethrow and divide (which throws on a zero divisor: the finally rethrows), and outer
        // around them, which catches it.
        "rethrow" => (2, 2),
        "outer" => (3, 3),
        // self is null: the call throws before it dispatches.
        "nullSelf" => {
            let _ = args;
            (1, 1)
        }
        // Two interface calls; on a Cube each is Cube's grow and Square's through super.
        "viaIface" => {
            if receiver == "LCube;" {
                (5, 3)
            } else {
                (3, 2)
            }
        }
        other => panic!("no model of {other}: add it to corpus_objects.rs"),
    }
}

/// A receiver of `class` with a random value in every primitive field (references stay null).
fn receiver(rng: &mut Rng, classes: &Classes, class: &str) -> ObjectSpec {
    let fields = classes
        .layout(class)
        .into_iter()
        .filter(|(_, _, ty)| !ty.starts_with('L') && !ty.starts_with('['))
        .map(|(_, name, ty)| (name, inputs::random_bits(rng, ty.as_bytes()[0])))
        .collect();
    ObjectSpec {
        class: class.to_string(),
        fields,
    }
}

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn instance_methods_run_on_objects_and_every_call_on_an_object_is_traced() {
    let Some(harness) = harness_or_skip() else {
        return;
    };
    let dir = common::tempdir("objects", "run");
    let dex = corpus_dex(&dir);
    let n = inputs::per_method();
    let mut rng = Rng::new(0x4f42_4a45_4354);
    let traced_linker = Rc::new(Linker::new(&harness, &dex, true, &dir.join("callees")));
    let plain_linker = Rc::new(Linker::new(&harness, &dex, false, &dir.join("callees")));
    let classes = traced_linker.classes().expect("the dex's classes");
    let (mut runs, mut dispatches, mut threw, mut caught) = (0usize, 0usize, 0usize, 0usize);
    let (mut x86_64_skipped, mut tampered, mut rethrown) = (0usize, 0usize, 0usize);
    let mut x86_64_native = 0usize;
    let mut summary = Vec::new();
    for &(desc, shorty, receivers) in ENTRIES {
        let (traced, plain) = compile_both(&harness, &dex, desc, shorty, &dir);
        assert!(!traced.is_static, "{desc} compiled as a static method");
        let (class, name) = oracle::split(desc);
        let cases: Vec<(Vec<Arg>, ObjectSpec)> = inputs::inputs(&mut rng, shorty, n)
            .into_iter()
            .enumerate()
            .map(|(k, mut args)| {
                shape(&name, &mut args);
                let r = receiver(&mut rng, &classes, receivers[k % receivers.len()]);
                (args, r)
            })
            .collect();
        let want = oracle::run_on(&dir, &class, &name, &cases);
        let ret = shorty.as_bytes()[0];
        let mut traced_runner = Runner::linked(&traced, &traced_linker).unwrap();
        let mut plain_runner = Runner::linked(&plain, &plain_linker).unwrap();
        let mut max_calls = 0usize;
        for ((args, recv), (want, want_fields)) in cases.iter().zip(&want) {
            let (want_exception, want_bits) = match want.strip_prefix("throw ") {
                Some(e) => (Some(e.to_string()), 0),
                None => (None, u64::from_str_radix(want, 16).unwrap()),
            };
            let (model_calls, model_methods) = model(&name, &recv.class, args);
            let mut call_args = vec![Arg {
                ty: b'L',
                bits: object_address(0),
            }];
            call_args.extend_from_slice(args);
            for (compiled, runner) in [(&traced, &mut traced_runner), (&plain, &mut plain_runner)] {
                runner.set_objects(std::slice::from_ref(recv)).unwrap();
                for (i, code) in compiled.isas.iter().enumerate() {
                    // Natively there is no exception delivery.
                    if code.isa == "x86_64" && (want_exception.is_some() || !code.tries.is_empty())
                    {
                        x86_64_skipped += 1;
                        continue;
                    }
                    let what = format!(
                        "{desc} on {} {} (traced: {}) args {args:x?} fields {:x?}",
                        recv.class, code.isa, compiled.traced, recv.fields
                    );
                    let o = runner
                        .run(compiled, i, &call_args)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(
                        o.exception, want_exception,
                        "{what}: exception differs from OpenJDK's"
                    );
                    if o.exception.is_none() {
                        let got = canonical(ret, o.result);
                        assert!(
                            inputs::same(ret, got, want_bits),
                            "{what}: {got:#x}, OpenJDK {want_bits:#x}"
                        );
                    }
                    // The receiver afterwards: every field as OpenJDK left it.
                    let mut fields = o.objects[0].clone();
                    fields.sort();
                    let tys: Vec<(String, String)> = classes
                        .layout(&recv.class)
                        .into_iter()
                        .map(|(_, n, t)| (n, t))
                        .collect();
                    assert_eq!(
                        fields.len(),
                        want_fields.len(),
                        "{what}: fields {fields:x?}"
                    );
                    for ((name, got), (want_name, want)) in fields.iter().zip(want_fields) {
                        assert_eq!(name, want_name, "{what}");
                        let ty = tys.iter().find(|t| &t.0 == name).unwrap().1.as_bytes()[0];
                        assert!(
                            inputs::same(ty, *got, *want),
                            "{what}: field {name} = {got:#x} afterwards, OpenJDK {want:#x}"
                        );
                    }
                    runs += 1;
                    x86_64_native += usize::from(code.isa == "x86_64");
                    caught += o.caught.len();
                    // The observed call tree against the Java program's.
                    let common::Observed {
                        entries,
                        returns,
                        distinct,
                    } = common::observed(&o.calls);
                    assert_eq!(
                        (entries.len(), distinct),
                        (model_calls, model_methods),
                        "{what}: calls {:x?}",
                        o.calls
                    );
                    assert_eq!(entries[0], method_value(&code.isa), "{what}");
                    assert_eq!(returns, entries.len(), "{what}: calls {:x?}", o.calls);
                    if o.exception.is_some() {
                        threw += 1;
                    }
                    // A finally rethrew (rethrow) or its rethrow was caught a frame up (outer):
                    // the exception went through a move-exception and a throw.
                    if o.entrypoints_called.iter().any(|e| e == "DeliverException") {
                        rethrown += 1;
                    }
                    if compiled.traced {
                        let problems = check_traced(&o);
                        assert!(problems.is_empty(), "{what}: {problems:#?}");
                        if entries.len() > 2 && tampered < 4 {
                            // A dispatch to another override (another ArtMethod*) no longer
                            // matches the ring.
                            let mut other = o.clone();
                            let k = other.calls.iter().rposition(|c| c.0).unwrap();
                            other.calls[k].1 ^= 0x40;
                            assert!(!check_traced(&other).is_empty(), "{what}");
                            tampered += 1;
                        }
                        dispatches += entries.len() - 1;
                    } else {
                        assert!(o.records.is_empty(), "{what}: untraced code wrote the ring");
                    }
                    max_calls = max_calls.max(entries.len());
                }
            }
        }
        summary.push(format!(
            "{desc}: {n} inputs on {} receiver class(es), up to {max_calls} calls",
            receivers.len()
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(tampered > 0, "no call tree was tampered with");
    assert!(threw > 0, "no run threw (nullSelf throws on most inputs)");
    assert!(caught > 0, "no exception was caught in compiled code");
    assert!(rethrown > 0, "no finally rethrew its exception");
    eprintln!(
        "corpus (a) objects: {} instance methods, {n} inputs each, {runs} runs checked \
         (result and receiver fields against OpenJDK), {dispatches} traced dispatches on objects \
         checked against the ring, {} callees compiled, {threw} runs threw, {caught} exceptions \
         caught in compiled code, {rethrown} runs rethrew one (move-exception, throw), \
         {x86_64_native} runs native x86_64 (heap, fields and dispatch in the child), \
         {x86_64_skipped} x86_64 runs of calls that throw or catch not made (no native \
         exception delivery), {tampered} tampered call trees rejected",
        ENTRIES.len(),
        traced_linker.compiles() + plain_linker.compiles()
    );
    for s in summary {
        eprintln!("  {s}");
    }
}
