//! Perfetto: a `Trace` of `TracePacket`s, streamed (each packet is one length-delimited field 1).
//!
//! * one clock snapshot declaring `BUILTIN_CLOCK_REALTIME` the trace's clock: every timestamp
//!   is wall-clock nanoseconds from the file's reference pair, so threads of different files
//!   line up;
//! * one process track per pid and one thread track per input (a child of its process);
//! * one packet sequence per input, opened with `SEQ_INCREMENTAL_STATE_CLEARED` and defaults
//!   (clock and track), then a `TYPE_SLICE_BEGIN` / `TYPE_SLICE_END` track event per step;
//!   slice names are interned (`InternedData.event_names`) on first use in the sequence.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use prost::Message;

use crate::names;
use crate::proto::{
    self, clock_snapshot, trace_packet, track_event, ClockSnapshot, EventName, InternedData,
    ProcessDescriptor, ThreadDescriptor, TracePacket, TracePacketDefaults, TrackDescriptor,
    TrackEvent, TrackEventDefaults,
};
use crate::stream::{prepare, Merged, Step};
use crate::{Input, Result};

const REALTIME: u32 = proto::BuiltinClock::Realtime as u32;
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// The track uuid of a process.
pub fn process_uuid(pid: u32) -> u64 {
    0x4855_4242_0000_0000 | u64::from(pid)
}

/// The track uuid of input `index` (a thread).
pub fn thread_uuid(index: usize, tid: u32) -> u64 {
    0x4855_4254_0000_0000 ^ ((index as u64 + 1) << 32) ^ u64::from(tid)
}

struct Out<'w> {
    buf: Vec<u8>,
    sink: &'w mut dyn Write,
}

impl Out<'_> {
    fn packet(&mut self, packet: &TracePacket) -> Result<()> {
        // Trace.packet = field 1, length-delimited.
        self.buf.push(0x0a);
        prost::encoding::encode_varint(packet.encoded_len() as u64, &mut self.buf);
        packet.encode_raw(&mut self.buf);
        if self.buf.len() >= 1 << 16 {
            self.sink.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
    fn finish(self) -> Result<()> {
        self.sink.write_all(&self.buf)?;
        self.sink.flush()?;
        Ok(())
    }
}

/// Writes `inputs` as one Perfetto trace.
pub fn write(inputs: &[Input<'_>], sink: &mut dyn Write) -> Result<()> {
    let prepared = prepare(inputs, |_, _| {})?;
    let mut out = Out {
        buf: Vec::with_capacity(1 << 17),
        sink,
    };
    let mut merged = Merged::new(&prepared)?;
    let first_ns = merged.peek_time();

    out.packet(&TracePacket {
        timestamp: first_ns,
        data: Some(trace_packet::Data::ClockSnapshot(ClockSnapshot {
            clocks: vec![clock_snapshot::Clock {
                clock_id: Some(REALTIME),
                timestamp: first_ns,
            }],
            primary_trace_clock: Some(proto::BuiltinClock::Realtime as i32),
        })),
        ..Default::default()
    })?;
    let mut pids: BTreeMap<u32, &str> = BTreeMap::new();
    for input in inputs {
        pids.entry(input.file.header.pid)
            .or_insert(&input.file.header.process_name);
    }
    for (pid, name) in &pids {
        out.packet(&TracePacket {
            data: Some(trace_packet::Data::TrackDescriptor(TrackDescriptor {
                uuid: Some(process_uuid(*pid)),
                process: Some(ProcessDescriptor {
                    pid: Some(*pid as i32),
                    process_name: Some((*name).to_owned()),
                }),
                ..Default::default()
            })),
            ..Default::default()
        })?;
    }
    for (i, input) in inputs.iter().enumerate() {
        let h = &input.file.header;
        let uuid = thread_uuid(i, h.tid);
        out.packet(&TracePacket {
            data: Some(trace_packet::Data::TrackDescriptor(TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(process_uuid(h.pid)),
                thread: Some(ThreadDescriptor {
                    pid: Some(h.pid as i32),
                    tid: Some(i64::from(h.tid)),
                    thread_name: Some(h.thread_name.clone()),
                }),
                ..Default::default()
            })),
            optional_trusted_packet_sequence_id: Some(
                trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(
                    i as u32 + 1,
                ),
            ),
            sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
            first_packet_on_sequence: Some(true),
            trace_packet_defaults: Some(TracePacketDefaults {
                timestamp_clock_id: Some(REALTIME),
                track_event_defaults: Some(TrackEventDefaults {
                    track_uuid: Some(uuid),
                }),
            }),
            ..Default::default()
        })?;
    }

    let mut interned: Vec<HashMap<Option<u64>, u64>> = vec![HashMap::new(); inputs.len()];
    let mut packet = TracePacket {
        sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
        ..Default::default()
    };
    for (i, ns, step) in merged.by_ref() {
        packet.timestamp = Some(ns);
        packet.optional_trusted_packet_sequence_id = Some(
            trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(i as u32 + 1),
        );
        packet.interned_data = None;
        let event = match step {
            Step::Enter(method) => {
                let table = &mut interned[i];
                let next = table.len() as u64 + 1;
                let iid = *table.entry(method).or_insert_with(|| {
                    packet.interned_data = Some(InternedData {
                        event_names: vec![EventName {
                            iid: Some(next),
                            name: Some(
                                names::display(&inputs[i].file.symbols, method).into_owned(),
                            ),
                        }],
                    });
                    next
                });
                TrackEvent {
                    r#type: Some(track_event::Type::SliceBegin as i32),
                    name_field: Some(track_event::NameField::NameIid(iid)),
                    ..Default::default()
                }
            }
            Step::Exit => TrackEvent {
                r#type: Some(track_event::Type::SliceEnd as i32),
                ..Default::default()
            },
        };
        packet.data = Some(trace_packet::Data::TrackEvent(event));
        out.packet(&packet)?;
    }
    out.finish()
}
