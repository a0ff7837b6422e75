//! A force unlock sent by this client, as the hold table sees it. Its reply and the loss watch's
//! news of the deleted key travel on different connections, so either may come first. While the
//! force is in flight, a hold on its key found gone waits for the force's outcome: deleted by it,
//! the hold reports [`LostReason::ForceUnlocked`]; not (nothing deleted, an error, the future
//! dropped), the hold reports [`LostReason::OwnerGone`], as it would have at once.

use std::sync::Arc;

use super::{Holds, Table};
use crate::hold_record::HoldRecord;
use crate::lost::{LeaseState, LostReason};

/// The holds found gone on a key while this client's forces on it are in flight.
#[derive(Default)]
pub(super) struct ForceWait {
    /// Forces in flight on the key.
    forces: usize,
    /// Records found gone meanwhile, not yet ended.
    gone: Vec<Arc<HoldRecord>>,
}

/// One force unlock in flight; dropped without [`Forcing::deleted`], it ends the holds found
/// gone meanwhile as [`LostReason::OwnerGone`].
pub(crate) struct Forcing<'a> {
    holds: &'a Holds,
    key: Arc<str>,
}

impl Holds {
    /// This client is about to force-unlock `key`.
    pub(crate) fn forcing(&self, key: &Arc<str>) -> Forcing<'_> {
        let mut t = self.table.lock();
        t.forcing.entry(key.clone()).or_default().forces += 1;
        Forcing {
            holds: self,
            key: key.clone(),
        }
    }
}

impl Table {
    /// Ends `record` as gone from Redis, or keeps it for the outcome of a force in flight on
    /// `key`. True when it ended here (it was held until now).
    pub(super) fn gone(&mut self, key: &Arc<str>, record: &Arc<HoldRecord>) -> bool {
        if let Some(w) = self.forcing.get_mut(key) {
            if record.lock().open() && !w.gone.iter().any(|r| Arc::ptr_eq(r, record)) {
                w.gone.push(record.clone());
            }
            return false;
        }
        let held = {
            let mut s = record.lock();
            let held = s.state_now() == LeaseState::Held;
            s.end(LeaseState::Lost(LostReason::OwnerGone));
            held
        };
        self.tidy(key, record.field());
        held
    }
}

impl Forcing<'_> {
    /// The force deleted the holds of the fields `which` picks: they end as
    /// [`LostReason::ForceUnlocked`].
    pub(crate) fn deleted(self, which: impl Fn(&str) -> bool) {
        let mut t = self.holds.table.lock();
        let mut fields = Vec::new();
        if let Some(owners) = t.locks.get(&*self.key) {
            owners.for_each(|r| {
                if which(r.field()) {
                    r.lock().end(LeaseState::Lost(LostReason::ForceUnlocked));
                    fields.push(r.field().clone());
                }
            });
        }
        for f in fields {
            t.tidy(&self.key, &f);
        }
        // Drop ends the rest of what was found gone meanwhile
    }
}

impl Drop for Forcing<'_> {
    fn drop(&mut self) {
        let mut t = self.holds.table.lock();
        let Some(w) = t.forcing.get_mut(&*self.key) else {
            return;
        };
        w.forces -= 1;
        if w.forces > 0 {
            return;
        }
        let Some(w) = t.forcing.remove(&*self.key) else {
            return;
        };
        for r in w.gone {
            r.lock().end(LeaseState::Lost(LostReason::OwnerGone));
            t.tidy(&self.key, r.field());
        }
    }
}
