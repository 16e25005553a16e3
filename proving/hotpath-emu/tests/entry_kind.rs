//! The narrow entry (one slot, low 32 bits of x0) is chosen only where every
//! `ArtMethod*` that can enter the code fits 32 bits. Boot-image code used to get it although ART
//! enters it with run-time copies above 4 GiB (`ArtMethod::CopyFrom` keeps AOT entry points:
//! default methods copied into app classes, `Proxy.<init>` cloned into proxy classes) and with
//! methods of boot classpath classes outside the image: the trace then held a truncated pointer,
//! and the control thread called `PrettyMethod` on garbage.

mod common;

use common::emu::Machine;
use hubble_format::slot;
use hubble_hotpath_emu::{entry_kind_for, CodeOrigin, Kind, Options};

/// A copied default method's `ArtMethod` in an app's LinearAlloc, above 4 GiB.
const COPY: u64 = 0x7f12_3456_7890;

#[test]
fn the_compiler_narrows_only_jit_code_of_a_method_below_4_gib() {
    // AOT: boot image, extension and app code alike; the method being compiled is no guide.
    assert_eq!(entry_kind_for(CodeOrigin::Aot, 0), Kind::Entry);
    assert_eq!(entry_kind_for(CodeOrigin::Aot, 0x7000_1000), Kind::Entry);
    assert_eq!(entry_kind_for(CodeOrigin::Aot, COPY), Kind::Entry);
    // JIT: entered only with its own method.
    assert_eq!(
        entry_kind_for(CodeOrigin::Jit, 0x7000_1000),
        Kind::EntryNarrow
    );
    assert_eq!(entry_kind_for(CodeOrigin::Jit, COPY), Kind::Entry);
    assert_eq!(entry_kind_for(CodeOrigin::Jit, 0), Kind::Entry);
}

/// What the narrow sequence does with a pointer above 4 GiB (why it must never see one), and that
/// the sequence the compiler picks for boot-image code records the copy's full pointer.
#[test]
fn a64_boot_image_code_entered_with_a_copy_above_4_gib() {
    let mut m = Machine::a64(16, 0, Options::default());
    let begin = m.ring_end() - 16 * 8;
    m.control_start(begin, 1);
    m.run(Kind::EntryNarrow, COPY);
    let ring = m.ring();
    let (_, lo) = slot::unpack(ring[1]);
    assert_eq!(
        u64::from(lo),
        COPY & 0xffff_ffff,
        "narrow keeps the low half only"
    );
    assert_ne!(u64::from(lo), COPY);

    let mut m = Machine::a64(16, 0, Options::default());
    let begin = m.ring_end() - 16 * 8;
    m.control_start(begin, 1);
    let kind = entry_kind_for(CodeOrigin::Aot, 0x7000_1000);
    m.run(kind, COPY);
    let ring = m.ring();
    assert_eq!(
        ring[1], COPY,
        "the full pointer, first slot of a two-slot entry"
    );
    assert_eq!(
        slot::unpack(ring[2]).1,
        1,
        "then the timestamped wide-entry marker"
    );
}
