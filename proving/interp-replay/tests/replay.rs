//! The interpreter's C++ trace point, run on the host, leaves the ring slot for slot as
//! `hubble_format::RingWriter` does for the same calls; stop requests publish the end position
//! and write nothing after it; the decoder reads the C++ ring back into the same records.

use hubble_format::slot::TaskKind;
use hubble_format::{decode, Mode, Record, RingWriter};
use hubble_interp_replay::{build_driver, run, Replay};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn driver() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        build_driver(&dir, &[])
    })
}

/// The reference: RingWriter plus the §6 stop/start state of docs/architecture.md.
struct Model {
    w: RingWriter,
    running: bool,
    stop_requested: bool,
    published: u64,
    /// Records written since the last start (for the decode check when nothing wrapped).
    since_start: Vec<Record>,
    wrapped_since_start: bool,
}

impl Model {
    fn new(mode: Mode, slots: usize) -> Model {
        Model {
            w: RingWriter::new(mode, slots),
            running: false,
            stop_requested: false,
            published: 0,
            since_start: Vec::new(),
            wrapped_since_start: false,
        }
    }
    /// A trace point: returns whether it may write.
    fn point(&mut self) -> bool {
        if !self.running {
            return false;
        }
        if self.stop_requested {
            self.running = false;
            self.stop_requested = false;
            self.published = self.w.write_pos_bytes();
            return false;
        }
        true
    }
    fn track_wrap(&mut self, before: u64) {
        if self.w.write_pos_bytes() <= before {
            self.wrapped_since_start = true;
        }
    }
    fn entry(&mut self, m: u64, ts: u32) {
        if self.point() {
            let before = self.w.write_pos_bytes();
            self.w.entry(m, ts).unwrap();
            self.track_wrap(before);
            self.since_start.push(Record::Entry { method: m, ts });
        }
    }
    fn exit(&mut self, ts: u32) {
        if self.point() {
            let before = self.w.write_pos_bytes();
            self.w.exit(ts);
            self.track_wrap(before);
            self.since_start.push(Record::Exit { ts });
        }
    }
    fn task(&mut self, kind: TaskKind, task: u32, queue: u32, ts: u32) {
        if self.point() {
            let before = self.w.write_pos_bytes();
            self.w.task(kind, task, queue, ts).unwrap();
            self.track_wrap(before);
            self.since_start.push(Record::Task {
                kind,
                task,
                queue,
                ts,
            });
        }
    }
    fn start(&mut self, ts: u32) {
        let before = self.w.write_pos_bytes();
        self.w.start(ts);
        self.running = true;
        self.stop_requested = false;
        self.since_start = vec![Record::Start { ts }];
        self.wrapped_since_start = self.w.write_pos_bytes() <= before;
    }
    fn expected(&self) -> (Option<u64>, u64) {
        let cursor = if self.running {
            Some(self.w.write_pos_bytes())
        } else {
            None
        };
        let stop = if self.stop_requested {
            1
        } else if self.running {
            0
        } else {
            self.published
        };
        (cursor, stop)
    }
}

use hubble_testkit::Rng;

fn method(rng: &mut Rng, mode: Mode) -> u64 {
    let m = match rng.below(3) {
        0 => 8 + 4 * rng.below(1 << 20), // small (0-7 are control values)
        1 => (rng.next() & 0xffff_fffc) | 4, // below 4 GiB
        _ => (rng.next() & 0x0000_7fff_ffff_fff8) | 8, // anywhere (64-bit only)
    };
    match mode {
        Mode::Bits64 => m,
        Mode::Bits32 => (m & 0xffff_fffc).max(8),
    }
}

fn check(mode: Mode, slots: usize, seed: u64, ops: usize) {
    check_with(driver(), mode, slots, seed, ops)
}

fn check_with(exe: &std::path::Path, mode: Mode, slots: usize, seed: u64, ops: usize) {
    let mut rng = Rng::new(seed | 1);
    let mut model = Model::new(mode, slots);
    let bits = if mode == Mode::Bits64 { 64 } else { 32 };
    let mut script = format!("mode {bits}\nslots {slots}\n");
    let mut ts: u32 = rng.next() as u32;
    for i in 0..ops {
        ts = ts.wrapping_add(1 + rng.below(1000) as u32);
        let r = rng.below(100);
        if i == 0 || (!model.running && r < 30) {
            model.start(ts);
            script += &format!("start {ts}\n");
        } else if model.running && !model.stop_requested && r < 3 {
            model.stop_requested = true;
            script += "stop\n";
        } else if r < 55 {
            let m = method(&mut rng, mode);
            model.entry(m, ts);
            script += &format!("entry {m:x} {ts}\n");
        } else if r < 62 {
            // A task record (after any record: the trace point does not care).
            let task = rng.next() as u32 & 0x0fff_ffff;
            let queue = rng.next() as u32 & 0x0fff_ffff;
            let kind = TaskKind::ALL[rng.below(4) as usize];
            model.task(kind, task, queue, ts);
            script += &format!("task {} {task:x} {queue:x} {ts}\n", kind.code());
        } else {
            model.exit(ts);
            script += &format!("exit {ts}\n");
        }
    }
    let got: Replay = run(exe, &script);
    let (cursor, stop) = model.expected();
    let ctx = || format!("mode {bits}, {slots} slots, seed {seed:#x}");
    assert_eq!(got.slots.len(), slots, "{}", ctx());
    for (i, (g, w)) in got.slots.iter().zip(model.w.slots()).enumerate() {
        assert_eq!(
            g,
            w,
            "slot {i} differs ({}): C++ {g:#018x} RingWriter {w:#018x}",
            ctx()
        );
    }
    assert_eq!(got.cursor, cursor, "cursor ({})", ctx());
    assert_eq!(got.stop, stop, "stop ({})", ctx());

    // The decoder reads the C++ ring from the write position (the cursor, or the published end).
    let write_pos = match (got.cursor, got.stop) {
        (Some(c), _) => c,
        (None, s) if s > 1 => s,
        _ => return,
    };
    let view = hubble_format::RingView::new(&got.slots, write_pos, None).unwrap();
    let window = decode(&view, mode).unwrap_or_else(|e| panic!("decode: {e} ({})", ctx()));
    let reference = decode(&model.w.view(), mode).unwrap();
    assert_eq!(window.records, reference.records, "{}", ctx());
    if !model.wrapped_since_start {
        assert_eq!(
            window.records,
            model.since_start,
            "decoded window ({})\n{script}",
            ctx()
        );
    }
}

#[test]
fn random_streams_64bit_small_rings_wrap_often() {
    for seed in 0..200u64 {
        check(Mode::Bits64, 2 + (seed as usize % 13), seed * 7919 + 1, 300);
    }
}

#[test]
fn random_streams_64bit_large_ring_no_wrap() {
    for seed in 0..20u64 {
        check(Mode::Bits64, 4096, seed * 104_729 + 3, 1500);
    }
}

#[test]
fn random_streams_32bit() {
    for seed in 0..200u64 {
        check(Mode::Bits32, 2 + (seed as usize % 13), seed * 7907 + 5, 300);
    }
    check(Mode::Bits32, 4096, 99, 1500);
}

/// Hand-written cases with the exact slots spelled out (Fig. 2 and the pad/wrap rule).
#[test]
fn golden_64bit_wide_entry_at_the_end_pads_and_wraps() {
    // 4 slots: start at 0; narrow entry at 1; exit at 2 (limit = slot 3);
    // wide entry: cursor 3 >= limit -> pad slot 3, wrap to 0, write slots 0..1.
    let script = "mode 64\nslots 4\nstart 16\nentry 1000 17\nexit 18\nentry 123456789a0 19\n";
    let got = run(driver(), script);
    assert_eq!(
        got.slots,
        vec![0x123456789a0, (19u64 << 32) | 1, (18u64 << 32), 2]
    );
    assert_eq!(got.cursor, Some(16));
    assert_eq!(got.stop, 0);
}

#[test]
fn golden_stop_publishes_and_writes_nothing_more() {
    let script = "mode 64\nslots 8\nstart 1\nentry 40 2\nstop\nexit 3\nentry 44 4\n";
    let got = run(driver(), script);
    assert_eq!(got.cursor, None, "tracing off after the stop");
    assert_eq!(got.stop, 16, "end position published: after start + entry");
    assert_eq!(&got.slots[..3], &[(1u64 << 32) | 3, (2u64 << 32) | 0x40, 0]);
}

/// The test must be able to fail: the same header with one constant changed (the exit marker)
/// or one step dropped (no pad before a wrap) is caught by the comparison.
#[test]
fn mutated_trace_points_are_detected() {
    let mutants = [
        (
            "exit-marker",
            "constexpr uint32_t kMarkExit = 0u;",
            "constexpr uint32_t kMarkExit = 5u;",
        ),
        (
            "no-pad",
            "WriteSlot(static_cast<uintptr_t>(cursor), Pack(0, kMarkPad));",
            "(void)0;",
        ),
        ("no-stop", "if (Load(&block[kStop]) != 0) {", "if (false) {"),
    ];
    for (name, from, to) in mutants {
        let dir = hubble_interp_replay::mutant_header(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            &format!("mutant-{name}"),
            "trace_point.h",
            from,
            to,
        );
        let inc = dir.to_str().unwrap().to_string();
        // The mutant's directory comes first on the include path, so it shadows the real header.
        let exe = build_driver(&dir, &["-I", &inc]);
        let failed = std::panic::catch_unwind(|| {
            let mut rng_seed = 1u64;
            for slots in 2..12 {
                rng_seed += 1;
                check_with(&exe, Mode::Bits64, slots, rng_seed, 200);
            }
        })
        .is_err();
        assert!(failed, "mutant {name} was not detected");
    }
}
