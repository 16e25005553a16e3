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

/// Writes `v` as a protobuf varint into `out`, returning the bytes used.
#[inline]
fn varint(mut v: u64, out: &mut [u8]) -> usize {
    let mut i = 0;
    while v >= 0x80 {
        out[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    out[i] = v as u8;
    i + 1
}

/// A multiplicative hasher for pointer keys (the default SipHash is a third of the hot loop).
#[derive(Clone, Copy, Default)]
struct FastHash;

impl std::hash::BuildHasher for FastHash {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher(0)
    }
}

struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        // The product's high half is well mixed; fold it down for hashbrown's bucket index.
        self.0 ^ (self.0 >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }
    fn write_isize(&mut self, v: isize) {
        self.write_u64(v as u64);
    }
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
    /// The hot path: a track-event packet without interned data, encoded by hand, fields in
    /// number order — timestamp 8, sequence id 10, track_event 11 {type 9, name_iid 10},
    /// sequence_flags 13. The unit test below decodes it with prost; the stage checks every
    /// packet against Perfetto's own schema.
    #[inline]
    fn event(&mut self, ns: u64, seq: u32, kind: u64, iid: Option<u64>) -> Result<()> {
        let mut te = [0u8; 24];
        let mut n = 0;
        te[n] = 0x48; // type = 9, varint
        n += 1;
        n += varint(kind, &mut te[n..]);
        if let Some(iid) = iid {
            te[n] = 0x50; // name_iid = 10, varint
            n += 1;
            n += varint(iid, &mut te[n..]);
        }
        let mut p = [0u8; 64];
        let mut m = 0;
        p[m] = 0x40; // timestamp = 8
        m += 1;
        m += varint(ns, &mut p[m..]);
        p[m] = 0x50; // trusted_packet_sequence_id = 10
        m += 1;
        m += varint(u64::from(seq), &mut p[m..]);
        p[m] = 0x5a; // track_event = 11, length-delimited
        m += 1;
        m += varint(n as u64, &mut p[m..]);
        p[m..m + n].copy_from_slice(&te[..n]);
        m += n;
        p[m] = 0x68; // sequence_flags = 13
        p[m + 1] = SEQ_NEEDS_INCREMENTAL_STATE as u8;
        m += 2;
        self.buf.push(0x0a);
        let mut len = [0u8; 10];
        let l = varint(m as u64, &mut len);
        self.buf.extend_from_slice(&len[..l]);
        self.buf.extend_from_slice(&p[..m]);
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

    let mut interned: Vec<HashMap<Option<u64>, u64, FastHash>> =
        (0..inputs.len()).map(|_| HashMap::default()).collect();
    // A direct-mapped cache in front of the tables: call streams revisit few methods at a
    // time. Key 0 is free (no method pointer is 0); `None` is cached as key 1 (never a pointer).
    const CACHE: usize = 1 << 12;
    let mut cache: Vec<Vec<(u64, u64)>> = vec![vec![(0, 0); CACHE]; inputs.len()];
    for (i, ns, step) in merged.by_ref() {
        let seq = i as u32 + 1;
        match step {
            Step::Enter(method) => {
                let key = method.unwrap_or(1);
                let slot = &mut cache[i][((key >> 3) ^ (key >> 15)) as usize & (CACHE - 1)];
                if slot.0 == key {
                    out.event(ns, seq, track_event::Type::SliceBegin as u64, Some(slot.1))?;
                    continue;
                }
                let table = &mut interned[i];
                let next = table.len() as u64 + 1;
                let mut fresh = false;
                let iid = *table.entry(method).or_insert_with(|| {
                    fresh = true;
                    next
                });
                *slot = (key, iid);
                if fresh {
                    // First use of the name in this sequence: intern it in this packet.
                    out.packet(&TracePacket {
                        timestamp: Some(ns),
                        optional_trusted_packet_sequence_id: Some(
                            trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(
                                seq,
                            ),
                        ),
                        sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                        interned_data: Some(InternedData {
                            event_names: vec![EventName {
                                iid: Some(iid),
                                name: Some(
                                    names::display(&inputs[i].file.symbols, method).into_owned(),
                                ),
                            }],
                        }),
                        data: Some(trace_packet::Data::TrackEvent(TrackEvent {
                            r#type: Some(track_event::Type::SliceBegin as i32),
                            name_field: Some(track_event::NameField::NameIid(iid)),
                            ..Default::default()
                        })),
                        ..Default::default()
                    })?;
                } else {
                    out.event(ns, seq, track_event::Type::SliceBegin as u64, Some(iid))?;
                }
            }
            Step::Exit => out.event(ns, seq, track_event::Type::SliceEnd as u64, None)?,
        }
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_encoded_events_decode_with_prost() {
        for (ns, seq, kind, iid) in [
            (0u64, 1u32, 1u64, Some(1u64)),
            (1_700_000_000_123_456_789, 300, 1, Some(123_456)),
            (u64::MAX, u32::MAX, 2, None),
        ] {
            let mut sink = Vec::new();
            let mut out = Out {
                buf: Vec::new(),
                sink: &mut sink,
            };
            out.event(ns, seq, kind, iid).unwrap();
            out.finish().unwrap();
            let trace = proto::Trace::decode(sink.as_slice()).unwrap();
            let want = TracePacket {
                timestamp: Some(ns),
                optional_trusted_packet_sequence_id: Some(
                    trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(seq),
                ),
                sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                data: Some(trace_packet::Data::TrackEvent(TrackEvent {
                    r#type: Some(kind as i32),
                    name_field: iid.map(track_event::NameField::NameIid),
                    ..Default::default()
                })),
                ..Default::default()
            };
            assert_eq!(trace.packet, vec![want]);
        }
    }
}
