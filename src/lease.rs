//! Lease state shared by a guard and the watchdog: the lock-lost signal.

use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::watch;

/// Why a hold ended without the owner releasing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LostReason {
    /// Renewal found the owner's field gone: the lock expired, was force-unlocked, or Redis
    /// lost its data (restart, failover, eviction).
    OwnerGone,
    /// No renewal succeeded in time (Redis unreachable or too slow): the key may already have
    /// expired, so the hold can no longer be trusted.
    RenewalFailed,
    /// The lease given at acquisition ran out (no watchdog in lease mode).
    LeaseExpired,
    /// This client force-unlocked the lock.
    ForceUnlocked,
    /// The client shut down ([`Client::shutdown`](crate::Client::shutdown)) and released it.
    Shutdown,
}

impl std::fmt::Display for LostReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LostReason::OwnerGone => {
                "the owner's field is gone from the lock (expired, force-unlocked or Redis lost it)"
            }
            LostReason::RenewalFailed => "no renewal succeeded before the lease deadline",
            LostReason::LeaseExpired => "the lease ran out",
            LostReason::ForceUnlocked => "force-unlocked by this client",
            LostReason::Shutdown => "released by the client's shutdown",
        })
    }
}

/// The state of one hold as far as this process knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseState {
    /// Held: granted or renewed recently enough.
    Held,
    /// Lost; it never becomes `Held` again.
    Lost(LostReason),
    /// Released by its owner.
    Released,
}

/// One lease (a watchdog entry or a leased hold), observed by its guards.
#[derive(Debug)]
pub(crate) struct Lease {
    state: watch::Sender<LeaseState>,
    /// Until when the hold is trusted, and the reason to report when that passes.
    valid_until: Mutex<(Instant, LostReason)>,
}

impl Lease {
    pub(crate) fn new(valid_until: Instant, on_expiry: LostReason) -> Self {
        Lease {
            state: watch::Sender::new(LeaseState::Held),
            valid_until: Mutex::new((valid_until, on_expiry)),
        }
    }

    /// The current state, turning `Held` into `Lost` once the deadline has passed.
    pub(crate) fn state(&self) -> LeaseState {
        let s = *self.state.borrow();
        if s == LeaseState::Held {
            let (until, reason) = *self.valid_until.lock();
            if Instant::now() >= until {
                self.set(LeaseState::Lost(reason));
                return *self.state.borrow();
            }
        }
        s
    }

    pub(crate) fn valid_until(&self) -> Instant {
        self.valid_until.lock().0
    }

    /// Records a successful grant or renewal: trusted until `until` (never moves backwards);
    /// `reason` is what to report if that deadline passes.
    pub(crate) fn extend(&self, until: Instant, reason: LostReason) {
        let mut v = self.valid_until.lock();
        if *self.state.borrow() == LeaseState::Held {
            if until > v.0 {
                v.0 = until;
            }
            v.1 = reason;
        }
        drop(v);
        self.wake_watchers();
    }

    /// Moves the deadline back to `until` if that is earlier (a partial release may have set a
    /// shorter TTL); never moves it forward.
    pub(crate) fn lower_to(&self, until: Instant, reason: LostReason) {
        let mut v = self.valid_until.lock();
        if *self.state.borrow() == LeaseState::Held {
            if until < v.0 {
                v.0 = until;
            }
            v.1 = reason;
        }
        drop(v);
        self.wake_watchers();
    }

    /// Lets `lost()` futures re-read the deadline.
    fn wake_watchers(&self) {
        self.state.send_modify(|_| {});
    }

    /// Moves out of `Held` (first transition wins; `Lost` and `Released` are final).
    pub(crate) fn set(&self, to: LeaseState) {
        let changed = self.state.send_if_modified(|s| {
            if *s == LeaseState::Held && to != LeaseState::Held {
                *s = to;
                true
            } else {
                false
            }
        });
        if let (true, LeaseState::Lost(reason)) = (changed, to) {
            crate::metrics::lost(reason);
        }
    }

    /// Resolves when the hold is lost; pends forever once it was released normally.
    pub(crate) async fn lost(&self) -> LostReason {
        let mut rx = self.state.subscribe();
        loop {
            match self.state() {
                LeaseState::Lost(r) => return r,
                LeaseState::Released => std::future::pending::<()>().await,
                LeaseState::Held => {}
            }
            let deadline = self.valid_until();
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
                _ = tokio::time::sleep_until(deadline.into()) => {}
            }
        }
    }
}

/// `Instant::now() + d`, saturating.
pub(crate) fn after(start: Instant, d: Duration) -> Instant {
    start
        .checked_add(d)
        .unwrap_or(start + Duration::from_secs(86_400 * 365))
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_shorter_deadline_wakes_lost_waiters() {
        let l = std::sync::Arc::new(Lease::new(
            Instant::now() + Duration::from_secs(60),
            LostReason::RenewalFailed,
        ));
        let l2 = l.clone();
        let waiter = tokio::spawn(async move { l2.lost().await });
        tokio::task::yield_now().await;
        l.lower_to(
            Instant::now() + Duration::from_millis(20),
            LostReason::LeaseExpired,
        );
        let r = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r, LostReason::LeaseExpired);
    }

    use super::*;

    #[tokio::test]
    async fn deadline_turns_held_into_lost() {
        let l = Lease::new(
            Instant::now() + Duration::from_millis(30),
            LostReason::LeaseExpired,
        );
        assert_eq!(l.state(), LeaseState::Held);
        assert_eq!(l.lost().await, LostReason::LeaseExpired);
        assert_eq!(l.state(), LeaseState::Lost(LostReason::LeaseExpired));
        l.extend(Instant::now() + Duration::from_secs(5), LostReason::RenewalFailed);
        assert_eq!(
            l.state(),
            LeaseState::Lost(LostReason::LeaseExpired),
            "lost is final"
        );
    }

    #[tokio::test]
    async fn explicit_loss_wakes_waiters() {
        let l = std::sync::Arc::new(Lease::new(
            Instant::now() + Duration::from_secs(60),
            LostReason::RenewalFailed,
        ));
        let l2 = l.clone();
        let waiter = tokio::spawn(async move { l2.lost().await });
        tokio::task::yield_now().await;
        l.set(LeaseState::Lost(LostReason::OwnerGone));
        assert_eq!(waiter.await.unwrap(), LostReason::OwnerGone);
        l.set(LeaseState::Released);
        assert_eq!(l.state(), LeaseState::Lost(LostReason::OwnerGone));
    }
}
