//! The per-version environment: one redis-server, two harness JVMs (30 s and 1 s watchdog), three
//! Rust clients (the same two watchdogs, and a 30 s one that polls only every 10 s), raw Redis access, and the lock names used (for
//! scenario 9). Parties are made here so worker names and owner ids follow one scheme.
//!
//! A cluster environment ([`Env::setup_cluster`], the cluster scenarios in `cluster.rs`) has one
//! harness JVM in Redisson cluster mode (no fast one: those scenarios use [`Speed::Normal`] and
//! [`Speed::QuietPoll`] only) and Rust cluster clients in one [`PublishMode`].
//!
//! A one-address environment ([`Env::setup_one_address`], the scenarios in `one_address.rs`) has
//! one harness JVM in single-server mode and one Rust client on the endpoint's plain URL, both
//! with the watchdog [`ONE_WATCHDOG_MS`]; every [`Speed`] means them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use common::RedisServer;
use redisson_lock::{Client, Config, Connection, PublishMode};
use redisson_lock_compat_tests::{expected_kinds, Harness, Result};

use crate::common;
use crate::kinds::Dir;
use crate::one_address::{self, ONE_WATCHDOG_MS};
use crate::party::Party;
use crate::support::{channel_of, until, Raw, FAST_WATCHDOG_MS, QUIET_POLL};

pub struct Env {
    pub version: String,
    pub url: String,
    pub raw: Raw,
    pub java: Harness,
    /// `None` in a cluster environment ([`Speed::Fast`] then means the normal harness).
    pub java_fast: Option<Harness>,
    pub rust: Client,
    pub rust_fast: Client,
    /// 30 s watchdog, `poll_interval` [`QUIET_POLL`] (10 s): its waiters get in quickly only when an
    /// unlock message wakes them (the fair scenarios).
    pub rust_quiet: Client,
    pub jar: PathBuf,
    pub names: Mutex<Vec<String>>,
    /// Every node's URL in a cluster environment; empty on a single server.
    pub nodes: Vec<String>,
    /// The Rust clients' publish mode (`Auto` unless a cluster environment says otherwise).
    pub mode: PublishMode,
    /// The topology in log lines: empty (single server), ` cluster` or ` one address`.
    pub label: &'static str,
}

#[derive(Clone, Copy)]
pub enum Speed {
    /// 30 s watchdog.
    Normal,
    /// [`FAST_WATCHDOG_MS`] watchdog.
    Fast,
    /// 30 s watchdog; Rust waiters re-poll only every [`QUIET_POLL`] (10 s), so a quick hand-over
    /// proves the unlock message reached them (Java: the normal harness, whose fair waiters wait
    /// their whole expected time unless messaged).
    QuietPoll,
}

impl Env {
    /// Starts the harnesses and clients for `version` on `server`, and checks that the jar has
    /// exactly the kinds `kinds.properties` gives this version.
    pub async fn setup(version: &str, jar: &Path, server: &RedisServer) -> Result<Env> {
        let url = format!("redis://127.0.0.1:{}", server.port);
        let ready = Duration::from_secs(60);
        let (java, java_fast) = tokio::join!(
            Harness::start(jar, &url, 30_000, ready),
            Harness::start(jar, &url, FAST_WATCHDOG_MS, ready)
        );
        let (java, java_fast) = (java?, java_fast?);
        ensure!(
            java.version() == version,
            "the harness reports Redisson {} for jar {}",
            java.version(),
            jar.display()
        );
        let want = expected_kinds(version);
        ensure!(
            java.kinds() == want.as_slice(),
            "the harness for Redisson {version} has the lock kinds {:?}, expected {want:?} (kinds.properties; rebuild with build-harness.sh)",
            java.kinds()
        );
        let rust = Client::connect(&url)
            .await
            .map_err(|e| format!("rust connect: {e}"))?;
        let rust_fast = Client::builder()
            .url(url.as_str())
            .config(Config::default().with_lock_watchdog_timeout(Duration::from_millis(FAST_WATCHDOG_MS)))
            .build()
            .await
            .map_err(|e| format!("rust connect: {e}"))?;
        let rust_quiet = Client::builder()
            .url(url.as_str())
            .config(Config::default().with_poll_interval(QUIET_POLL))
            .build()
            .await
            .map_err(|e| format!("rust connect: {e}"))?;
        let raw = Raw(Connection::from(
            redis::Client::open(url.as_str())
                .map_err(|e| e.to_string())?
                .get_multiplexed_async_connection()
                .await
                .map_err(|e| e.to_string())?,
        ));
        Ok(Env {
            version: version.to_owned(),
            url,
            raw,
            java,
            java_fast: Some(java_fast),
            rust,
            rust_fast,
            rust_quiet,
            jar: jar.to_owned(),
            names: Mutex::new(Vec::new()),
            nodes: Vec::new(),
            mode: PublishMode::Auto,
            label: "",
        })
    }

    /// A one-address environment for `version` on the endpoint `url` (a server that refuses a
    /// script over keys of several slots, checked here first): one harness in single-server
    /// mode (`--url`, watchdog [`ONE_WATCHDOG_MS`]) and one Rust client on the same URL (the
    /// same watchdog, `poll_interval` [`QUIET_POLL`], so a quick hand-over was a message), which
    /// stands for all three of the environment's clients.
    pub async fn setup_one_address(version: &str, jar: &Path, url: &str) -> Result<Env> {
        let raw = Raw(Connection::from(
            redis::Client::open(url)
                .map_err(|e| e.to_string())?
                .get_multiplexed_async_connection()
                .await
                .map_err(|e| e.to_string())?,
        ));
        one_address::check_endpoint(&raw).await?;
        let java = Harness::start(jar, url, ONE_WATCHDOG_MS, Duration::from_secs(60)).await?;
        ensure!(
            java.version() == version,
            "the harness reports Redisson {} for jar {}",
            java.version(),
            jar.display()
        );
        let rust = Client::builder()
            .url(url)
            .config(
                Config::default()
                    .with_lock_watchdog_timeout(Duration::from_millis(ONE_WATCHDOG_MS))
                    .with_poll_interval(QUIET_POLL),
            )
            .build()
            .await
            .map_err(|e| format!("rust connect: {e}"))?;
        let env = Env {
            version: version.to_owned(),
            url: url.to_owned(),
            raw,
            java,
            java_fast: None,
            rust_fast: rust.clone(),
            rust_quiet: rust.clone(),
            rust,
            jar: jar.to_owned(),
            names: Mutex::new(Vec::new()),
            nodes: Vec::new(),
            mode: PublishMode::Auto,
            label: " one address",
        };
        one_address::warm_up(&env).await?;
        Ok(env)
    }

    /// A cluster environment for `version` on the cluster whose nodes are `nodes`: one harness
    /// in Redisson cluster mode (30 s watchdog; Redisson's own pub/sub choice for the version),
    /// Rust cluster clients in `mode` (the quiet one polls every [`QUIET_POLL`]), and raw access
    /// through a cluster connection.
    pub async fn setup_cluster(
        version: &str,
        jar: &Path,
        nodes: &[String],
        mode: PublishMode,
    ) -> Result<Env> {
        let java = Harness::start_cluster(jar, nodes, 30_000, Duration::from_secs(60)).await?;
        ensure!(
            java.version() == version,
            "the harness reports Redisson {} for jar {}",
            java.version(),
            jar.display()
        );
        let client = |config: Config| async move {
            Client::builder()
                .cluster(nodes.to_vec())
                .config(config.with_publish_mode(mode))
                .build()
                .await
                .map_err(|e| format!("rust cluster connect: {e}"))
        };
        let rust = client(Config::default()).await?;
        let rust_fast =
            client(Config::default().with_lock_watchdog_timeout(Duration::from_millis(FAST_WATCHDOG_MS)))
                .await?;
        let rust_quiet = client(Config::default().with_poll_interval(QUIET_POLL)).await?;
        let raw = Raw(Connection::from(
            redis::cluster::ClusterClient::new(nodes.to_vec())
                .map_err(|e| e.to_string())?
                .get_async_connection()
                .await
                .map_err(|e| format!("raw cluster connect: {e}"))?,
        ));
        Ok(Env {
            version: version.to_owned(),
            url: nodes.first().cloned().unwrap_or_default(),
            raw,
            java,
            java_fast: None,
            rust,
            rust_fast,
            rust_quiet,
            jar: jar.to_owned(),
            names: Mutex::new(Vec::new()),
            nodes: nodes.to_vec(),
            mode,
            label: " cluster",
        })
    }

    /// The lock name of scenario `scenario` in direction `dir` (remembered for scenario 9).
    pub fn name(&self, scenario: usize, dir: Dir) -> String {
        let n = format!("compat:{}:s{scenario}:{}", self.version, dir.tag());
        if let Ok(mut names) = self.names.lock() {
            names.push(n.clone());
        }
        n
    }

    pub fn java_party(&self, speed: Speed, worker: String) -> Party<'_> {
        let h = match speed {
            Speed::Normal | Speed::QuietPoll => &self.java,
            Speed::Fast => self.java_fast.as_ref().unwrap_or(&self.java),
        };
        Party::java(h, worker)
    }

    pub fn rust_party(&self, speed: Speed, owner: u64) -> Party<'_> {
        let c = match speed {
            Speed::Normal => &self.rust,
            Speed::Fast => &self.rust_fast,
            Speed::QuietPoll => &self.rust_quiet,
        };
        Party::rust(c, owner)
    }

    /// The party `role` ("a" = holder, "b" = the other side, ...) of scenario `s`: Java worker
    /// `s<s><dir tag><role>`, or a Rust owner id derived from (s, dir, role).
    pub fn party(&self, s: usize, dir: Dir, role: &str, java: bool, speed: Speed) -> Party<'_> {
        if java {
            self.java_party(speed, format!("s{s}{}{role}", dir.tag()))
        } else {
            let role_no = role.bytes().fold(0u64, |acc, b| acc * 31 + u64::from(b)) % 1000;
            self.rust_party(
                speed,
                (s as u64) * 100_000 + if dir == Dir::RustHolds { 50_000 } else { 0 } + role_no,
            )
        }
    }

    /// (A = holder, B = the other language) of scenario `s`.
    pub fn pair(&self, s: usize, dir: Dir, speed: Speed) -> (Party<'_>, Party<'_>) {
        let java_holds = dir == Dir::JavaHolds;
        (
            self.party(s, dir, "a", java_holds, speed),
            self.party(s, dir, "b", !java_holds, speed),
        )
    }

    /// Waits until `redisson_lock__channel:{name}` has `n` subscribers (in a cluster: classic
    /// and sharded ones on any node, counted with [`Env::subscribers`]).
    pub async fn wait_subscribers(&self, name: &str, n: i64) -> Result<()> {
        let ch = channel_of(name);
        until(
            Duration::from_secs(10),
            &format!("{n} subscriber(s) on {ch}"),
            || async {
                if self.nodes.is_empty() {
                    Ok(self.raw.numsub(&ch).await? >= n)
                } else {
                    let (classic, sharded) = self.subscribers(&ch).await?;
                    Ok(classic + sharded >= n)
                }
            },
        )
        .await
    }

    /// (classic, sharded) subscribers of `channel` over every cluster node (`PUBSUB NUMSUB` counts
    /// the subscribers of the node it runs on, `PUBSUB SHARDNUMSUB` those of the slot's nodes).
    pub async fn subscribers(&self, channel: &str) -> Result<(i64, i64)> {
        let (mut classic, mut sharded) = (0, 0);
        for url in &self.nodes {
            let mut c = redis::Client::open(url.as_str())
                .map_err(|e| e.to_string())?
                .get_multiplexed_async_connection()
                .await
                .map_err(|e| format!("connect {url}: {e}"))?;
            for (sub, total) in [("NUMSUB", &mut classic), ("SHARDNUMSUB", &mut sharded)] {
                let (_, k): (String, i64) = redis::cmd("PUBSUB")
                    .arg(sub)
                    .arg(channel)
                    .query_async(&mut c)
                    .await
                    .map_err(|e| format!("PUBSUB {sub} on {url}: {e}"))?;
                *total += k;
            }
        }
        Ok((classic, sharded))
    }

    /// Sends `exit` to both harnesses.
    pub async fn close(self) {
        for h in std::iter::once(self.java).chain(self.java_fast) {
            if let Err(e) = h.exit(Duration::from_secs(10)).await {
                eprintln!("compat: [{}] harness exit: {e}", self.version);
            }
        }
    }
}
