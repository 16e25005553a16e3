//! The guest every unicorn test of many-thread mode shares (`pool_a64.rs`, `pool_t32.rs`,
//! `nterp_pool_a32.rs`): its memory (code, one `Thread` page per thread, a stack, the pool),
//! the `Thread` words at the real offsets, the control thread's start of a thread in pool mode,
//! and the check after every trace point against `hubble_format::pool::PoolWriter` fed the same
//! calls.
use hubble_format::pool::{Geometry, PoolWriter, POOL_HEADER_SLOTS, SEALED};
use hubble_hotpath_emu::{field, thread_offsets};
use unicorn_engine::{Prot, Unicorn};

/// `Thread::TidOffset` in both pointer sizes (checked against thread-offsets.txt:
/// [`Layout::check_tid_offset`]).
pub const TID_OFFSET: u64 = 12;

/// The 32-bit guests' memory (T32 compiled code, armng's nterp).
pub const ARM32: Layout = Layout {
    threads: 0x40_0000,
    stack: 0x60_0000,
    pool: 0x100_0000,
    offsets: thread_offsets::ARM32,
    word_bytes: 4,
};

/// Where a guest keeps its threads, stack and pool, and its `Thread` words.
#[derive(Clone, Copy)]
pub struct Layout {
    /// Thread `i`'s page is at `threads + 0x1000 * i`.
    pub threads: u64,
    pub stack: u64,
    pub pool: u64,
    /// `thread_offsets::A64` or `thread_offsets::ARM32`.
    pub offsets: [i32; 5],
    /// Bytes of a `Thread` word: 8 or 4.
    pub word_bytes: usize,
}

impl Layout {
    /// Maps `code_bytes` of code (RWX) at `code`, a page per thread, a 64 KiB stack and the pool.
    pub fn map(
        &self,
        uc: &mut Unicorn<'static, ()>,
        code: u64,
        code_bytes: u64,
        threads: usize,
        geometry: Geometry,
    ) {
        uc.mem_map(code, code_bytes, Prot::ALL).unwrap();
        uc.mem_map(
            self.threads,
            0x1000 * threads as u64,
            Prot::READ | Prot::WRITE,
        )
        .unwrap();
        uc.mem_map(self.stack, 0x1_0000, Prot::READ | Prot::WRITE)
            .unwrap();
        let pool_bytes = (geometry.total_slots() as u64 * 8 + 0xfff) & !0xfff;
        uc.mem_map(self.pool, pool_bytes, Prot::READ | Prot::WRITE)
            .unwrap();
    }

    /// The pool's header as `writer` has it (its take entry set first).
    pub fn write_header(&self, uc: &mut Unicorn<'static, ()>, writer: &PoolWriter) {
        for (i, word) in writer.slots()[..POOL_HEADER_SLOTS].iter().enumerate() {
            uc.mem_write(self.pool + 8 * i as u64, &word.to_le_bytes())
                .unwrap();
        }
    }

    /// [`TID_OFFSET`] is ART's `Thread::TidOffset` for this pointer size, as
    /// thread-offsets.txt has it.
    pub fn check_tid_offset(&self) {
        let text = include_str!("../../../../art-patches/thread-offsets.txt");
        let key = format!("tid {} ", self.word_bytes);
        let line = text
            .lines()
            .find(|l| l.starts_with(&key))
            .unwrap_or_else(|| panic!("thread-offsets.txt has `{key}<offset>`"));
        assert_eq!(line[key.len()..].trim().parse::<u64>().unwrap(), TID_OFFSET);
    }

    pub fn thread(&self, i: usize) -> u64 {
        self.threads + 0x1000 * i as u64
    }

    fn word_at(&self, i: usize, f: usize) -> u64 {
        self.thread(i) + self.offsets[f] as u64
    }

    pub fn word(&self, uc: &Unicorn<'static, ()>, i: usize, f: usize) -> u64 {
        let bytes = uc
            .mem_read_as_vec(self.word_at(i, f), self.word_bytes)
            .unwrap();
        bytes.iter().rev().fold(0, |v, &b| (v << 8) | u64::from(b))
    }

    pub fn set_word(&self, uc: &mut Unicorn<'static, ()>, i: usize, f: usize, v: u64) {
        assert!(
            self.word_bytes == 8 || v >> 32 == 0,
            "{v:#x} in a 32-bit Thread word"
        );
        uc.mem_write(self.word_at(i, f), &v.to_le_bytes()[..self.word_bytes])
            .unwrap();
    }

    /// The control thread starts thread `i` as `tid` in pool mode (`pool::start`): no block,
    /// seq 0.
    pub fn start(
        &self,
        uc: &mut Unicorn<'static, ()>,
        writer: &mut PoolWriter,
        i: usize,
        tid: u32,
    ) {
        uc.mem_write(self.thread(i) + TID_OFFSET, &tid.to_le_bytes())
            .unwrap();
        for (f, v) in [
            (field::STOP, 0),
            (field::LIMIT, 0),
            (field::BEGIN, self.pool | 1),
            (field::END, 0),
            (field::CURSOR, SEALED),
        ] {
            self.set_word(uc, i, f, v);
        }
        writer.start_thread(tid);
    }

    /// Starts threads 0 to `threads` - 1 as tids `first`, `first + step`, ...; their tids.
    pub fn start_threads(
        &self,
        uc: &mut Unicorn<'static, ()>,
        writer: &mut PoolWriter,
        threads: usize,
        (first, step): (u32, u32),
    ) -> Vec<u32> {
        (0..threads)
            .map(|i| {
                let tid = first + step * i as u32;
                self.start(uc, writer, i, tid);
                tid
            })
            .collect()
    }

    /// The pool's slots as the guest left them.
    pub fn pool_slots(&self, uc: &Unicorn<'static, ()>, geometry: Geometry) -> Vec<u64> {
        let bytes = uc
            .mem_read_as_vec(self.pool, geometry.total_slots() * 8)
            .unwrap();
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// The whole pool and every thread's words against the reference writer.
    pub fn check(
        &self,
        uc: &Unicorn<'static, ()>,
        geometry: Geometry,
        writer: &PoolWriter,
        tids: &[u32],
        step: usize,
    ) {
        let got = self.pool_slots(uc, geometry);
        let want = writer.slots();
        if let Some(k) = (0..want.len()).find(|&k| got[k] != want[k]) {
            panic!(
                "step {step}: pool slot {k} is {:#x}, the reference writer's {:#x}",
                got[k], want[k]
            );
        }
        for (i, &tid) in tids.iter().enumerate() {
            let w = writer.words(tid).unwrap();
            let word = |f| self.word(uc, i, f);
            assert_eq!(
                (word(field::CURSOR), word(field::LIMIT), word(field::END)),
                (w.cursor, w.limit, w.end),
                "step {step}: thread {i}'s cursor, limit, end"
            );
            assert_eq!(word(field::STOP), 0);
            assert_eq!(word(field::BEGIN), self.pool | 1);
        }
    }
}

/// The reference writer fed the trace point the guest just ran: an entry of the method, or an
/// exit.
pub fn feed(writer: &mut PoolWriter, tid: u32, entry: Option<u64>, counter: u64) {
    match entry {
        Some(method) => {
            writer.entry(tid, method, counter).unwrap();
        }
        None => {
            writer.exit(tid, counter);
        }
    }
}
