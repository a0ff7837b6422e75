//! Every hold this client has, per (lock key, owner field): the one place that knows which holds
//! are live, keeps their key's TTL long enough for all of them, serialises the operations on one
//! field, and tells guards when their hold ended.
//!
//! # Epochs
//!
//! All holds of one field share one fate in Redis: one hash field with one count, under one key
//! with one TTL. So they share one [`Lease`] (an *epoch*): granted when the field's first hold is
//! taken, extended by grants and renewals, and ended for all of them at once when the field turns
//! out to be gone (renewal finds no field, a release answers "not held", Redis' count contradicts
//! ours) or when no grant or renewal succeeded in time. A guard holds its epoch's `Lease`; a guard
//! whose epoch ended is stale forever: it never sends a release (its `unlock` is `NotHeld` without
//! a round trip), so it can never take away a later hold of the same field.
//!
//! # TTL
//!
//! The key must live as long as the longest live hold of the field needs: the watchdog timeout
//! while any hold is in watchdog mode (renewed), else the longest remaining lease. Every grant and
//! every partial release sends that need (Redisson would send the caller's own lease, so a short
//! re-entry could cut the TTL under a longer hold), and renewal never shortens a TTL.
//!
//! # Turns
//!
//! Operations that change a field's count (an acquire attempt, a release) take the field's turn
//! and finish before the next one is sent, so that every request is planned against a known
//! state. Fields are per owner, and owners are per acquisition by default, so turns only queue
//! when an owner is shared on purpose.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::config::Config;
use crate::core::kind::{Kind, RenewKind};
use crate::lease::{after, Lease, LeaseState, LostReason};

/// How one hold keeps its key alive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Renewed by the watchdog while the hold lives.
    Watchdog,
    /// An explicit lease; `until` is a lower bound of when Redis expires it (request sent + lease).
    Leased { lease_ms: u64, until: Instant },
}

struct Entry {
    /// The live epoch, if the field has holds.
    epoch: Option<Arc<Lease>>,
    /// Live watchdog-mode holds of the epoch.
    watchdog: u32,
    /// Lower bounds of the Redis expiry of the epoch's live leased holds.
    leased: Vec<Instant>,
    kind: &'static dyn Kind,
    /// An operation on this field is in flight.
    busy: bool,
    /// Wakes operations waiting for the turn.
    queue: Option<Arc<Notify>>,
}

impl Entry {
    fn new(kind: &'static dyn Kind) -> Entry {
        Entry {
            epoch: None,
            watchdog: 0,
            leased: Vec::new(),
            kind,
            busy: false,
            queue: None,
        }
    }

    fn holds(&self) -> usize {
        self.watchdog as usize + self.leased.len()
    }

    /// The live epoch; a lapsed one is cleared (its guards observe `Lost` through the lease).
    fn live_epoch(&mut self) -> Option<Arc<Lease>> {
        match &self.epoch {
            Some(l) if l.state() == LeaseState::Held => Some(l.clone()),
            Some(_) => {
                self.end_epoch(None);
                None
            }
            None => None,
        }
    }

    /// Ends the epoch: its guards learn `reason` (unless they already know how it ended).
    fn end_epoch(&mut self, reason: Option<LeaseState>) {
        if let (Some(l), Some(r)) = (&self.epoch, reason) {
            l.set(r);
        }
        self.epoch = None;
        self.watchdog = 0;
        self.leased.clear();
    }

    fn idle(&self) -> bool {
        self.epoch.is_none() && !self.busy
    }

    fn expiry_reason(&self) -> LostReason {
        if self.watchdog > 0 {
            LostReason::RenewalFailed
        } else {
            LostReason::LeaseExpired
        }
    }
}

/// The owners of one lock that have an entry. Almost always one, so that case is stored inline.
enum Owners {
    One(Arc<str>, Entry),
    Many(HashMap<Arc<str>, Entry>),
}

impl Owners {
    fn get_mut(&mut self, field: &str) -> Option<&mut Entry> {
        match self {
            Owners::One(f, e) => (&**f == field).then_some(e),
            Owners::Many(m) => m.get_mut(field),
        }
    }

    fn remove(&mut self, field: &str) {
        match self {
            Owners::One(f, _) if &**f == field => *self = Owners::Many(HashMap::new()),
            Owners::One(..) => {}
            Owners::Many(m) => {
                m.remove(field);
            }
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Owners::Many(m) if m.is_empty())
    }

    fn for_each(&mut self, mut f: impl FnMut(&Arc<str>, &mut Entry)) {
        match self {
            Owners::One(field, e) => f(field, e),
            Owners::Many(m) => m.iter_mut().for_each(|(k, e)| f(k, e)),
        }
    }
}

#[derive(Default)]
struct Table {
    locks: HashMap<Arc<str>, Owners>,
}

impl Table {
    fn get_mut(&mut self, key: &str, field: &str) -> Option<&mut Entry> {
        self.locks.get_mut(key)?.get_mut(field)
    }

    fn entry(&mut self, key: &Arc<str>, field: &Arc<str>, kind: &'static dyn Kind) -> &mut Entry {
        let owners = match self.locks.entry(key.clone()) {
            std::collections::hash_map::Entry::Vacant(v) => {
                return match v.insert(Owners::One(field.clone(), Entry::new(kind))) {
                    Owners::One(_, e) => e,
                    Owners::Many(_) => unreachable!("just inserted One"),
                };
            }
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
        };
        if owners.get_mut(field).is_none() {
            let mut map = match std::mem::replace(owners, Owners::Many(HashMap::new())) {
                Owners::One(f, e) => HashMap::from([(f, e)]),
                Owners::Many(m) => m,
            };
            map.insert(field.clone(), Entry::new(kind));
            *owners = Owners::Many(map);
        }
        owners.get_mut(field).expect("present: found or just inserted")
    }

    /// Drops the entry when nothing refers to it any more.
    fn tidy(&mut self, key: &str, field: &str) {
        if let Some(owners) = self.locks.get_mut(key) {
            if owners.get_mut(field).is_some_and(|e| e.idle()) {
                owners.remove(field);
            }
            if owners.is_empty() {
                self.locks.remove(key);
            }
        }
    }
}

/// The hold table of one client.
pub(crate) struct Holds {
    table: Mutex<Table>,
    watchdog_timeout: Duration,
    config: Config,
    closed: AtomicBool,
}

/// The right to change one field's count: held from before a request is planned until its outcome
/// is recorded. Dropping it lets the next operation on the field go.
pub(crate) struct Turn {
    holds: Arc<Holds>,
    key: Arc<str>,
    field: Arc<str>,
}

impl Turn {
    pub(crate) fn field(&self) -> &Arc<str> {
        &self.field
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut t = self.holds.table.lock();
        if let Some(e) = t.get_mut(&self.key, &self.field) {
            e.busy = false;
            if let Some(q) = e.queue.take() {
                q.notify_waiters();
            }
        }
        t.tidy(&self.key, &self.field);
    }
}

/// What a release of one hold should send.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReleasePlan {
    /// The hold is known to have ended: send nothing.
    Stale,
    /// Send a release. `last`: no other live hold of the field remains (release everything the
    /// field still has in Redis); `need_ms`: the TTL the remaining holds need (partial release).
    Send { last: bool, need_ms: u64 },
    /// A handle-level unlock for a field with no known hold: a plain Redisson unlock.
    Unknown,
}

/// How a release request ended, as far as the epoch is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Released {
    /// Redis still has holds of the field (expected after a partial release).
    StillHeld,
    /// The field (or the key) is gone.
    Gone,
    /// Redis answered "not held".
    NotHeld,
}

/// A watchdog-mode epoch to renew.
pub(crate) struct RenewalItem {
    pub key: Arc<str>,
    pub field: Arc<str>,
    pub lease: Arc<Lease>,
    pub renew: RenewKind,
}

/// A live epoch at shutdown.
pub(crate) struct Remaining {
    pub key: Arc<str>,
    pub field: Arc<str>,
    pub kind: &'static dyn Kind,
}

impl Holds {
    pub(crate) fn new(config: &Config) -> Holds {
        Holds {
            table: Mutex::new(Table::default()),
            watchdog_timeout: config.lock_watchdog_timeout,
            config: config.clone(),
            closed: AtomicBool::new(false),
        }
    }

    /// Takes the turn of `field` on `key`, waiting while another operation on it is in flight.
    pub(crate) async fn turn(
        self: &Arc<Self>,
        key: &Arc<str>,
        field: &Arc<str>,
        kind: &'static dyn Kind,
    ) -> Turn {
        loop {
            let queue = {
                let mut t = self.table.lock();
                let e = t.entry(key, field, kind);
                if !e.busy {
                    e.busy = true;
                    return Turn {
                        holds: self.clone(),
                        key: key.clone(),
                        field: field.clone(),
                    };
                }
                e.queue.get_or_insert_with(|| Arc::new(Notify::new())).clone()
            };
            let notified = queue.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            let still_busy = {
                let mut t = self.table.lock();
                t.get_mut(key, field).is_some_and(|e| e.busy)
            };
            if still_busy {
                notified.await;
            }
        }
    }

    fn ms_until(until: Instant, now: Instant) -> u64 {
        let d = until.saturating_duration_since(now);
        (d.as_millis() as u64).max(1)
    }

    /// The TTL the live holds of an entry need now, if it has any.
    fn need_of(&self, e: &Entry, now: Instant) -> Option<u64> {
        if e.holds() == 0 {
            return None;
        }
        let mut need = 0;
        if e.watchdog > 0 {
            need = self.watchdog_timeout.as_millis() as u64;
        }
        for u in &e.leased {
            need = need.max(Self::ms_until(*u, now));
        }
        Some(need)
    }

    /// The TTL an acquisition of `turn`'s field with `own_ms` should send: its own lease, or
    /// longer when other live holds of the field need longer.
    pub(crate) fn acquire_need(&self, turn: &Turn, own_ms: u64) -> u64 {
        let mut t = self.table.lock();
        let Some(e) = t.get_mut(&turn.key, &turn.field) else {
            return own_ms;
        };
        if e.live_epoch().is_none() {
            return own_ms;
        }
        self.need_of(e, Instant::now()).map_or(own_ms, |n| n.max(own_ms))
    }

    /// Records a grant of one hold whose request was sent at `sent_at` with TTL `need_ms`; `count`
    /// is the field's hold count Redis reported after it. Returns the hold's epoch.
    pub(crate) fn granted(
        &self,
        turn: &Turn,
        kind: &'static dyn Kind,
        mode: Mode,
        sent_at: Instant,
        need_ms: u64,
        count: i64,
    ) -> Arc<Lease> {
        let mut t = self.table.lock();
        let e = t.entry(&turn.key, &turn.field, kind);
        let joined = match e.live_epoch() {
            Some(l) if count == e.holds() as i64 + 1 => Some(l),
            Some(l) => {
                // Redis disagrees with what we know (it lost the field and we have not noticed
                // yet, or it has counts we never saw): the epoch's holds cannot be trusted.
                tracing::warn!(key = %turn.key, field = %turn.field, redis_count = count, local_holds = e.holds(),
                    "the lock's hold count in Redis contradicts this client's holds: treating them as lost");
                let _ = l;
                e.end_epoch(Some(LeaseState::Lost(LostReason::OwnerGone)));
                None
            }
            None => {
                if count != 1 {
                    tracing::debug!(key = %turn.key, field = %turn.field, redis_count = count,
                        "granted over counts left by holds this client already lost; the last release clears them");
                }
                None
            }
        };
        match mode {
            Mode::Watchdog => e.watchdog += 1,
            Mode::Leased { until, .. } => e.leased.push(until),
        }
        let need = Duration::from_millis(need_ms);
        let until = after(sent_at, self.config.trusted_for(need));
        let reason = e.expiry_reason();
        match joined {
            Some(l) => {
                l.extend(until, reason);
                l
            }
            None => {
                let l = Arc::new(Lease::new(until, reason));
                e.epoch = Some(l.clone());
                l
            }
        }
    }

    /// Removes one hold observed through `lease` (an epoch) and says what to send.
    pub(crate) fn begin_release(&self, turn: &Turn, lease: &Arc<Lease>, mode: Mode) -> ReleasePlan {
        let mut t = self.table.lock();
        let Some(e) = t.get_mut(&turn.key, &turn.field) else {
            return ReleasePlan::Stale;
        };
        let current = e.live_epoch();
        if !current.as_ref().is_some_and(|c| Arc::ptr_eq(c, lease)) {
            return ReleasePlan::Stale;
        }
        match mode {
            Mode::Watchdog if e.watchdog > 0 => e.watchdog -= 1,
            Mode::Leased { until, .. } => match e.leased.iter().position(|u| *u == until) {
                Some(i) => {
                    e.leased.swap_remove(i);
                }
                None => return ReleasePlan::Stale,
            },
            Mode::Watchdog => return ReleasePlan::Stale,
        }
        self.plan_after_removal(e, lease, mode)
    }

    /// A handle-level unlock (Redisson's `unlock()` without a guard): removes one of the field's
    /// holds (a forgotten guard's, usually).
    pub(crate) fn begin_release_any(&self, turn: &Turn) -> (ReleasePlan, Option<Arc<Lease>>) {
        let mut t = self.table.lock();
        let Some(e) = t.get_mut(&turn.key, &turn.field) else {
            return (ReleasePlan::Unknown, None);
        };
        let Some(lease) = e.live_epoch() else {
            return (ReleasePlan::Unknown, None);
        };
        let mode = if e.watchdog > 0 {
            e.watchdog -= 1;
            Mode::Watchdog
        } else {
            // the leased hold that would expire first
            let Some((i, until)) = e.leased.iter().copied().enumerate().min_by_key(|(_, u)| *u) else {
                return (ReleasePlan::Unknown, None);
            };
            e.leased.swap_remove(i);
            Mode::Leased { lease_ms: 0, until }
        };
        let plan = self.plan_after_removal(e, &lease, mode);
        (plan, Some(lease))
    }

    fn plan_after_removal(&self, e: &mut Entry, lease: &Arc<Lease>, removed: Mode) -> ReleasePlan {
        match self.need_of(e, Instant::now()) {
            None => {
                // the field's last hold: renewal stops now, before anything is sent
                lease.set(LeaseState::Released);
                e.end_epoch(None);
                let own = match removed {
                    Mode::Watchdog => self.watchdog_timeout.as_millis() as u64,
                    Mode::Leased { lease_ms, .. } => lease_ms.max(1),
                };
                ReleasePlan::Send {
                    last: true,
                    need_ms: own,
                }
            }
            Some(need_ms) => ReleasePlan::Send { last: false, need_ms },
        }
    }

    /// Records how a release sent at `sent_at` (planned with `plan`) ended for the epoch `lease`.
    pub(crate) fn released(
        &self,
        turn: &Turn,
        lease: Option<&Arc<Lease>>,
        plan: &ReleasePlan,
        sent_at: Instant,
        outcome: Released,
    ) {
        let ReleasePlan::Send { last: false, need_ms } = plan else {
            return; // the epoch already ended locally (or was never known)
        };
        let Some(lease) = lease else { return };
        let mut t = self.table.lock();
        let Some(e) = t.get_mut(&turn.key, &turn.field) else {
            return;
        };
        if !e.epoch.as_ref().is_some_and(|c| Arc::ptr_eq(c, lease)) {
            return;
        }
        match outcome {
            Released::StillHeld => {
                // the key now lives `need_ms` from when the script ran (not earlier than sent_at),
                // or longer (a read unlock keeps the longest hold's TTL): trust the shorter of
                // that and what we trusted before
                let until = after(sent_at, self.config.trusted_for(Duration::from_millis(*need_ms)));
                let reason = e.expiry_reason();
                lease.lower_to(until, reason);
            }
            Released::Gone | Released::NotHeld => {
                tracing::warn!(key = %turn.key, field = %turn.field, ?outcome,
                    "a partial release found the owner's holds gone in Redis: the remaining holds are lost");
                e.end_epoch(Some(LeaseState::Lost(LostReason::OwnerGone)));
            }
        }
    }

    /// Ends every epoch on `key` (this client force-unlocked it).
    pub(crate) fn lose_key(&self, key: &str, reason: LostReason) {
        let mut t = self.table.lock();
        if let Some(owners) = t.locks.get_mut(key) {
            owners.for_each(|_, e| e.end_epoch(Some(LeaseState::Lost(reason))));
        }
        let fields: Vec<Arc<str>> = match t.locks.get(key) {
            Some(Owners::One(f, _)) => vec![f.clone()],
            Some(Owners::Many(m)) => m.keys().cloned().collect(),
            None => Vec::new(),
        };
        for f in fields {
            t.tidy(key, &f);
        }
    }

    /// Watchdog: the epochs to renew now. Epochs that lapsed are ended and reported.
    pub(crate) fn renewal_items(&self) -> Vec<RenewalItem> {
        let mut items = Vec::new();
        let mut t = self.table.lock();
        let mut lapsed: Vec<(Arc<str>, Arc<str>)> = Vec::new();
        for (key, owners) in t.locks.iter_mut() {
            owners.for_each(|field, e| {
                let Some(l) = e.epoch.clone() else { return };
                match l.state() {
                    LeaseState::Held => {
                        if e.watchdog > 0 {
                            items.push(RenewalItem {
                                key: key.clone(),
                                field: field.clone(),
                                lease: l,
                                renew: e.kind.renew(),
                            });
                        }
                    }
                    state => {
                        tracing::warn!(key = %key, field = %field, ?state,
                            "lock lost: no grant or renewal succeeded before the hold's deadline");
                        e.end_epoch(None);
                        lapsed.push((key.clone(), field.clone()));
                    }
                }
            });
        }
        for (k, f) in lapsed {
            t.tidy(&k, &f);
        }
        items
    }

    /// Watchdog: `item` was renewed by a request sent at `sent_at`.
    pub(crate) fn renewed(&self, item: &RenewalItem, sent_at: Instant) {
        let mut t = self.table.lock();
        let Some(e) = t.get_mut(&item.key, &item.field) else {
            return;
        };
        // only while the epoch still has watchdog holds: a release in between may have set a
        // shorter TTL that this renewal's reply must not paper over
        if e.watchdog > 0 && e.epoch.as_ref().is_some_and(|c| Arc::ptr_eq(c, &item.lease)) {
            let until = after(sent_at, self.config.trusted_for(self.watchdog_timeout));
            item.lease.extend(until, LostReason::RenewalFailed);
        }
    }

    /// Watchdog: renewal found the owner's field gone (or the key of another type).
    pub(crate) fn owner_gone(&self, item: &RenewalItem) {
        let mut t = self.table.lock();
        if let Some(e) = t.get_mut(&item.key, &item.field) {
            if e.epoch.as_ref().is_some_and(|c| Arc::ptr_eq(c, &item.lease)) {
                e.end_epoch(None);
            }
        }
        t.tidy(&item.key, &item.field);
        drop(t);
        item.lease.set(LeaseState::Lost(LostReason::OwnerGone));
    }

    /// Number of fields being renewed by the watchdog.
    pub(crate) fn renewing(&self) -> usize {
        let mut t = self.table.lock();
        let mut n = 0;
        for owners in t.locks.values_mut() {
            owners.for_each(|_, e| {
                if e.watchdog > 0 && e.epoch.is_some() {
                    n += 1;
                }
            });
        }
        n
    }

    /// Number of (lock, field) entries, live or in use (for tests and diagnostics).
    pub(crate) fn entries(&self) -> usize {
        let t = self.table.lock();
        t.locks
            .values()
            .map(|o| match o {
                Owners::One(..) => 1,
                Owners::Many(m) => m.len(),
            })
            .sum()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Closes the table for shutdown: no acquisition is recorded any more, every live epoch ends
    /// with `LostReason::Shutdown`, and the fields to release are returned.
    pub(crate) fn close(&self) -> Vec<Remaining> {
        self.closed.store(true, Ordering::SeqCst);
        let mut out = Vec::new();
        let mut t = self.table.lock();
        for (key, owners) in t.locks.iter_mut() {
            owners.for_each(|field, e| {
                if e.live_epoch().is_some() {
                    out.push(Remaining {
                        key: key.clone(),
                        field: field.clone(),
                        kind: e.kind,
                    });
                    e.end_epoch(Some(LeaseState::Lost(LostReason::Shutdown)));
                }
            });
        }
        out
    }

    pub(crate) fn downgrade(self: &Arc<Self>) -> Weak<Holds> {
        Arc::downgrade(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kind::{Ctx, ReleaseArgs};
    use redis::ScriptInvocation;

    struct Dummy;
    impl Kind for Dummy {
        fn label(&self) -> &'static str {
            "dummy"
        }
        fn channel(&self, key: &str, _: &str) -> String {
            key.to_owned()
        }
        fn release(&self, _: &Ctx<'_>, _: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
            unreachable!()
        }
        fn force_release(&self, _: &Ctx<'_>) -> ScriptInvocation<'static> {
            unreachable!()
        }
    }
    static DUMMY: Dummy = Dummy;

    fn holds() -> Arc<Holds> {
        Arc::new(Holds::new(
            &Config::default()
                .lock_watchdog_timeout(Duration::from_secs(30))
                .command_timeout(Duration::from_secs(1)),
        ))
    }

    fn names() -> (Arc<str>, Arc<str>) {
        ("k".into(), "c:1".into())
    }

    #[tokio::test]
    async fn epochs_are_shared_and_final() {
        let h = holds();
        let (k, f) = names();
        let t = h.turn(&k, &f, &DUMMY).await;
        let now = Instant::now();
        let a = h.granted(&t, &DUMMY, Mode::Watchdog, now, 30_000, 1);
        let b = h.granted(&t, &DUMMY, Mode::Watchdog, now, 30_000, 2);
        assert!(Arc::ptr_eq(&a, &b), "a re-entry joins the epoch");
        // Redis says 1 where we expect 3: it lost the field; the epoch ends for both guards
        let c = h.granted(&t, &DUMMY, Mode::Watchdog, now, 30_000, 1);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(a.state(), LeaseState::Lost(LostReason::OwnerGone));
        assert_eq!(c.state(), LeaseState::Held);
        // a guard of the ended epoch sends nothing
        assert_eq!(h.begin_release(&t, &a, Mode::Watchdog), ReleasePlan::Stale);
        assert_eq!(
            h.begin_release(&t, &c, Mode::Watchdog),
            ReleasePlan::Send {
                last: true,
                need_ms: 30_000
            }
        );
        assert_eq!(c.state(), LeaseState::Released);
        drop(t);
        assert_eq!(h.entries(), 0, "the table is empty again");
    }

    #[tokio::test]
    async fn a_lapsed_epoch_is_never_revived() {
        let h = holds();
        let (k, f) = names();
        let t = h.turn(&k, &f, &DUMMY).await;
        let long_ago = Instant::now() - Duration::from_secs(60);
        let old = h.granted(&t, &DUMMY, Mode::Watchdog, long_ago, 30_000, 1);
        // nobody has read its state since its deadline passed; a new grant must not revive it
        let new = h.granted(&t, &DUMMY, Mode::Watchdog, Instant::now(), 30_000, 2);
        assert!(!Arc::ptr_eq(&old, &new));
        assert_eq!(old.state(), LeaseState::Lost(LostReason::RenewalFailed));
        assert_eq!(new.state(), LeaseState::Held);
    }

    #[tokio::test]
    async fn the_ttl_sent_covers_the_longest_live_hold() {
        let h = holds();
        let (k, f) = names();
        let t = h.turn(&k, &f, &DUMMY).await;
        assert_eq!(h.acquire_need(&t, 300), 300, "nothing held: the own lease");
        let now = Instant::now();
        let w = h.granted(&t, &DUMMY, Mode::Watchdog, now, 30_000, 1);
        assert_eq!(
            h.acquire_need(&t, 300),
            30_000,
            "a short re-entry keeps the watchdog TTL"
        );
        let until = now + Duration::from_secs(100);
        let leased = Mode::Leased {
            lease_ms: 100_000,
            until,
        };
        h.granted(&t, &DUMMY, leased, now, 100_000, 2);
        assert!(h.acquire_need(&t, 300) > 99_000);
        // releasing the watchdog hold re-applies what the leased hold still needs
        match h.begin_release(&t, &w, Mode::Watchdog) {
            ReleasePlan::Send { last: false, need_ms } => assert!((99_000..=100_000).contains(&need_ms)),
            other => panic!("{other:?}"),
        }
        assert_eq!(h.renewing(), 0, "no watchdog hold left: renewal stops");
        match h.begin_release(&t, &w, leased) {
            ReleasePlan::Send { last: true, .. } => {}
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn turns_serialise_one_field_only() {
        let h = holds();
        let (k, f) = names();
        let t = h.turn(&k, &f, &DUMMY).await;
        let other: Arc<str> = "c:2".into();
        let _t2 = tokio::time::timeout(Duration::from_millis(100), h.turn(&k, &other, &DUMMY))
            .await
            .expect("another field's turn is free");
        let h2 = h.clone();
        let (k2, f2) = (k.clone(), f.clone());
        let waiter = tokio::spawn(async move {
            let _t = h2.turn(&k2, &f2, &DUMMY).await;
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished(), "the same field waits for the turn");
        drop(t);
        tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .expect("released turn wakes the waiter")
            .unwrap();
    }

    #[tokio::test]
    async fn close_ends_every_live_epoch() {
        let h = holds();
        let (k, f) = names();
        let t = h.turn(&k, &f, &DUMMY).await;
        let l = h.granted(&t, &DUMMY, Mode::Watchdog, Instant::now(), 30_000, 1);
        drop(t);
        let rest = h.close();
        assert_eq!(rest.len(), 1);
        assert!(h.is_closed());
        assert_eq!(l.state(), LeaseState::Lost(LostReason::Shutdown));
        assert!(h.renewal_items().is_empty());
    }
}
