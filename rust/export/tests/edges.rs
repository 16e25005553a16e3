//! The writers at their edges, worked out by hand: which `.trace` thread ids are kept and
//! which are renumbered, the method line for frames entered before the window (present exactly
//! when such frames exist), JSON string escaping, and the writers' few large writes.

use hubble_export::android_trace::{thread_ids, write};
use hubble_export::synth::{trace, Spec};
use hubble_export::Input;
use hubble_format::TraceFile;

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
    let files = [trace(&Spec {
        ring_slots: 1 << 16,
        laps: 1.5,
        seed: 9,
        tid: 10,
        ..Spec::default()
    })];
    let inputs: Vec<Input<'_>> = files.iter().map(|f| Input { file: f, name: "t" }).collect();
    type Writer = fn(&[Input<'_>], &mut dyn std::io::Write) -> hubble_export::Result<()>;
    let writers: [(&str, Writer); 2] =
        [(".trace", write), ("chrome", hubble_export::chrome::write)];
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
