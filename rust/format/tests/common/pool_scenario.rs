//! A many-thread pool written by the reference writer (`PoolWriter`) and, beside it, the
//! test's own model of what the pool holds at the flush: which block every record went to (the
//! traced thread's words say when its slow path took a block), the seq each take and each drop
//! consumed, and which take of each block address was the last. The expected runs come from the
//! model alone, never from `thread_streams` or the file code under test.
//!
//! Shared by the tests of hubble-format, hubble-export, hubble-analysis and hubble-cli
//! (`#[path]`): it uses only hubble-format's public API.
#![allow(dead_code)]

use std::collections::BTreeMap;

use hubble_format::pool::{self, Geometry, PoolWriter, SEALED};
use hubble_format::stream::Input;
use hubble_format::{Mode, ProcessHeader, RunFile, ThreadsFile, TimeAnchor};

/// One record a thread wrote (and the writer accepted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub tid: u32,
    /// The method entered, or None for an exit.
    pub method: Option<u64>,
    pub counter: u64,
    /// The block's address and the seq it was taken with.
    pub block: u64,
    pub seq: u32,
}

/// A record as the model keeps it: the method entered (None: an exit) and its counter.
pub type Rec = (Option<u64>, u64);

/// A run as the model expects it: consecutive seqs, their records in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedRun {
    pub first_seq: u32,
    pub last_seq: u32,
    /// Records of the thread lost before this run (overwritten or dropped).
    pub lost_before: bool,
    pub records: Vec<(Option<u64>, u64)>,
}

pub struct Scenario {
    pub mode: Mode,
    pub geometry: Geometry,
    pub base: u64,
    pub writer: PoolWriter,
    pub written: Vec<Written>,
    /// (tid, seq) of every record the pool dropped.
    pub drops: Vec<(u32, u32)>,
    /// Block address → (tid, seq) of its last take.
    pub owner: BTreeMap<u64, (u32, u32)>,
    pub names: BTreeMap<u32, String>,
    pub symbols: BTreeMap<u64, String>,
    /// Per thread: the anchor at the end of its runs.
    pub anchors: BTreeMap<u32, Vec<TimeAnchor>>,
    pub reference: u64,
    pub wall_clock_ns: u64,
    pub timer_hz: u64,
}

pub use hubble_testkit::Rng;

pub const MAIN: u32 = 100;
pub const WORKER: u32 = 200;
pub const LITTLE: u32 = 300;
/// Short-lived threads: started together, each takes a block, so the pool runs out and one of
/// them (and LITTLE) has a record dropped.
pub const SHORT: [u32; 6] = [401, 402, 403, 404, 405, 406];
/// Seeds the tests run (each a different mix; together they cover every shape).
pub const SEEDS: std::ops::Range<u64> = 0..48;

struct Driver {
    s: Scenario,
    counter: u64,
    next_seq: BTreeMap<u32, u32>,
    depth: BTreeMap<u32, u32>,
    methods: Vec<u64>,
    rng: Rng,
}

impl Driver {
    fn record(&mut self, tid: u32, method: Option<u64>) {
        // Steps of up to 2^25 ticks: consecutive records of a thread stay far below 2^32 ticks
        // apart (exact recovery), while the low halves wrap several times in a trace.
        self.counter += 1 + self.rng.below(1 << 25);
        let before = self.s.writer.words(tid).expect("started");
        let slow = before.cursor == SEALED || before.cursor >= before.limit;
        let ok = match method {
            Some(m) => self
                .s
                .writer
                .entry(tid, m, self.counter)
                .expect("valid method"),
            None => self.s.writer.exit(tid, self.counter),
        };
        let next = self.next_seq.entry(tid).or_insert(0);
        if !ok {
            self.s.drops.push((tid, *next));
            *next += 1;
            return;
        }
        let after = self.s.writer.words(tid).expect("started");
        let seq = if slow {
            let seq = *next;
            *next += 1;
            self.s.owner.insert(after.end, (tid, seq));
            seq
        } else {
            self.s.owner[&after.end].1
        };
        self.s.written.push(Written {
            tid,
            method,
            counter: self.counter,
            block: after.end,
            seq,
        });
    }

    /// A call-like record: an entry, or an exit when something is open.
    fn step(&mut self, tid: u32) {
        let depth = self.depth.entry(tid).or_insert(0);
        let exit = *depth > 0 && self.rng.below(2) == 0;
        if exit {
            *depth -= 1;
            self.record(tid, None);
        } else {
            *depth += 1;
            let m = self.methods[self.rng.below(self.methods.len() as u64) as usize];
            self.record(tid, Some(m));
        }
    }
}

/// The scenarios of every third seed in both modes, each with its file's run files: what the
/// writers' and the analyses' checks run on. Together they hold threads with two runs, dropped
/// records and lost oldest blocks (`format/tests/threads.rs` checks that the seeds cover them).
pub fn sampled() -> Vec<(Scenario, Vec<RunFile>)> {
    let mut out = Vec::new();
    for mode in [Mode::Bits64, Mode::Bits32] {
        for seed in SEEDS.step_by(3) {
            let s = build(mode, seed);
            let runs = s.file().into_run_files();
            out.push((s, runs));
        }
    }
    out
}

/// Run files as the writers' and the analyses' inputs.
pub fn inputs(runs: &[RunFile]) -> Vec<Input<'_>> {
    runs.iter()
        .map(|r| Input {
            file: &r.file,
            name: "v4",
        })
        .collect()
}

/// The scenario, varied by `seed`: MAIN writes often, WORKER less, LITTLE rarely (its blocks
/// are held long, so they outlive or lose to MAIN's); near the end a wave of short-lived
/// threads takes every block, so the last of them has records dropped (a seq gap before its
/// first run). Then every thread idles 2^33 ticks or more before the flush, as before an ANR:
/// each thread's anchor (the control thread saw its cursor still) bounds its newest record,
/// and an older run has only the next run's first counter to go by.
pub fn build(mode: Mode, seed: u64) -> Scenario {
    let geometry = Geometry {
        blocks: 8,
        block_slots: pool::BLOCK_HEADER_SLOTS + 6,
        active: 4,
    };
    let base = 0x10_0000;
    let mut methods = vec![0x7000_1000, 0x7000_1040, 0x7000_1080, 0x7000_10c0];
    if mode == Mode::Bits64 {
        methods.extend([0x7f_2000_0040, 0x7f_2000_0080]);
    }
    let mut symbols = BTreeMap::new();
    // 0x7000_10c0 stays unresolved: readers print its pointer.
    // 0x7000_1080 a task dispatcher and 0x7f_2000_0080 a scheduling call, for `hubble tasks`.
    for (m, name) in [
        (
            0x7000_1000u64,
            "void android.view.Choreographer.doFrame(long, int)",
        ),
        (0x7000_1040, "void com.example.Feed.bind(int)"),
        (
            0x7000_1080,
            "void android.os.Handler.dispatchMessage(android.os.Message)",
        ),
        (
            0x7f_2000_0040,
            "int com.example.Json.parse(java.lang.String)",
        ),
        (
            0x7f_2000_0080,
            "void java.util.concurrent.ThreadPoolExecutor.execute(java.lang.Runnable)",
        ),
    ] {
        symbols.insert(m, name.to_owned());
    }
    let names = BTreeMap::from([
        (MAIN, "main".to_owned()),
        (WORKER, "pool-1-thread-1".to_owned()),
        (LITTLE, "HeapTaskDaemon".to_owned()),
        (SHORT[5], "short-lived".to_owned()),
    ]);
    let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed);
    let rounds = 60 + rng.below(150);
    let little_every = 2 + rng.below(9);
    let worker_every = 1 + rng.below(4);
    let wave_at = rounds - 1 - rng.below(12);
    // Odd seeds flush at the first round after `rounds` at which a thread has lost a block
    // between two it kept (LITTLE's bursts seal blocks close together, and the pool may reuse
    // the newer one first); even seeds at `rounds`.
    let want_gap = seed % 2 == 1;
    let mut d = Driver {
        s: Scenario {
            mode,
            geometry,
            base,
            writer: PoolWriter::new(mode, geometry, base),
            written: Vec::new(),
            drops: Vec::new(),
            owner: BTreeMap::new(),
            names,
            symbols,
            anchors: BTreeMap::new(),
            reference: 0,
            wall_clock_ns: 1_764_000_000_000_000_000,
            timer_hz: 19_200_000,
        },
        // High bits set, so the low halves wrap during the trace.
        counter: (3 << 32) + 0xffff_0000,
        next_seq: BTreeMap::new(),
        depth: BTreeMap::new(),
        methods,
        rng,
    };
    for tid in [MAIN, WORKER, LITTLE] {
        d.s.writer.start_thread(tid);
    }
    for round in 0u64.. {
        if round >= rounds
            && (!want_gap
                || round >= rounds + 400
                || d.s.expected_runs().values().any(|r| r.len() >= 2))
        {
            break;
        }
        d.step(MAIN);
        if round % worker_every == 0 {
            d.step(WORKER);
        }
        if round % little_every == 0 {
            for _ in 0..1 + d.rng.below(8) {
                d.step(LITTLE);
            }
        }
        if round == wave_at {
            for tid in SHORT {
                d.s.writer.start_thread(tid);
                d.step(tid);
            }
            for tid in &SHORT[..5] {
                d.s.writer.thread_exit(*tid);
            }
            // The last one's first tries found every block owned; now the others' are sealed
            // and claimable a few tickets on.
            for _ in 0..3 {
                d.step(SHORT[5]);
            }
        }
    }
    let mut newest: BTreeMap<u32, u64> = BTreeMap::new();
    for w in &d.s.written {
        newest.insert(w.tid, w.counter);
    }
    for (tid, last) in newest {
        // The control thread's tick after the thread's last record (< 1 tick later).
        let bound = last + 1 + d.rng.below(1 << 20);
        d.s.anchors.insert(
            tid,
            vec![TimeAnchor {
                slots_after: 0,
                bound,
            }],
        );
    }
    d.counter += (1 << 33) + d.rng.below(1 << 33);
    d.s.reference = d.counter;
    d.s
}

impl Scenario {
    /// What the model says each thread's runs hold at the flush: the records whose block's
    /// last take is theirs, grouped by seq, cut where seq does not follow on.
    pub fn expected_runs(&self) -> BTreeMap<u32, Vec<ExpectedRun>> {
        let mut kept: BTreeMap<u32, BTreeMap<u32, Vec<Rec>>> = BTreeMap::new();
        for w in &self.written {
            if self.owner[&w.block] == (w.tid, w.seq) {
                kept.entry(w.tid)
                    .or_default()
                    .entry(w.seq)
                    .or_default()
                    .push((w.method, w.counter));
            }
        }
        kept.into_iter()
            .map(|(tid, by_seq)| {
                let mut runs: Vec<ExpectedRun> = Vec::new();
                for (seq, records) in by_seq {
                    match runs.last_mut() {
                        Some(r) if r.last_seq + 1 == seq => {
                            r.last_seq = seq;
                            r.records.extend(records);
                        }
                        _ => runs.push(ExpectedRun {
                            first_seq: seq,
                            last_seq: seq,
                            lost_before: seq != runs.last().map_or(0, |r| r.last_seq + 1),
                            records,
                        }),
                    }
                }
                (tid, runs)
            })
            .collect()
    }

    pub fn process_header(&self) -> ProcessHeader {
        ProcessHeader {
            mode: self.mode,
            timer_hz: self.timer_hz,
            reference_counter: self.reference,
            wall_clock_ns: self.wall_clock_ns,
            pid: 4242,
            process_name: "com.example.app".to_owned(),
            reason: "jank".to_owned(),
            metadata: BTreeMap::from([("device.model".to_owned(), "Pixel 8".to_owned())]),
        }
    }

    /// The v4 file a flush of this pool writes (the code under test: `thread_streams` and the
    /// v4 writer).
    pub fn file(&self) -> ThreadsFile {
        let streams =
            pool::thread_streams(&self.writer.snapshot(), self.geometry, self.base).unwrap();
        ThreadsFile::from_streams(
            self.process_header(),
            streams,
            &self.names,
            &self.anchors,
            self.symbols.clone(),
        )
    }

    /// The model's wall clock: the flush pair, ⌊ticks · 10⁹ / hz⌋ before or after it.
    pub fn wall_ns(&self, counter: u64) -> u64 {
        let hz = u128::from(self.timer_hz);
        if counter <= self.reference {
            self.wall_clock_ns - (u128::from(self.reference - counter) * 1_000_000_000 / hz) as u64
        } else {
            self.wall_clock_ns + (u128::from(counter - self.reference) * 1_000_000_000 / hz) as u64
        }
    }

    /// The name readers print for a method.
    pub fn name(&self, method: u64) -> String {
        self.symbols
            .get(&method)
            .cloned()
            .unwrap_or_else(|| format!("{method:#x}"))
    }
}

/// A step of a thread's balanced call stack, as the exports show it: a frame begins (its
/// method; None: entered before the run) or ends (the method it leaves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    Enter(Option<u64>),
    Exit(Option<u64>),
}

/// One step with its timer value, wall-clock ns and the run it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelStep {
    pub counter: u64,
    pub wall_ns: u64,
    pub run: usize,
    pub ev: Ev,
}

impl Scenario {
    /// Each thread's steps as the exports must show them, from the model's runs alone
    /// (`docs/trace-format.md` §5, version 4): in each run, the frames whose entries were lost
    /// (exits with nothing open) begin at the run's first record; frames still open end at the
    /// flush in the thread's newest run, at the run's newest record in an older one (before the
    /// thread's next run begins). Wall-clock time is the flush pair's
    /// `wall − ⌊(reference − c) · 10⁹ / hz⌋` in the newest run; an older run is placed through
    /// its newest record's counter L and that counter's wall time: `wall(L) − ⌊(L − c) · 10⁹ /
    /// hz⌋` (at most 1 ns after the flush pair's value).
    pub fn thread_steps(&self) -> BTreeMap<u32, Vec<ModelStep>> {
        let hz = u128::from(self.timer_hz);
        self.expected_runs()
            .into_iter()
            .map(|(tid, runs)| {
                let mut out = Vec::new();
                for (k, run) in runs.iter().enumerate() {
                    let newest = k + 1 == runs.len();
                    let last = run.records.last().expect("a run has records").1;
                    let wall = |c: u64| -> u64 {
                        if newest {
                            self.wall_ns(c)
                        } else {
                            self.wall_ns(last) - (u128::from(last - c) * 1_000_000_000 / hz) as u64
                        }
                    };
                    let mut depth = 0i64;
                    let mut lowest = 0i64;
                    for (m, _) in &run.records {
                        depth += if m.is_some() { 1 } else { -1 };
                        lowest = lowest.min(depth);
                    }
                    let first = run.records[0].1;
                    let mut stack: Vec<Option<u64>> = vec![None; (-lowest) as usize];
                    let step = |counter: u64, ev: Ev| ModelStep {
                        counter,
                        wall_ns: wall(counter),
                        run: k,
                        ev,
                    };
                    for _ in 0..stack.len() {
                        out.push(step(first, Ev::Enter(None)));
                    }
                    for &(m, c) in &run.records {
                        match m {
                            Some(m) => {
                                stack.push(Some(m));
                                out.push(step(c, Ev::Enter(Some(m))));
                            }
                            None => {
                                let left = stack.pop().expect("balanced by construction");
                                out.push(step(c, Ev::Exit(left)));
                            }
                        }
                    }
                    let end = if newest { self.reference } else { last };
                    while let Some(left) = stack.pop() {
                        out.push(step(end, Ev::Exit(left)));
                    }
                }
                (tid, out)
            })
            .collect()
    }

    /// The name exports give a frame.
    pub fn frame_name(&self, method: Option<u64>) -> String {
        match method {
            None => "<entered before the window>".to_owned(),
            Some(m) => self.name(m),
        }
    }

    /// The thread's name as the file has it.
    pub fn thread_name(&self, tid: u32) -> String {
        self.names.get(&tid).cloned().unwrap_or_default()
    }
}

/// A frame of the model's steps.
#[derive(Clone, Debug)]
pub struct ModelFrame {
    pub method: Option<u64>,
    pub start: u64,
    pub end: u64,
    pub run: usize,
    /// Methods of the open ancestors, outermost first.
    pub ancestors: Vec<Option<u64>>,
    /// (method, ticks) of the direct children, in the order they began.
    pub children: Vec<(Option<u64>, u64)>,
}

impl ModelFrame {
    pub fn ticks(&self) -> u64 {
        self.end - self.start
    }
    pub fn self_ticks(&self) -> u64 {
        self.ticks() - self.children.iter().map(|c| c.1).sum::<u64>()
    }
}

/// The frames of a thread's steps, in the order they began.
pub fn frames(steps: &[ModelStep]) -> Vec<ModelFrame> {
    let mut out: Vec<ModelFrame> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for s in steps {
        match s.ev {
            Ev::Enter(m) => {
                out.push(ModelFrame {
                    method: m,
                    start: s.counter,
                    end: s.counter,
                    run: s.run,
                    ancestors: open.iter().map(|&i| out[i].method).collect(),
                    children: Vec::new(),
                });
                open.push(out.len() - 1);
            }
            Ev::Exit(_) => {
                let i = open.pop().expect("balanced");
                out[i].end = s.counter;
                if let Some(&p) = open.last() {
                    let child = (out[i].method, out[i].ticks());
                    out[p].children.push(child);
                }
            }
        }
    }
    out
}
