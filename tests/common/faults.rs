//! Fault injectors against a redis-server the test started (never anyone else's), a `Nemesis`
//! that runs a schedule of them in the background and records each fault's window, and a
//! sampler that watches lock keys for missing TTLs and extra owners.
//!
//! Every injector is a small async fn that returns once the fault's effect is over (a stopped
//! server was continued, a pause ran out, memory was restored), with a line describing what it
//! did, so `[start, end]` of the call is the fault's window.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::seq::SliceRandom;
use rand::Rng;
use redis::aio::MultiplexedConnection;

use super::history::{now_ns, FaultRecord, Sample};
use super::proxy::{Proxy, Stream, Toxic};
use super::RedisServer;

/// A redis-server under test, shared with the nemesis (which may restart it).
#[derive(Clone)]
pub struct Target {
    server: Arc<Mutex<RedisServer>>,
    pub url: String,
    pub port: u16,
    /// The proxy the clients under test go through, for network faults (`None`: they connect
    /// to the server directly).
    pub proxy: Option<Proxy>,
}

impl Target {
    pub fn new(server: RedisServer) -> Target {
        Target {
            url: server.url(),
            port: server.port,
            server: Arc::new(Mutex::new(server)),
            proxy: None,
        }
    }

    /// The URL and port the clients under test use: the proxy's when there is one.
    pub fn client_url(&self) -> String {
        self.proxy.as_ref().map_or_else(|| self.url.clone(), Proxy::url)
    }

    pub fn client_port(&self) -> u16 {
        self.proxy.as_ref().map_or(self.port, |p| p.port)
    }

    /// A fresh connection (5 s reply timeout) for admin commands.
    pub async fn conn(&self) -> Result<MultiplexedConnection, String> {
        admin_conn(&self.url, Some(Duration::from_secs(5))).await
    }
}

/// A fresh multiplexed connection with the given reply timeout (`None`: wait for ever).
pub async fn admin_conn(url: &str, reply_timeout: Option<Duration>) -> Result<MultiplexedConnection, String> {
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let cfg = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(reply_timeout);
    client
        .get_multiplexed_async_connection_with_config(&cfg)
        .await
        .map_err(|e| format!("connect to {url}: {e}"))
}

async fn query<T: redis::FromRedisValue>(
    c: &mut MultiplexedConnection,
    cmd: &redis::Cmd,
) -> Result<T, String> {
    cmd.query_async(c).await.map_err(|e| e.to_string())
}

/// The server's process id, from `INFO server` (`process_id:`).
pub async fn pid(url: &str) -> Result<i32, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let info: String = query(&mut c, redis::cmd("INFO").arg("server")).await?;
    info_field(&info, "process_id")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no process_id in INFO server: {info}"))
}

/// The value of `name:` in an `INFO` reply.
pub fn info_field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines().find_map(|l| {
        l.strip_prefix(name)
            .and_then(|r| r.strip_prefix(':'))
            .map(str::trim)
    })
}

fn signal(pid: i32, sig: libc::c_int) -> Result<(), String> {
    // SAFETY: kill(2) with a pid we read from our own redis-server; no memory is touched.
    let rc = unsafe { libc::kill(pid, sig) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("kill({pid}, {sig}): {}", std::io::Error::last_os_error()))
    }
}

/// A stopped (SIGSTOP) process, continued (SIGCONT) when the guard is dropped, also on panic
/// or cancellation.
pub struct Stopped {
    pid: i32,
}

impl Stopped {
    pub fn new(pid: i32) -> Result<Stopped, String> {
        signal(pid, libc::SIGSTOP)?;
        Ok(Stopped { pid })
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = signal(self.pid, libc::SIGCONT);
    }
}

/// SIGSTOP the server for `d`, then SIGCONT.
pub async fn sigstop_for(url: &str, d: Duration) -> Result<String, String> {
    let pid = pid(url).await?;
    let stopped = Stopped::new(pid)?;
    tokio::time::sleep(d).await;
    drop(stopped);
    Ok(format!(
        "SIGSTOP pid {pid} for {} ms, then SIGCONT",
        d.as_millis()
    ))
}

/// kill -9 the server and start a new one on the same port, with empty data (no persistence).
pub async fn kill9_restart(t: &Target) -> Result<String, String> {
    let old = pid(&t.url).await.unwrap_or(-1);
    let server = t.server.clone();
    tokio::task::spawn_blocking(move || {
        let mut s = server.lock().unwrap_or_else(|p| p.into_inner());
        s.restart(); // SIGKILL, wait, spawn on the same port, wait for PING
    })
    .await
    .map_err(|e| format!("restart panicked: {e}"))?;
    let new = pid(&t.url).await.unwrap_or(-1);
    Ok(format!(
        "kill -9 pid {old}, restarted on port {} as pid {new} (empty data)",
        t.port
    ))
}

/// `CLIENT KILL TYPE <ty> SKIPME yes` (`normal` or `pubsub`): every connection of that type
/// except the injector's own.
pub async fn client_kill(url: &str, ty: &str) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let n: i64 = query(
        &mut c,
        redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg(ty)
            .arg("SKIPME")
            .arg("yes"),
    )
    .await?;
    Ok(format!("CLIENT KILL TYPE {ty} SKIPME yes: {n} connections"))
}

/// `CLIENT PAUSE <ms> <WRITE|ALL>`, returning when the pause ran out.
pub async fn client_pause(url: &str, d: Duration, mode: &str) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let _: () = query(
        &mut c,
        redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(d.as_millis() as u64)
            .arg(mode),
    )
    .await?;
    tokio::time::sleep(d).await;
    Ok(format!("CLIENT PAUSE {} {mode}", d.as_millis()))
}

/// A Lua script that spins for `d` on a connection of its own: Redis serves nobody meanwhile.
/// Keep `d` below `busy-reply-threshold` (5 s by default): beyond it Redis answers `BUSY` to
/// everyone else instead of queueing their commands.
pub async fn busy_script(url: &str, d: Duration) -> Result<String, String> {
    const SPIN: &str = r"
local t = redis.call('TIME')
local start = tonumber(t[1]) * 1000000 + tonumber(t[2])
local n = 0
repeat
  t = redis.call('TIME')
  n = n + 1
until tonumber(t[1]) * 1000000 + tonumber(t[2]) - start >= tonumber(ARGV[1]) * 1000
return n
";
    let mut c = admin_conn(url, None).await?;
    let n: i64 = query(
        &mut c,
        redis::cmd("EVAL").arg(SPIN).arg(0).arg(d.as_millis() as u64),
    )
    .await?;
    Ok(format!(
        "busy Lua script for {} ms ({n} TIME calls)",
        d.as_millis()
    ))
}

/// `SCRIPT FLUSH`: every `EVALSHA` gets `NOSCRIPT` until the script is loaded again.
pub async fn script_flush(url: &str) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let _: () = query(&mut c, redis::cmd("SCRIPT").arg("FLUSH")).await?;
    Ok("SCRIPT FLUSH".into())
}

/// `FLUSHALL`: every lock is gone (data loss).
pub async fn flushall(url: &str) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let _: () = query(&mut c, &redis::cmd("FLUSHALL")).await?;
    Ok("FLUSHALL".into())
}

/// Out of memory for `d`: `maxmemory` just above current use with `noeviction`, filled with junk
/// keys (`faults:junk:*`, 32 KiB each) until Redis answers `OOM`; then the junk is deleted and
/// both settings restored. Meanwhile writes that grow memory (acquires, unlock latches) fail.
pub async fn oom_for(url: &str, d: Duration) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let info: String = query(&mut c, redis::cmd("INFO").arg("memory")).await?;
    let used: u64 = info_field(&info, "used_memory")
        .and_then(|v| v.parse().ok())
        .ok_or("no used_memory in INFO memory")?;
    let old_max: Vec<String> = query(&mut c, redis::cmd("CONFIG").arg("GET").arg("maxmemory")).await?;
    let old_policy: Vec<String> =
        query(&mut c, redis::cmd("CONFIG").arg("GET").arg("maxmemory-policy")).await?;
    let (old_max, old_policy) = (
        old_max.get(1).cloned().unwrap_or_else(|| "0".into()),
        old_policy.get(1).cloned().unwrap_or_else(|| "noeviction".into()),
    );
    let limit = used + 1024 * 1024;
    let set = async {
        let _: () = query(
            &mut c,
            redis::cmd("CONFIG")
                .arg("SET")
                .arg("maxmemory-policy")
                .arg("noeviction"),
        )
        .await?;
        let _: () = query(
            &mut c,
            redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg(limit),
        )
        .await?;
        Ok::<_, String>(())
    };
    let mut result = set.await;
    let junk = vec![b'x'; 32 * 1024];
    let mut filled = 0usize;
    let mut reached = false;
    if result.is_ok() {
        for i in 0..1024 {
            let r: Result<(), String> = query(
                &mut c,
                redis::cmd("SET")
                    .arg(format!("faults:junk:{i}"))
                    .arg(&junk[..])
                    .arg("PX")
                    .arg(120_000),
            )
            .await;
            match r {
                Ok(()) => filled += 1,
                Err(e) if e.contains("OOM") => {
                    reached = true;
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_ok() {
            tokio::time::sleep(d).await;
        }
    }
    // restore, whatever happened
    if filled > 0 {
        let mut del = redis::cmd("DEL");
        for i in 0..filled {
            del.arg(format!("faults:junk:{i}"));
        }
        let r: Result<i64, String> = query(&mut c, &del).await;
        if let Err(e) = r {
            result = result.and(Err(format!("deleting junk keys: {e}")));
        }
    }
    for (k, v) in [("maxmemory", &old_max), ("maxmemory-policy", &old_policy)] {
        let r: Result<(), String> = query(&mut c, redis::cmd("CONFIG").arg("SET").arg(k).arg(v)).await;
        if let Err(e) = r {
            result = result.and(Err(format!("restoring {k}: {e}")));
        }
    }
    result.map(|()| {
        format!(
            "maxmemory {limit} (used {used}) noeviction, {filled} junk keys of 32 KiB, OOM {} for {} ms",
            if reached { "reached" } else { "NOT reached" },
            d.as_millis()
        )
    })
}

/// The kind of foreign value [`wrong_type`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foreign {
    String,
    List,
}

/// Writes a key of another type under `name` (over whatever is there, a held lock included),
/// with a TTL of `ttl`, and returns when that TTL has run out, with the time (ns) of the write.
///
/// `wait_for_fresh_hold`: first wait up to that long for a hold that began after this call
/// (a hash whose fields differ from those seen first), so that the rest of a hold follows the
/// write: the holder's renewals then meet the foreign key (F30).
pub async fn wrong_type(
    url: &str,
    name: &str,
    kind: Foreign,
    ttl: Duration,
    wait_for_fresh_hold: Duration,
) -> Result<(String, u64), String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let began = tokio::time::Instant::now();
    let deadline = began + wait_for_fresh_hold;
    let mut first: Option<Vec<String>> = None;
    let mut fresh = false;
    let holders = loop {
        let t: String = query(&mut c, redis::cmd("TYPE").arg(name)).await?;
        let fields: Vec<String> = if t == "hash" {
            query(&mut c, redis::cmd("HKEYS").arg(name))
                .await
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let fresh_now = match &first {
            None => {
                first = Some(fields.clone());
                false
            }
            Some(f) => !fields.is_empty() && fields != *f,
        };
        if fresh_now {
            fresh = true;
            break fields;
        }
        if tokio::time::Instant::now() >= deadline {
            break fields;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let px = ttl.as_millis() as u64;
    let written = now_ns();
    match kind {
        Foreign::String => {
            let _: () = query(
                &mut c,
                redis::cmd("SET").arg(name).arg("not a lock").arg("PX").arg(px),
            )
            .await?;
        }
        Foreign::List => {
            let _: () = redis::pipe()
                .atomic()
                .del(name)
                .ignore()
                .rpush(name, "not a lock")
                .ignore()
                .pexpire(name, px as i64)
                .ignore()
                .query_async(&mut c)
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    tokio::time::sleep(ttl).await;
    let detail = format!(
        "{kind:?} with PX {px} written over `{name}` ({}; waited {} ms for it)",
        match (holders.is_empty(), fresh) {
            (true, _) => "it was not held".to_owned(),
            (false, true) => format!("a fresh hold of {}", holders.join(", ")),
            (false, false) => format!("held by {} (no fresh hold seen)", holders.join(", ")),
        },
        (tokio::time::Instant::now() - began)
            .saturating_sub(ttl)
            .as_millis()
    );
    Ok((detail, written))
}

/// One fault to inject.
#[derive(Clone, Debug)]
pub enum Fault {
    SigStop(Duration),
    ClientKillNormal,
    ClientKillPubsub,
    ClientPause {
        d: Duration,
        mode: &'static str,
    },
    BusyScript(Duration),
    ScriptFlush,
    Oom(Duration),
    WrongType {
        name: String,
        kind: Foreign,
        ttl: Duration,
    },
    /// kill -9 and restart without persistence (data loss).
    Restart,
    /// `FLUSHALL` (data loss).
    FlushAll,
    /// A fault of the network between the clients and the server (the target's proxy).
    Net(NetFault),
}

/// A network fault, made by the target's toxiproxy for a while and then taken away.
#[derive(Clone, Debug)]
pub enum NetFault {
    /// Every reply delayed `ms` ± `jitter_ms`.
    Latency { d: Duration, ms: u64, jitter_ms: u64 },
    /// Nothing passes either way; each connection is closed after `close_ms` (longer than the
    /// clients' command timeout): a stall, then a close. With `close_ms` 0 the connections stay
    /// open and silent (half-open) until the fault ends, and then what was held back is
    /// delivered, late: requests the clients gave up on run after all.
    Stall { d: Duration, close_ms: u64 },
    /// Connections are reset (RST) `after_ms` after data starts to flow: mid-pipeline.
    Reset { d: Duration, after_ms: u64 },
    /// Connections are closed once `bytes` of replies have passed: a reply cut in the middle,
    /// after the server ran the command.
    CutReplies { d: Duration, bytes: u64 },
    /// Requests and replies sliced into pieces of a few bytes.
    Slices { d: Duration },
    /// Replies limited to `kb_per_s`.
    Bandwidth { d: Duration, kb_per_s: u64 },
    /// The proxy down (connections closed, new ones refused), then up again.
    Down(Duration),
}

impl NetFault {
    fn duration(&self) -> Duration {
        match self {
            NetFault::Latency { d, .. }
            | NetFault::Stall { d, .. }
            | NetFault::Reset { d, .. }
            | NetFault::CutReplies { d, .. }
            | NetFault::Slices { d }
            | NetFault::Bandwidth { d, .. }
            | NetFault::Down(d) => *d,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            NetFault::Latency { .. } => "net-latency",
            NetFault::Stall { close_ms: 0, .. } => "net-half-open",
            NetFault::Stall { .. } => "net-stall-close",
            NetFault::Reset { .. } => "net-reset-peer",
            NetFault::CutReplies { .. } => "net-cut-replies",
            NetFault::Slices { .. } => "net-slicer",
            NetFault::Bandwidth { .. } => "net-bandwidth",
            NetFault::Down(_) => "net-proxy-down",
        }
    }

    /// Cuts connections or stalls them past a command timeout.
    fn disrupts(&self) -> bool {
        matches!(
            self,
            NetFault::Stall { .. } | NetFault::Reset { .. } | NetFault::CutReplies { .. } | NetFault::Down(_)
        )
    }

    /// Makes the fault through `p` and takes it away again.
    pub async fn inject(&self, p: &Proxy) -> Result<String, String> {
        let d = self.duration();
        let ms = d.as_millis();
        match *self {
            NetFault::Latency { ms: l, jitter_ms, .. } => {
                p.with_toxics_for(&[Toxic::latency(Stream::Down, l, jitter_ms)], d)
                    .await?;
                Ok(format!("replies delayed {l} ± {jitter_ms} ms for {ms} ms"))
            }
            NetFault::Stall { close_ms, .. } => {
                let t = [
                    Toxic::timeout(Stream::Up, close_ms),
                    Toxic::timeout(Stream::Down, close_ms),
                ];
                p.with_toxics_for(&t, d).await?;
                Ok(if close_ms == 0 {
                    format!("no data either way for {ms} ms, connections left open (half-open), then the held-back data delivered")
                } else {
                    format!("no data either way, each connection closed after {close_ms} ms, for {ms} ms")
                })
            }
            NetFault::Reset { after_ms, .. } => {
                p.with_toxics_for(&[Toxic::reset_peer(Stream::Up, after_ms)], d)
                    .await?;
                Ok(format!(
                    "connections reset {after_ms} ms into their data, for {ms} ms"
                ))
            }
            NetFault::CutReplies { bytes, .. } => {
                p.with_toxics_for(&[Toxic::limit_data(Stream::Down, bytes)], d)
                    .await?;
                Ok(format!(
                    "connections closed after {bytes} bytes of replies, for {ms} ms"
                ))
            }
            NetFault::Slices { .. } => {
                let t = [
                    Toxic::slicer(Stream::Up, 4, 3, 20),
                    Toxic::slicer(Stream::Down, 4, 3, 20),
                ];
                p.with_toxics_for(&t, d).await?;
                Ok(format!(
                    "both ways sliced into 1-7 byte pieces 20 µs apart, for {ms} ms"
                ))
            }
            NetFault::Bandwidth { kb_per_s, .. } => {
                p.with_toxics_for(&[Toxic::bandwidth(Stream::Down, kb_per_s)], d)
                    .await?;
                Ok(format!("replies limited to {kb_per_s} KB/s for {ms} ms"))
            }
            NetFault::Down(_) => {
                p.down_for(d).await?;
                Ok(format!(
                    "proxy down for {ms} ms (connections closed, new ones refused), then up"
                ))
            }
        }
    }

    /// One of each network fault, in random order, with random parameters: latency 20 ± 20 ms
    /// for 2-4 s, a stall of 0.7-1.2 s closing each connection after 600-900 ms (the clients'
    /// command timeout is shorter) or leaving it half-open, resets 0-30 ms into the data for 200-500 ms, replies cut
    /// after 16-2048 bytes for 300-900 ms, slicing for 1.5-3 s, 16-64 KB/s for 1.5-3 s, and the
    /// proxy down for 300-1000 ms.
    pub fn round(rng: &mut impl Rng) -> Vec<Fault> {
        let mut v = vec![
            NetFault::Latency {
                d: ms(rng, 2_000, 4_000),
                ms: 20,
                jitter_ms: 20,
            },
            NetFault::Stall {
                d: ms(rng, 700, 1_200),
                close_ms: if rng.random_bool(0.5) {
                    0
                } else {
                    rng.random_range(600..=900)
                },
            },
            NetFault::Reset {
                d: ms(rng, 200, 500),
                after_ms: rng.random_range(0..=30),
            },
            NetFault::CutReplies {
                d: ms(rng, 300, 900),
                bytes: rng.random_range(16..=2_048),
            },
            NetFault::Slices {
                d: ms(rng, 1_500, 3_000),
            },
            NetFault::Bandwidth {
                d: ms(rng, 1_500, 3_000),
                kb_per_s: rng.random_range(16..=64),
            },
            NetFault::Down(ms(rng, 300, 1_000)),
        ];
        v.shuffle(rng);
        v.into_iter().map(Fault::Net).collect()
    }
}

impl Fault {
    pub fn kind(&self) -> String {
        match self {
            Fault::SigStop(_) => "sigstop".into(),
            Fault::ClientKillNormal => "client-kill-normal".into(),
            Fault::ClientKillPubsub => "client-kill-pubsub".into(),
            Fault::ClientPause { mode, .. } => format!("client-pause-{}", mode.to_lowercase()),
            Fault::BusyScript(_) => "busy-script".into(),
            Fault::ScriptFlush => "script-flush".into(),
            Fault::Oom(_) => "oom".into(),
            Fault::WrongType { kind, .. } => format!("wrongtype-{kind:?}").to_lowercase(),
            Fault::Restart => "kill9-restart".into(),
            Fault::FlushAll => "flushall".into(),
            Fault::Net(n) => n.kind().into(),
        }
    }

    /// Erases every lock.
    pub fn data_loss(&self) -> bool {
        matches!(self, Fault::Restart | Fault::FlushAll)
    }

    /// Cuts the clients off the server long enough that a hold may run out.
    pub fn severs(&self) -> bool {
        matches!(self, Fault::Net(n) if n.disrupts())
    }

    /// The lock name whose data this fault overwrites.
    pub fn target(&self) -> Option<String> {
        match self {
            Fault::WrongType { name, .. } => Some(name.clone()),
            _ => None,
        }
    }

    /// Stalls Redis or cuts the connections renewals go through: a renewal due meanwhile fails
    /// and is retried later, so two of these within one watchdog trust window can legitimately
    /// cost a hold (see [`spaced`]).
    pub fn disrupts_renewal(&self) -> bool {
        matches!(
            self,
            Fault::SigStop(_)
                | Fault::ClientKillNormal
                | Fault::ClientPause { .. }
                | Fault::BusyScript(_)
                | Fault::Restart
        ) || matches!(self, Fault::Net(n) if n.disrupts())
    }

    /// How long the injector takes, about.
    pub fn planned(&self) -> Duration {
        match self {
            Fault::SigStop(d) | Fault::ClientPause { d, .. } | Fault::BusyScript(d) | Fault::Oom(d) => *d,
            Fault::WrongType { ttl, .. } => *ttl,
            Fault::Net(n) => n.duration(),
            _ => Duration::ZERO,
        }
    }

    /// Injects the fault; returns a description and, when the fault's effect began later than
    /// the call (after waiting for something), when it began (ns).
    pub async fn inject(&self, t: &Target) -> Result<(String, Option<u64>), String> {
        if let Fault::WrongType { name, kind, ttl } = self {
            let (d, at) = wrong_type(&t.url, name, *kind, *ttl, Duration::from_secs(8)).await?;
            return Ok((d, Some(at)));
        }
        let d = match self {
            Fault::SigStop(d) => sigstop_for(&t.url, *d).await,
            Fault::ClientKillNormal => client_kill(&t.url, "normal").await,
            Fault::ClientKillPubsub => client_kill(&t.url, "pubsub").await,
            Fault::ClientPause { d, mode } => client_pause(&t.url, *d, mode).await,
            Fault::BusyScript(d) => busy_script(&t.url, *d).await,
            Fault::ScriptFlush => script_flush(&t.url).await,
            Fault::Oom(d) => oom_for(&t.url, *d).await,
            Fault::WrongType { .. } => unreachable!(),
            Fault::Restart => kill9_restart(t).await,
            Fault::FlushAll => flushall(&t.url).await,
            Fault::Net(n) => match &t.proxy {
                Some(p) => n.inject(p).await,
                None => Err("a network fault needs the target's proxy".to_owned()),
            },
        }?;
        Ok((d, None))
    }

    /// One of each fault that loses no data, in random order, with random durations:
    /// SIGSTOP 200–800 ms, both CLIENT KILLs, CLIENT PAUSE WRITE and ALL 200–800 ms, a busy
    /// script of ~1 s, SCRIPT FLUSH, OOM 400–900 ms, and a key of another type over `victim`
    /// for `poison_ttl` (string or list).
    pub fn non_data_loss_round(rng: &mut impl Rng, victim: &str, poison_ttl: Duration) -> Vec<Fault> {
        let mut v = vec![
            Fault::SigStop(ms(rng, 200, 800)),
            Fault::ClientKillNormal,
            Fault::ClientKillPubsub,
            Fault::ClientPause {
                d: ms(rng, 200, 800),
                mode: "WRITE",
            },
            Fault::ClientPause {
                d: ms(rng, 200, 800),
                mode: "ALL",
            },
            Fault::BusyScript(ms(rng, 900, 1100)),
            Fault::ScriptFlush,
            Fault::Oom(ms(rng, 400, 900)),
            Fault::WrongType {
                name: victim.to_owned(),
                kind: if rng.random_bool(0.5) {
                    Foreign::String
                } else {
                    Foreign::List
                },
                ttl: poison_ttl,
            },
        ];
        v.shuffle(rng);
        v
    }
}

/// A schedule entry: wait `after`, then inject `fault`.
#[derive(Clone, Debug)]
pub struct Step {
    pub after: Duration,
    pub fault: Fault,
}

/// A schedule of `faults` in this order, each `gap_ms` (random in the range) after the previous
/// one ended, and any two that disrupt renewals at least `spacing` apart (end to start). With a
/// `spacing` longer than the watchdog timeout, one trust window never sees two disruptions, so
/// a correct watchdog (renewing every timeout/3, a command timeout per try) loses no hold.
pub fn spaced(
    rng: &mut impl Rng,
    faults: Vec<Fault>,
    gap_ms: std::ops::RangeInclusive<u64>,
    spacing: Duration,
) -> Vec<Step> {
    let mut t = Duration::ZERO; // estimated end of the previous fault
    let mut last_disruption: Option<Duration> = None;
    let mut out = Vec::new();
    for fault in faults {
        let mut after = Duration::from_millis(rng.random_range(gap_ms.clone()));
        if let (true, Some(e)) = (fault.disrupts_renewal(), last_disruption) {
            let earliest = e + spacing;
            if t + after < earliest {
                after = earliest - t;
            }
        }
        t += after + fault.planned();
        if fault.disrupts_renewal() {
            last_disruption = Some(t);
        }
        out.push(Step { after, fault });
    }
    out
}

/// Runs a schedule of faults in a background task, one at a time, recording each one's window.
pub struct Nemesis {
    task: tokio::task::JoinHandle<Vec<FaultRecord>>,
    stop: Arc<AtomicBool>,
}

/// An injector that has not returned after this long is abandoned (recorded as an error).
const INJECT_LIMIT: Duration = Duration::from_secs(20);

impl Nemesis {
    /// Starts injecting `steps` against `target`; no fault starts after `until`.
    pub fn spawn(target: Target, steps: Vec<Step>, until: tokio::time::Instant) -> Nemesis {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let task = tokio::spawn(async move {
            let mut out = Vec::new();
            for step in steps {
                tokio::time::sleep(step.after).await;
                if stop2.load(Ordering::Relaxed) || tokio::time::Instant::now() >= until {
                    break;
                }
                let mut start = now_ns();
                let r = match tokio::time::timeout(INJECT_LIMIT, step.fault.inject(&target)).await {
                    Ok(r) => r,
                    Err(_) => Err(format!("injector did not return within {INJECT_LIMIT:?}")),
                };
                let end = now_ns();
                let (detail, error) = match r {
                    Ok((d, began)) => {
                        start = began.unwrap_or(start);
                        (d, None)
                    }
                    Err(e) => (format!("{:?}", step.fault), Some(e)),
                };
                out.push(FaultRecord {
                    kind: step.fault.kind(),
                    detail,
                    data_loss: step.fault.data_loss(),
                    target: step.fault.target(),
                    severs: step.fault.severs(),
                    start,
                    end,
                    error,
                });
            }
            out
        });
        Nemesis { task, stop }
    }

    /// Waits for the schedule to finish (or `until`), returning the faults injected.
    pub async fn join(self) -> Vec<FaultRecord> {
        self.task.await.expect("the nemesis task panicked")
    }

    /// Starts no further fault, waits for the current one to end.
    pub async fn stop(self) -> Vec<FaultRecord> {
        self.stop.store(true, Ordering::Relaxed);
        self.join().await
    }
}

/// What a [`Sampler`] saw.
#[derive(Clone, Debug, Default)]
pub struct SamplerReport {
    /// Rounds that got an answer.
    pub rounds: u64,
    /// Rounds that failed (fault in progress).
    pub failed_rounds: u64,
    /// Lock keys without a TTL, or with more than one owner field.
    pub violations: Vec<Sample>,
}

/// Checks `PTTL` (and the number of owner fields) of every lock name every `period`, recording
/// any key without a TTL (`-1`) and any lock hash with more than one field.
pub struct Sampler {
    task: tokio::task::JoinHandle<SamplerReport>,
    stop: Arc<AtomicBool>,
}

impl Sampler {
    pub fn spawn(url: String, names: Vec<String>, period: Duration) -> Sampler {
        // no-writes: runs during CLIENT PAUSE WRITE and OOM too
        const PROBE: &str = "#!lua flags=no-writes
local out = {}
for _, k in ipairs(KEYS) do
  local t = redis.call('TYPE', k)['ok']
  local n = -1
  if t == 'hash' then n = redis.call('HLEN', k) end
  out[#out + 1] = redis.call('PTTL', k)
  out[#out + 1] = n
end
return out";
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let task = tokio::spawn(async move {
            let mut rep = SamplerReport::default();
            let mut conn: Option<MultiplexedConnection> = None;
            while !stop2.load(Ordering::Relaxed) {
                tokio::time::sleep(period).await;
                if conn.is_none() {
                    conn = admin_conn(&url, Some(Duration::from_millis(500))).await.ok();
                }
                let Some(c) = conn.as_mut() else {
                    rep.failed_rounds += 1;
                    continue;
                };
                let mut cmd = redis::cmd("EVAL");
                cmd.arg(PROBE).arg(names.len());
                for n in &names {
                    cmd.arg(n);
                }
                let time = now_ns();
                match cmd.query_async::<Vec<i64>>(c).await {
                    Ok(v) => {
                        rep.rounds += 1;
                        for (i, name) in names.iter().enumerate() {
                            let (pttl, hlen) = (v[2 * i], v[2 * i + 1]);
                            let problem = if pttl == -1 {
                                "key without TTL"
                            } else if hlen > 1 {
                                "more than one owner field"
                            } else {
                                continue;
                            };
                            rep.violations.push(Sample {
                                time,
                                lock: name.clone(),
                                pttl,
                                hlen,
                                problem: problem.into(),
                            });
                        }
                    }
                    Err(_) => {
                        rep.failed_rounds += 1;
                        conn = None;
                    }
                }
            }
            rep
        });
        Sampler { task, stop }
    }

    pub async fn stop(self) -> SamplerReport {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.expect("the sampler task panicked")
    }
}

fn ms(rng: &mut impl Rng, lo: u64, hi: u64) -> Duration {
    Duration::from_millis(rng.random_range(lo..=hi))
}
