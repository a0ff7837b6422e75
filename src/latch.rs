//! Deletes unlock latches in batches, off the unlock path.
//!
//! Every unlock writes a short-lived latch `redisson_unlock_latch:{N}:<request id>` so that our
//! own retries of that unlock replay its first reply (protocol §2.3). Once the unlock has
//! answered, the latch is garbage. Redisson sends one `DEL` per unlock; we hand the key to this
//! janitor, which deletes whatever has queued up with one `DEL` per batch (per slot in a
//! cluster): one command per many unlocks under load. If Redis is unreachable, the latches
//! simply expire with their PX TTL.

use std::time::Duration;

use tokio::sync::mpsc;

use crate::conn::{slot_groups, Connection};
use crate::script;

/// Largest number of keys in one `DEL`.
const BATCH: usize = 256;
/// How long the janitor waits for more latches before deleting a partial batch.
const LINGER: Duration = Duration::from_millis(5);

pub(crate) struct LatchJanitor {
    tx: mpsc::UnboundedSender<String>,
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
        let _ = self.tx.send(latch); // a closed janitor means shutdown: the latch expires by itself
    }
}

async fn run(conn: Connection, timeout: Duration, mut rx: mpsc::UnboundedReceiver<String>) {
    let mut keys = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut keys, BATCH).await > 0 {
        if keys.len() < BATCH {
            // Let a few more unlocks finish first: one DEL then serves them all. The latches
            // live for seconds anyway, so a short delay costs nothing.
            tokio::time::sleep(LINGER).await;
            while keys.len() < BATCH {
                match rx.try_recv() {
                    Ok(k) => keys.push(k),
                    Err(_) => break,
                }
            }
        }
        for group in slot_groups(std::mem::take(&mut keys), conn.is_cluster(), |k: &String| k) {
            let mut del = redis::cmd("DEL");
            for k in &group {
                del.arg(k);
            }
            if let Err(e) = script::cmd::<i64>(&conn, timeout, &group[0], &del).await {
                tracing::debug!(error = %e, latches = group.len(), "could not delete unlock latches; they expire by themselves");
            }
        }
    }
}
