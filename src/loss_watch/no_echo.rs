//! Tracking without the echo of our own writes, where the server does it.
//!
//! The watch opens a connection of its own, the **tracker**, which renews and extends held keys
//! and reads them (nothing else is sent on it), with `CLIENT TRACKING ON REDIRECT <pub/sub
//! connection> NOLOOP`: its pushes go to the pub/sub connection (where the hub reads them), and a
//! change the tracker makes itself is not pushed at all. Every read on it is tracked, so no
//! `CLIENT CACHING` goes with any call; the application's reads and the acquire scripts (which
//! read request latches and locks others hold) go on the command connection, which does not
//! track. A renewal then costs no push and no read, where the tracking of the pub/sub connection
//! pushes every renewed key back and the watch reads it again. The command connection's own writes
//! to held keys (a re-entry, a release that leaves holds) are pushed, as any other client's are,
//! and read again.
//!
//! A write untracks the key it changes even when it is not pushed, so the renewal scripts (and a
//! lease extension) end with one `EXISTS` of the keys they extended.
//!
//! Chosen by what the server does, once, at connect, before the tracker is opened: a probe
//! ([`probe`](super::probe), on the pub/sub connection before it tracks anything else) must show
//! a key that a script of the tracking connection wrote and then read still pushed when another
//! connection (the command connection) changes it, and a key the
//! script declared without reading it not tracked: a server that tracks every key a script
//! declares (Redis before 7.2) would track every key our renewal scripts declare. Then tracking
//! with `REDIRECT` and `NOLOOP` must be accepted, and `CLIENT TRACKINGINFO` must say so.
//! Otherwise (such a server, an ACL that refuses `CLIENT ID`, `CLIENT TRACKINGINFO` or the probe
//! keys, a proxy), the pub/sub connection tracks as before and the renewals go on the command
//! connection. Tracking lives and dies with a connection, and the tracker reconnects on its own:
//! while holds are held, `CLIENT TRACKINGINFO` is asked once a second whether it still tracks
//! into the pub/sub connection it was turned on for; if not, tracking is turned on again and
//! every hold read.
//!
//! Behind Sentinel the tracker is a connection to whichever master the link is on (opened there
//! when first used), and the pub/sub connection moves with it. Tracking is turned on only with
//! both on one master: the probe, the pub/sub connection's id, the redirect and its check use
//! the pub/sub connection and the tracker of one generation of the link, so the tracker never
//! redirects to an id read on another server (where it may be a stranger's); a move meanwhile
//! starts it over on the new master. A redirect refused because the pub/sub connection dropped since its id was read
//! is tried again, not taken for a server that cannot do it.
//!
//! In a cluster the tracker is a cluster connection of its own (one connection per master,
//! opened from the same nodes, its pushes not read), and tracking is per master: on each, the
//! tracker's connection redirects to the client's connection to that master (its id read
//! there), and `CLIENT TRACKINGINFO` is asked of every master. A master the ids were not read on
//! (a failover or a resharding since), a redirect broken by a reconnect, or a node connection the
//! cluster client replaced without a word turns tracking on again on every master and reads
//! every hold.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::Value;

use crate::conn::Connection;
use crate::error::Error;
use crate::pubsub::Invalidated;
use crate::script;
use crate::sentinel::{Purpose, SentinelConnection, SentinelLink};

use super::not_now::{classify, redirect_gone, NotNow};
use super::per_master;
use super::probe::Probe;
use parking_lot::Mutex;

/// The tracker: a connection of the loss watch's own, and its tracking.
pub(super) struct NoEcho {
    conn: Connection,
    /// A Sentinel master's link: the tracker and the pub/sub connection move with the master,
    /// so tracking is turned on only with both on one master (one generation of the link).
    link: Option<Arc<SentinelLink>>,
    /// The probe, run by the first `on` unless it passed at connect.
    probe: Probe,
    /// The id of the pub/sub connection the tracking redirects to (-1: none yet).
    redirect: AtomicI64,
    /// In a cluster: per master (`host:port`), the id of the pub/sub connection's connection to
    /// it, which the tracker's connection to it redirects to.
    nodes: Mutex<BTreeMap<String, i64>>,
    /// The server showed that it does it (the probe passed once).
    probed: AtomicBool,
    /// The server does not do it, or refuses what it takes: the pub/sub connection tracks.
    given_up: AtomicBool,
    /// Checks in a row that found fewer keys tracked than this client has holds.
    short_checks: AtomicU32,
    /// Attempts in a row to turn tracking on that failed (and may be tried again).
    failed_ons: AtomicU32,
    /// `INFO` was refused: the table is not looked at again.
    info_refused: AtomicBool,
}

impl NoEcho {
    /// For a single server: the probe first (`pubsub`, with the command connection `writer`),
    /// then, unless it showed that the server cannot do it, the tracker opened from the client
    /// the command connection was opened from. `None`: the pub/sub connection tracks.
    pub(super) async fn connect(
        opener: &redis::Client,
        pubsub: &Connection,
        writer: &Connection,
        client_id: &str,
        invalidated: &Invalidated,
        config: &crate::config::Config,
    ) -> Option<NoEcho> {
        let probed = Probe::new(client_id)
            .run(pubsub, writer, invalidated, config.command_timeout)
            .await;
        if let Err(NotNow::Unsupported(why)) = &probed {
            echo(why);
            return None;
        }
        match NoEcho::open(opener, client_id, config).await {
            Ok(own) => Some(own.probed(probed.is_ok())),
            Err(e) => {
                tracing::info!(error = %e, "loss detection: no connection of its own (tracking on the pub/sub connection: the renewals are pushed back and read again)");
                None
            }
        }
    }

    /// For a Sentinel master: the probe first (the master's pub/sub and command connections),
    /// then, unless it showed that the master cannot do it, the tracker of whichever master
    /// `link` is on (opened there when first used). `None`: the pub/sub connection tracks.
    pub(super) async fn connect_sentinel(
        link: &Arc<SentinelLink>,
        client_id: &str,
        invalidated: &Invalidated,
        timeout: Duration,
    ) -> Option<NoEcho> {
        let own = NoEcho::new(
            Connection::Sentinel(SentinelConnection::new(link.clone(), Purpose::Tracker)),
            Some(link.clone()),
            client_id,
        );
        let Some((generation, pubsub)) = link.pubsub_at() else {
            return Some(own);
        };
        let writer = Connection::Sentinel(SentinelConnection::new(link.clone(), Purpose::Commands));
        let probed = Probe::new(client_id)
            .run(&Connection::Manager(pubsub), &writer, invalidated, timeout)
            .await;
        // a verdict only with both connections on one master
        if link.generation() != generation {
            return Some(own);
        }
        match probed {
            Err(NotNow::Unsupported(why)) => {
                echo(&why);
                None
            }
            probed => Some(own.probed(probed.is_ok())),
        }
    }

    /// For a cluster: the tracker (a cluster connection of its own, one connection per master)
    /// opened from `opener`, then the probe (`pubsub`, the client's cluster connection, with
    /// the tracker writing the probe's keys). `None`: the pub/sub connection tracks.
    pub(super) async fn connect_cluster(
        opener: &redis::cluster::ClusterClient,
        pubsub: &Connection,
        client_id: &str,
        invalidated: &Invalidated,
        config: &crate::config::Config,
    ) -> Option<NoEcho> {
        let tracker = match tokio::time::timeout(config.connect_timeout, opener.get_async_connection()).await
        {
            Ok(Ok(c)) => Connection::Cluster(c),
            Ok(Err(e)) => {
                tracing::info!(error = %e, "loss detection: no connection of its own (tracking on the pub/sub connection: the renewals are pushed back and read again)");
                return None;
            }
            Err(_) => {
                tracing::info!("loss detection: connecting a connection of its own timed out (tracking on the pub/sub connection: the renewals are pushed back and read again)");
                return None;
            }
        };
        let probed = Probe::new(client_id)
            .run(pubsub, &tracker, invalidated, config.command_timeout)
            .await;
        match probed {
            Err(NotNow::Unsupported(why)) => {
                echo(&why);
                None
            }
            probed => Some(NoEcho::new(tracker, None, client_id).probed(probed.is_ok())),
        }
    }

    /// Whether the probe has passed already.
    fn probed(self, passed: bool) -> NoEcho {
        self.probed.store(passed, Ordering::SeqCst);
        self
    }

    /// Opens the tracker from the client the command connection was opened from.
    async fn open(
        opener: &redis::Client,
        client_id: &str,
        config: &crate::config::Config,
    ) -> crate::Result<NoEcho> {
        // (the manager retries a first connection that fails: bounded by the connect timeout)
        let conn = tokio::time::timeout(
            config.connect_timeout,
            opener.get_connection_manager_with_config(config.manager_config()),
        )
        .await
        .map_err(|_| Error::CommandTimeout(config.connect_timeout))??;
        Ok(NoEcho::new(Connection::Manager(conn), None, client_id))
    }

    fn new(conn: Connection, link: Option<Arc<SentinelLink>>, client_id: &str) -> NoEcho {
        NoEcho {
            conn,
            link,
            probe: Probe::new(client_id),
            redirect: AtomicI64::new(-1),
            nodes: Mutex::new(BTreeMap::new()),
            probed: AtomicBool::new(false),
            given_up: AtomicBool::new(false),
            short_checks: AtomicU32::new(0),
            failed_ons: AtomicU32::new(0),
            info_refused: AtomicBool::new(false),
        }
    }

    /// The tracker: held keys are renewed and read on it, so that they are tracked for it.
    pub(super) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Counts an attempt to turn tracking on that failed and may be tried again: how many
    /// failed in a row (an attempt that succeeds starts the count over).
    pub(super) fn failed_again(&self) -> u32 {
        self.failed_ons.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Whether the server was found not to do it.
    pub(super) fn given_up(&self) -> bool {
        self.given_up.load(Ordering::SeqCst)
    }

    /// Gives up for good (the pub/sub connection tracks from now on); the tracker's tracking is
    /// turned off, so that it pushes nothing more.
    pub(super) async fn give_up(&self, why: &str, timeout: Duration) {
        self.given_up.store(true, Ordering::SeqCst);
        echo(why);
        if self.redirect.load(Ordering::SeqCst) >= 0 || !self.nodes.lock().is_empty() {
            let mut off = redis::cmd("CLIENT");
            off.arg("TRACKING").arg("OFF");
            let _ = per_master::ask(&self.conn, &off, timeout).await;
        }
        if let Some(link) = &self.link {
            // nothing is sent on it any more: a Sentinel client keeps its usual two connections
            link.drop_tracker();
        }
    }

    /// At connect, so that the client is handed out on the path it will take: the probe, then
    /// tracking on for the tracker. A call that failed (not a refusal) is tried again by the
    /// watch's first round.
    pub(super) async fn start_at_connect(
        &self,
        pubsub: &Connection,
        invalidated: &Invalidated,
        timeout: Duration,
    ) {
        match self.on(pubsub, invalidated, timeout).await {
            Ok(()) => invalidated.set_no_echo(true),
            Err(NotNow::Unsupported(why)) => self.give_up(&why, timeout).await,
            Err(NotNow::Failed(e)) => {
                tracing::debug!(error = %e, "loss detection: tracking without the echo could not be set up at connect; trying again in the first round")
            }
        }
    }

    /// Turns tracking on for the tracker, redirected to `pubsub` (the pub/sub connection; of a
    /// Sentinel master, the link's current one); the first time, the probe shows that the
    /// server does it.
    pub(super) async fn on(
        &self,
        pubsub: &Connection,
        invalidated: &Invalidated,
        timeout: Duration,
    ) -> std::result::Result<(), NotNow> {
        // a Sentinel master: the pub/sub connection and the tracker of one generation of the
        // link, so of one master; a move meanwhile starts it over on the new master
        let (generation, pubsub, tracker) = match &self.link {
            Some(link) => {
                let Some((generation, p)) = link.pubsub_at() else {
                    return Err(moving());
                };
                let t = link
                    .tracker_at(generation)
                    .await
                    .map_err(|e| NotNow::Failed(e.into()))?
                    .ok_or_else(moving)?;
                (generation, Connection::Manager(p), Connection::Manager(t))
            }
            None => (0, pubsub.clone(), self.conn.clone()),
        };
        if !self.probed.load(Ordering::SeqCst) {
            self.probe.run(&pubsub, &tracker, invalidated, timeout).await?;
            self.probed.store(true, Ordering::SeqCst);
        }
        if tracker.is_cluster() {
            return self.on_every_master(&pubsub, &tracker, timeout).await;
        }
        let id = pubsub_id(&pubsub, timeout).await?;
        let mut on = redis::cmd("CLIENT");
        on.arg("TRACKING").arg("ON").arg("REDIRECT").arg(id).arg("NOLOOP");
        match script::cmd::<Value>(&tracker, timeout, "", &on).await {
            Ok(Value::Okay) => {}
            Ok(other) => {
                return Err(NotNow::Unsupported(format!(
                    "CLIENT TRACKING ON REDIRECT answered {other:?}"
                )))
            }
            // the pub/sub connection dropped (or moved) since its id was asked: asked again
            Err(Error::Redis(e)) if redirect_gone(&e) => return Err(NotNow::Failed(Error::Redis(e))),
            Err(e) => return Err(classify("CLIENT TRACKING ON REDIRECT ... NOLOOP", e)),
        }
        self.redirect.store(id, Ordering::SeqCst);
        if !self.tracks_on(&tracker, timeout).await? {
            return Err(NotNow::Unsupported(
                "CLIENT TRACKINGINFO does not show the redirect just turned on".into(),
            ));
        }
        if self.link.as_ref().is_some_and(|l| l.generation() != generation) {
            // on the old master, which the holds are read on no more
            return Err(moving());
        }
        self.failed_ons.store(0, Ordering::SeqCst);
        tracing::debug!(
            "loss detection: tracking on the watch's own connection, without the echo of its writes"
        );
        Ok(())
    }

    /// Whether the tracker still tracks into the pub/sub connection it was turned on for (it
    /// does not after either reconnected).
    pub(super) async fn tracks(&self, timeout: Duration) -> std::result::Result<bool, NotNow> {
        self.tracks_on(&self.conn, timeout).await
    }

    /// [`tracks`](Self::tracks), asked on `tracker` (a Sentinel master's, of one generation).
    async fn tracks_on(&self, tracker: &Connection, timeout: Duration) -> std::result::Result<bool, NotNow> {
        let mut info = redis::cmd("CLIENT");
        info.arg("TRACKINGINFO");
        if tracker.is_cluster() {
            let replies = per_master::ask(tracker, &info, timeout)
                .await
                .map_err(|e| classify("CLIENT TRACKINGINFO", e))?;
            let nodes = self.nodes.lock().clone();
            // a master the ids were not read on (a failover since) tracks nothing for us
            return Ok(replies.len() == nodes.len()
                && replies
                    .iter()
                    .all(|(addr, reply)| redirects_into(reply, nodes.get(addr).copied().unwrap_or(-1))));
        }
        let reply = script::cmd::<Value>(tracker, timeout, "", &info)
            .await
            .map_err(|e| classify("CLIENT TRACKINGINFO", e))?;
        Ok(redirects_into(&reply, self.redirect.load(Ordering::SeqCst)))
    }

    /// [`on`](Self::on) in a cluster: on every master, the tracker's connection redirects to the
    /// pub/sub connection's connection to that master (its id read there).
    async fn on_every_master(
        &self,
        pubsub: &Connection,
        tracker: &Connection,
        timeout: Duration,
    ) -> std::result::Result<(), NotNow> {
        let mut id = redis::cmd("CLIENT");
        id.arg("ID");
        let mut nodes = BTreeMap::new();
        for (addr, reply) in per_master::ask(pubsub, &id, timeout)
            .await
            .map_err(|e| classify("CLIENT ID", e))?
        {
            match reply {
                Value::Int(id) => nodes.insert(addr, id),
                Value::ServerError(e) => return Err(classify("CLIENT ID", Error::Redis(e.into()))),
                other => {
                    return Err(NotNow::Unsupported(format!(
                        "CLIENT ID on {addr} answered {other:?}"
                    )))
                }
            };
        }
        // no master may be left tracking for an earlier map
        self.nodes.lock().clear();
        for (addr, id) in &nodes {
            let mut on = redis::cmd("CLIENT");
            on.arg("TRACKING")
                .arg("ON")
                .arg("REDIRECT")
                .arg(*id)
                .arg("NOLOOP");
            match per_master::at(tracker, addr, &on, timeout).await {
                Ok(Value::Okay) => {}
                Ok(other) => {
                    return Err(NotNow::Unsupported(format!(
                        "CLIENT TRACKING ON REDIRECT on {addr} answered {other:?}"
                    )))
                }
                Err(Error::Redis(e)) if redirect_gone(&e) => return Err(NotNow::Failed(Error::Redis(e))),
                Err(e) => return Err(classify("CLIENT TRACKING ON REDIRECT ... NOLOOP", e)),
            }
        }
        *self.nodes.lock() = nodes;
        if !self.tracks_on(tracker, timeout).await? {
            // a master replaced or added meanwhile: read again, on the next round
            return Err(NotNow::Failed(Error::Protocol(
                "CLIENT TRACKINGINFO does not show the redirects just turned on on every master".into(),
            )));
        }
        self.failed_ons.store(0, Ordering::SeqCst);
        tracing::debug!(
            masters = self.nodes.lock().len(),
            "loss detection: tracking on the watch's own connections, without the echo of their writes"
        );
        Ok(())
    }

    /// Whether the server's tracking table has been dropping keys for reads of this
    /// connection's own: such a drop counts as this connection's change, so `NOLOOP` keeps it
    /// from being pushed, and the key is no longer watched. Told by the table holding fewer keys
    /// (`INFO stats`' `tracking_total_keys`) than `expected()`, the held keys the watch has read
    /// (counted after the server's count), at two checks in a row. `None` when `INFO` is refused
    /// (then it is not asked again) or failed.
    pub(super) async fn table_full(
        &self,
        expected: impl FnOnce() -> usize,
        timeout: Duration,
    ) -> Option<bool> {
        if self.info_refused.load(Ordering::SeqCst) {
            return None;
        }
        let mut info = redis::cmd("INFO");
        info.arg("stats");
        // summed over the masters of a cluster (each tracks the keys of its slots)
        let replies = match per_master::ask(&self.conn, &info, timeout).await {
            Ok(replies) => replies,
            Err(e) => {
                if matches!(classify("INFO", e), NotNow::Unsupported(_)) {
                    self.info_refused.store(true, Ordering::SeqCst);
                    tracing::info!("loss detection: INFO refused (allow +info): a full tracking table, which drops held keys without a word to this connection, cannot be told");
                }
                return None;
            }
        };
        let mut tracked: u64 = 0;
        for (_, reply) in replies {
            let text = match reply {
                Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
                Value::VerbatimString { text, .. } => text,
                Value::SimpleString(s) => s,
                _ => return None,
            };
            tracked += text
                .lines()
                .find_map(|l| l.strip_prefix("tracking_total_keys:"))
                .and_then(|n| n.trim().parse::<u64>().ok())?;
        }
        let short = if tracked < expected() as u64 {
            self.short_checks.fetch_add(1, Ordering::SeqCst) + 1
        } else {
            self.short_checks.store(0, Ordering::SeqCst);
            0
        };
        Some(short >= 2)
    }
}

/// The pub/sub connection's id: `CLIENT ID`, else the `id` of a `HELLO 3` reply (Redis 7
/// answers `HELLO` to every user).
async fn pubsub_id(pubsub: &Connection, timeout: Duration) -> std::result::Result<i64, NotNow> {
    let mut id = redis::cmd("CLIENT");
    id.arg("ID");
    match script::cmd::<i64>(pubsub, timeout, "", &id).await {
        Ok(id) => return Ok(id),
        Err(Error::Redis(e)) if crate::error::is_refusal(&e) => {}
        Err(e) => return Err(classify("CLIENT ID", e)),
    }
    let mut hello = redis::cmd("HELLO");
    hello.arg(3);
    let reply = script::cmd::<Value>(pubsub, timeout, "", &hello)
        .await
        .map_err(|e| classify("CLIENT ID and HELLO 3", e))?;
    field_int(&reply, "id")
        .ok_or_else(|| NotNow::Unsupported("HELLO 3 answered without the connection's id".into()))
}

/// Whether a `CLIENT TRACKINGINFO` reply says tracking is on, redirected to the connection
/// `id`, and that connection still there (no `broken_redirect` flag).
fn redirects_into(reply: &Value, id: i64) -> bool {
    let broken = super::map_pairs(reply).is_some_and(|fields| {
        fields.into_iter().any(|(k, v)| {
            let is_flags = match k {
                Value::BulkString(k) => k.as_slice() == b"flags",
                Value::SimpleString(k) => k == "flags",
                _ => false,
            };
            let (true, Value::Set(flags) | Value::Array(flags)) = (is_flags, v) else {
                return false;
            };
            flags.iter().any(|f| match f {
                Value::BulkString(f) => f.as_slice() == b"broken_redirect",
                Value::SimpleString(f) => f == "broken_redirect",
                _ => false,
            })
        })
    });
    super::tracks(reply) == Some(true) && !broken && field_int(reply, "redirect") == Some(id)
}

/// Says that the pub/sub connection tracks, and why.
fn echo(why: &str) {
    tracing::info!(
        why,
        "loss detection: tracking on the pub/sub connection (the renewals are pushed back and read again)"
    );
}

/// The Sentinel master moved while tracking was being turned on: tried again on the new one.
fn moving() -> NotNow {
    NotNow::Failed(Error::Redis(redis::RedisError::from((
        redis::ErrorKind::Io,
        "the Sentinel master moved while tracking was turned on",
    ))))
}

/// The integer field `name` of a map reply (`CLIENT TRACKINGINFO`'s `redirect`, `HELLO`'s `id`).
fn field_int(reply: &Value, name: &str) -> Option<i64> {
    super::map_pairs(reply)?.into_iter().find_map(|(k, v)| {
        let is = match k {
            Value::BulkString(k) => k.as_slice() == name.as_bytes(),
            Value::SimpleString(k) => k == name,
            _ => false,
        };
        match (is, v) {
            (true, Value::Int(n)) => Some(*n),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss_watch::not_now::fixtures::{error_reply as reply, trackinginfo as info};

    #[test]
    fn tracking_counts_only_into_the_connection_it_was_turned_on_for_and_still_there() {
        assert!(redirects_into(&info(&["on", "noloop"], 7), 7));
        assert!(
            !redirects_into(&info(&["on", "noloop"], 7), 8),
            "another connection's"
        );
        assert!(!redirects_into(&info(&["off"], -1), 7));
        assert!(
            !redirects_into(&info(&["on", "noloop", "broken_redirect"], 7), 7),
            "the connection it redirects to is gone"
        );
    }

    #[test]
    fn a_redirect_to_a_connection_gone_is_tried_again_not_given_up() {
        let gone = reply("ERR The client ID you want redirect to does not exist");
        assert!(redirect_gone(&gone));
        // a plain error reply would otherwise count as a server that cannot do it
        assert!(matches!(
            classify("CLIENT TRACKING", Error::Redis(gone)),
            NotNow::Unsupported(_)
        ));
        assert!(!redirect_gone(&reply("ERR syntax error")));
        assert!(!redirect_gone(&reply(
            "NOPERM User x has no permissions to run the 'client|tracking' command"
        )));
    }
}
