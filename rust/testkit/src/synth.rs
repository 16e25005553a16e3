//! Synthetic trace files for tests, benchmarks and the peer-tool stage: a seeded random call
//! stream through the reference ring writer, wrapped (so frames are cut at the window start)
//! and stopped mid-stack (so frames are running at the flush), with realistic pretty names; and
//! the check of a ring that emitted trace points wrote against what they traced.

use std::collections::BTreeMap;

use hubble_format::ring::decode;
use hubble_format::stream::Input;
use hubble_format::{
    build_tree, CallTree, Mode, Record, RingView, RingWriter, TraceFile, TraceHeader, TreeOptions,
    WindowStart,
};

/// What to generate.
#[derive(Clone, Debug)]
pub struct Spec {
    /// ISA mode.
    pub mode: Mode,
    /// Ring size in slots.
    pub ring_slots: usize,
    /// Slots to write, as a multiple of the ring (above 1 wraps).
    pub laps: f64,
    /// Random seed.
    pub seed: u64,
    /// Distinct methods.
    pub methods: usize,
    /// Every n-th method has no symbol (0: all resolved).
    pub unresolved_every: usize,
    /// Timer frequency.
    pub timer_hz: u64,
    /// Timer value when tracing starts.
    pub start_counter: u64,
    /// Wall clock at the flush.
    pub wall_clock_ns: u64,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Thread name.
    pub thread_name: String,
    /// Process name.
    pub process_name: String,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            mode: Mode::Bits64,
            ring_slots: 4096,
            laps: 1.5,
            seed: 1,
            methods: 200,
            unresolved_every: 0,
            timer_hz: 19_200_000,
            start_counter: 1 << 36,
            wall_clock_ns: 1_700_000_000_123_456_789,
            pid: 4242,
            tid: 4242,
            thread_name: "main".into(),
            process_name: "com.example.app".into(),
        }
    }
}

/// Well-known methods the generator calls now and then, for signatures and chains.
pub const SLEEP: &str = "void java.lang.Thread.sleep(long)";
/// See [`SLEEP`].
pub const CLICK: &str = "void com.example.app.MainActivity.onClick(android.view.View)";
/// See [`SLEEP`].
pub const BINDER: &str =
    "boolean android.os.BinderProxy.transact(int, android.os.Parcel, android.os.Parcel, int)";

/// The method pointer and name of method `i`.
fn method(spec: &Spec, i: usize) -> (u64, String) {
    // Two in ten above 4 GiB (two-slot entries in 64-bit mode).
    let ptr = if spec.mode == Mode::Bits64 && i % 5 == 1 {
        0x7f_1000_0000 + (i as u64) * 48
    } else {
        0x7000_0000 + (i as u64) * 48
    };
    let name = match i {
        0 => CLICK.to_owned(),
        1 => BINDER.to_owned(),
        2 => SLEEP.to_owned(),
        _ => {
            let ret = ["void", "int", "java.lang.String", "boolean[]"][i % 4];
            let args = ["", "int", "java.lang.String, long", "android.os.Bundle"][(i / 4) % 4];
            format!(
                "{ret} com.example.app.feature{}.Class{}.method{}({args})",
                i % 7,
                i % 13,
                i
            )
        }
    };
    (ptr, name)
}

/// Generates one trace file.
pub fn trace(spec: &Spec) -> TraceFile {
    let mut state = spec.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let methods: Vec<(u64, String)> = (0..spec.methods.max(3)).map(|i| method(spec, i)).collect();
    let mut ring = RingWriter::new(spec.mode, spec.ring_slots);
    let mut t = spec.start_counter;
    ring.start(t as u32);
    let target = (spec.ring_slots as f64 * spec.laps) as usize;
    let mut written = 1usize;
    let mut stack: Vec<usize> = Vec::new();
    while written < target {
        t += 1 + rand() % 300;
        let r = rand() % 100;
        if !stack.is_empty() && (r < 46 || stack.len() > 40) {
            ring.exit(t as u32);
            stack.pop();
            written += 1;
        } else {
            let i = match r {
                96 if stack.is_empty() || stack.len() < 3 => 0,
                97 => 1,
                98 if stack.len() > 2 => {
                    t += 20_000 + rand() % 200_000; // a sleep: a long leaf
                    2
                }
                _ => 3 + (rand() as usize) % (methods.len() - 3),
            };
            let (ptr, _) = methods[i];
            ring.entry(ptr, t as u32).expect("valid method pointer");
            if i == 2 {
                // Thread.sleep's time passes before its exit.
                t += 20_000 + rand() % 200_000;
                ring.exit(t as u32);
                written += 1;
            } else {
                stack.push(i);
            }
            written += if spec.mode == Mode::Bits64 && ptr >> 32 != 0 {
                2
            } else {
                1
            };
        }
    }
    let reference = t + 17;
    let view = ring.view();
    let window = decode(&view, spec.mode).expect("the writer's ring decodes");
    let (older, newer) = view.pieces();
    let linear: Vec<u64> = older.iter().chain(newer).copied().collect();
    let slots = linear[linear.len() - window.slots_used..].to_vec();
    let mut symbols = BTreeMap::new();
    for (i, (ptr, name)) in methods.iter().enumerate() {
        if spec.unresolved_every > 0 && i > 2 && i % spec.unresolved_every == 0 {
            continue;
        }
        symbols.insert(*ptr, name.clone());
    }
    TraceFile {
        header: TraceHeader {
            mode: spec.mode,
            timer_hz: spec.timer_hz,
            reference_counter: reference,
            wall_clock_ns: spec.wall_clock_ns,
            ring_bytes: (spec.ring_slots * 8) as u64,
            write_pos: ring.write_pos_bytes(),
            pid: spec.pid,
            tid: spec.tid,
            thread_name: spec.thread_name.clone(),
            process_name: spec.process_name.clone(),
            reason: "synthetic".into(),
            anchors: Vec::new(),
            metadata: BTreeMap::new(),
        },
        window: slots,
        symbols,
    }
}

/// A trace written by hand: `(method, tick)` steps (`None`: an exit) after a start record at
/// tick 0, one thread (`main` of `p`), a 1 MHz timer (a tick is 1000 ns), the flush at `flush`,
/// the given symbols.
pub fn handmade(steps: &[(Option<u64>, u32)], flush: u64, symbols: &[(u64, &str)]) -> TraceFile {
    let mut ring = RingWriter::new(Mode::Bits64, 64);
    ring.start(0);
    for &(method, tick) in steps {
        match method {
            Some(m) => ring.entry(m, tick).expect("a method pointer"),
            None => ring.exit(tick),
        }
    }
    let slots = ring.slots()[..(ring.write_pos_bytes() / 8) as usize].to_vec();
    TraceFile {
        header: TraceHeader {
            mode: Mode::Bits64,
            timer_hz: 1_000_000,
            reference_counter: flush,
            wall_clock_ns: 1_700_000_000_000_000_000,
            ring_bytes: 512,
            write_pos: ring.write_pos_bytes(),
            pid: 1,
            tid: 1,
            thread_name: "main".into(),
            process_name: "p".into(),
            reason: "r".into(),
            anchors: Vec::new(),
            metadata: Default::default(),
        },
        window: slots,
        symbols: symbols.iter().map(|&(p, n)| (p, n.to_owned())).collect(),
    }
}

/// Each file as a reader's input, all named `t`.
pub fn inputs(files: &[TraceFile]) -> Vec<Input<'_>> {
    files.iter().map(|f| Input { file: f, name: "t" }).collect()
}

/// The file's call tree (default options), for references computed from frames.
pub fn tree(file: &TraceFile) -> CallTree {
    let events = file.decode_events().expect("a file that decodes").events;
    build_tree(
        &events,
        file.header.reference_counter,
        TreeOptions::default(),
    )
}

/// The emitted trace points' end-to-end check (the proving grounds' scenarios, A64/T32 in
/// unicorn and x86 natively): the ring the code left, decoded backwards from `write_pos`, holds
/// the newest of the records `expected` (what was traced, in order); all of them if the window
/// reaches back to the start record, else the window goes (nearly) all the way round.
pub fn check_ring_window(ring: &[u64], write_pos: u64, mode: Mode, expected: &[Record]) {
    let view = RingView::new(ring, write_pos, None).expect("ring view");
    let window = decode(&view, mode).expect("decode");
    let n = window.records.len();
    assert!(n > 0 && n <= expected.len(), "decoded {n} records");
    assert_eq!(
        window.records[..],
        expected[expected.len() - n..],
        "decoded records differ from what was traced"
    );
    if window.start == WindowStart::StartRecord {
        assert_eq!(
            n,
            expected.len(),
            "window starts at a start record but lost records"
        );
        assert!(!window.dropped_half_record);
    } else {
        assert!(
            window.slots_used + 1 >= ring.len(),
            "window too short: {}",
            window.slots_used
        );
    }
}
