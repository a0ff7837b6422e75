//! Metrics through the [`metrics`](https://docs.rs/metrics) facade (cargo feature `metrics`):
//! whatever recorder the application installed (`metrics-exporter-prometheus`, an
//! OpenTelemetry bridge, ...) receives them; without the feature every call here is a no-op.
//!
//! | metric | type | labels | meaning |
//! |---|---|---|---|
//! | `redisson_lock_acquisitions_total` | counter | `kind`, `outcome` (`acquired`, `timeout`, `error`) | ended acquisitions (`lock`, `try_lock*`) |
//! | `redisson_lock_acquire_wait_seconds` | histogram | `kind`, `outcome` | from the call to its end |
//! | `redisson_lock_acquire_attempts` | histogram | `kind` | attempts (scripts sent) per acquired lock |
//! | `redisson_lock_handoffs_total` | counter | `kind` | acquisitions right after an unlock message woke the waiter |
//! | `redisson_lock_held` | gauge | `kind` | holds (guards) alive in this process |
//! | `redisson_lock_hold_seconds` | histogram | `kind` | from the grant to the end of the guard (unlock done, or dropped) |
//! | `redisson_lock_waiters` | gauge | `kind` | acquisitions waiting now |
//! | `redisson_lock_lost_total` | counter | `reason` (`owner_gone`, `renewal_failed`, `lease_expired`, `force_unlocked`, `shutdown`) | holds that ended without their owner's unlock, counted when observed |
//! | `redisson_lock_renewals_total` | counter | `result` (`renewed`, `owner_gone`, `failed`) | watchdog renewals per hold |
//! | `redisson_lock_unlock_retries_total` | counter | `kind` | unlock requests sent again after a transient error |
//! | `redisson_lock_subscriptions` | gauge | | channels this process is subscribed to |
//!
//! `kind` is the lock kind (`lock`, `read`, `write`, `fenced`, `spin`, `non-reentrant`, `fair`,
//! `non-reentrant fair`), or the synchronizer whose waits are counted as acquisitions and waiters:
//! `latch` (a `wait` that returned: `acquired`, or `timeout`), `semaphore`, `expirable semaphore`.
//! Lock names are unbounded, so they are **not** a label unless
//! [`Config::with_metrics_lock_names`](crate::Config::with_metrics_lock_names) is set (then the per-lock
//! metrics also carry `name`).

use std::time::Instant;

use crate::lost::LostReason;

/// The labels of one lock's metrics.
#[derive(Clone)]
pub(crate) struct Labels {
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    kind: &'static str,
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    name: Option<std::sync::Arc<str>>,
}

impl Labels {
    pub(crate) fn new(kind: &'static str, name: &std::sync::Arc<str>, with_name: bool) -> Labels {
        Labels {
            kind,
            name: with_name.then(|| name.clone()),
        }
    }

    #[cfg(feature = "metrics")]
    fn pairs(&self, extra: &[(&'static str, &'static str)]) -> Vec<metrics::Label> {
        let mut v = vec![metrics::Label::new("kind", self.kind)];
        if let Some(n) = &self.name {
            v.push(metrics::Label::new("name", n.to_string()));
        }
        v.extend(extra.iter().map(|(k, val)| metrics::Label::new(*k, *val)));
        v
    }
}

/// How an acquisition ended.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) enum Outcome {
    Acquired { attempts: u32, handoff: bool },
    Timeout,
    Error,
}

/// Records the end of an acquisition that started at `start`.
pub(crate) fn acquisition(labels: &Labels, start: Instant, outcome: Outcome) {
    #[cfg(feature = "metrics")]
    {
        let o = match outcome {
            Outcome::Acquired { .. } => "acquired",
            Outcome::Timeout => "timeout",
            Outcome::Error => "error",
        };
        metrics::counter!(
            "redisson_lock_acquisitions_total",
            labels.pairs(&[("outcome", o)])
        )
        .increment(1);
        metrics::histogram!(
            "redisson_lock_acquire_wait_seconds",
            labels.pairs(&[("outcome", o)])
        )
        .record(start.elapsed().as_secs_f64());
        if let Outcome::Acquired { attempts, handoff } = outcome {
            metrics::histogram!("redisson_lock_acquire_attempts", labels.pairs(&[]))
                .record(f64::from(attempts));
            if handoff {
                metrics::counter!("redisson_lock_handoffs_total", labels.pairs(&[])).increment(1);
            }
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (labels, start, outcome);
}

/// A waiting acquisition: counted in `redisson_lock_waiters` while alive.
pub(crate) struct Waiting {
    #[cfg(feature = "metrics")]
    labels: Labels,
}

impl Waiting {
    pub(crate) fn new(labels: &Labels) -> Waiting {
        #[cfg(feature = "metrics")]
        {
            metrics::gauge!("redisson_lock_waiters", labels.pairs(&[])).increment(1.0);
            Waiting {
                labels: labels.clone(),
            }
        }
        #[cfg(not(feature = "metrics"))]
        {
            let _ = labels;
            Waiting {}
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        #[cfg(feature = "metrics")]
        metrics::gauge!("redisson_lock_waiters", self.labels.pairs(&[])).decrement(1.0);
    }
}

/// A live hold: counted in `redisson_lock_held`; its life ends in `redisson_lock_hold_seconds`.
pub(crate) struct Holding {
    #[cfg(feature = "metrics")]
    labels: Labels,
    #[cfg(feature = "metrics")]
    since: Instant,
}

impl Holding {
    pub(crate) fn new(labels: &Labels) -> Holding {
        #[cfg(feature = "metrics")]
        {
            metrics::gauge!("redisson_lock_held", labels.pairs(&[])).increment(1.0);
            Holding {
                labels: labels.clone(),
                since: Instant::now(),
            }
        }
        #[cfg(not(feature = "metrics"))]
        {
            let _ = labels;
            Holding {}
        }
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        #[cfg(feature = "metrics")]
        {
            metrics::gauge!("redisson_lock_held", self.labels.pairs(&[])).decrement(1.0);
            metrics::histogram!("redisson_lock_hold_seconds", self.labels.pairs(&[]))
                .record(self.since.elapsed().as_secs_f64());
        }
    }
}

/// A hold ended without its owner's unlock.
pub(crate) fn lost(reason: LostReason) {
    #[cfg(feature = "metrics")]
    {
        let r = match reason {
            LostReason::OwnerGone => "owner_gone",
            LostReason::RenewalFailed => "renewal_failed",
            LostReason::LeaseExpired => "lease_expired",
            LostReason::ForceUnlocked => "force_unlocked",
            LostReason::Shutdown => "shutdown",
        };
        metrics::counter!("redisson_lock_lost_total", "reason" => r).increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = reason;
}

/// Watchdog renewals of `n` holds with one result (`renewed`, `owner_gone`, `failed`).
pub(crate) fn renewals(result: &'static str, n: usize) {
    #[cfg(feature = "metrics")]
    metrics::counter!("redisson_lock_renewals_total", "result" => result).increment(n as u64);
    #[cfg(not(feature = "metrics"))]
    let _ = (result, n);
}

/// An unlock sent again after a transient error.
pub(crate) fn unlock_retry(labels: &Labels) {
    #[cfg(feature = "metrics")]
    metrics::counter!("redisson_lock_unlock_retries_total", labels.pairs(&[])).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = labels;
}

/// The hub subscribed (`+1`) or unsubscribed (`-1`) a channel.
pub(crate) fn subscriptions(delta: f64) {
    #[cfg(feature = "metrics")]
    metrics::gauge!("redisson_lock_subscriptions").increment(delta);
    #[cfg(not(feature = "metrics"))]
    let _ = delta;
}
