//! Reading Redisson's own YAML / JSON configuration file, so that a Rust service and a Java
//! service configure their locks (and their Redis connection) from **one** file.
//!
//! ```no_run
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> redisson_lock::Result<()> {
//! use redisson_lock::{Client, RedissonConfig};
//!
//! let parsed = RedissonConfig::from_path("redisson.yaml")?;
//! println!("watchdog: {:?}", parsed.config().get_lock_watchdog_timeout());
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
//! | `lockWatchdogTimeout` | honoured: [`Config::lock_watchdog_timeout`] |
//! | `lockWatchdogBatchSize` | honoured: [`Config::watchdog_batch_size`] |
//! | `fairLockWaitTimeout` | honoured: [`Config::fair_lock_wait_timeout`] |
//! | `checkLockSyncedSlaves` | honoured as Redisson applies it: single server → [`ReplicaSync::Off`] (Redisson never sends `WAIT` there); cluster, sentinel and master/slave → `true` (default) [`ReplicaSync::Required`], `false` [`ReplicaSync::BestEffort`] (Redisson still sends `WAIT` but keeps the result) |
//! | `slavesSyncTimeout` | honoured: [`Config::replica_sync_timeout`] |
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
//! | `threads`, `nettyThreads`, `transportMode`, `executor`, `eventLoopGroup`, `nettyHook`, `referenceEnabled`, `keepPubSubOrder`, `useScriptCache`, `minCleanUpDelay`, `maxCleanUpDelay`, `cleanUpKeysAmount`, `reliableTopicWatchdogTimeout`, `useThreadClassLoader`, `addressResolverGroupFactory`, `lazyInitialization`, `protocol`, `valkeyCapabilities`, `connectionListener`, `tcp*`, anything else | ignored (logged with `tracing::debug!`) |
//! | **`singleServerConfig`** | `address` (required), `database`, `username`, `password` → the connection; `timeout` → [`Config::command_timeout`]; `connectTimeout` → [`Config::connect_timeout`]; `retryAttempts` → [`Config::retry_attempts`]; `retryInterval` (3.x) and `retryDelay` (3.48+: `ConstantDelay` `delay`, or the jitter delays' `maxDelay`; wins over `retryInterval`) → [`Config::retry_interval`]; `subscriptionTimeout` → [`Config::subscription_timeout`]; pool sizes, `clientName`, `idleConnectionTimeout`, `pingConnectionInterval`, `subscriptionsPerConnection`, `reconnectionDelay`, `dnsMonitoring*`, ... ignored; `ssl*` as at the top level (Redisson 3.x spelling) |
//! | **`clusterServersConfig`** | `nodeAddresses` (required) → [`ClientBuilder::cluster`]; `shardedSubscriptionMode` `AUTO`/`ON`/`OFF` → [`PublishMode::Auto`]/[`Sharded`](PublishMode::Sharded)/[`Classic`](PublishMode::Classic); `database` other than 0 **refused**; `natMapper` other than `DefaultNatMapper` **refused**; the timeouts and retries as above; `scanInterval`, `readMode`, `subscriptionMode`, `checkSlotsCoverage`, pool sizes, ... ignored |
//! | **`sentinelServersConfig`** | `sentinelAddresses` (required), `masterName` (required) → [`ClientBuilder::sentinel`]; `sentinelUsername`/`sentinelPassword` → the sentinels' login; `username`/`password`/`database` → the master's; `scanInterval` → [`Config::sentinel_scan_interval`]; the timeouts and retries as above; `natMapper` other than `DefaultNatMapper` **refused**; `checkSentinelsList`, `sentinelsDiscovery`, `checkSlaveStatusWithSyncing`, `readMode`, `subscriptionMode`, pool sizes, ... ignored |
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

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_norway::Value;

use crate::config::{Config, PublishMode, ReplicaSync, MAX_MS};
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
/// assert_eq!(parsed.config().get_lock_watchdog_timeout(), Duration::from_secs(10));
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
    /// assert_eq!(parsed.config().get_lock_watchdog_timeout().as_millis(), 5000);
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
    /// assert_eq!(parsed.config().get_lock_watchdog_timeout().as_secs(), 30);
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
    /// assert_eq!(parsed.config().get_lock_watchdog_timeout().as_millis(), 9000);
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
    /// assert_eq!(parsed.config().get_lock_watchdog_timeout().as_secs(), 30);
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
    /// assert_eq!(parsed.tls().unwrap().get_verify(), redisson_lock::TlsVerify::CaOnly);
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

/// Which server section the file has.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Single,
    MasterSlave,
    Cluster,
    Sentinel,
}

impl Mode {
    fn key(self) -> &'static str {
        match self {
            Mode::Single => "singleServerConfig",
            Mode::MasterSlave => "masterSlaveServersConfig",
            Mode::Cluster => "clusterServersConfig",
            Mode::Sentinel => "sentinelServersConfig",
        }
    }
}

const DEFAULT_NAME_MAPPER: &str = "org.redisson.config.DefaultNameMapper";
const DEFAULT_COMMAND_MAPPER: &str = "org.redisson.config.DefaultCommandMapper";
const DEFAULT_CREDENTIALS: &str = "org.redisson.client.DefaultCredentialsResolver";
const DEFAULT_NAT_MAPPER: &str = "org.redisson.config.DefaultNatMapper";

struct Parser<'a> {
    loader: &'a RedissonConfigLoader,
}

fn bad(key: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("redisson config `{key}`: {what}"))
}

/// A mapping's entries with string keys.
fn entries<'v>(key: &str, v: &'v Value) -> Result<Vec<(&'v str, &'v Value)>> {
    let map = match untagged(v) {
        Value::Mapping(m) => m,
        Value::Null => return Ok(Vec::new()),
        _ => return Err(bad(key, "expected a mapping")),
    };
    map.iter()
        .map(|(k, v)| match k {
            Value::String(s) => Ok((s.as_str(), v)),
            other => Err(bad(key, format!("expected string keys, got {other:?}"))),
        })
        .collect()
}

fn untagged(v: &Value) -> &Value {
    match v {
        Value::Tagged(t) => untagged(&t.value),
        other => other,
    }
}

/// The Java class a value names: its tag (`!<class>`), or a `class` field (JSON form).
fn class_of(v: &Value) -> Option<String> {
    match v {
        Value::Tagged(t) => Some(t.tag.to_string().trim_start_matches('!').to_owned()),
        Value::Mapping(m) => m.get("class").and_then(Value::as_str).map(str::to_owned),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn integer(key: &str, v: &Value) -> Result<i64> {
    match untagged(v) {
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| bad(key, format!("expected an integer, got {n}"))),
        Value::String(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| bad(key, format!("expected an integer, got `{s}`"))),
        other => Err(bad(key, format!("expected an integer, got {other:?}"))),
    }
}

fn boolean(key: &str, v: &Value) -> Result<bool> {
    match untagged(v) {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        other => Err(bad(key, format!("expected true or false, got {other:?}"))),
    }
}

fn string(key: &str, v: &Value) -> Result<Option<String>> {
    match untagged(v) {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        other => Err(bad(key, format!("expected a string, got {other:?}"))),
    }
}

fn millis(key: &str, v: &Value) -> Result<Duration> {
    let ms = integer(key, v)?;
    if ms < 1 || ms as u64 > MAX_MS {
        return Err(bad(key, format!("must be between 1 and {MAX_MS} ms, got {ms}")));
    }
    Ok(Duration::from_millis(ms as u64))
}

fn strings(key: &str, v: &Value) -> Result<Vec<String>> {
    match untagged(v) {
        Value::Sequence(items) => items
            .iter()
            .map(|i| string(key, i)?.ok_or_else(|| bad(key, "empty address")))
            .collect(),
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Null => Ok(Vec::new()),
        other => Err(bad(key, format!("expected a list of addresses, got {other:?}"))),
    }
}

/// Login and database to put into addresses.
#[derive(Default, Clone)]
struct Auth {
    username: Option<String>,
    password: Option<String>,
}

impl Parser<'_> {
    fn root(&self, root: &Value) -> Result<RedissonConfig> {
        let mut config = Config::default();
        let mut top_auth = Auth::default();
        let mut sections = Vec::new();
        let mut check_synced: Option<bool> = None;
        let mut mapper: Option<(String, Value)> = None;
        let mut ssl = Ssl::default();
        for (key, v) in entries("<root>", root)? {
            match key {
                k if k.starts_with("ssl") => ssl.set(k, k, v)?,
                "lockWatchdogTimeout" => {
                    let d = millis(key, v)?;
                    if d < Duration::from_millis(3) {
                        return Err(bad(key, "must be at least 3 ms (renewal runs every timeout/3)"));
                    }
                    config = config.lock_watchdog_timeout(d);
                }
                "lockWatchdogBatchSize" => {
                    let n = integer(key, v)?;
                    if n < 1 {
                        return Err(bad(key, format!("must be at least 1, got {n}")));
                    }
                    config = config.watchdog_batch_size(n as usize);
                }
                "fairLockWaitTimeout" => config = config.fair_lock_wait_timeout(millis(key, v)?),
                "slavesSyncTimeout" => config = config.replica_sync_timeout(millis(key, v)?),
                "checkLockSyncedSlaves" => check_synced = Some(boolean(key, v)?),
                "username" => top_auth.username = string(key, v)?,
                "password" => top_auth.password = string(key, v)?,
                "nameMapper" => mapper = Some((key.to_owned(), v.clone())),
                "commandMapper" => default_class_only(key, v, DEFAULT_COMMAND_MAPPER)?,
                "credentialsResolver" => default_class_only(key, v, DEFAULT_CREDENTIALS)?,
                "singleServerConfig" => sections.push((Mode::Single, v)),
                "masterSlaveServersConfig" => sections.push((Mode::MasterSlave, v)),
                "clusterServersConfig" => sections.push((Mode::Cluster, v)),
                "sentinelServersConfig" => sections.push((Mode::Sentinel, v)),
                "replicatedServersConfig" => {
                    return Err(bad(
                        key,
                        "replicated mode is not supported; point singleServerConfig at the master instead",
                    ))
                }
                other => tracing::debug!(key = other, "redisson config: ignored (no effect on locks)"),
            }
        }
        let (mode, section) = match sections.as_slice() {
            [] => {
                return Err(Error::InvalidArgument(
                    "redisson config: no server section (singleServerConfig, clusterServersConfig, sentinelServersConfig or masterSlaveServersConfig)".into(),
                ))
            }
            [one] => *one,
            many => {
                return Err(Error::InvalidArgument(format!(
                    "redisson config: more than one server section ({})",
                    many.iter().map(|(m, _)| m.key()).collect::<Vec<_>>().join(", ")
                )))
            }
        };
        let (config, servers, server_mapper, section_ssl) = self.section(mode, section, config, &top_auth)?;
        let ssl = ssl.over(section_ssl);
        // The server section's (deprecated) nameMapper wins over the top-level one, as in Redisson.
        let mapper = server_mapper.or(mapper);
        let mut config = match mapper {
            Some((key, v)) => config.name_mapper(self.name_mapper(&key, &v)?),
            None => config,
        };
        config = config.replica_sync(match (mode, check_synced) {
            (Mode::Single, _) => ReplicaSync::Off,
            (Mode::Cluster | Mode::Sentinel | Mode::MasterSlave, Some(false)) => ReplicaSync::BestEffort,
            (Mode::Cluster | Mode::Sentinel | Mode::MasterSlave, _) => ReplicaSync::Required,
        });
        config.validate()?;
        #[cfg(feature = "tls-rustls")]
        let tls = if servers.uses_tls() {
            ssl.tls()?
        } else {
            if !ssl.is_empty() {
                tracing::debug!("redisson config: ssl* settings ignored: no address is rediss://");
            }
            None
        };
        #[cfg(not(feature = "tls-rustls"))]
        if !ssl.is_empty() {
            tracing::debug!("redisson config: ssl* settings ignored (no rediss:// address can be used without the tls-rustls feature)");
        }
        Ok(RedissonConfig {
            config,
            servers,
            #[cfg(feature = "tls-rustls")]
            tls,
        })
    }

    fn name_mapper(&self, key: &str, v: &Value) -> Result<NameMapper> {
        if matches!(untagged(v), Value::Null) {
            return Ok(NameMapper::identity());
        }
        let class = class_of(v).ok_or_else(|| {
            bad(
                key,
                "expected a NameMapper class tag, e.g. !<org.redisson.config.DefaultNameMapper> {}",
            )
        })?;
        if class == DEFAULT_NAME_MAPPER {
            return Ok(NameMapper::identity());
        }
        match self.loader.mappers.iter().find(|(c, _)| *c == class) {
            Some((_, m)) => Ok(m.clone()),
            None => Err(bad(
                key,
                format!(
                    "custom NameMapper class `{class}` cannot run in Rust and changes the locks' keys; register its Rust equivalent with RedissonConfigLoader::name_mapper_class"
                ),
            )),
        }
    }

    #[allow(clippy::type_complexity)]
    fn section(
        &self,
        mode: Mode,
        section: &Value,
        mut config: Config,
        top: &Auth,
    ) -> Result<(Config, RedissonServers, Option<(String, Value)>, Ssl)> {
        let mut ssl = Ssl::default();
        let sk = mode.key();
        let mut auth = top.clone();
        let mut database = 0i64;
        let mut addresses: Vec<String> = Vec::new();
        let mut master_name = None;
        let mut sentinel_auth = Auth::default();
        let mut retry_delay = None;
        let mut mapper = None;
        for (key, v) in entries(sk, section)? {
            let full = format!("{sk}.{key}");
            let full = full.as_str();
            match (mode, key) {
                (_, k) if k.starts_with("ssl") => ssl.set(full, k, v)?,
                (_, "timeout") => config = config.command_timeout(millis(full, v)?),
                (_, "connectTimeout") => config = config.connect_timeout(millis(full, v)?),
                (_, "subscriptionTimeout") => config = config.subscription_timeout(millis(full, v)?),
                (_, "retryAttempts") => {
                    let n = integer(full, v)?;
                    if !(0..=1000).contains(&n) {
                        return Err(bad(full, format!("must be between 0 and 1000, got {n}")));
                    }
                    config = config.retry_attempts(n as u32);
                }
                (_, "retryInterval") => config = config.retry_interval(millis(full, v)?),
                (_, "retryDelay") => retry_delay = Some(delay(full, v)?),
                (_, "username") => {
                    if let Some(u) = string(full, v)? {
                        auth.username = Some(u)
                    }
                }
                (_, "password") => {
                    if let Some(p) = string(full, v)? {
                        auth.password = Some(p)
                    }
                }
                (_, "database") => database = integer(full, v)?,
                (_, "nameMapper") => mapper = Some((full.to_owned(), v.clone())),
                (_, "commandMapper") => default_class_only(full, v, DEFAULT_COMMAND_MAPPER)?,
                (_, "credentialsResolver") => default_class_only(full, v, DEFAULT_CREDENTIALS)?,
                (Mode::Cluster | Mode::Sentinel, "natMapper") => {
                    default_class_only(full, v, DEFAULT_NAT_MAPPER)?
                }
                (Mode::Single, "address") | (Mode::MasterSlave, "masterAddress") => {
                    addresses = string(full, v)?.into_iter().collect()
                }
                (Mode::Cluster, "nodeAddresses") | (Mode::Sentinel, "sentinelAddresses") => {
                    addresses = strings(full, v)?
                }
                (Mode::Cluster, "shardedSubscriptionMode") => {
                    let s = string(full, v)?.unwrap_or_default();
                    config = config.publish_mode(match s.to_ascii_uppercase().as_str() {
                        "AUTO" => PublishMode::Auto,
                        "ON" => PublishMode::Sharded,
                        "OFF" => PublishMode::Classic,
                        _ => return Err(bad(full, format!("expected AUTO, ON or OFF, got `{s}`"))),
                    });
                }
                (Mode::Sentinel, "masterName") => master_name = string(full, v)?,
                (Mode::Sentinel, "sentinelUsername") => sentinel_auth.username = string(full, v)?,
                (Mode::Sentinel, "sentinelPassword") => sentinel_auth.password = string(full, v)?,
                (Mode::Sentinel, "scanInterval") => config = config.sentinel_scan_interval(millis(full, v)?),
                (_, other) => {
                    tracing::debug!(key = %format!("{sk}.{other}"), "redisson config: ignored (no effect on locks)")
                }
            }
        }
        if let Some(d) = retry_delay {
            config = config.retry_interval(d);
        }
        if addresses.is_empty() {
            let which = match mode {
                Mode::Single => "address",
                Mode::MasterSlave => "masterAddress",
                Mode::Cluster => "nodeAddresses",
                Mode::Sentinel => "sentinelAddresses",
            };
            return Err(bad(&format!("{sk}.{which}"), "missing: no address to connect to"));
        }
        let servers = match mode {
            Mode::Single | Mode::MasterSlave => {
                let key = if mode == Mode::Single {
                    "address"
                } else {
                    "masterAddress"
                };
                RedissonServers::Single {
                    url: url_with(&format!("{sk}.{key}"), &addresses[0], &auth, Some(database))?,
                }
            }
            Mode::Cluster => {
                if database != 0 {
                    return Err(bad(
                        &format!("{sk}.database"),
                        format!("database {database}: Redis Cluster locks live in database 0"),
                    ));
                }
                RedissonServers::Cluster {
                    nodes: addresses
                        .iter()
                        .map(|a| url_with(&format!("{sk}.nodeAddresses"), a, &auth, None))
                        .collect::<Result<_>>()?,
                }
            }
            Mode::Sentinel => RedissonServers::Sentinel {
                sentinels: addresses
                    .iter()
                    .map(|a| url_with(&format!("{sk}.sentinelAddresses"), a, &sentinel_auth, None))
                    .collect::<Result<_>>()?,
                master_name: master_name
                    .filter(|m| !m.is_empty())
                    .ok_or_else(|| bad(&format!("{sk}.masterName"), "missing"))?,
                username: auth.username,
                password: auth.password,
                database,
            },
        };
        Ok((config, servers, mapper, ssl))
    }
}

impl RedissonServers {
    /// Whether the connection uses TLS: a `rediss://` address (for a sentinel set, any of them:
    /// the master then follows the last one's scheme, see [`ClientBuilder::tls`]).
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

/// How strictly the server's certificate is checked, as the file spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SslVerify {
    Strict,
    CaOnly,
    None,
}

/// The `ssl*` keys of one place (the top level, Redisson 4.x; or a server section, 3.x and the
/// deprecated 4.x spelling), each with the key it came from (for errors).
#[derive(Clone, Default)]
struct Ssl {
    verify: Option<(String, SslVerify)>,
    truststore: Option<(String, String)>,
    truststore_password: Option<String>,
    keystore: Option<(String, String)>,
    keystore_password: Option<String>,
    keystore_type: Option<(String, String)>,
    protocols: Option<(String, Vec<String>)>,
    ciphers: Option<String>,
    any: bool,
}

impl Ssl {
    /// Reads one `ssl*` key (`full` is how errors name it).
    fn set(&mut self, full: &str, key: &str, v: &Value) -> Result<()> {
        self.any = true;
        let full_s = full.to_owned();
        match key {
            "sslVerificationMode" => {
                let s = string(full, v)?.unwrap_or_default();
                let mode = match s.as_str() {
                    "STRICT" => SslVerify::Strict,
                    "CA_ONLY" => SslVerify::CaOnly,
                    "NONE" => SslVerify::None,
                    _ => return Err(bad(full, format!("expected STRICT, CA_ONLY or NONE, got `{s}`"))),
                };
                self.verify = Some((full_s, mode));
            }
            // Redisson < 3.41 (deprecated since): true = STRICT, false = NONE
            "sslEnableEndpointIdentification" => {
                let mode = if boolean(full, v)? {
                    SslVerify::Strict
                } else {
                    SslVerify::None
                };
                // sslVerificationMode, where both are given, is the newer spelling: it wins
                if !self
                    .verify
                    .as_ref()
                    .is_some_and(|(k, _)| k.ends_with("sslVerificationMode"))
                {
                    self.verify = Some((full_s, mode));
                }
            }
            "sslTruststore" => self.truststore = string(full, v)?.map(|u| (full_s, u)),
            "sslTruststorePassword" => self.truststore_password = string(full, v)?,
            "sslKeystore" => self.keystore = string(full, v)?.map(|u| (full_s, u)),
            "sslKeystorePassword" => self.keystore_password = string(full, v)?,
            "sslKeystoreType" => self.keystore_type = string(full, v)?.map(|t| (full_s, t)),
            "sslProvider" => {
                let p = string(full, v)?.unwrap_or_default();
                if !matches!(p.as_str(), "JDK" | "OPENSSL") {
                    return Err(bad(full, format!("expected JDK or OPENSSL, got `{p}`")));
                }
                tracing::debug!(key = full, provider = %p, "redisson config: ssl provider ignored (rustls is used)");
            }
            "sslProtocols" => {
                let list = match untagged(v) {
                    Value::Null => Vec::new(),
                    Value::Sequence(items) => items
                        .iter()
                        .map(|i| string(full, i).map(Option::unwrap_or_default))
                        .collect::<Result<Vec<_>>>()?,
                    other => string(full, other)?
                        .unwrap_or_default()
                        .split(',')
                        .map(|p| p.trim().to_owned())
                        .filter(|p| !p.is_empty())
                        .collect(),
                };
                self.protocols = (!list.is_empty()).then_some((full_s, list));
            }
            "sslCiphers" => {
                if !matches!(untagged(v), Value::Null) {
                    self.ciphers = Some(full_s);
                }
            }
            _ => {
                // sslTrustManagerFactory / sslKeyManagerFactory are Java objects Redisson
                // itself skips in a file; anything else is unknown
                tracing::debug!(key = full, "redisson config: ignored");
            }
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        !self.any
    }

    /// Redisson 4.x merges the top level (`self`) over a server section's deprecated copies:
    /// a value given at the top wins; the verification mode of the section counts when the top
    /// level leaves it at its default (`STRICT`).
    fn over(self, section: Ssl) -> Ssl {
        let verify = match (self.verify, section.verify) {
            (Some((_, SslVerify::Strict)), Some(s)) => Some(s),
            (top, s) => top.or(s),
        };
        Ssl {
            verify,
            truststore: self.truststore.or(section.truststore),
            truststore_password: self.truststore_password.or(section.truststore_password),
            keystore: self.keystore.or(section.keystore),
            keystore_password: self.keystore_password.or(section.keystore_password),
            keystore_type: self.keystore_type.or(section.keystore_type),
            protocols: self.protocols.or(section.protocols),
            ciphers: self.ciphers.or(section.ciphers),
            any: self.any || section.any,
        }
    }

    /// The TLS settings these keys describe (files are read now).
    #[cfg(feature = "tls-rustls")]
    fn tls(&self) -> Result<Option<crate::Tls>> {
        if !self.any {
            return Ok(None);
        }
        if let Some((key, t)) = &self.keystore_type {
            match t.to_ascii_uppercase().as_str() {
                "PKCS12" | "PEM" => {}
                "JKS" | "JCEKS" => {
                    return Err(bad(
                        key,
                        format!(
                            "{t} stores cannot be read here; convert them to PKCS#12 (Java reads it too): \
                             keytool -importkeystore -srckeystore STORE -destkeystore STORE.p12 -deststoretype pkcs12"
                        ),
                    ))
                }
                _ => return Err(bad(key, format!("unsupported key store type `{t}` (PKCS12 or PEM)"))),
            }
        }
        if let Some((key, list)) = &self.protocols {
            let has = |p: &str| list.iter().any(|x| x.eq_ignore_ascii_case(p));
            match (has("TLSv1.2"), has("TLSv1.3")) {
                (false, false) => {
                    return Err(bad(
                        key,
                        format!("{list:?}: this client speaks TLS 1.2 and 1.3 only (rustls)"),
                    ))
                }
                (true, true) => {}
                _ => tracing::warn!(key = %key, protocols = ?list,
                    "redisson config: TLS versions cannot be narrowed here; rustls offers TLS 1.2 and 1.3 and the server picks"),
            }
        }
        if let Some(key) = &self.ciphers {
            tracing::warn!(key = %key, "redisson config: cipher suites are not configurable here; rustls uses its own (modern AEAD suites only)");
        }
        let mut tls = crate::Tls::new();
        if let Some((key, url)) = &self.truststore {
            let path = file_url(key, url)?;
            tls = tls
                .truststore_file(&path, self.truststore_password.as_deref())
                .map_err(|e| bad(key, e))?;
        }
        if let Some((key, url)) = &self.keystore {
            let path = file_url(key, url)?;
            tls = tls
                .keystore_file(&path, self.keystore_password.as_deref())
                .map_err(|e| bad(key, e))?;
        }
        let verify = match self.verify.as_ref().map(|(_, v)| *v) {
            None | Some(SslVerify::Strict) => crate::TlsVerify::Strict,
            Some(SslVerify::CaOnly) => crate::TlsVerify::CaOnly,
            // Redisson: NONE with a trust store still checks the chain against it
            Some(SslVerify::None) if self.truststore.is_some() => crate::TlsVerify::CaOnly,
            Some(SslVerify::None) => crate::TlsVerify::None,
        };
        Ok(Some(tls.verify(verify)))
    }
}

/// The local path of a Java `file:` URL (`file:/abs`, `file:///abs`, `file://localhost/abs`,
/// `file:relative` to the working directory, as the JVM reads them; `%XX` decoded).
#[cfg(feature = "tls-rustls")]
fn file_url(key: &str, url: &str) -> Result<std::path::PathBuf> {
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once(':').filter(|(s, _)| s.len() > 1) else {
        return Err(bad(
            key,
            format!("`{url}` is not a URL; Redisson wants one like file:/etc/redis/truststore.p12 (and rejects a bare path too)"),
        ));
    };
    if !scheme.eq_ignore_ascii_case("file") {
        return Err(bad(
            key,
            format!("only file: URLs can be read here, not `{scheme}:` (a classpath: URL is not readable by Redisson either)"),
        ));
    }
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let (host, path) = after.split_at(after.find('/').unwrap_or(after.len()));
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Err(bad(key, format!("`{url}` names another host")));
            }
            path
        }
        None => rest,
    };
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let decoded =
        String::from_utf8(out).map_err(|_| bad(key, format!("`{url}` is not UTF-8 once decoded")))?;
    if decoded.is_empty() {
        return Err(bad(key, format!("`{url}` has no path")));
    }
    Ok(std::path::PathBuf::from(decoded))
}

/// A class-valued setting that may only be Redisson's default class.
fn default_class_only(key: &str, v: &Value, default: &str) -> Result<()> {
    if matches!(untagged(v), Value::Null) {
        return Ok(());
    }
    match class_of(v) {
        Some(c) if c == default => Ok(()),
        Some(c) => Err(bad(
            key,
            format!("custom class `{c}` cannot be honoured in Rust (only {default})"),
        )),
        None => Err(bad(key, format!("expected a class tag, e.g. !<{default}> {{}}"))),
    }
}

/// Redisson's `retryDelay` (3.48+): a tagged `DelayStrategy` whose durations are ISO-8601.
fn delay(key: &str, v: &Value) -> Result<Duration> {
    let class = class_of(v).unwrap_or_default();
    let fields = entries(key, v)?;
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let pick = if class.ends_with("ConstantDelay") {
        "delay"
    } else {
        "maxDelay"
    };
    let raw = match field(pick) {
        Some(raw) => raw,
        // Redisson's defaults for an empty mapping
        None if fields.is_empty() && class.ends_with("ConstantDelay") => {
            return Ok(Duration::from_millis(100))
        }
        None if fields.is_empty() => return Ok(Duration::from_secs(1)),
        None => return Err(bad(key, format!("missing `{pick}`"))),
    };
    let text = string(key, raw)?.unwrap_or_default();
    let d = iso_duration(&text).ok_or_else(|| {
        bad(
            key,
            format!("expected an ISO-8601 duration like PT1.5S, got `{text}`"),
        )
    })?;
    if d < Duration::from_millis(1) || d > crate::config::MAX_DURATION {
        return Err(bad(key, format!("{d:?} is out of range")));
    }
    Ok(d)
}

/// `PT[nH][nM][n[.n]S]` (what Java's `Duration.toString()` writes), optionally `PnD...`.
fn iso_duration(s: &str) -> Option<Duration> {
    let s = s.trim().to_ascii_uppercase();
    let rest = s.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((d, t)) => (d, t),
        None => (rest, ""),
    };
    let mut total = 0f64;
    if !days.is_empty() {
        total += days.strip_suffix('D')?.parse::<f64>().ok()? * 86_400.0;
    }
    let mut num = String::new();
    let mut seen = false;
    for c in time.chars() {
        match c {
            '0'..='9' | '.' | '-' => num.push(c),
            'H' | 'M' | 'S' => {
                let n: f64 = num.parse().ok()?;
                num.clear();
                seen = true;
                total += n * match c {
                    'H' => 3600.0,
                    'M' => 60.0,
                    _ => 1.0,
                };
            }
            _ => return None,
        }
    }
    if !num.is_empty() || (!seen && days.is_empty()) || !total.is_finite() || total < 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(total).ok()
}

/// Puts the login and database into a Redisson address (`redis://host:port`).
fn url_with(key: &str, address: &str, auth: &Auth, database: Option<i64>) -> Result<String> {
    let address = address.trim();
    let (scheme, rest) = address.split_once("://").ok_or_else(|| {
        bad(
            key,
            format!(
                "`{}` has no scheme; Redisson wants redis:// or rediss://",
                redact(address)
            ),
        )
    })?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "redis" | "valkey" => "redis",
        "rediss" | "valkeys" => {
            if !cfg!(feature = "tls-rustls") {
                return Err(bad(
                    key,
                    format!(
                        "`{}` needs TLS: build redisson-lock with the `tls-rustls` feature",
                        redact(address)
                    ),
                ));
            }
            "rediss"
        }
        other => {
            return Err(bad(
                key,
                format!("unsupported scheme `{other}://` (redis://, rediss://, valkey://, valkeys://)"),
            ))
        }
    };
    // Redisson addresses are host:port; a login or path in them is kept unless the settings give one.
    let (userinfo, hostpart) = match rest.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, rest),
    };
    let (host, path) = match hostpart.split_once('/') {
        Some((h, p)) => (h, Some(p)),
        None => (hostpart, None),
    };
    if host.is_empty() {
        return Err(bad(key, format!("`{}` has no host", redact(address))));
    }
    let login = match (&auth.username, &auth.password) {
        (None, None) => userinfo.map(|u| format!("{u}@")).unwrap_or_default(),
        (u, p) => {
            let u = u.as_deref().map(encode).unwrap_or_default();
            match p {
                Some(p) => format!("{u}:{}@", encode(p)),
                None => format!("{u}@"),
            }
        }
    };
    let db = match database {
        Some(db) if db < 0 => return Err(bad(key, format!("database must not be negative, got {db}"))),
        Some(db) if db != 0 => format!("/{db}"),
        _ => path
            .filter(|p| !p.is_empty())
            .map(|p| format!("/{p}"))
            .unwrap_or_default(),
    };
    let url = format!("{scheme}://{login}{host}{db}");
    redis::IntoConnectionInfo::into_connection_info(url.as_str())
        .map_err(|e| bad(key, format!("`{}` is not a valid address: {e}", redact(address))))?;
    Ok(url)
}

/// Percent-encodes a URL userinfo part.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Redisson's `${NAME}` / `${NAME:-default}` substitution (`ConfigSupport.resolveEnvParams`):
/// every match in the original text, in order, has all its occurrences replaced in the text
/// so far; an unset variable without a default is left as written.
pub(crate) fn substitute_env(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = text.to_owned();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if !(bytes[i] == b'$' && bytes[i + 1] == b'{') {
            i += 1;
            continue;
        }
        match env_match(text, i) {
            Some((end, inner)) => {
                let whole = &text[i..end];
                let parts = java_split(inner, ":-");
                let value = lookup(parts[0]);
                if let Some(v) = value {
                    out = out.replace(whole, &v);
                } else if parts.len() == 2 {
                    out = out.replace(whole, parts[1]);
                }
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// Matches `\$\{([\w.]+(:-.+?)?)\}` at `start`; returns the end and group 1.
fn env_match(text: &str, start: usize) -> Option<(usize, &str)> {
    let b = text.as_bytes();
    let name_start = start + 2;
    let mut j = name_start;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'.') {
        j += 1;
    }
    if j == name_start || j >= b.len() {
        return None;
    }
    if b[j] == b'}' {
        return Some((j + 1, &text[name_start..j]));
    }
    if !text[j..].starts_with(":-") {
        return None;
    }
    // `.+?\}`: at least one character other than a line terminator, then the first `}`.
    let default_start = j + 2;
    let mut chars = text[default_start..].char_indices();
    let (_, first) = chars.next()?;
    if first == '\n' || first == '\r' {
        return None;
    }
    for (off, c) in chars {
        match c {
            '}' => return Some((default_start + off + 1, &text[name_start..default_start + off])),
            '\n' | '\r' => return None,
            _ => {}
        }
    }
    None
}

/// Java's `String.split(sep)`: trailing empty strings removed.
fn java_split<'s>(s: &'s str, sep: &str) -> Vec<&'s str> {
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.len() > 1 && parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

/// Rewrites Redisson's class tags `!<a.b.C>` and SnakeYAML's `!!a.b.C` to local tags `!a.b.C`,
/// which the parser keeps on the value (core tags like `!!str` have no dot and stay).
fn untag_classes(text: &str) -> String {
    let is_class = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('!') {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        if let Some(inner) = tail.strip_prefix("!<") {
            let n = inner.find(|c: char| !is_class(c)).unwrap_or(inner.len());
            if n > 0 && inner[n..].starts_with('>') {
                out.push('!');
                out.push_str(&inner[..n]);
                rest = &inner[n + 1..];
                continue;
            }
        } else if let Some(inner) = tail.strip_prefix("!!") {
            let n = inner.find(|c: char| !is_class(c)).unwrap_or(inner.len());
            if inner[..n].contains('.') {
                out.push('!');
                out.push_str(&inner[..n]);
                rest = &inner[n..];
                continue;
            }
        }
        out.push('!');
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
