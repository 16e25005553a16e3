//! Property tests: random call streams → ring of random size → decode → what is still in the
//! window, compared against an oracle that knows nothing of the decoder.
//!
//! The oracle: every slot ever written forms a tape (records and pads); lap k of the ring holds
//! tape slots k·n..(k+1)·n, so the ring holds the last n tape slots. In 64-bit mode a record
//! never starts at ring index n−1: a pad goes there. The window is the longest suffix of whole
//! records on the tape that lies in the last n slots and does not reach past a start record.

use hubble_format::slot::{Mode, TaskKind};
use hubble_format::{
    build_tree, decode, decode_events, EventKind, Record, RingWriter, TreeOptions, WindowStart,
};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug)]
enum Step {
    Enter(u64),
    Exit,
    /// A task record (two slots in both modes), as the entry before it would write.
    Task(TaskKind, u32, u32),
}

/// A call stream: steps plus the full timer value of each.
#[derive(Clone, Debug)]
struct Stream {
    steps: Vec<(Step, u64)>,
}

fn method_strategy(mode: Mode) -> BoxedStrategy<u64> {
    // From 8: the low word's values 0-7 are control values.
    let low = (2u64..0x4000_0000).prop_map(|m| m * 4);
    match mode {
        Mode::Bits32 => low.boxed(),
        Mode::Bits64 => prop_oneof![low, (1u64 << 30..1u64 << 45).prop_map(|m| m * 8)].boxed(),
    }
}

fn stream_strategy(mode: Mode) -> impl Strategy<Value = Stream> {
    let gap = prop_oneof![
        8 => 0u64..2_000,
        1 => 0u64..(1u64 << 32), // far apart, still under the 2^32 limit
    ];
    let methods = proptest::collection::vec(method_strategy(mode), 1..40);
    (
        methods,
        proptest::collection::vec(
            (0u8..10, gap, any::<prop::sample::Index>(), 0u32..1 << 28),
            0..1500,
        ),
        any::<u64>(),
    )
        .prop_map(|(methods, raw, start)| {
            // Start anywhere, including just below a 2^32 boundary, but far from u64 overflow.
            let mut t = start >> 2;
            let mut depth = 0usize;
            let mut steps = Vec::new();
            for (choice, gap, index, id) in raw {
                t += gap;
                // After an entry, now and then the task record its method would write.
                if matches!(steps.last(), Some((Step::Enter(_), _))) && choice == 9 {
                    let kind = TaskKind::ALL[(id & 3) as usize];
                    steps.push((Step::Task(kind, id, id.rotate_left(7) >> 4), t));
                    continue;
                }
                // Deep recursion (up to ~60), bursts of exits model exceptions unwinding.
                if depth > 0 && (choice < 4 || depth > 60) {
                    let burst = if choice == 0 { depth.min(5) } else { 1 };
                    for _ in 0..burst {
                        steps.push((Step::Exit, t));
                        depth -= 1;
                    }
                } else {
                    steps.push((Step::Enter(methods[index.index(methods.len())]), t));
                    depth += 1;
                }
            }
            Stream { steps }
        })
}

/// Tape oracle: (record, first tape slot, slots) for every record, with pads placed per the rule.
fn oracle_window(
    mode: Mode,
    n: usize,
    stream: &Stream,
    start_ts: u64,
) -> (Vec<(Record, u64)>, bool) {
    let mut tape_len = 0usize;
    let mut placed: Vec<(Record, u64, usize, usize)> = Vec::new();
    let mut place = |record: Record, full: u64, width: usize| {
        // A two-slot record never starts at the ring's last slot (nor, in 64-bit mode, any).
        if (mode == Mode::Bits64 || width == 2) && tape_len % n == n - 1 {
            tape_len += 1; // pad
        }
        placed.push((record, full, tape_len, width));
        tape_len += width;
    };
    place(
        Record::Start {
            ts: start_ts as u32,
        },
        start_ts,
        1,
    );
    for &(step, t) in &stream.steps {
        match step {
            Step::Enter(method) => {
                let width = if method >> 32 == 0 { 1 } else { 2 };
                place(
                    Record::Entry {
                        method,
                        ts: t as u32,
                    },
                    t,
                    width,
                );
            }
            Step::Exit => place(Record::Exit { ts: t as u32 }, t, 1),
            Step::Task(kind, task, queue) => place(
                Record::Task {
                    kind,
                    task,
                    queue,
                    ts: t as u32,
                },
                t,
                2,
            ),
        }
    }
    let oldest_in_ring = tape_len.saturating_sub(n);
    let mut window = Vec::new();
    let mut dropped_half = false;
    for &(record, full, first, width) in placed.iter().rev() {
        if first < oldest_in_ring {
            // Partly overwritten: only a two-slot record can be cut, and only its first slot.
            dropped_half = width == 2 && first + 1 >= oldest_in_ring;
            break;
        }
        window.push((record, full));
        if matches!(record, Record::Start { .. }) {
            break;
        }
    }
    window.reverse();
    (window, dropped_half)
}

fn write_ring(mode: Mode, n: usize, stream: &Stream, start_ts: u64) -> RingWriter {
    let mut ring = RingWriter::new(mode, n);
    ring.start(start_ts as u32);
    for &(step, t) in &stream.steps {
        match step {
            Step::Enter(method) => ring.entry(method, t as u32).unwrap(),
            Step::Exit => ring.exit(t as u32),
            Step::Task(kind, task, queue) => ring.task(kind, task, queue, t as u32).unwrap(),
        }
    }
    ring
}

fn check(mode: Mode, n: usize, stream: Stream) -> Result<(), TestCaseError> {
    let start_ts = stream.steps.first().map_or(1000, |s| s.1.saturating_sub(1));
    let ring = write_ring(mode, n, &stream, start_ts);
    let (expected, expected_half) = oracle_window(mode, n, &stream, start_ts);

    let window = decode(&ring.view(), mode).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let expected_records: Vec<Record> = expected.iter().map(|e| e.0).collect();
    prop_assert_eq!(&window.records, &expected_records);
    prop_assert_eq!(window.dropped_half_record, expected_half);
    prop_assert_eq!(
        window.start == WindowStart::StartRecord,
        matches!(expected.first(), Some((Record::Start { .. }, _)))
    );

    // Timestamps: exact from a reference taken a little after the last point.
    let reference = stream.steps.last().map_or(start_ts, |s| s.1) + 17;
    let decoded = decode_events(&ring.view(), mode, reference)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let forwards: Vec<_> = hubble_format::EventIter::new(&ring.view(), mode, reference)
        .map_err(|e| TestCaseError::fail(e.to_string()))?
        .collect();
    // The forward iterator yields method events only.
    let methods: Vec<_> = decoded
        .events
        .iter()
        .filter(|e| !matches!(e.kind, EventKind::Task { .. }))
        .copied()
        .collect();
    prop_assert_eq!(&forwards, &methods);
    let counters: Vec<u64> = decoded.events.iter().map(|e| e.counter).collect();
    let expected_counters: Vec<u64> = expected.iter().map(|e| e.1).collect();
    prop_assert_eq!(counters, expected_counters);

    // Call tree: LIFO matching; every frame whose entry and exit are both in the window keeps
    // its exact method and times; frames cut at the start carry no method.
    let tree = build_tree(&decoded.events, reference, TreeOptions::default());
    let entries = decoded
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Entry { .. }))
        .count();
    let early = tree
        .frames
        .iter()
        .filter(|f| f.begins_before_window)
        .count();
    prop_assert_eq!(tree.frames.len(), entries + early);
    let mut stack = Vec::new();
    let mut complete = Vec::new();
    for e in &decoded.events {
        match e.kind {
            EventKind::Entry { method } => stack.push((method, e.counter)),
            EventKind::Exit => {
                if let Some((m, s)) = stack.pop() {
                    complete.push((m, s, e.counter));
                }
            }
            EventKind::Start | EventKind::Task { .. } => {}
        }
    }
    for (m, s, end) in complete {
        prop_assert!(tree
            .frames
            .iter()
            .any(|f| f.method == Some(m) && f.start == s && f.end == end && !f.open_at_end));
    }
    for f in &tree.frames {
        if let Some(p) = f.parent {
            let parent = &tree.frames[p as usize];
            prop_assert!(parent.start <= f.start && f.end <= parent.end);
            prop_assert_eq!(parent.depth + 1, f.depth);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]


    #[test]
    fn roundtrip_64(n in 2usize..300, stream in stream_strategy(Mode::Bits64)) {
        check(Mode::Bits64, n, stream)?;
    }

    #[test]
    fn roundtrip_32(n in 2usize..300, stream in stream_strategy(Mode::Bits32)) {
        check(Mode::Bits32, n, stream)?;
    }

    #[test]
    fn any_ring_bytes_decode_without_panic(
        slots in proptest::collection::vec(
            prop_oneof![
                any::<u64>(),
                (any::<u32>(), 0u32..9).prop_map(|(hi, lo)| hubble_format::slot::pack(hi, lo)),
                (1u64..64).prop_map(|p| p << 32),
            ],
            1..64,
        ),
        wp in any::<prop::sample::Index>(),
        valid in any::<prop::sample::Index>(),
        reference in any::<u64>(),
        wide in any::<bool>(),
    ) {
        let n = slots.len();
        let wp = (wp.index(n + 1) * 8) as u64;
        let valid = (valid.index(n + 1) * 8) as u64;
        let view = hubble_format::RingView::new(&slots, wp, Some(valid)).unwrap();
        let mode = if wide { Mode::Bits64 } else { Mode::Bits32 };
        if let Ok(d) = decode_events(&view, mode, reference) {
            prop_assert!(d.events.len() <= n);
            let back = hubble_format::ring::decode(&view, mode).unwrap();
            prop_assert_eq!(d.events.len(), back.records.len());
            let counters = hubble_format::recover_timestamps(&back.records, reference).unwrap();
            for ((event, record), counter) in d.events.iter().zip(&back.records).zip(counters) {
                prop_assert_eq!(event.counter, counter);
                let same = match (event.kind, record) {
                    (EventKind::Entry { method }, Record::Entry { method: m, .. }) => method == *m,
                    (EventKind::Exit, Record::Exit { .. }) => true,
                    (EventKind::Start, Record::Start { .. }) => true,
                    (
                        EventKind::Task { kind, task, queue },
                        Record::Task { kind: k, task: t, queue: q, .. },
                    ) => (kind, task, queue) == (*k, *t, *q),
                    _ => false,
                };
                prop_assert!(same, "forward {:?} vs backward {:?}", event, record);
            }
            let _ = build_tree(&d.events, reference, TreeOptions { max_depth: 8 });
        }
    }
}

#[test]
fn depth_limit_counts_instead_of_storing() {
    let mut ring = RingWriter::new(Mode::Bits64, 1 << 16);
    ring.start(0);
    for i in 0..10_000u32 {
        ring.entry(0x1000, i + 1).unwrap();
    }
    let d = decode_events(&ring.view(), Mode::Bits64, 20_000).unwrap();
    let tree = build_tree(&d.events, 20_000, TreeOptions { max_depth: 100 });
    assert_eq!(tree.frames.len(), 100);
    assert_eq!(tree.dropped_deep_frames, 9_900);
    assert!(tree.frames.iter().all(|f| f.open_at_end && f.end == 20_000));
}

#[test]
fn exits_before_the_window_become_enclosing_frames() {
    // The window holds "exit, entry m, exit, exit": two frames began before it.
    let mut ring = RingWriter::new(Mode::Bits32, 4);
    ring.exit(10);
    ring.entry(0x40, 20).unwrap();
    ring.exit(30);
    ring.exit(40);
    let d = decode_events(&ring.view(), Mode::Bits32, 50).unwrap();
    let tree = build_tree(&d.events, 50, TreeOptions::default());
    let shape: Vec<_> = tree
        .frames
        .iter()
        .map(|f| (f.method, f.depth, f.start, f.end))
        .collect();
    assert_eq!(
        shape,
        vec![
            (None, 0, 10, 40),
            (None, 1, 10, 10),
            (Some(0x40), 1, 20, 30)
        ]
    );
}

/// A reference earlier than the records: both decoders fail, naming the same record (oldest
/// first), the first one whose timestamp would be before timer zero.
#[test]
fn reference_before_the_records_is_the_same_error_both_ways() {
    let mut ring = hubble_format::RingWriter::new(Mode::Bits64, 16);
    ring.start(9);
    ring.entry(0x7000_0010, 10).unwrap();
    ring.entry(0x7f_0000_0020, 3).unwrap();
    ring.exit(1);
    ring.exit(2);
    let want = hubble_format::EventsError::Time(hubble_format::TimeError::BeforeZero { index: 2 });
    assert_eq!(
        decode_events(&ring.view(), Mode::Bits64, 5).unwrap_err(),
        want
    );
    assert_eq!(
        hubble_format::EventIter::new(&ring.view(), Mode::Bits64, 5).err(),
        Some(want)
    );
}
