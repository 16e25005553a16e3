//! The interpreter's task record: `runtime/hubble/task_hooks.h` and
//! `task_methods.h`, compiled unchanged against `cpp/art-model/`, driven by `cpp/task_model.cc`
//! at the lines patches 0020 and 0028 add to `Execute()`.
//!
//! The expectations are written here by hand from each method's Java signature and the dex
//! calling convention (the receiver in the first in-register, then each parameter, a `long` in
//! two), not computed with the header's own `InRegisterOf`, which is part of what is checked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hubble_format::slot::TaskKind;
use hubble_format::{decode, Mode, Record, RingView};
use hubble_interp_replay::{mutant_header, run_script};

/// One row of `kTaskMethods` as docs/tasks.md's table gives it.
struct Row {
    method: &'static str,
    kind: TaskKind,
    /// The in-register of the task object (0: the receiver).
    task: usize,
    /// The in-register of the queue, if the method knows it.
    queue: Option<usize>,
    /// How many in-registers the call has.
    ins: usize,
}

const ROWS: [Row; 12] = [
    Row {
        method: "ThreadPoolExecutor.execute(Runnable)",
        kind: TaskKind::Submit,
        task: 1,
        queue: Some(0),
        ins: 2,
    },
    Row {
        method: "AsyncTask$SerialExecutor.execute(Runnable)",
        kind: TaskKind::Submit,
        task: 1,
        queue: Some(0),
        ins: 2,
    },
    Row {
        method: "MessageQueue.enqueueMessage(Message, long)",
        kind: TaskKind::Submit,
        task: 1,
        queue: Some(0),
        ins: 4,
    },
    Row {
        method: "Thread.start()",
        kind: TaskKind::Submit,
        task: 0,
        queue: None,
        ins: 1,
    },
    Row {
        method: "ThreadPoolExecutor.beforeExecute(Thread, Runnable)",
        kind: TaskKind::BeginUntilEnd,
        task: 2,
        queue: Some(0),
        ins: 3,
    },
    Row {
        method: "ThreadPoolExecutor.afterExecute(Runnable, Throwable)",
        kind: TaskKind::End,
        task: 1,
        queue: Some(0),
        ins: 3,
    },
    Row {
        method: "FutureTask.run()",
        kind: TaskKind::Begin,
        task: 0,
        queue: None,
        ins: 1,
    },
    Row {
        method: "Handler.dispatchMessage(Message)",
        kind: TaskKind::Begin,
        task: 1,
        queue: None,
        ins: 2,
    },
    Row {
        method: "Thread.run()",
        kind: TaskKind::Begin,
        task: 0,
        queue: None,
        ins: 1,
    },
    Row {
        method: "CoroutineDispatcher.dispatch(CoroutineContext, Runnable), every override",
        kind: TaskKind::Submit,
        task: 2,
        queue: Some(0),
        ins: 3,
    },
    Row {
        method: "CoroutineDispatcher.dispatchYield(CoroutineContext, Runnable), every override",
        kind: TaskKind::Submit,
        task: 2,
        queue: Some(0),
        ins: 3,
    },
    Row {
        method: "kotlinx DispatchedTask.run()",
        kind: TaskKind::Begin,
        task: 0,
        queue: None,
        ins: 1,
    },
];

/// Locals before the ins in every modelled frame: the ins are the frame's last registers.
const LOCALS: usize = 3;

/// The driver, or `Err` if it does not compile (a mutant its own `static_assert`s refuse).
fn build(name: &str, shadow: Option<&Path>) -> Result<PathBuf, String> {
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    // The task record is the same two slots on every ISA (the C++ trace point); arm64 is the
    // devices'.
    let defines = ["-DHUBBLE_MODEL_ISA=kArm64".to_string()];
    // A mutant's directory first, as the driver includes it ("runtime/hubble/...") and as the
    // headers include each other ("hubble/...").
    let shadow: Vec<PathBuf> = shadow
        .into_iter()
        .flat_map(|d| [d.to_path_buf(), d.join("runtime")])
        .collect();
    hubble_interp_replay::build_model("task_model.cc", &exe, &defines, &shadow)?;
    Ok(exe)
}

fn model() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        build("hubble-task-model", None)
            .unwrap_or_else(|e| panic!("compiling cpp/task_model.cc failed:\n{e}"))
    })
}

/// What a run wrote: the records after the start record, and the hash codes computed.
struct Run {
    methods: HashMap<String, u64>,
    records: Vec<Record>,
    hashes: usize,
}

fn run(exe: &Path, script: &str) -> Run {
    let out = run_script(&[exe.to_string_lossy().to_string()], script);
    let mut methods = HashMap::new();
    let mut slots = Vec::new();
    let mut hashes = None;
    let mut cursor = None;
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[0] {
            "M" => {
                methods.insert(f[1].to_string(), u64::from_str_radix(f[2], 16).unwrap());
            }
            "hashes" => hashes = Some(f[1].parse().unwrap()),
            "cursor" => cursor = Some(f[1].parse::<usize>().unwrap()),
            _ => slots.push(u64::from_str_radix(f[0], 16).unwrap()),
        }
    }
    assert_eq!(cursor, Some(slots.len() * 8), "cursor");
    let window = decode(&RingView::linear(&slots), Mode::Bits64)
        .unwrap_or_else(|e| panic!("decode: {e}\n{script}"));
    assert_eq!(window.records[0], Record::Start { ts: 0 });
    Run {
        methods,
        records: window.records[1..].to_vec(),
        hashes: hashes.expect("hashes line"),
    }
}

/// The hash the script gives the object in in-register `ins` of call `call` (distinct, 28 bits).
fn hash(call: usize, ins: usize) -> u32 {
    0x0100_0000 + (call as u32) * 0x100 + ins as u32
}

/// A call of `row` with an object in every in-register but a `long`'s (enqueueMessage's 3 and 4).
fn call_line(row: &str, ins: usize, objects: &dyn Fn(usize) -> Option<u32>) -> String {
    let mut line = format!("call {row} {} {ins}", LOCALS + ins);
    for i in 0..ins {
        let v = match objects(i) {
            Some(h) => format!("{h:x}"),
            None => "null".to_string(),
        };
        line += &format!(" {}={v}", LOCALS + i);
    }
    line + "\n"
}

fn objects_of(row: usize, call: usize) -> impl Fn(usize) -> Option<u32> {
    move |i| {
        if row == 2 && i >= 2 {
            None // enqueueMessage's `when`: a long, no reference
        } else {
            Some(hash(call, i))
        }
    }
}

/// Every row published, each method called once, then a method not in the table: each call's
/// entry is followed by exactly its task record, with the identities of the objects in the
/// in-registers the Java signature puts them in; no other object is hashed.
fn check_every_row(exe: &Path) -> Result<(), String> {
    let rows: Vec<String> = (0..ROWS.len()).map(|r| r.to_string()).collect();
    let mut script = format!("publish {}\n", rows.join(" "));
    for (row, r) in ROWS.iter().enumerate() {
        script += &call_line(&row.to_string(), r.ins, &objects_of(row, row));
    }
    script += &call_line("x", 2, &|i| Some(hash(99, i)));
    let run = run(exe, &script);
    let mut expected = Vec::new();
    let mut hashed = 0;
    for (row, r) in ROWS.iter().enumerate() {
        expected.push((Some(run.methods[&row.to_string()]), None));
        let queue = r.queue.map_or(0, |q| hash(row, q));
        hashed += 1 + usize::from(r.queue.is_some());
        expected.push((None, Some((r.kind, hash(row, r.task), queue))));
    }
    expected.push((Some(run.methods["x"]), None));
    let got: Vec<_> = run
        .records
        .iter()
        .map(|rec| match *rec {
            Record::Entry { method, .. } => (Some(method), None),
            Record::Task {
                kind, task, queue, ..
            } => (None, Some((kind, task, queue))),
            ref other => panic!("unexpected record {other:?}"),
        })
        .collect();
    let mut errors = Vec::new();
    if got.len() != expected.len() {
        errors.push(format!(
            "{} records, expected {}",
            got.len(),
            expected.len()
        ));
    }
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        if g != e {
            let row = ROWS.get(i / 2).map_or("the untabled method", |r| r.method);
            errors.push(format!("record {i} ({row}): got {g:x?}, expected {e:x?}"));
        }
    }
    if run.hashes != hashed {
        errors.push(format!(
            "{} hash codes computed, expected {hashed}",
            run.hashes
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

#[test]
fn every_task_method_records_the_objects_its_signature_passes() {
    check_every_row(model()).unwrap();
}

/// What the compiler's inliner refuses (`WritesTaskRecord`): exactly the table's methods, each by
/// its declaring class, name and signature, and for the dispatcher's rows every override in a
/// subclass; any other override, an overload, the abstract method itself and a method of the
/// same name elsewhere are inlined as before.
#[test]
fn the_inliner_refuses_exactly_the_task_methods() {
    let keys = [
        (
            "Ljava/util/concurrent/ThreadPoolExecutor;",
            "execute",
            "(Ljava/lang/Runnable;)V",
        ),
        (
            "Landroid/os/AsyncTask$SerialExecutor;",
            "execute",
            "(Ljava/lang/Runnable;)V",
        ),
        (
            "Landroid/os/MessageQueue;",
            "enqueueMessage",
            "(Landroid/os/Message;J)Z",
        ),
        ("Ljava/lang/Thread;", "start", "()V"),
        (
            "Ljava/util/concurrent/ThreadPoolExecutor;",
            "beforeExecute",
            "(Ljava/lang/Thread;Ljava/lang/Runnable;)V",
        ),
        (
            "Ljava/util/concurrent/ThreadPoolExecutor;",
            "afterExecute",
            "(Ljava/lang/Runnable;Ljava/lang/Throwable;)V",
        ),
        ("Ljava/util/concurrent/FutureTask;", "run", "()V"),
        (
            "Landroid/os/Handler;",
            "dispatchMessage",
            "(Landroid/os/Message;)V",
        ),
        ("Ljava/lang/Thread;", "run", "()V"),
        (
            "LLoopDispatcher; Lkotlinx/coroutines/CoroutineDispatcher;",
            "dispatch",
            "(Lkotlin/coroutines/CoroutineContext;Ljava/lang/Runnable;)V",
        ),
        (
            "Lkotlinx/coroutines/scheduling/ExperimentalCoroutineDispatcher; \
             Lkotlinx/coroutines/ExecutorCoroutineDispatcher; \
             Lkotlinx/coroutines/CoroutineDispatcher;",
            "dispatchYield",
            "(Lkotlin/coroutines/CoroutineContext;Ljava/lang/Runnable;)V",
        ),
        ("Lkotlinx/coroutines/DispatchedTask;", "run", "()V"),
    ];
    let others = [
        (
            "Ljava/util/concurrent/ScheduledThreadPoolExecutor;",
            "execute",
            "(Ljava/lang/Runnable;)V",
        ),
        (
            "Ljava/util/concurrent/ThreadPoolExecutor;",
            "execute",
            "(Ljava/lang/Object;)V",
        ),
        (
            "Landroid/os/MessageQueue;",
            "enqueueMessage",
            "(Landroid/os/Message;)Z",
        ),
        ("Lcom/example/Worker;", "run", "()V"),
        ("Ljava/lang/Thread;", "join", "()V"),
        (
            "Landroid/os/Handler;",
            "handleMessage",
            "(Landroid/os/Message;)V",
        ),
        (
            "Lkotlinx/coroutines/CoroutineDispatcher;",
            "dispatch",
            "(Lkotlin/coroutines/CoroutineContext;Ljava/lang/Runnable;)V",
        ),
        (
            "LMyExecutor; Ljava/util/concurrent/ThreadPoolExecutor;",
            "execute",
            "(Ljava/lang/Runnable;)V",
        ),
        (
            "LLoopDispatcher; Lkotlinx/coroutines/CoroutineDispatcher;",
            "dispatch",
            "(Ljava/lang/Runnable;)V",
        ),
        (
            "Lkotlinx/coroutines/DispatchedContinuation; Lkotlinx/coroutines/DispatchedTask;",
            "run",
            "()V",
        ),
    ];
    let mut script = String::new();
    for (d, n, s) in keys.iter().chain(&others) {
        script += &format!("find {d} {n} {s}\n");
    }
    let out = run_script(&[model().to_string_lossy().to_string()], &script);
    let found: Vec<i32> = out
        .lines()
        .filter_map(|l| l.strip_prefix("F "))
        .map(|r| r.parse().unwrap())
        .collect();
    let mut expected: Vec<i32> = (0..ROWS.len() as i32).collect();
    expected.extend([-1; 10]);
    assert_eq!(found, expected);
}

/// Nothing published (task records off, `debug.hubble.tasks 0`): entries only, and no object is
/// hashed (a hash code can inflate a lock). A build without some of the methods (an OEM
/// framework) publishes the others: the missing ones write only their entry.
#[test]
fn unpublished_methods_write_only_their_entry() {
    let mut off = String::new();
    for (row, r) in ROWS.iter().enumerate() {
        off += &call_line(&row.to_string(), r.ins, &objects_of(row, row));
    }
    let run_off = run(model(), &off);
    assert_eq!(
        run_off.hashes, 0,
        "hash codes computed with task records off"
    );
    assert!(
        run_off
            .records
            .iter()
            .all(|r| matches!(r, Record::Entry { .. })),
        "a record other than an entry with task records off: {:?}",
        run_off.records
    );
    assert_eq!(run_off.records.len(), ROWS.len());

    // Found in another order than the table's, and without rows 2 and 7.
    let partial = format!("publish 8 0 1 3 4 5 6\n{off}");
    let run_partial = run(model(), &partial);
    let tasks: Vec<u32> = run_partial
        .records
        .iter()
        .filter_map(|r| match *r {
            Record::Task { task, .. } => Some(task),
            _ => None,
        })
        .collect();
    let expected: Vec<u32> = [0, 1, 3, 4, 5, 6, 8]
        .iter()
        .map(|&row| hash(row, ROWS[row].task))
        .collect();
    assert_eq!(
        tasks, expected,
        "task records of the published rows, in call order"
    );
}

/// A null task or queue (a `Message` enqueued by a `MessageQueue` the frame does not hold is not
/// possible, but `execute(null)` is: it throws after the record) is identity 0, and only the
/// lower 28 bits of a hash code are kept, as ART's lock word holds them.
#[test]
fn null_objects_are_identity_zero_and_hashes_keep_28_bits() {
    let script = format!(
        "publish 0 4\n{}{}",
        call_line("0", 2, &|i| if i == 1 { None } else { Some(0x0abc_def1) }),
        call_line("4", 3, &|i| if i == 0 { None } else { Some(0x7fff_fff5) }),
    );
    let run = run(model(), &script);
    let tasks: Vec<(u32, u32)> = run
        .records
        .iter()
        .filter_map(|r| match *r {
            Record::Task { task, queue, .. } => Some((task, queue)),
            _ => None,
        })
        .collect();
    assert_eq!(tasks, vec![(0, 0x0abc_def1), (0x0fff_fff5, 0)]);
    assert_eq!(run.hashes, 2, "only the non-null objects are hashed");
}

/// The checks fail on a broken table or a broken reading of the frame; a mutant that the header's
/// own `static_assert`s refuse (a `long` counted as one register) never builds.
#[test]
fn mutated_task_hooks_are_detected() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("task-mutants");
    let mutants = [
        (
            "before-execute-reads-the-thread",
            "task_methods.h",
            "tp::TaskKind::kBeginUntilEnd, 2, kReceiver",
            "tp::TaskKind::kBeginUntilEnd, 1, kReceiver",
        ),
        (
            "first-register-not-first-in",
            "task_hooks.h",
            "frame.NumberOfVRegs() - ins_size + in",
            "0 * ins_size + in",
        ),
        (
            "long-takes-one-register",
            "task_methods.h",
            "vreg += (type == 'J' || type == 'D') ? 2 : 1;",
            "vreg += 1;",
        ),
        (
            "kinds-swapped",
            "task_methods.h",
            "\"(Ljava/lang/Runnable;Ljava/lang/Throwable;)V\", tp::TaskKind::kEnd",
            "\"(Ljava/lang/Runnable;Ljava/lang/Throwable;)V\", tp::TaskKind::kBegin",
        ),
    ];
    for (name, file, from, to) in mutants {
        let dir = mutant_header(&base, name, file, from, to);
        match build(&format!("hubble-task-model-{name}"), Some(&dir)) {
            Ok(exe) => assert!(
                check_every_row(&exe).is_err(),
                "mutant {name} of {file} passed the checks"
            ),
            Err(e) => assert!(
                e.contains("static assertion failed"),
                "mutant {name} of {file} failed to build for another reason:\n{e}"
            ),
        }
    }
}

/// Each line of `cpp/task_model.cc` marked `// HOOK <patch>` is, whitespace aside, a line that
/// patch adds to ART: the model enters methods as the patched `Execute()` does.
#[test]
fn the_model_calls_the_hooks_the_patches_add() {
    let hooks = hubble_interp_replay::check_marked_hooks("task_model.cc");
    assert_eq!(hooks, 2, "the entry and the task hook are marked");
}
