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

use foldhash::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::config::Config;
use crate::core::kind::{Kind, RenewKind};
use crate::lease::{after, Lease, LeaseState, LostReason, Slot};

/// How one hold keeps its key alive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Renewed by the watchdog while the hold lives.
    Watchdog,
    /// An explicit lease; `until` is a lower bound of when Redis expires it (request sent + lease).
    Leased { lease_ms: u64, until: Instant },
}

/// The records of one lock's owners. Almost always one, so that case is one pointer.
///
/// Every record ([`Lease`]) is one allocation holding the field, its epoch (what guards see) and
/// the table's bookkeeping (turn, hold counts), so a held lock costs the client one record, its
/// key and field strings and a share of this map's buckets.
#[allow(
    clippy::box_collection,
    reason = "the rare many-owner map is boxed so every lock's entry stays one pointer wide"
)]
enum Owners {
    One(Arc<Lease>),
    Many(Box<HashMap<Arc<str>, Arc<Lease>>>),
}

impl Owners {
    fn get(&self, field: &str) -> Option<&Arc<Lease>> {
        match self {
            Owners::One(r) => (&**r.field() == field).then_some(r),
            Owners::Many(m) => m.get(field),
        }
    }

    fn remove(&mut self, field: &str) {
        match self {
            Owners::One(r) if &**r.field() == field => *self = Owners::Many(Box::default()),
            Owners::One(..) => {}
            Owners::Many(m) => {
                m.remove(field);
            }
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Owners::Many(m) if m.is_empty())
    }

    fn for_each(&self, mut f: impl FnMut(&Arc<Lease>)) {
        match self {
            Owners::One(r) => f(r),
            Owners::Many(m) => m.values().for_each(f),
        }
    }

    fn len(&self) -> usize {
        match self {
            Owners::One(..) => 1,
            Owners::Many(m) => m.len(),
        }
    }
}

/// Hold counts and turn of one record, as the table reads them.
fn idle(s: &Slot) -> bool {
    !s.open() && !s.busy
}

fn expiry_reason(s: &Slot) -> LostReason {
    if s.watchdog > 0 {
        LostReason::RenewalFailed
    } else {
        LostReason::LeaseExpired
    }
}

#[derive(Default)]
struct Table {
    locks: HashMap<Arc<str>, Owners>,
}

impl Table {
    fn get(&self, key: &str, field: &str) -> Option<&Arc<Lease>> {
        self.locks.get(key)?.get(field)
    }

    /// The field's record, made (without an epoch) when missing.
    fn entry(&mut self, key: &Arc<str>, field: &Arc<str>, kind: &'static dyn Kind) -> &Arc<Lease> {
        let owners = match self.locks.entry(key.clone()) {
            std::collections::hash_map::Entry::Vacant(v) => {
                return match v.insert(Owners::One(Arc::new(Lease::fresh(field.clone(), kind)))) {
                    Owners::One(r) => r,
                    Owners::Many(_) => unreachable!("just inserted One"),
                };
            }
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
        };
        if owners.get(field).is_none() {
            let mut map = match std::mem::replace(owners, Owners::Many(Box::default())) {
                Owners::One(r) => Box::new(HashMap::from_iter([(r.field().clone(), r)])),
                Owners::Many(m) => m,
            };
            map.insert(field.clone(), Arc::new(Lease::fresh(field.clone(), kind)));
            *owners = Owners::Many(map);
        }
        owners.get(field).expect("present: found or just inserted")
    }

    /// Puts `record` in place of the field's current record (a new epoch after an ended one).
    fn replace(&mut self, key: &str, record: Arc<Lease>) {
        match self.locks.get_mut(key) {
            Some(Owners::One(r)) if r.field() == record.field() => *r = record,
            Some(Owners::Many(m)) => {
                m.insert(record.field().clone(), record);
            }
            _ => unreachable!("replace is called for a present record"),
        }
    }

    /// Drops the record when nothing refers to it any more.
    fn tidy(&mut self, key: &str, field: &str) {
        if let Some(owners) = self.locks.get_mut(key) {
            if owners.get(field).is_some_and(|r| idle(&r.lock())) {
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
    /// The field had no epoch when the turn was taken. Only an operation holding the turn
    /// starts one, so it still has none until this turn records a grant (which clears this):
    /// an acquisition plans against nothing held without looking.
    fresh: AtomicBool,
    /// Given back already (by [`Holds::grant_passing`]): dropping it does nothing more.
    passed: bool,
}

impl Turn {
    pub(crate) fn field(&self) -> &Arc<str> {
        &self.field
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.passed {
            return;
        }
        let mut t = self.holds.table.lock();
        // `Table::tidy` after freeing the turn, with one lookup of the key
        let Some(owners) = t.locks.get_mut(&*self.key) else {
            return;
        };
        let unused = owners.get(&self.field).is_some_and(|r| {
            let mut s = r.lock();
            s.busy = false;
            s.wake();
            idle(&s)
        });
        if unused {
            owners.remove(&self.field);
        }
        if owners.is_empty() {
            t.locks.remove(&*self.key);
        }
    }
}

/// One granted acquire request, as the hold table records it.
pub(crate) struct Grant {
    pub kind: &'static dyn Kind,
    pub mode: Mode,
    /// When the request was sent (the hold is trusted from then, not from the reply).
    pub sent_at: Instant,
    /// The TTL the request gave the key.
    pub need_ms: u64,
    /// The field's hold count Redis reported after the grant.
    pub count: i64,
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
            let waiters = match self.take_turn(key, field, kind) {
                Ok(turn) => return turn,
                Err(waiters) => waiters,
            };
            let notified = waiters.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            // the record may have been replaced (a new epoch) or the turn given back meanwhile;
            // a replaced record's waiters are woken, so waiting on this one is enough
            let still_busy = {
                let t = self.table.lock();
                t.get(key, field).is_some_and(|r| {
                    let mut s = r.lock();
                    s.busy && Arc::ptr_eq(&s.waiters(), &waiters)
                })
            };
            if still_busy {
                notified.await;
            }
        }
    }

    /// The turn of `field` on `key` if it is free now (the common case: nothing is sent for
    /// the field at the moment), without waiting.
    pub(crate) fn try_turn(
        self: &Arc<Self>,
        key: &Arc<str>,
        field: &Arc<str>,
        kind: &'static dyn Kind,
    ) -> Option<Turn> {
        self.take_turn(key, field, kind).ok()
    }

    /// Takes the turn if free; else what wakes its waiters.
    fn take_turn(
        self: &Arc<Self>,
        key: &Arc<str>,
        field: &Arc<str>,
        kind: &'static dyn Kind,
    ) -> Result<Turn, Arc<tokio::sync::Notify>> {
        let mut t = self.table.lock();
        let mut s = t.entry(key, field, kind).lock();
        if s.busy {
            return Err(s.waiters());
        }
        s.busy = true;
        Ok(Turn {
            holds: self.clone(),
            key: key.clone(),
            field: field.clone(),
            fresh: AtomicBool::new(!s.started),
            passed: false,
        })
    }

    fn ms_until(until: Instant, now: Instant) -> u64 {
        let d = until.saturating_duration_since(now);
        (d.as_millis() as u64).max(1)
    }

    /// The TTL the live holds of a record need now, if it has any.
    fn need_of(&self, s: &Slot) -> Option<u64> {
        if s.holds() == 0 {
            return None;
        }
        let mut need = 0;
        if s.watchdog > 0 {
            need = self.watchdog_timeout.as_millis() as u64;
        }
        // the clock only when a leased hold needs it (watchdog holds are the common case)
        let mut now = None;
        for u in s.leased() {
            let now = *now.get_or_insert_with(Instant::now);
            need = need.max(Self::ms_until(*u, now));
        }
        Some(need)
    }

    /// The TTL an acquisition of `turn`'s field with `own_ms` should send: its own lease, or
    /// longer when other live holds of the field need longer.
    pub(crate) fn acquire_need(&self, turn: &Turn, own_ms: u64) -> u64 {
        if turn.fresh.load(Ordering::Relaxed) {
            return own_ms; // no epoch, so no other live hold (see `Turn::fresh`)
        }
        let t = self.table.lock();
        let Some(r) = t.get(&turn.key, &turn.field) else {
            return own_ms;
        };
        let mut s = r.lock();
        if !s.live() {
            return own_ms;
        }
        self.need_of(&s).map_or(own_ms, |n| n.max(own_ms))
    }

    /// Records a grant of one hold whose request was sent at `sent_at` with TTL `need_ms`; `count`
    /// is the field's hold count Redis reported after it. Returns the hold's epoch. Gives the
    /// turn back in the same visit to the table (what dropping it right after would do: the
    /// record is live, so nothing is tidied away).
    pub(crate) fn grant_passing(&self, mut turn: Turn, g: Grant) -> Arc<Lease> {
        let mut t = self.table.lock();
        let record = self.grant_in(&mut t, &turn, g);
        {
            let mut s = record.lock();
            s.busy = false;
            s.wake();
        }
        drop(t);
        turn.passed = true;
        record
    }

    /// The grant itself, under the table's lock (tests record several grants under one turn).
    fn grant_in(&self, t: &mut Table, turn: &Turn, g: Grant) -> Arc<Lease> {
        let Grant {
            kind,
            mode,
            sent_at,
            need_ms,
            count,
        } = g;
        turn.fresh.store(false, Ordering::Relaxed);
        let mut record = t.entry(&turn.key, &turn.field, kind).clone();
        let mut s = record.lock();
        let joined = if s.live() {
            if count == s.holds() as i64 + 1 {
                true
            } else {
                // Redis disagrees with what we know (it lost the field and we have not noticed
                // yet, or it has counts we never saw): the epoch's holds cannot be trusted.
                tracing::warn!(key = %turn.key, field = %turn.field, redis_count = count, local_holds = s.holds(),
                    "the lock's hold count in Redis contradicts this client's holds: treating them as lost");
                s.end(LeaseState::Lost(LostReason::OwnerGone));
                false
            }
        } else {
            if count != 1 {
                tracing::debug!(key = %turn.key, field = %turn.field, redis_count = count,
                    "granted over counts left by holds this client already lost; the last release clears them");
            }
            false
        };
        let until = after(sent_at, self.config.trusted_for(Duration::from_millis(need_ms)));
        if !joined {
            s.end(LeaseState::Held); // a lapsed epoch: drop its holds
            if s.started {
                // the field's last epoch ended: its guards keep that record (stale for ever);
                // the new epoch gets a new one, which inherits the turn
                let fresh = Arc::new(Lease::fresh(turn.field.clone(), kind));
                {
                    let mut n = fresh.lock();
                    n.busy = s.busy;
                }
                s.wake();
                drop(s);
                t.replace(&turn.key, fresh.clone());
                record = fresh;
                s = record.lock();
            }
        }
        match mode {
            Mode::Watchdog => s.watchdog += 1,
            Mode::Leased { until, .. } => s.add(until),
        }
        let reason = expiry_reason(&s);
        if joined {
            s.extend(until, reason);
        } else {
            s.start(until, reason);
        }
        drop(s);
        record
    }

    /// Removes one hold observed through `lease` (an epoch) and says what to send.
    pub(crate) fn begin_release(&self, turn: &Turn, lease: &Arc<Lease>, mode: Mode) -> ReleasePlan {
        let t = self.table.lock();
        let Some(r) = t.get(&turn.key, &turn.field) else {
            return ReleasePlan::Stale;
        };
        if !Arc::ptr_eq(r, lease) {
            return ReleasePlan::Stale;
        }
        let mut s = r.lock();
        if !s.live() {
            s.end(LeaseState::Held);
            return ReleasePlan::Stale;
        }
        match mode {
            Mode::Watchdog if s.watchdog > 0 => s.watchdog -= 1,
            Mode::Leased { until, .. } => {
                if !s.remove_leased(until) {
                    return ReleasePlan::Stale;
                }
            }
            Mode::Watchdog => return ReleasePlan::Stale,
        }
        self.plan_after_removal(&mut s, mode)
    }

    /// A handle-level unlock (Redisson's `unlock()` without a guard): removes one of the field's
    /// holds (a forgotten guard's, usually).
    pub(crate) fn begin_release_any(&self, turn: &Turn) -> (ReleasePlan, Option<Arc<Lease>>) {
        let t = self.table.lock();
        let Some(r) = t.get(&turn.key, &turn.field) else {
            return (ReleasePlan::Unknown, None);
        };
        let mut s = r.lock();
        if !s.live() {
            s.end(LeaseState::Held);
            return (ReleasePlan::Unknown, None);
        }
        let mode = if s.watchdog > 0 {
            s.watchdog -= 1;
            Mode::Watchdog
        } else {
            // the leased hold that would expire first
            let Some(until) = s.remove_first_leased() else {
                return (ReleasePlan::Unknown, None);
            };
            Mode::Leased { lease_ms: 0, until }
        };
        let plan = self.plan_after_removal(&mut s, mode);
        (plan, Some(r.clone()))
    }

    fn plan_after_removal(&self, s: &mut Slot, removed: Mode) -> ReleasePlan {
        match self.need_of(s) {
            None => {
                // the field's last hold: renewal stops now, before anything is sent
                s.end(LeaseState::Released);
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
        let t = self.table.lock();
        let Some(r) = t.get(&turn.key, &turn.field) else {
            return;
        };
        if !Arc::ptr_eq(r, lease) {
            return;
        }
        let mut s = r.lock();
        if !s.open() {
            return;
        }
        match outcome {
            Released::StillHeld => {
                // the key now lives `need_ms` from when the script ran (not earlier than sent_at),
                // or longer (a read unlock keeps the longest hold's TTL): trust the shorter of
                // that and what we trusted before
                let until = after(sent_at, self.config.trusted_for(Duration::from_millis(*need_ms)));
                let reason = expiry_reason(&s);
                s.lower_to(until, reason);
            }
            Released::Gone | Released::NotHeld => {
                tracing::warn!(key = %turn.key, field = %turn.field, ?outcome,
                    "a partial release found the owner's holds gone in Redis: the remaining holds are lost");
                s.end(LeaseState::Lost(LostReason::OwnerGone));
            }
        }
    }

    /// Ends every epoch on `key` (this client force-unlocked it).
    pub(crate) fn lose_key(&self, key: &str, reason: LostReason) {
        let mut t = self.table.lock();
        let mut fields = Vec::new();
        if let Some(owners) = t.locks.get(key) {
            owners.for_each(|r| {
                r.lock().end(LeaseState::Lost(reason));
                fields.push(r.field().clone());
            });
        }
        for f in fields {
            t.tidy(key, &f);
        }
    }

    /// Watchdog: the epochs to renew now. Epochs that lapsed are ended and reported.
    pub(crate) fn renewal_items(&self) -> Vec<RenewalItem> {
        let mut items = Vec::new();
        let mut t = self.table.lock();
        let mut lapsed: Vec<(Arc<str>, Arc<str>)> = Vec::new();
        for (key, owners) in t.locks.iter() {
            owners.for_each(|r| {
                let mut s = r.lock();
                if !s.open() {
                    // ended without the table being told (a guard read its lapsed deadline):
                    // nothing refers to it through the table any more
                    if !s.busy {
                        lapsed.push((key.clone(), r.field().clone()));
                    }
                    return;
                }
                if s.live() {
                    if s.watchdog > 0 {
                        items.push(RenewalItem {
                            key: key.clone(),
                            field: r.field().clone(),
                            lease: r.clone(),
                            renew: s.kind.renew(),
                        });
                    }
                } else {
                    let state = s.state_now();
                    tracing::warn!(key = %key, field = %r.field(), ?state,
                        "lock lost: no grant or renewal succeeded before the hold's deadline");
                    s.end(LeaseState::Held);
                    lapsed.push((key.clone(), r.field().clone()));
                }
            });
        }
        for (k, f) in lapsed {
            t.tidy(&k, &f);
        }
        items
    }

    /// Drops the field's record if its epoch has ended and no operation is in flight: a guard
    /// of an ended hold was dropped (its epoch may have ended lazily, when someone read its
    /// lapsed deadline, with nobody holding the table).
    pub(crate) fn forget_ended(&self, key: &str, field: &str) {
        self.table.lock().tidy(key, field);
    }

    /// Watchdog: `item` was renewed by a request sent at `sent_at`.
    pub(crate) fn renewed(&self, item: &RenewalItem, sent_at: Instant) {
        let t = self.table.lock();
        let Some(r) = t.get(&item.key, &item.field) else {
            return;
        };
        if !Arc::ptr_eq(r, &item.lease) {
            return;
        }
        let mut s = r.lock();
        // only while the epoch still has watchdog holds: a release in between may have set a
        // shorter TTL that this renewal's reply must not paper over
        if s.watchdog > 0 && s.open() {
            let until = after(sent_at, self.config.trusted_for(self.watchdog_timeout));
            s.extend(until, LostReason::RenewalFailed);
        }
    }

    /// Watchdog: renewal found the owner's field gone (or the key of another type).
    pub(crate) fn owner_gone(&self, item: &RenewalItem) {
        let mut t = self.table.lock();
        item.lease.lock().end(LeaseState::Lost(LostReason::OwnerGone));
        t.tidy(&item.key, &item.field);
    }

    /// Number of fields being renewed by the watchdog.
    pub(crate) fn renewing(&self) -> usize {
        let t = self.table.lock();
        let mut n = 0;
        for owners in t.locks.values() {
            owners.for_each(|r| {
                let s = r.lock();
                if s.watchdog > 0 && s.open() {
                    n += 1;
                }
            });
        }
        n
    }

    /// Number of (lock, field) records, live or in use (for tests and diagnostics).
    pub(crate) fn entries(&self) -> usize {
        let t = self.table.lock();
        t.locks.values().map(Owners::len).sum()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Closes the table for shutdown: no acquisition is recorded any more, every live epoch ends
    /// with `LostReason::Shutdown`, and the fields to release are returned.
    pub(crate) fn close(&self) -> Vec<Remaining> {
        self.closed.store(true, Ordering::SeqCst);
        let mut out = Vec::new();
        let t = self.table.lock();
        for (key, owners) in t.locks.iter() {
            owners.for_each(|r| {
                let mut s = r.lock();
                if s.live() {
                    out.push(Remaining {
                        key: key.clone(),
                        field: r.field().clone(),
                        kind: s.kind,
                    });
                    s.end(LeaseState::Lost(LostReason::Shutdown));
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
        fn write_channel(&self, out: &mut String, key: &str, _: &str) {
            out.push_str(key)
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

    /// One grant under `t` (the tests record several under one turn).
    fn grant(h: &Holds, t: &Turn, mode: Mode, sent_at: Instant, need_ms: u64, count: i64) -> Arc<Lease> {
        let g = Grant {
            kind: &DUMMY,
            mode,
            sent_at,
            need_ms,
            count,
        };
        h.grant_in(&mut h.table.lock(), t, g)
    }

    fn names() -> (Arc<str>, Arc<str>) {
        ("k".into(), "c:1".into())
    }

    #[tokio::test]
    async fn a_grant_gives_its_turn_back_to_the_next_operation_on_the_field() {
        let h = holds();
        let (k, f) = names();
        let t = h.turn(&k, &f, &DUMMY).await;
        assert_eq!(h.acquire_need(&t, 300), 300, "a fresh field: the own lease");
        // a second operation on the field (a re-entry of the same owner) waits for the turn
        let waiter = {
            let (h, k, f) = (h.clone(), k.clone(), f.clone());
            tokio::spawn(async move {
                let t = h.turn(&k, &f, &DUMMY).await;
                h.acquire_need(&t, 300)
            })
        };
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "the turn is still taken");
        let g = Grant {
            kind: &DUMMY,
            mode: Mode::Watchdog,
            sent_at: Instant::now(),
            need_ms: 30_000,
            count: 1,
        };
        let lease = h.grant_passing(t, g);
        let need = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the grant woke the waiting operation")
            .expect("task");
        assert_eq!(need, 30_000, "the next turn plans against the live watchdog hold");
        assert_eq!(lease.state(), LeaseState::Held);
        assert!(h.table.lock().get(&k, &f).is_some_and(|r| Arc::ptr_eq(r, &lease)));
    }

    #[tokio::test]
    async fn epochs_are_shared_and_final() {
        let h = holds();
        let (k, f) = names();
        let t = h.turn(&k, &f, &DUMMY).await;
        let now = Instant::now();
        let a = grant(&h, &t, Mode::Watchdog, now, 30_000, 1);
        let b = grant(&h, &t, Mode::Watchdog, now, 30_000, 2);
        assert!(Arc::ptr_eq(&a, &b), "a re-entry joins the epoch");
        // Redis says 1 where we expect 3: it lost the field; the epoch ends for both guards
        let c = grant(&h, &t, Mode::Watchdog, now, 30_000, 1);
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
        let old = grant(&h, &t, Mode::Watchdog, long_ago, 30_000, 1);
        // nobody has read its state since its deadline passed; a new grant must not revive it
        let new = grant(&h, &t, Mode::Watchdog, Instant::now(), 30_000, 2);
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
        let w = grant(&h, &t, Mode::Watchdog, now, 30_000, 1);
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
        grant(&h, &t, leased, now, 100_000, 2);
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
    async fn a_turn_waiter_survives_a_new_epoch_record() {
        let h = holds();
        let (k, f) = names();
        let t = h.turn(&k, &f, &DUMMY).await;
        let old = grant(&h, &t, Mode::Watchdog, Instant::now(), 30_000, 1);
        let h2 = h.clone();
        let (k2, f2) = (k.clone(), f.clone());
        let waiter = tokio::spawn(async move {
            let _t = h2.turn(&k2, &f2, &DUMMY).await;
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished());
        // the epoch ends (Redis lost the field) and a grant under the same turn starts a new
        // record: the waiter queued on the old one must still get the turn
        old.set(LeaseState::Lost(LostReason::OwnerGone));
        let new = grant(&h, &t, Mode::Watchdog, Instant::now(), 30_000, 1);
        assert!(
            !Arc::ptr_eq(&old, &new),
            "an ended epoch's record is never reused"
        );
        assert_eq!(old.state(), LeaseState::Lost(LostReason::OwnerGone));
        assert_eq!(h.begin_release(&t, &old, Mode::Watchdog), ReleasePlan::Stale);
        drop(t);
        tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .expect("the turn moved to the new record with its waiters")
            .unwrap();
        assert_eq!(h.entries(), 1, "the live epoch keeps its record");
        assert_eq!(new.state(), LeaseState::Held);
    }

    #[test]
    fn a_held_field_costs_one_small_record() {
        // the record (epoch, counts, turn) is one allocation; keep it small: it is most of the
        // client's memory per held lock (see the watchdog section of benches/REPORT.md)
        let record = std::mem::size_of::<Lease>() + 2 * std::mem::size_of::<usize>();
        assert!(record <= 96, "record is {record} bytes");
        assert!(std::mem::size_of::<Owners>() <= 16);
    }

    #[tokio::test]
    async fn close_ends_every_live_epoch() {
        let h = holds();
        let (k, f) = names();
        let t = h.turn(&k, &f, &DUMMY).await;
        let l = grant(&h, &t, Mode::Watchdog, Instant::now(), 30_000, 1);
        drop(t);
        let rest = h.close();
        assert_eq!(rest.len(), 1);
        assert!(h.is_closed());
        assert_eq!(l.state(), LeaseState::Lost(LostReason::Shutdown));
        assert!(h.renewal_items().is_empty());
    }
}
