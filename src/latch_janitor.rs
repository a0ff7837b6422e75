//! Deletes unlock latches in batches, off the unlock path.
//!
//! Every unlock writes a short-lived latch `redisson_unlock_latch:{N}:<request id>` so that our
//! own retries of that unlock replay its first reply (`docs/protocol.md`, "Latches and
//! idempotent retries"). Once the unlock has answered, the latch is garbage. Redisson sends one
//! `DEL` per unlock; we hand the key to this janitor, which deletes whatever has queued up with
//! one `DEL` per batch (per hash slot where the server enforces slots): one command per many unlocks under load. If Redis
//! is unreachable, the latches simply expire with their PX TTL.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use std::sync::Arc;

use crate::conn::Connection;
use crate::script;
use crate::slots::Slots;

/// Largest number of keys in one `DEL`.
const BATCH: usize = 256;
/// How long the janitor waits for more latches before deleting a partial batch. Kept short: a
/// 50 ms linger made the deletion of an acquisition's latch land right after a `CLUSTER FAILOVER
/// FORCE` of its slot in tests/cluster_topology.rs, where its `MOVED` started the cluster
/// connection's recovery early and the next renewals stalled past a 3 s watchdog (every run);
/// the `DEL`s it saves are ~1 per 15 unlocks of a client doing one at a time.
const LINGER: Duration = Duration::from_millis(5);

enum Job {
    Delete(String),
    /// Answered once everything queued before it was deleted (or failed).
    Flush(oneshot::Sender<()>),
}

pub(crate) struct LatchJanitor {
    tx: mpsc::UnboundedSender<Job>,
}

impl LatchJanitor {
    /// Starts the janitor on the current runtime; it ends when the `LatchJanitor` is dropped.
    pub(crate) fn start(conn: Connection, slots: Arc<Slots>, command_timeout: Duration) -> LatchJanitor {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(conn, slots, command_timeout, rx));
        LatchJanitor { tx }
    }

    /// Queues a latch key for deletion.
    pub(crate) fn discard(&self, latch: String) {
        let _ = self.tx.send(Job::Delete(latch)); // a closed janitor means shutdown: the latch expires by itself
    }

    /// Waits until every latch queued so far has been deleted (or given up on).
    pub(crate) async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Job::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

async fn run(conn: Connection, slots: Arc<Slots>, timeout: Duration, mut rx: mpsc::UnboundedReceiver<Job>) {
    let mut jobs = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut jobs, BATCH).await > 0 {
        if jobs.len() < BATCH && !jobs.iter().any(|j| matches!(j, Job::Flush(_))) {
            // Let a few more unlocks finish first: one DEL then serves them all. The latches
            // live for seconds anyway, so a short delay costs nothing.
            tokio::time::sleep(LINGER).await;
            while jobs.len() < BATCH {
                match rx.try_recv() {
                    Ok(j) => jobs.push(j),
                    Err(_) => break,
                }
            }
        }
        let mut keys = Vec::with_capacity(jobs.len());
        let mut flushes = Vec::new();
        for j in jobs.drain(..) {
            match j {
                Job::Delete(k) => keys.push(k),
                Job::Flush(tx) => flushes.push(tx),
            }
        }
        let together = !slots.per_slot();
        let mut refused = Vec::new();
        for group in slots.groups(keys, |k: &String| k) {
            if !delete(&conn, &slots, timeout, &group).await {
                refused.extend(group);
            }
        }
        // refused for keys of several slots: the rule switched, so send them again grouped
        if together && slots.per_slot() {
            for group in slots.groups(refused, |k: &String| k) {
                delete(&conn, &slots, timeout, &group).await;
            }
        }
        for tx in flushes {
            let _ = tx.send(());
        }
    }
}

/// One `DEL` of `keys`; false when it was refused for carrying keys of several slots.
async fn delete(conn: &Connection, slots: &Slots, timeout: Duration, keys: &[String]) -> bool {
    let mut del = redis::cmd("DEL");
    for k in keys {
        del.arg(k);
    }
    match script::cmd::<i64>(conn, timeout, &keys[0], &del).await {
        Ok(_) => true,
        Err(e) if slots.refused_together(&e) => false,
        Err(e) => {
            tracing::debug!(error = %e, latches = keys.len(), "could not delete unlock latches; they expire by themselves");
            true
        }
    }
}
