//! Perfetto: a `Trace` of `TracePacket`s, streamed (each packet is one length-delimited field 1).
//!
//! * one clock snapshot declaring `BUILTIN_CLOCK_REALTIME` the trace's clock: every timestamp
//!   is wall-clock nanoseconds from the file's reference pair, so threads of different files
//!   line up;
//! * one process track per pid and one thread track per input (a child of its process);
//! * one packet sequence per input. It opens, as the Perfetto SDK's sequences do, with one
//!   packet carrying `SEQ_INCREMENTAL_STATE_CLEARED`, the defaults (clock [`INCREMENTAL_CLOCK`],
//!   the thread's track) and a clock snapshot that defines that sequence-scoped clock as
//!   delta-encoded nanoseconds (`is_incremental`) equal to REALTIME at the trace's first step.
//!   Then the thread's track descriptor, then the names of the file's symbol table, interned
//!   once (`InternedData.event_names`, iid = rank of the pointer in the table), then one
//!   `TYPE_SLICE_BEGIN` / `TYPE_SLICE_END` track event per step, whose timestamp is the delta
//!   from the sequence's previous timestamp. A method missing from the symbol table is interned
//!   in the packet that first uses it; a step earlier than its predecessor (never seen) would
//!   carry an absolute REALTIME timestamp, as the SDK does.

use std::io::Write;

use prost::Message;

use crate::names;
use crate::proto::{
    self, clock_snapshot, trace_packet, track_event, ClockSnapshot, EventName, InternedData,
    ProcessDescriptor, ThreadDescriptor, TracePacket, TracePacketDefaults, TrackDescriptor,
    TrackEvent, TrackEventDefaults,
};
use crate::stream::{prepare, Merged, Step};
use crate::{Input, Result, BEFORE_WINDOW};

const REALTIME: u32 = proto::BuiltinClock::Realtime as u32;
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// The sequence-scoped clock (ids 64–127 are per sequence) that slice timestamps use: ns,
/// delta-encoded. The Perfetto SDK's `TrackEventIncrementalState::kClockIdIncremental`.
pub const INCREMENTAL_CLOCK: u32 = 64;

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

/// Appends `v` as a protobuf varint.
fn push_varint(v: u64, out: &mut Vec<u8>) {
    let mut b = [0u8; 10];
    let n = varint(v, &mut b);
    out.extend_from_slice(&b[..n]);
}

/// Pointer → interning id of one sequence: open addressing with linear probing, at most half
/// full, keyed by the method pointer (iid 0 marks a free slot; iids start at 1).
struct IidTable {
    slots: Vec<(u64, u64)>,
    shift: u32,
    len: usize,
}

impl IidTable {
    fn with_capacity(n: usize) -> IidTable {
        let size = (2 * n).max(16).next_power_of_two();
        IidTable {
            slots: vec![(0, 0); size],
            shift: 64 - size.trailing_zeros(),
            len: 0,
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing: the product's high bits mix every bit of the pointer.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn get(&self, key: u64) -> Option<u64> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let (k, iid) = self.slots[i];
            if iid == 0 {
                return None;
            }
            if k == key {
                return Some(iid);
            }
            i = (i + 1) & mask;
        }
    }

    /// Inserts a key that is not in the table.
    fn insert(&mut self, key: u64, iid: u64) {
        if 2 * (self.len + 1) > self.slots.len() {
            let old = std::mem::take(&mut self.slots);
            *self = IidTable::with_capacity(old.len());
            for (k, v) in old.into_iter().filter(|s| s.1 != 0) {
                self.insert(k, v);
            }
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        while self.slots[i].1 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = (key, iid);
        self.len += 1;
    }
}

/// Pointer → interning id for a file's symbol table: iid = 1 + the pointer's rank in the table
/// (its pointers are sorted). ART packs `ArtMethod`s in arrays, so the pointers cluster: the
/// index is a bitmap of the table's pointers, 64 aligned addresses a word, kept with the rank of
/// the word's first pointer in an open-addressing table keyed by the word's address. A lookup is
/// one probe, a mask and a popcount, in a table a few times smaller than one slot per method (the
/// benchmark's 50 000 methods: 4 688 words instead of 50 000 keys), so it stays in cache.
struct SymbolIndex {
    /// (word address, bits, rank of its first pointer); bits 0 marks a free slot.
    slots: Vec<(u64, u64, u64)>,
    shift: u32,
    /// Every pointer of the table is a multiple of 2^`align`.
    align: u32,
}

impl SymbolIndex {
    fn new<'p>(pointers: impl Iterator<Item = &'p u64> + Clone) -> SymbolIndex {
        // The coarsest alignment shared by every pointer, so a word covers as much as it can.
        let align = pointers
            .clone()
            .map(|p| p.trailing_zeros())
            .min()
            .unwrap_or(0)
            .min(57);
        let mut words: Vec<(u64, u64, u64)> = Vec::new();
        for (rank, p) in pointers.enumerate() {
            let (word, bit) = (p >> (align + 6), (p >> align) & 63);
            match words.last_mut() {
                Some(w) if w.0 == word => w.1 |= 1 << bit,
                _ => words.push((word, 1 << bit, rank as u64)),
            }
        }
        let size = (2 * words.len()).max(16).next_power_of_two();
        let mut index = SymbolIndex {
            slots: vec![(0, 0, 0); size],
            shift: 64 - size.trailing_zeros(),
            align,
        };
        let mask = size - 1;
        for w in words {
            let mut i = index.home(w.0);
            while index.slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            index.slots[i] = w;
        }
        index
    }

    #[inline]
    fn home(&self, word: u64) -> usize {
        (word.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn get(&self, ptr: u64) -> Option<u64> {
        if ptr & ((1 << self.align) - 1) != 0 {
            return None;
        }
        let (word, bit) = (ptr >> (self.align + 6), (ptr >> self.align) & 63);
        let mask = self.slots.len() - 1;
        let mut i = self.home(word);
        loop {
            let (w, bits, rank) = self.slots[i];
            if bits == 0 {
                return None;
            }
            if w == word {
                let b = 1u64 << bit;
                if bits & b == 0 {
                    return None;
                }
                return Some(rank + u64::from((bits & (b - 1)).count_ones()) + 1);
            }
            i = (i + 1) & mask;
        }
    }
}

/// One input's packet sequence: its id, incremental clock and names.
struct Sequence {
    id: u32,
    /// The sequence's incremental clock: the last timestamp written on it (ns).
    last: u64,
    /// The symbol table's names (interned up front).
    symbols: SymbolIndex,
    /// Names interned on first use: pointers missing from the symbol table.
    names: IidTable,
    /// Iid of [`BEFORE_WINDOW`].
    before: u64,
    /// Next iid for a name missing from the symbol table.
    next: u64,
}

impl Sequence {
    /// The timestamp field of a packet at `ns`: the delta from the sequence's previous timestamp
    /// (which it becomes), or, for a step before it, `ns` itself on REALTIME (clock id returned),
    /// leaving the incremental clock alone — how the Perfetto SDK handles time going backwards.
    #[inline]
    fn stamp(&mut self, ns: u64) -> (u64, Option<u32>) {
        if ns >= self.last {
            let delta = ns - self.last;
            self.last = ns;
            (delta, None)
        } else {
            (ns, Some(REALTIME))
        }
    }
}

/// Packets go to a fixed buffer that is handed to the sink in large writes.
const FLUSH_AT: usize = 1 << 18;
/// Room past [`FLUSH_AT`] for one hot-path packet (at most 36 bytes).
const SLACK: usize = 64;

struct Out<'w> {
    buf: Vec<u8>,
    pos: usize,
    sink: &'w mut dyn Write,
    /// Cold-path packets are encoded here first.
    scratch: Vec<u8>,
}

impl<'w> Out<'w> {
    fn new(sink: &'w mut dyn Write) -> Out<'w> {
        Out {
            buf: vec![0; FLUSH_AT + SLACK],
            pos: 0,
            sink,
            scratch: Vec::new(),
        }
    }

    fn drain(&mut self) -> Result<()> {
        self.sink.write_all(&self.buf[..self.pos])?;
        self.pos = 0;
        Ok(())
    }

    fn bytes(&mut self, data: &[u8]) -> Result<()> {
        if self.pos + data.len() > self.buf.len() {
            self.drain()?;
            if data.len() > self.buf.len() {
                self.sink.write_all(data)?;
                return Ok(());
            }
        }
        self.buf[self.pos..self.pos + data.len()].copy_from_slice(data);
        self.pos += data.len();
        Ok(())
    }

    /// The packet in `self.scratch` (its body), framed as `Trace.packet` (field 1).
    fn scratch_packet(&mut self) -> Result<()> {
        let body = std::mem::take(&mut self.scratch);
        let mut head = [0u8; 11];
        head[0] = 0x0a;
        let n = 1 + varint(body.len() as u64, &mut head[1..]);
        self.bytes(&head[..n])?;
        self.bytes(&body)?;
        self.scratch = body;
        self.scratch.clear();
        Ok(())
    }

    fn packet(&mut self, packet: &TracePacket) -> Result<()> {
        self.scratch.clear();
        packet.encode_raw(&mut self.scratch);
        self.scratch_packet()
    }

    /// The hot path: a slice begin (`iid` = its name) or end on sequence `seq`, `delta` ns after
    /// the sequence's previous timestamp. Encoded by hand, fields in number order: timestamp 8,
    /// trusted_packet_sequence_id 10, track_event 11 {type 9, name_iid 10}, sequence_flags 13
    /// (`SEQ_NEEDS_INCREMENTAL_STATE`: the clock, defaults and names are incremental state).
    /// The tests decode it with prost; the stage checks it against Perfetto's own schema.
    #[inline]
    fn slice(&mut self, delta: u64, seq: u32, iid: Option<u64>) -> Result<()> {
        if self.pos >= FLUSH_AT {
            self.drain()?;
        }
        let p: &mut [u8; SLACK] = (&mut self.buf[self.pos..self.pos + SLACK])
            .try_into()
            .expect("SLACK bytes");
        p[0] = 0x0a; // Trace.packet = 1, length-delimited; p[1] = length (< 128), set below
        p[2] = 0x40; // timestamp = 8
        let mut n = 3 + varint(delta, &mut p[3..]);
        p[n] = 0x50; // trusted_packet_sequence_id = 10
        n += 1;
        n += varint(u64::from(seq), &mut p[n..]);
        p[n] = 0x5a; // track_event = 11, length-delimited
        p[n + 2] = 0x48; // type = 9
        match iid {
            None => {
                p[n + 1] = 2;
                p[n + 3] = track_event::Type::SliceEnd as u8;
                n += 4;
            }
            Some(iid) => {
                p[n + 3] = track_event::Type::SliceBegin as u8;
                p[n + 4] = 0x50; // name_iid = 10
                let k = varint(iid, &mut p[n + 5..]);
                p[n + 1] = (3 + k) as u8;
                n += 5 + k;
            }
        }
        p[n] = 0x68; // sequence_flags = 13
        p[n + 1] = SEQ_NEEDS_INCREMENTAL_STATE as u8;
        n += 2;
        p[1] = (n - 2) as u8;
        self.pos += n;
        Ok(())
    }

    /// Interned names in packets of at most about 32 KiB: `InternedData.event_names` (field
    /// 12 / 2) on sequence `seq`, flagged `SEQ_NEEDS_INCREMENTAL_STATE`.
    fn names<'n>(&mut self, seq: u32, names: impl Iterator<Item = (u64, &'n str)>) -> Result<()> {
        let mut entries: Vec<u8> = Vec::with_capacity(1 << 15);
        let mut entry = Vec::new();
        let mut names = names.peekable();
        while names.peek().is_some() {
            entries.clear();
            while entries.len() < (1 << 15) {
                let Some((iid, name)) = names.next() else {
                    break;
                };
                entry.clear();
                entry.push(0x08); // EventName.iid = 1
                push_varint(iid, &mut entry);
                entry.push(0x12); // EventName.name = 2
                push_varint(name.len() as u64, &mut entry);
                entry.extend_from_slice(name.as_bytes());
                entries.push(0x12); // InternedData.event_names = 2
                push_varint(entry.len() as u64, &mut entries);
                entries.extend_from_slice(&entry);
            }
            self.scratch.clear();
            self.scratch.push(0x50); // trusted_packet_sequence_id = 10
            push_varint(u64::from(seq), &mut self.scratch);
            self.scratch.push(0x62); // interned_data = 12
            push_varint(entries.len() as u64, &mut self.scratch);
            self.scratch.extend_from_slice(&entries);
            self.scratch.push(0x68); // sequence_flags = 13
            self.scratch.push(SEQ_NEEDS_INCREMENTAL_STATE as u8);
            self.scratch_packet()?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.drain()?;
        self.sink.flush()?;
        Ok(())
    }
}

/// Writes `inputs` as one Perfetto trace.
pub fn write(inputs: &[Input<'_>], sink: &mut dyn Write) -> Result<()> {
    let prepared = prepare(inputs, |_, _| {})?;
    let mut out = Out::new(sink);
    let mut merged = Merged::new(&prepared)?;
    let first_ns = merged.peek_time();

    out.packet(&TracePacket {
        timestamp: first_ns,
        data: Some(trace_packet::Data::ClockSnapshot(ClockSnapshot {
            clocks: vec![clock_snapshot::Clock {
                clock_id: Some(REALTIME),
                timestamp: first_ns,
                is_incremental: None,
            }],
            primary_trace_clock: Some(proto::BuiltinClock::Realtime as i32),
        })),
        ..Default::default()
    })?;
    let mut pids: std::collections::BTreeMap<u32, &str> = Default::default();
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
    // Every sequence's incremental clock starts at the trace's first step, on REALTIME.
    let base = first_ns.unwrap_or(0);
    let mut seqs = Vec::with_capacity(inputs.len());
    for (i, (input, p)) in inputs.iter().zip(&prepared).enumerate() {
        let h = &input.file.header;
        let uuid = thread_uuid(i, h.tid);
        let id = i as u32 + 1;
        let sequence_id =
            Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(id));
        out.packet(&TracePacket {
            data: Some(trace_packet::Data::ClockSnapshot(ClockSnapshot {
                clocks: vec![
                    clock_snapshot::Clock {
                        clock_id: Some(REALTIME),
                        timestamp: Some(base),
                        is_incremental: None,
                    },
                    clock_snapshot::Clock {
                        clock_id: Some(INCREMENTAL_CLOCK),
                        timestamp: Some(base),
                        is_incremental: Some(true),
                    },
                ],
                primary_trace_clock: None,
            })),
            optional_trusted_packet_sequence_id: sequence_id,
            sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
            first_packet_on_sequence: Some(true),
            trace_packet_defaults: Some(TracePacketDefaults {
                timestamp_clock_id: Some(INCREMENTAL_CLOCK),
                track_event_defaults: Some(TrackEventDefaults {
                    track_uuid: Some(uuid),
                }),
            }),
            ..Default::default()
        })?;
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
            optional_trusted_packet_sequence_id: sequence_id,
            ..Default::default()
        })?;
        // The symbol table is known up front: its names are interned once, iid = rank + 1.
        let symbols = &input.file.symbols;
        let before = symbols.len() as u64 + 1;
        let cut = (p.shape.before > 0).then_some((before, BEFORE_WINDOW));
        out.names(
            id,
            symbols
                .values()
                .map(String::as_str)
                .enumerate()
                .map(|(k, name)| (k as u64 + 1, name))
                .chain(cut),
        )?;
        seqs.push(Sequence {
            id,
            last: base,
            symbols: SymbolIndex::new(symbols.keys()),
            names: IidTable::with_capacity(16),
            before,
            next: before + 1,
        });
    }

    for (i, ns, step) in merged.by_ref() {
        let s = &mut seqs[i];
        let mut fresh = None;
        let iid = match step {
            Step::Enter(None) => Some(s.before),
            Step::Enter(Some(m)) => Some(match s.symbols.get(m).or_else(|| s.names.get(m)) {
                Some(iid) => iid,
                None => {
                    // Not in the symbol table: interned in the packet that first uses it.
                    let iid = s.next;
                    s.next += 1;
                    s.names.insert(m, iid);
                    fresh = Some((iid, m));
                    iid
                }
            }),
            Step::Exit => None,
        };
        let (timestamp, clock) = s.stamp(ns);
        if clock.is_none() && fresh.is_none() {
            out.slice(timestamp, s.id, iid)?;
            continue;
        }
        // Cold path: a new name, or a step before its predecessor (absolute, on REALTIME).
        let symbols = &inputs[i].file.symbols;
        out.packet(&TracePacket {
            timestamp: Some(timestamp),
            timestamp_clock_id: clock,
            optional_trusted_packet_sequence_id: Some(
                trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(s.id),
            ),
            sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
            interned_data: fresh.map(|(iid, m)| InternedData {
                event_names: vec![EventName {
                    iid: Some(iid),
                    name: Some(names::display(symbols, Some(m)).into_owned()),
                }],
            }),
            data: Some(trace_packet::Data::TrackEvent(TrackEvent {
                r#type: Some(match iid {
                    Some(_) => track_event::Type::SliceBegin as i32,
                    None => track_event::Type::SliceEnd as i32,
                }),
                name_field: iid.map(track_event::NameField::NameIid),
                ..Default::default()
            })),
            ..Default::default()
        })?;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_encoded_slices_decode_with_prost() {
        for (delta, seq, iid) in [
            (0u64, 1u32, Some(1u64)),
            (1_700_000_000_123_456_789, 300, Some(123_456)),
            (u64::MAX, u32::MAX, None),
            (127, 127, Some(u64::MAX)),
        ] {
            let mut sink = Vec::new();
            let mut out = Out::new(&mut sink);
            out.slice(delta, seq, iid).unwrap();
            out.finish().unwrap();
            let trace = proto::Trace::decode(sink.as_slice()).unwrap();
            let want = TracePacket {
                timestamp: Some(delta),
                optional_trusted_packet_sequence_id: Some(
                    trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(seq),
                ),
                sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                data: Some(trace_packet::Data::TrackEvent(TrackEvent {
                    r#type: Some(if iid.is_some() { 1 } else { 2 }),
                    name_field: iid.map(track_event::NameField::NameIid),
                    ..Default::default()
                })),
                ..Default::default()
            };
            assert_eq!(trace.packet, vec![want]);
        }
    }

    #[test]
    fn hand_encoded_names_decode_with_prost() {
        let names: Vec<(u64, String)> = (1..3000u64)
            .map(|i| {
                (
                    i * 7,
                    format!("void a.B{i}.m(int, {})", "x".repeat(i as usize % 300)),
                )
            })
            .collect();
        let mut sink = Vec::new();
        let mut out = Out::new(&mut sink);
        out.names(5, names.iter().map(|(i, n)| (*i, n.as_str())))
            .unwrap();
        out.finish().unwrap();
        let trace = proto::Trace::decode(sink.as_slice()).unwrap();
        assert!(trace.packet.len() > 1, "split into packets");
        let mut got = Vec::new();
        for p in &trace.packet {
            assert_eq!(
                p.optional_trusted_packet_sequence_id,
                Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(5))
            );
            assert_eq!(p.sequence_flags, Some(SEQ_NEEDS_INCREMENTAL_STATE));
            assert!(p.encoded_len() < (1 << 15) + 400);
            for n in &p.interned_data.as_ref().unwrap().event_names {
                got.push((n.iid.unwrap(), n.name.clone().unwrap()));
            }
        }
        assert_eq!(got, names);
    }

    #[test]
    fn symbol_index_ranks_every_pointer_and_nothing_else() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (align, spread) in [
            (2u32, 1u64 << 14),
            (3, 1 << 16),
            (4, 1 << 20),
            (0, 1 << 14),
            (5, u64::MAX >> 6),
        ] {
            let mut set = std::collections::BTreeSet::new();
            while set.len() < 5000 {
                let p = ((rand() % spread) << align) | 1 << (align + rand() as u32 % 3);
                set.insert(p & (u64::MAX << align));
            }
            set.insert(0);
            set.insert(u64::MAX << align);
            let index = SymbolIndex::new(set.iter());
            for (rank, p) in set.iter().enumerate() {
                assert_eq!(index.get(*p), Some(rank as u64 + 1), "{p:#x}");
            }
            let sorted: Vec<u64> = set.iter().copied().collect();
            for k in 0..40_000usize {
                let p = if k % 2 == 0 {
                    let near = sorted[k / 2 % sorted.len()];
                    near.wrapping_add(rand() % (4 << align))
                        .wrapping_sub(2 << align)
                } else {
                    rand()
                };
                let want = sorted.binary_search(&p).ok().map(|r| r as u64 + 1);
                assert_eq!(index.get(p), want, "{p:#x}");
            }
        }
        assert_eq!(SymbolIndex::new([].iter()).get(0x1000), None);
    }

    #[test]
    fn time_going_backwards_is_absolute_and_keeps_the_clock() {
        let mut s = Sequence {
            id: 1,
            last: 1000,
            symbols: SymbolIndex::new([].iter()),
            names: IidTable::with_capacity(1),
            before: 1,
            next: 2,
        };
        assert_eq!(s.stamp(1000), (0, None));
        assert_eq!(s.stamp(1500), (500, None));
        assert_eq!(s.stamp(1200), (1200, Some(REALTIME)));
        assert_eq!(s.stamp(1600), (100, None));
    }

    #[test]
    fn iid_table_grows_and_finds_every_key() {
        let mut t = IidTable::with_capacity(3);
        for k in 0..10_000u64 {
            t.insert(0x7000_0000 + k * 48, k + 1);
        }
        for k in 0..10_000u64 {
            assert_eq!(t.get(0x7000_0000 + k * 48), Some(k + 1));
        }
        assert_eq!(t.get(0x7000_0000 + 10_000 * 48), None);
        assert_eq!(t.get(0), None);
        t.insert(0, 99_999);
        assert_eq!(t.get(0), Some(99_999));
    }
}
