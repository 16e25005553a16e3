//! The writers at their edges, worked out by hand: which `.trace` thread ids are kept and
//! which are renumbered, the method line for frames entered before the window (present exactly
//! when such frames exist), JSON string escaping, and the writers' few large writes.

use hubble_export::android_trace::{thread_ids, write};
use hubble_export::Input;
use hubble_format::TraceFile;
use hubble_testkit::synth::{trace, Spec};

fn with_tids(tids: &[u32]) -> Vec<TraceFile> {
    tids.iter()
        .enumerate()
        .map(|(i, &tid)| {
            trace(&Spec {
                ring_slots: 64,
                laps: 0.5,
                seed: i as u64 + 1,
                tid,
                ..Spec::default()
            })
        })
        .collect()
}

fn ids(tids: &[u32]) -> Vec<u16> {
    let files = with_tids(tids);
    let inputs: Vec<Input<'_>> = files.iter().map(|f| Input { file: f, name: "t" }).collect();
    thread_ids(&inputs)
}

/// Kept when every tid is in 1..32768 and distinct (the format's thread ids are 16-bit and 0
/// is no thread); otherwise every input is numbered from 1 in order.
#[test]
fn thread_ids_are_kept_only_when_all_fit_and_differ() {
    assert_eq!(ids(&[5, 32767]), [5, 32767]);
    assert_eq!(ids(&[1]), [1]);
    assert_eq!(ids(&[5, 32768]), [1, 2]);
    assert_eq!(ids(&[0, 7]), [1, 2]);
    assert_eq!(ids(&[7, 7, 9]), [1, 2, 3]);
}

fn key(files: &[TraceFile]) -> String {
    let inputs: Vec<Input<'_>> = files.iter().map(|f| Input { file: f, name: "t" }).collect();
    let mut out = Vec::new();
    write(&inputs, &mut out).unwrap();
    let end = out.windows(5).position(|w| w == b"*end\n").unwrap() + 5;
    String::from_utf8(out[..end].to_vec()).unwrap()
}

/// The "before the window" method (id 1, written `0x4`) is declared when a wrapped ring cut
/// frames off at its start, and not for a ring that never wrapped.
#[test]
fn the_before_window_method_is_declared_only_when_used() {
    let whole = with_tids(&[10]);
    let before_line = |k: &str| k.lines().any(|l| l.starts_with("0x4\t"));
    assert!(!before_line(&key(&whole)), "{}", key(&whole));
    let wrapped = [trace(&Spec {
        ring_slots: 64,
        laps: 2.5,
        seed: 3,
        tid: 10,
        ..Spec::default()
    })];
    assert!(before_line(&key(&wrapped)), "{}", key(&wrapped));
}

/// A sink that records the size of every write it is given.
#[derive(Default)]
struct Writes(Vec<usize>);

impl std::io::Write for Writes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.push(buf.len());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The record stream goes to the sink in pieces of at least 64 KiB (a file of millions of
/// records must not cost a system call each): every write but the first few (the key text,
/// the binary header) and the last is that large.
#[test]
fn writers_hand_the_sink_64_kib_at_a_time() {
    // Many methods, so that Perfetto interns names all along (its cold path, which goes
    // through the same buffer).
    let files = [trace(&Spec {
        ring_slots: 1 << 16,
        laps: 1.5,
        seed: 9,
        tid: 10,
        methods: 20_000,
        ..Spec::default()
    })];
    let inputs: Vec<Input<'_>> = files.iter().map(|f| Input { file: f, name: "t" }).collect();
    type Writer = fn(&[Input<'_>], &mut dyn std::io::Write) -> hubble_export::Result<()>;
    let writers: [(&str, Writer); 3] = [
        (".trace", write),
        ("chrome", hubble_export::chrome::write),
        ("perfetto", hubble_export::perfetto::write),
    ];
    for (what, writer) in writers {
        let mut sink = Writes::default();
        writer(&inputs, &mut sink).unwrap();
        let total: usize = sink.0.iter().sum();
        assert!(total > 4 << 16, "{what}: {total} bytes is too small a test");
        let small = sink.0.iter().filter(|&&n| n < 1 << 16).count();
        assert!(
            small <= 3,
            "{what}: {small} writes under 64 KiB: {:?}",
            &sink.0[..8]
        );
    }
}

fn json(s: &str) -> String {
    let mut out = Vec::new();
    hubble_export::chrome::json_string(&mut out, s);
    String::from_utf8(out).unwrap()
}

/// JSON strings: the two characters JSON reserves and the C0 controls are escaped (the common
/// ones by letter, the rest as `\u00XX`), everything from the space up is written as it is,
/// and the result parses back to the text.
#[test]
fn json_strings_escape_exactly_the_control_characters() {
    assert_eq!(json("a\"b\\c"), r#""a\"b\\c""#);
    assert_eq!(json("\n\r\t"), r#""\n\r\t""#);
    assert_eq!(json("\u{0}\u{1}\u{1f}"), r#""\u0000\u0001\u001f""#);
    assert_eq!(json(" ~\u{7f}é\u{1f600}"), "\" ~\u{7f}é\u{1f600}\"");
    let all: String = (0u32..0x80)
        .filter_map(char::from_u32)
        .chain(['é', '\u{1f600}'])
        .collect();
    let back: String = serde_json::from_str(&json(&all)).unwrap();
    assert_eq!(back, all);
}

/// Perfetto's track tree: one process track per pid, each thread's track under its process's,
/// every uuid distinct (two processes here, so a constant uuid would merge them).
#[test]
fn perfetto_tracks_hang_under_their_process() {
    use hubble_export::proto::trace_packet::Data;
    use prost::Message;
    let files: Vec<TraceFile> = [(100u32, 10u32), (100, 11), (200, 20)]
        .iter()
        .map(|&(pid, tid)| {
            let mut f = trace(&Spec {
                ring_slots: 64,
                laps: 0.5,
                seed: u64::from(tid),
                tid,
                ..Spec::default()
            });
            f.header.pid = pid;
            f
        })
        .collect();
    let inputs: Vec<Input<'_>> = files.iter().map(|f| Input { file: f, name: "t" }).collect();
    let mut out = Vec::new();
    hubble_export::perfetto::write(&inputs, &mut out).unwrap();
    let trace = hubble_export::proto::Trace::decode(out.as_slice()).unwrap();
    let mut processes = std::collections::BTreeMap::new();
    let mut threads = Vec::new();
    for p in &trace.packet {
        if let Some(Data::TrackDescriptor(d)) = &p.data {
            if let Some(proc) = &d.process {
                processes.insert(proc.pid.unwrap(), d.uuid.unwrap());
            }
            if let Some(t) = &d.thread {
                threads.push((
                    t.pid.unwrap(),
                    t.tid.unwrap(),
                    d.uuid.unwrap(),
                    d.parent_uuid,
                ));
            }
        }
    }
    assert_eq!(processes.keys().copied().collect::<Vec<_>>(), [100, 200]);
    assert_eq!(threads.len(), 3);
    for &(pid, tid, _, parent) in &threads {
        assert_eq!(parent, Some(processes[&pid]), "thread {tid}");
    }
    let mut uuids: Vec<u64> = processes.values().copied().collect();
    uuids.extend(threads.iter().map(|t| t.2));
    let n = uuids.len();
    uuids.sort_unstable();
    uuids.dedup();
    assert_eq!(uuids.len(), n, "track uuids collide: {uuids:x?}");
}

/// `PrettyMethod` names at the edges of the splitter: no argument list, an unclosed one, a
/// leading or trailing dot (no class, or no method: the whole is the method of class `hubble`).
#[test]
fn names_split_at_their_edges() {
    use hubble_format::names::split;
    let s = |n: &str| {
        let x = split(n);
        (x.class, x.method, x.signature)
    };
    let own = |c: &str, m: &str, sig: &str| (c.to_owned(), m.to_owned(), sig.to_owned());
    assert_eq!(s("void a.B.m"), own("a.B", "m", "()V"));
    assert_eq!(s("a.B.m(int"), own("a.B", "m(int", "()"));
    assert_eq!(s("int a.B.m(int, long)"), own("a.B", "m", "(IJ)I"));
    assert_eq!(s(".m()"), own("hubble", ".m", "()"));
    assert_eq!(s("a.()"), own("hubble", "a.", "()"));
    assert_eq!(s("m"), own("hubble", "m", "()"));
}

/// Track uuids stay distinct with many threads: 40 inputs whose tids repeat every 4 (tids are
/// reused across processes, and a version 4 thread's runs are inputs of their own), so neither
/// the tid nor the index alone can make a uuid, and enough of them to reach the high word's set
/// bits.
#[test]
fn perfetto_uuids_are_distinct_for_many_threads() {
    use hubble_export::perfetto::{process_uuid, thread_uuid};
    let mut uuids = vec![process_uuid(100), process_uuid(200)];
    for index in 0..40usize {
        uuids.push(thread_uuid(index, 1000 + (index % 4) as u32));
    }
    let n = uuids.len();
    uuids.sort_unstable();
    uuids.dedup();
    assert_eq!(uuids.len(), n, "track uuids collide");
}

/// `write_folded` writes `folded_lines`, one a line (the CLI's `--format folded` and
/// flamegraph.pl read this text).
#[test]
fn write_folded_writes_the_folded_lines() {
    let files = with_tids(&[10, 11]);
    let inputs: Vec<Input<'_>> = files.iter().map(|f| Input { file: f, name: "t" }).collect();
    let lines = hubble_export::folded::folded_lines(&inputs).unwrap();
    assert!(!lines.is_empty());
    let mut out = Vec::new();
    hubble_export::folded::write_folded(&inputs, &mut out).unwrap();
    let want: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(String::from_utf8(out).unwrap(), want);
}
