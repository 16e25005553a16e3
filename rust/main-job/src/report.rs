//! The run's report as JSON.

use crate::run::Report;

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
