//! The client: connections, the client id, and the per-client hub, watchdog and release worker.

use std::sync::Arc;

use redis::aio::ConnectionManagerConfig;
use redis::ProtocolVersion;

use crate::background::Background;
use crate::config::Config;
use crate::conn::Connection;
use crate::core::release::Releaser;
use crate::error::{Error, Result};
use crate::holds::Holds;
use crate::inner::ClientInner;
use crate::latch::LatchJanitor;
use crate::pubsub::{push_handler, Hub, PubSubConn};
use crate::RLock;

/// A connection to Redis for locks: one id, one pub/sub hub, one watchdog.
///
/// Equivalent to a `RedissonClient` for locking purposes: it gets a random UUID v4 id at
/// creation, which forms the first half of every hash field it writes
/// (`<client id>:<owner id>`). Cloning is cheap and shares everything. Background work (the
/// watchdog, pub/sub, releases queued by dropped guards) runs on the tokio runtime the client was
/// created in and stops when the last clone and the last guard are gone.
///
/// # Examples
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), redisson_lock::Error> {
/// let client = redisson_lock::Client::connect("redis://127.0.0.1:6379/").await?;
/// let lock = client.lock("lock:order:42")?;
/// let guard = lock.lock().await?;
/// // ... work on order 42 ...
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<ClientInner>,
}

/// Counters that show what a client is doing (for diagnostics and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientStats {
    /// (lock, owner) pairs the watchdog is renewing.
    pub renewing: usize,
    /// Unlock channels with at least one local waiter (or still being unsubscribed).
    pub channels: usize,
    /// Local waiters (tasks or threads blocked in an acquisition that has subscribed).
    pub waiters: usize,
    /// (lock, owner) entries in the hold table: live holds and operations in flight.
    pub holds: usize,
    /// Background work not finished yet: releases queued by dropped guards and cancelled
    /// unlocks, acquisitions being settled after their caller gave up, fair waiters leaving
    /// their queue.
    pub queued_releases: usize,
    /// Lock keys that subscribed waiters wait on, in the batched check for locks deleted
    /// without an unlock message (one call per 1,000 keys per
    /// [`poll_interval`](crate::Config::poll_interval)).
    pub watched_keys: usize,
}

impl Client {
    /// Connects with the default [`Config`]. `url` is a redis URL: `redis://[user:password@]host[:port][/db]`
    /// or `rediss://` for TLS (with the `tls-rustls` feature).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a malformed URL, [`Error::Redis`] when Redis cannot be reached.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// let client = redisson_lock::Client::connect("redis://:secret@127.0.0.1:6380/2").await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub async fn connect(url: &str) -> Result<Client> {
        Client::builder().url(url).build().await
    }

    /// Connects as the Redisson YAML or JSON configuration file at `path` says (servers, login,
    /// lock settings), the same file a Java service gives `Config.fromYAML`. See
    /// [`RedissonConfig`](crate::RedissonConfig) for the keys honoured, ignored and refused.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the file cannot be read or has a setting that cannot be
    /// honoured; [`Error::Redis`] when Redis cannot be reached.
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// let client = redisson_lock::Client::from_redisson_config("redisson.yaml").await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub async fn from_redisson_config(path: impl AsRef<std::path::Path>) -> Result<Client> {
        crate::RedissonConfig::from_path(path)?.connect().await
    }

    /// A builder for other connections or settings.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let client = redisson_lock::Client::builder()
    ///     .url("redis://127.0.0.1/")
    ///     .config(redisson_lock::Config::default().lock_watchdog_timeout(Duration::from_secs(10)))
    ///     .build()
    ///     .await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// This client's id: a lowercase UUID v4, like Java's `UUID.toString()`.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) {
    /// assert_eq!(client.id().len(), 36);
    /// # }
    /// ```
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// A handle to the reentrant lock `name` (Redisson's `getLock(name)`). Nothing is sent yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let lock = client.lock("lock:order:42")?;
    /// assert!(client.lock("").is_err());
    /// # let _ = lock; Ok(()) }
    /// ```
    pub fn lock(&self, name: &str) -> Result<RLock> {
        Ok(RLock::new(self.inner.clone(), self.key(name)?))
    }

    /// A handle to the read-write lock `name` (Redisson's `getReadWriteLock(name)`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let rw = client.read_write_lock("lock:catalog")?;
    /// let reading = rw.read_lock().lock().await?;
    /// # drop(reading); Ok(()) }
    /// ```
    pub fn read_write_lock(&self, name: &str) -> Result<crate::RReadWriteLock> {
        Ok(crate::RReadWriteLock::new(self.inner.clone(), self.key(name)?))
    }

    /// A handle to the fenced lock `name` (Redisson's `getFencedLock(name)`, 3.19+): an
    /// [`RLock`] whose every acquisition takes a fencing token. Nothing is sent yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let (token, guard) = client.fenced_lock("lock:order:42")?.lock_and_get_token().await?;
    /// # drop((token, guard)); Ok(()) }
    /// ```
    pub fn fenced_lock(&self, name: &str) -> Result<crate::RFencedLock> {
        Ok(crate::RFencedLock::new(self.inner.clone(), self.key(name)?))
    }

    /// A handle to the spin lock `name` (Redisson's `getSpinLock(name)`, 3.15+): an [`RLock`]
    /// without pub/sub whose waiters poll with a back-off. Nothing is sent yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let guard = client.spin_lock("lock:report")?.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub fn spin_lock(&self, name: &str) -> Result<crate::RSpinLock> {
        Ok(crate::RSpinLock::new(self.inner.clone(), self.key(name)?))
    }

    /// A handle to the non-reentrant lock `name` (Redisson's `getNonReentrantLock(name)`, 4.4+):
    /// an [`RLock`] that its owner cannot take twice. Nothing is sent yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let guard = client.non_reentrant_lock("lock:job")?.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub fn non_reentrant_lock(&self, name: &str) -> Result<crate::RNonReentrantLock> {
        Ok(crate::RNonReentrantLock::new(self.inner.clone(), self.key(name)?))
    }

    /// A handle to the fair lock `name` (Redisson's `getFairLock(name)`): waiters, Java and Rust,
    /// get it in arrival order. Nothing is sent yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let guard = client.fair_lock("lock:queue")?.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub fn fair_lock(&self, name: &str) -> Result<crate::RFairLock> {
        Ok(crate::RFairLock::new(self.inner.clone(), self.key(name)?))
    }

    /// A handle to the non-reentrant fair lock `name` (Redisson's
    /// `getNonReentrantFairLock(name)`, 4.4+). Nothing is sent yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let guard = client.non_reentrant_fair_lock("lock:queue")?.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub fn non_reentrant_fair_lock(&self, name: &str) -> Result<crate::RNonReentrantFairLock> {
        Ok(crate::RNonReentrantFairLock::new(
            self.inner.clone(),
            self.key(name)?,
        ))
    }

    /// A multi-lock over the reentrant locks `names` of this client, taken together (Redisson's
    /// `getMultiLock(getLock(a), getLock(b), ...)`). Members of other kinds or other clients (a
    /// RedLock over several Redis servers): [`RMultiLock::new`](crate::RMultiLock::new),
    /// [`RMultiLock::red_lock`](crate::RMultiLock::red_lock).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty list or an empty name.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let both = client.multi_lock(&["account:1", "account:2"])?;
    /// let guard = both.lock().await?;
    /// guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub fn multi_lock(&self, names: &[&str]) -> Result<crate::RMultiLock> {
        let members = names
            .iter()
            .map(|n| self.lock(n).map(|l| crate::Member::from(&l)))
            .collect::<Result<Vec<_>>>()?;
        crate::RMultiLock::new(members)
    }

    fn key(&self, name: &str) -> Result<String> {
        crate::name::lock_key(&self.inner.config.name_mapper, name)
    }

    /// What the client is doing right now.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) {
    /// println!("renewing {} locks", client.stats().renewing);
    /// # }
    /// ```
    pub fn stats(&self) -> ClientStats {
        ClientStats {
            renewing: self.inner.holds.renewing(),
            channels: self.inner.hub.channel_count(),
            waiters: self.inner.hub.waiter_count(),
            holds: self.inner.holds.entries(),
            queued_releases: self.inner.background.pending(),
            watched_keys: self.inner.vanish.len(),
        }
    }

    /// Shuts the client down gracefully, so that a service that exits leaves nothing behind in
    /// Redis: no lock to expire by its TTL, no fair-queue entry, no acquire record.
    ///
    /// 1. Acquisitions stop: new ones (also on clones of this client) fail with
    ///    [`Error::Shutdown`] without sending anything; waiting ones end with `Error::Shutdown`
    ///    at once, and those with a request in Redis within one command timeout, never with the
    ///    lock.
    /// 2. Every hold still live ends: its guards report
    ///    [`LostReason::Shutdown`](crate::LostReason::Shutdown) through `lost()` (so `run` bodies
    ///    stop) and their `unlock` returns [`Error::NotHeld`] without a round trip.
    /// 3. It waits until nothing of the client is in flight and its background work is done:
    ///    those holds are released (waiters, Java or Rust, are woken); so are the releases queued
    ///    by dropped guards and cancelled unlocks; every acquisition that was in Redis is settled,
    ///    and whatever Redis granted it released; fair waiters have left their queues; unlock
    ///    latches and acquire records are deleted.
    ///
    /// Call it after the work under the locks has stopped (or accept that it stops here). It
    /// returns as soon as all that is done (a round trip or two when Redis answers), within the
    /// longer of the [settle window](crate::Config::settle_window) and the watchdog timeout
    /// (30 s with the defaults) when it does not; calling it again does nothing more.
    ///
    /// # Errors
    ///
    /// [`Error::Unreleased`] with the keys of the locks it could not release (Redis unreachable
    /// or too slow until the bound): whatever Redis holds of them for this client expires with
    /// its TTL.
    ///
    /// # Cancel safety
    ///
    /// The work runs in the client's background tasks; dropping the future does not stop it,
    /// but no longer waits for it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let guard = client.lock("lock:job")?.lock().await?;
    /// drop(guard); // queued release
    /// client.shutdown().await?; // sent before we exit
    /// # Ok(()) }
    /// ```
    pub async fn shutdown(&self) -> Result<()> {
        let inner = &self.inner;
        inner.background.close();
        let remaining = inner.holds.close();
        tracing::info!(client_id = %inner.id, holds = remaining.len(), background = inner.background.pending(), "shutting down: releasing every hold");
        for r in remaining {
            let key = r.key.clone();
            let releaser = Releaser::new(inner.clone(), r.key.clone(), r.kind);
            let job: crate::background::Job = Box::new(move || {
                Box::pin(async move {
                    match releaser.release_all(&r.field).await {
                        Ok(_) | Err(Error::NotHeld { .. }) => Ok(()),
                        Err(e) => {
                            tracing::warn!(key = %r.key, field = %r.field, error = %e, "shutdown could not release a hold; it expires with its TTL");
                            Err(e)
                        }
                    }
                })
            });
            if !inner.background.push(&key, job) {
                return Err(Error::Shutdown); // the client's runtime has stopped
            }
        }
        let work = async {
            // turns: requests in flight or being settled; background: their follow-ups (each
            // queued before the turn it holds is given back), releases, give-ups
            loop {
                inner.holds.wait_idle().await;
                inner.background.flush().await;
                if inner.holds.is_idle() && inner.background.is_idle() {
                    break;
                }
            }
            inner.latches.flush().await;
        };
        let bound = inner.config.settling();
        let finished = tokio::time::timeout(bound, work).await.is_ok();
        let failures = inner.background.take_failures();
        let mut cause = failures.first().map(|(_, e)| e.clone());
        let mut keys: Vec<String> = failures.iter().map(|(k, _)| k.to_string()).collect();
        if !finished {
            cause = Some(format!("not done within {bound:?}"));
            keys.extend(inner.background.open_keys().iter().map(|k| k.to_string()));
            keys.extend(inner.holds.busy_keys().iter().map(|k| k.to_string()));
        }
        keys.sort();
        keys.dedup();
        match cause {
            Some(cause) if !keys.is_empty() => {
                tracing::warn!(client_id = %inner.id, ?keys, %cause, "shutdown left locks unreleased");
                Err(Error::Unreleased { keys, cause })
            }
            _ => {
                tracing::info!(client_id = %inner.id, "shut down: nothing left in Redis");
                Ok(())
            }
        }
    }

    /// The command connection (for application commands next to the locks).
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redis::RedisResult<()> {
    /// let mut conn = client.connection();
    /// let _: () = redis::cmd("PING").query_async(&mut conn).await?;
    /// # Ok(()) }
    /// ```
    pub fn connection(&self) -> Connection {
        self.inner.conn.clone()
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("id", &self.inner.id)
            .field("conn", &self.inner.conn)
            .field("publish", &self.inner.publish_cmd)
            .finish()
    }
}

enum Source {
    None,
    Url(String),
    Redis(redis::Client),
    Connection(Connection),
    Cluster(Vec<String>),
    Sentinel(crate::sentinel::SentinelSpec),
}

/// Builds a [`Client`] from a URL, a `redis::Client`, an existing connection or cluster nodes.
///
/// # Examples
///
/// Reusing a connection the application already has; give the `redis::Client` too so waiters
/// can subscribe to unlock messages (without it they poll every
/// [`poll_interval`](Config::poll_interval)):
///
/// ```no_run
/// # async fn demo() -> redisson_lock::Result<()> {
/// let redis = redis::Client::open("redis://127.0.0.1/")?;
/// let conn = redis.get_multiplexed_async_connection().await?;
/// let client = redisson_lock::Client::builder()
///     .connection(conn)
///     .pubsub_client(redis)
///     .build()
///     .await?;
/// # let _ = client; Ok(()) }
/// ```
pub struct ClientBuilder {
    source: Source,
    pubsub: Option<redis::Client>,
    config: Config,
    #[cfg(feature = "tls-rustls")]
    tls: Option<crate::Tls>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            source: Source::None,
            pubsub: None,
            config: Config::default(),
            #[cfg(feature = "tls-rustls")]
            tls: None,
        }
    }
}

impl ClientBuilder {
    /// Connect to this redis URL (a reconnecting connection manager, plus a RESP3 pub/sub connection).
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.source = Source::Url(url.into());
        self
    }

    /// Connect with this `redis::Client` (a reconnecting connection manager, plus pub/sub).
    pub fn redis_client(mut self, client: redis::Client) -> Self {
        self.source = Source::Redis(client);
        self
    }

    /// Send lock commands over a connection the application already has
    /// (`ConnectionManager`, `MultiplexedConnection` or `ClusterConnection`).
    pub fn connection(mut self, conn: impl Into<Connection>) -> Self {
        self.source = Source::Connection(conn.into());
        self
    }

    /// With [`connection`](Self::connection): where to open the pub/sub connection. With a
    /// cluster connection, `client`'s address is the seed node of a cluster pub/sub connection
    /// (sharded channels must be subscribed on the node that serves their slot); waiters then
    /// listen in the same [`PublishMode`](crate::PublishMode) the unlocks publish with.
    pub fn pubsub_client(mut self, client: redis::Client) -> Self {
        self.pubsub = Some(client);
        self
    }

    /// Connect to a Redis Cluster through these seed nodes (redis URLs).
    pub fn cluster<I, S>(mut self, nodes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.source = Source::Cluster(nodes.into_iter().map(Into::into).collect());
        self
    }

    /// Connect to the master of the Sentinel-monitored service `master_name`, found through
    /// these sentinels (redis URLs; a `user:password@` in them is the sentinels' own login). The
    /// client follows failovers by itself (see [`Connection::Sentinel`]); the master's own login
    /// is [`sentinel_master_auth`](Self::sentinel_master_auth). Redisson: `useSentinelServers()`
    /// with `sentinelAddresses` and `masterName`.
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// let client = redisson_lock::Client::builder()
    ///     .sentinel(["redis://10.0.0.1:26379", "redis://10.0.0.2:26379"], "mymaster")
    ///     .sentinel_master_auth(None, Some("master-secret".into()))
    ///     .build()
    ///     .await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn sentinel<I, S>(mut self, sentinels: I, master_name: impl Into<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let (username, password, db) = match &self.source {
            Source::Sentinel(s) => (s.username.clone(), s.password.clone(), s.db),
            _ => (None, None, 0),
        };
        self.source = Source::Sentinel(crate::sentinel::SentinelSpec {
            nodes: sentinels.into_iter().map(Into::into).collect(),
            master_name: master_name.into(),
            username,
            password,
            db,
            #[cfg(feature = "tls-rustls")]
            tls: None,
        });
        self
    }

    /// With [`sentinel`](Self::sentinel): the login (ACL user and password, or only a password)
    /// and database for the master and its replicas (Redisson: `username`, `password`, `database`
    /// of the sentinel config). Call after `sentinel`.
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// let client = redisson_lock::Client::builder()
    ///     .sentinel(["redis://127.0.0.1:26379"], "mymaster")
    ///     .sentinel_master_auth(Some("locks".into()), Some("s3cret".into()))
    ///     .build()
    ///     .await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn sentinel_master_auth(mut self, username: Option<String>, password: Option<String>) -> Self {
        if let Source::Sentinel(s) = &mut self.source {
            s.username = username;
            s.password = password;
        }
        self
    }

    /// With [`sentinel`](Self::sentinel): the master's database (Redisson: `database` of the
    /// sentinel config; default 0). Call after `sentinel`.
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// let client = redisson_lock::Client::builder()
    ///     .sentinel(["redis://127.0.0.1:26379"], "mymaster")
    ///     .sentinel_database(2)
    ///     .build()
    ///     .await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn sentinel_database(mut self, db: i64) -> Self {
        if let Source::Sentinel(s) = &mut self.source {
            s.db = db;
        }
        self
    }

    /// Use this configuration.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// TLS settings (trusted roots, client certificate, verification) for the `rediss://`
    /// addresses of [`url`](Self::url), [`cluster`](Self::cluster) or
    /// [`sentinel`](Self::sentinel) (feature `tls-rustls`). Without them a `rediss://` address
    /// trusts the system's roots and checks the host name. With a sentinel, the sentinels'
    /// `rediss://` addresses use them, and so does the master when the last sentinel address is
    /// `rediss://` (Redisson takes the master's scheme from the sentinels').
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// use redisson_lock::{Client, Tls, TlsVerify};
    /// let tls = Tls::new().truststore_file("ca.pem", None)?.verify(TlsVerify::CaOnly);
    /// let client = Client::builder().url("rediss://10.0.0.7:6380/").tls(tls).build().await?;
    /// # let _ = client; Ok(()) }
    /// ```
    #[cfg(feature = "tls-rustls")]
    pub fn tls(mut self, tls: crate::Tls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Connects and starts the background tasks. Must be called inside a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a bad URL or configuration; [`Error::Redis`] when Redis
    /// cannot be reached.
    pub async fn build(self) -> Result<Client> {
        let config = self.config;
        config.validate()?;
        #[cfg(feature = "tls-rustls")]
        let tls = self.tls;
        #[cfg(feature = "tls-rustls")]
        if tls.is_some() && matches!(self.source, Source::Redis(_) | Source::Connection(_)) {
            return Err(Error::InvalidArgument(
                "tls settings apply to url, cluster and sentinel connections; a redis::Client or \
                 connection brings its own (redis::Client::build_with_tls)"
                    .into(),
            ));
        }
        let channels = Hub::new_channels();
        let (conn, pubsub) = match self.source {
            Source::None => {
                return Err(Error::InvalidArgument(
                    "no Redis URL, client or connection given".into(),
                ))
            }
            Source::Url(url) => {
                let bad_url = |e: redis::RedisError| {
                    Error::InvalidArgument(format!("bad redis URL `{}`: {e}", redact(&url)))
                };
                let info = redis::IntoConnectionInfo::into_connection_info(url.as_str()).map_err(bad_url)?;
                #[cfg(feature = "tls-rustls")]
                let client = match &tls {
                    Some(tls) => tls.client(info)?,
                    None => redis::Client::open(info).map_err(bad_url)?,
                };
                #[cfg(not(feature = "tls-rustls"))]
                let client = redis::Client::open(info).map_err(bad_url)?;
                manager_pair(&client, &config, channels.clone()).await?
            }
            Source::Redis(client) => manager_pair(&client, &config, channels.clone()).await?,
            Source::Connection(conn) => {
                let pubsub = match self.pubsub {
                    // a cluster's channels live on the nodes serving their slots (sharded) or
                    // anywhere (classic): subscribe through a cluster connection seeded here,
                    // so whichever mode is resolved below is the one waiters listen with
                    Some(c) if conn.is_cluster() => {
                        Some(crate::pubsub::cluster_conn(&c, &config, channels.clone()).await?)
                    }
                    Some(c) => Some(pubsub_manager(&c, &config, channels.clone()).await?),
                    None => None,
                };
                (conn, pubsub)
            }
            Source::Cluster(nodes) => {
                if nodes.is_empty() {
                    return Err(Error::InvalidArgument("no cluster nodes given".into()));
                }
                #[cfg(feature = "tls-rustls")]
                let tls_nodes = nodes
                    .iter()
                    .any(|n| n.trim_start().to_ascii_lowercase().starts_with("rediss://"));
                let builder = redis::cluster::ClusterClientBuilder::new(nodes)
                    .use_protocol(ProtocolVersion::RESP3)
                    .push_sender(push_handler(channels.clone()))
                    .response_timeout(config.command_timeout)
                    .connection_timeout(config.connect_timeout);
                #[cfg(feature = "tls-rustls")]
                let builder = match &tls {
                    Some(_) if !tls_nodes => {
                        return Err(Error::InvalidArgument(
                            "tls settings were given but no cluster node address is rediss://".into(),
                        ))
                    }
                    Some(tls) => {
                        let b = builder.certs(tls.certificates());
                        match tls.get_verify() {
                            crate::TlsVerify::Strict => b,
                            crate::TlsVerify::CaOnly => b.danger_accept_invalid_hostnames(true),
                            _ => b.tls(redis::TlsMode::Insecure),
                        }
                    }
                    None => builder,
                };
                let cc = builder
                    .build()
                    .map_err(|e| Error::InvalidArgument(format!("bad cluster configuration: {e}")))?;
                let conn = cc.get_async_connection().await?;
                (Connection::Cluster(conn.clone()), Some(PubSubConn::Cluster(conn)))
            }
            Source::Sentinel(spec) => {
                #[cfg(feature = "tls-rustls")]
                let spec = crate::sentinel::SentinelSpec { tls, ..spec };
                let link = crate::sentinel::SentinelLink::connect(spec, &config, channels.clone()).await?;
                (
                    Connection::Sentinel(crate::sentinel::SentinelConnection(link.clone())),
                    Some(PubSubConn::Sentinel(link)),
                )
            }
        };

        let mode = crate::pubsub::resolve_mode(config.publish_mode, &conn, &config).await?;
        if pubsub.is_none() {
            tracing::info!(
                "no pub/sub connection: waiters poll every {:?}",
                config.poll_interval
            );
        }

        // Redisson checks synced replicas in every mode but single-server
        let sync_mode = match config.replica_sync {
            crate::ReplicaSync::Auto if matches!(conn, Connection::Sentinel(_) | Connection::Cluster(_)) => {
                crate::ReplicaSync::Required
            }
            crate::ReplicaSync::Auto => crate::ReplicaSync::Off,
            other => other,
        };
        let sync = Arc::new(crate::sync::ReplicaSyncer::new(
            sync_mode,
            config.replica_sync_timeout,
            conn.is_cluster(),
        ));
        let holds = Arc::new(Holds::new(&config));
        crate::watchdog::start(&holds, conn.clone(), sync.clone(), &config);
        let vanish = Arc::new(crate::vanish::Vanish::default());
        crate::vanish::start(&vanish, &holds, conn.clone(), &config);
        let latches = LatchJanitor::start(conn.clone(), config.command_timeout);
        let background = Background::start();
        let id = uuid::Uuid::new_v4().to_string();
        tracing::debug!(client_id = %id, ?mode, "lock client ready");
        Ok(Client {
            inner: Arc::new(ClientInner {
                id,
                hub: Arc::new(Hub::new(channels, pubsub, mode)),
                config,
                conn,
                holds,
                background,
                publish_cmd: mode.script_arg(),
                latches,
                sync,
                vanish,
            }),
        })
    }
}

pub(crate) fn manager_config(config: &Config) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_response_timeout(Some(config.command_timeout))
        .set_connection_timeout(Some(config.connect_timeout))
        .set_max_delay(std::time::Duration::from_secs(2))
}

async fn manager_pair(
    client: &redis::Client,
    config: &Config,
    channels: crate::pubsub::ChannelsHandle,
) -> Result<(Connection, Option<PubSubConn>)> {
    // The manager retries its first connection with backoff even when the password is wrong or
    // nothing listens; one plain attempt first makes those fail fast with the real error.
    let probe = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(config.connect_timeout))
        .set_response_timeout(Some(config.command_timeout));
    drop(
        client
            .get_multiplexed_async_connection_with_config(&probe)
            .await?,
    );
    let conn = client
        .get_connection_manager_with_config(manager_config(config))
        .await?;
    let pubsub = match pubsub_manager(client, config, channels).await {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!(error = %e, "no RESP3 pub/sub connection (Redis < 6?): waiters will poll");
            None
        }
    };
    Ok((Connection::Manager(conn), pubsub))
}

/// A RESP3 connection manager that delivers pushes to the hub and re-subscribes after reconnects.
async fn pubsub_manager(
    client: &redis::Client,
    config: &Config,
    channels: crate::pubsub::ChannelsHandle,
) -> Result<PubSubConn> {
    let info = client.get_connection_info().clone();
    let settings = info.redis_settings().clone().set_protocol(ProtocolVersion::RESP3);
    let resp3 = redis::Client::open(info.set_redis_settings(settings))?;
    let cfg = manager_config(config)
        .set_push_sender(push_handler(channels))
        .set_automatic_resubscription();
    Ok(PubSubConn::Manager(
        resp3.get_connection_manager_with_config(cfg).await?,
    ))
}

pub(crate) async fn supports_sharded(conn: &Connection, config: &Config) -> bool {
    let mut c = conn.clone();
    let mut cmd = redis::cmd("PUBSUB");
    cmd.arg("SHARDNUMSUB").arg("0");
    let probe = cmd.query_async::<redis::Value>(&mut c);
    matches!(
        tokio::time::timeout(config.command_timeout, probe).await,
        Ok(Ok(_))
    )
}

/// Hides a password in a URL for error messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://***@{}", &url[..s], &url[at + 1..]),
        _ => url.to_owned(),
    }
}
