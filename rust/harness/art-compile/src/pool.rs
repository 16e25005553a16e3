//! Many-thread mode in the emulator (docs/many-threads.md): what an arm64 machine needs to run
//! compiled code against a pool (`emu::Machine::set_pool`), and how a run's records are read
//! back from it, as a flush reads them.

use hubble_format::{Mode, Record};

/// Many-thread mode for an arm64 machine (docs/many-threads.md): the pool's shape, the bytes
/// of the block-end function the trace points' out-of-line halves call through the header's
/// `P_TAKE` (runtime/hubble/pool_arm64.S, assembled: `hubble_hotpath_emu::pool_take_a64`), and
/// the thread's id.
#[derive(Clone, Debug)]
pub struct PoolMode {
    pub geometry: hubble_format::pool::Geometry,
    pub take: Vec<u8>,
    pub tid: u32,
}

/// Where an arm64 machine in pool mode has the block-end function (a page below the code).
pub(crate) const POOL_TAKE_AT: u64 = 0xa_0000;

/// The records of a run in pool mode, read as a flush reads the pool (`ring` holds it): the
/// block the thread still owns (at `end`) closed at its cursor, then its one stream decoded.
/// Also the number of blocks it spans.
pub(crate) fn pool_records(
    ring: &[u64],
    p: &PoolMode,
    base: u64,
    cursor: u64,
    end: u64,
) -> Result<(Vec<Record>, usize), String> {
    use hubble_format::pool::{thread_streams, H_CLOSE, POOL_HEADER_SLOTS, SEALED};
    let mut image = ring[..p.geometry.total_slots()].to_vec();
    if cursor != SEALED {
        let at = end
            .checked_sub(base)
            .map(|b| (b / 8) as usize)
            .filter(|&i| i >= POOL_HEADER_SLOTS && i < image.len())
            .ok_or_else(|| format!("the thread owns no block of the pool (end {end:#x})"))?;
        image[at + H_CLOSE] = cursor;
    }
    let streams = thread_streams(&image, p.geometry, base).map_err(|e| e.to_string())?;
    let Some(s) = streams.iter().find(|s| s.tid == p.tid) else {
        return Ok((Vec::new(), 0));
    };
    if streams.len() != 1 {
        return Err(format!("{} streams in a one-thread pool", streams.len()));
    }
    let seqs: Vec<u32> = s.blocks.iter().map(|b| b.seq).collect();
    if seqs != (0..seqs.len() as u32).collect::<Vec<_>>() {
        return Err(format!("blocks out of seq order or missing: {seqs:?}"));
    }
    let window = hubble_format::ring::decode(
        &hubble_format::ring::RingView::linear(&s.slots),
        Mode::Bits64,
    )
    .map_err(|e| format!("the thread's stream does not decode: {e:?}"))?;
    Ok((window.records, s.blocks.len()))
}
