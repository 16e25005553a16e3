//! `hubble` on version 4 files (every thread of a process, runs with gaps): `decode` and
//! `info` against the test's model of the pool (`format/tests/common/pool_scenario.rs`), the
//! exports and analyses wired one thread per section, and bad input.

#[path = "../../format/tests/common/pool_scenario.rs"]
mod scenario;

mod common;
use common::{hubble, run};

use std::path::{Path, PathBuf};

use hubble_format::Mode;
use scenario::Scenario;

/// A scenario with a thread of several runs and one whose first run follows dropped records.
fn scenario_with_gaps(mode: Mode) -> Scenario {
    scenario::SEEDS
        .map(|seed| scenario::build(mode, seed))
        .find(|s| {
            let runs = s.expected_runs();
            runs.values().any(|r| r.len() > 1) && s.drops.iter().any(|(t, _)| runs.contains_key(t))
        })
        .expect("a seed with both gaps")
}

fn write(s: &Scenario, dir: &Path) -> PathBuf {
    let path = dir.join("1764000000000-4242-anr.hubble");
    std::fs::write(&path, s.file().to_bytes().unwrap()).unwrap();
    path
}

/// What `hubble decode` must print, from the model: per thread (by tid) and run, the header
/// line, the loss line when seq values are missing before the run, then the records, each time
/// printed as `time(counter)`.
fn expected_decode(s: &Scenario, time: impl Fn(u64) -> u64) -> String {
    let mut out = String::new();
    for (tid, runs) in s.expected_runs() {
        let mut next = 0u32;
        for (k, run) in runs.iter().enumerate() {
            out += &format!(
                "thread {tid} {}, run {} of {}, seq {}..{}\n",
                s.thread_name(tid),
                k + 1,
                runs.len(),
                run.first_seq,
                run.last_seq
            );
            if run.first_seq != next {
                out += &format!(
                    "records lost before this run ({} seq missing: blocks overwritten or \
                     records dropped)\n",
                    run.first_seq - next
                );
            }
            next = run.last_seq + 1;
            for (m, c) in &run.records {
                match m {
                    Some(m) => out += &format!("{}:{}\n", time(*c), s.name(*m)),
                    None => out += &format!("{}:POP\n", time(*c)),
                }
            }
        }
    }
    out
}

#[test]
fn decode_prints_each_threads_runs() {
    for mode in [Mode::Bits64, Mode::Bits32] {
        let s = scenario_with_gaps(mode);
        let dir = tempfile::tempdir().unwrap();
        let path = write(&s, dir.path());
        let hz = u128::from(s.timer_hz);
        let (code, out, err) = run(hubble().arg("decode").arg(&path));
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            out,
            expected_decode(&s, |c| (u128::from(c) * 1_000_000_000 / hz) as u64)
        );
        assert!(out.contains("records lost before this run"));
        let (code, out, _) = run(hubble().args(["decode", "--format", "ticks"]).arg(&path));
        assert_eq!(code, 0);
        assert_eq!(out, expected_decode(&s, |c| c));
        // The tree marks frames open at an older run's end apart from those running at the flush.
        let (code, out, _) = run(hubble().args(["decode", "--format", "tree"]).arg(&path));
        assert_eq!(code, 0);
        assert!(out.contains(", run 2 of "), "{out}");
    }
}

#[test]
fn info_lists_every_thread() {
    let s = scenario_with_gaps(Mode::Bits64);
    let dir = tempfile::tempdir().unwrap();
    let path = write(&s, dir.path());
    let (code, out, err) = run(hubble().arg("info").arg(&path));
    assert_eq!(code, 0, "{err}");
    let runs = s.expected_runs();
    assert!(out.contains("format:          version 4"), "{out}");
    assert!(out.contains("com.example.app (pid 4242)"), "{out}");
    assert!(
        out.contains(&format!("threads:         {} (", runs.len())),
        "{out}"
    );
    for (tid, runs) in &runs {
        let entries = runs
            .iter()
            .flat_map(|r| &r.records)
            .filter(|r| r.0.is_some())
            .count();
        let exits = runs.iter().map(|r| r.records.len()).sum::<usize>() - entries;
        let lost = runs.last().unwrap().last_seq + 1
            - runs
                .iter()
                .map(|r| r.last_seq - r.first_seq + 1)
                .sum::<u32>();
        let line = format!(
            "thread {tid} {}: {} run(s), seq {}..{}, {lost} seq missing, 1 anchor(s), {entries} \
             entries, {exits} exits over ",
            s.thread_name(*tid),
            runs.len(),
            runs[0].first_seq,
            runs.last().unwrap().last_seq
        );
        assert!(out.contains(&line), "want {line:?} in\n{out}");
    }
}

// The exports and analyses read every thread: one Perfetto track per thread, `tasks` one
// report per thread, and a v3 file beside a v4 one stays a thread of its own.
#[test]
fn export_and_analyses_take_one_thread_per_section() {
    let s = scenario_with_gaps(Mode::Bits64);
    let dir = tempfile::tempdir().unwrap();
    let path = write(&s, dir.path());
    let runs = s.expected_runs();
    let out = dir.path().join("out.pftrace");
    let (code, _, err) = run(hubble()
        .args(["export", "--format", "perfetto", "-o"])
        .arg(&out)
        .arg(&path));
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&out).unwrap();
    let file = s.file();
    let run_files = file.clone().into_run_files();
    let inputs: Vec<hubble_export::Input<'_>> = run_files
        .iter()
        .map(|r| hubble_export::Input {
            file: &r.file,
            name: "x",
        })
        .collect();
    let threads: Vec<usize> = run_files.iter().map(|r| r.section).collect();
    let mut want = Vec::new();
    hubble_export::perfetto::write_threads(&inputs, &threads, &mut want).unwrap();
    assert_eq!(bytes, want);

    let (code, out, err) = run(hubble().args(["tasks", "--json"]).arg(&path));
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let tids: Vec<u64> = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tid"].as_u64().unwrap())
        .collect();
    assert_eq!(tids, runs.keys().map(|t| u64::from(*t)).collect::<Vec<_>>());

    // Beside a v3 file whose tid is one of the v4 file's: still two threads in `.trace`.
    let mut v3 = run_files
        .iter()
        .find(|r| r.run + 1 == r.runs)
        .unwrap()
        .file
        .clone();
    v3.header.ring_bytes = v3.window.len() as u64 * 8;
    v3.header.write_pos = v3.header.ring_bytes;
    let v3_path = dir.path().join("v3.hubble");
    v3.write_atomic(&v3_path).unwrap();
    let trace = dir.path().join("out.trace");
    let (code, _, err) = run(hubble()
        .args(["export", "--format", "trace", "-o"])
        .arg(&trace)
        .arg(&path)
        .arg(&v3_path));
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read(&trace).unwrap();
    let key =
        String::from_utf8_lossy(&text[..text.windows(5).position(|w| w == b"*end\n").unwrap()]);
    let lines = key
        .split("*threads\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| !l.starts_with('*'))
        .count();
    assert_eq!(lines, runs.len() + 1, "{key}");
}

// A cut or corrupt v4 file: exit 2, one line naming the file, no output left behind.
#[test]
fn a_broken_v4_file_is_one_line_naming_it() {
    let s = scenario_with_gaps(Mode::Bits64);
    let dir = tempfile::tempdir().unwrap();
    let bytes = s.file().to_bytes().unwrap();
    let cut = dir.path().join("cut.hubble");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 3] ^= 0x10;
    let bad = dir.path().join("bad.hubble");
    std::fs::write(&bad, &flipped).unwrap();
    for (file, what) in [(&cut, "truncated"), (&bad, "")] {
        for args in [
            vec!["decode"],
            vec!["info"],
            vec!["top"],
            vec!["export", "--format", "perfetto", "-o", "never.pftrace"],
        ] {
            let (code, out, err) = run(hubble().current_dir(dir.path()).args(&args).arg(file));
            assert_eq!(code, 2, "{args:?}: {out}{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(&file.display().to_string()), "{err}");
            assert!(err.contains(what), "{err}");
            assert!(out.is_empty());
        }
    }
    assert!(!dir.path().join("never.pftrace").exists());
}

/// `export --format parquet` and `summary --parquet` take a version 4 file: one trace per
/// thread's run (its own id, tid and thread name), as many call rows as the model's frames of
/// that run, every call row under its run's id and tid; one summary for the file.
#[cfg(feature = "parquet")]
#[test]
fn parquet_tables_hold_one_trace_per_run_of_a_version_4_file() {
    use arrow_array::{Int64Array, StringArray};
    let s = scenario_with_gaps(Mode::Bits64);
    let dir = tempfile::tempdir().unwrap();
    let path = write(&s, dir.path());
    let id = hubble_fleet::tables::trace_id(&std::fs::read(&path).unwrap());
    let out = dir.path().join("fleet");
    let (code, _, err) = run(hubble()
        .args(["export", "--format", "parquet", "-o"])
        .arg(&out)
        .arg(&path));
    assert_eq!(code, 0, "{err}");
    let part = |table: &str| {
        let dir = out.join(table);
        let p = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        hubble_fleet::write::read_part(&p).unwrap().1
    };
    let strings = |b: &[arrow_array::RecordBatch], c: &str| -> Vec<String> {
        b.iter()
            .flat_map(|b| {
                let a = b.column_by_name(c).unwrap();
                let a = a.as_any().downcast_ref::<StringArray>().unwrap();
                a.iter().map(|v| v.unwrap().to_owned()).collect::<Vec<_>>()
            })
            .collect()
    };
    let ints = |b: &[arrow_array::RecordBatch], c: &str| -> Vec<i64> {
        b.iter()
            .flat_map(|b| {
                let a = b.column_by_name(c).unwrap();
                let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
                a.values().to_vec()
            })
            .collect()
    };
    // The model's frames per (tid, run).
    let mut want: Vec<(String, i64, String, i64)> = Vec::new();
    for (tid, runs) in s.expected_runs() {
        let frames = scenario::frames(&s.thread_steps()[&tid]);
        for run in 0..runs.len() {
            let n = frames.iter().filter(|f| f.run == run).count() as i64;
            want.push((
                hubble_fleet::tables::run_trace_id(&id, tid, run),
                i64::from(tid),
                s.thread_name(tid),
                n,
            ));
        }
    }
    let traces = part("traces");
    let (ids, tids) = (strings(&traces, "trace_id"), ints(&traces, "tid"));
    let (names, counts) = (strings(&traces, "thread"), ints(&traces, "calls"));
    let got: Vec<(String, i64, String, i64)> = (0..ids.len())
        .map(|i| (ids[i].clone(), tids[i], names[i].clone(), counts[i]))
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    want.sort();
    assert_eq!(sorted, want);
    let calls = part("calls");
    let call_ids = strings(&calls, "trace_id");
    let call_tids = ints(&calls, "tid");
    for (id, tid, _, n) in &want {
        let rows: Vec<usize> = (0..call_ids.len())
            .filter(|&i| &call_ids[i] == id)
            .collect();
        assert_eq!(rows.len() as i64, *n, "{id}");
        assert!(rows.iter().all(|&i| call_tids[i] == *tid), "{id}");
    }
    assert_eq!(call_ids.len() as i64, want.iter().map(|w| w.3).sum::<i64>());

    let sums = dir.path().join("sums");
    let (code, _, err) = run(hubble()
        .args(["summary", "--parquet"])
        .arg(&sums)
        .arg(&path));
    assert_eq!(code, 0, "{err}");
    let p = std::fs::read_dir(sums.join("summaries"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let (_, batches) = hubble_fleet::write::read_part(&p).unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
}

/// A thread whose first run lost nothing (seq 0) and whose second follows 4 missing seq: the
/// loss line only before the second; in the tree, a frame open at the first run's end is
/// marked apart from one still running at the flush.
#[test]
fn decode_marks_losses_and_open_frames_run_by_run() {
    use hubble_format::{ProcessHeader, Run, ThreadSection, ThreadsFile};
    use std::collections::BTreeMap;
    let entry = |counter: u64, method: u64| counter << 32 | method;
    let exit = |counter: u64| counter << 32;
    let (a, b, c) = (0x7000_0010, 0x7000_0020, 0x7000_0030);
    let new_run = |first_seq, first_ticket, first_counter, slots| Run {
        first_seq,
        blocks: 1,
        first_ticket,
        first_counter,
        slots,
    };
    let f = ThreadsFile {
        header: ProcessHeader {
            mode: Mode::Bits64,
            timer_hz: 1_000_000,
            reference_counter: 2000,
            wall_clock_ns: 1_700_000_000_000_000_000,
            pid: 7,
            process_name: "com.example".into(),
            reason: "anr".into(),
            metadata: BTreeMap::new(),
        },
        symbols: BTreeMap::from([
            (a, "void a.A()".to_owned()),
            (b, "void a.B()".to_owned()),
            (c, "void a.C()".to_owned()),
        ]),
        threads: vec![ThreadSection {
            tid: 5,
            thread_name: "main".into(),
            anchors: vec![],
            runs: vec![
                new_run(0, 1, 90, vec![entry(100, a)]),
                new_run(5, 9, 1000, vec![entry(1000, b), entry(1010, c), exit(1020)]),
            ],
        }],
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("1764000000000-7-anr.hubble");
    f.write_atomic(&path).unwrap();
    let (code, out, err) = run(hubble().args(["decode", "--format", "ticks"]).arg(&path));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "thread 5 main, run 1 of 2, seq 0..0\n\
         100:void a.A()\n\
         thread 5 main, run 2 of 2, seq 5..5\n\
         records lost before this run (4 seq missing: blocks overwritten or records dropped)\n\
         1000:void a.B()\n\
         1010:void a.C()\n\
         1020:POP\n"
    );
    let (code, out, err) = run(hubble().args(["decode", "--format", "tree"]).arg(&path));
    assert_eq!(code, 0, "{err}");
    let line = |name: &str| out.lines().find(|l| l.contains(name)).unwrap().to_owned();
    assert!(line("a.A()").ends_with(" (open at the run's end)"), "{out}");
    assert!(line("a.B()").ends_with(" us (running at flush)"), "{out}");
    assert!(line("a.C()").ends_with(" us"), "{out}");
    // `info`: the thread's line spans its first run's first record to its last run's last
    // (100 to 1020 ticks at 1 MHz); no task records, no line about them.
    let (code, out, err) = run(hubble().arg("info").arg(&path));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "thread 5 main: 2 run(s), seq 0..5, 4 seq missing, 0 anchor(s), 3 entries, 1 exits \
             over 0.920 ms\n"
        ),
        "{out}"
    );
    assert!(!out.contains("tasks:"), "{out}");
}
