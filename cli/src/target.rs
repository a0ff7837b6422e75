//! Where the commands connect, with which login and TLS settings, and what is there.
//!
//! * Where: `--url` (one address), `--sentinel ADDR... --master NAME` (a Sentinel-monitored
//!   master), or `--config FILE` (a Redisson YAML/JSON file: single server, cluster or
//!   sentinel). `--config` wins over the others, `--sentinel` over `--url`.
//! * Login: the URL's `user:password@`, `--user`, and the password from the environment
//!   (`REDISSON_LOCK_PASSWORD`, else `REDIS_PASSWORD`) so that it never has to be on the command
//!   line (where `ps` shows it). A password in the URL wins over the environment; `--user` over
//!   the URL's user. No message prints a password ([`redact`](crate::redact)).
//! * TLS: `rediss://` addresses, with `--tls-ca`, `--tls-cert` / `--tls-key` and
//!   `--tls-insecure` (the library's [`Tls`]; the raw connections of `list`, `watch` and
//!   `doctor` get the same certificates).
//! * What is there, for a URL: asked once at connect ([`Target::connect`]). `INFO cluster` says
//!   whether the node is cluster-enabled (when `INFO` is denied, `CLUSTER SLOTS` is asked
//!   anyway); a cluster node that answers `CLUSTER SLOTS` is a Redis Cluster, and the lock client
//!   is a cluster client seeded with that one node (it learns the others from it); a
//!   cluster-enabled address that refuses `CLUSTER SLOTS` is a cluster behind one address (a
//!   proxy, a serverless endpoint): the client stays on the plain URL, where the library groups
//!   the calls that carry several keys by slot.

use std::path::PathBuf;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{ClientTlsConfig, ConnectionAddr, ConnectionInfo, IntoConnectionInfo, TlsCertificates};
use redisson_lock::{
    Client, Config, Connection, Error, LossDetection, RedissonConfig, RedissonServers, Tls, TlsVerify,
};

use crate::{describe, one_line, redact, Failure};

/// Where the password comes from when the URL has none, first set wins.
pub(crate) const PASSWORD_VARS: [&str; 2] = ["REDISSON_LOCK_PASSWORD", "REDIS_PASSWORD"];

/// Connection and per-command timeout of the raw connections (and the lock client's connect).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);

/// The connection options of the command line.
#[derive(Debug, Default, Clone)]
pub(crate) struct ConnOpts {
    pub(crate) url: String,
    pub(crate) config: Option<PathBuf>,
    pub(crate) sentinels: Vec<String>,
    pub(crate) master: Option<String>,
    pub(crate) db: Option<i64>,
    pub(crate) user: Option<String>,
    pub(crate) tls_ca: Option<PathBuf>,
    pub(crate) tls_cert: Option<PathBuf>,
    pub(crate) tls_key: Option<PathBuf>,
    pub(crate) tls_insecure: bool,
}

/// Why the options cannot be used (found before anything connects).
#[derive(Debug)]
pub(crate) enum Usage {
    /// Options that do not go together (exit code 2, like the command lines clap rejects).
    Rejected { message: String, argument: &'static str },
    /// A file they name cannot be read or used (`--config`, `--tls-*`): an error, exit code 1.
    File(String),
}

fn usage(argument: &'static str, message: impl Into<String>) -> Usage {
    Usage::Rejected {
        message: message.into(),
        argument,
    }
}

fn file_error(message: impl Into<String>) -> Usage {
    Usage::File(message.into())
}

/// The TLS settings of the flags: for the lock client and for the raw connections.
#[derive(Clone)]
struct CliTls {
    lib: Tls,
    certs: TlsCertificates,
    insecure: bool,
}

/// Where to connect, as the options say (nothing is connected yet).
pub(crate) struct Target {
    endpoint: Endpoint,
    tls: Option<CliTls>,
}

enum Endpoint {
    /// One address (with the login folded in): a server, a cluster node or a proxy.
    Url { url: String, info: ConnectionInfo },
    /// A Sentinel-monitored master.
    Sentinel {
        sentinels: Vec<String>,
        master: String,
        username: Option<String>,
        password: Option<String>,
        db: i64,
    },
    /// A Redisson config file.
    Config(Box<RedissonConfig>, PathBuf),
}

/// What the target turned out to be, with the addresses the raw connections use.
#[derive(Clone, Debug)]
pub(crate) enum Topology {
    /// One server (standalone, or a master with replicas).
    Single(ConnectionInfo),
    /// A cluster-enabled address that refuses `CLUSTER SLOTS`: a cluster behind one address.
    OneAddress(ConnectionInfo),
    /// A Redis Cluster: the node the options named and every master serving slots.
    Cluster {
        seed: ConnectionInfo,
        masters: Vec<ConnectionInfo>,
    },
    /// The master of a Sentinel-monitored service (as the sentinels named it at connect).
    Sentinel { master: ConnectionInfo, name: String },
}

impl Topology {
    /// The node a single raw connection talks to: the server, the seed node, the master.
    pub(crate) fn node(&self) -> &ConnectionInfo {
        match self {
            Topology::Single(i) | Topology::OneAddress(i) => i,
            Topology::Cluster { seed, .. } => seed,
            Topology::Sentinel { master, .. } => master,
        }
    }

    /// `Some` for a cluster of more than one master (a plain URL cannot reach all its keys).
    pub(crate) fn filter_multi(self) -> Option<Topology> {
        match &self {
            Topology::Cluster { masters, .. } if masters.len() > 1 => Some(self),
            _ => None,
        }
    }

    /// For messages: `cluster of 3 masters (via 127.0.0.1:7000)`...
    pub(crate) fn describe(&self) -> String {
        match self {
            Topology::Single(i) => addr_str(i.addr()),
            Topology::OneAddress(i) => format!("{} (a cluster behind one address)", addr_str(i.addr())),
            Topology::Cluster { seed, masters } => format!(
                "a cluster of {} master(s), via {}",
                masters.len(),
                addr_str(seed.addr())
            ),
            Topology::Sentinel { master, name } => {
                format!(
                    "master `{name}` at {} (from the sentinels)",
                    addr_str(master.addr())
                )
            }
        }
    }
}

/// A connected lock client and what it is connected to.
pub(crate) struct Session {
    pub(crate) client: Client,
    pub(crate) topology: Topology,
}

/// `host:port` of an address.
pub(crate) fn addr_str(addr: &ConnectionAddr) -> String {
    match addr {
        ConnectionAddr::Tcp(h, p) | ConnectionAddr::TcpTls { host: h, port: p, .. } => {
            if h.contains(':') {
                format!("[{h}]:{p}")
            } else {
                format!("{h}:{p}")
            }
        }
        ConnectionAddr::Unix(p) => p.display().to_string(),
        _ => "?".to_owned(),
    }
}

/// RFC 3986 userinfo encoding: everything but the unreserved characters.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `url` with this login instead of its own (`scheme://user:password@rest`).
fn with_login(url: &str, username: Option<&str>, password: Option<&str>) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    // the authority ends at the first `/`, `?` or `#`; a login is what precedes its last `@`
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let login = match (username, password) {
        (None, None) => String::new(),
        (Some(u), None) => format!("{}@", encode(u)),
        (u, Some(p)) => format!("{}:{}@", encode(u.unwrap_or("")), encode(p)),
    };
    format!("{scheme}://{login}{host}{tail}")
}

/// The password from the environment, if any.
fn env_password() -> Option<String> {
    PASSWORD_VARS
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|p| !p.is_empty()))
}

/// `host:port`, `redis://host:port` or `rediss://host:port` → a sentinel URL; a bare address
/// takes the scheme of `tls`.
fn sentinel_url(addr: &str, tls: bool) -> String {
    if addr.contains("://") {
        addr.to_owned()
    } else if tls {
        format!("rediss://{addr}")
    } else {
        format!("redis://{addr}")
    }
}

fn read_file(flag: &'static str, path: &PathBuf) -> Result<Vec<u8>, Usage> {
    std::fs::read(path).map_err(|e| file_error(format!("{flag} {}: {e}", path.display())))
}

impl Target {
    /// Checks the options (files read, nothing connected).
    pub(crate) fn from_opts(o: &ConnOpts) -> Result<Target, Usage> {
        let tls = Self::tls(o)?;
        let endpoint = if let Some(path) = &o.config {
            let file =
                redisson_lock::RedissonConfig::from_path(path).map_err(|e| file_error(describe(&e)))?;
            Endpoint::Config(Box::new(file), path.clone())
        } else if !o.sentinels.is_empty() {
            let Some(master) = o.master.clone() else {
                return Err(usage(
                    "--master",
                    "--sentinel needs --master NAME (the monitored master's name)",
                ));
            };
            let sentinels: Vec<String> = o
                .sentinels
                .iter()
                .flat_map(|s| s.split(','))
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| sentinel_url(s, tls.is_some()))
                .collect();
            for s in &sentinels {
                crate::check_scheme(s).map_err(|Failure(m)| usage("--sentinel", m))?;
                s.as_str()
                    .into_connection_info()
                    .map_err(|e| usage("--sentinel", format!("bad sentinel address {}: {e}", redact(s))))?;
            }
            Endpoint::Sentinel {
                sentinels,
                master,
                username: o.user.clone(),
                password: env_password(),
                db: o.db.unwrap_or(0),
            }
        } else {
            crate::check_scheme(&o.url).map_err(|Failure(m)| usage("--url", m))?;
            let mut info = o
                .url
                .as_str()
                .into_connection_info()
                .map_err(|e| usage("--url", format!("bad redis URL {}: {e}", redact(&o.url))))?;
            let username = o
                .user
                .clone()
                .or_else(|| info.redis_settings().username().map(str::to_owned));
            let password = info
                .redis_settings()
                .password()
                .map(str::to_owned)
                .or_else(env_password);
            let mut settings = info.redis_settings().clone();
            if let Some(u) = &username {
                settings = settings.set_username(u);
            }
            if let Some(p) = &password {
                settings = settings.set_password(p);
            }
            if let Some(db) = o.db {
                settings = settings.set_db(db);
            }
            info = info.set_redis_settings(settings);
            let mut url = with_login(&o.url, username.as_deref(), password.as_deref());
            if let Some(db) = o.db {
                url = with_db(&url, db);
            }
            if tls.is_some() && !matches!(info.addr(), ConnectionAddr::TcpTls { .. }) {
                return Err(usage(
                    "--url",
                    format!(
                        "--tls-* options were given but {} is not a rediss:// URL (write rediss://host:port)",
                        redact(&o.url)
                    ),
                ));
            }
            Endpoint::Url { url, info }
        };
        if o.config.is_none() && o.master.is_some() && o.sentinels.is_empty() {
            return Err(usage(
                "--master",
                "--master names the master of --sentinel ADDR; give both",
            ));
        }
        Ok(Target { endpoint, tls })
    }

    fn tls(o: &ConnOpts) -> Result<Option<CliTls>, Usage> {
        if o.tls_ca.is_none() && o.tls_cert.is_none() && o.tls_key.is_none() && !o.tls_insecure {
            return Ok(None);
        }
        if o.config.is_some() {
            return Err(usage(
                "--config",
                "--tls-* options do not apply to --config: its ssl* keys are used (sslTruststore, sslKeystore, sslVerificationMode)",
            ));
        }
        let mut lib = Tls::new();
        let mut certs = TlsCertificates {
            client_tls: None,
            root_cert: None,
        };
        if let Some(ca) = &o.tls_ca {
            let pem = read_file("--tls-ca", ca)?;
            lib = lib
                .root_certificates_pem(pem.clone())
                .map_err(|e| file_error(format!("--tls-ca {}: {}", ca.display(), describe(&e))))?;
            certs.root_cert = Some(pem);
        }
        match (&o.tls_cert, &o.tls_key) {
            (Some(c), Some(k)) => {
                let (cert, key) = (read_file("--tls-cert", c)?, read_file("--tls-key", k)?);
                lib = lib
                    .client_identity_pem(cert.clone(), key.clone())
                    .map_err(|e| file_error(format!("--tls-cert/--tls-key: {}", describe(&e))))?;
                certs.client_tls = Some(ClientTlsConfig {
                    client_cert: cert,
                    client_key: key,
                });
            }
            (Some(_), None) => {
                return Err(usage(
                    "--tls-cert",
                    "--tls-cert needs --tls-key (the client certificate's private key)",
                ))
            }
            (None, Some(_)) => {
                return Err(usage(
                    "--tls-key",
                    "--tls-key needs --tls-cert (the client certificate)",
                ))
            }
            (None, None) => {}
        }
        if o.tls_insecure {
            lib = lib.with_verify(TlsVerify::None);
        }
        Ok(Some(CliTls {
            lib,
            certs,
            insecure: o.tls_insecure,
        }))
    }

    /// A raw `redis::Client` for `info` with the TLS settings of the flags (a config file's
    /// `ssl*` settings cannot be read back from the library: its raw connections trust the
    /// system's roots).
    pub(crate) fn raw(&self, info: ConnectionInfo) -> Result<redis::Client, Failure> {
        let shown = addr_str(info.addr());
        let bad = |e: redis::RedisError| Failure(format!("cannot use {shown}: {e}"));
        match (&self.tls, info.addr()) {
            (Some(tls), ConnectionAddr::TcpTls { .. }) => {
                let client = redis::Client::build_with_tls(info, tls.certs.clone()).map_err(bad)?;
                if !tls.insecure {
                    return Ok(client);
                }
                let info = client.get_connection_info().clone();
                let mut addr = info.addr().clone();
                if let ConnectionAddr::TcpTls { insecure, .. } = &mut addr {
                    *insecure = true;
                }
                redis::Client::open(info.set_addr(addr)).map_err(bad)
            }
            _ => redis::Client::open(info).map_err(bad),
        }
    }

    /// A raw multiplexed connection to `info` (5 s to connect and per command).
    pub(crate) async fn raw_conn(&self, info: &ConnectionInfo) -> Result<MultiplexedConnection, Failure> {
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT));
        self.raw(info.clone())?
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| {
                Failure(format!(
                    "cannot connect to {}: {}",
                    addr_str(info.addr()),
                    one_line(&e.to_string())
                ))
            })
    }

    /// A RESP3 cluster connection seeded with `seed` whose pushes (published messages) go to
    /// `tx`: subscriptions go to the right nodes (a sharded channel to its slot's master) and
    /// follow the cluster's changes.
    pub(crate) async fn cluster_subscriber(
        &self,
        seed: &ConnectionInfo,
        tx: tokio::sync::mpsc::UnboundedSender<redis::PushInfo>,
    ) -> Result<redis::cluster_async::ClusterConnection, Failure> {
        let settings = seed
            .redis_settings()
            .clone()
            .set_protocol(redis::ProtocolVersion::RESP3);
        let builder = redis::cluster::ClusterClientBuilder::new([seed.clone().set_redis_settings(settings)])
            .use_protocol(redis::ProtocolVersion::RESP3)
            .push_sender(tx)
            .connection_timeout(TIMEOUT)
            .response_timeout(TIMEOUT);
        let builder = match &self.tls {
            Some(t) if matches!(seed.addr(), ConnectionAddr::TcpTls { .. }) => {
                let b = builder.certs(t.certs.clone());
                if t.insecure {
                    b.tls(redis::TlsMode::Insecure)
                } else {
                    b
                }
            }
            _ => builder,
        };
        let shown = addr_str(seed.addr());
        builder
            .build()
            .map_err(|e| Failure(format!("cannot use cluster node {shown}: {e}")))?
            .get_async_connection()
            .await
            .map_err(|e| Failure(format!("cannot subscribe through cluster node {shown}: {e}")))
    }

    /// What the address the options name is, without building a lock client (doctor).
    pub(crate) async fn topology(&self) -> Result<Topology, Failure> {
        match &self.endpoint {
            Endpoint::Url { info, url } => self.probe(info, url).await,
            Endpoint::Config(file, _) => match file.servers() {
                RedissonServers::Single { url } => Ok(Topology::Single(info_of(url)?)),
                RedissonServers::Cluster { nodes } => self.cluster_of(nodes).await,
                _ => Ok(self.connect(false).await?.topology),
            },
            Endpoint::Sentinel { .. } => Ok(self.connect(false).await?.topology),
        }
    }

    /// Connects a lock client, and says what it is connected to. `holds`: the command holds
    /// locks, so it wants to know at once when one is lost (the loss watch, whose set-up may
    /// write a probe key); the read-only commands connect with renewal only and write nothing.
    pub(crate) async fn connect(&self, holds: bool) -> Result<Session, Failure> {
        let loss = match holds {
            true => LossDetection::Tracking,
            false => LossDetection::Renewal,
        };
        let config = Config::default()
            .with_connect_timeout(TIMEOUT)
            .with_loss_detection(loss);
        match &self.endpoint {
            Endpoint::Url { url, info } => {
                let topology = self.probe(info, url).await?;
                let builder = Client::builder().config(config);
                let builder = match &topology {
                    Topology::Cluster { .. } => builder.cluster([url.clone()]),
                    _ => builder.url(url.clone()),
                };
                let builder = match &self.tls {
                    Some(t) => builder.tls(t.lib.clone()),
                    None => builder,
                };
                let client = builder
                    .build()
                    .await
                    .map_err(|e| connect_failure(e, &redact(url)))?;
                Ok(Session { client, topology })
            }
            Endpoint::Sentinel {
                sentinels,
                master,
                username,
                password,
                db,
            } => {
                let builder = Client::builder()
                    .config(config)
                    .sentinel(sentinels.clone(), master.clone())
                    .sentinel_master_auth(username.clone(), password.clone())
                    .sentinel_database(*db);
                let builder = match &self.tls {
                    Some(t) => builder.tls(t.lib.clone()),
                    None => builder,
                };
                let shown = sentinels.iter().map(|s| redact(s)).collect::<Vec<_>>().join(", ");
                let client = builder.build().await.map_err(|e| {
                    connect_failure(e, &format!("master `{master}` through the sentinels {shown}"))
                })?;
                let tls = sentinels
                    .last()
                    .is_some_and(|s| s.to_ascii_lowercase().starts_with("rediss://"));
                let topology = sentinel_topology(&client, master, username, password, *db, tls)?;
                Ok(Session { client, topology })
            }
            Endpoint::Config(file, path) => {
                let builder = file
                    .client_builder()
                    .config(file.config().with_loss_detection(loss));
                let client = builder.build().await.map_err(|e| match e {
                    Error::Redis(r) => Failure(format!(
                        "cannot connect to the servers of {}: {r}",
                        path.display()
                    )),
                    Error::Connect { source, .. } => Failure(format!(
                        "cannot connect to the servers of {}: {source}",
                        path.display()
                    )),
                    other => Failure(describe(&other)),
                })?;
                let topology = match file.servers() {
                    RedissonServers::Single { url } => Topology::Single(info_of(url)?),
                    RedissonServers::Cluster { nodes } => self.cluster_of(nodes).await?,
                    RedissonServers::Sentinel {
                        master_name,
                        username,
                        password,
                        database,
                        sentinels,
                    } => {
                        let tls = sentinels
                            .last()
                            .is_some_and(|s| s.to_ascii_lowercase().starts_with("rediss://"));
                        sentinel_topology(&client, master_name, username, password, *database, tls)?
                    }
                    _ => {
                        return Err(Failure(
                            "this kind of server section is not supported here".into(),
                        ))
                    }
                };
                Ok(Session { client, topology })
            }
        }
    }

    /// The cluster a config file's seed nodes belong to (the first that answers).
    async fn cluster_of(&self, nodes: &[String]) -> Result<Topology, Failure> {
        let mut last = None;
        for n in nodes {
            let info = info_of(n)?;
            match self.probe(&info, n).await {
                Ok(Topology::Single(i) | Topology::OneAddress(i)) => {
                    return Ok(Topology::Cluster {
                        masters: vec![i.clone()],
                        seed: i,
                    })
                }
                Ok(t) => return Ok(t),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| Failure("no cluster node given".into())))
    }

    /// Asks the node at `info` what it is (see the module docs).
    async fn probe(&self, info: &ConnectionInfo, url: &str) -> Result<Topology, Failure> {
        let mut conn = self
            .raw_conn(info)
            .await
            .map_err(|Failure(m)| Failure(m.replace(&addr_str(info.addr()), &redact(url))))?;
        let enabled = match redis::cmd("INFO")
            .arg("cluster")
            .query_async::<String>(&mut conn)
            .await
        {
            Ok(text) => Some(text.lines().any(|l| l.trim() == "cluster_enabled:1")),
            Err(e) if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() => {
                return Err(Failure(format!("cannot reach redis at {}: {e}", redact(url))))
            }
            // INFO denied (an ACL user, a managed service): CLUSTER SLOTS tells as well
            Err(_) => None,
        };
        if enabled == Some(false) {
            return Ok(Topology::Single(info.clone()));
        }
        let slots = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query_async::<redis::Value>(&mut conn)
            .await;
        match slots {
            Ok(v) => {
                let masters = slot_masters(&v, info)?;
                if masters.is_empty() {
                    // a cluster node that serves no slot yet: nothing to route by
                    return Ok(if enabled == Some(true) {
                        Topology::OneAddress(info.clone())
                    } else {
                        Topology::Single(info.clone())
                    });
                }
                Ok(Topology::Cluster {
                    seed: info.clone(),
                    masters,
                })
            }
            Err(_) if enabled == Some(true) => Ok(Topology::OneAddress(info.clone())),
            Err(_) => Ok(Topology::Single(info.clone())),
        }
    }
}

/// `/db` of a URL set to `db`.
fn with_db(url: &str, db: i64) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    // drop an existing `/db` path, keep `?query` and `#fragment`
    let keep = tail.find(['?', '#']).map_or("", |i| &tail[i..]);
    format!("{scheme}://{authority}/{db}{keep}")
}

fn info_of(url: &str) -> Result<ConnectionInfo, Failure> {
    url.into_connection_info()
        .map_err(|e| Failure(format!("bad redis URL {}: {e}", redact(url))))
}

fn connect_failure(e: Error, shown: &str) -> Failure {
    match e {
        Error::Redis(r) => Failure(format!("cannot connect to {shown}: {}", one_line(&r.to_string()))),
        Error::Connect { source, .. } => Failure(format!(
            "cannot connect to {shown}: {}",
            one_line(&source.to_string())
        )),
        other => Failure(describe(&other)),
    }
}

/// The master a sentinel client is connected to, as a raw address with the master's login.
fn sentinel_topology(
    client: &Client,
    name: &str,
    username: &Option<String>,
    password: &Option<String>,
    db: i64,
    tls: bool,
) -> Result<Topology, Failure> {
    let Connection::Sentinel(s) = client.connection() else {
        return Err(Failure("not a sentinel connection".into()));
    };
    let addr = s.master_addr();
    let (host, port) = addr
        .rsplit_once(':')
        .and_then(|(h, p)| {
            Some((
                h.trim_start_matches('[').trim_end_matches(']'),
                p.parse::<u16>().ok()?,
            ))
        })
        .ok_or_else(|| Failure(format!("the sentinels named the master `{addr}`, not host:port")))?;
    let scheme = if tls { "rediss" } else { "redis" };
    let url = format!("{scheme}://{host}:{port}/{db}");
    let mut info = info_of(&url)?;
    let mut settings = info.redis_settings().clone();
    if let Some(u) = username {
        settings = settings.set_username(u);
    }
    if let Some(p) = password {
        settings = settings.set_password(p);
    }
    info = info.set_redis_settings(settings);
    Ok(Topology::Sentinel {
        master: info,
        name: name.to_owned(),
    })
}

/// The masters of a `CLUSTER SLOTS` reply, each once, reached with `seed`'s login and TLS.
fn slot_masters(reply: &redis::Value, seed: &ConnectionInfo) -> Result<Vec<ConnectionInfo>, Failure> {
    let mut out: Vec<ConnectionInfo> = Vec::new();
    let redis::Value::Array(ranges) = reply else {
        return Ok(out);
    };
    for range in ranges {
        let redis::Value::Array(parts) = range else {
            continue;
        };
        // [start, end, [host, port, id, ...], replicas...]
        let Some(redis::Value::Array(node)) = parts.get(2) else {
            continue;
        };
        let host: String = node
            .first()
            .and_then(|h| redis::from_redis_value_ref::<String>(h).ok())
            .unwrap_or_default();
        let Some(port) = node
            .get(1)
            .and_then(|p| redis::from_redis_value_ref::<u16>(p).ok())
        else {
            continue;
        };
        let host = if host.is_empty() || host == "?" {
            // a node that does not know its own address: the seed's host
            match seed.addr() {
                ConnectionAddr::Tcp(h, _) | ConnectionAddr::TcpTls { host: h, .. } => h.clone(),
                _ => continue,
            }
        } else {
            host
        };
        let mut addr = seed.addr().clone();
        match &mut addr {
            ConnectionAddr::Tcp(h, p) | ConnectionAddr::TcpTls { host: h, port: p, .. } => {
                *h = host;
                *p = port;
            }
            _ => {
                return Err(Failure(
                    "a cluster node reached over a unix socket (expected TCP)".into(),
                ))
            }
        }
        if !out.iter().any(|i| i.addr() == &addr) {
            out.push(seed.clone().set_addr(addr));
        }
    }
    out.sort_by_key(|i| addr_str(i.addr()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_are_folded_into_urls() {
        assert_eq!(
            with_login("redis://127.0.0.1:6379/2", Some("app"), Some("p@ss:w/rd")),
            "redis://app:p%40ss%3Aw%2Frd@127.0.0.1:6379/2"
        );
        assert_eq!(
            with_login("rediss://old:pw@h:1", None, Some("new")),
            "rediss://:new@h:1"
        );
        assert_eq!(with_login("redis://h:1/", Some("u"), None), "redis://u@h:1/");
        assert_eq!(with_login("redis://u:p@h", None, None), "redis://h");
        // a password redis-rs reads back exactly
        let url = with_login("redis://127.0.0.1:6379/", Some("a b"), Some("x%y@z#"));
        let info = url.as_str().into_connection_info().unwrap();
        assert_eq!(info.redis_settings().username(), Some("a b"));
        assert_eq!(info.redis_settings().password(), Some("x%y@z#"));
        assert_eq!(with_db("redis://h:1/3?x=1", 5), "redis://h:1/5?x=1");
        assert_eq!(with_db("redis://h:1", 5), "redis://h:1/5");
    }

    #[test]
    fn sentinel_addresses_take_a_scheme() {
        assert_eq!(sentinel_url("10.0.0.1:26379", false), "redis://10.0.0.1:26379");
        assert_eq!(sentinel_url("10.0.0.1:26379", true), "rediss://10.0.0.1:26379");
        assert_eq!(sentinel_url("redis://h:1", true), "redis://h:1");
    }

    #[test]
    fn slot_owners_once_each() {
        use redis::Value::{Array, BulkString, Int};
        let node = |h: &str, p: i64| Array(vec![BulkString(h.into()), Int(p), BulkString(b"id".to_vec())]);
        let reply = Array(vec![
            Array(vec![
                Int(0),
                Int(5460),
                node("127.0.0.1", 7000),
                node("127.0.0.1", 7003),
            ]),
            Array(vec![Int(5461), Int(10922), node("", 7001)]),
            Array(vec![Int(10923), Int(12000), node("127.0.0.1", 7000)]),
        ]);
        let seed = "redis://u:p@10.1.1.1:7000/".into_connection_info().unwrap();
        let masters = slot_masters(&reply, &seed).unwrap();
        let addrs: Vec<String> = masters.iter().map(|m| addr_str(m.addr())).collect();
        assert_eq!(addrs, ["10.1.1.1:7001", "127.0.0.1:7000"]);
        assert!(masters.iter().all(|m| m.redis_settings().password() == Some("p")));
    }
}
