//! Building a client for each topology — a URL, a `redis::Client`, a connection the
//! application already has, a Redis Cluster, a Sentinel-monitored master — with its pub/sub
//! connection and publish mode, and starting its per-client machinery.

use std::sync::Arc;

use redis::ProtocolVersion;

use crate::background::Background;
use crate::client::Client;
use crate::config::{Config, PublishMode};
use crate::conn::Connection;
use crate::error::{Error, Result};
use crate::holds::Holds;
use crate::inner::ClientInner;
use crate::latch_janitor::LatchJanitor;
use crate::loss_watch::Opener;
use crate::pubsub::{push_handler, Hub, PubSubCommands, PubSubConn, Pushes};

/// Connecting: the ways to build a [`Client`].
impl Client {
    /// Connects with the default [`Config`]. `url` is a redis URL: `redis://[user:password@]host[:port][/db]`
    /// or `rediss://` for TLS (with the `tls-rustls` feature).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a malformed URL (and for `rediss://` without the
    /// `tls-rustls` feature), [`Error::Connect`] naming the address when Redis cannot be reached.
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

    /// A builder for other connections or settings.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let client = redisson_lock::Client::builder()
    ///     .url("redis://127.0.0.1/")
    ///     .config(redisson_lock::Config::default().with_lock_watchdog_timeout(Duration::from_secs(10)))
    ///     .build()
    ///     .await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
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
/// [`poll_interval`](Config::with_poll_interval)):
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
    /// let tls = Tls::new().truststore_file("ca.pem", None)?.with_verify(TlsVerify::CaOnly);
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
    /// [`Error::InvalidArgument`] for a bad URL or configuration; [`Error::Connect`] (the URL or
    /// cluster nodes it tried, and why) when a [`url`](Self::url) or [`cluster`](Self::cluster)
    /// cannot be reached; [`Error::Redis`] (or [`Error::CommandTimeout`]) when a Sentinel set, a
    /// [`redis_client`](Self::redis_client) or a [`pubsub_client`](Self::pubsub_client) cannot.
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
        let pushes = Pushes::default();
        // a single server's pub/sub connection is opened from `opener`, and so is the loss
        // watch's own connection
        let (conn, pubsub, opener) = match self.source {
            Source::None => {
                return Err(Error::InvalidArgument(
                    "no Redis URL, client or connection given".into(),
                ))
            }
            Source::Url(url) => {
                let bad_url = |e: redis::RedisError| {
                    Error::InvalidArgument(format!("bad redis URL `{}`: {e}", redact(&url)))
                };
                #[cfg(not(feature = "tls-rustls"))]
                if needs_tls(&url) {
                    return Err(Error::InvalidArgument(format!(
                        "`{}` asks for TLS, which needs this crate's `tls-rustls` feature: \
                         redisson-lock = {{ version = \"...\", features = [\"tls-rustls\"] }}",
                        redact(&url)
                    )));
                }
                let info = redis::IntoConnectionInfo::into_connection_info(url.as_str()).map_err(bad_url)?;
                #[cfg(feature = "tls-rustls")]
                let client = match &tls {
                    Some(tls) => tls.client(info)?,
                    None => redis::Client::open(info).map_err(bad_url)?,
                };
                #[cfg(not(feature = "tls-rustls"))]
                let client = redis::Client::open(info).map_err(bad_url)?;
                let (conn, pubsub) = manager_pair(&client, &config, pushes.clone())
                    .await
                    .map_err(|e| connecting(e, &redact(&url)))?;
                (conn, pubsub, Some(Opener::Server(client)))
            }
            Source::Redis(client) => {
                let (conn, pubsub) = manager_pair(&client, &config, pushes.clone()).await?;
                (conn, pubsub, Some(Opener::Server(client)))
            }
            Source::Connection(conn) => {
                let (pubsub, opener) = match self.pubsub {
                    // a cluster's channels live on the nodes serving their slots (sharded) or
                    // anywhere (classic): subscribe through a cluster connection seeded here,
                    // so whichever mode is resolved below is the one waiters listen with
                    Some(c) if conn.is_cluster() => (
                        Some(crate::pubsub::cluster_conn(&c, &config, pushes.clone()).await?),
                        None,
                    ),
                    Some(c) => (
                        Some(pubsub_manager(&c, &config, pushes.clone()).await?),
                        Some(Opener::Server(c)),
                    ),
                    None => (None, None),
                };
                (conn, pubsub, opener)
            }
            Source::Cluster(nodes) => {
                if nodes.is_empty() {
                    return Err(Error::InvalidArgument("no cluster nodes given".into()));
                }
                let address = nodes.iter().map(|n| redact(n)).collect::<Vec<_>>().join(", ");
                let cc = cluster_client(
                    &nodes,
                    #[cfg(feature = "tls-rustls")]
                    tls.as_ref(),
                    &config,
                    Some(pushes.clone()),
                )?;
                let conn = cc
                    .get_async_connection()
                    .await
                    .map_err(|e| connecting(Error::Redis(e), &address))?;
                // the loss watch's own connections, should it track without the echo: the same
                // nodes, no pushes of their own (theirs are redirected)
                let tracker = cluster_client(
                    &nodes,
                    #[cfg(feature = "tls-rustls")]
                    tls.as_ref(),
                    &config,
                    None,
                )?;
                (
                    Connection::Cluster(conn.clone()),
                    Some(PubSubConn::Cluster(conn)),
                    Some(Opener::Cluster(tracker)),
                )
            }
            Source::Sentinel(spec) => {
                #[cfg(feature = "tls-rustls")]
                let spec = crate::sentinel::SentinelSpec { tls, ..spec };
                let link = crate::sentinel::SentinelLink::connect(
                    spec,
                    &config,
                    Arc::new(crate::pubsub::HubSink(pushes.clone())),
                )
                .await?;
                (
                    Connection::Sentinel(crate::sentinel::SentinelConnection::new(
                        link.clone(),
                        crate::sentinel::Purpose::Commands,
                    )),
                    Some(PubSubConn::Sentinel(link)),
                    None,
                )
            }
        };

        let commands = resolve_pubsub(config.publish_mode, &conn, &config).await?;
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
        let sync = Arc::new(crate::replica_sync::ReplicaSyncer::new(
            sync_mode,
            config.replica_sync_timeout,
            conn.is_cluster(),
        ));
        let slots = Arc::new(crate::slots::Slots::detect(&conn, config.command_timeout).await);
        let holds = Arc::new(Holds::new(&config));
        crate::watchdog::start(
            &holds,
            conn.clone(),
            sync.clone(),
            slots.clone(),
            pushes.invalidated.clone(),
            &config,
        );
        let gone_keys = Arc::new(crate::gone_keys::GoneKeys::default());
        crate::gone_keys::start(&gone_keys, &holds, conn.clone(), slots.clone(), &config);
        let id = uuid::Uuid::new_v4().to_string();
        crate::loss_watch::start(
            &holds,
            &conn,
            pubsub.as_ref(),
            opener.as_ref(),
            &id,
            &pushes.invalidated,
            &config,
        )
        .await;
        let latches = LatchJanitor::start(conn.clone(), slots.clone(), config.command_timeout);
        let background = Background::start();
        tracing::debug!(client_id = %id, ?commands, "lock client ready");
        Ok(Client {
            inner: Arc::new(ClientInner {
                id,
                hub: Arc::new(Hub::new(pushes.channels.clone(), pubsub, commands)),
                config,
                conn,
                holds,
                background,
                publish_cmd: commands.script_arg(),
                latches,
                replica_sync: sync,
                slots,
                gone_keys,
                invalidated: pushes.invalidated.clone(),
            }),
        })
    }
}

async fn manager_pair(
    client: &redis::Client,
    config: &Config,
    pushes: Pushes,
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
        .get_connection_manager_with_config(config.manager_config())
        .await?;
    let pubsub = match pubsub_manager(client, config, pushes).await {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!(error = %e, "no RESP3 pub/sub connection (Redis < 6, or a proxy that does not speak RESP3): waiters will poll");
            None
        }
    };
    Ok((Connection::Manager(conn), pubsub))
}

/// A RESP3 connection manager that delivers pushes to the hub and re-subscribes after reconnects.
async fn pubsub_manager(client: &redis::Client, config: &Config, pushes: Pushes) -> Result<PubSubConn> {
    let info = client.get_connection_info().clone();
    let settings = info.redis_settings().clone().set_protocol(ProtocolVersion::RESP3);
    let resp3 = redis::Client::open(info.set_redis_settings(settings))?;
    let cfg = config
        .manager_config()
        .set_push_sender(push_handler(pushes))
        .set_automatic_resubscription();
    let mut manager = resp3.get_connection_manager_with_config(cfg).await?;
    speaks_resp3(&mut manager, config.command_timeout).await?;
    Ok(PubSubConn::Manager(manager))
}

/// Whether the server really switched `conn` to RESP3: `HELLO 3` answers a map whose `proto` is
/// 3. Something in front of Redis may answer `HELLO` without switching (a cluster proxy that
/// replied an empty array was seen): its messages would then come as plain replies, which the
/// connection takes for answers to other commands, and waiters would never be woken. Such a
/// connection is refused here: waiters poll instead.
async fn speaks_resp3(conn: &mut redis::aio::ConnectionManager, timeout: std::time::Duration) -> Result<()> {
    let mut cmd = redis::cmd("HELLO");
    cmd.arg(3);
    let hello = cmd.query_async::<redis::Value>(conn);
    let reply = match tokio::time::timeout(timeout, hello).await {
        Ok(r) => r?,
        Err(_) => return Err(Error::CommandTimeout(timeout)),
    };
    let proto = match &reply {
        redis::Value::Map(fields) => fields.iter().find_map(|(k, v)| match (k, v) {
            (redis::Value::BulkString(k), redis::Value::Int(p)) if k.as_slice() == b"proto" => Some(*p),
            (redis::Value::SimpleString(k), redis::Value::Int(p)) if k == "proto" => Some(*p),
            _ => None,
        }),
        _ => None,
    };
    if proto == Some(3) {
        return Ok(());
    }
    Err(Error::Protocol(format!(
        "the server answered HELLO 3 with {reply:?}, not a RESP3 greeting: no push messages on this connection"
    )))
}

async fn supports_sharded(conn: &Connection, config: &Config) -> bool {
    let mut c = conn.clone();
    let mut cmd = redis::cmd("PUBSUB");
    cmd.arg("SHARDNUMSUB").arg("0");
    let probe = cmd.query_async::<redis::Value>(&mut c);
    match tokio::time::timeout(config.command_timeout, probe).await {
        Ok(Ok(_)) => true,
        Ok(Err(e))
            if crate::error::is_refusal(&e) && !e.to_string().to_ascii_lowercase().contains("subcommand") =>
        {
            tracing::warn!(error = %e, "PUBSUB refused: cannot tell whether the cluster has sharded pub/sub, so unlock messages go out classic (Redisson 3.22+ listens sharded in a cluster: PublishMode::Both reaches both)");
            false
        }
        _ => false,
    }
}

/// A connection failure while building the client, with the address it tried.
fn connecting(e: Error, address: &str) -> Error {
    match e {
        Error::Redis(source) => Error::Connect {
            address: address.to_owned(),
            source,
        },
        other => other,
    }
}

/// Whether a URL's scheme asks for TLS (`rediss://`, `valkeys://`).
#[cfg(not(feature = "tls-rustls"))]
fn needs_tls(url: &str) -> bool {
    let u = url.trim_start().to_ascii_lowercase();
    u.starts_with("rediss://") || u.starts_with("valkeys://")
}

/// Hides a password in a URL for error messages.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://***@{}", &url[..s], &url[at + 1..]),
        _ => url.to_owned(),
    }
}

/// Resolves the configured mode once per client: publishing and subscribing both follow it.
async fn resolve_pubsub(wanted: PublishMode, conn: &Connection, config: &Config) -> Result<PubSubCommands> {
    Ok(match wanted {
        PublishMode::Classic => PubSubCommands::Classic,
        PublishMode::Sharded if !conn.is_cluster() => return Err(Error::InvalidArgument(
            "PublishMode::Sharded needs a cluster connection (Redisson shards pub/sub only in cluster mode)"
                .into(),
        )),
        PublishMode::Sharded if !supports_sharded(conn, config).await => {
            return Err(Error::InvalidArgument(
                "PublishMode::Sharded needs sharded pub/sub (Redis 7.0+): this cluster does not answer PUBSUB SHARDNUMSUB; use PublishMode::Auto"
                    .into(),
            ))
        }
        PublishMode::Sharded => PubSubCommands::Sharded,
        PublishMode::Auto | PublishMode::Both if !conn.is_cluster() => PubSubCommands::Classic,
        PublishMode::Auto | PublishMode::Both if !supports_sharded(conn, config).await => PubSubCommands::Classic,
        PublishMode::Auto => PubSubCommands::Sharded,
        PublishMode::Both => PubSubCommands::Both,
    })
}

/// A cluster client for `nodes` with the crate's settings; `pushes`: where its connections'
/// pushes go (none: they are not read).
fn cluster_client(
    nodes: &[String],
    #[cfg(feature = "tls-rustls")] tls: Option<&crate::Tls>,
    config: &Config,
    pushes: Option<Pushes>,
) -> Result<redis::cluster::ClusterClient> {
    #[cfg(feature = "tls-rustls")]
    let tls_nodes = nodes
        .iter()
        .any(|n| n.trim_start().to_ascii_lowercase().starts_with("rediss://"));
    let mut builder = redis::cluster::ClusterClientBuilder::new(nodes.to_vec())
        .use_protocol(ProtocolVersion::RESP3)
        .response_timeout(config.command_timeout)
        .connection_timeout(config.connect_timeout);
    if let Some(pushes) = pushes {
        builder = builder.push_sender(push_handler(pushes));
    }
    #[cfg(feature = "tls-rustls")]
    let builder = match tls {
        Some(_) if !tls_nodes => {
            return Err(Error::InvalidArgument(
                "tls settings were given but no cluster node address is rediss://".into(),
            ))
        }
        Some(tls) => {
            let b = builder.certs(tls.certificates());
            match tls.verify() {
                crate::TlsVerify::Strict => b,
                crate::TlsVerify::CaOnly => b.danger_accept_invalid_hostnames(true),
                _ => b.tls(redis::TlsMode::Insecure),
            }
        }
        None => builder,
    };
    builder
        .build()
        .map_err(|e| Error::InvalidArgument(format!("bad cluster configuration: {e}")))
}
