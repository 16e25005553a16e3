//! Many-thread mode (`docs/many-threads.md`): one pool of fixed-size blocks shared by every
//! traced thread, the block-end slow path's reference writer, and the reader that turns a
//! stopped pool into one stream of slots per thread.
//!
//! Layout (all words are 8-byte slots; addresses are what the traced thread's block holds):
//!
//! ```text
//! pool:   [next: ticket counter][mask: N - 1][blocks: address of block 0][delay: N - A]
//!         [block bytes: 8 B][take: address of this ISA's block-end function, or 0]
//!         block 0 | block 1 | ... | block N-1            (N a power of two, B slots each)
//! block:  [0: lo = seq, hi = tid][1: ticket][2: counter at take][3: close][4: state]
//!         [5 ..: data slots, exactly as a ring's (entries, exits, start records)]
//! ```
//!
//! `close` is the address one past the block's last written slot (0 while the block is open);
//! `state` is [`OWNED`] (1) or `bound << 1`: free for tickets from `bound` on. A seal sets
//! `bound` = the pool's head + `delay` (N − A), so a block lives N − A tickets after it is
//! *sealed*, not N after it was *taken*: a thread that holds a block long (a little thread)
//! does not lose it at the counter's next pass while records of the same age survive in the
//! blocks other threads took since (`docs/many-threads.md`, "Reuse after the seal").
//! The traced thread's words in pool mode: `cursor` the next
//! slot or [`SEALED`]; `limit` the block's end (− 8 in 64-bit mode) or 0; `begin` the pool's
//! address + 1 (the tag that selects pool mode in the slow path); `end` the current block's
//! address while the thread holds one, the next `seq` while it holds none.
//!
//! [`PoolWriter`] is the traced side's algorithm slot for slot (what the emitted A64/T32/x86_64
//! sequences and the runtime's atomic model must leave behind), single-threaded and
//! deterministic; [`thread_streams`] reads a snapshot.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use hubble_layout as layout;

use crate::slot::{self, BadMethod, Mode, SLOT_BYTES};

// The slots below are ART's: art-patches/files/runtime/hubble/pool_layout.h gives them in bytes
// (what the hand-written block-end functions address), and hubble_layout is that header read by
// bindgen, so a slot moved there moves here and in every caller.

/// The slot at byte offset `bytes` of a pool or block header.
const fn slot_at(bytes: u32) -> usize {
    assert!(
        bytes as usize % SLOT_BYTES == 0,
        "pool_layout.h: an offset between slots"
    );
    bytes as usize / SLOT_BYTES
}

/// Slots before block 0: next, mask, blocks, delay, block bytes, take (the last one).
pub const POOL_HEADER_SLOTS: usize = P_TAKE + 1;
/// Header slots at the start of every block (the data's first slot, `HUBBLE_BLOCK_DATA`).
pub const BLOCK_HEADER_SLOTS: usize = slot_at(layout::HUBBLE_BLOCK_DATA);
/// Header slot: `lo` = the thread's block sequence number, `hi` = its tid.
pub const H_IDENT: usize = slot_at(layout::HUBBLE_BLOCK_IDENT);
/// Header slot: the pool ticket the block was taken with (recency across threads).
pub const H_TICKET: usize = slot_at(layout::HUBBLE_BLOCK_TICKET);
/// Header slot: the full timer counter when the block was taken.
pub const H_TIME: usize = slot_at(layout::HUBBLE_BLOCK_TIME);
/// Header slot: address one past the last slot written (0: open).
pub const H_CLOSE: usize = slot_at(layout::HUBBLE_BLOCK_CLOSE);
/// Header slot: [`OWNED`], or `bound << 1` (free for tickets ≥ `bound`; see [`free_from`]).
pub const H_STATE: usize = slot_at(layout::HUBBLE_BLOCK_STATE);
/// Pool header slot: the ticket counter (the head), taken with a relaxed fetch-add.
pub const P_NEXT: usize = slot_at(layout::HUBBLE_POOL_NEXT);
/// Pool header slot: N − 1 (N a power of two), a ticket's block index mask.
pub const P_MASK: usize = slot_at(layout::HUBBLE_POOL_MASK);
/// Pool header slot: the address of block 0.
pub const P_BLOCKS: usize = slot_at(layout::HUBBLE_POOL_BLOCKS);
/// Pool header slot: N − A, added to the head by a seal (the reuse bound).
pub const P_DELAY: usize = slot_at(layout::HUBBLE_POOL_DELAY);
/// Pool header slot: a block's size in bytes (8 B), which the emitted code multiplies by.
pub const P_BLOCK_BYTES: usize = slot_at(layout::HUBBLE_POOL_BLOCK_BYTES);
/// Pool header slot: the address of the block-end function the compiled code calls
/// (`hubble_pool_take`, `art-patches/files/runtime/hubble/pool_<isa>.S`), set by the runtime;
/// the pool is found from `begin`, so compiled code needs no entrypoint and `Thread` no word.
pub const P_TAKE: usize = slot_at(layout::HUBBLE_POOL_TAKE);
/// `cursor` of a thread that holds no block (8: not 0, which means tracing off; not 1, which
/// `stop` uses for "requested", since a stop publishes the cursor).
pub const SEALED: u64 = layout::HUBBLE_POOL_SEALED as u64;
/// Candidates a slow path looks at before it gives up and drops the record (`docs/many-threads.md`:
/// only when the pool is saturated, visible as a gap in `seq`). Not 2: blocks taken together
/// (a wave of new threads, the big threads' consecutive blocks) are sealed together and so are
/// unclaimable together for N − A tickets; with two tries the 64-thread stress test dropped 70
/// records in 14 700 takes, each a gap that cut the latest fragment at the head. Every skipped
/// ticket moves the head on, which brings every delayed block's bound nearer: the loop ends
/// unless every block is owned.
pub const TRIES: usize = layout::HUBBLE_POOL_TRIES as usize;
/// Block state: free for every ticket (a block never taken).
pub const FREE: u64 = 0;
/// Block state: owned by a thread.
pub const OWNED: u64 = layout::HUBBLE_POOL_OWNED as u64;

/// The state a seal stores: free for tickets from `bound` on (even, so never [`OWNED`]).
pub const fn free_from(bound: u64) -> u64 {
    bound << 1
}

/// Whether a taker holding `ticket` may claim a block whose state is `state`: not owned, and
/// the ticket at or past the seal's bound (tickets are 64-bit and never wrap in practice; the
/// comparison is a plain one so the 32-bit emitters compare the low word after a check of the
/// high one, `docs/many-threads.md`).
pub const fn claimable(state: u64, ticket: u64) -> bool {
    state != OWNED && ticket >= state >> 1
}
/// Block size the runtime and the emitted code use (16 KiB, `BLOCK_SHIFT` = 14).
pub const BLOCK_BYTES: usize = 16 << 10;

/// Pool dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Number of blocks N (a power of two).
    pub blocks: usize,
    /// Slots per block B (header included).
    pub block_slots: usize,
    /// BTrace's active-block bound A (≤ N): a sealed block is reusable N − A tickets after its
    /// seal, so every record written since the head was N − A tickets back is kept. A = N is the
    /// first session's rule (reusable at once, at the counter's next pass), kept reachable so
    /// the stress test and the bench show what it costs.
    pub active: usize,
}

impl Geometry {
    /// Total slots of the pool, header included.
    pub fn total_slots(&self) -> usize {
        POOL_HEADER_SLOTS + self.blocks * self.block_slots
    }
    /// Slot index of block `i`'s first header slot.
    pub fn block_index(&self, i: usize) -> usize {
        POOL_HEADER_SLOTS + i * self.block_slots
    }
    /// Data slots a block holds.
    pub fn data_slots(&self) -> usize {
        self.block_slots - BLOCK_HEADER_SLOTS
    }
    /// N − A: how many tickets a sealed block waits before it is claimable.
    pub fn delay(&self) -> u64 {
        self.blocks.saturating_sub(self.active) as u64
    }
}

/// A traced thread's five words in pool mode (the model of `Thread::tlsPtr_.hubble_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadWords {
    /// Next slot address, [`SEALED`], or 0 (off).
    pub cursor: u64,
    /// Block end (− 8 in 64-bit mode) or 0.
    pub limit: u64,
    /// Current block's address, or the next seq while [`SEALED`].
    pub end: u64,
    /// The thread's tid (ART's `tls32_.tid`, read by the slow path).
    pub tid: u32,
}

/// The pool written exactly as the traced threads write it, one call at a time.
#[derive(Clone, Debug)]
pub struct PoolWriter {
    mode: Mode,
    geometry: Geometry,
    base: u64,
    slots: Vec<u64>,
    threads: BTreeMap<u32, ThreadWords>,
    /// Records dropped because no block was free within [`TRIES`] candidates.
    pub dropped: u64,
}

impl PoolWriter {
    /// An empty pool at address `base` (8-aligned, above `SEALED + 8 · TRIES`: the emitted loop may count its tries in the cursor word).
    pub fn new(mode: Mode, geometry: Geometry, base: u64) -> PoolWriter {
        assert!(geometry.active <= geometry.blocks, "A ≤ N");
        assert!(
            geometry.blocks.is_power_of_two(),
            "N must be a power of two"
        );
        assert!(
            geometry.block_slots > BLOCK_HEADER_SLOTS + 1,
            "a block needs room for a two-slot record"
        );
        let mut slots = alloc::vec![0; geometry.total_slots()];
        slots[P_MASK] = (geometry.blocks - 1) as u64;
        slots[P_BLOCKS] = base + (POOL_HEADER_SLOTS * SLOT_BYTES) as u64;
        slots[P_DELAY] = geometry.delay();
        slots[P_BLOCK_BYTES] = (geometry.block_slots * SLOT_BYTES) as u64;
        PoolWriter {
            mode,
            geometry,
            base,
            slots,
            threads: BTreeMap::new(),
            dropped: 0,
        }
    }

    fn index(&self, addr: u64) -> usize {
        ((addr - self.base) / SLOT_BYTES as u64) as usize
    }
    fn load(&self, addr: u64) -> u64 {
        self.slots[self.index(addr)]
    }
    fn store(&mut self, addr: u64, value: u64) {
        let i = self.index(addr);
        self.slots[i] = value;
    }
    fn block_bytes(&self) -> u64 {
        (self.geometry.block_slots * SLOT_BYTES) as u64
    }

    /// The runtime's part of the header the traced side only reads: the block-end function's
    /// address (`P_TAKE`), so that a comparison with emitted code covers every header slot.
    pub fn set_take_entry(&mut self, addr: u64) {
        self.slots[P_TAKE] = addr;
    }

    /// The pool's head (its ticket counter) as a pool that has handed out `ticket` tickets
    /// has it: for the tests of 32-bit code, whose 64-bit tickets must carry past 2^32.
    pub fn set_next_ticket(&mut self, ticket: u64) {
        self.slots[P_NEXT] = ticket;
    }

    /// The control thread starts tracing `tid` in pool mode: no block yet, seq 0.
    pub fn start_thread(&mut self, tid: u32) {
        self.threads.insert(
            tid,
            ThreadWords {
                cursor: SEALED,
                limit: 0,
                end: 0,
                tid,
            },
        );
    }

    /// The thread's words (None if never started).
    pub fn words(&self, tid: u32) -> Option<ThreadWords> {
        self.threads.get(&tid).copied()
    }

    /// The thread exits: it seals its block (readable until the pool overwrites it).
    pub fn thread_exit(&mut self, tid: u32) {
        if let Some(mut w) = self.threads.remove(&tid) {
            if w.cursor != SEALED && w.cursor != 0 {
                self.seal(&mut w);
            }
        }
    }

    /// Seals the thread's block at its cursor (block end, a close, or thread exit).
    fn seal(&mut self, w: &mut ThreadWords) {
        let block = w.end;
        self.store(block + (H_CLOSE * SLOT_BYTES) as u64, w.cursor);
        let seq = self.load(block) as u32;
        w.end = u64::from(seq.wrapping_add(1));
        // STLR: data and close before the state (the next owner's acquire pairs with it).
        // The bound counts from the head now, not from the block's ticket: the block's newest
        // records are as recent as the head.
        let bound = self.slots[P_NEXT].wrapping_add(self.slots[P_DELAY]);
        self.store(block + (H_STATE * SLOT_BYTES) as u64, free_from(bound));
        w.cursor = SEALED;
        w.limit = 0;
    }

    /// The pool path of the slow path: seal the current block (if any), take the next free one
    /// from the pool (at most [`TRIES`] tickets), write its header. Returns false if no block
    /// was free (the record is dropped; `seq` jumps so the reader sees the gap).
    fn next_block(&mut self, w: &mut ThreadWords, counter: u64) -> bool {
        if w.cursor != SEALED {
            self.seal(w);
        }
        w.cursor = SEALED;
        w.limit = 0;
        for _ in 0..TRIES {
            let ticket = self.slots[P_NEXT];
            self.slots[P_NEXT] = ticket.wrapping_add(1); // LDADD
            let i = (ticket & self.slots[P_MASK]) as usize;
            let block = self.slots[P_BLOCKS] + (i * self.geometry.block_slots * SLOT_BYTES) as u64;
            let state_addr = block + (H_STATE * SLOT_BYTES) as u64;
            // LDR + CASA: claim only a block that is free for this ticket.
            if !claimable(self.load(state_addr), ticket) {
                continue;
            }
            self.store(state_addr, OWNED);
            self.store(block, slot::pack(w.tid, w.end as u32));
            self.store(block + SLOT_BYTES as u64, ticket);
            self.store(block + 2 * SLOT_BYTES as u64, counter);
            self.store(block + 3 * SLOT_BYTES as u64, 0);
            w.end = block;
            w.cursor = block + (BLOCK_HEADER_SLOTS * SLOT_BYTES) as u64;
            let end = block + self.block_bytes();
            w.limit = match self.mode {
                Mode::Bits64 => end - SLOT_BYTES as u64,
                Mode::Bits32 => end,
            };
            return true;
        }
        w.end = u64::from((w.end as u32).wrapping_add(1));
        self.dropped += 1;
        false
    }

    fn record(&mut self, tid: u32, encoded: [u64; 2], used: usize, counter: u64) -> bool {
        let Some(mut w) = self.threads.get(&tid).copied() else {
            return false;
        };
        if w.cursor == 0 {
            return false;
        }
        // A task record takes two slots in 32-bit mode too, where the limit is the block's end:
        // with one slot left, that slot is padded (as a 64-bit ring's wrap pads) and the
        // record goes to the next block. (64-bit limits keep room for two.)
        if self.mode == Mode::Bits32 && used == 2 && w.cursor < w.limit && w.limit - w.cursor <= 8 {
            self.store(w.cursor, slot::encode_pad());
            w.cursor += SLOT_BYTES as u64;
        }
        if w.cursor >= w.limit && !self.next_block(&mut w, counter) {
            self.threads.insert(tid, w);
            return false;
        }
        for v in &encoded[..used] {
            self.store(w.cursor, *v);
            w.cursor += SLOT_BYTES as u64;
        }
        self.threads.insert(tid, w);
        true
    }

    /// Method entry on thread `tid` at timer value `counter`.
    pub fn entry(&mut self, tid: u32, method: u64, counter: u64) -> Result<bool, BadMethod> {
        let (encoded, used) = slot::encode_entry(self.mode, method, counter as u32)?;
        Ok(self.record(tid, encoded, used, counter))
    }

    /// Method exit on thread `tid`.
    pub fn exit(&mut self, tid: u32, counter: u64) -> bool {
        self.record(tid, [slot::encode_exit(counter as u32), 0], 1, counter)
    }

    /// A task record on thread `tid` (after the entry of the method that writes it).
    pub fn task(
        &mut self,
        tid: u32,
        kind: slot::TaskKind,
        task: u32,
        queue: u32,
        counter: u64,
    ) -> Result<bool, slot::BadIdentity> {
        let encoded = slot::encode_task(kind, task, queue, counter as u32)?;
        Ok(self.record(tid, encoded, 2, counter))
    }

    /// The pool as a flush reads it once every thread is stopped: each open block's `close`
    /// set to its owner's cursor (the control thread does this in its copy, from the end
    /// positions the threads published).
    pub fn snapshot(&self) -> Vec<u64> {
        let mut out = self.slots.clone();
        for w in self.threads.values() {
            if w.cursor != SEALED && w.cursor != 0 {
                let close = self.index(w.end) + H_CLOSE;
                out[close] = w.cursor;
            }
        }
        out
    }

    /// The pool's address.
    pub fn base(&self) -> u64 {
        self.base
    }
    /// The geometry.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }
    /// The live slots (open blocks not closed).
    pub fn slots(&self) -> &[u64] {
        &self.slots
    }
}

/// One block as read from a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockInfo {
    /// Block index in the pool.
    pub index: usize,
    /// The owner's tid.
    pub tid: u32,
    /// The owner's block sequence number.
    pub seq: u32,
    /// Pool ticket.
    pub ticket: u64,
    /// Timer counter when taken.
    pub time: u64,
    /// Data slots written.
    pub used: usize,
}

/// A thread's continuous run of blocks, linearized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadStream {
    /// The thread.
    pub tid: u32,
    /// Blocks in the run, oldest first.
    pub blocks: Vec<BlockInfo>,
    /// Their data slots, oldest first: decode with `RingView::linear`.
    pub slots: Vec<u64>,
}

/// What is wrong with a pool snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolError {
    /// The snapshot's length does not match the geometry.
    BadLength {
        /// Slots expected.
        expected: usize,
        /// Slots given.
        got: usize,
    },
    /// A block's `close` lies outside its data area.
    BadClose {
        /// Block index.
        block: usize,
        /// The close address.
        close: u64,
    },
}

impl core::fmt::Display for PoolError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PoolError::BadLength { expected, got } => {
                write!(
                    f,
                    "pool snapshot has {got} slots, the geometry says {expected}"
                )
            }
            PoolError::BadClose { block, close } => write!(
                f,
                "block {block} closes at {close:#x}, outside its data area: the pool is corrupt"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for PoolError {}

/// Every used block of a snapshot (`close` != 0), in pool order.
pub fn blocks(
    snapshot: &[u64],
    geometry: Geometry,
    base: u64,
) -> Result<Vec<BlockInfo>, PoolError> {
    if snapshot.len() != geometry.total_slots() {
        return Err(PoolError::BadLength {
            expected: geometry.total_slots(),
            got: snapshot.len(),
        });
    }
    let mut out = Vec::new();
    for index in 0..geometry.blocks {
        let at = geometry.block_index(index);
        // The block's header words, by their slot numbers (H_IDENT is 0).
        let header = &snapshot[at..];
        let close = header[H_CLOSE];
        if close == 0 {
            continue;
        }
        let data = base + ((at + BLOCK_HEADER_SLOTS) * SLOT_BYTES) as u64;
        // Whole slots of the block's data area, from none to all of it.
        let Some(used_bytes) = close.checked_sub(data).filter(|&u| {
            u % SLOT_BYTES as u64 == 0 && u <= (geometry.data_slots() * SLOT_BYTES) as u64
        }) else {
            return Err(PoolError::BadClose {
                block: index,
                close,
            });
        };
        let (tid, seq) = slot::unpack(header[H_IDENT]);
        out.push(BlockInfo {
            index,
            tid,
            seq,
            ticket: header[H_TICKET],
            time: header[H_TIME],
            used: (used_bytes / SLOT_BYTES as u64) as usize,
        });
    }
    Ok(out)
}

/// The snapshot as one stream per thread: each thread's blocks by ticket, cut into runs of
/// consecutive `seq` (a gap is a block the pool overwrote or a record dropped), newest run last
/// per thread. Streams are ordered by tid, then age.
pub fn thread_streams(
    snapshot: &[u64],
    geometry: Geometry,
    base: u64,
) -> Result<Vec<ThreadStream>, PoolError> {
    let mut by_tid: BTreeMap<u32, Vec<BlockInfo>> = BTreeMap::new();
    for b in blocks(snapshot, geometry, base)? {
        by_tid.entry(b.tid).or_default().push(b);
    }
    let mut out = Vec::new();
    for (tid, mut list) in by_tid {
        list.sort_by_key(|b| b.ticket);
        let mut run: Vec<BlockInfo> = Vec::new();
        for b in list {
            if let Some(last) = run.last() {
                if last.seq.wrapping_add(1) != b.seq {
                    out.push(linearize(
                        tid,
                        core::mem::take(&mut run),
                        snapshot,
                        geometry,
                    ));
                }
            }
            run.push(b);
        }
        if !run.is_empty() {
            out.push(linearize(tid, run, snapshot, geometry));
        }
    }
    Ok(out)
}

fn linearize(tid: u32, blocks: Vec<BlockInfo>, snapshot: &[u64], g: Geometry) -> ThreadStream {
    let mut slots = Vec::with_capacity(blocks.iter().map(|b| b.used).sum());
    for b in &blocks {
        let data = g.block_index(b.index) + BLOCK_HEADER_SLOTS;
        slots.extend_from_slice(&snapshot[data..data + b.used]);
    }
    ThreadStream { tid, blocks, slots }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ART's pool_layout.h is the one definition of the pool's layout (hubble_layout reads it);
    /// it must be the layout this module's documentation draws: six pool header slots (next,
    /// mask, blocks, delay, block bytes, take), five block header slots (ident, ticket, time,
    /// close, state) before the data, SEALED 8 (neither 0 nor 1), OWNED 1, 32 tries
    /// (`docs/many-threads.md`). A header edited alone fails here.
    #[test]
    fn the_layout_arts_header_gives_is_the_documented_one() {
        assert_eq!(
            [P_NEXT, P_MASK, P_BLOCKS, P_DELAY, P_BLOCK_BYTES, P_TAKE],
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(POOL_HEADER_SLOTS, 6);
        assert_eq!(
            [H_IDENT, H_TICKET, H_TIME, H_CLOSE, H_STATE],
            [0, 1, 2, 3, 4]
        );
        assert_eq!(BLOCK_HEADER_SLOTS, 5);
        assert_eq!((SEALED, OWNED, FREE, TRIES), (8, 1, 0, 32));
    }

    use crate::ring::{decode, RingView};
    use crate::slot::Record;

    const G: Geometry = Geometry {
        blocks: 4,
        block_slots: 9,
        active: 2,
    };

    fn records(stream: &ThreadStream, mode: Mode) -> Vec<Record> {
        decode(&RingView::linear(&stream.slots), mode)
            .expect("decodes")
            .records
    }

    // Two threads interleaved fill blocks; each thread's stream decodes to exactly its records,
    // in order, across its block boundaries (no pad, no start record between blocks).
    #[test]
    fn each_thread_reads_back_its_records_across_blocks() {
        let mut w = PoolWriter::new(Mode::Bits64, G, 0x1000);
        w.start_thread(7);
        w.start_thread(9);
        let mut want: BTreeMap<u32, Vec<Record>> = BTreeMap::new();
        for t in 0..10u64 {
            for tid in [7u32, 9] {
                let method = 0x100 + u64::from(tid) * 8;
                assert!(w.entry(tid, method, t * 2).unwrap());
                assert!(w.exit(tid, t * 2 + 1));
                want.entry(tid).or_default().extend([
                    Record::Entry {
                        method,
                        ts: (t * 2) as u32,
                    },
                    Record::Exit {
                        ts: (t * 2 + 1) as u32,
                    },
                ]);
            }
        }
        // 40 records, 4 data slots a block: 10 blocks taken from 4, so the oldest are gone.
        let streams = thread_streams(&w.snapshot(), G, 0x1000).unwrap();
        for s in &streams {
            let got = records(s, Mode::Bits64);
            let all = &want[&s.tid];
            assert_eq!(
                got.as_slice(),
                &all[all.len() - got.len()..],
                "tid {}",
                s.tid
            );
            assert!(
                got.len() >= 4,
                "tid {} kept only {} records",
                s.tid,
                got.len()
            );
        }
        assert_eq!(w.dropped, 0);
    }

    // A pool whose head is past 2^32 (set_next_ticket) hands its next ticket to the next block
    // taken: the ticket header and the head carry 64 bits, in 32-bit mode too.
    #[test]
    fn the_head_can_start_past_two_to_the_32() {
        let mut w = PoolWriter::new(Mode::Bits32, G, 0x1000);
        w.set_next_ticket((1 << 32) + 5);
        w.start_thread(7);
        assert!(w.entry(7, 0x7000_0040, 1).unwrap());
        let block = w.words(7).unwrap().end;
        let ticket = w.slots()[((block - 0x1000) / 8) as usize + H_TICKET];
        assert_eq!(ticket, (1 << 32) + 5);
        assert_eq!(w.slots()[P_NEXT], (1 << 32) + 6);
    }

    // A block still owned (a thread that lags) is skipped, never given to a second thread;
    // with every other candidate owned too, the record is dropped and seq shows the gap.
    #[test]
    fn an_owned_block_is_skipped_and_a_saturated_pool_drops_with_a_seq_gap() {
        // A = N: no delay after a seal, so this test is about ownership alone.
        let g = Geometry {
            blocks: 2,
            block_slots: 7,
            active: 2,
        };
        let mut w = PoolWriter::new(Mode::Bits32, g, 0x1000);
        w.start_thread(1);
        w.start_thread(2);
        assert!(w.exit(1, 1)); // ticket 0: block 0
        assert!(w.exit(2, 2)); // ticket 1: block 1
        assert!(w.exit(1, 3));
        // thread 1's block is full (2 data slots): tickets 2, 3 land on blocks 0 (its own, just
        // sealed: free) -- taken.
        assert!(w.exit(1, 4));
        assert_eq!(w.words(1).unwrap().end, 0x1000 + 6 * 8);
        assert!(w.exit(1, 5));
        // Now block 0 full again; candidates: ticket 3 -> block 1 (thread 2's: owned, skipped),
        // ticket 4 -> block 0 (just sealed by thread 1 itself: free).
        assert!(w.exit(1, 6));
        assert_eq!(w.dropped, 0);
        // Thread 3 arrives while both blocks are owned: tickets 5, 6 land on owned blocks.
        w.start_thread(3);
        assert!(!w.exit(3, 7));
        assert_eq!(w.dropped, 1);
        assert_eq!(w.words(3).unwrap().end, 1, "the drop bumps seq");
        assert_eq!(w.words(3).unwrap().cursor, SEALED);
    }

    /// A little thread (1) holds block 0 from ticket 0 while a big one (2) goes round the pool;
    /// the little one seals block 0 at head 15 and the big one's next ticket (16) lands on it.
    /// Returns whether the little thread's two oldest records are still in the pool.
    fn little_thread_keeps_its_sealed_block(active: usize) -> bool {
        let g = Geometry {
            blocks: 8,
            block_slots: 7,
            active,
        };
        let mut w = PoolWriter::new(Mode::Bits32, g, 0x1000);
        w.start_thread(1);
        w.start_thread(2);
        let mut ts = 0u64;
        let mut exit = |w: &mut PoolWriter, tid: u32| {
            ts += 1;
            assert!(w.exit(tid, ts), "tid {tid} dropped at ts {ts}");
        };
        exit(&mut w, 1);
        exit(&mut w, 1); // block 0 full, still owned
        while w.slots()[0] < 15 {
            exit(&mut w, 2); // ticket 8 skips the owned block 0
        }
        assert_eq!(w.slots()[0], 15);
        exit(&mut w, 1); // seal block 0 at head 15, take ticket 15 (block 7)
        for _ in 0..4 {
            exit(&mut w, 2); // ticket 16: block 0 again
        }
        assert_eq!(w.dropped, 0);
        let streams = thread_streams(&w.snapshot(), g, 0x1000).unwrap();
        streams
            .iter()
            .filter(|s| s.tid == 1)
            .flat_map(|s| records(s, Mode::Bits32))
            .any(|r| r == Record::Exit { ts: 1 })
    }

    // The seal's bound (head + N − A) keeps a block sealed at head 15 until ticket 21: ticket 16
    // skips it, so the little thread's records survive as long as the big thread's of the same
    // age. With A = N (no delay: the first session's rule) ticket 16 takes it and they go, while
    // the big thread's records from ts 3 on stay: the latest fragment breaks at ts 15.
    #[test]
    fn a_sealed_block_is_claimable_only_n_minus_a_tickets_after_its_seal() {
        assert!(little_thread_keeps_its_sealed_block(2));
        assert!(!little_thread_keeps_its_sealed_block(8));
        assert!(claimable(FREE, 0));
        assert!(!claimable(OWNED, 100));
        assert!(!claimable(free_from(21), 20));
        assert!(claimable(free_from(21), 21));
    }

    // A snapshot whose close points outside the block is refused, not read out of bounds.
    #[test]
    fn a_corrupt_close_is_an_error() {
        let mut w = PoolWriter::new(Mode::Bits64, G, 0x1000);
        w.start_thread(1);
        w.exit(1, 1);
        let mut snap = w.snapshot();
        snap[G.block_index(0) + H_CLOSE] = 0x1000 + 8 * 1000;
        assert!(matches!(
            thread_streams(&snap, G, 0x1000),
            Err(PoolError::BadClose { block: 0, .. })
        ));
        assert!(matches!(
            thread_streams(&snap[1..], G, 0x1000),
            Err(PoolError::BadLength { .. })
        ));
    }
}
