//! Host proof of the Hubble hot path.
//!
//! The trace-point emitters are the ART sources themselves
//! (`art-patches/files/compiler/optimizing/hubble_*.cc`), compiled by `build.rs` against
//! Debian's libvixl-dev together with a small driver (`cpp/driver.cc`). This crate hands their
//! bytes to the tests, which execute them in unicorn (A64 and T32) and qemu-aarch64, decode the
//! ring with `hubble-format` and compare every slot with its reference writer.
#![deny(unsafe_op_in_unsafe_fn)]

/// The real `Thread` offsets of the per-thread block, from `art-patches/thread-offsets.txt`.
pub mod thread_offsets {
    include!(concat!(env!("OUT_DIR"), "/thread_offsets.rs"));
}

/// The runtime's A64 block-end function for many-thread mode
/// (`art-patches/files/runtime/hubble/pool_arm64.S`, `hubble_pool_take`), assembled unchanged by
/// `build.rs`: position-independent bytes, entered at offset 0.
pub fn pool_take_a64() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/pool_take_a64.bin"))
}

/// The runtime's T32 block-end function for many-thread mode in a 32-bit process
/// (`art-patches/files/runtime/hubble/pool_arm.S`, `hubble_pool_take`), assembled unchanged by
/// `build.rs`: position-independent Thumb bytes, entered at offset 0 (called with bit 0 set).
pub fn pool_take_t32() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/pool_take_t32.bin"))
}

/// The runtime's x86 block-end function for many-thread mode in a 32-bit process
/// (`art-patches/files/runtime/hubble/pool_x86.S`, `hubble_pool_take`), assembled unchanged by
/// `build.rs`: position-independent bytes, entered at offset 0, reaching the `Thread` through
/// `%fs`.
pub fn pool_take_x86() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/pool_take_x86.bin"))
}

/// nterp's arm trace-point macros (`art-patches/files/runtime/hubble/nterp_arm.S`, A32, with its
/// slow path and the T32 block-end function of `pool_arm.S`), linked at 0 by `build.rs` around
/// two wrappers (`cpp/nterp_a32.S`): raw bytes, and the offsets of its functions in
/// [`nterp_a32::symbols`].
pub mod nterp_a32 {
    /// The bytes.
    pub fn bytes() -> &'static [u8] {
        include_bytes!(concat!(env!("OUT_DIR"), "/nterp_a32.bin"))
    }
    /// Offsets of `hubble_test_entry`, `hubble_test_exit`, `hubble_nterp_slow_path` and
    /// `hubble_pool_take` in [`bytes`].
    pub mod symbols {
        include!(concat!(env!("OUT_DIR"), "/nterp_a32_symbols.rs"));
    }
}

/// Index of each field in the offset arrays.
pub mod field {
    /// `hubble_cursor`.
    pub const CURSOR: usize = 0;
    /// `hubble_limit`.
    pub const LIMIT: usize = 1;
    /// `hubble_stop`.
    pub const STOP: usize = 2;
    /// `hubble_begin`.
    pub const BEGIN: usize = 3;
    /// `hubble_end`.
    pub const END: usize = 4;
}

/// Which trace point to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Method entry, pointer of unknown width.
    Entry,
    /// Method entry whose every entering `ArtMethod*` is below 4 GiB (JIT code of such a method).
    EntryNarrow,
    /// Method exit.
    Exit,
}

/// Who runs the compiled code (`art::hubble::CodeOrigin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeOrigin {
    /// JIT: the entry point of the one method it was compiled for.
    Jit,
    /// dex2oat: boot image, extension or app oat file.
    Aot,
}

/// The entry kind ART's arm64 code generator picks (`art::hubble::EntryKindFor`, the function
/// patch 0012 calls); `method` 0 = not known at compile time.
pub fn entry_kind_for(origin: CodeOrigin, method: u64) -> Kind {
    let origin = match origin {
        CodeOrigin::Jit => 0,
        CodeOrigin::Aot => 1,
    };
    // SAFETY: a pure function of its two integer arguments.
    match unsafe { hubble_entry_kind_for(origin, method) } {
        0 => Kind::Entry,
        1 => Kind::EntryNarrow,
        other => panic!("EntryKindFor returned {other}, not an entry kind"),
    }
}

impl Kind {
    fn code(self) -> i32 {
        match self {
            Kind::Entry => 0,
            Kind::EntryNarrow => 1,
            Kind::Exit => 2,
        }
    }
}

/// What follows the inline half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminator {
    /// `BRK #0` / `BKPT #0`: the emulator stops there.
    Trap,
    /// `RET` / `BX LR`: the blob is a callable function (qemu-aarch64 harness).
    Return,
}

/// Emitted code: `[inline half][terminator][out-of-line half]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blob {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Offset of the terminator (= size of the inline half).
    pub terminator: usize,
    /// Offset of the out-of-line half.
    pub out_of_line: usize,
}

#[repr(C)]
#[derive(Default)]
struct BlobInfo {
    size: u32,
    terminator: u32,
    out_of_line: u32,
}

extern "C" {
    fn hubble_entry_kind_for(origin: i32, method: u64) -> i32;
    fn hubble_emit_a64(
        kind: i32,
        method_reg: i32,
        isb: i32,
        terminator: i32,
        offsets: *const i32,
        out: *mut u8,
        cap: usize,
        info: *mut BlobInfo,
    ) -> i32;
    fn hubble_emit_t32(
        kind: i32,
        method_reg: i32,
        temps: *const i32,
        isb: i32,
        terminator: i32,
        offsets: *const i32,
        out: *mut u8,
        cap: usize,
        info: *mut BlobInfo,
    ) -> i32;
    fn hubble_emit_nanoscope_a64(
        terminator: i32,
        data_ptr_offset: i32,
        out: *mut u8,
        cap: usize,
        info: *mut BlobInfo,
    ) -> i32;
}

const CAP: usize = 1024;

/// What one of the driver's emitters wrote: `emit(out, cap, info)` calls it (its other arguments
/// bound by the caller) into a buffer of [`CAP`] bytes.
fn emitted(emit: impl FnOnce(*mut u8, usize, &mut BlobInfo) -> i32) -> Blob {
    let mut buf = vec![0u8; CAP];
    let mut info = BlobInfo::default();
    let rc = emit(buf.as_mut_ptr(), CAP, &mut info);
    assert_eq!(rc, 0, "emitter output larger than {CAP} bytes");
    buf.truncate(info.size as usize);
    Blob {
        bytes: buf,
        terminator: info.terminator as usize,
        out_of_line: info.out_of_line as usize,
    }
}

fn term_code(t: Terminator) -> i32 {
    match t {
        Terminator::Trap => 0,
        Terminator::Return => 1,
    }
}

/// Options of one emitted trace point.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The build-time ISB before the counter read.
    pub isb: bool,
    /// What follows the inline half.
    pub terminator: Terminator,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            isb: false,
            terminator: Terminator::Trap,
        }
    }
}

/// The A64 trace point as ART's arm64 back end emits it (x19 = thread, x16/x17 scratch).
pub fn emit_a64(kind: Kind, method_reg: u8, offsets: &[i32; 5], opts: Options) -> Blob {
    assert!(method_reg < 31 && !(16..=17).contains(&method_reg) && method_reg != 19);
    emitted(|out, cap, info| {
        // SAFETY: `offsets` points to 5 i32s, `out` to `cap` writable bytes, `info` to a
        // BlobInfo; the driver writes at most `cap` bytes and returns non-zero if the code does
        // not fit.
        unsafe {
            hubble_emit_a64(
                kind.code(),
                i32::from(method_reg),
                i32::from(opts.isb),
                term_code(opts.terminator),
                offsets.as_ptr(),
                out,
                cap,
                info,
            )
        }
    })
}

/// The T32 trace point (r9 = thread, `temps` = cursor, counter low, counter high).
pub fn emit_t32(
    kind: Kind,
    method_reg: u8,
    temps: [u8; 3],
    offsets: &[i32; 5],
    opts: Options,
) -> Blob {
    let distinct = temps[0] != temps[1] && temps[0] != temps[2] && temps[1] != temps[2];
    // r0-r12 but the thread register r9, and LR (a JNI stub's exit uses it: docs/hot-path.md).
    let usable = |r: u8| (r <= 12 && r != 9) || r == 14;
    assert!(distinct && temps.iter().all(|&t| usable(t)));
    if kind != Kind::Exit {
        assert!(!temps.contains(&method_reg) && method_reg <= 12 && method_reg != 9);
    }
    let temps = temps.map(i32::from);
    emitted(|out, cap, info| {
        // SAFETY: as in `emit_a64`; `temps` points to 3 i32s.
        unsafe {
            hubble_emit_t32(
                kind.code(),
                i32::from(method_reg),
                temps.as_ptr(),
                i32::from(opts.isb),
                term_code(opts.terminator),
                offsets.as_ptr(),
                out,
                cap,
                info,
            )
        }
    })
}

/// Nanoscope's published A64 entry sequence, encoded with the same VIXL (for comparison).
pub fn emit_nanoscope_a64(data_ptr_offset: i32, terminator: Terminator) -> Blob {
    emitted(|out, cap, info| {
        // SAFETY: as in `emit_a64`.
        unsafe { hubble_emit_nanoscope_a64(term_code(terminator), data_ptr_offset, out, cap, info) }
    })
}
