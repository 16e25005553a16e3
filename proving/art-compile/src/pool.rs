//! Many-thread mode in the emulator (docs/many-threads.md): what a machine needs to run compiled
//! code against a pool (`emu::Machine::set_pool`), and how a run's records are read back from
//! it, as a flush reads them.

use hubble_format::pool::Geometry;
use hubble_format::{Mode, Record};

/// Many-thread mode for a machine (docs/many-threads.md): the pool's shape, the bytes of the
/// block-end function the trace points' out-of-line halves call through the header's `P_TAKE`
/// (runtime/hubble/pool_<isa>.S, assembled: `hubble_hotpath_emu::pool_take_{a64,t32,x86}`), and
/// the thread's id.
#[derive(Clone, Debug)]
pub struct PoolMode {
    pub geometry: Geometry,
    pub take: Vec<u8>,
    pub tid: u32,
}

/// Where a machine in pool mode has the block-end function (a page below the code).
pub(crate) const POOL_TAKE_AT: u64 = 0xa_0000;

/// The records of one thread's run in pool mode, read as a flush reads the pool (`image`, at
/// least the pool's slots, from `base`): the block the thread still owns (at `end`) closed at
/// its `cursor`, then its stream, which must be the pool's only one, stamped `tid`, its blocks
/// in seq order from 0, decoded in `mode`. Also the number of blocks it spans. Used for the
/// emulated machines (`emu::Machine::set_pool`) and the native x86_64 runs (`native::pool_calls`).
pub fn pool_records(
    image: &[u64],
    mode: Mode,
    geometry: Geometry,
    tid: u32,
    base: u64,
    cursor: u64,
    end: u64,
) -> Result<(Vec<Record>, usize), String> {
    use hubble_format::pool::{thread_streams, H_CLOSE, POOL_HEADER_SLOTS, SEALED};
    let mut image = image[..geometry.total_slots()].to_vec();
    if cursor != SEALED {
        let at = end
            .checked_sub(base)
            .map(|b| (b / 8) as usize)
            .filter(|&i| i >= POOL_HEADER_SLOTS && i < image.len())
            .ok_or_else(|| format!("the thread owns no block of the pool (end {end:#x})"))?;
        image[at + H_CLOSE] = cursor;
    }
    let streams = thread_streams(&image, geometry, base).map_err(|e| e.to_string())?;
    let s = match streams.as_slice() {
        [] => return Ok((Vec::new(), 0)),
        [s] if s.tid == tid => s,
        [s] => return Err(format!("blocks stamped with tid {}, not {tid}", s.tid)),
        _ => return Err(format!("{} streams in a one-thread pool", streams.len())),
    };
    let seqs: Vec<u32> = s.blocks.iter().map(|b| b.seq).collect();
    if seqs != (0..seqs.len() as u32).collect::<Vec<_>>() {
        return Err(format!(
            "blocks not taken in seq order from 0 (a drop or a lost block): {seqs:?}"
        ));
    }
    let window =
        hubble_format::ring::decode(&hubble_format::ring::RingView::linear(&s.slots), mode)
            .map_err(|e| format!("the thread's stream does not decode: {e:?}"))?;
    Ok((window.records, s.blocks.len()))
}
