//! The Parquet tables against references computed without the code under test: the call tree
//! of the format crate (`hubble_format::build_tree`, the trusted base), with its own arithmetic
//! for wall-clock times, and a file of another schema version written by hand.

use std::collections::BTreeMap;

use arrow_array::{Array, Int32Array, Int64Array, RecordBatch, StringArray};
use hubble_fleet::schema::{Table, METADATA_COLUMNS};
use hubble_fleet::tables::{trace_id, TraceTables};
use hubble_fleet::write::{check_part, read_part, write_part};
use hubble_fleet::FleetError;
use hubble_format::names::display;
use hubble_format::stream::Input;
use hubble_format::{build_tree, TraceFile, TreeOptions};
use hubble_testkit::synth::{trace, Spec};

type CallRow = (String, i32, i64, i64, i64, Option<String>);

fn floor_ns(ticks: u64, hz: u64) -> i64 {
    (u128::from(ticks) * 1_000_000_000 / u128::from(hz)) as i64
}

/// Every call of `file` from the format crate's tree, times by hand.
fn reference_calls(file: &TraceFile) -> Vec<CallRow> {
    let h = &file.header;
    let events = file.decode_events().unwrap().events;
    let tree = build_tree(&events, h.reference_counter, TreeOptions::default());
    let mut child_ticks = vec![0u64; tree.frames.len()];
    for f in &tree.frames {
        if let Some(p) = f.parent {
            child_ticks[p as usize] += f.end - f.start;
        }
    }
    let wall = |counter: u64| -> i64 {
        // Frames never end after the reference (the flush) in these traces.
        assert!(counter <= h.reference_counter);
        h.wall_clock_ns as i64 - floor_ns(h.reference_counter - counter, h.timer_hz)
    };
    let mut rows: Vec<CallRow> = tree
        .frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            (
                display(&file.symbols, f.method).into_owned(),
                f.depth as i32,
                wall(f.start),
                floor_ns(f.end - f.start, h.timer_hz),
                floor_ns(f.end - f.start - child_ticks[i], h.timer_hz),
                f.parent
                    .map(|p| display(&file.symbols, tree.frames[p as usize].method).into_owned()),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// The column `name` of `batch`, as the array type `T` it must be.
fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> &'a T {
    batch
        .column_by_name(name)
        .unwrap()
        .as_any()
        .downcast_ref()
        .unwrap()
}

fn strings<'a>(batch: &'a RecordBatch, name: &str) -> &'a StringArray {
    column(batch, name)
}

fn ints<'a>(batch: &'a RecordBatch, name: &str) -> &'a Int64Array {
    column(batch, name)
}

fn table_calls(calls: &RecordBatch, id: &str) -> Vec<CallRow> {
    let ids = strings(calls, "trace_id");
    let depth: &Int32Array = column(calls, "depth");
    let parent = strings(calls, "parent");
    let mut rows: Vec<CallRow> = (0..calls.num_rows())
        .filter(|&i| ids.value(i) == id)
        .map(|i| {
            (
                strings(calls, "method").value(i).to_owned(),
                depth.value(i),
                ints(calls, "start_ns").value(i),
                ints(calls, "duration_ns").value(i),
                ints(calls, "self_ns").value(i),
                (!parent.is_null(i)).then(|| parent.value(i).to_owned()),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn specs() -> Vec<Spec> {
    vec![
        Spec::default(),
        Spec {
            seed: 7,
            timer_hz: 24_576_000,
            unresolved_every: 9,
            laps: 0.6,
            tid: 4250,
            thread_name: "RenderThread".into(),
            ..Spec::default()
        },
        Spec {
            seed: 11,
            timer_hz: 1_000_000_000,
            mode: hubble_format::Mode::Bits32,
            laps: 3.0,
            ..Spec::default()
        },
    ]
}

#[test]
fn calls_are_the_call_tree_row_for_row() {
    let files: Vec<TraceFile> = specs().iter().map(trace).collect();
    let mut tables = TraceTables::new();
    let extra = BTreeMap::from([("app.version".to_owned(), "4.2.0".to_owned())]);
    let mut ids = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let bytes = f.to_bytes().unwrap();
        ids.push(trace_id(&bytes));
        let name = format!("t{i}.hubble");
        tables
            .add(
                Input {
                    file: f,
                    name: &name,
                },
                &bytes,
                &extra,
            )
            .unwrap();
    }
    let (traces, calls) = tables.finish().unwrap();
    assert_eq!(traces.num_rows(), files.len());
    for (f, id) in files.iter().zip(&ids) {
        let want = reference_calls(f);
        assert!(
            want.len() > 100,
            "{} calls: a trivial trace proves nothing",
            want.len()
        );
        let got = table_calls(&calls, id);
        if got != want {
            let i = got.iter().zip(&want).position(|(g, w)| g != w);
            panic!(
                "{id}: {} rows, {} wanted; first difference at {i:?}: {:?} vs {:?}",
                got.len(),
                want.len(),
                i.map(|i| &got[i]),
                i.map(|i| &want[i])
            );
        }
        let row = (0..traces.num_rows())
            .find(|&r| strings(&traces, "trace_id").value(r) == id)
            .unwrap();
        let h = &f.header;
        assert_eq!(strings(&traces, "app").value(row), h.process_name);
        assert_eq!(strings(&traces, "thread").value(row), h.thread_name);
        assert_eq!(ints(&traces, "tid").value(row), i64::from(h.tid));
        assert_eq!(ints(&traces, "calls").value(row), want.len() as i64);
        assert_eq!(ints(&traces, "timer_hz").value(row), h.timer_hz as i64);
        assert_eq!(strings(&traces, "app_version").value(row), "4.2.0");
        assert!(strings(&traces, "device_model").is_null(row));
    }
}

#[test]
fn ingest_metadata_overrides_the_files_own_and_unknown_keys_stay_out() {
    let mut f = trace(&Spec::default());
    f.header.metadata = BTreeMap::from([
        ("device.model".to_owned(), "Pixel 8".to_owned()),
        ("app.version".to_owned(), "old".to_owned()),
        ("x.other".to_owned(), "ignored".to_owned()),
    ]);
    let bytes = f.to_bytes().unwrap();
    let mut tables = TraceTables::new();
    let extra = BTreeMap::from([("app.version".to_owned(), "5.0".to_owned())]);
    tables
        .add(
            Input {
                file: &f,
                name: "a",
            },
            &bytes,
            &extra,
        )
        .unwrap();
    let (traces, _) = tables.finish().unwrap();
    assert_eq!(strings(&traces, "device_model").value(0), "Pixel 8");
    assert_eq!(strings(&traces, "app_version").value(0), "5.0");
    let names: Vec<String> = traces
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert!(!names.iter().any(|n| n.contains("other")), "{names:?}");
    for (_, column) in METADATA_COLUMNS {
        assert!(names.iter().any(|n| n == column), "{column}");
    }
}

#[test]
fn parts_round_trip_and_carry_their_table_and_version() {
    let files: Vec<TraceFile> = specs().iter().map(trace).collect();
    let mut tables = TraceTables::new();
    for f in &files {
        let bytes = f.to_bytes().unwrap();
        tables
            .add(Input { file: f, name: "x" }, &bytes, &BTreeMap::new())
            .unwrap();
    }
    let (traces, calls) = tables.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (table, batch) in [(Table::Traces, &traces), (Table::Calls, &calls)] {
        let path = write_part(dir.path(), table, "part-0", batch).unwrap();
        assert_eq!(path, dir.path().join(table.name()).join("part-0.parquet"));
        let (back_table, back) = read_part(&path).unwrap();
        assert_eq!(back_table, table);
        let back = arrow_select_concat(&back);
        assert_eq!(&back, batch);
    }
    // Nothing but the two parts: no temporary file left behind.
    let mut left: Vec<String> = walk(dir.path());
    left.sort();
    assert_eq!(left, ["calls/part-0.parquet", "traces/part-0.parquet"]);
    // A batch of the wrong table is refused before anything is written.
    assert!(matches!(
        write_part(dir.path(), Table::Traces, "bad", &calls),
        Err(FleetError::Schema { .. })
    ));
    assert!(!dir.path().join("traces/bad.parquet").exists());
}

fn walk(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root).unwrap() {
        let dir = dir.unwrap().path();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            out.push(f.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
    out
}

/// Concatenates read-back batches (the reader splits a part into batches of 1024 rows).
fn arrow_select_concat(batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(&batches[0].schema(), batches).unwrap()
}

/// A Parquet file of another schema version, or not ours at all, is refused by name and with
/// the versions involved.
#[test]
fn other_schema_versions_and_foreign_files_get_a_clear_error() {
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    let dir = tempfile::tempdir().unwrap();
    let (traces, _) = {
        let f = trace(&Spec::default());
        let bytes = f.to_bytes().unwrap();
        let mut t = TraceTables::new();
        t.add(
            Input {
                file: &f,
                name: "x",
            },
            &bytes,
            &BTreeMap::new(),
        )
        .unwrap();
        t.finish().unwrap()
    };
    let write = |name: &str, kv: Vec<KeyValue>| {
        let path = dir.path().join(name);
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(kv))
            .build();
        let mut w = ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            traces.schema(),
            Some(props),
        )
        .unwrap();
        w.write(&traces).unwrap();
        w.close().unwrap();
        path
    };
    let v2 = write(
        "v2.parquet",
        vec![
            KeyValue::new("hubble.table".into(), "traces".to_string()),
            KeyValue::new("hubble.schema".into(), "2".to_string()),
        ],
    );
    let err = check_part(&v2).unwrap_err().to_string();
    assert!(
        err.contains("v2.parquet") && err.contains("schema version 2") && err.contains("version 1"),
        "{err}"
    );
    let foreign = write("foreign.parquet", vec![]);
    let err = check_part(&foreign).unwrap_err().to_string();
    assert!(
        err.contains("foreign.parquet") && err.contains("not a Hubble"),
        "{err}"
    );
    let text = dir.path().join("text.parquet");
    std::fs::write(&text, "not parquet").unwrap();
    let err = check_part(&text).unwrap_err().to_string();
    assert!(err.contains("text.parquet"), "{err}");
}

// Several windows (a version 4 file's runs) go in all or nothing: one undecodable window (a
// reserved control value) leaves no trace and no call row of any of them; the good ones alone
// go in, each under its own id.
#[test]
fn windows_are_added_all_or_nothing() {
    let good = trace(&Spec::default());
    let mut bad = good.clone();
    bad.header.tid += 1;
    bad.window = vec![hubble_format::slot::pack(1, 5)];
    let input = |file| Input {
        file,
        name: "v4.hubble",
    };
    let mut tables = TraceTables::new();
    let err = tables
        .add_all(
            &[
                (input(&good), "f-t1-r0".to_owned()),
                (input(&bad), "f-t2-r0".to_owned()),
            ],
            &BTreeMap::new(),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("reserved control value 5"),
        "{err}"
    );
    assert_eq!((tables.traces(), tables.calls()), (0, 0));
    tables
        .add_all(
            &[
                (input(&good), "f-t1-r0".to_owned()),
                (input(&good), "f-t1-r1".to_owned()),
            ],
            &BTreeMap::new(),
        )
        .unwrap();
    let (traces, calls) = tables.finish().unwrap();
    let ids: Vec<&str> = strings(&traces, "trace_id")
        .iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(ids, ["f-t1-r0", "f-t1-r1"]);
    assert_eq!(calls.num_rows(), 2 * reference_calls(&good).len());
    assert_eq!(
        hubble_fleet::tables::run_trace_id("abc", 42, 3),
        "abc-t42-r3"
    );
}
