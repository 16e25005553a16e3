//! Perfetto: a `Trace` of `TracePacket`s, streamed (each packet is one length-delimited field 1).
//!
//! * one clock snapshot declaring `BUILTIN_CLOCK_REALTIME` the trace's clock: every timestamp
//!   is wall-clock nanoseconds from the file's reference pair, so threads of different files
//!   line up;
//! * one process track per pid and one thread track per thread (a child of its process): per
//!   input with [`write`], per thread with [`write_threads`], where the runs of one thread
//!   share the track (each still on its own sequence, with its own interned names);
//! * one packet sequence per input. It opens, as the Perfetto SDK's sequences do, with one
//!   packet carrying `SEQ_INCREMENTAL_STATE_CLEARED`, the defaults (clock [`INCREMENTAL_CLOCK`],
//!   the thread's track) and a clock snapshot that defines that sequence-scoped clock as
//!   delta-encoded nanoseconds (`is_incremental`) equal to REALTIME at the trace's first step.
//!   Then the thread's track descriptor, then the names of the file's symbol table, interned
//!   once (`InternedData.event_names`, iid = the pointer's place in [`SymbolIndex`]), then one
//!   `TYPE_SLICE_BEGIN` / `TYPE_SLICE_END` track event per step, whose timestamp is the delta
//!   from the sequence's previous timestamp. A method missing from the symbol table is interned
//!   in the packet that first uses it; a step earlier than its predecessor (never seen) would
//!   carry an absolute REALTIME timestamp, as the SDK does.
//!
//! [`write_threads_beside`] writes the same packets after a system trace's
//! ([`crate::system_trace`]), which stays as it was: its clock stays the trace's clock (no
//! snapshot of ours names one), Hubble's sequences take ids above the system trace's, and its
//! track uuids move to a range none of the system trace's is in. Each sequence's snapshot still
//! relates its clock to REALTIME, the only clock a Hubble file pairs the timer with; trace
//! processor goes on to the trace's clock through the system trace's snapshots. The thread
//! tracks keep their `ThreadDescriptor` (pid, tid), which trace processor resolves to the
//! system trace's threads of those ids.

use std::io::{Read, Seek, Write};

use prost::Message;

use crate::proto::{
    self, clock_snapshot, trace_packet, track_event, ClockSnapshot, EventName, InternedData,
    ProcessDescriptor, ThreadDescriptor, TracePacket, TracePacketDefaults, TrackDescriptor,
    TrackEvent, TrackEventDefaults,
};
use crate::system_trace::SystemTrace;
use crate::{ExportError, Result};
use hubble_format::names;
use hubble_format::names::BEFORE_WINDOW;
use hubble_format::stream::Input;
use hubble_format::stream::{self, prepare, Merged};

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

/// The track uuid of thread `index` (the input's index with [`write`]).
pub fn thread_uuid(index: usize, tid: u32) -> u64 {
    // The high word tells the thread numbers apart (tids repeat across processes and a
    // version 4 thread's runs), the low word is the tid.
    ((0x4855_4254 ^ index as u64) << 32) | u64::from(tid)
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

/// `v` (< 2²⁸) as a protobuf varint in the low bytes of the result, and its length, without a
/// branch: slice timestamps are deltas of a few to a few thousand ns whose length varies from
/// one packet to the next, so a loop over the bytes would mispredict on many of them.
#[inline(always)]
fn varint28(v: u64) -> (u32, usize) {
    debug_assert!(v < 1 << 28);
    let groups =
        (v & 0x7f) | ((v << 1) & 0x7f00) | ((v << 2) & 0x7f_0000) | ((v << 3) & 0x7f00_0000);
    let n = 1 + usize::from(v >= 1 << 7) + usize::from(v >= 1 << 14) + usize::from(v >= 1 << 21);
    let more = 0x0080_8080u64 & ((1u64 << (8 * (n - 1))) - 1);
    ((groups | more) as u32, n)
}

/// A map from `u64` keys to nonzero `u64` values: open addressing with linear probing and
/// Fibonacci hashing, at most half full (value 0 marks a free slot). It serves both the names
/// interned on first use (pointer → iid) and the symbol index (word address → bits), which
/// needs the slot a key sits in.
struct U64Map {
    slots: Vec<(u64, u64)>,
    shift: u32,
    len: usize,
}

impl U64Map {
    fn with_capacity(n: usize) -> U64Map {
        let size = (2 * n).max(16).next_power_of_two();
        U64Map {
            slots: vec![(0, 0); size],
            shift: 64 - size.trailing_zeros(),
            len: 0,
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing: the product's high bits mix every bit of the key.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The slot holding `key` and its value.
    #[inline]
    fn find(&self, key: u64) -> Option<(usize, u64)> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let (k, value) = self.slots[i];
            if value == 0 {
                return None;
            }
            if k == key {
                return Some((i, value));
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn get(&self, key: u64) -> Option<u64> {
        self.find(key).map(|(_, value)| value)
    }

    /// Inserts a key that is not in the map, with a nonzero value.
    fn insert(&mut self, key: u64, value: u64) {
        debug_assert_ne!(value, 0);
        // At most half full after this insert.
        if self.len >= self.slots.len() / 2 {
            let old = std::mem::take(&mut self.slots);
            *self = U64Map::with_capacity(old.len());
            for (k, v) in old.into_iter().filter(|s| s.1 != 0) {
                self.insert(k, v);
            }
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        while self.slots[i].1 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = (key, value);
        self.len += 1;
    }
}

/// Pointer → interning id for a file's symbol table. ART packs `ArtMethod`s in arrays, so the
/// pointers cluster: the index is a bitmap of the table's pointers, 64 aligned addresses a word,
/// in a [`U64Map`] from the word's address to its bits. A pointer's iid is its place in that
/// bitmap, 1 + 64 × slot + bit: unique, known after one probe and a bit test, with no rank to
/// count. The table is a few times smaller than one slot per method (the benchmark's 50 000
/// methods: 4 688 words, 256 KiB), so it stays in cache. Sized for all its words when built,
/// the map never grows, so the slots and the iids stay put.
struct SymbolIndex {
    words: U64Map,
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
        let mut words: Vec<(u64, u64)> = Vec::new();
        for p in pointers {
            let (word, bit) = (p >> (align + 6), (p >> align) & 63);
            match words.last_mut() {
                Some(w) if w.0 == word => w.1 |= 1 << bit,
                _ => words.push((word, 1 << bit)),
            }
        }
        let mut map = U64Map::with_capacity(words.len());
        for (word, bits) in words {
            map.insert(word, bits);
        }
        SymbolIndex { words: map, align }
    }

    /// One more than the largest iid [`SymbolIndex::get`] can return.
    fn end(&self) -> u64 {
        self.words.slots.len() as u64 * 64 + 1
    }

    #[inline]
    fn get(&self, ptr: u64) -> Option<u64> {
        if ptr & ((1 << self.align) - 1) != 0 {
            return None;
        }
        let (word, bit) = (ptr >> (self.align + 6), (ptr >> self.align) & 63);
        let (slot, bits) = self.words.find(word)?;
        if bits >> bit & 1 == 0 {
            return None;
        }
        Some(((slot as u64) << 6 | bit) + 1)
    }
}

/// One input's packet sequence: its id, incremental clock and names.
struct Sequence {
    id: u32,
    /// Its id field as every slice writes it.
    field: SeqField,
    /// The sequence's incremental clock: the last timestamp written on it (ns).
    last: u64,
    /// Names interned on first use: pointers missing from the symbol table.
    names: U64Map,
    /// Next iid for a name missing from the symbol table.
    next: u64,
}

/// What a sequence's steps are named by (read-only, so the thread that merges the steps can
/// look their names up while the writer encodes earlier ones).
struct Naming {
    /// The symbol table's names (interned up front).
    index: SymbolIndex,
    /// A pointer of the symbol table (0 if it is empty): exits and cut frames look it up, so
    /// that every step takes the same path through the index.
    probe: u64,
    /// Iid of [`BEFORE_WINDOW`].
    before: u64,
}

impl Naming {
    fn new(input: &Input<'_>) -> Naming {
        let symbols = &input.file.symbols;
        let index = SymbolIndex::new(symbols.keys());
        Naming {
            before: index.end(),
            probe: symbols.keys().next().copied().unwrap_or(0),
            index,
        }
    }

    /// Appends the iids of `run`'s steps: 0 for an exit, [`MISSING`] for a method that is not
    /// in the symbol table. One path for every kind of step (see `Out::slice`): exits and cut
    /// frames look up the probe and take their own iid instead.
    fn iids(&self, run: &[(u64, u64)], iids: &mut Vec<u64>) {
        iids.extend(run.iter().map(|&(_, code)| {
            let control = mask(code <= stream::BEFORE);
            let key = select(control, self.probe, code);
            let iid = self.index.get(key).unwrap_or(MISSING);
            let own = self.before & mask(code == stream::BEFORE);
            select(control, own, iid)
        }));
    }
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

/// A sequence's `trusted_packet_sequence_id` field (tag 10, varint) followed by the
/// `track_event` tag: the bytes between a slice's timestamp and its event, the same in every
/// slice of the sequence.
struct SeqField {
    bytes: [u8; 8],
    len: usize,
}

fn seq_field(seq: u32) -> SeqField {
    let mut bytes = [0u8; 8];
    bytes[0] = 0x50; // trusted_packet_sequence_id = 10
    let n = 1 + varint(u64::from(seq), &mut bytes[1..]);
    bytes[n] = 0x5a; // track_event = 11, length-delimited
    SeqField { bytes, len: n + 1 }
}

/// All ones if `b`, else zero, opaque to the optimizer: a select written with it stays free of
/// branches (given a plain mask, LLVM turns `x ^ ((x ^ y) & mask)` back into a branch when one
/// side is a load).
#[inline(always)]
fn mask(b: bool) -> u64 {
    std::hint::black_box(0u64.wrapping_sub(u64::from(b)))
}

/// `if_set` where `m` is all ones, `if_clear` where it is zero, without a branch. (One function
/// for the lookup's key, whose value for exits and cut frames is discarded, and for the iid:
/// so that a mistake in it shows in the output.)
#[inline(always)]
fn select(m: u64, if_set: u64, if_clear: u64) -> u64 {
    if_clear ^ ((if_clear ^ if_set) & m)
}

/// A step's iid before it is known: the method is not in the symbol table.
const MISSING: u64 = u64::MAX;

/// Packets go to a fixed buffer that is handed to the sink in large writes.
const FLUSH_AT: usize = 1 << 18;
/// Room past the last hot-path packet for the fixed-size stores that write one.
const SLACK: usize = 64;
/// The longest hot-path slice: packet tag and length 2, timestamp 1 + 4, sequence id and the
/// track event's tag 7, event length, type and name 1 + 2 + 5, flags 2.
const SLICE_MAX: usize = 24;

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

    /// Makes room for `slices` hot-path slices, so that [`Out::slice`] need not check.
    fn reserve(&mut self, slices: usize) -> Result<()> {
        let need = slices * SLICE_MAX + SLACK;
        if self.pos + need > self.buf.len() {
            self.drain()?;
            if need > self.buf.len() {
                self.buf.resize(need, 0);
            }
        }
        Ok(())
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

    /// The hot path: a slice begin (`begin`, named `iid`) or end on the sequence whose
    /// `trusted_packet_sequence_id` field is `seq` (see [`seq_field`]), `delta` ns after the
    /// sequence's previous timestamp. Encoded by hand, fields in number order: timestamp 8,
    /// trusted_packet_sequence_id 10, track_event 11 {type 9, name_iid 10}, sequence_flags 13
    /// (`SEQ_NEEDS_INCREMENTAL_STATE`: the clock, defaults and names are incremental state).
    /// Begins and ends take the same path (an end writes the name and then overwrites it), so
    /// their mix costs no mispredictions. The tests decode it with prost; the stage checks it
    /// against Perfetto's own schema. Room must have been made with [`Out::reserve`].
    #[inline]
    fn slice(&mut self, delta: u64, seq: &SeqField, begin: bool, iid: u64) -> Result<()> {
        debug_assert!(self.pos + SLACK <= self.buf.len(), "reserve first");
        if (delta | iid) >= 1 << 28 {
            return self.slice_wide(delta, seq, begin, iid);
        }
        let p: &mut [u8; SLACK] = (&mut self.buf[self.pos..self.pos + SLACK])
            .try_into()
            .expect("SLACK bytes");
        p[0] = 0x0a; // Trace.packet = 1, length-delimited; p[1] = length (< 128), set below
        p[2] = 0x40; // timestamp = 8
        let (bytes, k) = varint28(delta);
        p[3..7].copy_from_slice(&bytes.to_le_bytes());
        let mut n = 3 + k;
        p[n..n + 8].copy_from_slice(&seq.bytes); // trusted_packet_sequence_id, then 0x5a
        n += seq.len;
        // track_event = 11 (length-delimited, its tag ends `seq`): type 9, name_iid 10.
        let (bytes, k) = varint28(iid);
        let name = (1 + k) & mask(begin) as usize;
        p[n] = (2 + name) as u8;
        p[n + 1] = 0x48;
        p[n + 2] = 2 - u8::from(begin); // TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2
        p[n + 3] = 0x50;
        p[n + 4..n + 8].copy_from_slice(&bytes.to_le_bytes());
        n += 3 + name;
        p[n] = 0x68; // sequence_flags = 13
        p[n + 1] = SEQ_NEEDS_INCREMENTAL_STATE as u8;
        n += 2;
        p[1] = (n - 2) as u8;
        self.pos += n;
        Ok(())
    }

    /// [`Out::slice`] for a delta or iid of 2²⁸ or more (a pause of over a quarter second).
    #[cold]
    fn slice_wide(&mut self, delta: u64, seq: &SeqField, begin: bool, iid: u64) -> Result<()> {
        let body = &mut self.scratch;
        body.clear();
        body.push(0x40); // timestamp = 8
        push_varint(delta, body);
        body.extend_from_slice(&seq.bytes[..seq.len]); // ends with the track_event tag (11)
        let mut event = vec![0x48, 2 - u8::from(begin)];
        if begin {
            event.push(0x50);
            push_varint(iid, &mut event);
        }
        push_varint(event.len() as u64, body);
        body.extend_from_slice(&event);
        body.push(0x68); // sequence_flags = 13
        body.push(SEQ_NEEDS_INCREMENTAL_STATE as u8);
        self.scratch_packet()
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

/// Where an export's packets sit among another trace's: what changes when it is written beside
/// a system trace, so that nothing of it is taken for the system trace's.
#[derive(Clone, Copy)]
struct Layout {
    /// The first input's packet sequence id; the others follow it.
    first_sequence: u32,
    /// XORed into every track uuid ([`process_uuid`], [`thread_uuid`]).
    uuid_salt: u64,
    /// Whether the trace is ours alone: then REALTIME is made its clock. Beside a system trace,
    /// that trace's clock stays the trace's clock.
    own_clock: bool,
}

const ALONE: Layout = Layout {
    first_sequence: 1,
    uuid_salt: 0,
    own_clock: true,
};

/// The layout of `inputs` beside `system`: sequence ids after the system trace's largest, and
/// the first uuid salt (a multiple of 2^48) that gives no track uuid the system trace has.
fn layout_beside<R>(
    inputs: &[Input<'_>],
    threads: &[usize],
    system: &SystemTrace<R>,
) -> Result<Layout> {
    let first_sequence = system
        .max_sequence()
        .checked_add(1)
        .filter(|first| first.checked_add(inputs.len() as u32).is_some())
        .ok_or_else(|| {
            ExportError::Unsupported(format!(
                "{}: its packet sequence ids reach {}, leaving none for {} more",
                system.name(),
                system.max_sequence(),
                inputs.len()
            ))
        })?;
    let taken = system.uuids();
    let uuid_salt = (0..1u64 << 16)
        .map(|k| k << 48)
        .find(|salt| {
            let processes = inputs.iter().map(|i| process_uuid(i.file.header.pid));
            let tracks = inputs
                .iter()
                .zip(threads)
                .map(|(i, &t)| thread_uuid(t, i.file.header.tid));
            !processes.chain(tracks).any(|u| taken.contains(&(u ^ salt)))
        })
        .ok_or_else(|| {
            ExportError::Unsupported(format!(
                "{}: no range of track uuids is free of its own",
                system.name()
            ))
        })?;
    Ok(Layout {
        first_sequence,
        uuid_salt,
        own_clock: false,
    })
}

/// Writes `inputs` as one Perfetto trace, one track per input.
pub fn write(inputs: &[Input<'_>], sink: &mut dyn Write) -> Result<()> {
    write_threads(inputs, &crate::one_thread_per_input(inputs.len()), sink)
}

/// Writes `inputs` as one Perfetto trace, one track per thread: `threads[i]` is input `i`'s.
pub fn write_threads(inputs: &[Input<'_>], threads: &[usize], sink: &mut dyn Write) -> Result<()> {
    write_laid_out(inputs, threads, ALONE, &mut |_| Ok(()), sink)
}

/// Writes `system`'s packets unchanged, then `inputs` as [`write_threads`] does, laid out not to
/// collide with them (see the module's documentation), so that the trace processor shows
/// Hubble's slices on the system trace's timeline and threads.
pub fn write_threads_beside<R: Read + Seek>(
    inputs: &[Input<'_>],
    threads: &[usize],
    system: &mut SystemTrace<R>,
    sink: &mut dyn Write,
) -> Result<()> {
    crate::check_threads(inputs, threads)?;
    let layout = layout_beside(inputs, threads, system)?;
    write_laid_out(
        inputs,
        threads,
        layout,
        &mut |out| system.copy_to(out),
        sink,
    )
}

/// The writer: `before` writes what goes in front of the trace's own packets, once the inputs
/// are known to decode.
fn write_laid_out(
    inputs: &[Input<'_>],
    threads: &[usize],
    layout: Layout,
    before: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
    sink: &mut dyn Write,
) -> Result<()> {
    crate::check_threads(inputs, threads)?;
    let prepared = prepare(inputs)?;
    // Names are looked up by whichever thread has time (see `Merged::pipeline`).
    let naming = inputs.iter().map(Naming::new).collect::<Vec<_>>();
    let mut merged = Merged::new(&prepared);
    let first_ns = merged.peek_time();
    // Every sequence's incremental clock starts at the trace's first step, on REALTIME.
    let base = first_ns.unwrap_or(0);
    let naming = &naming;
    let out = Out::new(sink);
    // The steps are decoded on a second thread from the start; the header (names interned up
    // front: megabytes for a large symbol table) is written meanwhile.
    let start = move || {
        let mut out = out;
        before(&mut *out.sink)?;
        if layout.own_clock {
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
        }
        let mut pids: std::collections::BTreeMap<u32, &str> = Default::default();
        for input in inputs {
            pids.entry(input.file.header.pid)
                .or_insert(&input.file.header.process_name);
        }
        for (pid, name) in &pids {
            out.packet(&TracePacket {
                data: Some(trace_packet::Data::TrackDescriptor(TrackDescriptor {
                    uuid: Some(process_uuid(*pid) ^ layout.uuid_salt),
                    process: Some(ProcessDescriptor {
                        pid: Some(*pid as i32),
                        process_name: Some((*name).to_owned()),
                    }),
                    ..Default::default()
                })),
                ..Default::default()
            })?;
        }
        let mut seqs = Vec::with_capacity(inputs.len());
        for (i, (input, p)) in inputs.iter().zip(&prepared).enumerate() {
            let h = &input.file.header;
            let uuid = thread_uuid(threads[i], h.tid) ^ layout.uuid_salt;
            let id = layout.first_sequence + i as u32;
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
            // A thread's later runs write on the track its first run described.
            if crate::first_of_thread(threads, i) {
                out.packet(&TracePacket {
                    data: Some(trace_packet::Data::TrackDescriptor(TrackDescriptor {
                        uuid: Some(uuid),
                        parent_uuid: Some(process_uuid(h.pid) ^ layout.uuid_salt),
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
            }
            // The symbol table is known up front: its names are interned once, each under its
            // place in the index.
            let symbols = &input.file.symbols;
            let Naming { index, before, .. } = &naming[i];
            let before = *before;
            let cut = (p.shape.before > 0).then_some((before, BEFORE_WINDOW));
            out.names(
                id,
                symbols
                    .iter()
                    .map(|(p, name)| (index.get(*p).expect("indexed"), name.as_str()))
                    .chain(cut),
            )?;
            seqs.push(Sequence {
                id,
                field: seq_field(id),
                last: base,
                names: U64Map::with_capacity(16),
                next: before + 1,
            });
        }
        Ok((out, seqs))
    };
    let (out, ..) = merged.pipeline(
        &|i, run, iids| naming[i].iids(run, iids),
        start,
        |(out, seqs), i, run, iids| {
            write_run(out, &mut seqs[i], &inputs[i].file.symbols, run, iids)
        },
    )?;
    out.finish()
}

/// Writes one run of a sequence's steps (wall-clock ns, packed code) named `iids`.
fn write_run(
    out: &mut Out<'_>,
    s: &mut Sequence,
    symbols: &std::collections::BTreeMap<u64, String>,
    run: &[(u64, u64)],
    iids: &[u64],
) -> Result<()> {
    out.reserve(run.len())?;
    for (k, (&(ns, code), &iid)) in run.iter().zip(iids).enumerate() {
        let begin = code != stream::EXIT;
        let mut iid = iid;
        let mut fresh = None;
        if iid == MISSING {
            iid = match s.names.get(code) {
                Some(iid) => iid,
                None => {
                    // Not in the symbol table: interned in the packet that first uses it.
                    let iid = s.next;
                    s.next += 1;
                    s.names.insert(code, iid);
                    fresh = Some((iid, code));
                    iid
                }
            };
        }
        let (timestamp, clock) = s.stamp(ns);
        if clock.is_none() && fresh.is_none() {
            out.slice(timestamp, &s.field, begin, iid)?;
            continue;
        }
        let iid = begin.then_some(iid);
        // Cold path: a new name, or a step before its predecessor (absolute, on REALTIME).
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
        // The packet may have taken room the slices still need.
        out.reserve(run.len() - k)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_encoded_slices_decode_with_prost() {
        let mut cases = vec![
            (0u64, 1u32, Some(1u64)),
            (1_700_000_000_123_456_789, 300, Some(123_456)),
            (u64::MAX, u32::MAX, None),
            (127, 127, Some(u64::MAX)),
            (5, 1, None),
        ];
        // Every varint length on both sides of the fast path's limit, begins and ends.
        for bits in [0u32, 7, 14, 21, 28, 35] {
            for v in [(1u64 << bits).saturating_sub(1), 1 << bits] {
                cases.push((v, 1, Some(v.max(1))));
                cases.push((v, 128, None));
                cases.push((3, 2, Some(v.max(1))));
            }
        }
        for (delta, seq, iid) in cases {
            let mut sink = Vec::new();
            let mut out = Out::new(&mut sink);
            out.slice(delta, &seq_field(seq), iid.is_some(), iid.unwrap_or(0))
                .unwrap();
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
            assert_eq!(trace.packet, vec![want.clone()]);
            // As long as prost's encoding (fields in another order): canonical varints. A
            // decoder also takes one padded with empty continuation bytes, so decoding alone
            // cannot see a length miscounted upwards.
            let canonical = proto::Trace { packet: vec![want] }.encoded_len();
            assert_eq!(sink.len(), canonical, "delta {delta} seq {seq} iid {iid:?}");
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
    fn symbol_index_names_every_pointer_once_and_nothing_else() {
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
            let mut iids = std::collections::HashSet::new();
            for p in &set {
                let iid = index.get(*p).unwrap_or_else(|| panic!("{p:#x} missing"));
                assert!((1..index.end()).contains(&iid), "{p:#x}: {iid}");
                assert!(iids.insert(iid), "{p:#x}: iid {iid} twice");
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
                assert_eq!(
                    index.get(p).is_some(),
                    sorted.binary_search(&p).is_ok(),
                    "{p:#x}"
                );
            }
        }
        assert_eq!(SymbolIndex::new([].iter()).get(0x1000), None);
    }

    // A run longer than the buffer holds (the pipeline hands out up to 16 384 steps at once)
    // grows it: every slice is written, in order.
    #[test]
    fn a_run_longer_than_the_buffer_grows_it() {
        let n = 3 * (FLUSH_AT / SLICE_MAX);
        let mut sink = Vec::new();
        let mut out = Out::new(&mut sink);
        out.reserve(n).unwrap();
        for k in 0..n {
            out.slice(1, &seq_field(7), k % 2 == 0, 1 + k as u64 % 100)
                .unwrap();
        }
        out.finish().unwrap();
        let trace = proto::Trace::decode(sink.as_slice()).unwrap();
        assert_eq!(trace.packet.len(), n);
        for (k, p) in trace.packet.iter().enumerate() {
            let Some(trace_packet::Data::TrackEvent(e)) = &p.data else {
                panic!("packet {k} is not a track event");
            };
            assert_eq!(e.r#type, Some(if k % 2 == 0 { 1 } else { 2 }), "packet {k}");
        }
    }

    // Bytes longer than the buffer (a cold-path packet) go to the sink whole, after what was
    // buffered, and in order with what follows.
    #[test]
    fn bytes_longer_than_the_buffer_go_straight_to_the_sink() {
        let mut sink = Vec::new();
        let mut out = Out::new(&mut sink);
        let big: Vec<u8> = (0..FLUSH_AT + SLACK + 100).map(|k| k as u8).collect();
        out.bytes(b"head").unwrap();
        out.bytes(&big).unwrap();
        out.bytes(b"tail").unwrap();
        out.finish().unwrap();
        assert_eq!(sink.len(), 8 + big.len());
        assert_eq!(&sink[..4], b"head");
        assert_eq!(&sink[4..4 + big.len()], big.as_slice());
        assert_eq!(&sink[4 + big.len()..], b"tail");
    }

    // `end` (the iid of frames cut before the window) is past every iid, also when the table's
    // last slot holds a word whose 64 bits are all set: the largest iid `get` can return.
    #[test]
    fn the_before_window_iid_is_past_a_full_last_slot() {
        let probe = U64Map::with_capacity(1);
        let last = probe.slots.len() - 1;
        let word = (1u64..).find(|&w| probe.home(w) == last).unwrap();
        let pointers: Vec<u64> = (0..64).map(|b| word << 6 | b).collect();
        let index = SymbolIndex::new(pointers.iter());
        assert_eq!(index.align, 0);
        let top = pointers
            .iter()
            .map(|&p| index.get(p).unwrap())
            .max()
            .unwrap();
        assert_eq!(
            top,
            64 * index.words.slots.len() as u64,
            "the last slot's last bit"
        );
        assert_eq!(index.end(), top + 1);
    }

    #[test]
    fn time_going_backwards_is_absolute_and_keeps_the_clock() {
        let mut s = Sequence {
            id: 1,
            field: seq_field(1),
            last: 1000,
            names: U64Map::with_capacity(1),
            next: 2,
        };
        assert_eq!(s.stamp(1000), (0, None));
        assert_eq!(s.stamp(1500), (500, None));
        assert_eq!(s.stamp(1200), (1200, Some(REALTIME)));
        assert_eq!(s.stamp(1600), (100, None));
    }

    #[test]
    fn u64_map_grows_and_finds_every_key() {
        let mut t = U64Map::with_capacity(3);
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
