//! A Perfetto system trace that a Hubble export is written beside (`hubble export --format
//! perfetto --with SYSTEM`, [`crate::perfetto::write_threads_beside`]).
//!
//! The file is read twice and never held in memory: [`SystemTrace::scan`] walks its packets once
//! to learn what Hubble's packets must not collide with (packet sequence ids, track uuids) and
//! whether its clock snapshots can carry Hubble's timestamps onto its timeline; the writer then
//! copies it unchanged in front of Hubble's packets.
//!
//! Hubble's timestamps are REALTIME: a trace file pairs the timer with `CLOCK_REALTIME` and with
//! no other clock (`docs/trace-format.md` §3). A system trace's clock is BOOTTIME unless a
//! snapshot names another (`primary_trace_clock`), so the scan requires a chain of clock
//! snapshots from REALTIME to that clock, as trace processor's clock synchronizer finds it.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};

use crate::{ExportError, Result};

const REALTIME: u32 = 1;
const BOOTTIME: u32 = 6;

/// Trace processor's longest conversion path is 4 hops; Hubble's sequence clock takes one to
/// reach REALTIME.
const MAX_HOPS_FROM_REALTIME: usize = 3;

/// Why a system trace cannot have Hubble's slices written beside it.
#[derive(Debug, thiserror::Error)]
pub enum SystemTraceError {
    /// The bytes are not a `perfetto.protos.Trace`.
    #[error("{name}: not a Perfetto trace: {what}")]
    NotATrace {
        /// The file's name (its path).
        name: String,
        /// What is wrong, and where.
        what: String,
    },
    /// Packets compressed by the tracing service: their contents cannot be checked.
    #[error(
        "{name}: compressed packets at byte {offset}, which this export does not look inside; \
         decompress them first (`traceconv decompress_packets`)"
    )]
    Compressed {
        /// The file's name.
        name: String,
        /// Where the first compressed packet starts.
        offset: u64,
    },
    /// No chain of clock snapshots leads from REALTIME to the trace's clock.
    #[error(
        "{name}: no clock snapshot relates {trace_clock} (its trace clock) to REALTIME (the \
         clock of Hubble's timestamps): {found}"
    )]
    NoClockPath {
        /// The file's name.
        name: String,
        /// The trace's clock.
        trace_clock: String,
        /// What the snapshots do relate.
        found: String,
    },
    /// REALTIME went backwards between two snapshots of the same clocks.
    #[error(
        "{name}: REALTIME goes backwards between its clock snapshots (at byte {offset}: the wall \
         clock was set back during the trace), and trace processor converts nothing from a \
         clock that does"
    )]
    RealtimeBackwards {
        /// The file's name.
        name: String,
        /// Where the snapshot that goes back starts.
        offset: u64,
    },
    /// The file changed between the scan and the copy.
    #[error("{name}: changed while it was being exported (it was {scanned} bytes)")]
    Changed {
        /// The file's name.
        name: String,
        /// Its length when scanned.
        scanned: u64,
    },
    /// Reading it failed.
    #[error("{name}: {source}")]
    Io {
        /// The file's name.
        name: String,
        /// The error.
        source: std::io::Error,
    },
}

/// A scanned system trace: its source, and what Hubble's packets must fit around.
pub struct SystemTrace<R> {
    name: String,
    source: R,
    len: u64,
    packets: u64,
    max_sequence: u32,
    uuids: HashSet<u64>,
    trace_clock: u32,
}

impl<R> std::fmt::Debug for SystemTrace<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemTrace")
            .field("name", &self.name)
            .field("len", &self.len)
            .field("packets", &self.packets)
            .field("max_sequence", &self.max_sequence)
            .field("uuids", &self.uuids.len())
            .field("trace_clock", &self.trace_clock)
            .finish()
    }
}

/// What the scan gathers from the clock snapshots.
#[derive(Default)]
struct Clocks {
    snapshots: usize,
    /// The first `primary_trace_clock` set.
    primary: Option<u32>,
    /// Pairs of global clocks some snapshot relates.
    edges: BTreeSet<(u32, u32)>,
    /// The last REALTIME value of each kind of snapshot (trace processor keeps one series per
    /// set of clocks, and a clock that goes back within a series is no longer converted from).
    realtime: BTreeMap<Vec<(u32, u32)>, u64>,
}

impl<R: Read + Seek> SystemTrace<R> {
    /// Walks the trace's packets: each must be a well-formed `TracePacket` (its fields framed
    /// correctly; the contents of the fields read here too), none compressed, and its clock
    /// snapshots must lead from REALTIME to the trace's clock.
    pub fn scan(
        name: impl Into<String>,
        mut source: R,
    ) -> std::result::Result<Self, SystemTraceError> {
        let name = name.into();
        let io = |source| SystemTraceError::Io {
            name: name.clone(),
            source,
        };
        let len = source.seek(SeekFrom::End(0)).map_err(io)?;
        source.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut scan = Scan {
            uuids: HashSet::new(),
            max_sequence: 0,
            clocks: Clocks::default(),
            compressed: None,
            realtime_back: None,
        };
        let packets = {
            let mut input = BufReader::with_capacity(1 << 16, &mut source);
            scan.packets(&mut input, len).map_err(|e| match e {
                Walk::Io(source) => SystemTraceError::Io {
                    name: name.clone(),
                    source,
                },
                Walk::Bad(what) => SystemTraceError::NotATrace {
                    name: name.clone(),
                    what,
                },
            })?
        };
        if let Some(offset) = scan.compressed {
            return Err(SystemTraceError::Compressed { name, offset });
        }
        if let Some(offset) = scan.realtime_back {
            return Err(SystemTraceError::RealtimeBackwards { name, offset });
        }
        let clocks = &scan.clocks;
        let trace_clock = clocks.primary.unwrap_or(BOOTTIME);
        if trace_clock != REALTIME && !reachable(&clocks.edges, REALTIME, trace_clock) {
            let found = if packets == 0 {
                "it holds no packets".to_owned()
            } else if clocks.snapshots == 0 {
                "it holds no clock snapshot".to_owned()
            } else {
                let related: BTreeSet<u32> = clocks.edges.iter().map(|e| e.0).collect();
                let related: Vec<String> = related.into_iter().map(clock_name).collect();
                format!(
                    "its {} clock snapshot(s) relate {}",
                    clocks.snapshots,
                    if related.is_empty() {
                        "no two global clocks".to_owned()
                    } else {
                        format!("only {}", related.join(", "))
                    }
                )
            };
            return Err(SystemTraceError::NoClockPath {
                name,
                trace_clock: clock_name(trace_clock),
                found,
            });
        }
        Ok(SystemTrace {
            name,
            source,
            len,
            packets,
            max_sequence: scan.max_sequence,
            uuids: scan.uuids,
            trace_clock,
        })
    }

    /// Copies the trace as scanned to `sink`. A read error, or a file that no longer has the
    /// bytes it had, is the system trace's error; a write error is the output's.
    pub(crate) fn copy_to(&mut self, sink: &mut dyn Write) -> Result<()> {
        let io = |source| {
            ExportError::System(SystemTraceError::Io {
                name: self.name.clone(),
                source,
            })
        };
        self.source.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut buf = vec![0u8; 1 << 16];
        let mut left = self.len;
        while left > 0 {
            let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let n = match self.source.read(&mut buf[..want]) {
                Ok(0) => {
                    return Err(ExportError::System(SystemTraceError::Changed {
                        name: self.name.clone(),
                        scanned: self.len,
                    }))
                }
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(e)),
            };
            sink.write_all(&buf[..n])?;
            left -= n as u64;
        }
        Ok(())
    }
}

impl<R> SystemTrace<R> {
    /// The file's name, as errors give it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many packets it holds.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Its largest `trusted_packet_sequence_id` (0 if none).
    pub fn max_sequence(&self) -> u32 {
        self.max_sequence
    }

    /// Every track uuid it describes or writes on (track descriptors, their parents, track
    /// events and track event defaults).
    pub fn uuids(&self) -> &HashSet<u64> {
        &self.uuids
    }

    /// Its trace clock (a builtin clock id): BOOTTIME unless a snapshot names another.
    pub fn trace_clock(&self) -> u32 {
        self.trace_clock
    }
}

/// A builtin clock's name.
fn clock_name(id: u32) -> String {
    match id {
        1 => "REALTIME".into(),
        2 => "REALTIME_COARSE".into(),
        3 => "MONOTONIC".into(),
        4 => "MONOTONIC_COARSE".into(),
        5 => "MONOTONIC_RAW".into(),
        6 => "BOOTTIME".into(),
        other => format!("clock {other}"),
    }
}

/// Whether `to` is at most [`MAX_HOPS_FROM_REALTIME`] snapshots away from `from`.
fn reachable(edges: &BTreeSet<(u32, u32)>, from: u32, to: u32) -> bool {
    let mut seen = BTreeSet::from([from]);
    let mut queue = VecDeque::from([(from, 0)]);
    while let Some((clock, hops)) = queue.pop_front() {
        if clock == to {
            return true;
        }
        if hops == MAX_HOPS_FROM_REALTIME {
            continue;
        }
        for &(_, next) in edges.range((clock, 0)..=(clock, u32::MAX)) {
            if seen.insert(next) {
                queue.push_back((next, hops + 1));
            }
        }
    }
    false
}

/// Why a walk over the packets stopped.
enum Walk {
    Io(std::io::Error),
    Bad(String),
}

impl From<std::io::Error> for Walk {
    fn from(e: std::io::Error) -> Walk {
        Walk::Io(e)
    }
}

struct Scan {
    uuids: HashSet<u64>,
    max_sequence: u32,
    clocks: Clocks,
    compressed: Option<u64>,
    realtime_back: Option<u64>,
}

/// One field of a protobuf message.
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// The fields of an encoded message, each checked to lie inside it.
struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
}

fn fields(data: &[u8]) -> Fields<'_> {
    Fields { data, pos: 0 }
}

impl Fields<'_> {
    fn varint(&mut self) -> std::result::Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.data.get(self.pos) else {
                return Err("a varint cut short".into());
            };
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 10 bytes".into())
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = std::result::Result<(u64, Value<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.data.len() {
            return None;
        }
        Some((|| {
            let key = self.varint()?;
            let field = key >> 3;
            if field == 0 {
                return Err("field number 0".into());
            }
            let skip = |this: &mut Self, n: usize| {
                if this.data.len() - this.pos < n {
                    return Err(format!("field {field} runs past the end of its message"));
                }
                this.pos += n;
                Ok(())
            };
            let value = match key & 7 {
                0 => Value::Varint(self.varint()?),
                1 => {
                    skip(self, 8)?;
                    Value::Fixed
                }
                2 => {
                    let n = usize::try_from(self.varint()?).unwrap_or(usize::MAX);
                    let start = self.pos;
                    skip(self, n)?;
                    Value::Bytes(&self.data[start..start + n])
                }
                5 => {
                    skip(self, 4)?;
                    Value::Fixed
                }
                wire => return Err(format!("field {field} has wire type {wire}")),
            };
            Ok((field, value))
        })())
    }
}

/// Reads a varint from `input`, counting its bytes in `offset`; `None` at a clean end.
fn read_varint(
    input: &mut impl BufRead,
    offset: &mut u64,
) -> std::result::Result<Option<u64>, Walk> {
    let mut v = 0u64;
    for (k, shift) in (0..64).step_by(7).enumerate() {
        let mut b = [0u8];
        if input.read(&mut b)? == 0 {
            if k == 0 {
                return Ok(None);
            }
            return Err(Walk::Bad(format!(
                "the file ends inside a varint at byte {offset}"
            )));
        }
        *offset += 1;
        v |= u64::from(b[0] & 0x7f) << shift;
        if b[0] & 0x80 == 0 {
            return Ok(Some(v));
        }
    }
    Err(Walk::Bad(format!(
        "a varint longer than 10 bytes before byte {offset}"
    )))
}

impl Scan {
    /// Walks the `Trace.packet` fields of `input` (`len` bytes); returns how many there are.
    fn packets(&mut self, input: &mut impl BufRead, len: u64) -> std::result::Result<u64, Walk> {
        if len == 0 {
            return Err(Walk::Bad("the file is empty".into()));
        }
        if input.fill_buf()?.starts_with(&[0x1f, 0x8b]) {
            return Err(Walk::Bad("it is gzip-compressed (gunzip it first)".into()));
        }
        let mut offset = 0u64;
        let mut packets = 0u64;
        let mut body = Vec::new();
        loop {
            let at = offset;
            let Some(key) = read_varint(input, &mut offset)? else {
                return Ok(packets);
            };
            if key != 0x0a {
                return Err(Walk::Bad(format!(
                    "byte {at} starts field {} of wire type {}, where a trace holds only packets \
                     (field 1, length-delimited)",
                    key >> 3,
                    key & 7
                )));
            }
            let Some(n) = read_varint(input, &mut offset)? else {
                return Err(Walk::Bad(format!(
                    "the file ends inside the packet at byte {at}"
                )));
            };
            if n > len.saturating_sub(offset) {
                return Err(Walk::Bad(format!(
                    "the packet at byte {at} is {n} bytes long, past the end of the file \
                     ({len} bytes)"
                )));
            }
            body.resize(n as usize, 0);
            input.read_exact(&mut body).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    Walk::Bad(format!("the file ends inside the packet at byte {at}"))
                } else {
                    Walk::Io(e)
                }
            })?;
            offset += n;
            self.packet(&body, at)
                .map_err(|what| Walk::Bad(format!("the packet at byte {at}: {what}")))?;
            packets += 1;
        }
    }

    /// One `TracePacket`: its sequence, the track uuids it names, its clock snapshot.
    fn packet(&mut self, body: &[u8], at: u64) -> std::result::Result<(), String> {
        let mut sequence = 0u32;
        let mut snapshot = None;
        for field in fields(body) {
            match field? {
                (10, Value::Varint(v)) => {
                    sequence = u32::try_from(v)
                        .map_err(|_| format!("trusted_packet_sequence_id {v} out of range"))?;
                    self.max_sequence = self.max_sequence.max(sequence);
                }
                (6, Value::Bytes(b)) => snapshot = Some(b),
                (60, Value::Bytes(b)) => {
                    // TrackDescriptor: uuid 1, parent_uuid 5.
                    for f in fields(b) {
                        if let (1 | 5, Value::Varint(uuid)) = f? {
                            self.uuids.insert(uuid);
                        }
                    }
                }
                (11, Value::Bytes(b)) => self.track_uuid(b)?,
                (59, Value::Bytes(b)) => {
                    // TracePacketDefaults.track_event_defaults (11).
                    for f in fields(b) {
                        if let (11, Value::Bytes(d)) = f? {
                            self.track_uuid(d)?;
                        }
                    }
                }
                (50, _) => {
                    self.compressed.get_or_insert(at);
                }
                (field @ (6 | 10 | 11 | 59 | 60), _) => {
                    return Err(format!("field {field} has the wrong wire type"));
                }
                _ => {}
            }
        }
        if let Some(b) = snapshot {
            self.snapshot(b, sequence, at)?;
        }
        Ok(())
    }

    /// A `TrackEvent` or `TrackEventDefaults`: both keep `track_uuid` in field 11.
    fn track_uuid(&mut self, message: &[u8]) -> std::result::Result<(), String> {
        for f in fields(message) {
            if let (11, Value::Varint(uuid)) = f? {
                self.uuids.insert(uuid);
            }
        }
        Ok(())
    }

    /// A `ClockSnapshot` on `sequence`: clocks 64–127 are that sequence's own.
    fn snapshot(&mut self, b: &[u8], sequence: u32, at: u64) -> std::result::Result<(), String> {
        let mut clocks: Vec<(u32, u64)> = Vec::new();
        let mut key = Vec::new();
        for f in fields(b) {
            match f? {
                (1, Value::Bytes(c)) => {
                    let (mut id, mut ts) = (0u64, 0u64);
                    for f in fields(c) {
                        match f? {
                            (1, Value::Varint(v)) => id = v,
                            (2, Value::Varint(v)) => ts = v,
                            _ => {}
                        }
                    }
                    let id = u32::try_from(id).map_err(|_| format!("clock id {id}"))?;
                    let scoped = (64..128).contains(&id);
                    key.push((id, if scoped { sequence } else { 0 }));
                    if !scoped {
                        clocks.push((id, ts));
                    }
                }
                (2, Value::Varint(v)) if v != 0 => {
                    self.clocks.primary.get_or_insert(v as u32);
                }
                _ => {}
            }
        }
        let c = &mut self.clocks;
        c.snapshots += 1;
        for &(a, _) in &clocks {
            for &(b, _) in &clocks {
                if a != b {
                    c.edges.insert((a, b));
                }
            }
        }
        if let Some(&(_, realtime)) = clocks.iter().find(|c| c.0 == REALTIME) {
            let last = c.realtime.entry(key).or_insert(realtime);
            if realtime < *last {
                self.realtime_back.get_or_insert(at);
            }
            *last = realtime;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn field_varint(field: u64, v: u64, out: &mut Vec<u8>) {
        varint(field << 3, out);
        varint(v, out);
    }

    fn field_bytes(field: u64, b: &[u8], out: &mut Vec<u8>) {
        varint(field << 3 | 2, out);
        varint(b.len() as u64, out);
        out.extend_from_slice(b);
    }

    fn snapshot(clocks: &[(u32, u64)], primary: Option<u32>) -> Vec<u8> {
        let mut s = Vec::new();
        for &(id, ts) in clocks {
            let mut c = Vec::new();
            field_varint(1, id.into(), &mut c);
            field_varint(2, ts, &mut c);
            field_bytes(1, &c, &mut s);
        }
        if let Some(p) = primary {
            field_varint(2, p.into(), &mut s);
        }
        s
    }

    /// A packet on `seq` holding `fields`.
    fn packet(seq: u32, fields: &[(u64, Vec<u8>)]) -> Vec<u8> {
        let mut p = Vec::new();
        for (f, b) in fields {
            field_bytes(*f, b, &mut p);
        }
        field_varint(10, seq.into(), &mut p);
        let mut out = Vec::new();
        field_bytes(1, &p, &mut out);
        out
    }

    fn scan(bytes: &[u8]) -> std::result::Result<SystemTrace<Cursor<&[u8]>>, SystemTraceError> {
        SystemTrace::scan("sys.pftrace", Cursor::new(bytes))
    }

    fn boot_real(seq: u32, boot: u64) -> Vec<u8> {
        packet(
            seq,
            &[(
                6,
                snapshot(&[(6, boot), (3, boot - 5), (1, boot + 1_000)], None),
            )],
        )
    }

    #[test]
    fn gathers_sequences_uuids_and_the_clock() {
        let mut t = boot_real(1, 100);
        let mut td = Vec::new();
        field_varint(1, 0xabc, &mut td);
        field_varint(5, 0xdef, &mut td);
        t.extend(packet(7, &[(60, td)]));
        let mut ev = Vec::new();
        field_varint(11, 0x123, &mut ev);
        field_varint(9, 1, &mut ev);
        t.extend(packet(3, &[(11, ev.clone())]));
        let mut ted = Vec::new();
        field_varint(11, 0x456, &mut ted);
        let mut defaults = Vec::new();
        field_bytes(11, &ted, &mut defaults);
        t.extend(packet(2, &[(59, defaults)]));
        // An ftrace bundle (field 1) and other fields this scan does not read pass through.
        t.extend(packet(4, &[(1, vec![0x08, 0x01])]));
        let s = scan(&t).unwrap();
        assert_eq!(s.packets(), 5);
        assert_eq!(s.max_sequence(), 7);
        let want: HashSet<u64> = [0xabc, 0xdef, 0x123, 0x456].into();
        assert_eq!(s.uuids(), &want);
        assert_eq!(s.trace_clock(), BOOTTIME);
    }

    #[test]
    fn copies_the_bytes_it_scanned() {
        let t = [boot_real(1, 100), boot_real(1, 200)].concat();
        let mut s = scan(&t).unwrap();
        let mut out = Vec::new();
        s.copy_to(&mut out).unwrap();
        assert_eq!(out, t);
        // Twice: the copy starts from the beginning again.
        out.clear();
        s.copy_to(&mut out).unwrap();
        assert_eq!(out, t);
    }

    #[test]
    fn a_file_cut_after_the_scan_is_an_error() {
        let t = [boot_real(1, 100), boot_real(1, 200)].concat();
        let mut s = scan(&t).unwrap();
        s.source = Cursor::new(&t[..t.len() - 3]);
        let err = s.copy_to(&mut Vec::new()).unwrap_err();
        assert!(
            matches!(
                &err,
                ExportError::System(SystemTraceError::Changed { name, .. }) if name == "sys.pftrace"
            ),
            "{err}"
        );
    }

    fn not_a_trace(bytes: &[u8], needle: &str) {
        let err = scan(bytes).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, SystemTraceError::NotATrace { .. }),
            "{needle}: {msg}"
        );
        assert!(
            msg.starts_with("sys.pftrace: not a Perfetto trace: "),
            "{msg}"
        );
        assert!(msg.contains(needle), "'{needle}' in {msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
    }

    #[test]
    fn bad_protos_are_named() {
        not_a_trace(b"", "empty");
        not_a_trace(b"hello, world\n", "byte 0 starts field 13 of wire type 0");
        not_a_trace(&[0x1f, 0x8b, 8, 0, 0, 0], "gzip");
        not_a_trace(b"HUBBLTRC\x03\x00", "field 9 of wire type 0");
        let good = boot_real(1, 100);
        let n = good.len();
        not_a_trace(&good[..n - 1], "past the end of the file");
        not_a_trace(&[0x0a], "ends inside the packet at byte 0");
        not_a_trace(&[0x0a, 0x80], "ends inside a varint");
        not_a_trace(
            &[0x0a; 11],
            "the packet at byte 0 is 10 bytes long, past the end",
        );
        let mut two = good.clone();
        two.extend(&good[..3]);
        not_a_trace(&two, &format!("the packet at byte {n} is"));
        // Well framed packets whose contents are not.
        not_a_trace(
            &[0x0a, 0x02, 0x33, 0x00],
            "the packet at byte 0: field 6 has wire type 3",
        );
        not_a_trace(&[0x0a, 0x02, 0x30, 0x01], "field 6 has the wrong wire type");
        not_a_trace(&[0x0a, 0x03, 0x32, 0x05, 0x00], "field 6 runs past the end");
        not_a_trace(&[0x0a, 0x04, 0x32, 0x02, 0x08, 0x80], "a varint cut short");
        not_a_trace(&[0x0a, 0x02, 0x00, 0x00], "field number 0");
        // Random bytes.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let bytes: Vec<u8> = (0..64)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            // Whatever it finds, it is an error and not a panic.
            assert!(scan(&bytes).is_err());
        }
    }

    #[test]
    fn compressed_packets_are_refused() {
        let mut t = boot_real(1, 100);
        let at = t.len();
        t.extend(packet(1, &[(50, vec![1, 2, 3])]));
        let err = scan(&t).unwrap_err();
        assert!(
            matches!(err, SystemTraceError::Compressed { offset, .. } if offset == at as u64),
            "{err}"
        );
        assert!(err.to_string().contains("traceconv decompress_packets"));
    }

    fn no_path(bytes: &[u8], needle: &str) {
        let err = scan(bytes).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, SystemTraceError::NoClockPath { .. }), "{msg}");
        assert!(
            msg.starts_with("sys.pftrace: no clock snapshot relates BOOTTIME"),
            "{msg}"
        );
        assert!(msg.contains(needle), "'{needle}' in {msg}");
    }

    #[test]
    fn the_snapshots_must_lead_from_realtime_to_the_trace_clock() {
        let mut td = Vec::new();
        field_varint(1, 5, &mut td);
        no_path(&packet(1, &[(60, td)]), "it holds no clock snapshot");
        no_path(
            &packet(1, &[(6, snapshot(&[(6, 10), (3, 5)], None))]),
            "its 1 clock snapshot(s) relate only MONOTONIC, BOOTTIME",
        );
        no_path(
            &packet(1, &[(6, snapshot(&[(6, 10)], None))]),
            "relate no two global clocks",
        );
        // A sequence's own clocks (64-127) relate nothing beyond it.
        no_path(
            &[
                packet(1, &[(6, snapshot(&[(6, 10), (64, 3)], None))]),
                packet(1, &[(6, snapshot(&[(64, 4), (1, 20)], None))]),
            ]
            .concat(),
            "its 2 clock snapshot(s) relate no two global clocks",
        );
        // Two hops through MONOTONIC, in two kinds of snapshot: what trace processor follows.
        let chain = [
            packet(1, &[(6, snapshot(&[(6, 10), (3, 5)], None))]),
            packet(2, &[(6, snapshot(&[(3, 7), (1, 900)], None))]),
        ]
        .concat();
        assert_eq!(scan(&chain).unwrap().trace_clock(), BOOTTIME);
        // A trace clock named by the snapshot.
        let mono = packet(1, &[(6, snapshot(&[(3, 7), (1, 900)], Some(3)))]);
        assert_eq!(scan(&mono).unwrap().trace_clock(), 3);
        let err = scan(&packet(1, &[(6, snapshot(&[(6, 7), (1, 900)], Some(3)))])).unwrap_err();
        assert!(
            err.to_string()
                .contains("no clock snapshot relates MONOTONIC (its trace clock)"),
            "{err}"
        );
        // More hops than trace processor follows (with Hubble's own hop to REALTIME).
        let long = [
            packet(1, &[(6, snapshot(&[(6, 1), (3, 1)], None))]),
            packet(1, &[(6, snapshot(&[(3, 1), (5, 1)], None))]),
            packet(1, &[(6, snapshot(&[(5, 1), (4, 1)], None))]),
            packet(1, &[(6, snapshot(&[(4, 1), (1, 1)], None))]),
        ]
        .concat();
        no_path(&long, "relate only REALTIME, MONOTONIC, MONOTONIC_COARSE");
    }

    #[test]
    fn realtime_set_back_is_refused() {
        let back = [boot_real(1, 100_000), boot_real(1, 200_000)].concat();
        assert!(scan(&back).is_ok());
        let mut set_back = boot_real(1, 100_000);
        let at = set_back.len() as u64;
        set_back.extend(packet(
            1,
            &[(6, snapshot(&[(6, 200_000), (3, 199_995), (1, 50)], None))],
        ));
        let err = scan(&set_back).unwrap_err();
        assert!(
            matches!(err, SystemTraceError::RealtimeBackwards { offset, .. } if offset == at),
            "{err}"
        );
        // Snapshots of other clocks are series of their own, as in trace processor.
        let other = [
            boot_real(1, 100_000),
            packet(1, &[(6, snapshot(&[(6, 200_000), (1, 50)], None))]),
        ]
        .concat();
        assert!(scan(&other).is_ok());
    }
}
