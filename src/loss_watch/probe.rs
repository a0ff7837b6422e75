//! The probe that tells whether a server tracks without the echo: whether a script's reads
//! are tracked per key (Redis 7.2+, Valkey) and not every key the script declares (before 7.2,
//! where our renewal scripts would track every key they declare). Run at connect, before the
//! loss watch opens a connection of its own, so a server that cannot do it costs no connection.
//! Its script is `lua/common/tracking_probe.lua`.

use std::time::{Duration, Instant};

use redis::Value;

use super::not_now::{classify, NotNow};
use super::per_master;
use crate::conn::Connection;
use crate::pubsub::Invalidated;
use crate::script;

/// How long the probe keys live, in ms (the probe deletes them).
const PROBE_TTL_MS: u64 = 10_000;
/// How long the probe waits for its push at most.
const PROBE_WAIT: Duration = Duration::from_secs(1);

/// The probe's keys: the one its script reads, the one it only declares (one slot: the client
/// id is their hash tag).
pub(super) struct Probe {
    keys: [String; 2],
}

impl Probe {
    pub(super) fn new(client_id: &str) -> Probe {
        Probe {
            keys: [1, 2].map(|n| format!("redisson_lock_probe:{{{client_id}}}:{n}")),
        }
    }

    /// Shows on the pub/sub connection (which reads nothing else yet, so the tracking entries
    /// are the probe's alone) what the server does: with `NOLOOP` tracking on, it runs the probe
    /// script; `writer` (another connection to the same server) then writes both probe keys,
    /// and the push of the read key must come, the other's not before it. Tracking is turned
    /// off again.
    pub(super) async fn run(
        &self,
        pubsub: &Connection,
        writer: &Connection,
        invalidated: &Invalidated,
        timeout: Duration,
    ) -> std::result::Result<(), NotNow> {
        let mut on = redis::cmd("CLIENT");
        on.arg("TRACKING").arg("ON").arg("NOLOOP");
        // (in a cluster, on the master of the probe's keys)
        per_master::at_key(pubsub, &self.keys[0], &on, timeout)
            .await
            .map_err(|e| classify("CLIENT TRACKING ON NOLOOP", e))?;
        let outcome = self.keys_pushed(pubsub, writer, invalidated, timeout).await;
        let mut off = redis::cmd("CLIENT");
        off.arg("TRACKING").arg("OFF");
        if let Err(e) = per_master::at_key(pubsub, &self.keys[0], &off, timeout).await {
            return Err(classify("CLIENT TRACKING OFF", e));
        }
        outcome
    }

    async fn keys_pushed(
        &self,
        pubsub: &Connection,
        writer: &Connection,
        invalidated: &Invalidated,
        timeout: Duration,
    ) -> std::result::Result<(), NotNow> {
        let [read, unread] = &self.keys;
        let mut inv = script::TRACKING_PROBE.prepare_invoke();
        inv.key(read).key(unread).arg(PROBE_TTL_MS);
        script::run::<Value>(pubsub, timeout, read, &inv)
            .await
            .map_err(|e| classify("the tracking probe's script", e))?;
        // the unread key first: its push, if the server sends one, comes before the other's
        let mut set = redis::cmd("SET");
        set.arg(unread).arg(1).arg("PX").arg(PROBE_TTL_MS);
        let mut del = redis::cmd("DEL");
        del.arg(unread).arg(read);
        for (what, cmd) in [("SET", &set), ("DEL", &del)] {
            script::cmd::<Value>(writer, timeout, read, cmd)
                .await
                .map_err(|e| classify(&format!("{what} of the tracking probe's keys"), e))?;
        }
        // the push comes within a round trip; a server that does not send it is not waited for
        // long (the client's connect waits for the probe)
        let deadline = Instant::now() + timeout.min(PROBE_WAIT);
        while !invalidated.has(read) {
            if Instant::now() >= deadline {
                return Err(NotNow::Unsupported(
                    "a key a script wrote and then read was not pushed when another connection changed it"
                        .into(),
                ));
            }
            // once per client at most, and only until the push arrives
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let tracks_unread = invalidated.has(unread);
        invalidated.forget(read);
        invalidated.forget(unread);
        if tracks_unread {
            return Err(NotNow::Unsupported(
                "the server tracks every key a script declares, not only those it reads (before Redis 7.2)"
                    .into(),
            ));
        }
        Ok(())
    }
}
