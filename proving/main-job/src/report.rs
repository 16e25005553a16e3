//! The run's report: what a run produced, and the same as JSON.

use crate::proof::{Evidence, FileCheck};

/// Which trace points run the UI thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// The emitted A64 bytes in unicorn (the default).
    A64,
    /// The emitted x86_64 bytes natively on this CPU ([`crate::native`]).
    X86_64,
}

/// Everything a run produced.
pub struct Report {
    /// Ops in the stream.
    pub ops: usize,
    /// Method invocations.
    pub invocations: usize,
    /// Exceptions (multi-frame unwinds).
    pub exceptions: usize,
    /// Deepest stack.
    pub max_depth: usize,
    /// Distinct methods below / above 4 GiB.
    pub methods_low_high: (usize, usize),
    /// Ring bytes.
    pub ring_bytes: usize,
    /// Work iterations per µs.
    pub iters_per_us: u64,
    /// Which trace points ran.
    pub isa: Isa,
    /// The clock's frequency (Hz).
    pub timer_hz: u64,
    /// Emulated time of the stream (ms, wall).
    pub emulate_ms: u128,
    /// Trace points that wrote a record (counter reads in the emitted code).
    pub records_written: u64,
    /// The janky frame: number and op range.
    pub jank_frame: (usize, usize, usize),
    /// The `debug.hubble.triggers` value the run set.
    pub trigger_spec: String,
    /// The runtime's trigger firing that wrote the jank file.
    pub trigger: Option<hubble_runtime::triggers::Fired>,
    /// The longest `doFrame` in the jank file, from its own events (ms; an open one counted to
    /// the file's reference counter).
    pub jank_file_longest_frame_ms: u64,
    /// Control-plane counters.
    pub cooperative_stops: u64,
    /// Forced stops.
    pub forced_stops: u64,
    /// Files written.
    pub files: Vec<FileCheck>,
    /// What the files were checked against.
    pub evidence: Evidence,
}

/// The report as JSON (hand-written: no serde in this crate).
pub fn report_json(r: &Report) -> String {
    let files: Vec<String> = r
        .files
        .iter()
        .map(|f| {
            format!(
                "    {{\"path\": {:?}, \"reason\": {:?}, \"stop\": {:?}, \"stop_op\": {}, \"write_pos\": {}, \"slots\": {}, \"records\": {}, \"pads\": {}, \"window_has_start_record\": {}, \"first_op\": {}, \"symbols\": {}, \"restart_op\": {}, \"slot_for_slot\": \"match\"}}",
                f.path.display().to_string(),
                f.reason,
                if f.forced { "forced (native)" } else { "cooperative (doorbell)" },
                f.stop_op,
                f.write_pos,
                f.slots,
                f.records,
                f.pads,
                f.has_start,
                f.first_op,
                f.symbols,
                f.restart_op.map_or("null".to_string(), |o| o.to_string())
            )
        })
        .collect();
    format!(
        "{{\n  \"ops\": {},\n  \"invocations\": {},\n  \"exceptions\": {},\n  \"max_depth\": {},\n  \"methods_below_4g\": {},\n  \"methods_above_4g\": {},\n  \"ring_bytes\": {},\n  \"iters_per_us\": {},\n  \"emulate_ms\": {},\n  \"records_written\": {},\n  \"jank_frame\": {{\"number\": {}, \"first_op\": {}, \"end_op\": {}}},\n  \"trigger_spec\": {:?},\n  \"trigger_fired\": {},\n  \"jank_file_longest_frame_ms\": {},\n  \"cooperative_stops\": {},\n  \"forced_stops\": {},\n  \"files\": [\n{}\n  ]\n}}\n",
        r.ops,
        r.invocations,
        r.exceptions,
        r.max_depth,
        r.methods_low_high.0,
        r.methods_low_high.1,
        r.ring_bytes,
        r.iters_per_us,
        r.emulate_ms,
        r.records_written,
        r.jank_frame.0,
        r.jank_frame.1,
        r.jank_frame.2,
        r.trigger_spec,
        r.trigger.as_ref().map_or("null".to_string(), |f| format!(
            "{{\"reason\": {:?}, \"method\": {:?}, \"ms\": {}, \"call_returned\": {}}}",
            f.reason,
            f.method,
            f.duration.as_millis(),
            f.exited
        )),
        r.jank_file_longest_frame_ms,
        r.cooperative_stops,
        r.forced_stops,
        files.join(",\n")
    )
}
