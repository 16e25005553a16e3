//! Android's method-trace format (`.trace`), as ART's `runtime/trace.cc` writes it in
//! non-streaming mode with `clock=wall`, in version 3 (explicit record size):
//!
//! ```text
//! *version / 3 / data-file-overflow=false / clock=wall / elapsed-time-usec=… /
//! num-method-calls=… / clock-call-overhead-nsec=0 / vm=art / pid=…
//! *threads   <id>\t<name>
//! *methods   <id<<2 in hex>\t<class>\t<method>\t<signature>
//! *end
//! "SLOW" u16 version=3, u16 offset=32, u64 start (µs since the epoch), u16 record size=10,
//!        zero padding to 32 bytes
//! records: u16 thread id, u32 (method id << 2 | action), u32 wall µs since start
//! ```
//!
//! Actions are 0 (enter) and 1 (exit); an exit carries the id of the method it leaves, as ART
//! does. Frames entered before the window get an entry at the window start, frames running at
//! the flush an exit at the flush, so every thread balances. Thread ids are 16 bits in this
//! format and `dmtracedump` indexes a 32768-entry table with them: tids are kept when every
//! thread's tid is below 32768 and distinct, otherwise threads are numbered 1, 2, … and the
//! `*threads` names carry the real tid. A thread is an input with [`write`]; with
//! [`write_threads`] the runs of one thread are one line of the `*threads` table and one
//! thread id in the records (each run balanced, so the thread's records nest).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;

use crate::{ExportError, Result};
use hubble_format::names::{self, BEFORE_WINDOW_SPLIT};
use hubble_format::stream::Input;
use hubble_format::stream::{prepare_listing, Merged, Step};

/// Magic of the binary part ("SLOW", little-endian).
pub const MAGIC: u32 = 0x574f_4c53;
/// Header length of the binary part.
pub const HEADER_LEN: u16 = 32;
/// Bytes per record with one (wall) clock.
pub const RECORD_LEN: u16 = 10;
/// The method id of frames entered before the window.
const BEFORE_ID: u32 = 1;

/// The 16-bit thread ids used for `inputs`, one thread per input.
pub fn thread_ids(inputs: &[Input<'_>]) -> Vec<u16> {
    thread_ids_of(inputs, &crate::one_thread_per_input(inputs.len()))
}

/// The 16-bit thread ids used for `inputs`, input `i` in thread `threads[i]`: the tids when
/// each is below 32768 and no two threads share one, else the threads numbered 1, 2, … in the
/// order they first appear.
pub fn thread_ids_of(inputs: &[Input<'_>], threads: &[usize]) -> Vec<u16> {
    let mut seen = HashSet::new();
    let keep = inputs.iter().enumerate().all(|(i, input)| {
        let tid = input.file.header.tid;
        tid > 0 && tid < 32768 && (!crate::first_of_thread(threads, i) || seen.insert(tid))
    });
    let mut numbers: HashMap<usize, u16> = HashMap::new();
    inputs
        .iter()
        .zip(threads)
        .map(|(input, t)| {
            if keep {
                input.file.header.tid as u16
            } else {
                let next = numbers.len() as u16 + 1;
                *numbers.entry(*t).or_insert(next)
            }
        })
        .collect()
}

/// Writes `inputs` as one `.trace` file, one thread per input.
pub fn write(inputs: &[Input<'_>], sink: &mut dyn Write) -> Result<()> {
    write_threads(inputs, &crate::one_thread_per_input(inputs.len()), sink)
}

/// Writes `inputs` as one `.trace` file, input `i` in thread `threads[i]`.
pub fn write_threads(inputs: &[Input<'_>], threads: &[usize], sink: &mut dyn Write) -> Result<()> {
    crate::check_threads(inputs, threads)?;
    if inputs.len() >= 32768 {
        return Err(ExportError::Unsupported(
            "a .trace file holds fewer than 32768 threads".into(),
        ));
    }
    let mut pointers: Vec<HashSet<u64>> = vec![HashSet::new(); inputs.len()];
    let prepared = prepare_listing(inputs, |i, m| {
        pointers[i].insert(m);
    })?;
    // Method ids by name (one id per distinct name across inputs), in name order; id 1 is the
    // synthetic frame entered before the window.
    let mut by_name: BTreeMap<String, u32> = BTreeMap::new();
    for (i, set) in pointers.iter().enumerate() {
        for m in set {
            by_name.insert(
                names::display(&inputs[i].file.symbols, Some(*m)).into_owned(),
                0,
            );
        }
    }
    for (n, id) in by_name.values_mut().enumerate() {
        *id = BEFORE_ID + 1 + n as u32;
    }
    let ids: Vec<HashMap<u64, u32>> = pointers
        .iter()
        .enumerate()
        .map(|(i, set)| {
            set.iter()
                .map(|m| {
                    let name = names::display(&inputs[i].file.symbols, Some(*m));
                    (*m, by_name[name.as_ref()])
                })
                .collect()
        })
        .collect();
    drop(pointers);

    let tids = thread_ids_of(inputs, threads);
    let mut merged = Merged::new(&prepared);
    let start_ns = merged.peek_time().unwrap_or(0);
    let end_ns = prepared
        .iter()
        .map(|p| p.clock.wall_ns(p.input.file.header.reference_counter))
        .max()
        .unwrap_or(start_ns)
        .max(start_ns);
    let start_us = start_ns / 1000;
    let records: u64 = prepared
        .iter()
        .map(|p| 2 * (p.shape.before + p.shape.entries))
        .sum();

    let mut key = String::new();
    key.push_str("*version\n3\ndata-file-overflow=false\nclock=wall\n");
    key.push_str(&format!("elapsed-time-usec={}\n", end_ns / 1000 - start_us));
    key.push_str(&format!("num-method-calls={records}\n"));
    key.push_str("clock-call-overhead-nsec=0\nvm=art\n");
    key.push_str(&format!(
        "pid={}\n",
        inputs.first().map_or(0, |i| i.file.header.pid)
    ));
    key.push_str("*threads\n");
    let remapped = inputs
        .iter()
        .zip(&tids)
        .any(|(i, t)| u32::from(*t) != i.file.header.tid);
    for (i, (input, tid)) in inputs.iter().zip(&tids).enumerate() {
        if !crate::first_of_thread(threads, i) {
            continue;
        }
        let h = &input.file.header;
        let name = clean(&h.thread_name);
        if remapped {
            key.push_str(&format!("{tid}\t{name} (tid {})\n", h.tid));
        } else {
            key.push_str(&format!("{tid}\t{name}\n"));
        }
    }
    key.push_str("*methods\n");
    let any_before = prepared.iter().any(|p| p.shape.before > 0);
    if any_before {
        key.push_str(&format!(
            "{:#x}\t{}\t{}\t()\n",
            BEFORE_ID << 2,
            BEFORE_WINDOW_SPLIT.0,
            BEFORE_WINDOW_SPLIT.1
        ));
    }
    for (name, id) in &by_name {
        let s = names::split(name);
        key.push_str(&format!(
            "{:#x}\t{}\t{}\t{}\n",
            id << 2,
            clean(&s.class),
            clean(&s.method),
            clean(&s.signature)
        ));
    }
    key.push_str("*end\n");
    sink.write_all(key.as_bytes())?;

    let mut header = [0u8; HEADER_LEN as usize];
    header[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    header[4..6].copy_from_slice(&3u16.to_le_bytes());
    header[6..8].copy_from_slice(&HEADER_LEN.to_le_bytes());
    header[8..16].copy_from_slice(&start_us.to_le_bytes());
    header[16..18].copy_from_slice(&RECORD_LEN.to_le_bytes());
    sink.write_all(&header)?;

    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); inputs.len()];
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    for (i, ns, step) in merged.by_ref() {
        let (id, action) = match step {
            Step::Enter(method) => {
                let id = match method {
                    None => BEFORE_ID,
                    Some(m) => ids[i][&m],
                };
                stacks[i].push(id);
                (id, 0u32)
            }
            Step::Exit => (stacks[i].pop().unwrap_or(BEFORE_ID), 1u32),
        };
        let us = u32::try_from(ns / 1000 - start_us).map_err(|_| {
            ExportError::Unsupported(format!(
                "{}: the traces span more than 2^32 µs, which .trace cannot hold",
                inputs[i].name
            ))
        })?;
        buf.extend_from_slice(&tids[i].to_le_bytes());
        buf.extend_from_slice(&((id << 2) | action).to_le_bytes());
        buf.extend_from_slice(&us.to_le_bytes());
        if buf.len() >= 1 << 16 {
            sink.write_all(&buf)?;
            buf.clear();
        }
    }
    sink.write_all(&buf)?;
    sink.flush()?;
    Ok(())
}

/// Tabs and newlines would break the key section's lines.
fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(['\t', '\n', '\r']) {
        std::borrow::Cow::Owned(s.replace(['\t', '\n', '\r'], " "))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}
