//! Test support: real redis-server processes on free loopback ports, stopped afterwards.
#![allow(dead_code)]

pub mod cluster;
pub mod faults;
pub mod history;
pub mod java;
pub mod kept;
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

pub(crate) fn redis_server_bin() -> String {
    std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned())
}

/// The version of the server binary the tests run (`REDIS_SERVER` or `redis-server`), from its
/// `--version` line (`Redis server v=7.0.15 ...`, `Valkey server v=8.1.8 ...`), read once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerVersion {
    pub valkey: bool,
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl ServerVersion {
    /// Whether it is at least Redis `major.minor` (Valkey forked from Redis 7.2 and has all of
    /// its options: Valkey 7.2 and later count as at least Redis 7.2).
    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl std::fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.valkey { "Valkey" } else { "Redis" };
        write!(f, "{name} {}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Parses a `redis-server --version` / `valkey-server --version` line.
pub fn parse_server_version(line: &str) -> Option<ServerVersion> {
    let v = line.split_whitespace().find_map(|w| w.strip_prefix("v="))?;
    let mut n = v.split('.').map(|p| p.parse::<u32>().ok());
    Some(ServerVersion {
        valkey: line.starts_with("Valkey"),
        major: n.next()??,
        minor: n.next()??,
        patch: n.next().flatten().unwrap_or(0),
    })
}

/// The test server binary's version (see [`ServerVersion`]).
pub fn server_version() -> ServerVersion {
    static VERSION: std::sync::OnceLock<ServerVersion> = std::sync::OnceLock::new();
    *VERSION.get_or_init(|| {
        let bin = redis_server_bin();
        let out = match Command::new(&bin).arg("--version").output() {
            Ok(out) => out,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!("{}", not_found(&bin)),
            Err(e) => panic!("cannot run `{bin} --version`: {e}"),
        };
        let line = String::from_utf8_lossy(&out.stdout);
        parse_server_version(&line)
            .unwrap_or_else(|| panic!("`{bin} --version` printed no version: {line:?}"))
    })
}

/// Server options newer than some servers the tests run on, with the Redis version that added
/// them: left out on older servers, where what they turn on is there without them
/// (`DEBUG` before 7.0 needed no `enable-debug-command`).
const NEWER_OPTIONS: &[(&str, (u32, u32))] = &[
    ("--enable-debug-command", (7, 0)),
    ("--enable-module-command", (7, 0)),
    ("--enable-protected-configs", (7, 0)),
];

/// `extra` (pairs of `--option value`) without the options this server does not know.
fn known_options<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let v = server_version();
    let mut out = Vec::with_capacity(extra.len());
    let mut i = 0;
    while i < extra.len() {
        match NEWER_OPTIONS.iter().find(|(o, _)| *o == extra[i]) {
            Some((_, (major, minor))) if !v.at_least(*major, *minor) => i += 2,
            _ => {
                out.push(extra[i]);
                i += 1;
            }
        }
    }
    out
}

/// Says that a test (or one check of it) is left out because this server lacks a feature it
/// needs (`what`: the feature and what the server answered): on stderr, and as one line in the
/// file `REDISSON_TEST_SKIPS` names, where scripts/versions collects them for its report. Only
/// for a feature found missing by asking the server, never by its version number.
pub fn skip_unsupported(test: &str, what: &str) {
    let line = format!("{test}: skipped on {}: {what}", server_version());
    eprintln!("{line}");
    if let Some(path) = std::env::var_os("REDISSON_TEST_SKIPS") {
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// Whether a server reply error says the server does not know the command or subcommand
/// (`ERR unknown command`, `ERR unknown subcommand`, `ERR Unknown PUBSUB subcommand`, ...).
pub fn is_unknown_command(e: &redis::RedisError) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    text.contains("unknown command") || text.contains("unknown subcommand")
}

/// Whether the server at `url` has sharded pub/sub (Redis 7.0+): asks `PUBSUB SHARDNUMSUB`,
/// which older servers answer with an unknown-subcommand error.
pub async fn sharded_pubsub(url: &str) -> bool {
    let mut c = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .expect("connect to the test redis");
    match redis::cmd("PUBSUB")
        .arg("SHARDNUMSUB")
        .query_async::<redis::Value>(&mut c)
        .await
    {
        Ok(_) => true,
        Err(e) if is_unknown_command(&e) => false,
        Err(e) => panic!("PUBSUB SHARDNUMSUB: {e}"),
    }
}

/// `rules` (ACL SETUSER rules, space-separated) as this server takes them: a server without
/// pub/sub channel permissions (Redis 6.0: `resetchannels` and `&pattern` are syntax errors
/// there, and every user may use every channel) gets them without the channel rules.
pub async fn acl_rules(admin: &mut redis::aio::MultiplexedConnection, rules: &str) -> String {
    let probe = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("redisson-lock-acl-probe")
        .arg("resetchannels")
        .query_async::<()>(admin)
        .await;
    let _: redis::RedisResult<i64> = redis::cmd("ACL")
        .arg("DELUSER")
        .arg("redisson-lock-acl-probe")
        .query_async(admin)
        .await;
    match probe {
        Ok(()) => rules.to_owned(),
        Err(e) if e.to_string().contains("Syntax error") => {
            let kept: Vec<&str> = rules
                .split_whitespace()
                .filter(|r| !r.starts_with('&') && *r != "resetchannels" && *r != "allchannels")
                .collect();
            if kept.len() != rules.split_whitespace().count() {
                skip_unsupported(
                    "ACL channel rules (&pattern, resetchannels)",
                    &format!("no channel permissions, every channel allowed ({e})"),
                );
            }
            kept.join(" ")
        }
        Err(e) => panic!("ACL SETUSER probe: {e}"),
    }
}

/// The Lua loop of [`busy_cmd`]: calls `TIME` until `ARGV[1]` ms have passed or it has gone
/// round `ARGV[2]` times; returns the rounds.
const BUSY_SPIN: &str = r"
local t = redis.call('TIME')
local start = tonumber(t[1]) * 1000000 + tonumber(t[2])
local n = 0
repeat
  t = redis.call('TIME')
  n = n + 1
until tonumber(t[1]) * 1000000 + tonumber(t[2]) - start >= tonumber(ARGV[1]) * 1000 or n >= tonumber(ARGV[2])
return n
";

/// An `EVAL` that keeps the server at `url` busy for about `d` (Redis serves nobody meanwhile;
/// keep `d` below `busy-reply-threshold`, 5 s by default). Redis 7.2 and later (and Valkey)
/// give a script the same `TIME` from its start to its end, so the loop also stops after the
/// number of rounds that take `d` on this server, measured once per server by timing a fixed
/// number of rounds.
pub async fn busy_cmd(url: &str, d: Duration) -> redis::Cmd {
    static ROUNDS_PER_MS: std::sync::Mutex<Vec<(String, f64)>> = std::sync::Mutex::new(Vec::new());
    let known = ROUNDS_PER_MS
        .lock()
        .unwrap()
        .iter()
        .find(|(u, _)| u == url)
        .map(|(_, r)| *r);
    let rate = match known {
        Some(r) => r,
        None => {
            const ROUNDS: u64 = 20_000;
            let cfg = redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(30)));
            let mut c = redis::Client::open(url)
                .unwrap()
                .get_multiplexed_async_connection_with_config(&cfg)
                .await
                .expect("connect to the test redis");
            let t0 = Instant::now();
            let _: i64 = redis::cmd("EVAL")
                .arg(BUSY_SPIN)
                .arg(0)
                .arg(60_000)
                .arg(ROUNDS)
                .query_async(&mut c)
                .await
                .expect("the busy script's timing run");
            let r = ROUNDS as f64 / (t0.elapsed().as_secs_f64() * 1000.0).max(0.001);
            ROUNDS_PER_MS.lock().unwrap().push((url.to_owned(), r));
            r
        }
    };
    let ms = d.as_millis() as u64;
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(BUSY_SPIN)
        .arg(0)
        .arg(ms)
        .arg(((ms as f64) * rate).ceil().max(1.0) as u64);
    cmd
}

fn not_found(bin: &str) -> String {
    format!(
        "`{bin}` not found. The tests run real redis-server processes: install it \
         (Debian/Ubuntu: `sudo apt-get install -y redis-server`; macOS: `brew install redis`), \
         or run `scripts/test`, which installs it, or set REDIS_SERVER=/path/to/redis-server."
    )
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
            if let Some(s) = Self::try_start_on(free_port(), extra) {
                return s;
            }
        }
        panic!("could not start redis-server on a free port after 20 tries");
    }

    /// Starts one on `port`; `None` when it does not come up there as this test's own (the
    /// port is taken, by another test's server for one).
    pub fn try_start_on(port: u16, extra: &[&str]) -> Option<RedisServer> {
        let dir = server_dir("redisson-lock-test", port);
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = RedisServer {
            port,
            child: None,
            dir,
            extra: extra.iter().map(|a| a.to_string()).collect(),
            conf: None,
        };
        s.spawn(extra).then_some(s)
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
            .args(known_options(extra))
            .stdout(
                std::fs::File::create(self.dir.join("server.log"))
                    .map(Stdio::from)
                    .unwrap_or_else(|_| Stdio::null()),
            )
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!("{}", not_found(&bin)),
            Err(e) => panic!("cannot run `{bin}`: {e}"),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                // exited: most likely the port was taken meanwhile; anything else (an option
                // this server does not know, a build without TLS) would fail on every port
                let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
                if log.is_empty() || log.contains("Address already in use") {
                    return false;
                }
                let tail: Vec<&str> = log.lines().rev().take(3).collect();
                panic!(
                    "`{bin}` exited at start (not for a taken port): {}",
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                );
            }
            if ping(self.port) {
                // the server that answered must be this child: a port free when it was picked
                // may have been taken meanwhile by another test's server, which must never be
                // used (nor flushed, restarted or failed over) as this test's own
                if listens_on(child.id(), self.port) == Some(false) {
                    let _ = child.kill();
                    let _ = child.wait();
                    return false;
                }
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
            let dir = server_dir("redisson-lock-sentinel", port);
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

    /// Its working directory (removed when it is dropped).
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
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

/// A working directory of a server of this process' own, never another's: a server that did
/// not come up removes its directory, and one on a port another server of this process already
/// answers on must not remove that server's.
fn server_dir(prefix: &str, port: u16) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("{prefix}-{}-{port}-{n}", std::process::id()))
}

/// Whether process `pid` holds the socket listening on 127.0.0.1:`port` (Linux' `/proc`);
/// `None` where `/proc` does not tell.
fn listens_on(pid: u32, port: u16) -> Option<bool> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    // `sl local_address rem_address st ... inode`: 127.0.0.1 is `0100007F`, LISTEN is `0A`
    let local = format!("0100007F:{port:04X}");
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() > 9 && f[1] == local && f[3] == "0A")
        .map(|f| format!("socket:[{}]", f[9]))
        .collect();
    if inodes.is_empty() {
        return None;
    }
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|t| inodes.iter().any(|i| t.as_os_str() == i.as_str()))
    }))
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

/// Waits until the server itself counts `n` subscribers of `channel` (`PUBSUB NUMSUB`): a
/// client's own count includes subscriptions sent but not yet run, so a test that kills or
/// publishes must wait for this instead.
pub async fn server_subscribers(raw: &redis::aio::MultiplexedConnection, channel: &str, n: i64, what: &str) {
    eventually(Duration::from_secs(10), what, || {
        let mut raw = raw.clone();
        let channel = channel.to_string();
        async move {
            let (_, k): (String, i64) = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg(channel)
                .query_async(&mut raw)
                .await
                .expect("PUBSUB NUMSUB");
            k == n
        }
    })
    .await;
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
/// (Redis 6.0 knows no mode argument, and pauses every client: the same.)
pub async fn pause_all(server: &RedisServer, d: Duration) -> Instant {
    let mut c = server.conn().await;
    let ms = d.as_millis() as u64;
    let all = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(ms)
        .arg("ALL")
        .query_async::<()>(&mut c)
        .await;
    // 6.0: `ERR Unknown subcommand or wrong number of arguments for 'PAUSE'`
    if let Err(e) = all {
        let _: () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(ms)
            .query_async(&mut c)
            .await
            .unwrap_or_else(|e2| panic!("CLIENT PAUSE {ms} ALL: {e}; CLIENT PAUSE {ms}: {e2}"));
    }
    Instant::now() + d
}

/// `INFO` of several sections read at one moment: one `INFO <section>` each in a `MULTI`/`EXEC`
/// transaction, joined (`INFO a b` with several sections needs Redis 7.0).
pub async fn info_sections(raw: &mut redis::aio::MultiplexedConnection, sections: &[&str]) -> String {
    let mut p = redis::pipe();
    p.atomic();
    for s in sections {
        p.cmd("INFO").arg(*s);
    }
    let infos: Vec<String> = p.query_async(raw).await.expect("INFO (in MULTI/EXEC)");
    infos.join("\r\n")
}

/// Whether this server tracks only the keys a script reads (Redis 7.2+, Valkey): where the
/// client's probe finds that held keys can be tracked without the echo of its renewals.
pub fn per_key_script_tracking() -> bool {
    let v = server_version();
    v.valkey || (v.major, v.minor) >= (7, 2)
}

/// `HEXISTS` and `PEXPIRE` calls so far (top-level and inside scripts): the loss watch's reads
/// of held keys and the renewals' extensions.
pub async fn hexists_pexpire_calls(raw: &mut redis::aio::MultiplexedConnection) -> (u64, u64) {
    let info = info_sections(raw, &["commandstats"]).await;
    let calls = |cmd: &str| {
        faults::info_field(&info, &format!("cmdstat_{cmd}"))
            .and_then(|v| v.split(',').find_map(|p| p.strip_prefix("calls=")))
            .map_or(0, |n| n.parse().unwrap())
    };
    (calls("hexists"), calls("pexpire"))
}

/// Connections to `server` of anyone but the sentinels and the replicas (and not the one that
/// asks).
pub async fn app_connections(server: &RedisServer) -> usize {
    let mut raw = server.conn().await;
    let me: i64 = redis::cmd("CLIENT")
        .arg("ID")
        .query_async(&mut raw)
        .await
        .unwrap();
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query_async(&mut raw)
        .await
        .unwrap();
    list.lines()
        .filter(|l| !l.starts_with(&format!("id={me} ")))
        .filter(|l| !l.contains(" name=sentinel-"))
        .filter(|l| !l.split(' ').any(|f| f.starts_with("flags=") && f.contains('S')))
        .count()
}

/// Checks the loss watch's reads over some renewal rounds of `n` held keys on `on`: `reads`
/// `HEXISTS` against `extensions` renewals. Without the echo only the renewal scripts' own
/// checks (a round may have started since); with it, each renewal read again.
pub fn assert_renewals_read_again(echo: bool, reads: u64, extensions: u64, n: u64, on: &str) {
    eprintln!("{on}: {reads} HEXISTS for {extensions} extensions");
    if echo {
        assert!(
            reads >= 2 * extensions - n,
            "{on}: {reads} HEXISTS for {extensions} extensions: the echo read nothing again"
        );
    } else {
        assert!(
            reads <= extensions + n,
            "{on}: {reads} HEXISTS for {extensions} extensions: renewals were read again"
        );
    }
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

/// The script calls once they stopped changing (two reads 100 ms apart agree; at most 10 s):
/// waiters that just subscribed make one more attempt each when their subscription is
/// confirmed, so a count taken before that would charge their attempts to what follows.
pub async fn settled_script_calls(raw: &mut redis::aio::MultiplexedConnection) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = script_calls(raw).await;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = script_calls(raw).await;
        if now == last {
            return now;
        }
        assert!(
            Instant::now() < deadline,
            "script calls still changing after 10 s"
        );
        last = now;
    }
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

/// Bytes received and not yet read by the server listening on `port` (Linux `/proc/net/tcp`):
/// a request sent to a stopped Redis.
pub fn bytes_waiting_at(port: u16) -> u64 {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("read /proc/net/tcp");
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let local_port = u16::from_str_radix(cols.get(1)?.rsplit(':').next()?, 16).ok()?;
            let rx = u64::from_str_radix(cols.get(4)?.split(':').nth(1)?, 16).ok()?;
            (local_port == port).then_some(rx)
        })
        .sum()
}
