//! Replica synchronisation: `WAIT` after the lock scripts (Redisson's `checkLockSyncedSlaves`).
//!
//! With [`ReplicaSync::BestEffort`] or [`ReplicaSync::Required`] every script that changes a
//! lock (acquire, unlock, renewal, force unlock) is sent in one pipeline with
//! `WAIT <replicas> <timeout>`, where `<replicas>` is the number of replicas connected to the
//! master (`INFO replication`, re-read at most once a second). Sending both in one write on one
//! connection makes the `WAIT` cover exactly this script's write.
//!
//! A replica that drops off the master (its link cut, a restart) is still counted for
//! [`REPLICAS_REMEMBERED`]: a master cut off from its replicas reports none connected at once,
//! and counting only those would grant locks unconfirmed exactly when a failover is likely to
//! lose them. The memory belongs to one master (its replication id): after a failover the new
//! master's own replicas count.
//!
//! `WAIT` blocks the connection it runs on, and every lock command of the client shares that
//! connection. So once a `WAIT` times out unconfirmed, replicas count as lagging for a backoff
//! (500 ms doubling to 5 s): meanwhile best-effort scripts run without `WAIT`, and a required
//! acquisition fails at once with [`Error::ReplicasNotSynced`] before anything is sent. At most
//! one `WAIT` per backoff period stalls the connection.

use std::time::{Duration, Instant};

use parking_lot::Mutex;
use redis::{FromRedisValue, ScriptInvocation, Value};

use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, Slot, SlotAddr};

use crate::config::ReplicaSync;
use crate::conn::Connection;
use crate::error::{Error, Result};

/// How long a replica count read from `INFO replication` is used.
const REPLICAS_FRESH: Duration = Duration::from_secs(1);
/// How long a replica that left the master is still waited for.
pub(crate) const REPLICAS_REMEMBERED: Duration = Duration::from_secs(60);
const BACKOFF_MIN: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// What the `WAIT` after a script said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Synced {
    /// No `WAIT` was sent (off, no replicas, or lagging replicas in best-effort mode).
    NotAsked,
    /// `acked` of `wanted` replicas confirmed the write (`acked >= 1`).
    Confirmed { acked: u32, wanted: u32 },
    /// No replica confirmed within the timeout.
    Unconfirmed { wanted: u32 },
}

#[derive(Default)]
struct State {
    /// The replica count of the master (standalone, sentinel), or the last one read in a cluster.
    replicas: Option<(u32, Instant)>,
    /// In a cluster: per hash slot, the replica count of the slot's master.
    slot_replicas: std::collections::HashMap<Slot, (u32, Instant)>,
    /// Unconfirmed `WAIT`s in a row and the end of the backoff, per hash slot in a cluster
    /// (`None`: the one master otherwise), so a lagging master holds up only its own locks.
    lag: std::collections::HashMap<Option<Slot>, (u32, Instant)>,
    /// The most replicas each master (per hash slot in a cluster) had lately.
    seen: std::collections::HashMap<Option<Slot>, Remembered>,
}

/// The most replicas one master had, and when it last had that many.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Remembered {
    /// The master's replication id (`master_replid`): another id is another master.
    replid: String,
    most: u32,
    at: Instant,
}

impl Remembered {
    /// The count to wait for after a reading of `n` replicas on the master `replid`: the most it
    /// had within [`REPLICAS_REMEMBERED`], and the updated memory.
    fn next(prev: Option<&Remembered>, replid: &str, n: u32, now: Instant) -> Remembered {
        match prev {
            Some(p) if p.replid == replid && n < p.most && now.duration_since(p.at) < REPLICAS_REMEMBERED => {
                p.clone()
            }
            _ => Remembered {
                replid: replid.to_owned(),
                most: n,
                at: now,
            },
        }
    }
}

pub(crate) struct ReplicaSyncer {
    mode: ReplicaSync,
    timeout: Duration,
    cluster: bool,
    state: Mutex<State>,
    /// `INFO replication` was refused (a managed service): said once.
    info_refused: std::sync::atomic::AtomicBool,
}

impl ReplicaSyncer {
    /// `mode` already resolved (never `Auto`).
    pub(crate) fn new(mode: ReplicaSync, timeout: Duration, cluster: bool) -> ReplicaSyncer {
        ReplicaSyncer {
            mode,
            timeout,
            cluster,
            state: Mutex::new(State::default()),
            info_refused: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn lag_key(&self, key: &str) -> Option<Slot> {
        self.cluster.then(|| Slot::for_key(key.as_bytes()))
    }

    pub(crate) fn required(&self) -> bool {
        self.mode == ReplicaSync::Required
    }

    /// With [`ReplicaSync::Required`], a grant no replica confirmed must be undone: how many
    /// replicas were wanted. One rule for locks and synchronizers (Redisson's
    /// `checkLockSyncedSlaves`); otherwise the grant is kept.
    pub(crate) fn unconfirmed(&self, synced: &Synced) -> Option<u32> {
        match synced {
            Synced::Unconfirmed { wanted } if self.required() => Some(*wanted),
            _ => None,
        }
    }

    /// Undoes a grant [`unconfirmed`](Self::unconfirmed) (`undo`: the kind's own release or
    /// give-back, which also wakes waiters): the acquisition's error,
    /// [`Error::ReplicasNotSynced`], which the caller's wait retries like any failure.
    pub(crate) async fn undo_unconfirmed<F>(&self, key: &str, wanted: u32, undo: F) -> Error
    where
        F: std::future::Future<Output = Result<()>>,
    {
        match undo.await {
            Ok(()) => tracing::warn!(key, wanted, "no replica confirmed the acquisition: undone"),
            Err(e) => {
                tracing::warn!(key, wanted, error = %e, "no replica confirmed the acquisition; undoing it failed (finished in the background, or it ends with its TTL)")
            }
        }
        Error::ReplicasNotSynced {
            key: key.to_owned(),
            wanted,
        }
    }

    /// Whether a required acquisition must fail before it is sent (replicas lag).
    pub(crate) fn refuse_now(&self, key: &str) -> Result<()> {
        if !self.required() {
            return Ok(());
        }
        let slot = self.lag_key(key);
        let st = self.state.lock();
        match st.lag.get(&slot) {
            Some((_, until)) if Instant::now() < *until => {
                let replicas = match slot {
                    Some(s) => st.slot_replicas.get(&s).map(|r| r.0),
                    None => st.replicas.map(|r| r.0),
                };
                Err(Error::ReplicasNotSynced {
                    key: key.to_owned(),
                    wanted: replicas.unwrap_or(0),
                })
            }
            _ => Ok(()),
        }
    }

    /// The replicas to wait for at `key`'s master, while the count last read is fresh.
    fn cached(&self, conn: &Connection, key: &str) -> Option<u32> {
        let slot = conn.is_cluster().then(|| Slot::for_key(key.as_bytes()));
        let st = self.state.lock();
        let cached = match slot {
            Some(s) => st.slot_replicas.get(&s).copied(),
            None => st.replicas,
        };
        cached.and_then(|(n, at)| (at.elapsed() < REPLICAS_FRESH).then_some(n))
    }

    async fn replicas(&self, conn: &Connection, timeout: Duration, key: &str) -> u32 {
        if let Some(n) = self.cached(conn, key) {
            return n;
        }
        let slot = conn.is_cluster().then(|| Slot::for_key(key.as_bytes()));
        let mut cmd = redis::cmd("INFO");
        cmd.arg("replication");
        let reply = match conn {
            // the master of the key's slot
            Connection::Cluster(cc) => {
                let mut c = cc.clone();
                let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::with_key(
                    key,
                    SlotAddr::Master,
                )));
                match tokio::time::timeout(timeout, c.route_command(cmd, route)).await {
                    Ok(Ok(v)) => String::from_redis_value(v).ok(),
                    Ok(Err(e)) => self.unreadable(&e),
                    Err(_) => None,
                }
            }
            other => {
                let mut c = other.clone();
                match tokio::time::timeout(timeout, cmd.query_async::<String>(&mut c)).await {
                    Ok(Ok(info)) => Some(info),
                    Ok(Err(e)) => self.unreadable(&e),
                    Err(_) => None,
                }
            }
        };
        let mut st = self.state.lock();
        let Some(info) = reply else {
            // cannot tell: keep the last count (or none)
            return st.replicas.map_or(0, |r| r.0);
        };
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
                .map(str::trim)
        };
        let connected: u32 = field("connected_slaves")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let replid = field("master_replid").unwrap_or_default();
        let now = Instant::now();
        let memory = Remembered::next(st.seen.get(&slot), replid, connected, now);
        let n = memory.most;
        if n > connected {
            tracing::debug!(
                key,
                connected,
                waiting_for = n,
                "a replica left the master lately: still waiting for it"
            );
        }
        st.seen.insert(slot, memory);
        st.replicas = Some((n, now));
        if let Some(s) = slot {
            st.slot_replicas.insert(s, (n, now));
        }
        n
    }

    /// `INFO replication` failed with `e`: a refusal (an ACL, a renamed command) is said once,
    /// as it stays so. No count is read.
    fn unreadable(&self, e: &redis::RedisError) -> Option<String> {
        if crate::error::is_refusal(e) && !self.info_refused.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            tracing::warn!(error = %e, mode = ?self.mode,
                "INFO replication refused: this client cannot count the master's replicas, so it does not WAIT for them (acquisitions are not confirmed by replicas)");
        }
        None
    }

    fn lagging(&self, key: &str) -> bool {
        let slot = self.lag_key(key);
        self.state
            .lock()
            .lag
            .get(&slot)
            .is_some_and(|(_, until)| Instant::now() < *until)
    }

    fn record(&self, key: &str, synced: Synced) {
        let slot = self.lag_key(key);
        let mut st = self.state.lock();
        match synced {
            Synced::Unconfirmed { .. } => {
                let failures = st.lag.get(&slot).map_or(0, |l| l.0).saturating_add(1);
                let backoff = BACKOFF_MIN
                    .saturating_mul(1 << failures.min(16).saturating_sub(1))
                    .min(BACKOFF_MAX);
                st.lag.insert(slot, (failures, Instant::now() + backoff));
            }
            Synced::Confirmed { .. } => {
                st.lag.remove(&slot);
            }
            Synced::NotAsked => {}
        }
    }

    /// Runs a script that changes a lock, followed by `WAIT` when the mode asks for it.
    pub(crate) async fn run<T: FromRedisValue>(
        &self,
        conn: &Connection,
        timeout: Duration,
        key: &str,
        inv: &ScriptInvocation<'_>,
    ) -> Result<(T, Synced)> {
        // no WAIT to send: the script alone, with no box (one allocation per lock write saved
        // where a Sentinel or cluster master is known, from a fresh count, to have no replica)
        if self.mode == ReplicaSync::Off || self.cached(conn, key) == Some(0) {
            let v = crate::script::run(conn, timeout, key, inv).await?;
            return Ok((v, Synced::NotAsked));
        }
        // boxed: its state would otherwise make every lock and unlock future (and the boxes that
        // make them cancel-safe) several KB larger, also when replica sync is off
        Box::pin(self.run_synced(conn, timeout, key, inv)).await
    }

    async fn run_synced<T: FromRedisValue>(
        &self,
        conn: &Connection,
        timeout: Duration,
        key: &str,
        inv: &ScriptInvocation<'_>,
    ) -> Result<(T, Synced)> {
        let wanted = self.replicas(conn, timeout, key).await;
        if wanted == 0 || (self.mode == ReplicaSync::BestEffort && self.lagging(key)) {
            let v = crate::script::run(conn, timeout, key, inv).await?;
            return Ok((v, Synced::NotAsked));
        }
        let wait_ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX);
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        pipe.invoke_script(inv).cmd("WAIT").arg(wanted).arg(wait_ms);
        // the connection's own timeout plus the WAIT's
        let budget = timeout.saturating_add(self.timeout);
        let mut loaded = false;
        loop {
            let replies: Vec<Value> = match tokio::time::timeout(budget, send(conn, key, &pipe)).await {
                Ok(Ok(v)) => v,
                Ok(Err(e)) => return Err(Error::from_request(key, e, budget)),
                Err(_) => return Err(Error::CommandTimeout(budget)),
            };
            let mut it = replies.into_iter();
            let (Some(reply), Some(acked)) = (it.next(), it.next()) else {
                return Err(Error::Protocol("script + WAIT pipeline: too few replies".into()));
            };
            let reply = match reply.extract_error() {
                Ok(v) => v,
                Err(e)
                    if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) && !loaded =>
                {
                    // nothing ran: load the script and send both again
                    let mut c = conn.clone();
                    inv.load_async(&mut c)
                        .await
                        .map_err(|e| Error::from_redis(key, e))?;
                    loaded = true;
                    continue;
                }
                Err(e) => return Err(Error::from_redis(key, e)),
            };
            let value =
                T::from_redis_value(reply).map_err(|e| Error::Protocol(format!("script reply: {e}")))?;
            let acked: u32 = match acked.extract_error().ok().map(i64::from_redis_value) {
                Some(Ok(n)) => u32::try_from(n).unwrap_or(0),
                _ => 0,
            };
            let synced = if acked >= 1 {
                Synced::Confirmed { acked, wanted }
            } else {
                Synced::Unconfirmed { wanted }
            };
            self.record(key, synced);
            if let Synced::Unconfirmed { .. } = synced {
                tracing::warn!(key, wanted, timeout = ?self.timeout, "no replica confirmed a lock write (WAIT)");
            }
            return Ok((value, synced));
        }
    }
}

/// Sends the script + `WAIT` pipeline in one write: on the connection, or in a cluster to the
/// master of `key`'s slot (where the script runs, so the `WAIT` covers its write).
async fn send(conn: &Connection, key: &str, pipe: &redis::Pipeline) -> redis::RedisResult<Vec<Value>> {
    match conn {
        Connection::Cluster(cc) => {
            let mut c = cc.clone();
            let route = SingleNodeRoutingInfo::SpecificNode(Route::with_key(key, SlotAddr::Master));
            c.route_pipeline(pipe.clone(), 0, 2, route).await
        }
        other => {
            let mut c = other.clone();
            pipe.query_async(&mut c).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_that_left_is_waited_for_a_while_on_the_same_master_only() {
        let t0 = Instant::now();
        let two = Remembered::next(None, "a", 2, t0);
        assert_eq!(two.most, 2);
        // the link is cut: the master reports none, the two are still expected
        let cut = Remembered::next(Some(&two), "a", 0, t0 + Duration::from_secs(5));
        assert_eq!(cut.most, 2);
        assert_eq!(cut.at, t0, "the memory dates from when the master last had them");
        // gone for longer than remembered: the master's own count again
        let later = Remembered::next(Some(&cut), "a", 0, t0 + REPLICAS_REMEMBERED);
        assert_eq!(later.most, 0);
        // another master (a failover): its own count at once
        let failover = Remembered::next(Some(&two), "b", 0, t0 + Duration::from_secs(1));
        assert_eq!(failover.most, 0);
        // more replicas: counted at once
        let three = Remembered::next(Some(&two), "a", 3, t0 + Duration::from_secs(1));
        assert_eq!(three.most, 3);
    }
}
