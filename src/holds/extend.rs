//! Extending a leased hold: its lease ends later, counted from a new request. Planned and
//! recorded under the field's turn, like a grant or a release; the local deadline moves only once
//! Redis has confirmed the new TTL, so a lost or cancelled extension leaves the hold trusted for
//! no longer than before.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{expiry_reason, Holds, Turn};
use crate::deadline::after;
use crate::hold_record::HoldRecord;

impl Holds {
    /// Plans the extension of the leased hold expiring at `until`, of the epoch `lease`, to
    /// `new_until`: the TTL to send (what the field's longest live hold needs with the new
    /// lease), or `None` when that hold has ended (nothing to send).
    pub(crate) fn begin_extend(
        &self,
        turn: &Turn,
        record: &Arc<HoldRecord>,
        until: Instant,
        new_until: Instant,
    ) -> Option<u64> {
        let t = self.table.lock();
        let r = t.get(&turn.key, &turn.field)?;
        if !Arc::ptr_eq(r, record) {
            return None;
        }
        let mut s = r.lock();
        if !s.live() || !s.leased().contains(&until) {
            return None;
        }
        let own = Self::ms_until(new_until, Instant::now());
        Some(self.need_of(&s).map_or(own, |n| n.max(own)))
    }

    /// Records that Redis confirmed an extension sent at `sent_at` with TTL `need_ms`: the hold
    /// expiring at `until` now expires at `new_until`, and the epoch is trusted for the TTL sent.
    /// False when the hold ended meanwhile (the epoch was lost or released).
    pub(crate) fn extended(
        &self,
        turn: &Turn,
        record: &Arc<HoldRecord>,
        (until, new_until): (Instant, Instant),
        sent_at: Instant,
        need_ms: u64,
    ) -> bool {
        let t = self.table.lock();
        let Some(r) = t.get(&turn.key, &turn.field) else {
            return false;
        };
        if !Arc::ptr_eq(r, record) {
            return false;
        }
        let mut s = r.lock();
        if !s.open() || !s.remove_leased(until) {
            return false;
        }
        s.add(new_until);
        let reason = expiry_reason(&s);
        let trusted = after(sent_at, self.config.trusted_for(Duration::from_millis(need_ms)));
        // a confirmation read after the old deadline still counts when it was sent before it
        // and nobody read the state since (see `Slot::renewed`)
        s.renewed(sent_at, trusted, reason);
        s.live()
    }
}
