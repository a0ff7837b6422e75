//! Deletes unlock latches in batches, off the unlock path.
//!
//! Every unlock writes a short-lived latch `redisson_unlock_latch:{N}:<request id>` so that our
//! own retries of that unlock replay its first reply (`docs/protocol.md`, "Latches and
//! idempotent retries"). Once the unlock has answered, the latch is garbage. Redisson sends one
//! `DEL` per unlock; we hand the key to this janitor, which deletes whatever has queued up with
//! one `DEL` per batch (per slot in a cluster): one command per many unlocks under load. If Redis
//! is unreachable, the latches simply expire with their PX TTL.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::conn::{slot_groups, Connection};
use crate::script;

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
    pub(crate) fn start(conn: Connection, command_timeout: Duration) -> LatchJanitor {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(conn, command_timeout, rx));
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

async fn run(conn: Connection, timeout: Duration, mut rx: mpsc::UnboundedReceiver<Job>) {
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
        for group in slot_groups(keys, conn.is_cluster(), |k: &String| k) {
            let mut del = redis::cmd("DEL");
            for k in &group {
                del.arg(k);
            }
            if let Err(e) = script::cmd::<i64>(&conn, timeout, &group[0], &del).await {
                tracing::debug!(error = %e, latches = group.len(), "could not delete unlock latches; they expire by themselves");
            }
        }
        for tx in flushes {
            let _ = tx.send(());
        }
    }
}
