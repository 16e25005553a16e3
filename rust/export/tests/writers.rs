//! The writers against the format crate's own decoder and call tree.

use std::collections::BTreeMap;

use hubble_export::Input;
use hubble_format::ring::decode;
use hubble_format::stream::{prepare, Merged, Step, BATCH};
use hubble_format::{build_tree, Mode, RingWriter, TraceFile, TraceHeader, TreeOptions};
use hubble_testkit::synth::{inputs, trace, Spec};

/// One thread's call stream written by hand: `Some(method)` enters, `None` exits, each at its
/// counter (a 1 GHz timer, so counters are nanoseconds); the ring holds `ring_slots` slots and
/// the flush comes one tick after the last record. Every file made with the same `reference`
/// and `wall` puts equal counters at equal wall-clock times.
fn hand_file(
    events: &[(u64, Option<u64>)],
    ring_slots: usize,
    tid: u32,
    reference: u64,
) -> TraceFile {
    let mut ring = RingWriter::new(Mode::Bits64, ring_slots);
    ring.start(events[0].0 as u32);
    for &(t, m) in events {
        match m {
            Some(m) => ring.entry(m, t as u32).unwrap(),
            None => ring.exit(t as u32),
        }
    }
    let view = ring.view();
    let window = decode(&view, Mode::Bits64).unwrap();
    let (older, newer) = view.pieces();
    let linear: Vec<u64> = older.iter().chain(newer).copied().collect();
    let symbols: BTreeMap<u64, String> = events
        .iter()
        .filter_map(|e| e.1)
        .map(|m| (m, format!("void M.m{m:x}()")))
        .collect();
    TraceFile {
        header: TraceHeader {
            mode: Mode::Bits64,
            timer_hz: 1_000_000_000,
            reference_counter: reference,
            wall_clock_ns: 1_700_000_000_000_000_000,
            ring_bytes: (ring_slots * 8) as u64,
            write_pos: ring.write_pos_bytes(),
            pid: 1,
            tid,
            thread_name: format!("t{tid}"),
            process_name: "p".into(),
            reason: "hand".into(),
            anchors: Vec::new(),
            metadata: BTreeMap::new(),
        },
        window: linear[linear.len() - window.slots_used..].to_vec(),
        symbols,
    }
}

fn specs() -> Vec<Spec> {
    let mut out = Vec::new();
    for (i, (mode, laps)) in [
        (Mode::Bits64, 1.7),
        (Mode::Bits64, 0.6),
        (Mode::Bits32, 2.3),
    ]
    .into_iter()
    .enumerate()
    {
        out.push(Spec {
            mode,
            laps,
            seed: 100 + i as u64,
            ring_slots: 3000,
            tid: 100 + i as u32,
            thread_name: format!("t{i}"),
            timer_hz: [19_200_000, 24_000_000, 1_000_000_000][i],
            start_counter: (1 << 34) * (i as u64 + 1),
            wall_clock_ns: 1_700_000_000_000_000_000 + i as u64 * 1_000_000,
            unresolved_every: 5,
            ..Spec::default()
        });
    }
    out
}

/// The steps of `file` are its call tree's frames in pre-order, each exit at its frame's end.
fn check_steps_against_the_tree(file: &TraceFile, what: &str) {
    let decoded = file.decode_events().unwrap();
    let tree = build_tree(
        &decoded.events,
        file.header.reference_counter,
        TreeOptions::default(),
    );
    let input = [Input { file, name: "t" }];
    let prepared = prepare(&input).unwrap();
    let before = tree
        .frames
        .iter()
        .filter(|f| f.begins_before_window)
        .count() as u64;
    assert_eq!(prepared[0].shape.before, before, "{what}");
    let open = tree.frames.iter().filter(|f| f.open_at_end).count() as u64;
    assert_eq!(prepared[0].shape.open_at_end, open, "{what}");
    let steps: Vec<_> = prepared[0].steps().collect();
    let entries: Vec<(u64, Option<u64>)> = steps
        .iter()
        .filter_map(|(c, s)| match s {
            Step::Enter(m) => Some((*c, *m)),
            Step::Exit => None,
        })
        .collect();
    let frames: Vec<(u64, Option<u64>)> = tree.frames.iter().map(|f| (f.start, f.method)).collect();
    assert_eq!(entries, frames, "{what}");
    // Every frame's exit time: replay the steps with a stack.
    let mut stack = Vec::new();
    let mut ends = vec![0u64; frames.len()];
    let mut next = 0;
    for (c, s) in &steps {
        match s {
            Step::Enter(_) => {
                stack.push(next);
                next += 1;
            }
            Step::Exit => ends[stack.pop().unwrap()] = *c,
        }
    }
    assert!(stack.is_empty(), "{what}");
    let want: Vec<u64> = tree.frames.iter().map(|f| f.end).collect();
    assert_eq!(ends, want, "{what}");
}

#[test]
fn steps_are_the_call_tree_in_pre_order() {
    for spec in specs() {
        check_steps_against_the_tree(&trace(&spec), &format!("{spec:?}"));
    }
}

/// More frames cut at one edge of the window than a batch of steps holds: the frames entered
/// before the window (a recursion 1 200 deep whose first entries the ring lost) and the frames still
/// running at the flush (1 100 deep) each take more than one batch.
#[test]
fn frames_cut_at_an_edge_can_fill_more_than_a_batch() {
    let deep = BATCH + 176;
    let mut events: Vec<(u64, Option<u64>)> = (0..deep as u64)
        .map(|i| (1000 + i, Some(0x7000_0000 + 16 * (i % 50))))
        .collect();
    let t = 1000 + deep as u64;
    events.extend((0..deep as u64).map(|i| (t + i, None)));
    // The ring keeps the exits and about 100 entries: some 1 100 frames begin before the window.
    let cut_before = hand_file(&events, deep + 100, 1, t + deep as u64 + 1);
    let input = inputs(std::slice::from_ref(&cut_before));
    let before = prepare(&input).unwrap()[0].shape.before;
    assert!(before > BATCH as u64 && before < deep as u64, "{before}");
    check_steps_against_the_tree(&cut_before, "frames before the window");
    // Only the entries, in a ring that keeps them all: every frame runs at the flush.
    let open = hand_file(&events[..BATCH + 76], 4 * BATCH, 2, t);
    let input = inputs(std::slice::from_ref(&open));
    assert_eq!(
        prepare(&input).unwrap()[0].shape.open_at_end,
        (BATCH + 76) as u64
    );
    check_steps_against_the_tree(&open, "frames open at the flush");
}

/// Runs end only where another thread's step comes first, and ties go to the earlier input,
/// whichever of the other threads holds the tie: worked out by hand on three threads whose
/// steps share counters.
#[test]
fn runs_are_maximal_and_ties_go_to_the_earlier_input() {
    let run_lanes = |files: &[TraceFile]| -> Vec<(usize, Vec<u64>)> {
        let inputs = inputs(files);
        let prepared = prepare(&inputs).unwrap();
        let mut merged = Merged::new(&prepared);
        let mut runs = Vec::new();
        while let Some((i, run)) = merged.next_run() {
            runs.push((
                i,
                run.iter()
                    .map(|s| s.0 - 1_699_999_999_999_999_900)
                    .collect(),
            ));
        }
        runs
    };
    // Two threads, every step at the same time: the first thread's whole run, then the other's.
    let m = Some(0x7000_0100);
    let a = hand_file(&[(50, m), (50, None), (50, m), (50, None)], 64, 1, 100);
    let b = hand_file(&[(50, m), (50, None)], 64, 2, 100);
    assert_eq!(
        run_lanes(&[a, b]),
        [(0, vec![50, 50, 50, 50]), (1, vec![50, 50])]
    );
    // The thread with the earliest step sits between two threads tied at its next step: its
    // run stops before that step, which belongs to the first thread.
    let at = |t0: u64, t1: u64, tid| hand_file(&[(t0, m), (t1, None)], 64, tid, 100);
    assert_eq!(
        run_lanes(&[at(70, 90, 1), at(50, 70, 2), at(70, 90, 3)]),
        [
            (1, vec![50]),
            (0, vec![70]),
            (1, vec![70]),
            (2, vec![70]),
            (0, vec![90]),
            (2, vec![90]),
        ]
    );
}

#[test]
fn merge_is_in_wall_clock_order_and_complete() {
    let files: Vec<TraceFile> = specs().iter().map(trace).collect();
    let inputs = inputs(&files);
    let prepared = prepare(&inputs).unwrap();
    let mut last = 0;
    let mut per = vec![0usize; files.len()];
    for (i, t, _) in Merged::new(&prepared) {
        assert!(t >= last);
        last = t;
        per[i] += 1;
    }
    for (i, p) in prepared.iter().enumerate() {
        assert_eq!(per[i] as u64, 2 * (p.shape.before + p.shape.entries));
    }
}

/// Runs (what the Perfetto writer consumes) and single steps give the same sequence, and both
/// are a stable sort by wall-clock time of every thread's own steps: ties go to the earlier
/// input. Inputs that overlap in time, are identical (every step a tie) and span several
/// batches each.
#[test]
fn runs_and_steps_are_the_stable_merge() {
    let mut files: Vec<TraceFile> = specs().iter().map(trace).collect();
    files.push(files[0].clone());
    let mut long = specs()[1].clone();
    long.ring_slots = 20_000;
    long.seed = 7;
    long.wall_clock_ns = files[0].header.wall_clock_ns;
    files.push(trace(&long));
    let inputs = inputs(&files);
    let prepared = prepare(&inputs).unwrap();
    let mut want: Vec<(u64, usize, Step)> = Vec::new();
    for (i, p) in prepared.iter().enumerate() {
        want.extend(p.steps().map(|(c, s)| (p.clock.wall_ns(c), i, s)));
    }
    want.sort_by_key(|&(t, i, _)| (t, i));
    let want: Vec<(usize, u64, Step)> = want.into_iter().map(|(t, i, s)| (i, t, s)).collect();
    let steps: Vec<_> = Merged::new(&prepared).collect();
    assert_eq!(steps, want);
    let mut merged = Merged::new(&prepared);
    let mut runs = Vec::new();
    let mut count = 0;
    while let Some((i, run)) = merged.next_run() {
        assert!(!run.is_empty());
        count += 1;
        runs.extend(run.iter().map(|&(t, code)| (i, t, Step::from_code(code))));
    }
    assert_eq!(runs, want);
    assert!(count > 10 && count < want.len(), "{count} runs");
}

#[test]
fn chrome_json_parses_and_balances() {
    let files: Vec<TraceFile> = specs().iter().map(trace).collect();
    let mut out = Vec::new();
    hubble_export::chrome::write(&inputs(&files), &mut out).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let mut depth = std::collections::HashMap::new();
    let mut begins = 0;
    for e in events {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        match e["ph"].as_str().unwrap() {
            "B" => {
                *depth.entry(key).or_insert(0i64) += 1;
                begins += 1;
                assert!(e["name"].is_string());
            }
            "E" => {
                let d = depth.entry(key).or_insert(0i64);
                *d -= 1;
                assert!(*d >= 0);
            }
            "M" => {}
            other => panic!("phase {other}"),
        }
    }
    assert!(depth.values().all(|d| *d == 0));
    let frames: usize = files
        .iter()
        .map(|f| {
            let d = f.decode_events().unwrap();
            build_tree(
                &d.events,
                f.header.reference_counter,
                TreeOptions::default(),
            )
            .frames
            .len()
        })
        .sum();
    assert_eq!(begins, frames);
}

#[test]
fn perfetto_round_trips_through_prost() {
    use prost::Message;
    let files: Vec<TraceFile> = specs().iter().map(trace).collect();
    let mut out = Vec::new();
    hubble_export::perfetto::write(&inputs(&files), &mut out).unwrap();
    let trace = hubble_export::proto::Trace::decode(out.as_slice()).unwrap();
    let mut begins = 0;
    let mut ends = 0;
    for p in &trace.packet {
        if let Some(hubble_export::proto::trace_packet::Data::TrackEvent(e)) = &p.data {
            match e.r#type {
                Some(1) => begins += 1,
                Some(2) => ends += 1,
                other => panic!("type {other:?}"),
            }
        }
    }
    assert_eq!(begins, ends);
    assert!(begins > 1000);
}

/// Perfetto's timestamps and names resolved as the trace processor does (per sequence: the
/// defaults' clock, the incremental clock set by the sequence's snapshot and advanced by every
/// delta, REALTIME for explicit absolute timestamps; interned names) equal the merged steps.
#[test]
fn perfetto_incremental_times_and_names_equal_the_steps() {
    let files: Vec<TraceFile> = specs().iter().map(trace).collect();
    check_perfetto(&files);
}

/// The same with output many times the writer's buffer, from two large threads whose steps
/// interleave, a third of whose methods have no symbol (each interned by a packet of its own,
/// in between the slices), so that both threads of the export look names up.
#[test]
fn perfetto_large_interleaved_with_names_interned_on_the_way() {
    let files: Vec<TraceFile> = (0..2u64)
        .map(|i| {
            trace(&Spec {
                ring_slots: 150_000,
                methods: 20_000,
                unresolved_every: 3,
                seed: 7 + i,
                tid: 300 + i as u32,
                ..Spec::default()
            })
        })
        .collect();
    let (bytes, interned_on_the_way) = check_perfetto(&files);
    assert!(bytes > 4 << 20, "{bytes} bytes");
    assert!(interned_on_the_way > 5_000, "{interned_on_the_way}");
    // Almost no symbols and mostly distinct methods: whole runs of slices that each intern
    // their name, longer than the room a run of plain slices needs.
    let unnamed = trace(&Spec {
        ring_slots: 60_000,
        methods: 200_000,
        unresolved_every: 1,
        ..Spec::default()
    });
    assert!(
        unnamed.symbols.len() <= 3,
        "only the synthesizer's fixed methods are named"
    );
    let (_, interned_on_the_way) = check_perfetto(std::slice::from_ref(&unnamed));
    assert!(interned_on_the_way > 10_000, "{interned_on_the_way}");
}

/// Checks the Perfetto output of `files`; returns its size and how many slices carried a name
/// interned with them.
fn check_perfetto(files: &[TraceFile]) -> (usize, usize) {
    use hubble_export::perfetto::INCREMENTAL_CLOCK;
    use hubble_export::proto::trace_packet::{Data, OptionalTrustedPacketSequenceId};
    use hubble_export::proto::track_event::NameField;
    use prost::Message;
    use std::collections::HashMap;
    let input = inputs(files);
    let mut out = Vec::new();
    hubble_export::perfetto::write(&input, &mut out).unwrap();
    let trace = hubble_export::proto::Trace::decode(out.as_slice()).unwrap();
    let mut clock: HashMap<u32, u64> = HashMap::new();
    let mut names: HashMap<(u32, u64), String> = HashMap::new();
    let mut defaults_clock: HashMap<u32, u32> = HashMap::new();
    let mut got = Vec::new();
    let mut interned_on_the_way = 0;
    // Per sequence, in packet order: whether it has begun (its first packet clears the
    // incremental state), and the names it interned.
    let mut begun: std::collections::HashSet<u32> = Default::default();
    let mut interned: HashMap<u32, Vec<String>> = HashMap::new();
    for (k, p) in trace.packet.iter().enumerate() {
        let Some(OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(seq)) =
            p.optional_trusted_packet_sequence_id
        else {
            // Only the trace's first packet (the global clock snapshot) and the processes'
            // track descriptors have no sequence; a thread's descriptor is on its sequence.
            let process = matches!(&p.data, Some(Data::TrackDescriptor(t)) if t.process.is_some());
            assert!(
                k == 0 || process,
                "packet {k} has no sequence: {:?}",
                p.data
            );
            continue;
        };
        if begun.insert(seq) {
            assert_eq!(
                p.sequence_flags,
                Some(1),
                "sequence {seq} starts without clearing"
            );
            assert_eq!(p.first_packet_on_sequence, Some(true), "sequence {seq}");
        }
        for n in p.interned_data.iter().flat_map(|d| &d.event_names) {
            interned
                .entry(seq)
                .or_default()
                .push(n.name.clone().unwrap());
        }
        if let Some(d) = &p.trace_packet_defaults {
            defaults_clock.insert(seq, d.timestamp_clock_id.unwrap());
        }
        for n in p.interned_data.iter().flat_map(|d| &d.event_names) {
            // An iid names one thing on its sequence: never interned again as another name.
            let name = n.name.clone().unwrap();
            if let Some(old) = names.insert((seq, n.iid.unwrap()), name.clone()) {
                assert_eq!(
                    old,
                    name,
                    "sequence {seq}: iid {} interned twice",
                    n.iid.unwrap()
                );
            }
        }
        match &p.data {
            Some(Data::ClockSnapshot(snap)) => {
                let c = snap
                    .clocks
                    .iter()
                    .find(|c| c.clock_id == Some(INCREMENTAL_CLOCK))
                    .unwrap();
                assert_eq!(c.is_incremental, Some(true));
                let rt = snap.clocks.iter().find(|c| c.clock_id == Some(1)).unwrap();
                assert_eq!(rt.timestamp, c.timestamp, "identity with REALTIME");
                clock.insert(seq, c.timestamp.unwrap());
            }
            Some(Data::TrackEvent(e)) => {
                // Every slice reads the sequence's incremental state (its clock, its names).
                assert_eq!(
                    p.sequence_flags,
                    Some(2),
                    "packet {k}: SEQ_NEEDS_INCREMENTAL_STATE"
                );
                interned_on_the_way += usize::from(p.interned_data.is_some());
                let ts = p.timestamp.unwrap();
                let ns = match p.timestamp_clock_id.unwrap_or(defaults_clock[&seq]) {
                    1 => ts,
                    INCREMENTAL_CLOCK => {
                        let c = clock.get_mut(&seq).unwrap();
                        *c = c.wrapping_add(ts);
                        *c
                    }
                    other => panic!("clock {other}"),
                };
                let step = match (e.r#type, &e.name_field) {
                    (Some(1), Some(NameField::NameIid(iid))) => Some(names[&(seq, *iid)].clone()),
                    (Some(2), None) => None,
                    other => panic!("{other:?}"),
                };
                got.push(((seq - 1) as usize, ns, step));
            }
            _ => {}
        }
    }
    let prepared = prepare(&input).unwrap();
    let want: Vec<_> = Merged::new(&prepared)
        .map(|(i, ns, step)| {
            let name = match step {
                Step::Enter(m) => {
                    Some(hubble_format::names::display(&files[i].symbols, m).into_owned())
                }
                Step::Exit => None,
            };
            (i, ns, name)
        })
        .collect();
    assert!(want.len() > 1000);
    // The first packet: a snapshot of REALTIME (clock 1) at the first step, the trace's primary
    // clock, stamped with that time.
    let first = &trace.packet[0];
    assert_eq!(first.timestamp, Some(want[0].1));
    match &first.data {
        Some(Data::ClockSnapshot(snap)) => {
            assert_eq!(
                snap.primary_trace_clock,
                Some(hubble_export::proto::BuiltinClock::Realtime as i32)
            );
            let clocks: Vec<_> = snap
                .clocks
                .iter()
                .map(|c| (c.clock_id, c.timestamp))
                .collect();
            assert_eq!(clocks, [(Some(1), Some(want[0].1))]);
        }
        other => panic!("the first packet is {other:?}"),
    }
    assert!(want
        .iter()
        .any(|(_, _, n)| n.as_deref() == Some(hubble_format::names::BEFORE_WINDOW)));
    assert!(want
        .iter()
        .any(|(_, _, n)| n.as_deref().is_some_and(|n| n.starts_with("0x"))));
    assert_eq!(got, want);
    // A sequence interns the cut frames' name exactly when its input has frames cut at the
    // window's start.
    for (i, _) in files.iter().enumerate() {
        let cut = want
            .iter()
            .any(|(j, _, n)| *j == i && n.as_deref() == Some(hubble_format::names::BEFORE_WINDOW));
        let names = interned.get(&(i as u32 + 1)).map_or(&[][..], Vec::as_slice);
        let named = names
            .iter()
            .any(|n| n == hubble_format::names::BEFORE_WINDOW);
        assert_eq!(named, cut, "input {i}: the cut frames' name interned");
    }
    (out.len(), interned_on_the_way)
}

#[test]
fn dot_trace_records_balance_per_thread() {
    let files: Vec<TraceFile> = specs().iter().map(trace).collect();
    let mut out = Vec::new();
    hubble_export::android_trace::write(&inputs(&files), &mut out).unwrap();
    let end = out.windows(5).position(|w| w == b"*end\n").unwrap() + 5;
    let key = std::str::from_utf8(&out[..end]).unwrap();
    assert!(key.starts_with("*version\n3\n"));
    assert!(key.contains("clock=wall\n"));
    let bin = &out[end..];
    assert_eq!(&bin[0..4], b"SLOW");
    assert_eq!(u16::from_le_bytes([bin[4], bin[5]]), 3);
    assert_eq!(u16::from_le_bytes([bin[16], bin[17]]), 10);
    let records = &bin[32..];
    assert_eq!(records.len() % 10, 0);
    let declared: usize = key
        .lines()
        .find_map(|l| l.strip_prefix("num-method-calls="))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(declared, records.len() / 10);
    let mut stacks: std::collections::HashMap<u16, Vec<u32>> = Default::default();
    let mut last = std::collections::HashMap::new();
    for r in records.chunks_exact(10) {
        let tid = u16::from_le_bytes([r[0], r[1]]);
        let value = u32::from_le_bytes(r[2..6].try_into().unwrap());
        let us = u32::from_le_bytes(r[6..10].try_into().unwrap());
        assert!(us >= *last.get(&tid).unwrap_or(&0));
        last.insert(tid, us);
        let stack = stacks.entry(tid).or_default();
        match value & 3 {
            0 => stack.push(value >> 2),
            1 => assert_eq!(stack.pop(), Some(value >> 2)),
            a => panic!("action {a}"),
        }
    }
    assert!(stacks.values().all(Vec::is_empty));
    assert_eq!(stacks.len(), files.len());
}

#[test]
fn svg_names_the_heaviest_stack() {
    let file = trace(&Spec::default());
    let input = inputs(std::slice::from_ref(&file));
    let lines = hubble_export::folded::folded_lines(&input).unwrap();
    let (heaviest, _) = lines
        .iter()
        .map(|l| {
            let (stack, v) = l.rsplit_once(' ').unwrap();
            (
                stack.rsplit(';').next().unwrap().to_owned(),
                v.parse::<u64>().unwrap(),
            )
        })
        .max_by_key(|(_, v)| *v)
        .unwrap();
    let mut out = Vec::new();
    hubble_export::folded::write_svg(&input, "t", &mut out).unwrap();
    let svg = String::from_utf8(out).unwrap();
    assert!(svg.contains("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(&format!("<title>{heaviest} (")), "{heaviest}");
}

#[test]
fn nanoscope_takes_one_thread() {
    let files: Vec<TraceFile> = specs().iter().map(trace).collect();
    let err = hubble_export::nanoscope::write(&inputs(&files), &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("one thread"));
}

#[test]
fn a_window_with_no_calls_exports_without_panicking() {
    let file = trace(&Spec {
        laps: 0.0,
        ..Spec::default()
    });
    assert!(file
        .decode_events()
        .unwrap()
        .events
        .iter()
        .all(|e| e.kind == hubble_format::EventKind::Start));
    let input = [Input {
        file: &file,
        name: "empty",
    }];
    let mut out = Vec::new();
    hubble_export::perfetto::write(&input, &mut out).unwrap();
    hubble_export::android_trace::write(&input, &mut out).unwrap();
    hubble_export::chrome::write(&input, &mut out).unwrap();
    hubble_export::folded::write_folded(&input, &mut out).unwrap();
    hubble_export::nanoscope::write(&input, &mut out).unwrap();
    let err = hubble_export::folded::write_svg(&input, "t", &mut out).unwrap_err();
    assert!(err.to_string().contains("nothing to draw"));
}
