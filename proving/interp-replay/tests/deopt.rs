//! Balanced traces across every transition, exception unwinding, deoptimization and OSR.
//! `cpp/deopt_model.cc` follows ART 14's control flow (the interpreter's
//! `Execute` and `EnterInterpreterFromDeoptimize`, the exception unwinder, the deoptimizer, OSR,
//! the invoke stub and bridges; line numbers cited there) and calls Hubble's real hooks
//! (`runtime/hubble/trace_hooks.h`, compiled unchanged against `cpp/art-model/`) where the
//! patches call them. It prints the ground truth (which Java invocation starts and ends when) and
//! the ring; the ring is decoded with `hubble_format` and checked against the ground truth:
//!
//! * an entry is written only for the invocation running at that moment, once;
//! * an exit closes the innermost open entry (exits carry no method), so it must be written
//!   while that entry's invocation is the running one: never without an entry, never for an
//!   invocation that wrote none while its caller's entry is open;
//! * every invocation that wrote its entry has its exit written by the time it ends;
//! * every invocation whose code traces on the ISA (the switch interpreter and generic JNI
//!   everywhere, compiled code where the series has its emitter, nterp where it has its macro
//!   file) wrote its entry.
//!
//! The model is built once per ISA (`kRuntimeISA`), because which code traces differs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hubble_format::{decode, Mode, Record, RingView};
use hubble_interp_replay::{repo_root, run_script};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Isa {
    Arm64,
    Arm,
    X86_64,
    X86,
}

const ISAS: [Isa; 4] = [Isa::Arm64, Isa::Arm, Isa::X86_64, Isa::X86];

impl Isa {
    fn art_name(self) -> &'static str {
        match self {
            Isa::Arm64 => "kArm64",
            Isa::Arm => "kArm",
            Isa::X86_64 => "kX86_64",
            Isa::X86 => "kX86",
        }
    }
    /// Whether compiled code writes trace points: the series has the ISA's emitter.
    fn compiled_traces(self) -> bool {
        let file = match self {
            Isa::Arm64 => "hubble_trace_point_arm64.cc",
            Isa::Arm => "hubble_trace_point_arm_vixl.cc",
            Isa::X86_64 => "hubble_trace_point_x86_64.cc",
            Isa::X86 => "hubble_trace_point_x86.cc",
        };
        repo_root()
            .join("art-patches/files/compiler/optimizing")
            .join(file)
            .exists()
    }
    /// Whether nterp writes trace points: the series has the ISA's nterp macro file.
    fn nterp_traces(self) -> bool {
        let file = match self {
            Isa::Arm64 => "nterp_arm64.S",
            Isa::Arm => "nterp_arm.S",
            Isa::X86_64 => "nterp_x86_64.S",
            Isa::X86 => "nterp_x86.S",
        };
        repo_root()
            .join("art-patches/files/runtime/hubble")
            .join(file)
            .exists()
    }
}

/// Builds the model for `isa` into `out_dir`; `shadow` (an include directory searched first) can
/// replace a header of the series (the mutants below).
fn build_model(isa: Isa, out_dir: &Path, shadow: Option<&Path>) -> PathBuf {
    let exe = out_dir.join(format!("hubble-deopt-model-{}", isa.art_name()));
    let defines = [
        format!("-DHUBBLE_MODEL_ISA={}", isa.art_name()),
        format!(
            "-DHUBBLE_MODEL_COMPILED_TRACES={}",
            u8::from(isa.compiled_traces())
        ),
        format!(
            "-DHUBBLE_MODEL_NTERP_TRACES={}",
            u8::from(isa.nterp_traces())
        ),
    ];
    let shadow: Vec<PathBuf> = shadow.into_iter().map(Path::to_path_buf).collect();
    hubble_interp_replay::build_model("deopt_model.cc", &exe, &defines, &shadow)
        .unwrap_or_else(|e| panic!("compiling cpp/deopt_model.cc for {isa:?} failed:\n{e}"));
    exe
}

fn model(isa: Isa) -> &'static PathBuf {
    static EXES: OnceLock<HashMap<Isa, PathBuf>> = OnceLock::new();
    &EXES.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        ISAS.iter()
            .map(|&i| (i, build_model(i, &dir, None)))
            .collect()
    })[&isa]
}

#[derive(Debug)]
enum Event {
    Begin {
        serial: u32,
        method: u32,
        expected: bool,
    },
    End {
        serial: u32,
    },
}

struct Run {
    text: String,
    methods: HashMap<u64, u32>,
    events: Vec<(usize, Event)>,
    records: Vec<Record>,
}

fn run_model(exe: &Path, isa: Isa, program: &str) -> Run {
    // The model's name says its ISA; a failure quotes the program.
    let text = run_script(&[exe.to_string_lossy().into_owned()], program);
    let mut methods = HashMap::new();
    let mut events = Vec::new();
    let mut slots = Vec::new();
    let mut cursor = None;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[0] {
            "M" => {
                methods.insert(
                    u64::from_str_radix(f[2], 16).unwrap(),
                    f[1].parse().unwrap(),
                );
            }
            "B" => events.push((
                f[4].parse().unwrap(),
                Event::Begin {
                    serial: f[1].parse().unwrap(),
                    method: f[2].parse().unwrap(),
                    expected: f[3] == "1",
                },
            )),
            "E" => events.push((
                f[2].parse().unwrap(),
                Event::End {
                    serial: f[1].parse().unwrap(),
                },
            )),
            "X" => {}
            "cursor" => cursor = Some(f[1].parse::<u64>().unwrap()),
            _ => slots.push(u64::from_str_radix(f[0], 16).unwrap()),
        }
    }
    assert_eq!(cursor, Some(slots.len() as u64 * 8), "{isa:?}: cursor");
    let window = decode(&RingView::linear(&slots), Mode::Bits64)
        .unwrap_or_else(|e| panic!("{isa:?}: decode: {e}\n{program}"));
    // Every ArtMethod* is below 4 GiB: one slot per record, so record i is slot i.
    assert_eq!(
        window.records.len(),
        slots.len(),
        "{isa:?}: one slot a record"
    );
    assert_eq!(window.records[0], Record::Start { ts: 0 });
    Run {
        text,
        methods,
        events,
        records: window.records,
    }
}

struct Live {
    serial: u32,
    method: u32,
    expected: bool,
    entered: bool,
    exited: bool,
}

/// The ground truth against the ring; returns every violation.
fn violations(run: &Run) -> Vec<String> {
    let mut errors = Vec::new();
    let mut live: Vec<Live> = Vec::new();
    // Indices into `live` of the invocations whose entry is open (not exited), innermost last.
    let mut open: Vec<usize> = Vec::new();
    let mut events = run.events.iter().peekable();
    for slot in 0..=run.records.len() {
        while let Some((_, event)) = events.next_if(|(s, _)| *s == slot) {
            match *event {
                Event::Begin {
                    serial,
                    method,
                    expected,
                } => live.push(Live {
                    serial,
                    method,
                    expected,
                    entered: false,
                    exited: false,
                }),
                Event::End { serial } => {
                    let inv = live.pop().expect("the model ends an invocation it began");
                    assert_eq!(inv.serial, serial, "the model's invocations are LIFO");
                    if inv.entered && !inv.exited {
                        errors.push(format!(
                            "m{} (invocation {serial}) ended at slot {slot} without an exit",
                            inv.method
                        ));
                        open.retain(|&i| i != live.len());
                    }
                    if inv.expected && !inv.entered {
                        errors.push(format!(
                            "m{} (invocation {serial}) never wrote its entry",
                            inv.method
                        ));
                    }
                }
            }
        }
        let Some(record) = run.records.get(slot) else {
            break;
        };
        match *record {
            Record::Start { .. } => {}
            Record::Task { .. } => errors.push(format!("a task record at slot {slot}")),
            Record::Entry { method, .. } => {
                let id = run.methods[&method];
                match live.last_mut() {
                    Some(top) if top.method == id && !top.entered => {
                        top.entered = true;
                        open.push(live.len() - 1);
                    }
                    _ => errors.push(format!(
                        "entry of m{id} at slot {slot} while the running invocation is {}",
                        describe(live.last())
                    )),
                }
                if let Some(&caller) = open.iter().rev().nth(1) {
                    if live[caller].exited {
                        errors.push(format!("entry at slot {slot} under an exited caller"));
                    }
                }
            }
            Record::Exit { .. } => match open.pop() {
                None => errors.push(format!(
                    "exit without an entry at slot {slot} (running: {})",
                    describe(live.last())
                )),
                Some(i) if i + 1 != live.len() => {
                    errors.push(format!(
                        "exit at slot {slot} closes m{}'s entry while m{} (no entry) is running: \
                         an exit without an entry",
                        live[i].method,
                        live.last().unwrap().method
                    ));
                    live[i].exited = true;
                }
                Some(i) => live[i].exited = true,
            },
        }
    }
    assert!(events.next().is_none(), "events past the ring's end");
    if !live.is_empty() {
        errors.push(format!("{} invocations never ended", live.len()));
    }
    if !open.is_empty() {
        errors.push(format!("{} entries never closed", open.len()));
    }
    errors
}

fn describe(inv: Option<&Live>) -> String {
    match inv {
        Some(l) => format!(
            "m{} (entry {})",
            l.method,
            if l.entered { "written" } else { "not written" }
        ),
        None => "none".to_string(),
    }
}

/// Runs `program` on the models given; returns the violations by ISA.
fn check(models: &[(Isa, &Path)], name: &str, program: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for &(isa, exe) in models {
        let run = run_model(exe, isa, program);
        let errors = violations(&run);
        if !errors.is_empty() {
            failures.push(format!(
                "{name} on {isa:?}: {}\n--- program\n{program}--- model output\n{}",
                errors.join("; "),
                run.text
            ));
        }
    }
    failures
}

fn failures(models: &[(Isa, &Path)], cases: &[(String, String)]) -> Vec<String> {
    cases
        .iter()
        .flat_map(|(name, program)| check(models, name, program))
        .collect()
}

fn assert_balanced(cases: &[(String, String)]) {
    let models: Vec<(Isa, &Path)> = ISAS.iter().map(|&i| (i, model(i).as_path())).collect();
    let failures = failures(&models, cases);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

const KINDS: [(char, &str); 4] = [
    ('s', "interpreter"),
    ('n', "nterp"),
    ('c', "compiled"),
    ('j', "native"),
];

/// Nanoscope's transitions (caller → callee over interpreted, compiled and native code, with
/// nterp as the second kind of interpreted frame), each returning normally, with an exception
/// the caller catches (natives do not catch) and with one that goes through the caller. Method
/// 0 is the switch-interpreted root, which catches whatever reaches it.
fn transition_cases() -> Vec<(String, String)> {
    let mut cases = Vec::new();
    for (caller, caller_name) in KINDS {
        for (callee, callee_name) in KINDS {
            let name = format!("{caller_name} -> {callee_name}");
            let catches = if caller == 'j' { "-" } else { "C" };
            cases.push((
                format!("{name}, return"),
                format!("m 0 s C c1\nm 1 {caller} - c2 c3\nm 2 {callee} - c3\nm 3 c -\nrun 0\n"),
            ));
            cases.push((
                format!("{name}, the caller catches"),
                format!(
                    "m 0 s C c1\nm 1 {caller} {catches} c2 c3\nm 2 {callee} - t\nm 3 c -\nrun 0\n"
                ),
            ));
            cases.push((
                format!("{name}, the exception goes through the caller"),
                format!(
                    "m 0 s C c1 c3\nm 1 {caller} - c2 c3\nm 2 {callee} - c3 t\nm 3 c -\nrun 0\n"
                ),
            ));
        }
    }
    cases
}

#[test]
fn transitions_are_balanced() {
    assert_balanced(&transition_cases());
}

/// Defect 1 of A.5: `EnterInterpreterFromDeoptimize` with an exception pending drops a frame that
/// has no handler without calling `Execute` (interpreter.cc 472-483, 546-557), so the exit of a
/// deoptimized compiled or nterp frame was never written. Here the debugger forces the
/// interpreter for an exception (thread.cc 3921-3939: the fragment is deoptimized with the
/// exception pending), or a frame deoptimized earlier throws after it resumed.
fn dropped_frame_cases() -> Vec<(String, String)> {
    let mut cases = Vec::new();
    for (caller, caller_name) in KINDS.iter().filter(|k| k.0 == 'n' || k.0 == 'c') {
        for (callee, callee_name) in KINDS.iter().filter(|k| k.0 == 'n' || k.0 == 'c') {
            let name = format!("{caller_name} -> {callee_name}");
            cases.push((
                format!("{name}: forced-interpreter throw, no handler in either"),
                format!(
                    "m 0 s C c1 c3\nm 1 {caller} - c2 c3\nm 2 {callee} - c3 T\nm 3 c -\nrun 0\n"
                ),
            ));
            cases.push((
                format!("{name}: forced-interpreter throw, the caller catches"),
                format!("m 0 s C c1\nm 1 {caller} C c2 c3\nm 2 {callee} - c3 T\nm 3 c -\nrun 0\n"),
            ));
            cases.push((
                format!("{name}: full deoptimization, then a throw no one catches"),
                format!("m 0 s C c1\nm 1 {caller} - c2 c3\nm 2 {callee} - D t\nm 3 c -\nrun 0\n"),
            ));
        }
    }
    cases.push((
        "inlined callee deoptimizes (HDeoptimize), then throws; the caller has no handler".into(),
        "m 0 s C c1\nm 1 c - i2 c3\nm 2 c - d c3 t\nm 3 c -\nrun 0\n".into(),
    ));
    cases.push((
        "three compiled frames, forced-interpreter throw caught by the outermost".into(),
        "m 0 s C c1\nm 1 c C c2 c4\nm 2 c - c3\nm 3 n - T\nm 4 c -\nrun 0\n".into(),
    ));
    cases
}

#[test]
fn deoptimized_frames_with_a_pending_exception_and_no_handler_get_their_exit() {
    assert_balanced(&dropped_frame_cases());
}

/// Defect 2 of A.5: a deoptimized inlined callee never wrote its entry (inlined methods are not
/// traced), but once it resumes in the switch interpreter a back-edge can OSR it
/// (interpreter_switch_impl-inl.h 226-250 → jit.cc 548-611), and the OSR code's HTraceExit (or,
/// where compiled code does not trace, the interpreter's exit after 0020 cleared the
/// deoptimizer's mark) wrote an exit without an entry.
fn osr_cases() -> Vec<(String, String)> {
    [
        (
            "inlined callee deoptimized, then OSR'd",
            "m 0 s C c1\nm 1 c - i2 c3\nm 2 c O d o c3\nm 3 c -\nrun 0\n",
        ),
        (
            "inlined callee deoptimized, OSR'd, and the OSR code throws through the caller",
            "m 0 s C c1\nm 1 c - i2 c3\nm 2 c O d o c3 t\nm 3 c -\nrun 0\n",
        ),
        (
            "inlined callee deoptimized, OSR'd, and the OSR code deoptimizes again",
            "m 0 s C c1\nm 1 c - i2 c3\nm 2 c O d o c3 d c3\nm 3 c -\nrun 0\n",
        ),
        (
            "physical compiled frame deoptimized, then OSR'd",
            "m 0 s C c1\nm 1 c - c2 c3\nm 2 c O d o c3\nm 3 c -\nrun 0\n",
        ),
        (
            "nterp frame deoptimized (full fragment), then OSR'd",
            "m 0 s C c1\nm 1 n - c2 c3\nm 2 n O D o c3\nm 3 c -\nrun 0\n",
        ),
        (
            "interpreted frame OSR'd",
            "m 0 s C c1\nm 1 s O c2 o c2\nm 2 c -\nrun 0\n",
        ),
        (
            "interpreted frame OSR'd, the OSR code throws",
            "m 0 s C c1\nm 1 s O o c2 t\nm 2 c -\nrun 0\n",
        ),
    ]
    .iter()
    .map(|(n, p)| (n.to_string(), p.to_string()))
    .collect()
}

#[test]
fn deoptimized_frames_that_are_osred_are_balanced() {
    assert_balanced(&osr_cases());
}

use hubble_testkit::Rng;

/// Random programs: methods call only higher-numbered methods (no recursion), mixing every kind,
/// handlers, OSR code, inlining, throws, forced-interpreter throws and both deoptimizations.
fn random_program(rng: &mut Rng) -> String {
    let n = 3 + rng.below(6) as usize;
    let kinds: Vec<char> = (0..n)
        .map(|i| {
            if i == 0 {
                's'
            } else {
                ['s', 'n', 'c', 'c', 'j'][rng.below(5) as usize]
            }
        })
        .collect();
    let mut text = String::new();
    for i in 0..n {
        let mut flags = String::new();
        if i == 0 || rng.below(3) == 0 {
            flags.push('C');
        }
        if rng.below(2) == 0 {
            flags.push('O');
        }
        if flags.is_empty() {
            flags.push('-');
        }
        let mut ops = Vec::new();
        for _ in 0..rng.below(7) {
            let op = match rng.below(10) {
                0..=4 if i + 1 < n => {
                    let target = i + 1 + rng.below((n - i - 1) as u64) as usize;
                    if kinds[target] == 'c' && rng.below(2) == 0 {
                        format!("i{target}")
                    } else {
                        format!("c{target}")
                    }
                }
                5 => "t".to_string(),
                6 => "T".to_string(),
                7 => "d".to_string(),
                8 => "D".to_string(),
                _ => "o".to_string(),
            };
            ops.push(op);
        }
        text += &format!("m {i} {} {flags} {}\n", kinds[i], ops.join(" "));
    }
    text + "run 0\n"
}

fn random_cases() -> Vec<(String, String)> {
    let mut rng = Rng::new(0x0a5d_e0b7);
    (0..300)
        .map(|i| (format!("random program {i}"), random_program(&mut rng)))
        .collect()
}

#[test]
fn random_programs_are_balanced() {
    assert_balanced(&random_cases());
}

/// The checks can fail: trace_hooks.h with either half of A.5's fix undone (or the OSR line 0020
/// had before it) is caught, by the hand-written cases and by the random programs alike.
#[test]
fn mutated_hooks_are_detected() {
    let mutants = [
        (
            "dropped-frame-no-exit",
            "  TraceInterpretedExit(self, frame);\n}\n\nconstexpr tp::Isa ToHubbleIsa",
            "  (void)self;\n  (void)frame;\n}\n\nconstexpr tp::Isa ToHubbleIsa",
        ),
        (
            "osr-no-entry",
            "      TraceEntry(self, frame->GetMethod());",
            "      (void)self;",
        ),
        (
            "osr-mark-as-0020-had-it",
            "  if (ART_HUBBLE_TRACING && kCompiledCodeTraced) {\n    if (frame->GetHubbleNoExitRecord()) {",
            "  frame->SetHubbleNoExitRecord(kCompiledCodeTraced);\n  if (false) {\n    if (frame->GetHubbleNoExitRecord()) {",
        ),
    ];
    let isas = [Isa::Arm64, Isa::X86_64];
    for (name, from, to) in mutants {
        let dir = hubble_interp_replay::mutant_header(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            &format!("deopt-mutant-{name}"),
            "trace_hooks.h",
            from,
            to,
        );
        let exes: Vec<(Isa, PathBuf)> = isas
            .iter()
            .map(|&i| (i, build_model(i, &dir, Some(&dir))))
            .collect();
        let models: Vec<(Isa, &Path)> = exes.iter().map(|(i, e)| (*i, e.as_path())).collect();
        let mut hand_written = dropped_frame_cases();
        hand_written.extend(osr_cases());
        assert!(
            !failures(&models, &hand_written).is_empty(),
            "mutant {name} passes the hand-written cases"
        );
        assert!(
            !failures(&models, &random_cases()).is_empty(),
            "mutant {name} passes the random programs"
        );
    }
}

/// The model calls the hooks where the patches do: each line of `cpp/deopt_model.cc` marked
/// `// HOOK <patch>` is, whitespace aside, a line the patch adds.
#[test]
fn the_model_calls_the_hooks_the_patches_add() {
    let hooks = hubble_interp_replay::check_marked_hooks("deopt_model.cc");
    assert!(hooks >= 6, "the model marks its hook calls ({hooks} found)");
}
