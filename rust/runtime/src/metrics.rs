//! BTrace's two metrics for a stopped trace (`docs/many-threads.md`, "Metrics"), measured
//! against the ground truth a workload keeps (what each thread wrote): a trace alone cannot
//! see a thread whose every record was overwritten.
//!
//! * **Latest continuous fragment**: the newest time span `[T, stop]` in which no traced
//!   thread lost a record; its size is the bytes of the records kept with a timestamp ≥ T.
//!   Every loss moves T past the lost record: a gap inside a thread's records (T ≥ the first
//!   record after the gap), a thread's oldest records gone (T ≥ its oldest kept record), its
//!   newest gone (T > its newest written record). The effectivity ratio is the fragment over
//!   the memory budget.
//! * **Memory utilization**: the bytes of all records kept (in the fragment or older) over
//!   the budget.

/// A thread's records as kept by the trace, oldest first, in runs of records with nothing
/// lost between them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// Runs, oldest first; a new run starts after every loss.
    pub runs: Vec<Run>,
    /// The timestamp of the newest record the thread wrote (ground truth; None: it wrote none).
    pub newest_written: Option<u64>,
}

/// Records kept with nothing lost between them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Run {
    /// Whether the run begins with the thread's first record (nothing lost before it).
    pub from_first: bool,
    /// (timestamp, bytes) of each record, oldest first.
    pub records: Vec<(u64, u64)>,
}

/// The two metrics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metrics {
    /// T: the oldest timestamp of the latest continuous fragment.
    pub fragment_from: u64,
    /// Bytes of the records in the fragment.
    pub fragment_bytes: u64,
    /// Bytes of every record kept.
    pub kept_bytes: u64,
    /// The memory the trace had.
    pub budget_bytes: u64,
}

impl Metrics {
    /// Fragment / budget (BTrace's effectivity ratio).
    pub fn fragment_ratio(&self) -> f64 {
        self.fragment_bytes as f64 / self.budget_bytes as f64
    }
    /// Kept / budget.
    pub fn utilization(&self) -> f64 {
        self.kept_bytes as f64 / self.budget_bytes as f64
    }
}

/// Computes both metrics over every traced thread.
pub fn measure(threads: &[Kept], budget_bytes: u64) -> Metrics {
    let mut from = 0u64;
    for t in threads {
        let mut newest_kept = None;
        let mut first_run = true;
        for run in &t.runs {
            let Some(&(first, _)) = run.records.first() else {
                continue;
            };
            // A run after another one follows a loss; the first one does unless it starts at
            // the thread's first record.
            if !first_run || !run.from_first {
                from = from.max(first);
            }
            first_run = false;
            newest_kept = run.records.last().map(|r| r.0);
        }
        if let Some(w) = t.newest_written {
            if newest_kept.map_or(true, |k| k < w) {
                from = from.max(w + 1);
            }
        }
    }
    let mut fragment_bytes = 0;
    let mut kept_bytes = 0;
    for run in threads.iter().flat_map(|t| &t.runs) {
        for &(ts, bytes) in &run.records {
            kept_bytes += bytes;
            if ts >= from {
                fragment_bytes += bytes;
            }
        }
    }
    Metrics {
        fragment_from: from,
        fragment_bytes,
        kept_bytes,
        budget_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(from_first: bool, ts: &[u64]) -> Run {
        Run {
            from_first,
            records: ts.iter().map(|&t| (t, 8)).collect(),
        }
    }

    // Each of the three kinds of loss moves the fragment's start past the lost record.
    #[test]
    fn every_kind_of_loss_cuts_the_fragment() {
        let complete = Kept {
            runs: vec![run(true, &[1, 4, 9])],
            newest_written: Some(9),
        };
        let m = measure(std::slice::from_ref(&complete), 100);
        assert_eq!(
            (m.fragment_from, m.fragment_bytes, m.kept_bytes),
            (0, 24, 24)
        );
        // Oldest lost: the fragment starts at the oldest kept record.
        let head_lost = Kept {
            runs: vec![run(false, &[5, 6])],
            newest_written: Some(6),
        };
        let m = measure(&[complete.clone(), head_lost], 100);
        assert_eq!((m.fragment_from, m.fragment_bytes), (5, 24));
        // A gap: the fragment starts after it even though older records are kept.
        let gap = Kept {
            runs: vec![run(true, &[2, 3]), run(false, &[7, 8])],
            newest_written: Some(8),
        };
        let m = measure(&[complete.clone(), gap], 100);
        assert_eq!((m.fragment_from, m.fragment_bytes), (7, 24));
        // The newest lost (or everything): the fragment starts after it.
        let tail_lost = Kept {
            runs: vec![run(true, &[2, 3])],
            newest_written: Some(5),
        };
        let m = measure(&[complete.clone(), tail_lost], 100);
        assert_eq!((m.fragment_from, m.fragment_bytes), (6, 8));
        let all_lost = Kept {
            runs: vec![],
            newest_written: Some(8),
        };
        let m = measure(&[complete, all_lost], 100);
        assert_eq!(
            (m.fragment_from, m.fragment_bytes, m.kept_bytes),
            (9, 8, 24)
        );
        assert!((m.utilization() - 0.24).abs() < 1e-9);
        assert!((m.fragment_ratio() - 0.08).abs() < 1e-9);
    }
}
