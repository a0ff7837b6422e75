//! Redis Sentinel: the master of a named service, followed across failovers.
//!
//! A [`SentinelLink`] asks the sentinels for the master of the service, keeps one reconnecting
//! command connection and one RESP3 pub/sub connection to it (and, where the loss watch tracks
//! without the echo, the watch's own connection, opened on first use), and moves them all to
//! the new master when the topology changes. It learns of a change in three ways:
//!
//! * a reply that says the node is no longer a usable master: `READONLY` (a demoted master or a
//!   replica), `MASTERDOWN` (a replica that lost its master) or `LOADING` (a restarted node still
//!   reading its data). None of these ran the command, so after moving to the new master the
//!   command is sent once more (safe: nothing happened the first time);
//! * a connection error (refused, reset, timed out): the link asks the sentinels in the
//!   background; the command's own error goes back to the caller, because it may or may not have
//!   run (the lock core settles such ambiguous attempts itself);
//! * a background check every [`Config::with_sentinel_scan_interval`](crate::Config::with_sentinel_scan_interval)
//!   (Redisson's `scanInterval`, 1 s), so even an idle client, and the pub/sub connection, which
//!   sends no commands of its own, follow a failover.
//!
//! When the master moves, every channel the hub has subscribed is subscribed again on the new
//! master before the old connection is dropped, and every local waiter is woken to re-try (an
//! unlock published during the move may have been missed).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use redis::aio::{ConnectionLike, ConnectionManager};
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{Cmd, Pipeline, ProtocolVersion, RedisFuture, RedisResult, Value};

use crate::config::Config;
use crate::error::{Error, Result};

/// What the user told us about the sentinels and the master.
#[derive(Clone)]
pub(crate) struct SentinelSpec {
    /// Sentinel URLs (`redis://[user:password@]host:port`; credentials are the sentinels' own).
    pub(crate) nodes: Vec<String>,
    /// The monitored service (`sentinel monitor <name> ...`).
    pub(crate) master_name: String,
    /// Credentials for the master (and replicas), not for the sentinels.
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) db: i64,
    /// TLS for the `rediss://` sentinels, and for the master when the last sentinel is one.
    #[cfg(feature = "tls-rustls")]
    pub(crate) tls: Option<crate::Tls>,
}

impl std::fmt::Debug for SentinelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentinelSpec")
            .field("nodes", &self.nodes.len())
            .field("master_name", &self.master_name)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// The current master's connections.
#[derive(Clone)]
struct Bound {
    generation: u64,
    addr: String,
    /// What the connections are opened from (the tracker is opened when first used).
    client: redis::Client,
    commands: ConnectionManager,
    pubsub: Option<ConnectionManager>,
    /// The loss watch's own connection to this master (see [`Purpose::Tracker`]), once used.
    tracker: Option<ConnectionManager>,
}

/// Which of the master's connections a [`SentinelConnection`] sends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// The command connection.
    Commands,
    /// The loss watch's own connection, where held keys are renewed and read so that they are
    /// tracked for it alone; opened on each master when first used.
    Tracker,
}

/// Where a link delivers what the master's pub/sub connection pushes (the client's pub/sub
/// hub), and whom it wakes once the master moved.
pub(crate) trait PushSink: Send + Sync + 'static {
    /// A push from the server; must not block.
    fn push(&self, push: redis::PushInfo);
    /// Every waiter re-tries (an unlock may have been published while the link moved).
    fn wake_all(&self);
}

pub(crate) struct SentinelLink {
    spec: SentinelSpec,
    sentinels: tokio::sync::Mutex<SentinelClient>,
    /// Serialises moves (one at a time; later callers see the new generation and return).
    moving: tokio::sync::Mutex<()>,
    bound: Mutex<Bound>,
    generation: AtomicU64,
    config: Config,
    sink: Arc<dyn PushSink>,
    /// Channels the hub has subscribed through us (re-subscribed on the new master).
    subscribed: Mutex<HashSet<String>>,
}

impl SentinelLink {
    /// Finds the master through the sentinels and connects to it.
    pub(crate) async fn connect(
        spec: SentinelSpec,
        config: &Config,
        sink: Arc<dyn PushSink>,
    ) -> Result<Arc<Self>> {
        if spec.nodes.is_empty() {
            return Err(Error::InvalidArgument("no sentinel addresses given".into()));
        }
        if spec.master_name.is_empty() {
            return Err(Error::InvalidArgument("the sentinel master name is empty".into()));
        }
        let mut sentinels = sentinel_client(&spec)
            .map_err(|e| Error::InvalidArgument(format!("bad sentinel configuration: {e}")))?;
        let master = tokio::time::timeout(config.connect_timeout, sentinels.async_get_client())
            .await
            .map_err(|_| Error::CommandTimeout(config.connect_timeout))??;
        let master = master_client(&spec, master)?;
        let bound = bind(&master, config, &sink, 0).await?;
        tracing::info!(master = %bound.addr, service = %spec.master_name, "sentinel: connected to the master");
        let link = Arc::new(SentinelLink {
            spec,
            sentinels: tokio::sync::Mutex::new(sentinels),
            moving: tokio::sync::Mutex::new(()),
            bound: Mutex::new(bound),
            generation: AtomicU64::new(0),
            config: config.clone(),
            sink,
            subscribed: Mutex::new(HashSet::new()),
        });
        spawn_scanner(Arc::downgrade(&link), config.sentinel_scan_interval);
        Ok(link)
    }

    fn current(&self) -> Bound {
        self.bound.lock().clone()
    }

    /// The current master's pub/sub connection (it moves with the master).
    pub(crate) fn pubsub_conn(&self) -> Option<ConnectionManager> {
        self.current().pubsub
    }

    /// The address of the master in use (for diagnostics and tests).
    pub(crate) fn master_addr(&self) -> String {
        self.bound.lock().addr.clone()
    }

    /// How many times the link has moved to another master (every connection of one
    /// generation is to the same master).
    pub(crate) fn generation(&self) -> u64 {
        self.bound.lock().generation
    }

    /// The current master's pub/sub connection with its generation, read together.
    pub(crate) fn pubsub_at(&self) -> Option<(u64, ConnectionManager)> {
        let b = self.bound.lock();
        Some((b.generation, b.pubsub.clone()?))
    }

    /// The tracker of generation `generation`, opened there if need be; `None` once the link
    /// has moved on.
    pub(crate) async fn tracker_at(&self, generation: u64) -> RedisResult<Option<ConnectionManager>> {
        let bound = self.current();
        if bound.generation != generation {
            return Ok(None);
        }
        self.conn_of(&bound, Purpose::Tracker).await.map(Some)
    }

    /// Closes the current master's tracker (the loss watch tracks on the pub/sub connection
    /// from now on, so nothing opens it again).
    pub(crate) fn drop_tracker(&self) {
        self.bound.lock().tracker = None;
    }

    /// `bound`'s connection for `role`; the tracker is opened on first use, once per master.
    async fn conn_of(&self, bound: &Bound, purpose: Purpose) -> RedisResult<ConnectionManager> {
        match (purpose, &bound.tracker) {
            (Purpose::Commands, _) => Ok(bound.commands.clone()),
            (Purpose::Tracker, Some(t)) => Ok(t.clone()),
            (Purpose::Tracker, None) => {
                let opened = tokio::time::timeout(
                    self.config.connect_timeout,
                    bound
                        .client
                        .get_connection_manager_with_config(self.config.manager_config()),
                )
                .await
                .map_err(|_| {
                    redis::RedisError::from((
                        redis::ErrorKind::Io,
                        "connecting the loss watch's own connection to the master timed out",
                    ))
                })??;
                let mut b = self.bound.lock();
                if b.generation != bound.generation {
                    // the master moved meanwhile: this connection is to the old one
                    return Ok(opened);
                }
                Ok(b.tracker.get_or_insert(opened).clone())
            }
        }
    }

    /// Asks the sentinels for the master and moves there if it changed since `seen`. Returns
    /// whether the link is now on another generation than `seen`.
    async fn follow(self: &Arc<Self>, seen: u64) -> bool {
        let _one = self.moving.lock().await;
        if self.generation.load(Ordering::SeqCst) != seen {
            return true;
        }
        let client = {
            let mut s = self.sentinels.lock().await;
            match tokio::time::timeout(self.config.connect_timeout, s.async_get_client()).await {
                Ok(Ok(c)) => match master_client(&self.spec, c) {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::warn!(error = %e, service = %self.spec.master_name, "sentinel: cannot use the master's address");
                        return false;
                    }
                },
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, service = %self.spec.master_name, "sentinel: no master known");
                    return false;
                }
                Err(_) => {
                    tracing::debug!(service = %self.spec.master_name, "sentinel: asking for the master timed out");
                    return false;
                }
            }
        };
        let addr = client.get_connection_info().addr().to_string();
        let old = self.current();
        if addr == old.addr {
            return false;
        }
        let next = seen + 1;
        let bound = match bind(&client, &self.config, &self.sink, next).await {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(error = %e, master = %addr, "sentinel: cannot connect to the new master yet");
                return false;
            }
        };
        // subscribe everything again on the new master before anyone uses it
        if let Some(ps) = &bound.pubsub {
            let names: Vec<String> = self.subscribed.lock().iter().cloned().collect();
            for name in names {
                let mut c = ps.clone();
                if let Err(e) = c.subscribe(&name).await {
                    tracing::debug!(channel = %name, error = %e, "sentinel: re-subscribe on the new master failed");
                }
            }
        }
        tracing::warn!(from = %old.addr, to = %addr, service = %self.spec.master_name, "sentinel: the master moved; following it");
        *self.bound.lock() = bound;
        self.generation.store(next, Ordering::SeqCst);
        // an unlock may have been published while we moved: every waiter re-tries
        self.sink.wake_all();
        true
    }

    /// SUBSCRIBE on the current master's pub/sub connection.
    pub(crate) async fn subscribe(self: &Arc<Self>, name: &str) -> RedisResult<()> {
        self.subscribed.lock().insert(name.to_owned());
        let Some(mut ps) = self.current().pubsub else {
            return Err(no_pubsub());
        };
        ps.subscribe(name).await
    }

    /// UNSUBSCRIBE on the current master's pub/sub connection.
    pub(crate) async fn unsubscribe(self: &Arc<Self>, name: &str) -> RedisResult<()> {
        self.subscribed.lock().remove(name);
        let Some(mut ps) = self.current().pubsub else {
            return Err(no_pubsub());
        };
        ps.unsubscribe(name).await
    }

    /// After a command failed with `e` on generation `seen`: whether to send it once more on
    /// the new master (only when nothing ran and the link moved). Connection errors start a
    /// check in the background and are returned as they are (the command may have run).
    async fn retry_after(self: &Arc<Self>, seen: u64, e: &redis::RedisError) -> bool {
        if moved(e) {
            return self.follow(seen).await;
        }
        if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() || e.is_connection_refusal() {
            let link = self.clone();
            tokio::spawn(async move {
                link.follow(seen).await;
            });
        }
        false
    }

    async fn request_one(self: &Arc<Self>, purpose: Purpose, cmd: &Cmd) -> RedisResult<Value> {
        let bound = self.current();
        let mut c = self.conn_of(&bound, purpose).await?;
        match c.req_packed_command(cmd).await {
            Err(e) if self.retry_after(bound.generation, &e).await => {
                let mut c = self.conn_of(&self.current(), purpose).await?;
                c.req_packed_command(cmd).await
            }
            res => res,
        }
    }

    async fn request_many(
        self: &Arc<Self>,
        purpose: Purpose,
        pipeline: &Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let bound = self.current();
        let mut c = self.conn_of(&bound, purpose).await?;
        match c.req_packed_commands(pipeline, offset, count).await {
            Err(e) if self.retry_after(bound.generation, &e).await => {
                let mut c = self.conn_of(&self.current(), purpose).await?;
                c.req_packed_commands(pipeline, offset, count).await
            }
            // a pipeline that ignores errors (a script and its WAIT) carries them in its replies;
            // a node that is no longer a writable master refused every write in it, so it is sent
            // once more on the new master
            Ok(replies) if replies.iter().any(moved_reply) && self.follow(bound.generation).await => {
                let mut c = self.conn_of(&self.current(), purpose).await?;
                c.req_packed_commands(pipeline, offset, count).await
            }
            res => res,
        }
    }
}

/// The sentinel client: the sentinels' own login from their URLs, the master's from the spec.
fn sentinel_client(spec: &SentinelSpec) -> RedisResult<SentinelClient> {
    #[cfg(feature = "tls-rustls")]
    if let Some(tls) = &spec.tls {
        return tls_sentinel_client(spec, tls);
    }
    let node_info = SentinelNodeConnectionInfo::default().set_redis_connection_info(master_login(spec));
    SentinelClient::build(
        spec.nodes.clone(),
        spec.master_name.clone(),
        Some(node_info),
        SentinelServerType::Master,
    )
}

fn master_login(spec: &SentinelSpec) -> redis::RedisConnectionInfo {
    let mut info = redis::RedisConnectionInfo::default().set_db(spec.db);
    if let Some(u) = &spec.username {
        info = info.set_username(u);
    }
    if let Some(p) = &spec.password {
        info = info.set_password(p);
    }
    info
}

/// With TLS settings: the `rediss://` sentinels get them; the master is reached over TLS (with
/// them) when the last sentinel address is `rediss://`, as Redisson decides.
#[cfg(feature = "tls-rustls")]
fn tls_sentinel_client(spec: &SentinelSpec, tls: &crate::Tls) -> RedisResult<SentinelClient> {
    use redis::sentinel::SentinelClientBuilder;
    use redis::{ConnectionAddr, IntoConnectionInfo};
    let infos = spec
        .nodes
        .iter()
        .map(|u| u.as_str().into_connection_info())
        .collect::<RedisResult<Vec<_>>>()?;
    let is_tls = |i: &redis::ConnectionInfo| matches!(i.addr(), ConnectionAddr::TcpTls { .. });
    if !infos.iter().any(is_tls) {
        return Err(redis::RedisError::from((
            redis::ErrorKind::InvalidClientConfig,
            "tls settings were given but no sentinel address is rediss://",
        )));
    }
    let mut addrs = Vec::with_capacity(infos.len());
    for info in &infos {
        if is_tls(info) {
            let client = tls.client(info.clone()).map_err(|e| {
                redis::RedisError::from((redis::ErrorKind::InvalidClientConfig, "tls", e.to_string()))
            })?;
            addrs.push(client.get_connection_info().addr().clone());
        } else {
            addrs.push(info.addr().clone());
        }
    }
    let mut b = SentinelClientBuilder::new(addrs, &spec.master_name, SentinelServerType::Master)?
        .set_client_to_redis_db(spec.db);
    let sentinel_login = infos[0].redis_settings();
    if let Some(u) = sentinel_login.username() {
        b = b.set_client_to_sentinel_username(u);
    }
    if let Some(p) = sentinel_login.password() {
        b = b.set_client_to_sentinel_password(p);
    }
    if let Some(u) = &spec.username {
        b = b.set_client_to_redis_username(u);
    }
    if let Some(p) = &spec.password {
        b = b.set_client_to_redis_password(p);
    }
    if infos.last().is_some_and(is_tls) {
        b = b
            .set_client_to_redis_tls_mode(redis::TlsMode::Secure)
            .set_client_to_redis_certificates(tls.certificates());
    }
    b.build()
}

/// The master's client as the sentinels gave it, with the TLS verification mode applied.
fn master_client(spec: &SentinelSpec, client: redis::Client) -> Result<redis::Client> {
    #[cfg(feature = "tls-rustls")]
    if let Some(tls) = &spec.tls {
        if matches!(
            client.get_connection_info().addr(),
            redis::ConnectionAddr::TcpTls { .. }
        ) {
            return tls.apply_verify(client);
        }
    }
    let _ = spec;
    Ok(client)
}

/// A reply that means "not a writable master", and that the command did not run (a script's
/// first write failed: nothing before it wrote). Before Redis 7 a script's failed call comes
/// back as `ERR` with the reason inside the message.
fn moved(e: &redis::RedisError) -> bool {
    matches!(e.code(), Some("READONLY" | "MASTERDOWN" | "LOADING"))
        || (e.code() == Some("ERR") && crate::error::names_not_master(&e.to_string()))
}

/// A reply inside a pipeline's replies that means "not a writable master".
fn moved_reply(v: &Value) -> bool {
    matches!(v, Value::ServerError(e) if matches!(e.code(), "READONLY" | "MASTERDOWN" | "LOADING")
        || (e.code() == "ERR" && e.details().is_some_and(crate::error::names_not_master)))
}

fn no_pubsub() -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::Io,
        "no pub/sub connection to the sentinel master",
    ))
}

async fn bind(
    client: &redis::Client,
    config: &Config,
    sink: &Arc<dyn PushSink>,
    generation: u64,
) -> Result<Bound> {
    let addr = client.get_connection_info().addr().to_string();
    let cfg = config.manager_config();
    let commands = tokio::time::timeout(
        config.connect_timeout,
        client.get_connection_manager_with_config(cfg.clone()),
    )
    .await
    .map_err(|_| Error::CommandTimeout(config.connect_timeout))??;
    let info = client.get_connection_info().clone();
    let settings = info.redis_settings().clone().set_protocol(ProtocolVersion::RESP3);
    let resp3 = redis::Client::open(info.set_redis_settings(settings))?;
    let pcfg = cfg
        .set_push_sender({
            let sink = sink.clone();
            move |push: redis::PushInfo| {
                sink.push(push);
                Ok::<(), ()>(())
            }
        })
        .set_automatic_resubscription();
    let pubsub = match tokio::time::timeout(
        config.connect_timeout,
        resp3.get_connection_manager_with_config(pcfg),
    )
    .await
    {
        Ok(Ok(p)) => Some(p),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "no RESP3 pub/sub connection to the master: waiters will poll");
            None
        }
        Err(_) => None,
    };
    Ok(Bound {
        generation,
        addr,
        client: client.clone(),
        commands,
        pubsub,
        tracker: None,
    })
}

fn spawn_scanner(link: Weak<SentinelLink>, every: Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(link) = link.upgrade() else { return };
            let seen = link.generation.load(Ordering::SeqCst);
            link.follow(seen).await;
        }
    });
}

/// The command connection of a sentinel-built client (see [`Connection::Sentinel`](crate::Connection)).
#[derive(Clone)]
pub struct SentinelConnection {
    link: Arc<SentinelLink>,
    purpose: Purpose,
}

impl SentinelConnection {
    /// `link`'s connection for `role`, on whichever master the link is on.
    pub(crate) fn new(link: Arc<SentinelLink>, purpose: Purpose) -> SentinelConnection {
        SentinelConnection { link, purpose }
    }

    /// `host:port` of the master this connection currently sends to.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) {
    /// if let redisson_lock::Connection::Sentinel(s) = client.connection() {
    ///     println!("master: {}", s.master_addr());
    /// }
    /// # }
    /// ```
    pub fn master_addr(&self) -> String {
        self.link.master_addr()
    }
}

impl ConnectionLike for SentinelConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let (link, purpose) = (self.link.clone(), self.purpose);
        Box::pin(async move { link.request_one(purpose, cmd).await })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let (link, purpose) = (self.link.clone(), self.purpose);
        Box::pin(async move { link.request_many(purpose, pipeline, offset, count).await })
    }

    fn get_db(&self) -> i64 {
        self.link.spec.db
    }
}
