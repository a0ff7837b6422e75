//! The record of one held (lock key, owner field), shared by its guards, the hold table and the
//! watchdog: the epoch's state (the lock-lost signal) and the table's bookkeeping.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::primitives::{Mutex, MutexGuard, Notify};

use crate::kind::Kind;
use crate::lost::{LeaseState, LostReason};

/// The instant [`At`] counts from: the first record's making (before any deadline of one).
static BASE: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);

/// An instant as nanoseconds after [`BASE`]: a record's deadline in 8 bytes where an `Instant`
/// takes 16 (every held lock keeps one). Instants before the base count as the base; after
/// about 584 years the count saturates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct At(u64);

impl At {
    fn of(t: Instant) -> At {
        At(u64::try_from(t.saturating_duration_since(*BASE).as_nanos()).unwrap_or(u64::MAX))
    }

    fn now() -> At {
        At::of(Instant::now())
    }

    fn instant(self) -> Instant {
        BASE.checked_add(Duration::from_nanos(self.0))
            .unwrap_or_else(|| *BASE + Duration::from_secs(86_400 * 365 * 30))
    }
}

/// One epoch of one (lock key, owner field) and the hold-table record it lives in: a single
/// allocation per held field, shared by the hold table, the watchdog and the field's guards.
///
/// The hold table ([`crate::holds`]) keeps the field's current record; a record whose epoch
/// ended is never revived: the next grant of the field starts a new record, so a guard of the
/// old epoch stays stale (and keeps reporting how its epoch ended) for ever.
pub(crate) struct HoldRecord {
    field: Arc<str>,
    slot: Mutex<Slot>,
}

/// The mutable part of a [`HoldRecord`]: the epoch as guards see it, and the hold table's
/// bookkeeping for the field (which only [`crate::holds`] touches).
pub(crate) struct Slot {
    /// `Held` until the epoch ends (also before it started: see `started`).
    state: LeaseState,
    /// Until when the hold is trusted, and the reason to report when that passes.
    until: At,
    reason: LostReason,
    /// Whether an epoch was started in this record (a record made for a turn has none yet).
    pub started: bool,
    /// An operation on this field is in flight (the field's turn is taken).
    pub busy: bool,
    /// Live watchdog-mode holds of the epoch.
    pub watchdog: u32,
    /// Lower bounds of the Redis expiry of the epoch's live leased holds (rare: boxed).
    #[allow(
        clippy::box_collection,
        reason = "rare, so boxed: one pointer in every record instead of an empty Vec's three words"
    )]
    pub leased: Option<Box<Vec<Instant>>>,
    pub kind: &'static dyn Kind,
    /// Wakes `lost()` futures and operations waiting for the turn; made when first needed.
    waiters: Option<Arc<Notify>>,
}

impl Slot {
    /// The current state, turning `Held` into `Lost` once the deadline has passed.
    pub(crate) fn state_now(&mut self) -> LeaseState {
        if self.state == LeaseState::Held && At::now() >= self.until {
            self.end(LeaseState::Lost(self.reason));
        }
        self.state
    }

    /// Whether the record has a live epoch (started, not ended, deadline not passed).
    pub(crate) fn live(&mut self) -> bool {
        self.started && self.state_now() == LeaseState::Held
    }

    /// Whether the epoch was started and has not been ended explicitly (its deadline may have
    /// passed without anyone looking yet).
    pub(crate) fn open(&self) -> bool {
        self.started && self.state == LeaseState::Held
    }

    /// Live holds of the epoch.
    pub(crate) fn holds(&self) -> usize {
        self.watchdog as usize + self.leased.as_ref().map_or(0, |v| v.len())
    }

    /// Moves out of `Held` (first transition wins; `Lost` and `Released` are final) and drops
    /// the epoch's holds. `Held` only clears the holds (the epoch lapsed and was noticed).
    pub(crate) fn end(&mut self, to: LeaseState) {
        if self.state == LeaseState::Held && to != LeaseState::Held {
            self.state = to;
            if let LeaseState::Lost(reason) = to {
                crate::metrics::lost(reason);
            }
            self.wake();
        }
        self.watchdog = 0;
        self.leased = None;
    }

    /// Starts the record's epoch, trusted until `until`.
    pub(crate) fn start(&mut self, until: Instant, reason: LostReason) {
        debug_assert!(!self.started, "a record holds one epoch");
        self.started = true;
        self.state = LeaseState::Held;
        self.until = At::of(until);
        self.reason = reason;
    }

    /// Records a successful grant or renewal: trusted until `until` (never moves backwards);
    /// `reason` is what to report if that deadline passes.
    pub(crate) fn extend(&mut self, until: Instant, reason: LostReason) {
        let until = At::of(until);
        if self.state_now() == LeaseState::Held {
            if until > self.until {
                self.until = until;
            }
            self.reason = reason;
            self.wake();
        }
    }

    /// Records a successful renewal sent at `sent_at`: trusted until `until`. A renewal succeeds
    /// only while the owner's field is in Redis and never creates it, and only this owner's
    /// grants write the field (a grant of it after the deadline reads the state first, and so
    /// ends this epoch); so a renewal sent while the hold was trusted and answered with success
    /// proves the hold lasted all along, even when its reply is read after the deadline — the
    /// client was paused with the reply queued, or its runtime was busy. Such a reply moves a
    /// deadline that passed unobserved; once somebody read the state after the deadline (a
    /// guard, `lost()`, the watchdog choosing what to renew), the loss was reported and is final.
    pub(crate) fn renewed(&mut self, sent_at: Instant, until: Instant, reason: LostReason) {
        if self.started && self.state == LeaseState::Held && At::of(sent_at) < self.until {
            let until = At::of(until);
            if until > self.until {
                self.until = until;
            }
            self.reason = reason;
            self.wake();
        } else {
            self.extend(until, reason);
        }
    }

    /// Moves the deadline back to `until` if that is earlier (a partial release may have set a
    /// shorter TTL); never moves it forward.
    pub(crate) fn lower_to(&mut self, until: Instant, reason: LostReason) {
        let until = At::of(until);
        if self.state_now() == LeaseState::Held {
            if until < self.until {
                self.until = until;
            }
            self.reason = reason;
            self.wake();
        }
    }

    pub(crate) fn add(&mut self, until: Instant) {
        self.leased.get_or_insert_with(Default::default).push(until);
    }

    /// Removes one leased hold expiring at `until`.
    pub(crate) fn remove_leased(&mut self, until: Instant) -> bool {
        let Some(v) = self.leased.as_mut() else {
            return false;
        };
        match v.iter().position(|u| *u == until) {
            Some(i) => {
                v.swap_remove(i);
                if v.is_empty() {
                    self.leased = None;
                }
                true
            }
            None => false,
        }
    }

    /// Removes the leased hold that would expire first, returning its expiry.
    pub(crate) fn remove_first_leased(&mut self) -> Option<Instant> {
        let v = self.leased.as_ref()?;
        let (_, until) = v.iter().copied().enumerate().min_by_key(|(_, u)| *u)?;
        self.remove_leased(until);
        Some(until)
    }

    pub(crate) fn leased(&self) -> &[Instant] {
        self.leased.as_deref().map_or(&[], |v| v.as_slice())
    }

    /// The notifier woken on every change, made on first use.
    pub(crate) fn waiters(&mut self) -> Arc<Notify> {
        self.waiters
            .get_or_insert_with(|| Arc::new(Notify::new()))
            .clone()
    }

    /// Wakes everyone waiting on this record (they re-check what they wait for).
    pub(crate) fn wake(&self) {
        if let Some(n) = &self.waiters {
            n.notify_waiters();
        }
    }
}

impl HoldRecord {
    /// A record for `field` without an epoch yet.
    pub(crate) fn fresh(field: Arc<str>, kind: &'static dyn Kind) -> HoldRecord {
        // the base of every deadline is set before the first request of any record is sent
        std::sync::LazyLock::force(&BASE);
        HoldRecord {
            field,
            slot: Mutex::new(Slot {
                state: LeaseState::Held,
                // unused until the epoch starts (`start` sets it): no clock read per record
                until: At(0),
                reason: LostReason::RenewalFailed,
                started: false,
                busy: false,
                watchdog: 0,
                leased: None,
                kind,
                waiters: None,
            }),
        }
    }

    /// A record with a started epoch, trusted until `valid_until` (tests).
    #[cfg(test)]
    pub(crate) fn new(valid_until: Instant, on_expiry: LostReason) -> Self {
        struct NoKind;
        impl Kind for NoKind {
            fn label(&self) -> &'static str {
                "test"
            }
            fn write_channel(&self, out: &mut String, key: &str, _: &str) {
                out.push_str(key)
            }
            fn release(
                &self,
                _: &crate::kind::Ctx<'_>,
                _: &crate::kind::ReleaseArgs<'_>,
            ) -> redis::ScriptInvocation<'static> {
                unreachable!()
            }
            fn force_release(&self, _: &crate::kind::Ctx<'_>) -> redis::ScriptInvocation<'static> {
                unreachable!()
            }
        }
        static NO_KIND: NoKind = NoKind;
        let l = HoldRecord::fresh("test".into(), &NO_KIND);
        l.lock().start(valid_until, on_expiry);
        l
    }

    /// The owner field this record is for.
    pub(crate) fn field(&self) -> &Arc<str> {
        &self.field
    }

    /// The record's state, for the hold table.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock()
    }

    /// The current state, turning `Held` into `Lost` once the deadline has passed.
    pub(crate) fn state(&self) -> LeaseState {
        self.slot.lock().state_now()
    }

    #[cfg(test)]
    pub(crate) fn extend(&self, until: Instant, reason: LostReason) {
        self.slot.lock().extend(until, reason);
    }

    #[cfg(test)]
    pub(crate) fn renewed(&self, sent_at: Instant, until: Instant, reason: LostReason) {
        self.slot.lock().renewed(sent_at, until, reason);
    }

    #[cfg(test)]
    pub(crate) fn lower_to(&self, until: Instant, reason: LostReason) {
        self.slot.lock().lower_to(until, reason);
    }

    /// Moves out of `Held` (first transition wins; `Lost` and `Released` are final).
    #[cfg(test)]
    pub(crate) fn set(&self, to: LeaseState) {
        self.slot.lock().end(to);
    }

    /// Resolves when the hold is lost; pends forever once it was released normally.
    pub(crate) async fn lost(&self) -> LostReason {
        loop {
            let waiters = self.slot.lock().waiters();
            let notified = waiters.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            // read after registering, so a change in between wakes us
            let (state, deadline) = {
                let mut s = self.slot.lock();
                (s.state_now(), s.until.instant())
            };
            match state {
                LeaseState::Lost(r) => return r,
                LeaseState::Released => std::future::pending::<()>().await,
                LeaseState::Held => {}
            }
            tokio::select! {
                _ = notified => {}
                _ = crate::primitives::sleep_until(deadline.into()) => {}
            }
        }
    }
}

impl std::fmt::Debug for HoldRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.slot.lock();
        f.debug_struct("HoldRecord")
            .field("field", &&*self.field)
            .field("state", &s.state)
            .field("started", &s.started)
            .field("until", &s.until)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    /// A record held for a minute, and a task waiting in `lost()` on it.
    async fn held_with_a_lost_waiter() -> (Arc<HoldRecord>, tokio::task::JoinHandle<LostReason>) {
        let l = Arc::new(HoldRecord::new(
            Instant::now() + Duration::from_secs(60),
            LostReason::RenewalFailed,
        ));
        let l2 = l.clone();
        let waiter = tokio::spawn(async move { l2.lost().await });
        tokio::task::yield_now().await;
        (l, waiter)
    }

    #[tokio::test]
    async fn a_shorter_deadline_wakes_lost_waiters() {
        let (l, waiter) = held_with_a_lost_waiter().await;
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
        let l = HoldRecord::new(
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

    #[test]
    fn a_renewal_answered_after_an_unobserved_deadline_keeps_the_hold() {
        let sent_at = Instant::now();
        let l = HoldRecord::new(sent_at + Duration::from_millis(20), LostReason::RenewalFailed);
        // the reply is read only after the deadline (the process was paused), nobody looked
        std::thread::sleep(Duration::from_millis(40));
        l.renewed(
            sent_at,
            sent_at + Duration::from_secs(60),
            LostReason::RenewalFailed,
        );
        assert_eq!(
            l.state(),
            LeaseState::Held,
            "the renewal sent in time proves the hold lasted"
        );

        // a renewal sent after the deadline proves nothing about the time before it
        let l = HoldRecord::new(
            Instant::now() + Duration::from_millis(20),
            LostReason::RenewalFailed,
        );
        std::thread::sleep(Duration::from_millis(40));
        let late = Instant::now();
        l.renewed(late, late + Duration::from_secs(60), LostReason::RenewalFailed);
        assert_eq!(l.state(), LeaseState::Lost(LostReason::RenewalFailed));

        // a lapse somebody saw was reported: a renewal answered after that changes nothing
        let sent_at = Instant::now();
        let l = HoldRecord::new(sent_at + Duration::from_millis(20), LostReason::RenewalFailed);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(l.state(), LeaseState::Lost(LostReason::RenewalFailed));
        l.renewed(
            sent_at,
            sent_at + Duration::from_secs(60),
            LostReason::RenewalFailed,
        );
        assert_eq!(
            l.state(),
            LeaseState::Lost(LostReason::RenewalFailed),
            "lost is final"
        );
    }

    #[tokio::test]
    async fn explicit_loss_wakes_waiters() {
        let (l, waiter) = held_with_a_lost_waiter().await;
        l.set(LeaseState::Lost(LostReason::OwnerGone));
        assert_eq!(waiter.await.unwrap(), LostReason::OwnerGone);
        l.set(LeaseState::Released);
        assert_eq!(l.state(), LeaseState::Lost(LostReason::OwnerGone));
    }
}
