//! loom model of class-loader unloading against symbolization (run with `RUSTFLAGS="--cfg
//! loom"`, tests/stages/20-loom.sh). The control thread runs the real
//! `symbols::resolve_missing` on the real `Symbols`; the GC thread runs what
//! `hubble_bridge.cc`'s `ClassLoaderUnloadingWithTable` does (unload lock, the control plane's
//! hook `Symbols::unload`, generation bump, then the memory is freed), and ART's side of
//! `ResolveMethods` is modelled with the same lock and generation check. Checked over every
//! interleaving:
//! * no freed `ArtMethod` is ever read (resolving a freed method panics);
//! * every pointer of the window gets a name;
//! * the live cache never keeps a dead loader's address (a reused address would get its name);
//! * the GC thread never waits for anything but one resolution batch (it takes only the unload
//!   lock and the cache's leaf lock).
//!
//! As a check that the model can fail, the same without the generation check panics.
#![cfg(loom)]

use std::sync::Arc as StdArc;

use hubble_runtime::symbols::{resolve_missing, Resolver, Symbols, SymbolsCell};
use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::sync::{Arc, Mutex};

const DEAD: u64 = 0x7f00_0000_1008; // a method of the loader being unloaded
const LIVE: u64 = 0x7000_2000; // a boot-image method

struct Cell(Mutex<Symbols>);

impl SymbolsCell for Cell {
    fn with<T>(&self, f: impl FnOnce(&mut Symbols) -> T) -> T {
        f(&mut self.0.lock().unwrap())
    }
}

/// ART: the unload lock, the generation, and whether the dying loader's memory is gone.
struct Art {
    unload_lock: Mutex<()>,
    generation: AtomicU64,
    freed: AtomicBool,
    check_generation: bool,
}

impl Resolver for Art {
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
    fn resolve(&self, pointers: &[u64], generation: u64, out: &mut Vec<String>) -> bool {
        let _l = self.unload_lock.lock().unwrap();
        if self.check_generation && self.generation.load(Ordering::Acquire) != generation {
            return false;
        }
        for &p in pointers {
            assert!(
                !(p == DEAD && self.freed.load(Ordering::Acquire)),
                "use after free: PrettyMethod on a freed ArtMethod"
            );
            out.push(format!("m{p:x}"));
        }
        true
    }
}

fn model(check_generation: bool) {
    loom::model(move || {
        let cell = Arc::new(Cell(Mutex::new(Symbols::default())));
        let art = Arc::new(Art {
            unload_lock: Mutex::new(()),
            generation: AtomicU64::new(0),
            freed: AtomicBool::new(false),
            check_generation,
        });
        // The GC thread: DeleteClassLoader → ClassLoaderUnloadingWithTable.
        let gc = {
            let (cell, art) = (cell.clone(), art.clone());
            loom::thread::spawn(move || {
                {
                    let _l = art.unload_lock.lock().unwrap();
                    let named = vec![(DEAD, StdArc::<str>::from("dead.m()"))];
                    cell.with(|s| s.unload(&[DEAD], named, 0));
                    art.generation.fetch_add(1, Ordering::Release);
                }
                art.freed.store(true, Ordering::Release);
            })
        };
        // The control thread: a window copied before the unload holds both pointers.
        let pointers = [LIVE, DEAD];
        let mut names = vec![None, None];
        resolve_missing(&*cell, &*art, &pointers, 0, &mut names);
        gc.join().unwrap();
        assert!(names.iter().all(Option::is_some), "{names:?}");
        // A window that starts after the unload (epoch 1) must not find the dead address in
        // the live cache: a new method allocated there would get the dead one's name.
        let stale = cell.with(|s| s.lookup(DEAD, 1));
        assert!(
            stale.is_none(),
            "dead address kept in the live cache: {stale:?}"
        );
    });
}

#[test]
fn unloading_never_lets_the_control_thread_read_freed_methods() {
    model(true);
}

#[test]
#[should_panic(expected = "use after free: PrettyMethod on a freed ArtMethod")]
fn without_the_generation_check_a_freed_method_is_read() {
    model(false);
}
