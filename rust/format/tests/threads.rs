//! Version 4 (many threads): a real `PoolWriter` run through `thread_streams`, the v4 writer and
//! reader, each run decoded and compared with the test's own model of the pool; round trips;
//! every truncation and corruption an error, never a panic.

#[path = "common/pool_scenario.rs"]
mod scenario;

use std::collections::BTreeMap;

use hubble_format::file::{FileError, TraceFile, TraceHeader};
use hubble_format::{
    EventKind, Mode, ProcessHeader, Run, ThreadSection, ThreadsFile, TimeAnchor, Trace,
};
use proptest::prelude::*;
use scenario::{ExpectedRun, Scenario};

/// The decoded runs of `file`, per tid: (first seq, last seq, lost before, records).
fn decoded(file: &ThreadsFile) -> BTreeMap<u32, Vec<ExpectedRun>> {
    let mode = file.header.mode;
    let mut out: BTreeMap<u32, Vec<ExpectedRun>> = BTreeMap::new();
    for section in Trace::Threads(file.clone()).sections() {
        for run in &section.runs {
            let seq = run.seq.expect("v4 runs have seqs");
            let events = run.decode_events(mode).expect("run decodes").events;
            out.entry(section.tid).or_default().push(ExpectedRun {
                first_seq: seq.first,
                last_seq: seq.last,
                lost_before: seq.lost_before > 0,
                records: events
                    .iter()
                    .map(|e| match e.kind {
                        EventKind::Entry { method } => (Some(method), e.counter),
                        EventKind::Exit => (None, e.counter),
                        EventKind::Start => panic!("no start record was written"),
                        EventKind::Task { .. } => panic!("no task record was written"),
                    })
                    .collect(),
            });
        }
    }
    out
}

/// What the scenarios cover together: the shapes the issue asks about.
#[derive(Default, Debug)]
struct Coverage {
    /// A thread with two kept runs and overwritten blocks between them.
    two_runs: bool,
    /// A thread whose first kept run follows records the pool dropped.
    dropped_before: bool,
    /// A thread whose oldest blocks were overwritten.
    oldest_lost: bool,
}

impl Coverage {
    fn add(&mut self, s: &Scenario, want: &BTreeMap<u32, Vec<ExpectedRun>>) {
        assert!(want.len() >= 3, "threads in the pool: {}", want.len());
        self.two_runs |= want.values().any(|runs| runs.len() >= 2);
        for (tid, runs) in want {
            let dropped = s
                .drops
                .iter()
                .any(|&(t, seq)| t == *tid && seq < runs[0].first_seq);
            self.dropped_before |= dropped;
            self.oldest_lost |= !dropped && runs[0].first_seq > 0;
        }
    }
    fn check(&self) {
        assert!(
            self.two_runs && self.dropped_before && self.oldest_lost,
            "{self:?}"
        );
    }
}

#[test]
fn every_run_decodes_to_the_records_the_model_kept() {
    let mut coverage = Coverage::default();
    for mode in [Mode::Bits64, Mode::Bits32] {
        for seed in scenario::SEEDS {
            let s = scenario::build(mode, seed);
            let want = s.expected_runs();
            coverage.add(&s, &want);
            let file = s.file();
            assert_eq!(decoded(&file), want, "{mode:?} seed {seed}");
            // And after the file's bytes: the reader gives back what the writer was given.
            let back = ThreadsFile::parse(&file.to_bytes().unwrap()).unwrap();
            assert_eq!(back, file);
            for t in &file.threads {
                assert_eq!(
                    t.thread_name,
                    s.names.get(&t.tid).cloned().unwrap_or_default()
                );
            }
        }
    }
    coverage.check();
}

// The older runs' timestamps depend on the next run's first counter, the newest runs' on the
// anchor at the end: decoded from the flush's reference alone, some differ (every thread idled
// 2^33 ticks or more before the flush), so the test above can fail on a wrong time base.
#[test]
fn each_run_needs_its_own_bound() {
    let (mut older, mut newest) = (0, 0);
    for seed in scenario::SEEDS {
        let s = scenario::build(Mode::Bits64, seed);
        let file = s.file();
        let want = s.expected_runs();
        for section in Trace::Threads(file.clone()).sections() {
            let n = section.runs.len();
            for (k, run) in section.runs.iter().enumerate() {
                let mut wrong = run.clone();
                wrong.reference = file.header.reference_counter;
                wrong.anchors.clear();
                let got = wrong.decode_events(Mode::Bits64).map(|d| d.events);
                let good = &want[&section.tid][k].records;
                if got.map_or(true, |e| {
                    e.iter().map(|e| e.counter).ne(good.iter().map(|r| r.1))
                }) {
                    if k + 1 < n {
                        older += 1;
                    } else {
                        newest += 1;
                    }
                }
            }
        }
    }
    assert!(older > 0 && newest > 0, "older {older}, newest {newest}");
}

// Each run as a v3 window (what the exporters read): the same records and counters; an older
// run's reference is its newest record, on the flush's wall clock.
#[test]
fn run_files_are_the_runs_as_v3_windows() {
    for seed in scenario::SEEDS {
        run_files_of(&scenario::build(Mode::Bits64, seed));
    }
}

fn run_files_of(s: &Scenario) {
    let want = s.expected_runs();
    let runs = s.file().into_run_files();
    let mut at: BTreeMap<u32, usize> = BTreeMap::new();
    let mut named_runs = 0;
    for r in &runs {
        let tid = r.file.header.tid;
        let k = at.entry(tid).or_insert(0);
        let expected = &want[&tid][*k];
        assert_eq!(r.run, *k);
        assert_eq!(r.runs, want[&tid].len());
        *k += 1;
        let events = r.file.decode_events().unwrap().events;
        let got: Vec<(Option<u64>, u64)> = events
            .iter()
            .map(|e| match e.kind {
                EventKind::Entry { method } => (Some(method), e.counter),
                _ => (None, e.counter),
            })
            .collect();
        assert_eq!(got, expected.records, "tid {tid} run {}", r.run);
        let newest = r.run + 1 == r.runs;
        let h = &r.file.header;
        if newest {
            assert_eq!(h.reference_counter, s.reference);
            assert_eq!(h.wall_clock_ns, s.wall_clock_ns);
        } else {
            let last = expected.records.last().unwrap().1;
            assert_eq!(h.reference_counter, last);
            assert_eq!(h.wall_clock_ns, s.wall_ns(last));
        }
        // Exactly the symbols the run's entries name.
        let named: BTreeMap<u64, String> = expected
            .records
            .iter()
            .filter_map(|(m, _)| m.and_then(|m| Some((m, s.symbols.get(&m)?.clone()))))
            .collect();
        named_runs += usize::from(!named.is_empty());
        assert_eq!(r.file.symbols, named, "tid {tid} run {}", r.run);
        assert_eq!(h.pid, 4242);
        assert_eq!(h.process_name, "com.example.app");
    }
    assert_eq!(
        at.values().sum::<usize>(),
        want.values().map(Vec::len).sum()
    );
    assert!(
        named_runs > runs.len() / 2,
        "{named_runs} of {} runs name a method",
        runs.len()
    );
}

// Written atomically and read back from the path: the same file.
#[test]
fn atomic_write_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("1-9-anr.hubble");
    small().write_atomic(&path).unwrap();
    assert_eq!(Trace::read(&path).unwrap(), Trace::Threads(small()));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary file left");
}

// A v1–v3 file is one section with one run, through the same accessor.
#[test]
fn a_v3_file_is_one_section() {
    let mut ring = hubble_format::RingWriter::new(Mode::Bits64, 16);
    ring.start(5);
    ring.entry(0x7000_0010, 6).unwrap();
    ring.exit(8);
    let end = (ring.write_pos_bytes() / 8) as usize;
    let file = TraceFile {
        header: TraceHeader {
            mode: Mode::Bits64,
            timer_hz: 1000,
            reference_counter: 10,
            wall_clock_ns: 5,
            ring_bytes: 128,
            write_pos: ring.write_pos_bytes(),
            pid: 1,
            tid: 77,
            thread_name: "t".into(),
            process_name: "p".into(),
            reason: "r".into(),
            anchors: vec![TimeAnchor {
                slots_after: 0,
                bound: 9,
            }],
            metadata: BTreeMap::new(),
        },
        window: ring.slots()[..end].to_vec(),
        symbols: BTreeMap::new(),
    };
    let trace = Trace::parse(&file.to_bytes().unwrap()).unwrap();
    let sections = trace.sections();
    assert_eq!(sections.len(), 1);
    assert_eq!(sections[0].tid, 77);
    assert_eq!(sections[0].runs.len(), 1);
    let run = &sections[0].runs[0];
    assert_eq!(run.seq, None);
    assert_eq!(run.slots, &file.window[..]);
    assert_eq!(run.time_base(), file.header.time_base());
    assert_eq!(
        run.decode_events(Mode::Bits64).unwrap(),
        file.decode_events().unwrap()
    );
    assert_eq!(trace, Trace::Single(file));
}

// The reader of one window refuses a v4 file by name instead of misreading it.
#[test]
fn the_v3_reader_refuses_a_v4_file_clearly() {
    let bytes = small().to_bytes().unwrap();
    let err = TraceFile::parse(&bytes).unwrap_err();
    assert!(matches!(err, FileError::UnsupportedVersion(4)), "{err}");
    assert!(matches!(Trace::parse(&bytes), Ok(Trace::Threads(_))));
}

// Anchors are positions in a thread's runs laid end to end; each run gets those inside it,
// counted back from its own end (the record before position p is in the run that ends at or
// after p and starts before it).
#[test]
fn anchors_are_split_between_runs() {
    let mut f = small();
    // Thread 5's runs hold 2 and 3 slots: positions 0..5; anchors at 5 (end), 2 (end of run 0)
    // and 1 (inside run 0).
    f.threads[0].anchors = vec![
        TimeAnchor {
            slots_after: 0,
            bound: 900,
        },
        TimeAnchor {
            slots_after: 3,
            bound: 400,
        },
        TimeAnchor {
            slots_after: 4,
            bound: 300,
        },
    ];
    let back = ThreadsFile::parse(&f.to_bytes().unwrap()).unwrap();
    let sections = back.sections();
    let runs = &sections[0].runs;
    assert_eq!(
        runs[0].anchors,
        vec![
            TimeAnchor {
                slots_after: 0,
                bound: 400
            },
            TimeAnchor {
                slots_after: 1,
                bound: 300
            }
        ]
    );
    assert_eq!(
        runs[1].anchors,
        vec![TimeAnchor {
            slots_after: 0,
            bound: 900
        }]
    );
    // Run 0 ends before run 1's first block was taken (counter 500): its bound.
    assert_eq!(runs[0].reference, 500);
    assert_eq!(runs[1].reference, 1000);
    assert_eq!(runs[1].seq.unwrap().lost_before, 2);
    assert_eq!(runs[0].seq.unwrap().lost_before, 3);
}

/// Two threads, the first with two runs (seq 3..=3, then 6..=7): small enough to cut and flip
/// at every byte.
fn small() -> ThreadsFile {
    let slot = |hi: u32, lo: u32| (u64::from(hi) << 32) | u64::from(lo);
    ThreadsFile {
        header: ProcessHeader {
            mode: Mode::Bits64,
            timer_hz: 19_200_000,
            reference_counter: 1000,
            wall_clock_ns: 1_700_000_000_000_000_000,
            pid: 9,
            process_name: "com.example".into(),
            reason: "anr".into(),
            metadata: BTreeMap::from([("android.sdk".to_owned(), "34".to_owned())]),
        },
        symbols: BTreeMap::from([(0x7000_0010, "void a.B.c()".to_owned())]),
        threads: vec![
            ThreadSection {
                tid: 5,
                thread_name: "main".into(),
                anchors: vec![TimeAnchor {
                    slots_after: 0,
                    bound: 990,
                }],
                runs: vec![
                    Run {
                        first_seq: 3,
                        blocks: 1,
                        first_ticket: 10,
                        first_counter: 100,
                        slots: vec![slot(100, 0x7000_0010), slot(150, 0)],
                    },
                    Run {
                        first_seq: 6,
                        blocks: 2,
                        first_ticket: 20,
                        first_counter: 500,
                        slots: vec![slot(500, 0x7000_0010), slot(600, 0x7000_0010), slot(700, 0)],
                    },
                ],
            },
            ThreadSection {
                tid: 8,
                thread_name: "worker".into(),
                anchors: vec![],
                runs: vec![Run {
                    first_seq: 0,
                    blocks: 1,
                    first_ticket: 11,
                    first_counter: 200,
                    slots: vec![slot(200, 0x7000_0010)],
                }],
            },
        ],
    }
}

#[test]
fn every_truncation_is_reported_as_such() {
    let bytes = small().to_bytes().unwrap();
    for len in 0..bytes.len() {
        match Trace::parse(&bytes[..len]) {
            Err(FileError::Truncated { .. }) => {}
            other => panic!("length {len}: expected Truncated, got {other:?}"),
        }
    }
}

#[test]
fn every_single_bit_flip_is_detected() {
    let bytes = small().to_bytes().unwrap();
    for i in 0..bytes.len() {
        for bit in 0..8 {
            let mut bad = bytes.clone();
            bad[i] ^= 1 << bit;
            assert!(
                Trace::parse(&bad).is_err(),
                "flip of bit {bit} in byte {i} went unnoticed"
            );
        }
    }
}

/// `bytes` with a CRC that matches again, so the checks after the checksum are reached.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.truncate(bytes.len() - 4);
    let crc = crc32fast_hash(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes
}

fn crc32fast_hash(bytes: &[u8]) -> u32 {
    // CRC-32 (IEEE), bitwise: independent of the crate the writer uses.
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

// What the writer refuses, the reader refuses too, each with an error that names it.
#[test]
fn broken_invariants_are_named() {
    type Break = Box<dyn Fn(&mut ThreadsFile)>;
    let cases: Vec<(&str, Break)> = vec![
        ("thread sections", Box::new(|f| f.threads[1].tid = 5)),
        ("run", Box::new(|f| f.threads[0].runs[1].first_ticket = 10)),
        ("run", Box::new(|f| f.threads[0].runs[1].first_seq = 4)),
        ("run", Box::new(|f| f.threads[0].runs[0].blocks = 0)),
        ("thread section", Box::new(|f| f.threads[1].runs.clear())),
        (
            "anchor",
            Box::new(|f| f.threads[0].anchors[0].slots_after = 6),
        ),
        ("timer frequency", Box::new(|f| f.header.timer_hz = 0)),
    ];
    for (field, break_it) in cases {
        let mut f = small();
        break_it(&mut f);
        match f.to_bytes() {
            Err(FileError::Invalid { field: got, .. }) => assert_eq!(got, field),
            other => panic!("{field}: writer gave {other:?}"),
        }
        // The same file written without the writer's checks: the reader must refuse it.
        let raw = raw_bytes(&f);
        match ThreadsFile::parse(&raw) {
            Err(FileError::Invalid { field: got, .. }) => assert_eq!(got, field),
            other => panic!("{field}: reader gave {other:?}"),
        }
    }
}

/// Serializes `f` like the writer, without its checks: the layout rebuilt here from the format
/// description (`docs/trace-format.md`; `the_tests_layout_is_the_writers` holds it to the
/// writer's bytes for a valid file).
fn raw_bytes(f: &ThreadsFile) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u16).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    let h = &f.header;
    let mut out = Vec::new();
    out.extend_from_slice(b"HUBBLTRC");
    out.extend_from_slice(&4u16.to_le_bytes());
    out.push(64);
    out.push(h.metadata.len() as u8);
    out.extend_from_slice(&(f.threads.len() as u32).to_le_bytes());
    for v in [h.timer_hz, h.reference_counter, h.wall_clock_ns] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&h.pid.to_le_bytes());
    out.extend_from_slice(&(f.symbols.len() as u32).to_le_bytes());
    string(&mut out, &h.process_name);
    string(&mut out, &h.reason);
    for (p, n) in &f.symbols {
        out.extend_from_slice(&p.to_le_bytes());
        string(&mut out, n);
    }
    for (k, v) in &h.metadata {
        string(&mut out, k);
        string(&mut out, v);
    }
    for t in &f.threads {
        out.extend_from_slice(&t.tid.to_le_bytes());
        out.extend_from_slice(&(t.runs.len() as u32).to_le_bytes());
        out.extend_from_slice(&(t.anchors.len() as u32).to_le_bytes());
        string(&mut out, &t.thread_name);
        for a in &t.anchors {
            out.extend_from_slice(&a.slots_after.to_le_bytes());
            out.extend_from_slice(&a.bound.to_le_bytes());
        }
        for r in &t.runs {
            out.extend_from_slice(&r.first_seq.to_le_bytes());
            out.extend_from_slice(&r.blocks.to_le_bytes());
            out.extend_from_slice(&r.first_ticket.to_le_bytes());
            out.extend_from_slice(&r.first_counter.to_le_bytes());
            out.extend_from_slice(&(r.slots.len() as u64).to_le_bytes());
            for s in &r.slots {
                out.extend_from_slice(&s.to_le_bytes());
            }
        }
    }
    out.extend_from_slice(&[0; 4]);
    resealed(out)
}

/// A run of no slots (its one block's records all overwritten by later takes is impossible, but
/// the format allows it): the smallest run the reader must accept.
fn empty_run(first_seq: u32, first_ticket: u64) -> Run {
    Run {
        first_seq,
        blocks: 1,
        first_ticket,
        first_counter: 100,
        slots: vec![],
    }
}

fn empty_section(tid: u32, runs: Vec<Run>) -> ThreadSection {
    ThreadSection {
        tid,
        thread_name: String::new(),
        anchors: vec![],
        runs,
    }
}

/// Where the reader says a cut file ends, if it says so.
fn cut_at(bytes: &[u8]) -> Option<&'static str> {
    match ThreadsFile::parse(bytes) {
        Err(FileError::Truncated { what }) => Some(what),
        _ => None,
    }
}

/// Files where a count's items are as small as the format allows and end right before the
/// checksum, so each count is exactly what the rest of the file can hold: 30 symbols of empty
/// names (10 bytes each), 30 sections of one empty run and an empty name (46 bytes each), 30
/// empty runs (32 bytes each).
fn tight_files() -> Vec<(&'static str, ThreadsFile)> {
    let mut symbols = small();
    symbols.threads.clear();
    symbols.header.metadata.clear();
    symbols.symbols = (0..30)
        .map(|i| (0x7000_0000 + 8 * i, String::new()))
        .collect();
    let mut sections = small();
    sections.threads = (0..30)
        .map(|t| empty_section(t, vec![empty_run(0, 1)]))
        .collect();
    let mut runs = small();
    runs.threads = vec![empty_section(
        1,
        (0..30)
            .map(|k| empty_run(2 * k, u64::from(k) + 1))
            .collect(),
    )];
    vec![("symbols", symbols), ("sections", sections), ("runs", runs)]
}

#[test]
fn counts_that_the_rest_of_the_file_holds_exactly_are_read() {
    for (what, f) in tight_files() {
        let bytes = f.to_bytes().unwrap();
        assert_eq!(ThreadsFile::parse(&bytes).unwrap(), f, "{what}");
    }
}

/// The count of each tight file one more than its items: the rest of the file cannot hold
/// it, which the reader says at the count, before reading any item.
#[test]
fn a_count_the_rest_of_the_file_cannot_hold_is_reported_at_the_count() {
    let files = tight_files();
    // (file, offset of its u32 count, what the reader must say)
    let header = |f: &ThreadsFile| 48 + 2 + f.header.process_name.len() + 2 + f.header.reason.len();
    let symbols = &files[0].1;
    let sections = &files[1].1;
    let metadata: usize = sections
        .header
        .metadata
        .iter()
        .map(|(k, v)| 4 + k.len() + v.len())
        .sum();
    let symbol_table: usize = sections.symbols.values().map(|n| 10 + n.len()).sum();
    let runs = &files[2].1;
    // The run count of the only section, right after its tid.
    let run_count_at = header(runs) + symbol_table + metadata + 4;
    let cases: [(&ThreadsFile, usize, &str); 3] = [
        (symbols, 44, "the symbol table"),
        (sections, 12, "the thread sections"),
        (runs, run_count_at, "a thread's runs"),
    ];
    for (f, at, what) in cases {
        let mut bytes = f.to_bytes().unwrap();
        let count = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!(count, 30, "{what}: the count at {at}");
        bytes[at..at + 4].copy_from_slice(&31u32.to_le_bytes());
        assert_eq!(cut_at(&bytes), Some(what), "31 where 30 fit");
    }
    // The last run's slot count (its last field, before the checksum), from one slot too many
    // to counts whose byte length overflows.
    let tight = runs.to_bytes().unwrap();
    let at = tight.len() - 4 - 8;
    for count in [1, 1 << 61, u64::MAX] {
        let mut bytes = tight.clone();
        bytes[at..at + 8].copy_from_slice(&count.to_le_bytes());
        assert_eq!(cut_at(&bytes), Some("a run's slots"), "{count} slots");
    }
    // An anchor count far beyond the bytes left (16 each) is refused at the count too.
    let mut bytes = small().to_bytes().unwrap();
    let anchors_at = header(&small()) + 10 + "void a.B.c()".len() + 4 + 11 + 2 + 8;
    assert_eq!(bytes[anchors_at..anchors_at + 4], 1u32.to_le_bytes());
    bytes[anchors_at..anchors_at + 4].copy_from_slice(&1000u32.to_le_bytes());
    assert_eq!(cut_at(&bytes), Some("a thread's anchors"));
}

#[test]
fn a_cut_in_the_fixed_header_is_named() {
    let bytes = small().to_bytes().unwrap();
    for len in 0..48 {
        let what = if len < 8 { "the magic" } else { "the header" };
        assert_eq!(cut_at(&bytes[..len]), Some(what), "{len} bytes");
    }
}

#[test]
fn metadata_up_to_its_limit_in_increasing_keys() {
    let limit = hubble_format::file::MAX_METADATA;
    let mut f = small();
    f.header.metadata = (0..limit)
        .map(|i| (format!("k{i:02}"), format!("{i}")))
        .collect();
    let bytes = f.to_bytes().unwrap();
    assert_eq!(ThreadsFile::parse(&bytes).unwrap(), f);
    // One more, written without the writer's check.
    f.header.metadata.insert("z".into(), "1".into());
    match ThreadsFile::parse(&raw_bytes(&f)) {
        Err(FileError::Invalid { field, .. }) => assert_eq!(field, "metadata count"),
        other => panic!("{} metadata: {other:?}", limit + 1),
    }
    // Keys out of order, or twice: the two entries of `a` and `b` swapped, then `a` twice.
    let mut f = small();
    f.header.metadata = BTreeMap::from([("a".into(), "1".into()), ("b".into(), "2".into())]);
    let bytes = raw_bytes(&f);
    let (a, b) = (b"\x01\x00a\x01\x001", b"\x01\x00b\x01\x002");
    let at = bytes
        .windows(12)
        .position(|w| w[..6] == a[..] && w[6..] == b[..])
        .unwrap();
    for second in [a, b] {
        let mut bad = bytes.clone();
        bad[at..at + 6].copy_from_slice(b);
        bad[at + 6..at + 12].copy_from_slice(second);
        if second == b {
            bad[at + 6..at + 12].copy_from_slice(a);
        }
        match ThreadsFile::parse(&resealed(bad)) {
            Err(FileError::Invalid { field, .. }) => assert_eq!(field, "metadata"),
            other => panic!("keys b, {}: {other:?}", second[2] as char),
        }
    }
}

/// Names and the reason up to `MAX_STRING` (4 096 bytes) are written and read back; a byte more
/// is refused by the writer, naming the field.
#[test]
fn every_string_up_to_its_limit() {
    let limit = hubble_format::file::MAX_STRING;
    type Set = fn(&mut ThreadsFile, String);
    let fields: [(&str, Set); 3] = [
        ("process name", |f, s| f.header.process_name = s),
        ("trigger reason", |f, s| f.header.reason = s),
        ("thread name", |f, s| f.threads[1].thread_name = s),
    ];
    for (field, set) in fields {
        let mut f = small();
        set(&mut f, "n".repeat(limit));
        assert_eq!(
            ThreadsFile::parse(&f.to_bytes().unwrap()).unwrap(),
            f,
            "{field}"
        );
        set(&mut f, "n".repeat(limit + 1));
        match f.to_bytes() {
            Err(FileError::Invalid { field: got, .. }) => assert_eq!(got, field),
            other => panic!("{field} of {} bytes: {other:?}", limit + 1),
        }
    }
}

/// An older run's clock, as `into_run_files` gives it to the one-window tools: the newest
/// record's full counter is the latest one with its low half at or before the next run's first
/// counter, or before the bound of an anchor at the run's end when there is one. An anchor at
/// position 0 (before every record) goes with the first run only. Each run file's ring is its
/// run's slots.
#[test]
fn an_older_run_is_dated_by_the_next_run_and_its_end_anchor() {
    let exit_at = |counter: u64| (counter & 0xffff_ffff) << 32;
    let clamp = (1u64 << 32) + 5;
    let f = ThreadsFile {
        header: ProcessHeader {
            reference_counter: (2 << 32) + 1000,
            ..small().header
        },
        symbols: BTreeMap::new(),
        threads: vec![ThreadSection {
            tid: 5,
            thread_name: "main".into(),
            anchors: vec![
                // At the end of run 0 (one slot before the thread's end).
                TimeAnchor {
                    slots_after: 1,
                    bound: clamp,
                },
                // Before every record: bounds nothing.
                TimeAnchor {
                    slots_after: 2,
                    bound: 0xffff_ff00,
                },
            ],
            runs: vec![
                Run {
                    first_seq: 0,
                    blocks: 1,
                    first_ticket: 1,
                    first_counter: 0xffff_ff00,
                    slots: vec![exit_at(0xffff_fff0)],
                },
                Run {
                    first_seq: 5,
                    blocks: 1,
                    first_ticket: 9,
                    first_counter: (2 << 32) + 10,
                    slots: vec![exit_at((2 << 32) + 20)],
                },
            ],
        }],
    };
    let bytes = f.to_bytes().unwrap();
    let f = ThreadsFile::parse(&bytes).unwrap();
    let sections = f.sections();
    let runs = &sections[0].runs;
    let anchor = |slots_after, bound| TimeAnchor { slots_after, bound };
    assert_eq!(
        runs[0].anchors,
        vec![anchor(0, clamp), anchor(1, 0xffff_ff00)]
    );
    assert_eq!(runs[1].anchors, vec![]);
    let files = f.into_run_files();
    // The latest counter at or before 2^32 + 5 whose low half is 0xffff_fff0 (without the
    // anchor: before the next run's 2^33 + 10, so 2^32 + 0xffff_fff0).
    assert_eq!(files[0].file.header.reference_counter, 0xffff_fff0);
    // 2^32 + 1016 ticks before the flush at 19.2 MHz: ⌊(2^32 + 1016) · 10^9 / 19.2e6⌋ =
    // 223 696 266 250 ns before its wall clock; the newest run keeps the flush's pair.
    assert_eq!(
        files[0].file.header.wall_clock_ns,
        1_700_000_000_000_000_000 - 223_696_266_250
    );
    assert_eq!(
        files[1].file.header.wall_clock_ns,
        1_700_000_000_000_000_000
    );
    assert_eq!(files[1].file.header.reference_counter, (2 << 32) + 1000);
    for r in &files {
        assert_eq!(r.file.header.ring_bytes, 8);
        assert_eq!(r.file.header.write_pos, 8);
    }
}

#[test]
fn bytes_after_the_checksum_are_counted() {
    let mut bytes = small().to_bytes().unwrap();
    bytes.extend_from_slice(&[0; 3]);
    assert!(matches!(
        ThreadsFile::parse(&bytes),
        Err(FileError::TrailingBytes(3))
    ));
}

#[test]
fn the_tests_layout_is_the_writers() {
    let f = small();
    assert_eq!(raw_bytes(&f), f.to_bytes().unwrap());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    // Any bytes changed anywhere (and the file cut anywhere): an error or a valid file, never a
    // panic; with the checksum resealed, the checks after it are reached too.
    #[test]
    fn mutations_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        reseal in any::<bool>(),
    ) {
        let mut bytes = small().to_bytes().unwrap();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        if reseal {
            bytes = resealed(bytes);
        }
        let _ = Trace::parse(&bytes);
        let n = cut.index(bytes.len());
        prop_assert!(Trace::parse(&bytes[..n]).is_err());
        if let Ok(Trace::Threads(f)) = Trace::parse(&bytes) {
            // Whatever parses is what a writer could have written, and reads back the same.
            prop_assert_eq!(ThreadsFile::parse(&f.to_bytes().unwrap()).unwrap(), f.clone());
            for r in f.into_run_files() {
                let _ = r.file.decode_events();
            }
        }
    }
}
