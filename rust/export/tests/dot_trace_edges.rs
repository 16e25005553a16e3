//! `.trace` (Android's method-trace format) at its edges, worked out by hand: which thread ids
//! are kept and which are renumbered, and the method line for frames entered before the window,
//! present exactly when such frames exist.

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
