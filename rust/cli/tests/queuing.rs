//! `hubble tasks` on a version 4 file with task records: a serial queue (one worker) given
//! three tasks at once, the first slow. The JSON is the analysis's report; the text ranks the
//! site anomalous and names what its tasks waited behind; a bad `--tau-ms` is refused.

mod common;
use common::hubble;

use std::collections::BTreeMap;

use hubble_analysis::queuing::queuing;
use hubble_analysis::Input;
use hubble_format::pool::{self, Geometry, PoolWriter};
use hubble_format::slot::TaskKind;
use hubble_format::{Mode, ProcessHeader, ThreadsFile};
use hubble_testkit::stdout_of;

const HZ: u64 = 1_000_000;
const SITE: u64 = 0x7000_0100;
const EXECUTE: u64 = 0x7000_0200;
const RUN: u64 = 0x7000_0300;
const QUEUE: u32 = 0x0a5e_0001;

/// MAIN (tid 1) submits tasks 1, 2, 3 at 1, 10, 20 ms (+ 1 µs: the record after the entry);
/// the worker (tid 9) runs them from 2 ms, 900, 50 and 50 ms one after the other (1 µs between);
/// the flush comes at 2 s. The clock ticks every µs.
fn file() -> ThreadsFile {
    file_flushed_at(2000)
}

/// The same workload with the flush at `flush_ms`: records after it are not written.
fn file_flushed_at(flush_ms: u64) -> ThreadsFile {
    let geometry = Geometry {
        blocks: 16,
        block_slots: pool::BLOCK_HEADER_SLOTS + 32,
        active: 4,
    };
    let mut w = PoolWriter::new(Mode::Bits64, geometry, 0x10_0000);
    w.start_thread(1);
    w.start_thread(9);
    let ms = HZ / 1000;
    for (task, at) in [(1u32, 1), (2, 10), (3, 20)] {
        let c = at * ms;
        assert!(w.entry(1, SITE, c).unwrap() && w.entry(1, EXECUTE, c + 1).unwrap());
        assert!(w.task(1, TaskKind::Submit, task, QUEUE, c + 1).unwrap());
        assert!(w.exit(1, c + 2) && w.exit(1, c + 3));
    }
    let mut t = 2 * ms;
    for (task, takes) in [(1u32, 900), (2, 50), (3, 50)] {
        assert!(w.entry(9, RUN, t).unwrap());
        assert!(w.task(9, TaskKind::Begin, task, 0, t).unwrap());
        t += takes * ms;
        if t > flush_ms * ms {
            break;
        }
        assert!(w.exit(9, t));
        t += 1;
    }
    let streams = pool::thread_streams(&w.snapshot(), geometry, 0x10_0000).unwrap();
    ThreadsFile::from_streams(
        ProcessHeader {
            mode: Mode::Bits64,
            timer_hz: HZ,
            reference_counter: flush_ms * ms,
            wall_clock_ns: 1_700_000_000_000_000_000,
            pid: 7,
            process_name: "com.example.app".to_owned(),
            reason: "anr".to_owned(),
            metadata: BTreeMap::new(),
        },
        streams,
        &BTreeMap::from([(1, "main".to_owned()), (9, "serial".to_owned())]),
        &BTreeMap::new(),
        BTreeMap::from([
            (SITE, "void com.example.Feed.refresh()".to_owned()),
            (
                EXECUTE,
                "void java.util.concurrent.ThreadPoolExecutor.execute(java.lang.Runnable)"
                    .to_owned(),
            ),
            (RUN, "void com.example.FeedTask.run()".to_owned()),
        ]),
    )
}

#[test]
fn tasks_reports_queuing_from_task_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("anr.hubble");
    let f = file();
    f.write_atomic(&path).unwrap();
    let runs = f.into_run_files();
    let inputs: Vec<Input<'_>> = runs
        .iter()
        .map(|r| Input {
            file: &r.file,
            name: "anr.hubble",
        })
        .collect();
    let flushes: Vec<u64> = runs.iter().map(|_| 2_000_000).collect();
    let want = queuing(&inputs, &flushes, 500_000_000).unwrap();
    // The report itself, by hand: task 1 queued 2000 − 1001 µs; task 2 from 10 001 to
    // 2000 + 900 000 + 1 = 902 001 µs; task 3 from 20 001 to 902 001 + 50 000 + 1 µs, waiting
    // for tasks 1 and 2 to complete (queue length 2). Tasks ahead of the two queued over τ:
    // 1; 1 and 2: (900 + 900 + 50) / 3 ms.
    let q: Vec<(Option<u64>, Option<u64>)> = want
        .tasks
        .iter()
        .map(|t| (t.queued_ns, t.queue_length))
        .collect();
    assert_eq!(
        q,
        [
            (Some(999_000), Some(0)),
            (Some(892_000_000), Some(1)),
            (Some(932_001_000), Some(2)),
        ]
    );

    let out = stdout_of(hubble().args(["tasks", "--json"]).arg(&path));
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["queuing"], serde_json::to_value(&want).unwrap());

    let out = hubble().arg("tasks").arg(&path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "queuing (tau 500.000 ms): 3 tasks from 1 sites, 1 anomalous\n",
        "  ANOMALOUS void com.example.Feed.refresh(): 3 tasks, max queued 932.001 ms, max executed 900.000 ms, capacity 1\n",
        "      2 queued >= tau: mean queue length 1.50, mean execution of the tasks ahead 616.666 ms\n",
        "      behind    3 x void com.example.Feed.refresh()\n",
        "  queue 0x0a5e0001: capacity 1 (3 tasks)\n",
    ] {
        assert!(text.contains(line), "no {line:?} in\n{text}");
    }
    // Every task ended before the flush: no line about the flush.
    assert!(!text.contains("at the flush"), "{text}");

    // `hubble info` counts them: three submissions and three begins.
    let out = hubble().arg("info").arg(&path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("tasks:           6 task records (`hubble tasks`: queuing time)\n"),
        "{text}"
    );

    // A larger τ: nothing anomalous, no task queued that long.
    let out = hubble()
        .args(["tasks", "--tau-ms", "1000"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(", 0 anomalous\n") && text.contains("  ok void com.example.Feed.refresh()"),
        "{text}"
    );
    assert!(!text.contains("queued >= tau"), "{text}");

    for bad in ["-1", "NaN", "inf"] {
        let out = hubble()
            .args(["tasks", &format!("--tau-ms={bad}")])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--tau-ms") && err.contains("milliseconds"),
            "{bad}: {err}"
        );
    }
}

/// Flushed at 1000 ms, while task 3 runs (from 952 ms to 1002 ms): the report says so; at
/// 920 ms task 2 runs and task 3 is still queued.
#[test]
fn tasks_at_the_flush_are_reported_running_or_still_queued() {
    for (flush_ms, line) in [
        (1000, "  at the flush: 0 still queued, 1 running\n"),
        (920, "  at the flush: 1 still queued, 1 running\n"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("anr.hubble");
        file_flushed_at(flush_ms).write_atomic(&path).unwrap();
        let text = stdout_of(hubble().arg("tasks").arg(&path));
        assert!(
            text.contains(line),
            "flush at {flush_ms} ms: no {line:?} in\n{text}"
        );
    }
}

/// `--each`: every identity in the order of its first submission, each run with its submitting
/// thread and site, its queuing and execution time and the thread that ran it; at a flush
/// during task 2, task 2 is running and task 3 still queued.
#[test]
fn tasks_each_lists_every_identity_s_runs() {
    let site = "void com.example.Feed.refresh()";
    for (flush_ms, lines) in [
        (
            2000,
            [
                "tasks by identity: 3\n".to_owned(),
                "  task 0x00000001 (pid 7): 1 run\n".to_owned(),
                format!("    submitted on main at {site}, queued 0.999 ms, ran 900.000 ms on serial\n"),
                format!("    submitted on main at {site}, queued 892.000 ms, ran 50.000 ms on serial\n"),
                format!("    submitted on main at {site}, queued 932.001 ms, ran 50.000 ms on serial\n"),
            ],
        ),
        (
            920,
            [
                "tasks by identity: 3\n".to_owned(),
                "  task 0x00000003 (pid 7): 1 run\n".to_owned(),
                format!("    submitted on main at {site}, queued 0.999 ms, ran 900.000 ms on serial\n"),
                format!(
                    "    submitted on main at {site}, queued 892.000 ms, running for 17.999 ms on serial\n"
                ),
                format!("    submitted on main at {site}, still queued after 899.999 ms\n"),
            ],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("anr.hubble");
        file_flushed_at(flush_ms).write_atomic(&path).unwrap();
        let text = stdout_of(hubble().args(["tasks", "--each"]).arg(&path));
        for line in &lines {
            assert!(
                text.contains(line.as_str()),
                "flush at {flush_ms} ms: no {line:?} in\n{text}"
            );
        }
        let order: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  task 0x"))
            .collect();
        assert_eq!(
            order,
            [
                "  task 0x00000001 (pid 7): 1 run",
                "  task 0x00000002 (pid 7): 1 run",
                "  task 0x00000003 (pid 7): 1 run"
            ]
        );
        // Without --each, no such list.
        let text = stdout_of(hubble().arg("tasks").arg(&path));
        assert!(!text.contains("tasks by identity"), "{text}");
    }
}
