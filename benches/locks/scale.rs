//! Run sizes: `BENCH_SCALE=full` (the published report) and `quick` (while developing).

use std::time::Duration;

#[derive(Clone, Debug)]
pub(crate) struct Scale {
    pub(crate) name: &'static str,
    /// Repeats of every latency / throughput / handoff measurement.
    pub(crate) rounds: usize,
    /// Repeats of the latency and throughput sections (more, shorter repeats: their ratios are
    /// medians of per-repeat ratios).
    pub(crate) lat_rounds: usize,
    pub(crate) lat_iters: usize,
    pub(crate) tp_rounds: usize,
    pub(crate) tp_concurrency: Vec<usize>,
    pub(crate) tp_ms: u64,
    pub(crate) waiters: Vec<usize>,
    pub(crate) handoffs: usize,
    pub(crate) rs_handoffs: usize,
    pub(crate) wd_counts: Vec<usize>,
    pub(crate) wd_periods: u32,
    pub(crate) wd_timeout: Duration,
    pub(crate) many: usize,
    /// Section 5: how long the waiters wait before the steady cost is measured (one nap of a
    /// subscribed waiter is up to the holder's TTL, 30 s), and the measured window.
    pub(crate) wait_warm: Duration,
    pub(crate) wait_window: Duration,
    /// Section 5: locks in each recovery scenario (a lost message; a dropped pub/sub
    /// connection; a holder that never releases).
    pub(crate) recovery_locks: usize,
    /// Section 7: loss-to-`lost()` samples per cause with `LossDetection::Tracking`, and with
    /// `Renewal` (each of those waits for a renewal round: up to `loss_renewal_timeout / 3`).
    pub(crate) loss_samples: usize,
    pub(crate) loss_renewal_samples: usize,
    pub(crate) loss_renewal_timeout: Duration,
    /// Section 7: locks held while the cost of each mode is measured.
    pub(crate) loss_locks: usize,
}

impl Scale {
    pub(crate) fn full() -> Scale {
        Scale {
            name: "full",
            rounds: 5,
            lat_rounds: 9,
            lat_iters: 1200,
            tp_rounds: 13,
            tp_concurrency: vec![1, 16, 256],
            tp_ms: 500,
            waiters: vec![1, 10, 100, 1000],
            handoffs: 400,
            rs_handoffs: 25,
            wd_counts: vec![10_000, 100_000],
            wd_periods: 3,
            wd_timeout: Duration::from_secs(3),
            many: 10_000,
            wait_warm: Duration::from_secs(30),
            wait_window: Duration::from_secs(30),
            recovery_locks: 1_000,
            loss_samples: 100,
            loss_renewal_samples: 10,
            loss_renewal_timeout: Duration::from_secs(3),
            loss_locks: 10_000,
        }
    }

    /// `BENCH_TP_ROUNDS`, `BENCH_TP_MS`, `BENCH_TP_C` (comma list), for experiments.
    pub(crate) fn override_from_env(&mut self) {
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(r) = num("BENCH_TP_ROUNDS") {
            self.tp_rounds = r.max(1) as usize;
        }
        if let Some(ms) = num("BENCH_TP_MS") {
            self.tp_ms = ms.max(50);
        }
        if let Ok(c) = std::env::var("BENCH_TP_C") {
            let cs: Vec<usize> = c.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            if !cs.is_empty() {
                self.tp_concurrency = cs;
            }
        }
    }

    pub(crate) fn quick() -> Scale {
        Scale {
            name: "quick",
            rounds: 2,
            lat_rounds: 2,
            lat_iters: 300,
            tp_rounds: 2,
            tp_concurrency: vec![1, 16, 256],
            tp_ms: 300,
            waiters: vec![1, 10, 100, 1000],
            handoffs: 60,
            rs_handoffs: 5,
            wd_counts: vec![2_000, 10_000],
            wd_periods: 2,
            wd_timeout: Duration::from_secs(3),
            many: 1_000,
            wait_warm: Duration::from_secs(2),
            wait_window: Duration::from_secs(4),
            recovery_locks: 200,
            loss_samples: 20,
            loss_renewal_samples: 3,
            loss_renewal_timeout: Duration::from_secs(3),
            loss_locks: 2_000,
        }
    }
}
