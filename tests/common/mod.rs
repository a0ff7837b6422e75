//! Test support: real redis-server processes on free loopback ports, stopped afterwards.
#![allow(dead_code)]

pub mod cluster;
pub mod faults;
pub mod history;
pub mod java;
pub mod kinds;
pub mod proxy;
pub mod topology;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server this test started; killed (and its directory removed) on drop.
pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
    dir: PathBuf,
    /// The extra arguments it was started with (kept across restarts).
    extra: Vec<String>,
    /// A config file given first (sentinels need one they can rewrite).
    conf: Option<PathBuf>,
}

fn redis_server_bin() -> String {
    std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned())
}

pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral loopback port");
    l.local_addr().unwrap().port()
}

impl RedisServer {
    /// Starts a fresh redis-server (no persistence) on a free loopback port.
    pub fn start() -> RedisServer {
        Self::start_with(&[])
    }

    /// Starts with extra `--option value` arguments.
    pub fn start_with(extra: &[&str]) -> RedisServer {
        for _ in 0..20 {
            let port = free_port();
            let dir = std::env::temp_dir().join(format!("redisson-lock-test-{}-{port}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let mut s = RedisServer {
                port,
                child: None,
                dir,
                extra: extra.iter().map(|a| a.to_string()).collect(),
                conf: None,
            };
            if s.spawn(extra) {
                return s;
            }
        }
        panic!("could not start redis-server on a free port after 20 tries");
    }

    fn spawn(&mut self, extra: &[&str]) -> bool {
        let bin = redis_server_bin();
        let child = Command::new(&bin)
            .args(self.conf.iter())
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args([
                "--daemonize",
                "no",
                "--protected-mode",
                "no",
                "--loglevel",
                "warning",
            ])
            .arg("--dir")
            .arg(&self.dir)
            // a replica's first sync starts at once, not after Redis 7's 5 s of waiting for more
            // replicas (servers with a config file are sentinels: no replication settings; in a
            // cluster an immediate sync made a coordinated CLUSTER FAILOVER stall now and then)
            .args(if self.conf.is_none() && !extra.contains(&"--cluster-enabled") {
                &["--repl-diskless-sync-delay", "0"][..]
            } else {
                &[][..]
            })
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "`{bin}` not found. The tests run real redis-server processes: install it \
                 (Debian/Ubuntu: `sudo apt-get install -y redis-server`; macOS: `brew install redis`), \
                 or run `scripts/test`, which installs it, or set REDIS_SERVER=/path/to/redis-server."
            ),
            Err(e) => panic!("cannot run `{bin}`: {e}"),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return false; // exited: most likely the port was taken meanwhile
            }
            if ping(self.port) {
                self.child = Some(child);
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    /// Starts a Redis Sentinel (`redis-server <conf> --sentinel`) on a free loopback port that
    /// monitors the master on `master_port` as `name` with this `quorum`; it declares the master
    /// down after 1 s and may fail over again after 5 s.
    pub fn start_sentinel(master_port: u16, name: &str, quorum: u32) -> RedisServer {
        Self::start_sentinel_with(master_port, name, quorum, "")
    }

    /// [`start_sentinel`](Self::start_sentinel) with more lines for its config file (e.g.
    /// `sentinel auth-pass NAME PASSWORD`, `requirepass PASSWORD`).
    pub fn start_sentinel_with(master_port: u16, name: &str, quorum: u32, extra_conf: &str) -> RedisServer {
        for _ in 0..20 {
            let port = free_port();
            let dir =
                std::env::temp_dir().join(format!("redisson-lock-sentinel-{}-{port}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let conf = dir.join("sentinel.conf");
            std::fs::write(
                &conf,
                format!(
                    "sentinel monitor {name} 127.0.0.1 {master_port} {quorum}\n\
                     sentinel down-after-milliseconds {name} 1000\n\
                     sentinel failover-timeout {name} 5000\n\
                     sentinel parallel-syncs {name} 2\n{extra_conf}\n"
                ),
            )
            .unwrap();
            let mut s = RedisServer {
                port,
                child: None,
                dir,
                extra: vec!["--sentinel".into()],
                conf: Some(conf),
            };
            if s.spawn(&["--sentinel"]) {
                return s;
            }
        }
        panic!("could not start a sentinel on a free port after 20 tries");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills the server (SIGKILL) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Restarts on the same port with the same arguments and directory: empty data after a
    /// crash without persistence, the persisted data when it was started with AOF/RDB on.
    pub fn restart(&mut self) {
        self.kill();
        let extra = self.extra.clone();
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.spawn(&extra) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server did not come back on port {}", self.port);
    }

    /// A lock client on this server with `config`.
    pub async fn client(&self, config: redisson_lock::Config) -> redisson_lock::Client {
        redisson_lock::Client::builder()
            .url(self.url())
            .config(config)
            .build()
            .await
            .expect("connect a lock client to the test redis")
    }

    /// A fresh multiplexed connection for raw commands (assertions, foreign holders).
    pub async fn conn(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .expect("connect to the test redis")
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 7];
    // `-NOAUTH` also means the server is up (it was started with a password)
    matches!(s.read(&mut buf), Ok(n) if n >= 5 && (&buf[..5] == b"+PONG" || &buf[..5] == b"-NOAU"))
}

/// Whether `key` exists (a raw `EXISTS`).
pub async fn key_exists(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> bool {
    redis::cmd("EXISTS")
        .arg(key)
        .query_async::<i64>(raw)
        .await
        .expect("EXISTS")
        == 1
}

/// How many times the server has run `cmd` (lower case: `evalsha`, `wait`), from
/// `INFO commandstats` (0 before the first call).
pub async fn command_calls(raw: &mut redis::aio::MultiplexedConnection, cmd: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(raw)
        .await
        .expect("INFO commandstats");
    let prefix = format!("cmdstat_{cmd}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Waits until `cond` holds, checking every 20 ms, failing the test after `limit`.
pub async fn eventually<F, Fut>(limit: Duration, what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    loop {
        if cond().await {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A raw subscriber that records every message on one channel.
pub struct RawSubscriber {
    pub rx: tokio::sync::mpsc::UnboundedReceiver<String>,
    _task: tokio::task::JoinHandle<()>,
}

impl RawSubscriber {
    pub async fn new(url: &str, channel: &str) -> RawSubscriber {
        let client = redis::Client::open(url).unwrap();
        let mut ps = client.get_async_pubsub().await.unwrap();
        ps.subscribe(channel).await.unwrap();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            use futures::StreamExt;
            let mut stream = ps.on_message();
            while let Some(msg) = stream.next().await {
                let payload: String = msg.get_payload().unwrap_or_default();
                if tx.send(payload).is_err() {
                    break;
                }
            }
        });
        RawSubscriber { rx, _task: task }
    }

    /// Messages received so far, after a PING round trip on a data connection has made sure
    /// everything published before now has been delivered.
    pub async fn drain(&mut self, server: &RedisServer) -> Vec<String> {
        // A publish is delivered to subscribers before the publisher's reply; one more round
        // trip on any connection orders us after it. Then give the reader task a moment.
        let mut c = server.conn().await;
        let _: () = redis::cmd("PING").query_async(&mut c).await.unwrap();
        let mut out = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(200);
        while let Ok(Some(m)) = tokio::time::timeout_at(deadline.into(), self.rx.recv()).await {
            out.push(m);
        }
        out
    }
}

pub fn uuid_field_regex() -> regex::Regex {
    regex::Regex::new(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9]+$").unwrap()
}

pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// `CLIENT PAUSE <d> ALL` on a connection of its own: returns as soon as the pause has started.
/// Until it runs out Redis reads every other client's commands but runs none of them, so a
/// request sent meanwhile is in Redis with its fate unknown to its sender (as behind a slow
/// script or a fork stall), and runs when the pause ends.
pub async fn pause_all(server: &RedisServer, d: Duration) -> Instant {
    let mut c = server.conn().await;
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(d.as_millis() as u64)
        .arg("ALL")
        .query_async(&mut c)
        .await
        .expect("CLIENT PAUSE");
    Instant::now() + d
}

/// Lock scripts Redis has run so far (`EVALSHA` and `EVAL` calls in `INFO commandstats`).
pub async fn script_calls(raw: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(raw)
        .await
        .expect("INFO commandstats");
    info.lines()
        .filter(|l| l.starts_with("cmdstat_evalsha:") || l.starts_with("cmdstat_eval:"))
        .filter_map(|l| l.split("calls=").nth(1)?.split(',').next()?.parse::<u64>().ok())
        .sum()
}

/// Every key in the server except the fenced locks' token counters (which Redisson never
/// expires): what locking left behind.
pub async fn leftovers(raw: &mut redis::aio::MultiplexedConnection) -> Vec<String> {
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(raw).await.expect("KEYS");
    let mut left: Vec<String> = keys
        .into_iter()
        .filter(|k| !k.starts_with("redisson_lock_token:"))
        .collect();
    left.sort();
    left
}

/// Waits until no request or attempt latch `redisson_unlock_latch:*` is left (the client's latch
/// janitor deleted them), so that nothing of a client is in flight when a test freezes Redis.
pub async fn latches_deleted(s: &RedisServer) {
    eventually(Duration::from_secs(5), "request latches deleted", || {
        let url = s.url();
        async move {
            let mut c = redis::Client::open(url)
                .unwrap()
                .get_multiplexed_async_connection()
                .await
                .unwrap();
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg("redisson_unlock_latch:*")
                .query_async(&mut c)
                .await
                .unwrap();
            keys.is_empty()
        }
    })
    .await;
}

/// `PTTL key` in ms (-2: no key, -1: no TTL).
pub async fn pttl(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> i64 {
    redis::cmd("PTTL").arg(key).query_async(raw).await.expect("PTTL")
}
