//! A shortened main job through the same path as scripts/main-job: the emitted A64 bytes in
//! unicorn, the real control thread, the runtime's jank trigger's flush (cooperative stop) and
//! a property flush (forced stop), every file checked slot for slot; then a tampered file must
//! fail the check.
use hubble_format::TraceFile;
use hubble_main_job::run::{run, Params};

#[test]
fn short_main_job_flushes_match_the_stream_and_tampering_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let params = Params {
        isa: hubble_main_job::run::Isa::A64,
        x86_blobs: None,
        invocations: 30_000,
        ring_bytes: 64 << 10,
        seed: 42,
        out: tmp.path().to_path_buf(),
        jank_threshold_ms: 150,
        // The runtime's trigger sees the frame at most threshold + two 250 ms ticks after it
        // began: 2000 ms of jank leaves it still running then, with room for a control thread
        // delayed by a loaded machine (1200 ms failed once beside two parallel compiles).
        jank_ms: 2000,
        chunk_ops: 10_000,
        verbose: true,
    };
    let report = run(&params).expect("main job");
    assert_eq!(
        report.files.len(),
        2,
        "a jank file and a startup-complete file"
    );
    let jank = &report.files[0];
    assert_eq!(jank.reason, "jank");
    assert!(
        !jank.forced,
        "the jank stop is answered by the running thread"
    );
    let (_, frame_start, frame_end) = report.jank_frame;
    assert!(
        jank.stop_op >= frame_start && jank.stop_op < frame_end,
        "stopped inside the janky frame"
    );
    assert!(
        !jank.has_start,
        "the 64 KiB ring wrapped: the window is a suffix"
    );
    let done = &report.files[1];
    assert_eq!(done.reason, "startup-complete");
    assert!(done.forced, "the idle thread (native) is force-stopped");
    assert!(jank.restart_op.unwrap() >= jank.stop_op);
    // The flush came from the runtime's duration trigger, and the file shows the long frame.
    let fired = report.trigger.as_ref().expect("the trigger fired");
    assert_eq!(fired.reason, "jank");
    assert_eq!(fired.method, "android.view.Choreographer.doFrame");
    // At or past the threshold (an open frame is reported when a tick finds it there; the
    // duration's milliseconds truncate, so 150.03 ms reads 150).
    assert!(
        fired.duration >= std::time::Duration::from_millis(150),
        "{fired:?}"
    );
    assert_eq!(fired.path.as_deref(), Some(jank.path.as_path()));
    assert!(report.jank_file_longest_frame_ms > 150);
    assert!(report.methods_low_high.0 > 0 && report.methods_low_high.1 > 0);

    // The check is not vacuous: one entry's pointer swapped for another method's fails it.
    let mut file = TraceFile::read(&jank.path).unwrap();
    let (i, other) = {
        let methods: Vec<u64> = file
            .symbols
            .keys()
            .copied()
            .filter(|m| m >> 32 == 0)
            .collect();
        let i = file
            .window
            .iter()
            .rposition(|s| (*s as u32) > 3 && methods.contains(&u64::from(*s as u32)))
            .unwrap();
        let current = u64::from(file.window[i] as u32);
        (i, *methods.iter().find(|m| **m != current).unwrap())
    };
    file.window[i] = (file.window[i] & !0xffff_ffff) | other;
    file.write_atomic(&jank.path).unwrap();
    let err = report.evidence.check(params.ring_bytes).unwrap_err();
    assert!(err.to_string().contains("slot"), "{err}");
}
