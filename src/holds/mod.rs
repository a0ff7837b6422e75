//! Every hold this client has, per (lock key, owner field): the one place that knows which holds
//! are live, keeps their key's TTL long enough for all of them, serialises the operations on one
//! field, and tells guards when their hold ended.
//!
//! # Epochs
//!
//! All holds of one field share one fate in Redis: one hash field with one count, under one key
//! with one TTL. So they share one [`HoldRecord`] (an *epoch*): granted when the field's first hold is
//! taken, extended by grants and renewals, and ended for all of them at once when the field turns
//! out to be gone (renewal finds no field, a release answers "not held", Redis' count contradicts
//! ours) or when no grant or renewal succeeded in time. A guard holds its epoch's `HoldRecord`; a guard
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

use crate::primitives::{Mutex, Notified, Notify};

use crate::config::Config;
use crate::deadline::after;
use crate::hold_record::{HoldRecord, Slot};
use crate::kind::{Kind, Renewal};
use crate::lost::{LeaseState, LostReason};

mod extend;
mod force;
mod turn;
mod watch;
pub(crate) use turn::Turn;

/// How one hold keeps its key alive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// Renewed by the watchdog while the hold lives.
    Watchdog,
    /// An explicit lease; `until` is a lower bound of when Redis expires it (request sent + lease).
    Leased { lease_ms: u64, until: Instant },
}

/// The records of one lock's owners. Almost always one, so that case is one pointer.
///
/// Every record ([`HoldRecord`]) is one allocation holding the field, its epoch (what guards see) and
/// the table's bookkeeping (turn, hold counts), so a held lock costs the client one record, its
/// key and field strings and a share of this map's buckets.
#[allow(
    clippy::box_collection,
    reason = "the rare many-owner map is boxed so every lock's entry stays one pointer wide"
)]
enum Owners {
    One(Arc<HoldRecord>),
    Many(Box<HashMap<Arc<str>, Arc<HoldRecord>>>),
}

impl Owners {
    fn get(&self, field: &str) -> Option<&Arc<HoldRecord>> {
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

    fn for_each(&self, mut f: impl FnMut(&Arc<HoldRecord>)) {
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

/// What a hold of `expiry` reports when its trusted time runs out.
fn lapse_reason(expiry: Expiry) -> LostReason {
    match expiry {
        Expiry::Watchdog => LostReason::RenewalFailed,
        Expiry::Leased { .. } => LostReason::LeaseExpired,
    }
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
    /// The client is shutting down: no acquisition takes a turn, no grant starts a hold.
    closed: bool,
    /// Turns taken (see [`turn`]).
    turns: usize,
    /// Keys this client is force-unlocking (see [`force`]).
    forcing: HashMap<Arc<str>, force::ForceWait>,
}

impl Table {
    fn get(&self, key: &str, field: &str) -> Option<&Arc<HoldRecord>> {
        self.locks.get(key)?.get(field)
    }

    /// The field's record, made (without an epoch) when missing.
    fn entry(&mut self, key: &Arc<str>, field: &Arc<str>, kind: &'static dyn Kind) -> &Arc<HoldRecord> {
        let owners = match self.locks.entry(key.clone()) {
            std::collections::hash_map::Entry::Vacant(v) => {
                return match v.insert(Owners::One(Arc::new(HoldRecord::fresh(field.clone(), kind)))) {
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
            map.insert(field.clone(), Arc::new(HoldRecord::fresh(field.clone(), kind)));
            *owners = Owners::Many(map);
        }
        owners.get(field).expect("present: found or just inserted")
    }

    /// Puts `record` in place of the field's current record (a new epoch after an ended one).
    fn replace(&mut self, key: &str, record: Arc<HoldRecord>) {
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
    /// `Table::closed`, readable without the lock.
    closed: AtomicBool,
    /// Woken when the table closes (waiting acquisitions stop).
    closing: Notify,
    /// Woken when the last turn of a closed table is given back.
    idle: Notify,
    /// Set when the table closes; dropped with it (see [`Closed`]).
    shut: tokio::sync::watch::Sender<bool>,
}

/// Resolves once the table is closed or dropped, without keeping it alive: how the background
/// tasks (the watchdog, the check for gone keys) stop at once at shutdown instead of at their
/// next round, so the client's connections close with it.
pub(crate) struct Closed(tokio::sync::watch::Receiver<bool>);

impl Closed {
    pub(crate) async fn wait(&mut self) {
        // an error: the table is gone
        let _ = self.0.wait_for(|closed| *closed).await;
    }
}

/// One granted acquire request, as the hold table records it.
pub(crate) struct NewHold {
    pub kind: &'static dyn Kind,
    pub expiry: Expiry,
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

/// A live epoch of one field: what the watchdog renews (watchdog-mode ones) and the loss watch
/// re-reads.
#[derive(Clone)]
pub(crate) struct RenewalItem {
    pub key: Arc<str>,
    pub field: Arc<str>,
    pub record: Arc<HoldRecord>,
    /// How the hold is renewed.
    pub renewal: &'static dyn Renewal,
}

/// How a grant was recorded.
pub(crate) enum Recorded {
    /// A live hold: its epoch.
    Live(Arc<HoldRecord>),
    /// A hold nobody will use: it is to be released at once, under the attempt's turn.
    Late(LateGrant),
}

/// A grant that must be released at once, whatever its deadline says: its caller gave up before
/// it was found, the client is shutting down, or the reply came after the time the hold could
/// be trusted (Redis may keep it for up to its TTL all the same).
pub(crate) struct LateGrant {
    /// The attempt's turn, kept until the release is recorded.
    pub turn: Turn,
    /// The field's live epoch, when the grant joined one (its other holds stay).
    pub record: Option<Arc<HoldRecord>>,
    pub plan: ReleasePlan,
    /// Why the hold cannot be used.
    pub why: LateWhy,
}

/// Why a grant is [`Late`](Recorded::Late).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LateWhy {
    /// Its caller stopped waiting before the outcome was known.
    Abandoned,
    /// The client is shutting down.
    Closed,
    /// The reply came after the hold's trusted time; the reason the hold counts as lost.
    Expired(LostReason),
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
            closing: Notify::new(),
            idle: Notify::new(),
            shut: tokio::sync::watch::channel(false).0,
        }
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
    /// is the field's hold count Redis reported after it. `abandoned`: the attempt's caller gave
    /// up before its outcome was known. A live hold gives the turn back in the same visit to the
    /// table (what dropping it right after would do: the record is live, so nothing is tidied
    /// away); a late one keeps it for its release.
    pub(crate) fn grant_passing(&self, mut turn: Turn, g: NewHold, abandoned: bool) -> Recorded {
        let mut t = self.table.lock();
        let why = if abandoned {
            Some(LateWhy::Abandoned)
        } else if t.closed {
            Some(LateWhy::Closed)
        } else {
            None
        };
        let record = match self.grant_in(&mut t, &turn, g, why) {
            Ok(record) => record,
            Err((record, plan, why)) => {
                drop(t);
                return Recorded::Late(LateGrant {
                    turn,
                    record,
                    plan,
                    why,
                });
            }
        };
        {
            let mut s = record.lock();
            s.busy = false;
            s.wake();
        }
        self.turn_returned(&mut t);
        drop(t);
        turn.passed = true;
        Recorded::Live(record)
    }

    /// The grant itself, under the table's lock (tests record several grants under one turn).
    /// `late`: nobody will use the hold. A grant that would start an epoch whose trusted time
    /// is already over is late too. A late grant changes no epoch but the one it contradicts:
    /// the error says how to release it.
    #[allow(clippy::type_complexity, reason = "one private call site")]
    fn grant_in(
        &self,
        t: &mut Table,
        turn: &Turn,
        g: NewHold,
        late: Option<LateWhy>,
    ) -> Result<Arc<HoldRecord>, (Option<Arc<HoldRecord>>, ReleasePlan, LateWhy)> {
        let NewHold {
            kind,
            expiry,
            sent_at,
            need_ms,
            count,
        } = g;
        let until = after(sent_at, self.config.trusted_for(Duration::from_millis(need_ms)));
        let mut record = t.entry(&turn.key, &turn.field, kind).clone();
        let mut s = record.lock();
        let live = s.live();
        let joins = live && count == s.holds() as i64 + 1;
        let late = late.or_else(|| {
            // a grant that only joins a live epoch is covered by it; one that would start an
            // epoch must be trustable now
            (!joins && until <= Instant::now()).then(|| LateWhy::Expired(lapse_reason(expiry)))
        });
        if let Some(why) = late {
            // Release what this grant added, and only that: one hold when the field's live
            // epoch keeps the others, else everything the field has in Redis (nothing of it can
            // be trusted: a lapsed epoch, or counts Redis has and we never saw).
            if joins {
                let need_ms = self.need_of(&s).unwrap_or(need_ms);
                drop(s);
                return Err((Some(record), ReleasePlan::Send { last: false, need_ms }, why));
            }
            if live {
                tracing::warn!(key = %turn.key, field = %turn.field, redis_count = count, local_holds = s.holds(),
                    "the lock's hold count in Redis contradicts this client's holds: treating them as lost");
                s.end(LeaseState::Lost(LostReason::OwnerGone));
            } else if s.open() {
                s.end(LeaseState::Held); // a lapsed epoch: drop its holds
            }
            return Err((None, ReleasePlan::Send { last: true, need_ms }, why));
        }
        turn.fresh.store(false, Ordering::Relaxed);
        let joined = if live {
            if joins {
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
        if !joined {
            s.end(LeaseState::Held); // a lapsed epoch: drop its holds
            if s.started {
                // the field's last epoch ended: its guards keep that record (stale for ever);
                // the new epoch gets a new one, which inherits the turn
                let fresh = Arc::new(HoldRecord::fresh(turn.field.clone(), kind));
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
        match expiry {
            Expiry::Watchdog => s.watchdog += 1,
            Expiry::Leased { until, .. } => s.add(until),
        }
        let reason = expiry_reason(&s);
        if joined {
            s.extend(until, reason);
        } else {
            s.start(until, reason);
        }
        drop(s);
        Ok(record)
    }

    /// Removes one hold observed through `lease` (an epoch) and says what to send.
    pub(crate) fn begin_release(&self, turn: &Turn, record: &Arc<HoldRecord>, expiry: Expiry) -> ReleasePlan {
        let t = self.table.lock();
        let Some(r) = t.get(&turn.key, &turn.field) else {
            return ReleasePlan::Stale;
        };
        if !Arc::ptr_eq(r, record) {
            return ReleasePlan::Stale;
        }
        let mut s = r.lock();
        if !s.live() {
            s.end(LeaseState::Held);
            return ReleasePlan::Stale;
        }
        match expiry {
            Expiry::Watchdog if s.watchdog > 0 => s.watchdog -= 1,
            Expiry::Leased { until, .. } => {
                if !s.remove_leased(until) {
                    return ReleasePlan::Stale;
                }
            }
            Expiry::Watchdog => return ReleasePlan::Stale,
        }
        self.plan_after_removal(&mut s, expiry)
    }

    /// A handle-level unlock (Redisson's `unlock()` without a guard): removes one of the field's
    /// holds (a forgotten guard's, usually).
    pub(crate) fn begin_release_any(&self, turn: &Turn) -> (ReleasePlan, Option<Arc<HoldRecord>>) {
        let t = self.table.lock();
        let Some(r) = t.get(&turn.key, &turn.field) else {
            return (ReleasePlan::Unknown, None);
        };
        let mut s = r.lock();
        if !s.live() {
            s.end(LeaseState::Held);
            return (ReleasePlan::Unknown, None);
        }
        let expiry = if s.watchdog > 0 {
            s.watchdog -= 1;
            Expiry::Watchdog
        } else {
            // the leased hold that would expire first
            let Some(until) = s.remove_first_leased() else {
                return (ReleasePlan::Unknown, None);
            };
            Expiry::Leased { lease_ms: 0, until }
        };
        let plan = self.plan_after_removal(&mut s, expiry);
        (plan, Some(r.clone()))
    }

    fn plan_after_removal(&self, s: &mut Slot, removed: Expiry) -> ReleasePlan {
        match self.need_of(s) {
            None => {
                // the field's last hold: renewal stops now, before anything is sent
                s.end(LeaseState::Released);
                let own = match removed {
                    Expiry::Watchdog => self.watchdog_timeout.as_millis() as u64,
                    Expiry::Leased { lease_ms, .. } => lease_ms.max(1),
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
        record: Option<&Arc<HoldRecord>>,
        plan: &ReleasePlan,
        sent_at: Instant,
        outcome: Released,
    ) {
        let ReleasePlan::Send { last: false, need_ms } = plan else {
            return; // the epoch already ended locally (or was never known)
        };
        let Some(record) = record else { return };
        let t = self.table.lock();
        let Some(r) = t.get(&turn.key, &turn.field) else {
            return;
        };
        if !Arc::ptr_eq(r, record) {
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

    /// Drops the field's record if its epoch has ended and no operation is in flight: a guard
    /// of an ended hold was dropped (its epoch may have ended lazily, when someone read its
    /// lapsed deadline, with nobody holding the table).
    pub(crate) fn forget_ended(&self, key: &str, field: &str) {
        self.table.lock().tidy(key, field);
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Closes the table for shutdown: no acquisition takes a turn any more (those waiting for
    /// one, or between attempts, are woken to stop), a grant recorded from now on is
    /// [`Late`](Recorded::Late), every live epoch ends with `LostReason::Shutdown`, and the
    /// fields to release are returned.
    pub(crate) fn close(&self) -> Vec<Remaining> {
        let mut out = Vec::new();
        {
            let mut t = self.table.lock();
            t.closed = true;
            self.closed.store(true, Ordering::SeqCst);
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
                    s.wake(); // acquisitions waiting for the field's turn
                });
            }
        }
        self.closing.notify_waiters();
        self.shut.send_replace(true);
        out
    }

    /// See [`Closed`].
    pub(crate) fn closed(&self) -> Closed {
        Closed(self.shut.subscribe())
    }

    /// Resolves once the table is closed (a waiting acquisition's way to stop). Created before
    /// [`is_closed`](Self::is_closed) is checked, it cannot miss the close.
    pub(crate) fn closing(&self) -> Notified<'_> {
        self.closing.notified()
    }

    pub(crate) fn downgrade(self: &Arc<Self>) -> Weak<Holds> {
        Arc::downgrade(self)
    }
}

#[cfg(all(test, redisson_lock_loom))]
mod loom_models;
#[cfg(test)]
mod tests;
