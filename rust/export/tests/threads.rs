//! A version 4 file (many threads, runs with gaps) through every writer, each output read back
//! by a parser written here and compared with the steps the test's model of the pool gives
//! (`format/tests/common/pool_scenario.rs`: the records each thread wrote, which blocks the
//! pool kept), never with the writers' own stream code.

#[path = "common/dot_trace.rs"]
mod dot_trace;
#[path = "../../format/tests/common/pool_scenario.rs"]
mod scenario;

use std::collections::{BTreeMap, HashMap};

use hubble_export::Input;
use hubble_format::names::{self, BEFORE_WINDOW_SPLIT};
use hubble_format::RunFile;
use prost::Message;
use scenario::{Ev, ModelStep, Scenario};

struct Case {
    s: Scenario,
    runs: Vec<RunFile>,
    want: BTreeMap<u32, Vec<ModelStep>>,
}

impl Case {
    fn inputs(&self) -> Vec<Input<'_>> {
        scenario::inputs(&self.runs)
    }
    fn threads(&self) -> Vec<usize> {
        self.runs.iter().map(|r| r.section).collect()
    }
    /// The trace's first step (ns): the exports' origin.
    fn origin(&self) -> u64 {
        self.want.values().map(|s| s[0].wall_ns).min().unwrap()
    }
}

/// Several seeds in both modes: together they hold threads with two runs, dropped records and
/// lost oldest blocks (`format/tests/threads.rs` checks that the seeds cover them).
fn cases() -> Vec<Case> {
    let out: Vec<Case> = scenario::sampled()
        .into_iter()
        .map(|(s, runs)| {
            let want = s.thread_steps();
            Case { s, runs, want }
        })
        .collect();
    assert!(out.iter().any(|c| c.want.keys().any(|t| c
        .runs
        .iter()
        .filter(|r| r.file.header.tid == *t)
        .count()
        > 1)));
    out
}

/// A thread's steps as (wall ns, 'B' + name or 'E').
fn named(c: &Case, steps: &[ModelStep]) -> Vec<(u64, Option<String>)> {
    steps
        .iter()
        .map(|s| match s.ev {
            Ev::Enter(m) => (s.wall_ns, Some(c.s.frame_name(m))),
            Ev::Exit(_) => (s.wall_ns, None),
        })
        .collect()
}

// Perfetto: one thread track per thread (not per run), every run's sequence on it, and the
// track's slices, in sequence order, the model's steps to the nanosecond.
#[test]
fn perfetto_has_one_track_per_thread_with_every_run_on_it() {
    use hubble_export::perfetto::INCREMENTAL_CLOCK;
    use hubble_export::proto::trace_packet::{Data, OptionalTrustedPacketSequenceId};
    use hubble_export::proto::track_event::NameField;
    for c in cases() {
        let mut out = Vec::new();
        hubble_export::perfetto::write_threads(&c.inputs(), &c.threads(), &mut out).unwrap();
        let trace = hubble_export::proto::Trace::decode(out.as_slice()).unwrap();
        let mut tracks: HashMap<u64, (u32, String)> = HashMap::new();
        let mut seq_track: HashMap<u32, u64> = HashMap::new();
        let mut clock: HashMap<u32, u64> = HashMap::new();
        let mut names: HashMap<(u32, u64), String> = HashMap::new();
        // Per track: (sequence, ns, name) in packet order.
        let mut events: BTreeMap<u64, Vec<(u32, u64, Option<String>)>> = BTreeMap::new();
        for p in &trace.packet {
            if let Some(Data::TrackDescriptor(td)) = &p.data {
                if let Some(t) = &td.thread {
                    let prev = tracks.insert(
                        td.uuid.unwrap(),
                        (t.tid.unwrap() as u32, t.thread_name.clone().unwrap()),
                    );
                    assert!(prev.is_none(), "a thread track described twice");
                }
            }
            let Some(OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(seq)) =
                p.optional_trusted_packet_sequence_id
            else {
                continue;
            };
            if let Some(d) = &p.trace_packet_defaults {
                assert_eq!(d.timestamp_clock_id, Some(INCREMENTAL_CLOCK));
                let track = d.track_event_defaults.as_ref().unwrap().track_uuid.unwrap();
                seq_track.insert(seq, track);
            }
            for n in p.interned_data.iter().flat_map(|d| &d.event_names) {
                names.insert((seq, n.iid.unwrap()), n.name.clone().unwrap());
            }
            match &p.data {
                Some(Data::ClockSnapshot(snap)) => {
                    let inc = snap
                        .clocks
                        .iter()
                        .find(|k| k.clock_id == Some(INCREMENTAL_CLOCK))
                        .unwrap();
                    clock.insert(seq, inc.timestamp.unwrap());
                }
                Some(Data::TrackEvent(e)) => {
                    assert!(e.track_uuid.is_none(), "events use the sequence's track");
                    let now = clock.get_mut(&seq).unwrap();
                    *now = now.wrapping_add(p.timestamp.unwrap());
                    let name = match (e.r#type, &e.name_field) {
                        (Some(1), Some(NameField::NameIid(iid))) => {
                            Some(names[&(seq, *iid)].clone())
                        }
                        (Some(2), None) => None,
                        other => panic!("{other:?}"),
                    };
                    events
                        .entry(seq_track[&seq])
                        .or_default()
                        .push((seq, *now, name));
                }
                _ => {}
            }
        }
        assert_eq!(tracks.len(), c.want.len(), "one track per thread");
        assert_eq!(seq_track.len(), c.runs.len(), "one sequence per run");
        for (uuid, (tid, name)) in &tracks {
            assert_eq!(*name, c.s.thread_name(*tid));
            let mut got = events.remove(uuid).unwrap_or_default();
            // Runs are sequences numbered in run order; a stable sort keeps each one's order.
            got.sort_by_key(|e| e.0);
            let got: Vec<(u64, Option<String>)> = got.into_iter().map(|(_, t, n)| (t, n)).collect();
            assert_eq!(got, named(&c, &c.want[tid]), "tid {tid}");
        }
        assert!(events.is_empty(), "events on a track no thread owns");
    }
}

/// `.trace` records per thread id: (action, (class, method, signature), µs).
type Record = (u32, (String, String, String), u32);

// `.trace`: one `*threads` line per thread, every record of a thread's runs under its tid.
#[test]
fn dot_trace_has_one_section_per_thread() {
    for c in cases() {
        let mut out = Vec::new();
        hubble_export::android_trace::write_threads(&c.inputs(), &c.threads(), &mut out).unwrap();
        let read = dot_trace::read(&out);
        let want_threads: Vec<(u16, String)> = c
            .want
            .keys()
            .map(|tid| (*tid as u16, c.s.thread_name(*tid)))
            .collect();
        assert_eq!(read.threads, want_threads);
        let start_us = read.start_us;
        assert_eq!(start_us, c.origin() / 1000);
        let mut got: BTreeMap<u16, Vec<Record>> = BTreeMap::new();
        for (tid, action, method, us) in read.records {
            got.entry(tid).or_default().push((action, method, us));
        }
        let split = |m: Option<u64>| match m {
            None => (
                BEFORE_WINDOW_SPLIT.0.to_owned(),
                BEFORE_WINDOW_SPLIT.1.to_owned(),
                "()".to_owned(),
            ),
            Some(m) => {
                let s = names::split(&c.s.name(m));
                (s.class, s.method, s.signature)
            }
        };
        let want: BTreeMap<u16, Vec<Record>> = c
            .want
            .iter()
            .map(|(tid, steps)| {
                let records = steps
                    .iter()
                    .map(|s| {
                        let (action, m) = match s.ev {
                            Ev::Enter(m) => (0, m),
                            Ev::Exit(m) => (1, m),
                        };
                        (action, split(m), (s.wall_ns / 1000 - start_us) as u32)
                    })
                    .collect();
                (*tid as u16, records)
            })
            .collect();
        assert_eq!(got, want);
    }
}

// Chrome JSON: each thread named once, every run's events under its tid, to the nanosecond.
#[test]
fn chrome_json_names_each_thread_once() {
    for c in cases() {
        let mut out = Vec::new();
        hubble_export::chrome::write_threads(&c.inputs(), &c.threads(), &mut out).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let origin: u64 = doc["otherData"]["wall_clock_origin_ns"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(origin, c.origin());
        let mut thread_names: Vec<(u64, String)> = Vec::new();
        let mut got: BTreeMap<u64, Vec<(u64, Option<String>)>> = BTreeMap::new();
        // `ts` is µs with three decimals: read from the text, so no float rounds it.
        let text = String::from_utf8(out.clone()).unwrap();
        let mut ts_texts = text
            .match_indices("\"ts\":")
            .map(|(i, _)| {
                let rest = &text[i + 5..];
                let n = rest.find('}').unwrap();
                let (us, frac) = rest[..n].split_once('.').unwrap();
                us.parse::<u64>().unwrap() * 1000 + frac.parse::<u64>().unwrap()
            })
            .collect::<Vec<_>>()
            .into_iter();
        for e in doc["traceEvents"].as_array().unwrap() {
            let tid = e["tid"].as_u64().unwrap();
            match e["ph"].as_str().unwrap() {
                "M" => {
                    if e["name"] == "thread_name" {
                        thread_names.push((tid, e["args"]["name"].as_str().unwrap().to_owned()));
                    }
                }
                "B" => got.entry(tid).or_default().push((
                    origin + ts_texts.next().unwrap(),
                    Some(e["name"].as_str().unwrap().to_owned()),
                )),
                "E" => got
                    .entry(tid)
                    .or_default()
                    .push((origin + ts_texts.next().unwrap(), None)),
                other => panic!("{other}"),
            }
        }
        let want_names: Vec<(u64, String)> = c
            .want
            .keys()
            .map(|t| (u64::from(*t), c.s.thread_name(*t)))
            .collect();
        assert_eq!(thread_names, want_names);
        let want: BTreeMap<u64, Vec<(u64, Option<String>)>> = c
            .want
            .iter()
            .map(|(t, steps)| (u64::from(*t), named(&c, steps)))
            .collect();
        assert_eq!(got, want);
    }
}

// Folded stacks: one root per thread, whatever its runs; a path's value is its frames' self
// ticks, converted to ns per run (each run is placed on its own clock).
#[test]
fn folded_stacks_are_rooted_once_per_thread() {
    for c in cases() {
        let lines = hubble_export::folded::folded_lines_threads(&c.inputs(), &c.threads()).unwrap();
        let mut got: BTreeMap<String, u64> = BTreeMap::new();
        for l in &lines {
            let (path, v) = l.rsplit_once(' ').unwrap();
            assert!(got.insert(path.to_owned(), v.parse().unwrap()).is_none());
        }
        let hz = u128::from(c.s.timer_hz);
        let mut want: BTreeMap<String, u64> = BTreeMap::new();
        for (tid, steps) in &c.want {
            let root = format!("{} (tid {tid})", c.s.thread_name(*tid));
            // Per (path, run): self ticks, from frames: duration minus children's.
            let mut ticks: BTreeMap<(String, usize), u64> = BTreeMap::new();
            let mut stack: Vec<(String, u64, u64)> = Vec::new();
            for s in steps {
                match s.ev {
                    Ev::Enter(m) => {
                        let parent = stack.last().map_or(root.clone(), |f| f.0.clone());
                        let name = c.s.frame_name(m).replace([';', '\n'], ":");
                        stack.push((format!("{parent};{name}"), s.counter, 0));
                    }
                    Ev::Exit(_) => {
                        let (path, start, kids) = stack.pop().unwrap();
                        let d = s.counter - start;
                        *ticks.entry((path, s.run)).or_default() += d - kids;
                        if let Some(p) = stack.last_mut() {
                            p.2 += d;
                        }
                    }
                }
            }
            for ((path, _), t) in ticks {
                *want.entry(path).or_default() += (u128::from(t) * 1_000_000_000 / hz) as u64;
            }
        }
        want.retain(|_, v| *v > 0);
        assert_eq!(got, want);
    }
}

// Nanoscope text holds one thread: the runs of one thread are accepted, two threads are not.
#[test]
fn nanoscope_takes_the_runs_of_one_thread() {
    let c = cases()
        .into_iter()
        .find(|c| c.runs.iter().any(|r| r.runs > 1))
        .unwrap();
    let section = c.runs.iter().find(|r| r.runs > 1).unwrap().section;
    let runs: Vec<&RunFile> = c.runs.iter().filter(|r| r.section == section).collect();
    let inputs: Vec<Input<'_>> = runs
        .iter()
        .map(|r| Input {
            file: &r.file,
            name: "v4",
        })
        .collect();
    let mut out = Vec::new();
    hubble_export::nanoscope::write_threads(&inputs, &vec![section; inputs.len()], &mut out)
        .unwrap();
    let tid = runs[0].file.header.tid;
    let want: String = named(&c, &c.want[&tid])
        .into_iter()
        .map(|(ns, name)| format!("{ns}:{}\n", name.as_deref().unwrap_or("POP")))
        .collect();
    assert_eq!(String::from_utf8(out).unwrap(), want);
    let mut sink = Vec::new();
    assert!(hubble_export::nanoscope::write_threads(&c.inputs(), &c.threads(), &mut sink).is_err());
}
