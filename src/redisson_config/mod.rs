//! Reading Redisson's own YAML / JSON configuration file, so that a Rust service and a Java
//! service configure their locks (and their Redis connection) from **one** file.
//!
//! ```no_run
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> redisson_lock::Result<()> {
//! use redisson_lock::{Client, RedissonConfig};
//!
//! let parsed = RedissonConfig::from_path("redisson.yaml")?;
//! println!("watchdog: {:?}", parsed.config().lock_watchdog_timeout());
//! let client = parsed.connect().await?; // or Client::from_redisson_config("redisson.yaml")
//! # let _ = (client, Client::builder()); Ok(()) }
//! ```
//!
//! The file is read as Redisson 4.x's `Config.fromYAML` reads it (Redisson 3.x files are read the
//! same way: their keys are a subset). JSON is parsed by the same YAML parser, as Redisson does
//! (4.x has no `fromJSON`; a JSON document is a YAML document). Before parsing, `${NAME}` and
//! `${NAME:-default}` are replaced as Redisson's `ConfigSupport` does: `NAME` is made of letters,
//! digits, `_` and `.`; an unset variable without a default is **left as written** (Redisson
//! does not fail either; the literal `${NAME}` usually makes the address or number invalid
//! later, which is reported naming the key). Redisson also looks at Java system properties
//! (`-DNAME=...`); there are none in Rust, only the process environment (or the lookup given to
//! [`RedissonConfigLoader::env`]).
//!
//! # Keys
//!
//! Durations are integer milliseconds, as in Redisson. A value out of range (0, negative, above
//! [`MAX_DURATION`](crate::MAX_DURATION)) is an [`Error::InvalidArgument`] naming the key.
//!
//! | Redisson key | here |
//! |---|---|
//! | **top level** | |
//! | `lockWatchdogTimeout` | honoured: [`Config::with_lock_watchdog_timeout`] |
//! | `lockWatchdogBatchSize` | honoured: [`Config::with_watchdog_batch_size`] |
//! | `fairLockWaitTimeout` | honoured: [`Config::with_fair_lock_wait_timeout`] |
//! | `checkLockSyncedSlaves` | honoured as Redisson applies it: single server → [`ReplicaSync::Off`](crate::ReplicaSync::Off) (Redisson never sends `WAIT` there); cluster, sentinel and master/slave → `true` (default) [`ReplicaSync::Required`](crate::ReplicaSync::Required), `false` [`ReplicaSync::BestEffort`](crate::ReplicaSync::BestEffort) (Redisson still sends `WAIT` but keeps the result) |
//! | `slavesSyncTimeout` | honoured: [`Config::with_replica_sync_timeout`] |
//! | `nameMapper` | `org.redisson.config.DefaultNameMapper` (or absent): identity. Any other class: **refused**, unless registered with [`RedissonConfigLoader::name_mapper_class`] (Redisson has no built-in prefix mapper; a custom Java class cannot run here) |
//! | `username`, `password` | honoured (the server section's own, deprecated, `username`/`password` win, as in Redisson) |
//! | `commandMapper`, `credentialsResolver` | default class or absent: fine; any other class: **refused** (renamed commands / computed credentials cannot be reproduced) |
//! | `sslTruststore`, `sslTruststorePassword` | honoured (feature `tls-rustls`, for `rediss://` addresses): a `file:` URL as the JVM reads it (`file:/abs`, `file:///abs`, `file:relative` to the working directory); a PKCS#12 store (its certificate entries) or PEM. JKS/JCEKS stores, other URL schemes (`classpath:`, `https:`) and bare paths (which Redisson rejects too) are **refused** |
//! | `sslKeystore`, `sslKeystorePassword` | honoured: the client certificate for servers with `tls-auth-clients yes`; a PKCS#12 store's first private key entry (its key under the store password, as Java reads it) or PEM with both |
//! | `sslKeystoreType` | `PKCS12` or `PEM`: fine (the content decides); `JKS` / `JCEKS` / others **refused** |
//! | `sslVerificationMode` (3.41+), `sslEnableEndpointIdentification` (older) | honoured: `STRICT` (default; `true`) → [`TlsVerify::Strict`](crate::TlsVerify::Strict); `CA_ONLY` → `CaOnly`; `NONE` (`false`) → `None`, or `CaOnly` when a trust store is given (Redisson still checks the chain then) |
//! | `sslProtocols` | checked: a list without `TLSv1.2` and `TLSv1.3` is **refused** (rustls speaks only those); a narrower list is accepted with a warning (not enforced: the server picks 1.2 or 1.3) |
//! | `sslCiphers` | accepted with a warning, not enforced (rustls' own suites, AEAD only) |
//! | `sslProvider` (`JDK`/`OPENSSL`), `sslTrustManagerFactory`, `sslKeyManagerFactory` | ignored (rustls is the engine; the factories are Java objects Redisson skips in files) |
//! | `ssl*` placement | Redisson 4.x reads them at the top level, 3.x in the server section; both are read, the top level wins (and its `STRICT` default gives way to a section's other mode), as 4.x merges them. For a sentinel set, TLS is used for the `rediss://` sentinels and for the master when the last sentinel address is `rediss://`, as in Redisson. With plain `redis://` addresses the `ssl*` keys are ignored, as in Redisson |
//! | `codec` | ignored (locks do not use a codec; only Redisson's FasterMultiLock would) |
//! | `threads`, `nettyThreads`, `transportMode`, `executor`, `eventLoopGroup`, `nettyHook`, `referenceEnabled`, `keepPubSubOrder`, `useScriptCache`, `minCleanUpDelay`, `maxCleanUpDelay`, `cleanUpKeysAmount`, `reliableTopicWatchdogTimeout`, `useThreadClassLoader`, `addressResolverGroupFactory`, `lazyInitialization`, `protocol`, `valkeyCapabilities`, `connectionListener`, `tcp*`, anything else | ignored (logged with `tracing::debug!`; a server-section key within two letters of one read here, such as `adress`, is logged with `tracing::warn!` naming it, and named in the error when the key it meant is missing) |
//! | **`singleServerConfig`** | `address` (required), `database`, `username`, `password` → the connection; `timeout` → [`Config::with_command_timeout`]; `connectTimeout` → [`Config::with_connect_timeout`]; `retryAttempts` → [`Config::with_retry_attempts`]; `retryInterval` (3.x) and `retryDelay` (3.48+: `ConstantDelay` `delay`, or the jitter delays' `maxDelay`; wins over `retryInterval`) → [`Config::with_retry_interval`]; `subscriptionTimeout` → [`Config::with_subscription_timeout`]; pool sizes, `clientName`, `idleConnectionTimeout`, `pingConnectionInterval`, `subscriptionsPerConnection`, `reconnectionDelay`, `dnsMonitoring*`, ... ignored; `ssl*` as at the top level (Redisson 3.x spelling) |
//! | **`clusterServersConfig`** | `nodeAddresses` (required) → [`ClientBuilder::cluster`]; `shardedSubscriptionMode` `AUTO`/`ON`/`OFF` → [`PublishMode::Auto`](crate::PublishMode::Auto)/[`Sharded`](crate::PublishMode::Sharded)/[`Classic`](crate::PublishMode::Classic); `database` other than 0 **refused**; `natMapper` other than `DefaultNatMapper` **refused**; the timeouts and retries as above; `scanInterval`, `readMode`, `subscriptionMode`, `checkSlotsCoverage`, pool sizes, ... ignored |
//! | **`sentinelServersConfig`** | `sentinelAddresses` (required), `masterName` (required) → [`ClientBuilder::sentinel`]; `sentinelUsername`/`sentinelPassword` → the sentinels' login; `username`/`password`/`database` → the master's; `scanInterval` → [`Config::with_sentinel_scan_interval`]; the timeouts and retries as above; `natMapper` other than `DefaultNatMapper` **refused**; `checkSentinelsList`, `sentinelsDiscovery`, `checkSlaveStatusWithSyncing`, `readMode`, `subscriptionMode`, pool sizes, ... ignored |
//! | **`masterSlaveServersConfig`** | `masterAddress` (required), `database`, `username`, `password` → a connection to the master (locks only ever use the master); `slaveAddresses`, `readMode`, `subscriptionMode`, pool sizes ignored; the timeouts and retries as above |
//! | **`replicatedServersConfig`** | **refused** (not supported yet: which node is the master is found by polling all of them) |
//!
//! Addresses are `redis://` or `valkey://` (and `rediss://` / `valkeys://` for TLS, which needs
//! this crate's `tls-rustls` feature; without it the address is refused naming the key).
//!
//! # Why `serde_norway`
//!
//! `serde_yaml` is archived. `serde_norway` is its maintained fork (same data model, so the
//! parser is the one most Rust YAML users already run), and it keeps local tags
//! (`!name`) on values, which is how this module tells Redisson's class tags apart
//! (`nameMapper: !<com.acme.Mapper> {}`). Redisson rewrites `!<class>` to `!!class` before
//! SnakeYAML sees it; we rewrite both to `!class` (class names only, so `!!str` etc. keep their
//! meaning). `serde_yml` was rejected (unsound code, since abandoned), `yaml-rust2` drops tags in
//! its document loader, and `saphyr` is pre-1.0.

mod address;
mod env;
mod servers;
mod ssl;
mod suggest;
mod tags;
mod top_level;
mod values;

use std::path::Path;
use std::sync::Arc;

use serde_norway::Value;

use self::env::substitute_env;
use self::tags::untag_classes;
use self::top_level::Parser;
use crate::config::Config;
use crate::connect::{redact, ClientBuilder};
use crate::error::{Error, Result};
use crate::name::NameMapper;
use crate::Client;

/// Where the Redis deployment of a [`RedissonConfig`] is, and how to log in.
///
/// ```
/// let parsed = redisson_lock::RedissonConfig::from_yaml_str(
///     "singleServerConfig:\n  address: redis://127.0.0.1:6379\n  database: 2\n",
/// )?;
/// assert!(matches!(parsed.servers(), redisson_lock::RedissonServers::Single { .. }));
/// # Ok::<(), redisson_lock::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RedissonServers {
    /// `singleServerConfig` (also `masterSlaveServersConfig`, whose master this is).
    Single {
        /// A redis URL with login and database.
        url: String,
    },
    /// `clusterServersConfig`.
    Cluster {
        /// Seed node URLs with login.
        nodes: Vec<String>,
    },
    /// `sentinelServersConfig`.
    Sentinel {
        /// Sentinel URLs with the sentinels' login.
        sentinels: Vec<String>,
        /// `masterName`.
        master_name: String,
        /// The master's ACL user.
        username: Option<String>,
        /// The master's password.
        password: Option<String>,
        /// The database.
        database: i64,
    },
}

impl std::fmt::Debug for RedissonServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedissonServers::Single { url } => f.debug_struct("Single").field("url", &redact(url)).finish(),
            RedissonServers::Cluster { nodes } => f
                .debug_struct("Cluster")
                .field("nodes", &nodes.iter().map(|n| redact(n)).collect::<Vec<_>>())
                .finish(),
            RedissonServers::Sentinel {
                sentinels,
                master_name,
                username,
                password,
                database,
            } => f
                .debug_struct("Sentinel")
                .field(
                    "sentinels",
                    &sentinels.iter().map(|n| redact(n)).collect::<Vec<_>>(),
                )
                .field("master_name", master_name)
                .field("username", username)
                .field("password", &password.as_ref().map(|_| "***"))
                .field("database", database)
                .finish(),
        }
    }
}

/// A parsed Redisson configuration file: the lock [`Config`] and the servers to connect to.
///
/// ```
/// use std::time::Duration;
/// let parsed = redisson_lock::RedissonConfig::from_yaml_str(
///     "lockWatchdogTimeout: 10000\nsingleServerConfig:\n  address: redis://127.0.0.1:6379\n",
/// )?;
/// assert_eq!(parsed.config().lock_watchdog_timeout(), Duration::from_secs(10));
/// # Ok::<(), redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RedissonConfig {
    config: Config,
    servers: RedissonServers,
    #[cfg(feature = "tls-rustls")]
    tls: Option<crate::Tls>,
}

type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Options for reading a Redisson file: how `${NAME}` is looked up, and Rust equivalents of
/// custom Java `NameMapper` classes.
///
/// ```
/// use redisson_lock::{NameMapper, RedissonConfig};
/// let yaml = "nameMapper: !<com.acme.TenantMapper> {}\n\
///             singleServerConfig:\n  address: redis://${HOST:-127.0.0.1}:6379\n";
/// let parsed = RedissonConfig::loader()
///     .name_mapper_class("com.acme.TenantMapper", NameMapper::prefix("acme:"))
///     .env(|name| (name == "HOST").then(|| "10.0.0.5".to_string()))
///     .from_yaml_str(yaml)?;
/// # let _ = parsed; Ok::<(), redisson_lock::Error>(())
/// ```
#[derive(Clone)]
pub struct RedissonConfigLoader {
    env: EnvLookup,
    mappers: Vec<(String, NameMapper)>,
}

impl std::fmt::Debug for RedissonConfigLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedissonConfigLoader")
            .field(
                "name_mapper_classes",
                &self.mappers.iter().map(|(c, _)| c).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Default for RedissonConfigLoader {
    fn default() -> Self {
        RedissonConfigLoader {
            env: Arc::new(|name| std::env::var(name).ok()),
            mappers: Vec::new(),
        }
    }
}

impl RedissonConfigLoader {
    /// Look `${NAME}` up with `lookup` instead of the process environment.
    ///
    /// ```
    /// let parsed = redisson_lock::RedissonConfig::loader()
    ///     .env(|_| Some("5000".into()))
    ///     .from_yaml_str("lockWatchdogTimeout: ${WATCHDOG}\nsingleServerConfig: {address: 'redis://h:1'}")?;
    /// assert_eq!(parsed.config().lock_watchdog_timeout().as_millis(), 5000);
    /// # Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn env(mut self, lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Arc::new(lookup);
        self
    }

    /// Use `mapper` where the file's `nameMapper` is the Java class `class` (its tag, or the
    /// `class` field of the JSON form). Without it such a file is refused: the mapper decides
    /// which Redis keys the locks use, so guessing would make Rust and Java lock different keys.
    ///
    /// ```
    /// use redisson_lock::{NameMapper, RedissonConfig};
    /// let parsed = RedissonConfig::loader()
    ///     .name_mapper_class("com.acme.PrefixMapper", NameMapper::prefix("acme:"))
    ///     .from_json_str(r#"{"nameMapper": {"class": "com.acme.PrefixMapper"},
    ///                        "singleServerConfig": {"address": "redis://127.0.0.1:6379"}}"#)?;
    /// # let _ = parsed; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn name_mapper_class(mut self, class: impl Into<String>, mapper: NameMapper) -> Self {
        self.mappers.push((class.into(), mapper));
        self
    }

    /// Parses a Redisson YAML document.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the key for malformed YAML, a missing address, a
    /// refused or out-of-range setting.
    ///
    /// ```
    /// let parsed = redisson_lock::RedissonConfig::loader()
    ///     .from_yaml_str("singleServerConfig:\n  address: redis://127.0.0.1:6379\n")?;
    /// # let _ = parsed; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn from_yaml_str(&self, text: &str) -> Result<RedissonConfig> {
        let text = substitute_env(text, &*self.env);
        let text = untag_classes(&text);
        let mut root: Value = serde_norway::from_str(&text)
            .map_err(|e| Error::InvalidArgument(format!("redisson config: malformed YAML/JSON: {e}")))?;
        // SnakeYAML (Redisson's parser) applies `<<: *anchor` merge keys
        root.apply_merge()
            .map_err(|e| Error::InvalidArgument(format!("redisson config: bad merge key: {e}")))?;
        Parser { loader: self }.root(&root)
    }

    /// Parses a Redisson JSON document (read like YAML, as Redisson does).
    ///
    /// # Errors
    ///
    /// As [`from_yaml_str`](Self::from_yaml_str).
    ///
    /// ```
    /// let parsed = redisson_lock::RedissonConfig::loader()
    ///     .from_json_str(r#"{"singleServerConfig": {"address": "redis://127.0.0.1:6379"}}"#)?;
    /// # let _ = parsed; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn from_json_str(&self, text: &str) -> Result<RedissonConfig> {
        self.from_yaml_str(text)
    }

    /// Reads and parses a file (`.json` or YAML; both go through the same parser).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the file cannot be read, or as
    /// [`from_yaml_str`](Self::from_yaml_str).
    ///
    /// ```no_run
    /// let parsed = redisson_lock::RedissonConfig::loader().from_path("/etc/app/redisson.yaml")?;
    /// # let _ = parsed; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn from_path(&self, path: impl AsRef<Path>) -> Result<RedissonConfig> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::InvalidArgument(format!("cannot read redisson config {}: {e}", path.display()))
        })?;
        self.from_yaml_str(&text).map_err(|e| match e {
            Error::InvalidArgument(m) => Error::InvalidArgument(format!("{}: {m}", path.display())),
            other => other,
        })
    }
}

impl RedissonServers {
    /// Whether the connection uses TLS: a `rediss://` address (for a sentinel set, any of them:
    /// the master then follows the last one's scheme, see [`ClientBuilder::tls`](crate::ClientBuilder::tls)).
    #[cfg(feature = "tls-rustls")]
    fn uses_tls(&self) -> bool {
        let tls = |u: &String| u.starts_with("rediss://");
        match self {
            RedissonServers::Single { url } => tls(url),
            RedissonServers::Cluster { nodes } => nodes.iter().any(tls),
            RedissonServers::Sentinel { sentinels, .. } => sentinels.iter().any(tls),
        }
    }
}

impl RedissonConfig {
    /// Options for reading (environment lookup, custom name mappers).
    ///
    /// ```
    /// let loader = redisson_lock::RedissonConfig::loader();
    /// # let _ = loader;
    /// ```
    pub fn loader() -> RedissonConfigLoader {
        RedissonConfigLoader::default()
    }

    /// Parses a Redisson YAML document, `${NAME}` taken from the process environment.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the key for malformed YAML, a missing address, a
    /// refused or out-of-range setting.
    ///
    /// ```
    /// let parsed = redisson_lock::RedissonConfig::from_yaml_str(
    ///     "singleServerConfig:\n  address: redis://127.0.0.1:6379\n  timeout: 500\n",
    /// )?;
    /// assert_eq!(parsed.config().lock_watchdog_timeout().as_secs(), 30);
    /// # Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn from_yaml_str(text: &str) -> Result<RedissonConfig> {
        Self::loader().from_yaml_str(text)
    }

    /// Parses a Redisson JSON document.
    ///
    /// # Errors
    ///
    /// As [`from_yaml_str`](Self::from_yaml_str).
    ///
    /// ```
    /// let parsed = redisson_lock::RedissonConfig::from_json_str(
    ///     r#"{"lockWatchdogTimeout": 9000, "singleServerConfig": {"address": "redis://127.0.0.1:6379"}}"#,
    /// )?;
    /// assert_eq!(parsed.config().lock_watchdog_timeout().as_millis(), 9000);
    /// # Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn from_json_str(text: &str) -> Result<RedissonConfig> {
        Self::loader().from_json_str(text)
    }

    /// Reads and parses a Redisson YAML or JSON file.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the file cannot be read or is refused (see the module docs).
    ///
    /// ```no_run
    /// let parsed = redisson_lock::RedissonConfig::from_path("redisson.yaml")?;
    /// # let _ = parsed; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<RedissonConfig> {
        Self::loader().from_path(path)
    }

    /// The lock settings (a copy; adjust it and pass it to [`ClientBuilder::config`]).
    ///
    /// ```
    /// let parsed = redisson_lock::RedissonConfig::from_yaml_str(
    ///     "fairLockWaitTimeout: 60000\nsingleServerConfig: {address: 'redis://127.0.0.1:6379'}",
    /// )?;
    /// assert_eq!(parsed.config().lock_watchdog_timeout().as_secs(), 30);
    /// # Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn config(&self) -> Config {
        self.config.clone()
    }

    /// Where to connect.
    ///
    /// ```
    /// let parsed = redisson_lock::RedissonConfig::from_yaml_str(
    ///     "clusterServersConfig:\n  nodeAddresses: ['redis://10.0.0.1:7000', 'redis://10.0.0.2:7000']\n",
    /// )?;
    /// assert!(matches!(parsed.servers(), redisson_lock::RedissonServers::Cluster { nodes } if nodes.len() == 2));
    /// # Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn servers(&self) -> &RedissonServers {
        &self.servers
    }

    /// The TLS settings of the file's `ssl*` keys, when an address is `rediss://` (feature
    /// `tls-rustls`); `None` for plain addresses (Redisson ignores `ssl*` there too) and for
    /// `rediss://` without any `ssl*` key (system roots, strict checks).
    ///
    /// ```
    /// let parsed = redisson_lock::RedissonConfig::from_yaml_str(
    ///     "sslVerificationMode: CA_ONLY\nsingleServerConfig: {address: 'rediss://10.0.0.7:6380'}\n",
    /// )?;
    /// assert_eq!(parsed.tls().unwrap().verify(), redisson_lock::TlsVerify::CaOnly);
    /// # Ok::<(), redisson_lock::Error>(())
    /// ```
    #[cfg(feature = "tls-rustls")]
    pub fn tls(&self) -> Option<&crate::Tls> {
        self.tls.as_ref()
    }

    /// A [`ClientBuilder`] with the servers and the [`config`](Self::config) of the file; change
    /// more before [`build`](ClientBuilder::build) if needed.
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// let parsed = redisson_lock::RedissonConfig::from_path("redisson.yaml")?;
    /// let client = parsed.client_builder().build().await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn client_builder(&self) -> ClientBuilder {
        let builder = Client::builder().config(self.config.clone());
        #[cfg(feature = "tls-rustls")]
        let builder = match &self.tls {
            Some(tls) => builder.tls(tls.clone()),
            None => builder,
        };
        match &self.servers {
            RedissonServers::Single { url } => builder.url(url.clone()),
            RedissonServers::Cluster { nodes } => builder.cluster(nodes.clone()),
            RedissonServers::Sentinel {
                sentinels,
                master_name,
                username,
                password,
                database,
            } => builder
                .sentinel(sentinels.clone(), master_name.clone())
                .sentinel_master_auth(username.clone(), password.clone())
                .sentinel_database(*database),
        }
    }

    /// Connects: `self.client_builder().build()`.
    ///
    /// # Errors
    ///
    /// As [`ClientBuilder::build`].
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// let client = redisson_lock::RedissonConfig::from_path("redisson.yaml")?.connect().await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub async fn connect(&self) -> Result<Client> {
        self.client_builder().build().await
    }
}

#[cfg(test)]
mod tests;

impl crate::Client {
    /// Connects as the Redisson YAML or JSON configuration file at `path` says (servers, login,
    /// lock settings), the same file a Java service gives `Config.fromYAML`. See
    /// [`RedissonConfig`](crate::RedissonConfig) for the keys honoured, ignored and refused.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the file cannot be read or has a setting that cannot be
    /// honoured; as [`ClientBuilder::build`](crate::ClientBuilder::build) when Redis cannot be
    /// reached ([`Error::Connect`] naming the address for a single server, master/slave or
    /// cluster file; [`Error::Redis`] for a sentinel file whose sentinels cannot be reached).
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// let client = redisson_lock::Client::from_redisson_config("redisson.yaml").await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub async fn from_redisson_config(path: impl AsRef<std::path::Path>) -> Result<Client> {
        RedissonConfig::from_path(path)?.connect().await
    }
}
