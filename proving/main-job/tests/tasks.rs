//! The many-thread scene (`main-job tasks`): four threads running ART's x86_64 trace points
//! natively in many-thread mode, task records from `tp::Task`, an ANR flush by the runtime's
//! SIGQUIT path; every thread's records and `hubble tasks`' figures checked exactly. Then a
//! tampered file and a wrong figure must each fail the check.
//!
//! Needs the blob file of `scripts/hotpath-x86-gen` (ART's x86_64 assembler, built against the
//! patched libart.so), so it is `#[ignore]`d in the workspace run and run by stage 41:
//!   HUBBLE_X86_BLOBS="$(scripts/hotpath-x86-gen)" cargo test -p hubble-main-job --test tasks -- --ignored
use hubble_format::slot::{encode_task, TaskKind};
use hubble_format::Trace;
use hubble_main_job::tasks::{run, Params};

#[test]
#[ignore = "needs HUBBLE_X86_BLOBS (scripts/hotpath-x86-gen); tests/stages/41-hotpath-x86.sh runs it"]
fn many_threads_tasks_and_an_anr_come_back_exactly_and_tampering_is_caught() {
    let blobs = std::env::var_os("HUBBLE_X86_BLOBS")
        .expect("HUBBLE_X86_BLOBS: the blob file of scripts/hotpath-x86-gen");
    let tmp = tempfile::tempdir().unwrap();
    let mut p = Params::new(blobs.into(), tmp.path().to_path_buf());
    p.shape.slow_ms = 1500;
    p.anr_after_ms = 600;
    let mut report = run(&p).expect("the scene and its checks");

    let by_name = |n: &str| report.threads.iter().find(|t| t.name == n).unwrap();
    assert_eq!(report.threads.len(), 4);
    let busy = by_name("AsyncTask #1");
    assert!(
        !busy.forced,
        "the worker running the slow task answers the doorbell"
    );
    assert!(busy.blocks >= 2, "its records filled several pool blocks");
    assert_eq!(busy.task_records, 1, "the slow task's Begin");
    for waiting in ["main", "pool-1-thread-1", "pool-1-thread-2"] {
        assert!(by_name(waiting).forced, "{waiting} waits: stopped by force");
    }
    assert_eq!(by_name("main").task_records, 13, "one Submit per task");
    let q = &report.queuing;
    assert_eq!(q.tasks.len(), 13);
    assert_eq!(q.tasks.iter().filter(|t| t.still_queued).count(), 4);
    assert_eq!(q.tasks.iter().filter(|t| t.running).count(), 1);
    assert!(q.groups[0].anomalous && !q.groups[1].anomalous);

    // A wrong figure: one queued task's queue length as the scene knows it.
    report.evidence.known[2].at_submit += 1;
    let err = format!("{:#}", report.evidence.check().unwrap_err());
    assert!(err.contains("hubble tasks reports"), "{err}");
    report.evidence.known[2].at_submit -= 1;
    report.evidence.check().expect("the figures restored");

    // A tampered file: one Submit record names another task.
    let kn = &report.evidence.known[3];
    let queue = report.evidence.scene.units[kn.unit].queue;
    let payload = encode_task(TaskKind::Submit, kn.task, queue, 0).unwrap()[0];
    let Trace::Threads(mut file) = Trace::read(&report.file).unwrap() else {
        panic!("not a version 4 file");
    };
    let slot = file
        .threads
        .iter_mut()
        .flat_map(|t| t.runs.iter_mut())
        .flat_map(|r| r.slots.iter_mut())
        .find(|s| **s == payload)
        .expect("the Submit record's payload in the file");
    *slot ^= 0x10; // the task identity's lowest bit (bits 4..31 of the low word)
    file.write_atomic(&report.file).unwrap();
    let err = format!("{:#}", report.evidence.check().unwrap_err());
    assert!(err.contains("decodes as"), "{err}");
}
