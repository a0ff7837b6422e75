//! The loss watch: a hold that disappears from Redis is reported about one round trip after
//! Redis applied the change, not at the next renewal.
//!
//! The client's RESP3 pub/sub connection turns on `CLIENT TRACKING` and reads every held key on
//! that connection (`HEXISTS key field`, pipelined), so the server remembers those keys for it
//! and pushes an invalidation when one changes: a `DEL` or `UNLINK`, an expiry, a force-unlock
//! (Redisson's or ours), another type written under the lock's name, or a write of our own (a
//! renewal, a re-entry, a release: they go on the command connection, so they are pushed too);
//! `FLUSHALL`/`FLUSHDB` push an invalidation of every key. (Renewals stay off this connection:
//! Redis up to 7.0 makes every read inside a script track all the keys the script declares, so
//! a batched renewal sent here would cost the server a tracking-table insert per key per read,
//! quadratic in the batch.) A push is never trusted on its own
//! word: the watch reads the fields of this client's live holds on the changed keys again (which
//! also tracks them again) and ends, as lost, exactly the epochs whose field is gone. A
//! renewal, a re-entry, another reader joining a read lock or a Redisson re-entry leave the
//! field in place, so they are never reported.
//!
//! A key found in place gets a short quiet time before it is read again, which grows while
//! false alarms keep coming ([`quiet`]): when the server's tracking table is smaller than the
//! keys held, each read would evict another key and be pushed back, a loop of reads.
//!
//! Tracking lives and dies with the connection: when it drops (a restart, a failover, a network
//! cut), the watch turns tracking on again on the new connection and reads every hold in one
//! batched call, so a hold the restart lost is reported within one reconnect.
//!
//! Where the server tracks only the keys a script reads (a single server, a Sentinel master or
//! every master of a cluster), a connection of the watch's own tracks the held keys instead, and
//! the renewals go on it, without the echo of its writes
//! ([`no_echo`]): a renewal is then neither pushed back nor read again; what follows is otherwise
//! the same.
//!
//! This is done on every topology with a RESP3 pub/sub connection: a single server (or a
//! connection of the caller's own); a Sentinel master, where a move of the master turns
//! tracking on on the new one and reads every hold there, so a hold the new master lacks
//! (asynchronous replication) is reported at once; a cluster, where tracking is turned on on
//! every master and each hold is read on its slot's master (a dropped node connection, as in a
//! failover, turns it on again and reads every hold; a connection the cluster client replaced
//! silently is found by asking every master once a second whether tracking is on). On servers without RESP3 and when
//! `CLIENT TRACKING` is refused (ACL), renewal alone reports losses, as in Redisson.
//! Nothing of this is visible to other clients: no key, field or message is added.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::config::{Config, LossDetection};
use crate::conn::{slot_groups, Connection};
use crate::error::Error;
use crate::holds::{Holds, RenewalItem};
use crate::pubsub::{Invalidated, PubSubConn, ToCheck};
use crate::script;
use redis::cluster_routing::{MultipleNodeRoutingInfo, ResponsePolicy, RoutingInfo};
use redis::Value;

mod no_echo;
mod not_now;
mod per_master;
mod probe;
mod quiet;
use no_echo::NoEcho;
use not_now::NotNow;
use quiet::Quiet;

/// Holds read per pipeline (a `HEXISTS` each): a pipeline is written to the connection's buffer
/// whole, and the buffer keeps the size it grew to for the client's life, so a pipeline is kept
/// about as large as a renewal call (some 14 KB).
const BATCH: usize = 200;
/// Pipelines of one round in flight at once.
const READS_IN_FLIGHT: usize = 20;
/// Changed keys read per round (the rest in the next rounds): what a round holds in memory
/// stays small when a renewal round of 100,000 holds is pushed back.
const KEYS_PER_ROUND: usize = READS_IN_FLIGHT * BATCH;
/// While nothing changes, how often the watch checks that its client still exists.
const IDLE_CHECK: Duration = Duration::from_secs(1);
/// How long the watch gathers new holds before it reads them: one call for a burst of them,
/// one wake-up of the watch per window however many locks are taken meanwhile, and no read at
/// all for a hold taken and released within it (the common short critical section, whose key is
/// then never tracked, so its release is not pushed either). A hold lost within its first
/// window is found gone by that read.
const NEW_HOLDS: Duration = Duration::from_millis(10);
/// A change the server reports after a quiet spell is read at once (with the new holds gathered
/// so far); in a burst of changes (the watchdog's renewals are pushed too) reads come at most
/// once per `BURST`, each taking what was reported since the last.
const BURST: Duration = Duration::from_millis(2);
/// First pause after a failed call; doubles up to [`BACKOFF_MAX`].
const BACKOFF_MIN: Duration = Duration::from_millis(50);
const BACKOFF_MAX: Duration = Duration::from_secs(2);
/// Attempts in a row to turn tracking on for the watch's own connection that the server answered
/// with an error (about 10 s with the back-off between them) before the pub/sub connection
/// tracks instead. Attempts an outage fails are not counted.
const ON_ATTEMPTS: u32 = 10;
/// In a cluster, how often (while this client holds something) the watch asks every master
/// whether tracking is on for the client's connection to it.
const TRACKING_CHECK: Duration = Duration::from_secs(1);

/// What the loss watch's own connection is opened from, should it track without the echo: the
/// client the command connection was opened from, or a cluster's (without pushes).
#[allow(
    clippy::large_enum_variant,
    reason = "one per client, made once at connect and dropped there"
)]
pub(crate) enum Opener {
    Server(redis::Client),
    Cluster(redis::cluster::ClusterClient),
}

/// Starts the loss watch for a client whose pub/sub connection is `pubsub`, when `config` asks
/// for tracking and the deployment allows it. Returns whether it runs.
pub(crate) async fn start(
    holds: &Arc<Holds>,
    conn: &Connection,
    pubsub: Option<&PubSubConn>,
    opener: Option<&Opener>,
    client_id: &str,
    invalidated: &Arc<Invalidated>,
    config: &Config,
) -> bool {
    if config.loss_detection != LossDetection::Tracking {
        return false;
    }
    let Some(pubsub) = pubsub.filter(|p| p.tracking_conn().is_some()) else {
        tracing::info!(
            "loss detection by renewal only: tracking needs a RESP3 pub/sub connection to a single server or a Sentinel master"
        );
        return false;
    };
    invalidated.set_active(true);
    // the first round turns tracking on
    invalidated.disconnected();
    // a connection of the watch's own may track without the echo (the probe finds out): a
    // single server's, a Sentinel master's, a cluster's (one per master)
    let timeout = config.command_timeout;
    let own = match (pubsub, opener) {
        (PubSubConn::Manager(p), Some(Opener::Server(opener))) => {
            let p = Connection::Manager(p.clone());
            NoEcho::connect(opener, &p, conn, client_id, invalidated, config).await
        }
        (PubSubConn::Cluster(p), Some(Opener::Cluster(opener))) => {
            let p = Connection::Cluster(p.clone());
            NoEcho::connect_cluster(opener, &p, client_id, invalidated, config).await
        }
        (PubSubConn::Sentinel(link), _) => {
            NoEcho::connect_sentinel(link, client_id, invalidated, timeout).await
        }
        _ => None,
    };
    if let (Some(own), Some(p)) = (&own, pubsub.tracking_conn()) {
        invalidated.set_tracker(own.conn().clone());
        own.start_at_connect(&p, invalidated, config.command_timeout)
            .await;
    }
    let task = LossWatcher {
        own,
        holds: holds.downgrade(),
        short_ttl: config.lock_watchdog_timeout - config.renewal_period(),
        renewal_period: config.renewal_period(),
        pubsub: pubsub.clone(),
        invalidated: invalidated.clone(),
        command_timeout: config.command_timeout,
    };
    tokio::spawn(task.run());
    true
}

struct LossWatcher {
    holds: Weak<Holds>,
    /// Tracking on a connection of the watch's own, without the echo of its writes
    /// ([`no_echo`]), unless the server was found not to do it; `None`: on the pub/sub
    /// connection.
    own: Option<NoEcho>,
    /// A hold read after a reported change whose key has a TTL below this (shorter than any our
    /// renewals leave: the watchdog timeout less one renewal period) is read again when that TTL
    /// runs out: someone cut it short, and Redis reports an expiry only when it gets round to
    /// deleting the key.
    short_ttl: Duration,
    /// The longest quiet time of a key that keeps being reported while in place: a loss of it
    /// is noticed no later than renewal would notice it.
    renewal_period: Duration,
    /// The pub/sub connection (tracking is per connection; a Sentinel master's moves with it).
    pubsub: PubSubConn,
    invalidated: Arc<Invalidated>,
    command_timeout: Duration,
}

/// How one round ended.
enum Round {
    Done,
    /// A call failed; what was not handled is put back.
    Failed,
    /// Tracking was refused: renewal alone reports losses from now on.
    Refused,
}

impl LossWatcher {
    /// The own connection's tracking, unless the server was found not to do it.
    fn active_own(&self) -> Option<&NoEcho> {
        self.own.as_ref().filter(|o| !o.given_up())
    }

    async fn run(self) {
        let mut backoff = BACKOFF_MIN;
        // keys to read again when their TTL runs out, and keys reported in their quiet time
        let mut expiries: BTreeMap<Instant, Vec<Arc<str>>> = BTreeMap::new();
        let mut deferred: BTreeMap<Instant, Vec<Arc<str>>> = BTreeMap::new();
        let mut last_read = Instant::now();
        // a cluster's client may replace a node's connection, and the watch's own connection
        // (when it tracks) reconnects, without a word: tracking is checked while holds are held
        let mut check_tracking =
            self.own.is_some() || self.pubsub.tracking_conn().is_some_and(|c| c.is_cluster());
        let mut next_check = Instant::now() + TRACKING_CHECK;
        let mut quiet = Quiet::new(self.renewal_period);
        loop {
            let mut wake = expiries
                .keys()
                .chain(deferred.keys())
                .fold(Instant::now() + IDLE_CHECK, |w, due| w.min(*due));
            if check_tracking {
                wake = wake.min(next_check);
            }
            if let Some(due) = quiet.tidy_due() {
                wake = wake.min(due);
            }
            if tokio::time::timeout_at(wake.into(), self.invalidated.changed())
                .await
                .is_ok()
            {
                // new holds only: gather more, unless a change is reported meanwhile
                let _ = tokio::time::timeout(NEW_HOLDS, self.invalidated.urgent()).await;
                // within a burst, one read per BURST
                tokio::time::sleep_until((last_read + BURST).into()).await;
            }
            let now = Instant::now();
            let mut timed: HashSet<Arc<str>> = HashSet::new();
            while let Some(entry) = expiries.first_entry() {
                if *entry.key() > now {
                    break;
                }
                let keys = entry.remove();
                timed.extend(keys.iter().cloned());
                self.invalidated.keys(keys);
            }
            while let Some(entry) = deferred.first_entry() {
                if *entry.key() > now {
                    break;
                }
                self.invalidated.keys(entry.remove());
            }
            let Some(holds) = self.holds.upgrade() else {
                break;
            };
            if holds.is_closed() || !self.invalidated.is_active() {
                break;
            }
            if check_tracking && Instant::now() >= next_check {
                next_check = Instant::now() + TRACKING_CHECK;
                if holds.entries() > 0 {
                    check_tracking = self.check_tracking(&holds).await;
                }
            }
            let mut pending = self.invalidated.take(KEYS_PER_ROUND);
            let now = Instant::now();
            if quiet.tidy_due().is_some_and(|due| now >= due) {
                quiet.tidy(now);
            }
            if !pending.all {
                // keys still in their quiet time are read when it ends (not one whose TTL, cut
                // short, has just run out: that read is due now)
                pending
                    .keys
                    .retain(|k| match quiet.due(k, now).filter(|_| !timed.contains(k)) {
                        Some(at) => {
                            deferred.entry(at).or_default().push(k.clone());
                            false
                        }
                        None => true,
                    });
            }
            if pending.is_empty() {
                continue;
            }
            tracing::trace!(?pending, "loss detection: keys to read");
            last_read = Instant::now();
            match self
                .round(&holds, pending, &timed, &mut expiries, &mut quiet)
                .await
            {
                Round::Done => backoff = BACKOFF_MIN,
                Round::Failed => {
                    drop(holds);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                }
                Round::Refused => break,
            }
        }
        self.invalidated.set_active(false);
    }

    /// Turns tracking on when the connection is new, then reads the holds on the changed keys.
    async fn round(
        &self,
        holds: &Holds,
        mut pending: ToCheck,
        timed: &HashSet<Arc<str>>,
        expiries: &mut BTreeMap<Instant, Vec<Arc<str>>>,
        quiet: &mut Quiet,
    ) -> Round {
        let Some(conn) = self.pubsub.tracking_conn() else {
            // a Sentinel link between masters
            self.invalidated.put_back(pending);
            return Round::Failed;
        };
        if pending.reconnect {
            let on = match self.active_own() {
                Some(own) => match own.on(&conn, &self.invalidated, self.command_timeout).await {
                    Ok(()) => {
                        self.invalidated.set_no_echo(true);
                        Ok(())
                    }
                    Err(NotNow::Unsupported(why)) => {
                        own.give_up(&why, self.command_timeout).await;
                        self.invalidated.set_no_echo(false);
                        self.tracking_on(&conn).await
                    }
                    // tried again, whatever the error says (it may be a server's reply); an
                    // outage for as long as it lasts, but replies that keep refusing it not for
                    // ever: meanwhile no hold is tracked
                    Err(NotNow::Failed(e)) if !answered(&e) || own.failed_again() < ON_ATTEMPTS => {
                        tracing::debug!(error = %e, "loss detection: could not turn tracking on; retrying");
                        self.invalidated.put_back(pending);
                        return Round::Failed;
                    }
                    Err(NotNow::Failed(e)) => {
                        let why =
                            format!("turning tracking on failed {ON_ATTEMPTS} times in a row (last: {e})");
                        own.give_up(&why, self.command_timeout).await;
                        self.invalidated.set_no_echo(false);
                        self.tracking_on(&conn).await
                    }
                },
                None => self.tracking_on(&conn).await,
            };
            match on {
                Ok(()) => {
                    pending.reconnect = false;
                    pending.all = true;
                    tracing::debug!("loss detection: tracking on; reading every hold");
                }
                Err(e) if tracking_refused(&e) => {
                    tracing::warn!(error = %e, "CLIENT TRACKING refused: losses are reported by renewal only");
                    return Round::Refused;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "loss detection: could not turn tracking on; retrying");
                    self.invalidated.put_back(pending);
                    return Round::Failed;
                }
            }
        }
        // held keys are read where they are tracked
        let conn = match self.active_own() {
            Some(own) if self.invalidated.no_echo() => own.conn().clone(),
            _ => conn,
        };
        let items = holds.live_items(if pending.all { None } else { Some(&pending.keys) });
        // one slot per pipeline in a cluster (the pipeline goes to the slot's master)
        let groups = slot_groups(items, conn.is_cluster(), |it| &it.key);
        // after a reported change, also the key's TTL: one cut short is read again at its end
        let ttls = pending.urgent;
        // a few pipelines at a time: reading 100,000 holds after a reconnect or a renewal round
        // neither holds every request and reply in memory at once nor queues them all ahead of
        // the connection's SUBSCRIBEs
        let chunks: Vec<&[RenewalItem]> = groups.iter().flat_map(|g| g.chunks(BATCH)).collect();
        let mut done = Vec::with_capacity(chunks.len());
        for wave in chunks.chunks(READS_IN_FLIGHT) {
            let reads = wave.iter().map(|chunk| {
                let conn = &conn;
                async move { (*chunk, self.read(conn, holds, chunk, ttls).await) }
            });
            done.extend(futures::future::join_all(reads).await);
        }
        let mut failed = false;
        let now = Instant::now();
        // only a read a report asked for counts for a key's quiet: not a new hold's first read,
        // a read when a TTL cut short runs out, nor every hold's after a reconnect or a flush
        let reported = |k: &Arc<str>| !pending.all && !pending.fresh.contains(k) && !timed.contains(k);
        for (
            chunk,
            BatchRead {
                ok,
                short,
                in_place,
                gone,
            },
        ) in done
        {
            for key in in_place.into_iter().filter(|k| reported(k)) {
                quiet.in_place(&key, now);
            }
            for key in gone {
                quiet.forget(&key);
            }
            for (key, ttl) in short {
                tracing::debug!(key = %key, ?ttl, "loss detection: a held key's TTL was cut short; reading it again when it runs out");
                expiries
                    .entry(Instant::now() + ttl + Duration::from_millis(1))
                    .or_default()
                    .push(key);
            }
            if !ok {
                // read again (and everything after a dropped connection: its push says so)
                self.invalidated.keys(chunk.iter().map(|it| it.key.clone()));
                failed = true;
            }
        }
        if failed {
            Round::Failed
        } else {
            Round::Done
        }
    }

    /// `CLIENT TRACKING ON` on the tracking connection: on every master of a cluster (each has
    /// its own connection; reads go to the slot's master).
    async fn tracking_on(&self, conn: &Connection) -> crate::Result<()> {
        let mut on = redis::cmd("CLIENT");
        on.arg("TRACKING").arg("ON");
        match conn {
            Connection::Cluster(cc) => {
                let mut c = cc.clone();
                let all = RoutingInfo::MultiNode((
                    MultipleNodeRoutingInfo::AllMasters,
                    Some(ResponsePolicy::AllSucceeded),
                ));
                match tokio::time::timeout(self.command_timeout, c.route_command(on, all)).await {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(e)) => Err(Error::from_request("", e, self.command_timeout)),
                    Err(_) => Err(Error::CommandTimeout(self.command_timeout)),
                }
            }
            // only `OK` turns it on: anything else (a message array a proxy delivered in its
            // place, say) is not an answer to this command
            _ => match script::cmd::<Value>(conn, self.command_timeout, "", &on).await? {
                Value::Okay => Ok(()),
                other => Err(Error::Protocol(format!(
                    "CLIENT TRACKING ON answered {other:?}, not OK"
                ))),
            },
        }
    }

    /// A cluster's client replaces a node's connection on its own now and then (when it
    /// reconnects to the seed nodes, or connects to a new master after a failover) without a
    /// disconnection push, and the new connection tracks nothing: a deletion there would go
    /// unreported until the next renewal. So every master is asked whether tracking is on for
    /// this client's connection to it; where it is off, tracking is turned on again on every
    /// master and every hold read (which also covers a read that raced a replacement). Returns
    /// false when the servers refuse the question (ACL, or a server before 6.2): replacements
    /// are then noticed by renewal only. Where the watch's own connection tracks (no echo), it is
    /// asked the same of its redirect, and the server's tracking table is looked at: once it is
    /// full, the pub/sub connection tracks instead, where evictions are pushed.
    async fn check_tracking(&self, holds: &Holds) -> bool {
        if let Some(own) = self.active_own() {
            // the keys that must be tracked: those of live holds, but the ones not read yet
            // (they wait in `invalidated`; this task is the only reader). Counted after the
            // server's count, so a hold taken or released meanwhile errs towards "not short".
            let expected = || holds.live_keys().saturating_sub(self.invalidated.pending_keys());
            return match own.tracks(self.command_timeout).await {
                Ok(true) if own.table_full(expected, self.command_timeout).await == Some(true) => {
                    own.give_up("the server's tracking table is full: an eviction a read of this client's causes is not pushed to it (NOLOOP)", self.command_timeout).await;
                    self.invalidated.set_no_echo(false);
                    self.invalidated.disconnected();
                    true
                }
                Ok(true) => true,
                Ok(false) => {
                    tracing::debug!("loss detection: the watch's own connection no longer tracks into the pub/sub connection (one of them reconnected): tracking on again, reading every hold");
                    self.invalidated.disconnected();
                    true
                }
                Err(NotNow::Unsupported(why)) => {
                    own.give_up(&why, self.command_timeout).await;
                    self.invalidated.set_no_echo(false);
                    self.invalidated.disconnected();
                    self.pubsub.tracking_conn().is_some_and(|c| c.is_cluster())
                }
                Err(NotNow::Failed(_)) => true,
            };
        }
        let Some(Connection::Cluster(cc)) = self.pubsub.tracking_conn() else {
            return false;
        };
        let mut c = cc.clone();
        let mut info = redis::cmd("CLIENT");
        info.arg("TRACKINGINFO");
        let all = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
        let nodes = match tokio::time::timeout(self.command_timeout, c.route_command(info, all)).await {
            Ok(Ok(Value::Map(nodes))) => nodes,
            Ok(Ok(other)) => {
                tracing::debug!(reply = ?other, "loss detection: CLIENT TRACKINGINFO answered an unexpected reply");
                return true;
            }
            Ok(Err(e)) if crate::error::is_refusal(&e) => {
                tracing::warn!(error = %e, "CLIENT TRACKINGINFO refused (denied by the ACL: allow +client|trackinginfo; or unknown before Redis 6.2): a connection the cluster client replaces is noticed by renewal only");
                return false;
            }
            // the next check asks again
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "loss detection: CLIENT TRACKINGINFO failed");
                return true;
            }
            Err(_) => return true,
        };
        let mut off = Vec::new();
        for (node, reply) in &nodes {
            match reply {
                Value::ServerError(e)
                    if e.code() == "NOPERM"
                        || (e.code() == "ERR"
                            && e.details()
                                .is_some_and(|d| d.to_ascii_lowercase().contains("unknown"))) =>
                {
                    tracing::warn!(error = ?e, "CLIENT TRACKINGINFO refused (denied by the ACL: allow +client|trackinginfo; or unknown before Redis 6.2): a connection the cluster client replaces is noticed by renewal only");
                    return false;
                }
                reply if tracks(reply) == Some(false) => off.push(node),
                _ => {}
            }
        }
        if !off.is_empty() {
            tracing::debug!(nodes = ?off, "loss detection: a master's connection does not track (the cluster client replaced it): tracking on again, reading every hold");
            self.invalidated.disconnected();
        }
        true
    }

    /// Reads one batch of holds (one `HEXISTS key field` each, or the read their renewal names
    /// (`Renewal::presence`), pipelined: plain reads, which
    /// Redis serves during `CLIENT PAUSE WRITE`, out of memory and on replicas, where a script
    /// might be refused) and ends the epochs whose field is gone. False when the batch is to be
    /// read again (the call failed, or a reply was neither an answer nor "another type").
    async fn read(&self, conn: &Connection, holds: &Holds, chunk: &[RenewalItem], ttls: bool) -> BatchRead {
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for it in chunk {
            it.renewal.presence(&mut pipe, &it.key, &it.field);
        }
        // (a key with two holds of this client is asked once)
        let mut keys: Vec<&Arc<str>> = Vec::new();
        if ttls {
            keys = chunk.iter().map(|it| &it.key).collect();
            keys.sort();
            keys.dedup();
            for k in &keys {
                pipe.cmd("PTTL").arg(&***k);
            }
        }
        let expected = chunk.len() + keys.len();
        let mut c = conn.clone();
        let mut replies = match tokio::time::timeout(
            self.command_timeout,
            pipe.query_async::<Vec<Value>>(&mut c),
        )
        .await
        {
            Ok(Ok(replies)) if replies.len() == expected => replies,
            Ok(Ok(replies)) => {
                tracing::warn!(
                    expected = chunk.len(),
                    got = replies.len(),
                    "loss detection: a reply of the wrong length; reading again"
                );
                return BatchRead::failed();
            }
            Ok(Err(e)) => {
                tracing::debug!(error = %e, holds = chunk.len(), "loss detection: reading holds failed; retrying");
                return BatchRead::failed();
            }
            Err(_) => {
                tracing::debug!(
                    holds = chunk.len(),
                    "loss detection: reading holds timed out; retrying"
                );
                return BatchRead::failed();
            }
        };
        tracing::trace!(holds = chunk.len(), first = %chunk[0].key, "loss detection: holds read");
        let pttls = replies.split_off(chunk.len());
        let mut complete = true;
        let mut present: std::collections::HashSet<&Arc<str>> = std::collections::HashSet::new();
        let mut gone_keys: Vec<Arc<str>> = Vec::new();
        for (it, reply) in chunk.iter().zip(replies) {
            let gone = match (it.renewal.read_presence(&reply), reply) {
                (_, Value::ServerError(e)) if e.code() == "WRONGTYPE" => true,
                (Some(present), _) => !present,
                (None, other) => {
                    tracing::debug!(key = %it.key, reply = ?other, "loss detection: an unexpected reply; reading again");
                    complete = false;
                    continue;
                }
            };
            if gone {
                if holds.field_gone(it) {
                    tracing::warn!(key = %it.key, field = %it.field,
                        "lock lost: its owner's field is gone from Redis (noticed by tracking)");
                }
                gone_keys.push(it.key.clone());
            } else {
                present.insert(&it.key);
            }
        }
        let short = keys
            .into_iter()
            .zip(pttls)
            .filter_map(|(k, ttl)| match ttl {
                Value::Int(ms) if ms >= 0 && present.contains(k) => {
                    Some((k.clone(), Duration::from_millis(ms as u64)))
                }
                _ => None,
            })
            .filter(|(_, ttl)| *ttl < self.short_ttl)
            .collect();
        gone_keys.retain(|k| !present.contains(k));
        BatchRead {
            ok: complete,
            short,
            in_place: present.into_iter().cloned().collect(),
            gone: gone_keys,
        }
    }
}

/// What one batch read found.
struct BatchRead {
    /// Every hold was answered (else the batch is read again).
    ok: bool,
    /// Keys in place whose TTL was cut short, with that TTL: read again when it runs out.
    short: Vec<(Arc<str>, Duration)>,
    /// Keys whose holds are in place.
    in_place: Vec<Arc<str>>,
    /// Keys with no hold of this client left in place.
    gone: Vec<Arc<str>>,
}

impl BatchRead {
    fn failed() -> BatchRead {
        BatchRead {
            ok: false,
            short: Vec::new(),
            in_place: Vec::new(),
            gone: Vec::new(),
        }
    }
}

/// Whether turning tracking on failed for good: the server refused the command (an ACL, an
/// unknown command), answered it with any other definite error (a proxy's `syntax error`), or
/// answered something that is not `OK`. Transient errors (a connection lost, `LOADING`) are
/// tried again.
/// Whether the server answered (an error reply, or a reply the client cannot use), as opposed
/// to a connection that failed or a call that timed out.
fn answered(e: &Error) -> bool {
    match e {
        Error::Redis(r) => r.code().is_some() || matches!(r.kind(), redis::ErrorKind::Server(_)),
        Error::Protocol(_) => true,
        _ => false,
    }
}

fn tracking_refused(e: &Error) -> bool {
    match e {
        Error::Redis(r) => {
            crate::error::is_refusal(r)
                || (matches!(
                    r.kind(),
                    redis::ErrorKind::Server(_) | redis::ErrorKind::Extension
                ) && !e.is_transient())
        }
        Error::Protocol(_) => true,
        _ => false,
    }
}

/// The fields of a map reply: a RESP3 map, or RESP2's flat array of names and values.
pub(super) fn map_pairs(reply: &Value) -> Option<Vec<(&Value, &Value)>> {
    match reply {
        Value::Map(fields) => Some(fields.iter().map(|(k, v)| (k, v)).collect()),
        Value::Array(items) if items.len() % 2 == 0 => {
            Some(items.chunks(2).map(|kv| (&kv[0], &kv[1])).collect())
        }
        _ => None,
    }
}

/// Whether a `CLIENT TRACKINGINFO` reply says tracking is on (its flags hold `on` or `off`).
pub(super) fn tracks(info: &Value) -> Option<bool> {
    let fields = map_pairs(info)?;
    let flags = fields.into_iter().find_map(|(k, v)| match k {
        Value::BulkString(k) if k.as_slice() == b"flags" => Some(v),
        Value::SimpleString(k) if k == "flags" => Some(v),
        _ => None,
    })?;
    let (Value::Set(flags) | Value::Array(flags)) = flags else {
        return None;
    };
    flags.iter().find_map(|f| match f {
        Value::BulkString(f) if f.as_slice() == b"on" => Some(true),
        Value::BulkString(f) if f.as_slice() == b"off" => Some(false),
        Value::SimpleString(f) if f == "on" => Some(true),
        Value::SimpleString(f) if f == "off" => Some(false),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::tracks;
    use redis::Value;

    fn info(flags: &[&str]) -> Value {
        crate::loss_watch::not_now::fixtures::trackinginfo(flags, -1)
    }

    #[test]
    fn trackinginfo_flags_are_read() {
        assert_eq!(tracks(&info(&["on"])), Some(true));
        assert_eq!(tracks(&info(&["off"])), Some(false));
        assert_eq!(tracks(&info(&["on", "optin", "caching-yes"])), Some(true));
        assert_eq!(tracks(&info(&[])), None);
        assert_eq!(tracks(&Value::Nil), None);
    }

    /// Only the server's own refusals count towards giving up tracking without the echo; an
    /// outage (a dropped connection, a timeout) is waited out however long it lasts.
    #[test]
    fn only_answers_count_against_the_watchs_own_tracking() {
        use super::answered;
        use crate::error::Error;
        let reply = |text: &str| Error::Redis(crate::loss_watch::not_now::fixtures::error_reply(text));
        assert!(answered(&reply(
            "ERR The client ID you want redirect to does not exist"
        )));
        assert!(answered(&Error::Protocol("TRACKINGINFO disagrees".into())));
        let dropped = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(!answered(&Error::Redis(dropped)));
        assert!(!answered(&Error::CommandTimeout(
            std::time::Duration::from_millis(500)
        )));
    }
}
