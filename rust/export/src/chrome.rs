//! Chrome trace-event JSON (`chrome://tracing`, Perfetto's JSON importer): `B`/`E` events.
//!
//! `ts` is microseconds (three decimals, so nanoseconds survive) since the earliest step of all
//! inputs; that origin's wall-clock time is in `otherData.wall_clock_origin_ns`. Process and
//! thread names are `M` (metadata) events.

use std::collections::HashMap;
use std::io::Write;

use crate::Result;
use hubble_format::names;
use hubble_format::stream::Input;
use hubble_format::stream::{prepare, Merged, Step};

/// Appends `s` as a JSON string literal.
pub fn json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            }
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// Writes `inputs` as one Chrome JSON trace, one thread per input.
pub fn write(inputs: &[Input<'_>], sink: &mut dyn Write) -> Result<()> {
    write_threads(inputs, &crate::one_thread_per_input(inputs.len()), sink)
}

/// Writes `inputs` as one Chrome JSON trace, input `i` in thread `threads[i]` (its events carry
/// the thread's tid; the thread is named once).
pub fn write_threads(inputs: &[Input<'_>], threads: &[usize], sink: &mut dyn Write) -> Result<()> {
    crate::check_threads(inputs, threads)?;
    let prepared = prepare(inputs)?;
    let mut merged = Merged::new(&prepared);
    let origin = merged.peek_time().unwrap_or(0);
    let mut out: Vec<u8> = Vec::with_capacity(1 << 17);
    out.extend_from_slice(
        format!("{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"wall_clock_origin_ns\":\"{origin}\",\"producer\":\"hubble export\"}},\"traceEvents\":[\n").as_bytes(),
    );
    let mut first = true;
    let mut comma = |out: &mut Vec<u8>| {
        if !first {
            out.extend_from_slice(b",\n");
        }
        first = false;
    };
    let mut seen_pids = std::collections::BTreeSet::new();
    for (i, input) in inputs.iter().enumerate() {
        let h = &input.file.header;
        if seen_pids.insert(h.pid) {
            comma(&mut out);
            out.extend_from_slice(
                format!("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":", h.pid, h.pid).as_bytes(),
            );
            json_string(&mut out, &h.process_name);
            out.extend_from_slice(b"}}");
        }
        if !crate::first_of_thread(threads, i) {
            continue;
        }
        comma(&mut out);
        out.extend_from_slice(
            format!("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":", h.pid, h.tid).as_bytes(),
        );
        json_string(&mut out, &h.thread_name);
        out.extend_from_slice(b"}}");
    }
    let mut names_cache: Vec<HashMap<Option<u64>, Vec<u8>>> = vec![HashMap::new(); inputs.len()];
    for (i, ns, step) in merged.by_ref() {
        let h = &inputs[i].file.header;
        let rel = ns - origin;
        comma(&mut out);
        match step {
            Step::Enter(method) => {
                out.extend_from_slice(b"{\"ph\":\"B\",\"name\":");
                let name = names_cache[i].entry(method).or_insert_with(|| {
                    let mut v = Vec::new();
                    json_string(&mut v, &names::display(&inputs[i].file.symbols, method));
                    v
                });
                out.extend_from_slice(name);
            }
            Step::Exit => out.extend_from_slice(b"{\"ph\":\"E\""),
        }
        out.extend_from_slice(
            format!(
                ",\"pid\":{},\"tid\":{},\"ts\":{}.{:03}}}",
                h.pid,
                h.tid,
                rel / 1000,
                rel % 1000
            )
            .as_bytes(),
        );
        if out.len() >= 1 << 16 {
            sink.write_all(&out)?;
            out.clear();
        }
    }
    out.extend_from_slice(b"\n]}\n");
    sink.write_all(&out)?;
    sink.flush()?;
    Ok(())
}
