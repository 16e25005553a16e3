//! A traced thread of the scene: its `Thread` image, its state, and what it observed itself
//! writing. The [`Tracer`] runs on the thread (its `%gs` base is the image, as ART's x86_64 code
//! finds its `Thread`) and calls the emitted entry and exit trace points and the task record's
//! writer; after each call it reads back the record just written, from the pool, before any
//! other thread could reuse the block. That is the scene's independent record of every record:
//! the flushed file must decode to exactly these, up to each thread's stop.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{ensure, Result};
use hubble_format::slot::{self, TaskKind};
use hubble_runtime::block::ThreadBlock;

use crate::art_double::ThreadState;
use crate::emu::HostMap;
use crate::native::{self, Code};
use crate::tasks::entrypoints::Entrypoints;

/// What a record says (the counter is kept apart, in [`Rec`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// Method entry.
    Entry(u64),
    /// Method exit.
    Exit,
    /// A task record.
    Task(TaskKind, u32, u32),
}

/// One record the thread wrote, with the full counter value of its timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rec {
    /// The record.
    pub what: What,
    /// Its time (the 32 bits the slot holds, extended by the thread's own counter read).
    pub counter: u64,
}

/// A thread of the scene as the control plane and the proof see it.
pub struct Traced {
    /// Its name (`Thread.getName()`).
    pub name: String,
    /// Its tid.
    pub tid: u32,
    /// The `Thread` image: the Hubble words and `tid` at the emitting ART's offsets.
    pub image: HostMap,
    /// Runnable or native, and the control thread's state lock.
    pub state: ThreadState,
    /// Records written so far (what a forced stop's snapshot counts).
    pub written: AtomicUsize,
    /// Everything the thread wrote, in order.
    pub recs: Mutex<Vec<Rec>>,
    /// Cooperative stops the thread answered: records written before each.
    pub stops: Mutex<Vec<usize>>,
    /// Forced stops (the control thread stopped it while native): records written before each.
    pub forced: Mutex<Vec<usize>>,
    block_offset: usize,
}

impl Traced {
    /// A thread with a fresh `Thread` image.
    pub fn new(name: &str, tid: u32, code: &Code) -> Result<Arc<Traced>> {
        let image = HostMap::new(0x4000)?;
        let block_offset = usize::try_from(code.offsets[0])?;
        let tid_offset = usize::try_from(code.tid_offset.unwrap_or(-1)).map_err(|_| {
            anyhow::anyhow!("the x86 blob file has no `tid 8` line: rerun scripts/hotpath-x86-gen")
        })?;
        ensure!(
            block_offset + 40 <= image.len() && tid_offset + 4 <= image.len(),
            "Thread offsets beyond the image"
        );
        // SAFETY: inside the image, 4-aligned (ART's tls32_), before any thread runs on it.
        unsafe {
            (image.addr() as *mut u8)
                .add(tid_offset)
                .cast::<u32>()
                .write(tid)
        };
        Ok(Arc::new(Traced {
            name: name.into(),
            tid,
            image,
            state: ThreadState::default(),
            written: AtomicUsize::new(0),
            recs: Mutex::new(Vec::new()),
            stops: Mutex::new(Vec::new()),
            forced: Mutex::new(Vec::new()),
            block_offset,
        }))
    }

    /// The `Thread*` handle the control plane knows it by.
    pub fn handle(&self) -> usize {
        self.image.addr() as usize
    }

    /// The block words.
    pub fn block(&self) -> &ThreadBlock {
        // SAFETY: five words inside the image (checked in `new`), alive as long as self.
        unsafe { &*((self.image.addr() as usize + self.block_offset) as *const ThreadBlock) }
    }

    fn tid_ptr(&self, code: &Code) -> *const u32 {
        let off = code.tid_offset.unwrap_or(0) as usize;
        // SAFETY: inside the image (checked in `new`).
        unsafe { (self.image.addr() as *const u8).add(off).cast() }
    }
}

/// The full counter of a slot's 32-bit timestamp, written just before `now` was read.
fn extend(ts: u32, now: u64) -> u64 {
    let c = (now & !0xffff_ffff) | u64::from(ts);
    if c > now {
        c - (1 << 32)
    } else {
        c
    }
}

fn slot_at(addr: u64) -> u64 {
    // SAFETY: only called for an address inside the block this thread just wrote (the cursor
    // it owns minus one or two slots), which no other thread writes while it owns the block.
    unsafe { (addr as *const u64).read_volatile() }
}

/// The calls a thread makes, on the thread itself.
pub struct Tracer<'a> {
    t: &'a Traced,
    code: &'a Code,
    ep: &'a Entrypoints,
    /// The pool's address range (a cursor outside it is no record).
    pool: (u64, u64),
}

impl<'a> Tracer<'a> {
    /// Binds the calling thread to `t`'s image (`%gs`).
    pub fn attach(
        t: &'a Traced,
        code: &'a Code,
        ep: &'a Entrypoints,
        pool: (u64, u64),
    ) -> Result<Self> {
        native::set_thread_register(t.image.addr())?;
        Ok(Tracer { t, code, ep, pool })
    }

    fn push(&self, what: What, ts: u32) -> (usize, u64) {
        let counter = extend(ts, crate::art_double::tsc());
        let mut recs = self.t.recs.lock().unwrap();
        recs.push(Rec { what, counter });
        self.t.written.store(recs.len(), Ordering::Release);
        (recs.len() - 1, counter)
    }

    fn stopped(&self) {
        let n = self.t.recs.lock().unwrap().len();
        self.t.stops.lock().unwrap().push(n);
    }

    /// The emitted trace point at `code`; `Some((index, counter))` of the record it wrote.
    fn trace_point(
        &self,
        code: u64,
        arg: u64,
        method: Option<u64>,
    ) -> Result<Option<(usize, u64)>> {
        // SAFETY: this thread's %gs is `t`'s image (attach), whose pool the control plane keeps.
        let (rcx, changed) = unsafe { native::call(code, arg) };
        ensure!(!changed, "{}: the trace point changed RDI", self.t.name);
        if rcx == 0 {
            return Ok(None); // tracing off, or no block was free (a drop)
        }
        if self.t.block().cursor.load(Ordering::Relaxed) as u64 != rcx {
            // The stop path: the cursor word is 0 (or already the restart's), RCX the end.
            self.stopped();
            return Ok(None);
        }
        let last = slot_at(rcx - 8);
        let (ts, lo) = ((last >> 32) as u32, last as u32);
        match method {
            None => ensure!(lo == slot::EXIT, "{}: an exit wrote {last:#x}", self.t.name),
            Some(m) if m >> 32 != 0 => ensure!(
                lo == slot::WIDE_ENTRY && slot_at(rcx - 16) == m,
                "{}: a wide entry of {m:#x} wrote {:#x} {last:#x}",
                self.t.name,
                slot_at(rcx - 16)
            ),
            Some(m) => ensure!(
                u64::from(lo) == m,
                "{}: an entry of {m:#x} wrote {last:#x}",
                self.t.name
            ),
        }
        let what = method.map_or(What::Exit, What::Entry);
        Ok(Some(self.push(what, ts)))
    }

    /// Method entry.
    pub fn enter(&self, method: u64) -> Result<Option<(usize, u64)>> {
        self.trace_point(self.code.entry(), method, Some(method))
    }

    /// Method exit.
    pub fn exit(&self) -> Result<Option<(usize, u64)>> {
        // RDI: any value (the return value register the trace point must preserve).
        self.trace_point(self.code.exit(), 0x5eed, None)
    }

    /// A task record, right after the entry of the method that submits or begins the task.
    pub fn task(&self, kind: TaskKind, task: u32, queue: u32) -> Result<Option<(usize, u64)>> {
        let block = self.t.block() as *const ThreadBlock as *mut u64;
        let before = self.t.block().cursor.load(Ordering::Relaxed);
        // SAFETY: the calling thread's block and tid (attach), whose pool the control plane
        // keeps alive.
        let after = unsafe {
            self.ep
                .task(block, kind.code(), task, queue, self.t.tid_ptr(self.code))
        };
        let written = after >= self.pool.0 + 16 && after <= self.pool.1 && {
            let want = slot::encode_task(kind, task, queue, 0)?;
            let mark = slot_at(after - 8);
            slot_at(after - 16) == want[0] && mark as u32 == slot::TASK
        };
        if written {
            let ts = (slot_at(after - 8) >> 32) as u32;
            return Ok(Some(self.push(What::Task(kind, task, queue), ts)));
        }
        // Not written: tracing was off (`before` 0), no block was free (a drop leaves the cursor
        // SEALED), or tp::Task took the stop path (the cursor 0, or already the restart's).
        if before != 0 && after != hubble_format::pool::SEALED {
            self.stopped();
        }
        Ok(None)
    }

    /// The method's own work: `us` microseconds of computation without calls.
    pub fn work_us(&self, us: u64) {
        let t0 = std::time::Instant::now();
        while t0.elapsed().as_micros() < u128::from(us) {
            native::spin(200);
        }
    }
}
