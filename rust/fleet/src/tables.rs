//! Trace files and summaries into Arrow record batches.
//!
//! A call row is a frame as the analyses see it ([`hubble_analysis::walk`]): frames cut by the
//! window edges are balanced the way every exporter balances them, so `calls` agrees with
//! `hubble top` (a test checks it) and with the Perfetto and `.trace` exports.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use hubble_analysis::summary::Summary;
use hubble_format::clock::WallClock;
use hubble_format::names;
use hubble_format::stream::Input;

use crate::schema::{Table, METADATA_COLUMNS};
use crate::Result;

/// A trace's identity across a fleet: FNV-1a (64-bit) of the file's bytes, in hex. Two uploads
/// of the same file get the same id, so a batch exported twice does not count twice.
pub fn trace_id(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Saturating conversion for the tables' signed columns (a u64 count beyond i64 is absurd).
fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Metadata for the metadata columns: the file's own, overridden by `extra` (what the ingest
/// step knows, e.g. `app.version`).
fn metadata_values(
    own: &BTreeMap<String, String>,
    extra: &BTreeMap<String, String>,
) -> Vec<Option<String>> {
    METADATA_COLUMNS
        .iter()
        .map(|(key, _)| extra.get(*key).or_else(|| own.get(*key)).cloned())
        .collect()
}

/// The `traces` and `calls` rows of a batch of trace files.
#[derive(Default)]
pub struct TraceTables {
    traces: Vec<TraceRow>,
    calls: CallColumns,
}

struct TraceRow {
    id: String,
    file: String,
    app: String,
    reason: String,
    meta: Vec<Option<String>>,
    pid: i64,
    tid: i64,
    thread: String,
    isa_bits: i64,
    timer_hz: i64,
    flush_wall_ns: i64,
    window_start_ns: i64,
    window_end_ns: i64,
    ring_bytes: i64,
    window_slots: i64,
    symbols: i64,
    calls: i64,
}

#[derive(Default)]
struct CallColumns {
    trace_id: StringBuilder,
    tid: Int64Builder,
    method: StringBuilder,
    depth: Int32Builder,
    start_ns: Int64Builder,
    duration_ns: Int64Builder,
    self_ns: Int64Builder,
    parent: StringBuilder,
    rows: usize,
}

impl TraceTables {
    /// Empty tables.
    pub fn new() -> TraceTables {
        TraceTables::default()
    }

    /// Traces added so far.
    pub fn traces(&self) -> usize {
        self.traces.len()
    }

    /// Call rows added so far.
    pub fn calls(&self) -> usize {
        self.calls.rows
    }

    /// Adds one trace file: `bytes` is the file as stored (its identity), `extra` metadata the
    /// ingest step adds. On error nothing of this input has been added.
    pub fn add(
        &mut self,
        input: Input<'_>,
        bytes: &[u8],
        extra: &BTreeMap<String, String>,
    ) -> Result<()> {
        self.add_all(&[(input, trace_id(bytes))], extra)
    }

    /// Adds several windows, each a trace with its id: the runs of a version 4 file, one trace
    /// per thread's run ([`run_trace_id`]). All or nothing: on error none of them has been added.
    pub fn add_all(
        &mut self,
        inputs: &[(Input<'_>, String)],
        extra: &BTreeMap<String, String>,
    ) -> Result<()> {
        // Every input's rows are collected first and appended only if every walk succeeds, so
        // a bad input in a batch leaves no partial rows behind.
        let collected = inputs
            .iter()
            .map(|(input, id)| collect(*input, id, extra))
            .collect::<Result<Vec<_>>>()?;
        for (trace, rows) in collected {
            let c = &mut self.calls;
            for r in &rows {
                c.trace_id.append_value(&trace.id);
                c.tid.append_value(trace.tid);
                c.method.append_value(&r.method);
                c.depth.append_value(r.depth);
                c.start_ns.append_value(r.start_ns);
                c.duration_ns.append_value(r.duration_ns);
                c.self_ns.append_value(r.self_ns);
                c.parent.append_option(r.parent.as_deref());
            }
            c.rows += rows.len();
            self.traces.push(trace);
        }
        Ok(())
    }
}

/// The id of run `run` of thread `tid` in a version 4 file whose bytes have id `file_id`: each
/// run is a window of its own, so a trace of the tables (`<file id>-t<tid>-r<run>`, the run
/// counted from 0); version 1–3 files keep the file's id.
pub fn run_trace_id(file_id: &str, tid: u32, run: usize) -> String {
    format!("{file_id}-t{tid}-r{run}")
}

/// A call row before it is appended.
struct Row {
    method: String,
    depth: i32,
    start_ns: i64,
    duration_ns: i64,
    self_ns: i64,
    parent: Option<String>,
}

/// One input's trace row and call rows.
fn collect(
    input: Input<'_>,
    id: &str,
    extra: &BTreeMap<String, String>,
) -> Result<(TraceRow, Vec<Row>)> {
    let h = &input.file.header;
    let id = id.to_owned();
    let clock = WallClock::new(h);
    let symbols = &input.file.symbols;
    let mut rows: Vec<Row> = Vec::new();
    let (mut first, mut last) = (u64::MAX, 0u64);
    hubble_analysis::walk::walk(input, |ancestors, frame| {
        first = first.min(frame.start);
        last = last.max(frame.end);
        // Durations in ticks, converted once (as `hubble top` does): a difference of two
        // converted times could be a rounding nanosecond off.
        let ns = |ticks: u64| i64::try_from(clock.ticks_to_ns(ticks)).unwrap_or(i64::MAX);
        rows.push(Row {
            method: names::display(symbols, frame.method).into_owned(),
            depth: i32::try_from(ancestors.len()).unwrap_or(i32::MAX),
            start_ns: i64_of(clock.wall_ns(frame.start)),
            duration_ns: ns(frame.ticks()),
            self_ns: ns(frame.self_ticks()),
            parent: ancestors
                .last()
                .map(|a| names::display(symbols, a.method).into_owned()),
        });
    })?;
    let (start_ns, end_ns) = if rows.is_empty() {
        (
            clock.wall_ns(h.reference_counter),
            clock.wall_ns(h.reference_counter),
        )
    } else {
        (clock.wall_ns(first), clock.wall_ns(last))
    };
    let trace = TraceRow {
        id,
        file: input.name.to_owned(),
        app: h.process_name.clone(),
        reason: h.reason.clone(),
        meta: metadata_values(&h.metadata, extra),
        pid: i64::from(h.pid),
        tid: i64::from(h.tid),
        thread: h.thread_name.clone(),
        isa_bits: if h.mode == hubble_format::Mode::Bits64 {
            64
        } else {
            32
        },
        timer_hz: i64_of(h.timer_hz),
        flush_wall_ns: i64_of(h.wall_clock_ns),
        window_start_ns: i64_of(start_ns),
        window_end_ns: i64_of(end_ns),
        ring_bytes: i64_of(h.ring_bytes),
        window_slots: i64_of(input.file.window.len() as u64),
        symbols: i64_of(input.file.symbols.len() as u64),
        calls: i64_of(rows.len() as u64),
    };
    Ok((trace, rows))
}

impl TraceTables {
    /// The `traces` and `calls` batches.
    pub fn finish(mut self) -> Result<(RecordBatch, RecordBatch)> {
        let t = &self.traces;
        let text = |f: &dyn Fn(&TraceRow) -> &str| -> ArrayRef {
            let mut b = StringBuilder::new();
            for r in t {
                b.append_value(f(r));
            }
            Arc::new(b.finish())
        };
        let int = |f: &dyn Fn(&TraceRow) -> i64| -> ArrayRef {
            let mut b = Int64Builder::new();
            for r in t {
                b.append_value(f(r));
            }
            Arc::new(b.finish())
        };
        let mut columns: Vec<ArrayRef> = vec![
            text(&|r| &r.id),
            text(&|r| &r.file),
            text(&|r| &r.app),
            text(&|r| &r.reason),
        ];
        for i in 0..METADATA_COLUMNS.len() {
            let mut b = StringBuilder::new();
            for r in t {
                b.append_option(r.meta[i].as_deref());
            }
            columns.push(Arc::new(b.finish()));
        }
        columns.extend([
            int(&|r| r.pid),
            int(&|r| r.tid),
            text(&|r| &r.thread),
            int(&|r| r.isa_bits),
            int(&|r| r.timer_hz),
            int(&|r| r.flush_wall_ns),
            int(&|r| r.window_start_ns),
            int(&|r| r.window_end_ns),
            int(&|r| r.ring_bytes),
            int(&|r| r.window_slots),
            int(&|r| r.symbols),
            int(&|r| r.calls),
        ]);
        let traces = RecordBatch::try_new(Table::Traces.schema(), columns)?;
        let c = &mut self.calls;
        let calls = RecordBatch::try_new(
            Table::Calls.schema(),
            vec![
                Arc::new(c.trace_id.finish()),
                Arc::new(c.tid.finish()),
                Arc::new(c.method.finish()),
                Arc::new(c.depth.finish()),
                Arc::new(c.start_ns.finish()),
                Arc::new(c.duration_ns.finish()),
                Arc::new(c.self_ns.finish()),
                Arc::new(c.parent.finish()),
            ],
        )?;
        Ok((traces, calls))
    }
}

/// The summary tables (`summaries`, `summary_top`, `summary_signatures`) of summaries, each
/// with the device-class metadata the uploader attaches.
#[derive(Default)]
pub struct SummaryTables {
    id: StringBuilder,
    meta: Vec<StringBuilder>,
    schema: Int64Builder,
    window: Int64Builder,
    top: (
        StringBuilder,
        Int32Builder,
        StringBuilder,
        Int64Builder,
        Int64Builder,
        Int64Builder,
    ),
    sig: (
        StringBuilder,
        StringBuilder,
        Int64Builder,
        Int64Builder,
        Int64Builder,
    ),
}

impl SummaryTables {
    /// Empty tables.
    pub fn new() -> SummaryTables {
        SummaryTables {
            meta: (0..METADATA_COLUMNS.len())
                .map(|_| StringBuilder::new())
                .collect(),
            ..SummaryTables::default()
        }
    }

    /// Adds a summary with the device-class `metadata` its uploader attaches. Its id is the hash
    /// of its JSON (`hubble summary --json`'s output) and that metadata, so the same summary
    /// uploaded twice has one id.
    pub fn add(&mut self, summary: &Summary, metadata: &BTreeMap<String, String>) -> Result<()> {
        let json = serde_json::to_vec(&(summary, metadata)).map_err(|e| {
            crate::FleetError::Parameter(format!("cannot serialize a summary: {e}"))
        })?;
        let id = trace_id(&json);
        self.id.append_value(&id);
        for (b, v) in self
            .meta
            .iter_mut()
            .zip(metadata_values(metadata, &BTreeMap::new()))
        {
            b.append_option(v);
        }
        self.schema.append_value(i64::from(summary.hubble_summary));
        self.window.append_value(i64_of(summary.chain_window_ns));
        for (rank, m) in summary.top.iter().enumerate() {
            self.top.0.append_value(&id);
            self.top
                .1
                .append_value(i32::try_from(rank + 1).unwrap_or(i32::MAX));
            self.top.2.append_value(&m.method);
            self.top.3.append_value(i64_of(m.calls));
            self.top.4.append_value(i64_of(m.self_ns));
            self.top.5.append_value(i64_of(m.inclusive_ns));
        }
        for s in &summary.matched {
            self.sig.0.append_value(&id);
            self.sig.1.append_value(&s.signature);
            self.sig.2.append_value(i64_of(s.count));
            self.sig.3.append_value(i64_of(s.total_ns));
            self.sig.4.append_value(i64_of(s.max_ns));
        }
        Ok(())
    }

    /// The three batches: `summaries`, `summary_top`, `summary_signatures`.
    pub fn finish(mut self) -> Result<[RecordBatch; 3]> {
        let mut summaries: Vec<ArrayRef> = vec![Arc::new(self.id.finish())];
        for b in &mut self.meta {
            summaries.push(Arc::new(b.finish()));
        }
        summaries.push(Arc::new(self.schema.finish()));
        summaries.push(Arc::new(self.window.finish()));
        let t = &mut self.top;
        let s = &mut self.sig;
        Ok([
            RecordBatch::try_new(Table::Summaries.schema(), summaries)?,
            RecordBatch::try_new(
                Table::SummaryTop.schema(),
                vec![
                    Arc::new(t.0.finish()),
                    Arc::new(t.1.finish()),
                    Arc::new(t.2.finish()),
                    Arc::new(t.3.finish()),
                    Arc::new(t.4.finish()),
                    Arc::new(t.5.finish()),
                ],
            )?,
            RecordBatch::try_new(
                Table::SummarySignatures.schema(),
                vec![
                    Arc::new(s.0.finish()),
                    Arc::new(s.1.finish()),
                    Arc::new(s.2.finish()),
                    Arc::new(s.3.finish()),
                    Arc::new(s.4.finish()),
                ],
            )?,
        ])
    }
}
