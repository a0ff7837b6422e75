//! The table as the watchdog and the loss watch see it: the epochs to renew or read, what their
//! replies mean for a record, and the counts they and the client's stats ask for.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use super::{Holds, Owners, RenewalItem};
use crate::deadline::after;
use crate::lost::{LeaseState, LostReason};

impl Holds {
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
                            record: r.clone(),
                            renewal: crate::script::renewal_of(s.kind),
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

    /// The open epochs on `keys` (on every key: `None`), for the loss watch to re-read. Open,
    /// not live: reading Redis neither ends an epoch whose deadline passed unobserved nor
    /// extends one (whoever reads the state next decides), so a renewal answered late can
    /// still keep it ([`Slot::renewed`](crate::hold_record::Slot::renewed)).
    pub(crate) fn live_items(&self, keys: Option<&HashSet<Arc<str>>>) -> Vec<RenewalItem> {
        let t = self.table.lock();
        let mut items = Vec::new();
        let mut add = |key: &Arc<str>, owners: &Owners| {
            owners.for_each(|r| {
                let s = r.lock();
                if s.open() {
                    items.push(RenewalItem {
                        key: key.clone(),
                        field: r.field().clone(),
                        record: r.clone(),
                        renewal: crate::script::renewal_of(s.kind),
                    });
                }
            });
        };
        match keys {
            None => t.locks.iter().for_each(|(k, o)| add(k, o)),
            Some(keys) => {
                for k in keys {
                    if let Some((key, owners)) = t.locks.get_key_value(&**k) {
                        add(key, owners);
                    }
                }
            }
        }
        items
    }

    /// Watchdog: `item` was renewed by a request sent at `sent_at`.
    pub(crate) fn renewed(&self, item: &RenewalItem, sent_at: Instant) {
        let t = self.table.lock();
        let Some(r) = t.get(&item.key, &item.field) else {
            return;
        };
        if !Arc::ptr_eq(r, &item.record) {
            return;
        }
        let mut s = r.lock();
        // only while the epoch still has watchdog holds: a release in between may have set a
        // shorter TTL that this renewal's reply must not paper over
        if s.watchdog > 0 && s.open() {
            let until = after(sent_at, self.config.trusted_for(self.watchdog_timeout));
            s.renewed(sent_at, until, LostReason::RenewalFailed);
        }
    }

    /// Watchdog: renewal found the owner's field gone (or the key of another type).
    pub(crate) fn owner_gone(&self, item: &RenewalItem) {
        self.table.lock().gone(&item.key, &item.record);
    }

    /// Loss watch: the owner's field is gone from Redis. A hold whose deadline passed before
    /// (its lease ran out, no renewal came in time) ended by that deadline, and keeps that
    /// reason; any other ends as `OwnerGone`, or as this client's force unlock in flight on the
    /// key decides. True when this call ended it as `OwnerGone`.
    pub(crate) fn field_gone(&self, item: &RenewalItem) -> bool {
        self.table.lock().gone(&item.key, &item.record)
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

    /// Number of keys with a live hold (a record whose epoch started and has not ended).
    pub(crate) fn live_keys(&self) -> usize {
        let t = self.table.lock();
        t.locks
            .values()
            .filter(|o| {
                let mut live = false;
                o.for_each(|r| live |= r.lock().open());
                live
            })
            .count()
    }

    /// Number of (lock, field) records, live or in use (for tests and diagnostics).
    pub(crate) fn entries(&self) -> usize {
        let t = self.table.lock();
        t.locks.values().map(Owners::len).sum()
    }
}
