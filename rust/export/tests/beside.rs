//! A Perfetto export written beside a system trace (`perfetto::write_threads_beside`): the
//! system trace's bytes unchanged, then exactly the packets the export writes alone (checked
//! against the steps in `writers.rs`) with the trace-clock snapshot left out, the sequence ids
//! moved past the system trace's and the track uuids past its own; and Hubble's timestamps,
//! resolved through both files' snapshots, on the system trace's BOOTTIME.

use std::io::Cursor;

use hubble_export::perfetto::{self, process_uuid, thread_uuid, INCREMENTAL_CLOCK};
use hubble_export::proto::trace_packet::{Data, OptionalTrustedPacketSequenceId};
use hubble_export::proto::{
    clock_snapshot, ClockSnapshot, ThreadDescriptor, Trace, TracePacket, TrackDescriptor,
    TrackEvent,
};
use hubble_export::system_trace::{SystemTrace, SystemTraceError};
use hubble_export::{ExportError, Input};
use hubble_format::stream::{prepare, Merged};
use hubble_format::{Mode, TraceFile};
use hubble_testkit::synth::{inputs, trace, Spec};
use prost::Message;

const REALTIME: u32 = 1;
const MONOTONIC: u32 = 3;
const BOOTTIME: u32 = 6;
/// REALTIME − BOOTTIME on the system trace's device.
const OFFSET: u64 = 1_699_995_019_171_260_886;

fn files() -> Vec<TraceFile> {
    (0..3u32)
        .map(|i| {
            trace(&Spec {
                mode: if i == 2 { Mode::Bits32 } else { Mode::Bits64 },
                ring_slots: 3000,
                laps: [1.7, 0.6, 2.3][i as usize],
                seed: 40 + u64::from(i),
                unresolved_every: 5,
                timer_hz: [19_200_000, 24_000_000, 62_500_000][i as usize],
                start_counter: (1 << 34) * u64::from(i + 1),
                wall_clock_ns: 1_700_000_000_000_000_000 + u64::from(i) * 1_000_000,
                pid: if i == 2 { 5151 } else { 4242 },
                tid: 100 + i,
                thread_name: format!("t{i}"),
                ..Spec::default()
            })
        })
        .collect()
}

fn seq(id: u32) -> Option<OptionalTrustedPacketSequenceId> {
    Some(OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(id))
}

fn seq_of(p: &TracePacket) -> Option<u32> {
    p.optional_trusted_packet_sequence_id
        .map(|OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(s)| s)
}

fn snapshot(seq_id: u32, clocks: &[(u32, u64)]) -> TracePacket {
    TracePacket {
        data: Some(Data::ClockSnapshot(ClockSnapshot {
            clocks: clocks
                .iter()
                .map(|&(id, ts)| clock_snapshot::Clock {
                    clock_id: Some(id),
                    timestamp: Some(ts),
                    is_incremental: None,
                })
                .collect(),
            primary_trace_clock: None,
        })),
        optional_trusted_packet_sequence_id: seq(seq_id),
        ..Default::default()
    }
}

/// A system trace around `[first, last]` (REALTIME ns): the service's snapshots of BOOTTIME,
/// MONOTONIC and REALTIME on sequence 1, an ftrace bundle (field 1, which the trimmed schema
/// does not know) on sequence 2, and an app's tracks on sequence `app_seq` with `uuids`.
fn system(first: u64, last: u64, app_seq: u32, uuids: &[u64]) -> Vec<u8> {
    let boot = |realtime: u64| realtime - OFFSET;
    let mut t = Trace::default();
    let (start, end) = (boot(first) - 1_000_000_000, boot(last) + 1_000_000_000);
    for k in 0..5 {
        let b = start + (end - start) * k / 4;
        t.packet.push(snapshot(
            1,
            &[
                (BOOTTIME, b),
                (MONOTONIC, b - 3_210_987_654),
                (REALTIME, b + OFFSET),
            ],
        ));
    }
    for &uuid in uuids {
        t.packet.push(TracePacket {
            data: Some(Data::TrackDescriptor(TrackDescriptor {
                uuid: Some(uuid),
                thread: Some(ThreadDescriptor {
                    pid: Some(4242),
                    tid: Some(100),
                    thread_name: None,
                }),
                ..Default::default()
            })),
            optional_trusted_packet_sequence_id: seq(app_seq),
            ..Default::default()
        });
        t.packet.push(TracePacket {
            timestamp: Some(start + 5),
            data: Some(Data::TrackEvent(TrackEvent {
                r#type: Some(3),
                track_uuid: Some(uuid),
                ..Default::default()
            })),
            optional_trusted_packet_sequence_id: seq(app_seq),
            ..Default::default()
        });
    }
    let mut bytes = t.encode_to_vec();
    // An ftrace bundle {cpu 0, event {timestamp, pid}} on sequence 2, as opaque bytes.
    let bundle = [0x08, 0x00, 0x12, 0x04, 0x08, 0x01, 0x10, 0x65];
    let mut packet = vec![0x0a, bundle.len() as u8];
    packet.extend(bundle);
    packet.extend([0x50, 0x02]);
    bytes.push(0x0a);
    bytes.push(packet.len() as u8);
    bytes.extend(packet);
    bytes
}

/// The first and last step of `inputs` (REALTIME ns).
fn span(inputs: &[Input<'_>]) -> (u64, u64) {
    let prepared = prepare(inputs).unwrap();
    let times: Vec<u64> = Merged::new(&prepared).map(|(_, ns, _)| ns).collect();
    (times[0], *times.last().unwrap())
}

fn beside(inputs: &[Input<'_>], system: &[u8]) -> Vec<u8> {
    let mut s = SystemTrace::scan("sys.pftrace", Cursor::new(system)).unwrap();
    let mut out = Vec::new();
    let threads = hubble_export::one_thread_per_input(inputs.len());
    perfetto::write_threads_beside(inputs, &threads, &mut s, &mut out).unwrap();
    out
}

/// `packet` as the export writes it beside a trace: on sequence `seq + moved`, track uuids XOR
/// `salt`.
fn relaid(mut p: TracePacket, moved: u32, salt: u64) -> TracePacket {
    if let Some(s) = seq_of(&p) {
        p.optional_trusted_packet_sequence_id = seq(s + moved);
    }
    if let Some(Data::TrackDescriptor(td)) = &mut p.data {
        td.uuid = td.uuid.map(|u| u ^ salt);
        td.parent_uuid = td.parent_uuid.map(|u| u ^ salt);
    }
    if let Some(d) = &mut p.trace_packet_defaults {
        if let Some(e) = &mut d.track_event_defaults {
            e.track_uuid = e.track_uuid.map(|u| u ^ salt);
        }
    }
    p
}

/// Beside a system trace whose app took sequence `app_seq` and `uuids`, the output is the
/// system trace, then the export's own packets but the first (the snapshot that makes REALTIME
/// the trace clock) with sequences moved past `app_seq` and uuids XOR `salt`.
fn check_relaid(app_seq: u32, uuids: &[u64], salt: u64) {
    let files = files();
    let inputs = inputs(&files);
    let (first, last) = span(&inputs);
    let sys = system(first, last, app_seq, uuids);
    let out = beside(&inputs, &sys);
    assert!(
        out.starts_with(&sys),
        "the system trace comes first, unchanged"
    );
    let mut alone = Vec::new();
    perfetto::write(&inputs, &mut alone).unwrap();
    let alone = Trace::decode(alone.as_slice()).unwrap().packet;
    let ours = Trace::decode(&out[sys.len()..]).unwrap().packet;
    assert!(matches!(
        &alone[0].data,
        Some(Data::ClockSnapshot(s)) if s.primary_trace_clock == Some(1)
    ));
    let want: Vec<TracePacket> = alone[1..]
        .iter()
        .map(|p| relaid(p.clone(), app_seq.max(2), salt))
        .collect();
    assert_eq!(ours.len(), want.len());
    for (k, (got, want)) in ours.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "packet {k}");
    }
    for p in &ours {
        if let Some(Data::TrackDescriptor(td)) = &p.data {
            assert!(!uuids.contains(&td.uuid.unwrap()));
        }
        assert!(seq_of(p).map_or(true, |s| s > app_seq.max(2)));
    }
}

#[test]
fn beside_a_system_trace_the_export_moves_its_sequences_and_uuids_out_of_the_way() {
    // The app took sequence 7 and the uuids the export gives the first process and thread
    // when alone: the export moves past both.
    check_relaid(7, &[process_uuid(4242), thread_uuid(0, 100)], 1 << 48);
    // Also the next range.
    check_relaid(
        3,
        &[thread_uuid(2, 102), thread_uuid(1, 101) ^ 1 << 48],
        2 << 48,
    );
    // Nothing taken: the uuids stay.
    check_relaid(2, &[0x1234_5678], 0);
}

/// Hubble's slices, resolved as trace processor resolves them (the sequence's incremental
/// clock to REALTIME through the sequence's snapshot, REALTIME to BOOTTIME through the system
/// trace's, the latest snapshot not after the timestamp), are the merged steps on BOOTTIME.
#[test]
fn hubble_slices_land_on_the_system_trace_clock() {
    let files = files();
    let inputs = inputs(&files);
    let (first, last) = span(&inputs);
    let sys = system(first, last, 7, &[]);
    let out = beside(&inputs, &sys);
    let n = Trace::decode(sys.as_slice()).unwrap().packet.len();
    let packets = Trace::decode(out.as_slice()).unwrap().packet;
    let mut system_snaps: Vec<(u64, u64)> = Vec::new(); // (REALTIME, BOOTTIME)
    let mut clock = std::collections::HashMap::new(); // sequence -> (incremental value, REALTIME - it)
    let mut got = Vec::new();
    for (k, p) in packets.iter().enumerate() {
        match &p.data {
            Some(Data::ClockSnapshot(s)) => {
                assert!(s.primary_trace_clock.is_none(), "packet {k}");
                let of = |id| {
                    s.clocks
                        .iter()
                        .find(|c| c.clock_id == Some(id))
                        .and_then(|c| c.timestamp)
                };
                if k < n {
                    system_snaps.push((of(REALTIME).unwrap(), of(BOOTTIME).unwrap()));
                } else {
                    let base = of(INCREMENTAL_CLOCK).unwrap();
                    clock.insert(seq_of(p).unwrap(), (base, of(REALTIME).unwrap() - base));
                }
            }
            Some(Data::TrackEvent(e)) if k >= n => {
                let s = seq_of(p).unwrap();
                let realtime = match p.timestamp_clock_id {
                    Some(REALTIME) => p.timestamp.unwrap(),
                    None => {
                        let (value, to_realtime) = clock.get_mut(&s).unwrap();
                        *value += p.timestamp.unwrap();
                        *value + *to_realtime
                    }
                    other => panic!("clock {other:?}"),
                };
                let at = system_snaps
                    .iter()
                    .rposition(|&(r, _)| r <= realtime)
                    .unwrap_or(0);
                let (r, b) = system_snaps[at];
                got.push((realtime + b - r, e.r#type == Some(1)));
            }
            _ => {}
        }
    }
    let prepared = prepare(&inputs).unwrap();
    let mut want: Vec<(u64, bool)> = Merged::new(&prepared)
        .map(|(_, ns, step)| (ns - OFFSET, matches!(step, hubble_export::Step::Enter(_))))
        .collect();
    assert!(want.len() > 1000);
    // Steps merge across threads in time order; the packets too, so compare as sorted lists
    // (the per-thread order is checked through the standalone export in `writers.rs`).
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn no_sequence_ids_left_is_an_error() {
    let files = files();
    let inputs = inputs(&files);
    let (first, last) = span(&inputs);
    let sys = system(first, last, u32::MAX - 1, &[0x99]);
    let mut s = SystemTrace::scan("sys.pftrace", Cursor::new(sys.as_slice())).unwrap();
    let mut out = Vec::new();
    let err = perfetto::write_threads_beside(&inputs, &[0, 1, 2], &mut s, &mut out).unwrap_err();
    assert!(
        matches!(&err, ExportError::Unsupported(m) if m.starts_with("sys.pftrace: its packet sequence ids reach 4294967294")),
        "{err}"
    );
    assert!(out.is_empty(), "nothing written");
}

/// A system trace that changes between its scan and the copy is its error, named.
#[test]
fn a_system_trace_cut_after_the_scan_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sys.pftrace");
    let files = files();
    let inputs = inputs(&files);
    let (first, last) = span(&inputs);
    let sys = system(first, last, 7, &[]);
    std::fs::write(&path, &sys).unwrap();
    let mut s = SystemTrace::scan("sys.pftrace", std::fs::File::open(&path).unwrap()).unwrap();
    std::fs::write(&path, &sys[..sys.len() / 2]).unwrap();
    let mut out = Vec::new();
    let err = perfetto::write_threads_beside(&inputs, &[0, 1, 2], &mut s, &mut out).unwrap_err();
    assert!(
        matches!(&err, ExportError::System(SystemTraceError::Changed { .. })),
        "{err}"
    );
    assert!(err.to_string().starts_with("sys.pftrace: changed"), "{err}");
}
