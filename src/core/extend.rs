//! Extending a leased hold ([`Guard::extend_lease`](crate::Guard::extend_lease)): the kind's
//! renewal script for one field, with the TTL the field's longest live hold needs once this one
//! ends later. The script never shortens a TTL and never re-creates a lock whose field is gone.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::millis;
use crate::core::Lock;
use crate::deadline::after;
use crate::error::{Error, Result};
use crate::hold_record::HoldRecord;
use crate::holds::{Expiry, RenewalItem};
use crate::kind::AcquireKind;
use crate::script;

/// Extends the hold of `field` in the epoch `lease`, held in `mode`, so that its lease ends
/// `new` after this request is sent (or later, if it already did): the hold's new mode.
pub(crate) async fn extend<K: AcquireKind>(
    core: &Lock<K>,
    field: &Arc<str>,
    record: &Arc<HoldRecord>,
    expiry: Expiry,
    new: Duration,
) -> Result<Expiry> {
    let Expiry::Leased { until, .. } = expiry else {
        return Err(Error::InvalidArgument(format!(
            "the hold of `{}` is renewed by the watchdog: it has no lease to extend",
            core.key
        )));
    };
    let lease_ms = millis("lease", new)?;
    let not_held = || Error::NotHeld {
        key: core.key.to_string(),
        field: field.to_string(),
    };
    let client = &core.client;
    let cfg = &client.config;
    // refused once the client shuts down; waits while another request of this owner is in flight
    let turn = client.holds.turn_to_acquire(&core.key, field, core.kind).await?;
    let sent_at = Instant::now();
    let new_until = after(sent_at, Duration::from_millis(lease_ms)).max(until);
    let Some(need_ms) = client.holds.begin_extend(&turn, record, until, new_until) else {
        return Err(not_held());
    };
    // as a renewal: on the loss watch's own connection, if held keys are tracked for it, reading
    // the key again after the write, so that it stays tracked
    let tracker = client.invalidated.tracker();
    let inv =
        script::renewal_of(core.kind).renew(need_ms, &[(&*core.key, vec![&**field])], tracker.is_some());
    let (flags, _): (Vec<i64>, _) = client
        .replica_sync
        .run(
            tracker.unwrap_or(&client.conn),
            cfg.command_timeout,
            &core.key,
            &inv,
        )
        .await?;
    match flags.first() {
        Some(1) => {
            if !client
                .holds
                .extended(&turn, record, (until, new_until), sent_at, need_ms)
            {
                return Err(not_held());
            }
            tracing::debug!(key = %core.key, field = %field, lease_ms, need_ms, "lease extended");
            Ok(Expiry::Leased {
                lease_ms,
                until: new_until,
            })
        }
        Some(_) => {
            tracing::warn!(key = %core.key, field = %field, "lock lost: extending its lease found the owner's field gone");
            client.holds.owner_gone(&RenewalItem {
                key: core.key.clone(),
                field: field.clone(),
                record: record.clone(),
                renewal: script::renewal_of(core.kind),
            });
            Err(not_held())
        }
        None => Err(Error::Protocol(format!(
            "lease extension of `{}` replied {flags:?}",
            core.key
        ))),
    }
}
