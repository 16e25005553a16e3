//! [`Config`]: the static configuration of one process's control plane, and how the
//! `debug.hubble.*` properties read at start change it (`docs/architecture.md`, "Control
//! surface").

use std::path::PathBuf;
use std::time::Duration;

use hubble_format::Mode;

use crate::props::{self, PropertySource};
use crate::ring::ring_size;

/// Static configuration of one process's control plane.
#[derive(Clone, Debug)]
pub struct Config {
    /// Package name (`debug.hubble.ctl` addresses it).
    pub package: String,
    /// Process name, written into trace files.
    pub process: String,
    /// Trace directory (`/data/data/<package>/files/hubble`).
    pub dir: PathBuf,
    /// Ring bytes per traced thread (a power of two).
    pub ring_bytes: usize,
    /// N: threads traced at once.
    pub threads: usize,
    /// Files kept.
    pub max_files: usize,
    /// Bytes kept.
    pub max_bytes: u64,
    /// ISA mode of the process.
    pub mode: Mode,
    /// How long a stop may take before the flush gives up (the thread may be in a long loop
    /// without calls; it stops at its next trace point and the next flush picks it up).
    pub stop_timeout: Duration,
    /// Longest sleep between two polls of a stop (backing off from spinning and yielding);
    /// zero = only yield (tests that flush in a tight loop).
    pub max_poll_sleep: Duration,
    /// Dead-loader names kept before a tick scans the rings and forgets those no ring holds
    /// (without flushes, windows never advance and every unload would add its methods forever).
    pub dead_names_scan_at: usize,
    /// Many-thread mode (`debug.hubble.threads all`): every thread ART reports traces into one
    /// pool of this geometry, and `threads`/`ring_bytes` are not used. None: per-thread rings.
    pub pool: Option<hubble_format::pool::Geometry>,
    /// `debug.hubble.tasks 1`: the control thread asks ART for task records when it starts
    /// ([`crate::Art::start_task_records`]).
    pub tasks: bool,
}

impl Config {
    /// The defaults of `docs/architecture.md` for a package.
    pub fn new(package: &str, process: &str, dir: PathBuf) -> Config {
        Config {
            package: package.to_string(),
            process: process.to_string(),
            dir,
            ring_bytes: crate::ring::DEFAULT_RING_BYTES,
            threads: 2,
            tasks: false,
            max_files: 8,
            max_bytes: 256 << 20,
            mode: if cfg!(target_pointer_width = "64") {
                Mode::Bits64
            } else {
                Mode::Bits32
            },
            stop_timeout: Duration::from_millis(200),
            max_poll_sleep: Duration::from_millis(1),
            dead_names_scan_at: 1 << 16,
            pool: None,
        }
    }

    /// Applies `debug.hubble.{ring_mb,threads,budget_mb,retention}`.
    pub fn with_properties(mut self, p: &dyn PropertySource) -> Config {
        if let Some(mb) = p
            .get(props::RING_MB)
            .and_then(|v| v.trim().parse::<usize>().ok())
        {
            self.ring_bytes = ring_size(mb.saturating_mul(1 << 20));
        }
        // Logged there; the settings in force stay.
        let _ = self.apply_thread_selector(p);
        match props::parse_tasks(p.get(props::TASKS).as_deref()) {
            Ok(on) => self.tasks = on,
            Err(e) => log::error!("hubble: {e}; task records stay off"),
        }
        if let Some((files, mib)) = p
            .get(props::RETENTION)
            .and_then(|v| props::parse_retention(&v))
        {
            self.max_files = files;
            self.max_bytes = mib << 20;
        }
        self
    }

    /// The tracing mode in force: the N most recent threads in rings, or every thread in the
    /// pool.
    pub fn selector(&self) -> props::ThreadSelector {
        match self.pool {
            Some(g) => props::ThreadSelector::All {
                budget: g.blocks * g.block_slots * 8,
            },
            None => props::ThreadSelector::Recent(self.threads),
        }
    }

    /// What [`Config::selector`] traces, in words (for the log).
    pub fn describe_mode(&self) -> String {
        match self.pool {
            Some(g) => format!(
                "every thread in one pool of {} blocks of {} KiB",
                g.blocks,
                (g.block_slots * 8) >> 10
            ),
            None => format!(
                "the {} most recent threads in per-thread rings of {} KiB",
                self.threads,
                self.ring_bytes >> 10
            ),
        }
    }

    /// Applies `debug.hubble.threads` and `debug.hubble.budget_mb` (`all`: many-thread mode,
    /// `docs/many-threads.md`). A bad configuration (an unknown selector, a budget that is not a
    /// number or too small for the active blocks) is logged as an error naming what is wrong and
    /// what tracing keeps, returned, and changes nothing.
    pub fn apply_thread_selector(&mut self, p: &dyn PropertySource) -> Option<props::ConfigError> {
        match props::parse_thread_selector(
            p.get(props::THREADS).as_deref(),
            p.get(props::BUDGET_MB).as_deref(),
            self.threads,
        ) {
            Ok(props::ThreadSelector::Recent(n)) => {
                self.threads = n.max(1);
                self.pool = None;
                None
            }
            Ok(props::ThreadSelector::All { budget }) => {
                self.pool = Some(props::pool_geometry(budget));
                None
            }
            Err(e) => {
                log::error!("hubble: {e}; tracing keeps {}", self.describe_mode());
                Some(e)
            }
        }
    }
}
