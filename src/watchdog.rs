//! One watchdog per client: renews every watchdog-mode hold in batches (`docs/protocol.md`,
//! "Renewal").
//!
//! What to renew comes from the hold table ([`crate::holds`]): every field with a live epoch and
//! at least one watchdog-mode hold. A hold leaves the table before its release is sent, so no
//! renewal is sent for a hold whose release is. Every `timeout / 3` the task sends the batched
//! renewal script: at most `batch size` keys per call, and one hash slot per call wherever the
//! server enforces slots ([`crate::slots`]; a round refused `CROSSSLOT` is sent again at once,
//! grouped). Each key is renewed on its own inside the script, so one bad key
//! (another type under a lock's name) costs only its own hold. A `0` reply means the owner's field
//! is gone: the epoch ends and its guards learn the lock is lost. Errors are logged and renewal
//! goes on; an epoch that has not been renewed by its deadline (`lease - margin` after the last
//! success) is reported lost. After a failed round the next one leaves a quarter period after the
//! failed one left, or at once when that one ended by a timeout: while Redis stalls a renewal is
//! always queued there, and the first reply after the stall renews.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::conn::Connection;
use crate::holds::{Holds, RenewalItem};

/// Starts the watchdog task on the current runtime. It ends when the hold table is dropped or
/// closed (shutdown).
pub(crate) fn start(
    holds: &Arc<Holds>,
    conn: Connection,
    replica_sync: Arc<crate::replica_sync::ReplicaSyncer>,
    slots: Arc<crate::slots::Slots>,
    invalidated: Arc<crate::pubsub::Invalidated>,
    config: &Config,
) {
    let task = Renewer {
        closed: holds.closed(),
        holds: holds.downgrade(),
        conn,
        replica_sync,
        slots,
        invalidated,
        period: config.renewal_period(),
        batch: config.watchdog_batch_size,
        command_timeout: config.command_timeout,
        timeout_ms: config.watchdog_ms(),
    };
    tokio::spawn(task.run());
}

struct Renewer {
    /// Ends the task at shutdown (not at its next round).
    closed: crate::holds::Closed,
    holds: Weak<Holds>,
    conn: Connection,
    /// `WAIT` after renewals (logged when unconfirmed; the renewal is kept).
    replica_sync: Arc<crate::replica_sync::ReplicaSyncer>,
    /// Whether a call may carry keys of several slots.
    slots: Arc<crate::slots::Slots>,
    /// The loss watch's mode: where held keys are tracked without the echo, renewals go on its
    /// own connection.
    invalidated: Arc<crate::pubsub::Invalidated>,
    period: Duration,
    batch: usize,
    command_timeout: Duration,
    timeout_ms: u64,
}

impl Renewer {
    /// Starts a round every `period` (counted from the previous round's start, so that a
    /// round that takes long — 100,000 holds take most of a second on 2 cores — does not push
    /// the next renewal of a hold towards its deadline, `timeout - margin` after the request
    /// that last renewed it); after a round with failures (Redis slow or unreachable) the next
    /// one comes a quarter period after it started, so a hold gets several chances before its
    /// deadline. A round that timed out took longer than that, so the next leaves at once: a
    /// renewal is then in flight at every instant of a stall, and the stall's end renews the
    /// holds however little time was left before their deadline (a pause after each timeout
    /// would leave a gap in which a stall may end unnoticed until the deadline).
    async fn run(mut self) {
        let retry = (self.period / 4).max(Duration::from_millis(10));
        let mut next = Instant::now() + self.period;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(next.into()) => {}
                _ = self.closed.wait() => return,
            }
            let started = Instant::now();
            next = started + self.period;
            let Some(holds) = self.holds.upgrade() else {
                return;
            };
            if holds.is_closed() {
                return;
            }
            let items = holds.renewal_items();
            if items.is_empty() {
                continue;
            }
            if !self.renew(&holds, items).await {
                next = next.min(started + retry);
            }
        }
    }

    /// One renewal round; false when some call failed (to be retried soon). Calls refused for
    /// carrying keys of several slots are sent again at once, grouped by slot (the refusal
    /// switched the client's rule): a hold is never lost to it.
    async fn renew(&self, holds: &Holds, items: Vec<RenewalItem>) -> bool {
        let together = !self.slots.per_slot();
        let (ok, mut refused) = self.renew_calls(holds, items).await;
        if refused.is_empty() {
            return ok;
        }
        if together && self.slots.per_slot() {
            let (again, still) = self.renew_calls(holds, refused).await;
            if still.is_empty() {
                return ok && again;
            }
            refused = still;
        }
        tracing::warn!(locks = refused.len(), first = %refused[0].key, "lock renewal refused: its keys hash to several slots (a name with braces?); will retry");
        false
    }

    /// Sends one round's calls: whether every call succeeded, and the items of the calls refused
    /// for carrying keys of several slots.
    async fn renew_calls(&self, holds: &Holds, items: Vec<RenewalItem>) -> (bool, Vec<RenewalItem>) {
        // the holds of each renewal, by lock: one (key, this client's fields on it) per lock
        let mut locks: Vec<Vec<RenewalItem>> = Vec::new();
        {
            let mut index: HashMap<(&'static str, Arc<str>), usize> = HashMap::new();
            for it in items {
                let i = *index
                    .entry((it.renewal.name(), it.key.clone()))
                    .or_insert_with(|| {
                        locks.push(Vec::new());
                        locks.len() - 1
                    });
                locks[i].push(it);
            }
        }
        let groups = self.slots.groups(locks, |lock| &lock[0].key);
        let calls = groups
            .iter()
            .flat_map(|g| {
                // one call per renewal within a slot's group, at most `batch` locks each
                let mut by_renewal: Vec<Vec<&Vec<RenewalItem>>> = Vec::new();
                for lock in g {
                    match by_renewal
                        .iter_mut()
                        .find(|r| r[0][0].renewal.name() == lock[0].renewal.name())
                    {
                        Some(r) => r.push(lock),
                        None => by_renewal.push(vec![lock]),
                    }
                }
                by_renewal
                    .into_iter()
                    .flat_map(|r| r.chunks(self.batch).map(<[_]>::to_vec).collect::<Vec<_>>())
            })
            .map(|chunk| async move {
                let pairs: Vec<(&str, Vec<&str>)> = chunk
                    .iter()
                    .map(|lock| (&*lock[0].key, lock.iter().map(|it| &*it.field).collect()))
                    .collect();
                // on the loss watch's own connection, where its writes are not pushed back, the
                // script reads what it extended, so that it stays tracked
                let tracker = self.invalidated.tracker();
                let inv = chunk[0][0]
                    .renewal
                    .renew(self.timeout_ms, &pairs, tracker.is_some());
                let refs: Vec<&RenewalItem> = chunk.iter().flat_map(|lock| lock.iter()).collect();
                self.send(&inv, refs, tracker.unwrap_or(&self.conn)).await
            });
        // Every call of a round is sent at once (Redis queues them): each hold's renewal then
        // leaves one period after its previous one, whatever its place in the round. Sent a few
        // at a time, a hold late in a slow round (100,000 holds on a busy server: most of a
        // second) would leave up to a round later than its period, close to its deadline. The
        // price is the round's arguments and replies in memory together while it runs.
        let sent = futures::future::join_all(calls).await;
        let mut all_ok = true;
        let mut refused: Vec<RenewalItem> = Vec::new();
        for (refs, sent_at, res) in sent {
            match res {
                Err(e) if self.slots.refused_together(&e) => {
                    refused.extend(refs.into_iter().cloned());
                }
                Ok(flags) if flags.len() == refs.len() => {
                    for (it, flag) in refs.iter().zip(flags) {
                        crate::metrics::renewals(if flag == 1 { "renewed" } else { "owner_gone" }, 1);
                        match flag {
                            1 => {
                                holds.renewed(it, sent_at);
                                tracing::trace!(key = %it.key, field = %it.field, "renewed");
                            }
                            2 => {
                                tracing::warn!(key = %it.key, field = %it.field, "lock lost: its key now holds another Redis type");
                                holds.owner_gone(it);
                            }
                            _ => {
                                tracing::warn!(key = %it.key, field = %it.field, "lock lost: renewal found the owner's field gone");
                                holds.owner_gone(it);
                            }
                        }
                    }
                }
                Ok(flags) => {
                    all_ok = false;
                    crate::metrics::renewals("failed", refs.len());
                    tracing::warn!(
                        expected = refs.len(),
                        got = flags.len(),
                        "renewal reply has the wrong length; will retry"
                    )
                }
                Err(e) => {
                    all_ok = false;
                    crate::metrics::renewals("failed", refs.len());
                    tracing::warn!(error = %e, locks = refs.len(), "lock renewal failed; will retry soon")
                }
            }
        }
        (all_ok, refused)
    }

    async fn send<'a>(
        &self,
        inv: &redis::ScriptInvocation<'_>,
        refs: Vec<&'a RenewalItem>,
        conn: &Connection,
    ) -> (Vec<&'a RenewalItem>, Instant, crate::Result<Vec<i64>>) {
        let sent_at = Instant::now();
        let res = self
            .replica_sync
            .run(conn, self.command_timeout, &refs[0].key, inv)
            .await
            .map(|(v, _)| v);
        (refs, sent_at, res)
    }
}
