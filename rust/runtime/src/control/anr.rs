//! The ANR flush: SIGQUIT's request (one atomic swap on the signal catcher's path), and on the
//! control thread the rate limit and the flush of every traced thread
//! (`docs/art-runtime-integration.md`, §7).

use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Duration;

use log::{info, warn};

use crate::art::Art;
use crate::props;

use super::registry::StopCause;
use super::{lock, Control};

/// The flush reason of an ANR (SIGQUIT) flush: files are `<ms>-<pid>-<tid>-anr.hubble`.
pub const ANR_REASON: &str = "anr";

/// What [`Control::handle_anr`] did with a pending request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anr {
    /// Every traced thread was stopped and flushed; this many flushes succeeded.
    Flushed(usize),
    /// Within [`crate::props::ANR_INTERVAL`] of the last ANR flush: dropped (counted).
    Suppressed,
    /// [`crate::props::ANR_INTERVAL`] is `off`.
    Disabled,
}

/// The ANR request (set by the signal catcher, taken by the control thread) and the rate limit.
#[derive(Default)]
pub(super) struct AnrState {
    /// A request not handled yet. The only thing the signal catcher's path writes.
    pending: std::sync::atomic::AtomicBool,
    /// The control thread's alone.
    policy: Mutex<AnrPolicy>,
}

#[derive(Default)]
struct AnrPolicy {
    /// The property value last parsed.
    source: Option<String>,
    /// `None` until a valid value was read: [`props::DEFAULT_ANR_INTERVAL`].
    interval: Option<Option<Duration>>,
    /// Timer value when the last ANR flush began.
    last: Option<u64>,
}

impl<A: Art> Control<A> {
    /// ART's signal catcher received SIGQUIT (an ANR or another stack dump): records an ANR
    /// flush request for the control thread and returns. This is all that runs on the signal
    /// catcher's path: one atomic swap and two counter increments; no lock, no allocation, no
    /// I/O, no call into ART. Returns true if the request is new (the caller wakes the control
    /// thread), false if it joins one the control thread has not taken yet.
    pub fn request_anr(&self) -> bool {
        self.stats.anr_requests.fetch_add(1, Ordering::Relaxed);
        // AcqRel: pairs with the control thread's swap in `handle_anr`; nothing else is handed
        // over (the request carries no data).
        let new = !self.anr.pending.swap(true, Ordering::AcqRel);
        if !new {
            self.stats.anr_coalesced.fetch_add(1, Ordering::Relaxed);
        }
        new
    }

    /// On the control thread: takes a pending ANR request, applies the rate limit
    /// ([`crate::props::ANR_INTERVAL`]), and flushes every traced thread with reason
    /// [`ANR_REASON`]. `None` if no request was pending.
    ///
    /// The request is taken before the flush: one that arrives during it is handled after it,
    /// against the interval (so an ANR storm writes one set of files per interval, and requests
    /// that pile up before the control thread looks become one flush). The interval is measured
    /// on the runtime's timer from the start of the last ANR flush.
    ///
    /// Every traced thread's stop doorbell is rung first (two stores per thread, no lock of
    /// ART's), so each window ends at the request, not after the flushes of the threads before
    /// it; then each thread is flushed in turn (§6 stop, force stop if it is in native code,
    /// copy, restart, symbolize, write). A thread that does not answer within the stop timeout
    /// (a long loop without calls) keeps its request and is flushed by a later tick
    /// ([`Control::tick`]).
    pub fn handle_anr(&self) -> Option<Anr> {
        if !self.anr.pending.swap(false, Ordering::AcqRel) {
            return None;
        }
        let now = self.art.timer();
        let hz = self.art.timer_hz();
        {
            let mut policy = lock(&self.anr.policy);
            let value = self.props.get(props::ANR_INTERVAL);
            if value != policy.source {
                match value.as_deref().map(props::parse_anr_interval) {
                    None => policy.interval = None,
                    Some(Ok(interval)) => policy.interval = Some(interval),
                    Some(Err(e)) => warn!(
                        "hubble: {e}; keeping {}",
                        match policy.interval {
                            None => format!("{:?}", props::DEFAULT_ANR_INTERVAL),
                            Some(None) => "off".to_string(),
                            Some(Some(d)) => format!("{d:?}"),
                        }
                    ),
                }
                policy.source = value;
            }
            let Some(interval) = policy.interval.unwrap_or(Some(props::DEFAULT_ANR_INTERVAL))
            else {
                info!(
                    "hubble: SIGQUIT: no ANR flush ({} is off)",
                    props::ANR_INTERVAL
                );
                return Some(Anr::Disabled);
            };
            let ticks = (interval.as_nanos() * u128::from(hz) / 1_000_000_000)
                .min(u128::from(u64::MAX)) as u64;
            if let Some(last) = policy.last {
                if now.wrapping_sub(last) < ticks {
                    self.stats.anr_suppressed.fetch_add(1, Ordering::Relaxed);
                    info!(
                        "hubble: SIGQUIT: ANR flush rate-limited (one per {interval:?}, {})",
                        props::ANR_INTERVAL
                    );
                    return Some(Anr::Suppressed);
                }
            }
            policy.last = Some(now);
        }
        if let Some(p) = &self.pool {
            let n = self.traced_threads().len();
            info!(
                "hubble: SIGQUIT (ANR or stack dump): flushing {n} threads of the pool to one file"
            );
            self.stats.anr_flushes.fetch_add(1, Ordering::Relaxed);
            // The all-threads stop rings every doorbell before it waits for any thread.
            let ok = self
                .record_outcome(self.flush_pool(p, ANR_REASON), ANR_REASON)
                .is_ok();
            return Some(Anr::Flushed(usize::from(ok)));
        }
        let threads = self.request_stops(StopCause::Flush(ANR_REASON.to_string()));
        info!(
            "hubble: SIGQUIT (ANR or stack dump): flushing {} traced threads",
            threads.len()
        );
        self.stats.anr_flushes.fetch_add(1, Ordering::Relaxed);
        // Each failure is logged and counted by flush itself.
        let flushed = threads
            .into_iter()
            .filter(|&h| self.flush(h, ANR_REASON).is_ok())
            .count();
        Some(Anr::Flushed(flushed))
    }
}
