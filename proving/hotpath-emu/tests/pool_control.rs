//! Many-thread mode end to end on A64: the runtime's real control plane
//! (`hubble_runtime::Control` with a pool) drives threads whose trace points are the A64
//! emitter's bytes and the block-end function `pool_arm64.S`, run in unicorn against `Thread`
//! images and the pool in host memory (mapped into each engine at its host address, as the
//! main job maps its ring). The control plane starts every thread in the pool, rings the
//! doorbells, force-stops threads in native code, snapshots the pool, restarts each thread and
//! writes one version 4 file per flush; each file must decode to exactly the records each
//! thread's emitted code wrote since the previous flush, as the emulator observed them (the
//! record-publishing `str x16, [x19, #cursor]` executed, with the counter the test scripted).
//!
//! What is not real here: one emulated trace point runs at a time (a global lock), because
//! unicorn's engines emulate LDXR/STXR without atomicity between host threads; the races of the
//! pool are the loom models' (`rust/runtime/tests/loom_pool.rs`). The control thread does run
//! concurrently with the emulated code, as on a device.
mod common;

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use common::pool_code::{PoolCode, CODE, CODE_BYTES, STUB};
use hubble_format::pool::{Geometry, POOL_HEADER_SLOTS};
use hubble_format::{EventKind, Mode, Trace};
use hubble_hotpath_emu::{field, pool_take_a64, thread_offsets, Kind};
use hubble_runtime::props::CONSENT;
use hubble_runtime::{Art, Config, Control, ThreadHandle};
use hubble_testkit::runtime::{FakeArt, FakeProperties, FakeThread, MemStorage};
use unicorn_engine::{Arch, Mode as UcMode, Prot, RegisterARM64, TlbType, Unicorn};

const STACK: u64 = 0x20_0000;
const TID_OFFSET: usize = 12;
const PAGE: usize = 0x1000;

/// 512 blocks of 512 bytes, A = 16: every record of the test stays in the pool (the head
/// never comes round: checked), so each file must hold exactly what was written.
const G: Geometry = Geometry {
    blocks: 512,
    block_slots: 64,
    active: 16,
};

/// The counter every MRS returns during the current trace point (one trace point at a time).
static COUNTER: AtomicU64 = AtomicU64::new(1 << 33);
/// One emulated trace point at a time (see the module comment).
static EMULATED: Mutex<()> = Mutex::new(());

/// A page of host memory laid out like `Thread` (the Hubble block and `tid` at their real
/// offsets), page aligned so that unicorn can map it where it is.
struct Image(*mut u8);
// SAFETY: plain memory; the control plane reaches it through atomics (`ThreadBlock`).
unsafe impl Send for Image {}
// SAFETY: as above.
unsafe impl Sync for Image {}
impl Image {
    fn new(tid: u32) -> Image {
        let layout = Layout::from_size_align(PAGE, PAGE).unwrap();
        // SAFETY: a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        // SAFETY: inside the page just allocated, 4-aligned.
        unsafe { (ptr.add(TID_OFFSET) as *mut u32).write(tid) };
        Image(ptr)
    }
    fn handle(&self) -> ThreadHandle {
        self.0 as usize
    }
}
impl Drop for Image {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.0, Layout::from_size_align(PAGE, PAGE).unwrap()) };
    }
}

/// ART for the control plane: blocks in the `Thread` images; runnable state and the state lock
/// of a `FakeThread` per image (ART's suspend-request semantics, `runtime::testing`); names and
/// the rest from `FakeArt`; the timer is the scripted counter.
#[derive(Default)]
struct EmuArt {
    fake: FakeArt,
    states: Mutex<HashMap<ThreadHandle, Arc<FakeThread>>>,
}
impl EmuArt {
    fn state(&self, t: ThreadHandle) -> Arc<FakeThread> {
        self.states.lock().unwrap()[&t].clone()
    }
}
impl Art for EmuArt {
    fn block_address(&self, thread: ThreadHandle) -> usize {
        thread + thread_offsets::A64[field::CURSOR] as usize
    }
    fn pool_take_entry(&self) -> u64 {
        STUB
    }
    fn is_runnable(&self, thread: ThreadHandle) -> bool {
        let s = self.state(thread);
        self.fake.is_runnable(s.handle())
    }
    fn lock_state(&self, thread: ThreadHandle) {
        let s = self.state(thread);
        self.fake.lock_state(s.handle())
    }
    fn unlock_state(&self, thread: ThreadHandle) {
        let s = self.state(thread);
        self.fake.unlock_state(s.handle())
    }
    fn resolve(&self, methods: &[u64], out: &mut Vec<String>) {
        self.fake.resolve(methods, out)
    }
    fn resolve_unless_unloaded(&self, m: &[u64], generation: u64, out: &mut Vec<String>) -> bool {
        self.fake.resolve_unless_unloaded(m, generation, out)
    }
    fn loader_methods(&self, loader: usize, out: &mut Vec<u64>) {
        self.fake.loader_methods(loader, out)
    }
    fn timer(&self) -> u64 {
        COUNTER.load(Ordering::SeqCst)
    }
    fn timer_hz(&self) -> u64 {
        1_000_000_000
    }
    fn wall_ns(&self) -> u64 {
        self.fake.wall_ns()
    }
    fn attach_current_thread(&self, _name: &str) -> bool {
        true
    }
    fn detach_current_thread(&self) {}
}

/// (entry?, method, counter) of one record.
type Rec = (bool, u64, u64);

/// One thread's engine: the three trace points, the block-end function, a stack, its `Thread`
/// image and the pool, all at fixed or host addresses.
struct Engine {
    uc: Unicorn<'static, ()>,
    blobs: Vec<(Kind, u64, u64)>,
    thread: u64,
    published: Rc<Cell<u64>>,
}

impl Engine {
    fn new(thread: u64, pool: (u64, u64)) -> Engine {
        let mut uc = Unicorn::new(Arch::ARM64, UcMode::ARM).unwrap();
        uc.ctl_set_tlb_type(TlbType::VIRTUAL).unwrap();
        uc.mem_map(CODE, CODE_BYTES, Prot::ALL).unwrap();
        uc.mem_map(STACK, 0x1_0000, Prot::READ | Prot::WRITE)
            .unwrap();
        for (addr, len) in [(thread, PAGE as u64), pool] {
            // SAFETY: host memory that outlives the engine (the image and the pool live until
            // the test ends, after every worker thread has joined).
            unsafe {
                uc.mem_map_ptr(addr, len, Prot::READ | Prot::WRITE, addr as *mut _)
                    .unwrap()
            };
        }
        let code = PoolCode::place(&mut uc, pool_take_a64());
        let (blobs, after_mrs, publish) = (code.blobs, code.after_mrs, code.publish);
        let published = Rc::new(Cell::new(0u64));
        let p = Rc::clone(&published);
        uc.add_code_hook(CODE, CODE + CODE_BYTES - 1, move |uc, addr, _| {
            if let Some(&(reg, _)) = after_mrs.get(&addr) {
                let reg = RegisterARM64::X0 as i32 + i32::from(reg);
                uc.reg_write(reg, COUNTER.load(Ordering::SeqCst)).unwrap();
            }
            if publish.contains(&addr) {
                p.set(p.get() + 1);
            }
        })
        .unwrap();
        Engine {
            uc,
            blobs,
            thread,
            published,
        }
    }

    /// One trace point; the record it wrote, if any.
    fn run(&mut self, kind: Kind, method: u64) -> Option<Rec> {
        let _one = EMULATED.lock().unwrap();
        let counter = COUNTER.fetch_add(3, Ordering::SeqCst) + 3;
        let &(_, at, until) = self.blobs.iter().find(|b| b.0 == kind).unwrap();
        self.uc.reg_write(RegisterARM64::X0 as i32, method).unwrap();
        self.uc
            .reg_write(RegisterARM64::X19 as i32, self.thread)
            .unwrap();
        self.uc
            .reg_write(RegisterARM64::X30 as i32, 0x1234_5678)
            .unwrap();
        self.uc
            .reg_write(RegisterARM64::SP as i32, STACK + 0x8000)
            .unwrap();
        self.published.set(0);
        self.uc.emu_start(at, until, 0, 10_000).unwrap();
        assert_eq!(self.uc.reg_read(RegisterARM64::PC as i32).unwrap(), until);
        assert_eq!(
            self.uc.reg_read(RegisterARM64::X30 as i32).unwrap(),
            0x1234_5678,
            "LR not handed back"
        );
        match self.published.get() {
            0 => None,
            1 => Some((
                kind != Kind::Exit,
                if kind == Kind::Exit { 0 } else { method },
                counter,
            )),
            n => panic!("{n} publishing stores in one trace point"),
        }
    }
}

enum Cmd {
    /// Nested calls (entries, then as many exits) while runnable, then native code.
    Write(u32),
    /// Runnable: calls until the doorbell, which one more trace point answers.
    Spin,
    /// `ThreadDetached` on itself, then the OS thread ends.
    Exit,
}

struct Worker {
    tid: u32,
    handle: ThreadHandle,
    tx: mpsc::Sender<Cmd>,
    done: mpsc::Receiver<Vec<Rec>>,
    started: mpsc::Receiver<()>,
    join: Option<std::thread::JoinHandle<()>>,
}

fn method(tid: u32, i: u32) -> u64 {
    // Narrow and wide pointers (the wide ones take two slots).
    let low = 0x7000_0000 | (u64::from(tid) << 12) | (u64::from(i % 64) << 4);
    if i % 5 == 4 {
        (0x7f00 << 32) | low
    } else {
        low
    }
}

impl Worker {
    fn start(
        c: &Arc<Control<EmuArt>>,
        images: &Mutex<Vec<Image>>,
        pool: (u64, u64),
        tid: u32,
    ) -> Worker {
        let image = Image::new(tid);
        let handle = image.handle();
        images.lock().unwrap().push(image);
        let state: Arc<FakeThread> = Arc::from(FakeThread::new());
        c.art().states.lock().unwrap().insert(handle, state.clone());
        c.thread_attached(handle, tid, &format!("t{tid}"), false);
        let (tx, rx) = mpsc::channel::<Cmd>();
        let (done_tx, done) = mpsc::channel();
        let (started_tx, started) = mpsc::channel();
        let c2 = c.clone();
        let join = std::thread::spawn(move || {
            let mut e = Engine::new(handle as u64, pool);
            let block = c2.art().block_address(handle);
            // SAFETY: the block's words inside the image, alive until the test ends.
            let stop = unsafe { &*((block + 16) as *const AtomicU64) };
            while let Ok(cmd) = rx.recv() {
                match cmd {
                    Cmd::Write(n) => {
                        state.to_runnable();
                        let mut out = Vec::new();
                        for i in 0..n {
                            out.extend(e.run(Kind::Entry, method(tid, i)));
                        }
                        for _ in 0..n {
                            out.extend(e.run(Kind::Exit, 0));
                        }
                        state.to_native();
                        assert_eq!(
                            out.len(),
                            2 * n as usize,
                            "tid {tid}: a record was not written"
                        );
                        done_tx.send(out).unwrap();
                    }
                    Cmd::Spin => {
                        state.to_runnable();
                        let mut out = Vec::new();
                        let mut i = 0u32;
                        loop {
                            let kind = if i % 2 == 0 { Kind::Entry } else { Kind::Exit };
                            let m = if kind == Kind::Exit {
                                0
                            } else {
                                method(tid, i)
                            };
                            match e.run(kind, m) {
                                Some(rec) => out.push(rec),
                                None => break, // the stop, answered: nothing written
                            }
                            if i == 0 {
                                started_tx.send(()).unwrap();
                            }
                            i += 1;
                            if i > 400 {
                                // A long stretch without a trace point, until the doorbell.
                                while stop.load(Ordering::Acquire) == 0 {
                                    std::thread::yield_now();
                                }
                            }
                        }
                        state.to_native();
                        done_tx.send(out).unwrap();
                    }
                    Cmd::Exit => {
                        c2.thread_detached(handle);
                        done_tx.send(Vec::new()).unwrap();
                        return;
                    }
                }
            }
        });
        Worker {
            tid,
            handle,
            tx,
            done,
            started,
            join: Some(join),
        }
    }
    fn wait(&self) -> Vec<Rec> {
        self.done.recv_timeout(Duration::from_secs(60)).unwrap()
    }
    fn exit(mut self) {
        self.tx.send(Cmd::Exit).unwrap();
        self.wait();
        self.join.take().unwrap().join().unwrap();
    }
}

/// Each thread's records in a flushed file, counters recovered from the file alone.
fn records(files: &MemStorage, path: &std::path::Path) -> BTreeMap<u32, Vec<Rec>> {
    let bytes = files.files.lock().unwrap()[path].clone();
    let trace = Trace::parse(&bytes).expect("the flush's file parses");
    assert!(matches!(trace, Trace::Threads(_)), "a version 4 file");
    let mut out: BTreeMap<u32, Vec<Rec>> = BTreeMap::new();
    for section in trace.sections() {
        // One run per thread and file: each block's seq follows the one before (a restart that
        // seals skips one seq, but the run before the gap was in the previous file).
        assert_eq!(
            section.runs.len(),
            1,
            "tid {}: runs cut by a seq gap",
            section.tid
        );
        let recs = out.entry(section.tid).or_default();
        for run in &section.runs {
            for e in run
                .decode_events(Mode::Bits64)
                .expect("every run decodes")
                .events
            {
                match e.kind {
                    EventKind::Entry { method } => recs.push((true, method, e.counter)),
                    EventKind::Exit => recs.push((false, 0, e.counter)),
                    EventKind::Start => {}
                    EventKind::Task { .. } => panic!("no trace point here writes a task record"),
                }
            }
        }
    }
    out.retain(|_, v| !v.is_empty());
    out
}

#[test]
fn the_control_plane_and_the_emitted_block_end_path_write_every_record_once() {
    let mut config = Config::new("com.example", "com.example", PathBuf::from("/data/hubble"));
    config.mode = Mode::Bits64;
    config.pool = Some(G);
    config.max_files = 100;
    config.stop_timeout = Duration::from_secs(30);
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    let files = Arc::new(MemStorage::default());
    let c = Arc::new(Control::new(
        EmuArt::default(),
        config,
        props,
        Box::new(files.clone()),
    ));
    let pool = c
        .pool()
        .expect("an ART with a block-end function gets the pool");
    assert_eq!(pool.copy()[hubble_format::pool::P_TAKE], STUB);
    assert_eq!(POOL_HEADER_SLOTS, 6);
    let base = pool.base() as u64;
    let start = base & !(PAGE as u64 - 1);
    let end = (base + (G.total_slots() * 8) as u64 + PAGE as u64 - 1) & !(PAGE as u64 - 1);
    let pool_pages = (start, end - start);
    let images = Mutex::new(Vec::new());

    c.start_tracing().unwrap();
    let workers: Vec<Worker> = (0..8)
        .map(|i| Worker::start(&c, &images, pool_pages, 100 + i))
        .collect();
    c.rebalance().unwrap();
    assert_eq!(c.traced_threads().len(), 8);
    let mut next_tid = 500;
    for round in 0..3u32 {
        let mut expected: BTreeMap<u32, Vec<Rec>> = BTreeMap::new();
        let spinners = [3usize, 7];
        for (i, w) in workers.iter().enumerate() {
            if spinners.contains(&i) {
                w.tx.send(Cmd::Spin).unwrap();
            } else {
                // From a few records to several blocks (59 data slots each).
                w.tx.send(Cmd::Write(5 + 40 * i as u32 + 7 * round))
                    .unwrap();
            }
        }
        // Short-lived threads: attach, write, detach (their blocks sealed) before the flush.
        for k in 0..4u32 {
            let w = Worker::start(&c, &images, pool_pages, next_tid);
            next_tid += 1;
            c.rebalance().unwrap();
            w.tx.send(Cmd::Write(20 + 30 * k)).unwrap();
            expected.entry(w.tid).or_default().extend(w.wait());
            w.exit();
        }
        for (i, w) in workers.iter().enumerate() {
            if spinners.contains(&i) {
                w.started.recv_timeout(Duration::from_secs(60)).unwrap();
            } else {
                expected.entry(w.tid).or_default().extend(w.wait());
            }
        }
        let coop = c.stats.cooperative_stops.load(Ordering::Relaxed);
        let flushed = c.flush(workers[0].handle, "jank").unwrap();
        for &i in &spinners {
            let w = &workers[i];
            expected.entry(w.tid).or_default().extend(w.wait());
        }
        assert_eq!(
            c.stats.cooperative_stops.load(Ordering::Relaxed) - coop,
            spinners.len() as u64,
            "the spinning threads' emitted code answered the doorbell"
        );
        expected.retain(|_, v| !v.is_empty());
        let got = records(&files, &flushed.path.expect("consent given"));
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "round {round}: the threads in the file"
        );
        for (tid, want) in &expected {
            let have = &got[tid];
            if let Some(k) = (0..want.len().max(have.len())).find(|&k| want.get(k) != have.get(k)) {
                panic!(
                    "round {round}, tid {tid}: record {k} of {} is {:?}, the emulated thread \
                     wrote {:?} ({} records)",
                    have.len(),
                    have.get(k),
                    want.get(k),
                    want.len()
                );
            }
        }
    }
    // No record was lost to reuse or a drop: the head never came round.
    assert!(
        pool.copy()[0] < G.blocks as u64,
        "{} tickets",
        pool.copy()[0]
    );
    c.stop_tracing().unwrap();
    for w in workers {
        w.exit();
    }
}
