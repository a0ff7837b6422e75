//! The interop matrix: every scenario × every Redisson version × both directions, against real
//! redis-server processes and real Redisson (the JVM harness). Writes `compat-tests/RESULTS.md`
//! and prints `compat: N passed, M failed`; exits non-zero when anything failed.
//!
//! Env: `COMPAT_VERSIONS` (default `4.7.0 3.52.0 3.24.3 3.17.7`), `COMPAT_SCENARIOS` (e.g. `1,2,8`;
//! a filtered run does not rewrite RESULTS.md), `CI=true` (a missing JDK/Maven/redis-server fails).

// Shared with the crate's own tests; not ours to format (rustfmt would follow the path).
#[rustfmt::skip]
#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::RedisServer;
use futures::FutureExt;
use redis::aio::MultiplexedConnection;
use redisson_lock::{Client, Config, Error as LockError, LockGuard, ReadGuard, WriteGuard};
use redisson_lock_compat_tests::{
    crate_dir, find_exclusive_overlap, find_overlap, now_micros, now_ms, on_path, Harness, Interval, Pending,
    Result,
};
use tokio::io::AsyncBufReadExt;

const DEFAULT_VERSIONS: &str = "4.7.0 3.52.0 3.24.3 3.17.7";
/// Java calls that should answer at once.
const CMD: Duration = Duration::from_secs(10);
/// The wake-up bound of the issue: from the holder's unlock reply to the waiter's acquisition.
const WAKE_BOUND_MS: f64 = 200.0;
/// Watchdog timeout of the "fast" sides (scenarios 5, 6, 7).
const FAST_WATCHDOG_MS: u64 = 1000;
/// Lease of scenario 4.
const LEASE_MS: u64 = 1500;
/// Scenario 8: tasks per language and rounds per task.
const COUNTER_TASKS: usize = 4;
const COUNTER_ROUNDS: usize = 250;
/// Wake-up bound of the read-write scenarios 12 and 14 (from the unlock reply to the acquisition).
const RW_WAKE_BOUND_MS: f64 = 1000.0;
/// Scenario 15: tasks per language, rounds per task, and the share of writes.
const RW_COUNTER_TASKS: usize = 3;
const RW_COUNTER_ROUNDS: usize = 150;
const RW_WRITE_PERCENT: u64 = 30;
/// The order the scenarios run in: 9 (nothing left behind) checks every other one, so it is last.
const RUN_ORDER: [usize; 15] = [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 9];

const TITLES: [&str; 15] = [
    "A holds: B's try_lock fails, B's hold count 0, B sees is_locked",
    "A releases: B blocked in lock() acquires within 200 ms (pub/sub; TTL 30 s)",
    "Reentrancy: A locks 3x, B reads count via HGET; 2 unlocks keep it; 3rd lets B in",
    "Lease without watchdog expires on time; B gets in; A's late unlock is 'not held'",
    "Watchdog 1 s: A holds 5 s, B never gets in; after A's unlock B gets in at once",
    "force_unlock by B: waiter woken; A learns its hold is gone",
    "A's process SIGKILLed while holding: B acquires within watchdog + 1 s",
    "Mutual exclusion: 4 Rust tasks + 4 Java threads x 250 rounds, counter = 2000, no overlap",
    "Afterwards (runs last, after 15): no channel subscribed, no lock keys left (incl. rwlock_timeout keys, redisson_rwlock channels)",
    "RW: A's 2 readers hold: B's write try_lock fails, B's read try_lock succeeds; hash has both languages' reader fields and exact timeout keys (PTTL > 0)",
    "RW: A's read unlock while B's readers (counts 2, 1) hold keeps the lock: mode=read, B's fields and timeout keys intact; B's unlocks delete it",
    "RW: A writes, 3 B readers block in lock(); A's write unlock (message 1) wakes all within 1 s (latency of the last)",
    "RW: downgrade by A (write, read, write unlock): B sees read locked, not write locked; B's read try_lock ok, write try_lock fails",
    "RW: read watchdog 1 s on both sides: A and B read 5 s, a writer (B's language) never gets in; after both unlock it gets in at once",
    "RW: mutual exclusion: 3 Java + 3 Rust rwcounter tasks x 150 rounds, 30% writes; counter = writes, no write overlaps any section",
];

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        let holds: bool = $cond;
        if !holds {
            return Err(format!($($fmt)+));
        }
    };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    /// A (holder) is Java, B (waiter) is Rust.
    JavaHolds,
    /// A (holder) is Rust, B (waiter) is Java.
    RustHolds,
    /// Both languages at once (scenarios 8 and 9).
    Both,
}

impl Dir {
    fn short(self) -> &'static str {
        match self {
            Dir::JavaHolds => "J→R",
            Dir::RustHolds => "R→J",
            Dir::Both => "J+R",
        }
    }
    fn long(self) -> &'static str {
        match self {
            Dir::JavaHolds => "Java holds, Rust waits",
            Dir::RustHolds => "Rust holds, Java waits",
            Dir::Both => "Java and Rust together",
        }
    }
    fn tag(self) -> &'static str {
        match self {
            Dir::JavaHolds => "j",
            Dir::RustHolds => "r",
            Dir::Both => "b",
        }
    }
}

#[derive(Default)]
struct Outcome {
    latency_ms: Option<f64>,
    note: String,
}

struct Row {
    scenario: usize,
    version: String,
    dir: Dir,
    pass: bool,
    latency_ms: Option<f64>,
    note: String,
    secs: f64,
}

// ---------------------------------------------------------------------------------------------
// Raw Redis access for assertions

#[derive(Clone)]
struct Raw(MultiplexedConnection);

impl Raw {
    async fn q<T: redis::FromRedisValue>(&self, cmd: &mut redis::Cmd) -> Result<T> {
        let mut c = self.0.clone();
        cmd.query_async(&mut c).await.map_err(|e| format!("redis: {e}"))
    }
    async fn hgetall(&self, key: &str) -> Result<BTreeMap<String, String>> {
        self.q(redis::cmd("HGETALL").arg(key)).await
    }
    async fn hget(&self, key: &str, field: &str) -> Result<Option<String>> {
        self.q(redis::cmd("HGET").arg(key).arg(field)).await
    }
    async fn pttl(&self, key: &str) -> Result<i64> {
        self.q(redis::cmd("PTTL").arg(key)).await
    }
    async fn numsub(&self, channel: &str) -> Result<i64> {
        let (_, n): (String, i64) = self.q(redis::cmd("PUBSUB").arg("NUMSUB").arg(channel)).await?;
        Ok(n)
    }
    async fn channels(&self) -> Result<Vec<String>> {
        self.q(redis::cmd("PUBSUB").arg("CHANNELS")).await
    }
    async fn get(&self, key: &str) -> Result<Option<String>> {
        self.q(redis::cmd("GET").arg(key)).await
    }
    async fn lrange(&self, key: &str) -> Result<Vec<String>> {
        self.q(redis::cmd("LRANGE").arg(key).arg(0).arg(-1)).await
    }
    async fn del(&self, keys: &[&str]) -> Result<i64> {
        self.q(redis::cmd("DEL").arg(keys)).await
    }
    async fn keys(&self) -> Result<Vec<String>> {
        self.keys_like("*").await
    }
    async fn keys_like(&self, pattern: &str) -> Result<Vec<String>> {
        self.q(redis::cmd("KEYS").arg(pattern)).await
    }
}

fn channel_of(name: &str) -> String {
    format!("redisson_lock__channel:{{{name}}}")
}

fn one_field(field: &str, count: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(field.to_owned(), count.to_owned())])
}

/// Polls `cond` every 10 ms until it is true; an error after `limit`.
async fn until<F, Fut>(limit: Duration, what: &str, mut cond: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<bool>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if cond().await? {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// One side of a scenario: a Java worker thread or a Rust owner

enum Party<'a> {
    Java {
        h: &'a Harness,
        worker: String,
    },
    Rust {
        c: &'a Client,
        owner: u64,
        guards: Vec<(String, LockGuard)>,
    },
}

enum Waiting {
    Java(Box<Pending>),
    Rust(tokio::task::JoinHandle<redisson_lock::Result<(LockGuard, f64)>>),
}

impl Waiting {
    fn is_done(&mut self) -> bool {
        match self {
            Waiting::Java(p) => p.is_done(),
            Waiting::Rust(j) => j.is_finished(),
        }
    }
}

/// The outcome of an unlock that reached Redis: released at (epoch ms), or "not held" (message).
/// On success: (epoch ms when the unlock call started, epoch ms of its reply).
type UnlockResult = std::result::Result<(f64, f64), String>;

impl Party<'_> {
    fn desc(&self) -> String {
        match self {
            Party::Java { worker, .. } => format!("java worker {worker}"),
            Party::Rust { owner, .. } => format!("rust owner {owner}"),
        }
    }

    fn rlock(c: &Client, owner: u64, name: &str) -> Result<redisson_lock::RLock> {
        Ok(c.lock(name)
            .map_err(|e| format!("client.lock({name}): {e}"))?
            .with_owner(owner))
    }

    async fn field(&self, name: &str) -> Result<String> {
        match self {
            Party::Java { h, worker } => h.field_of(worker).await,
            Party::Rust { c, owner, .. } => Self::rlock(c, *owner, name)?
                .field()
                .ok_or_else(|| "a pinned handle has a field".to_owned()),
        }
    }

    /// Blocking acquire (watchdog, or a lease); returns the epoch ms of acquisition.
    async fn lock(&mut self, name: &str, lease_ms: Option<u64>) -> Result<f64> {
        match self {
            Party::Java { h, worker } => {
                let lease = lease_ms.map(|l| l.to_string());
                let args: Vec<&str> = std::iter::once(name).chain(lease.as_deref()).collect();
                let r = h.call(worker, "lock", &args, Duration::from_secs(30)).await?;
                let ts = r.ts_ms;
                r.into_ok()?;
                Ok(ts)
            }
            Party::Rust { c, owner, guards } => {
                let l = Self::rlock(c, *owner, name)?;
                let g = match lease_ms {
                    None => tokio::time::timeout(Duration::from_secs(30), l.lock()).await,
                    Some(ms) => {
                        tokio::time::timeout(
                            Duration::from_secs(30),
                            l.lock_with_lease(Duration::from_millis(ms)),
                        )
                        .await
                    }
                }
                .map_err(|_| format!("rust lock({name}) did not return within 30 s"))?
                .map_err(|e| format!("rust lock({name}): {e}"))?;
                let at = now_ms();
                guards.push((name.to_owned(), g));
                Ok(at)
            }
        }
    }

    /// Starts a blocking `lock()` (watchdog mode) in the background.
    async fn start_lock(&self, name: &str) -> Result<Waiting> {
        match self {
            Party::Java { h, worker } => Ok(Waiting::Java(Box::new(h.send(worker, "lock", &[name]).await?))),
            Party::Rust { c, owner, .. } => {
                let l = Self::rlock(c, *owner, name)?;
                Ok(Waiting::Rust(tokio::spawn(async move {
                    let g = l.lock().await?;
                    Ok((g, now_ms()))
                })))
            }
        }
    }

    /// Waits for a background `lock()`; returns the epoch ms of acquisition.
    async fn finish(&mut self, name: &str, w: Waiting, limit: Duration) -> Result<f64> {
        match (self, w) {
            (Party::Java { .. }, Waiting::Java(p)) => {
                let r = p.wait(limit).await?;
                let ts = r.ts_ms;
                r.into_ok()?;
                Ok(ts)
            }
            (Party::Rust { guards, .. }, Waiting::Rust(j)) => {
                let abort = j.abort_handle();
                let joined = tokio::time::timeout(limit, j).await.map_err(|_| {
                    abort.abort();
                    format!("rust lock({name}) not acquired within {limit:?}")
                })?;
                let (g, at) = joined
                    .map_err(|e| format!("rust lock task: {e}"))?
                    .map_err(|e| format!("rust lock({name}): {e}"))?;
                guards.push((name.to_owned(), g));
                Ok(at)
            }
            _ => Err("waiting handle of the other language".into()),
        }
    }

    async fn try_lock(&mut self, name: &str) -> Result<bool> {
        match self {
            Party::Java { h, worker } => h.call(worker, "tryLock", &[name], CMD).await?.bool(),
            Party::Rust { c, owner, guards } => match Self::rlock(c, *owner, name)?
                .try_lock()
                .await
                .map_err(|e| format!("rust try_lock: {e}"))?
            {
                Some(g) => {
                    guards.push((name.to_owned(), g));
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }

    /// `tryLock(wait)` in watchdog mode; returns whether acquired and when (epoch ms).
    async fn try_lock_for(&mut self, name: &str, wait_ms: u64) -> Result<(bool, f64)> {
        match self {
            Party::Java { h, worker } => {
                let w = wait_ms.to_string();
                let r = h
                    .call(
                        worker,
                        "tryLock",
                        &[name, &w],
                        Duration::from_millis(wait_ms) + CMD,
                    )
                    .await?;
                let ts = r.ts_ms;
                Ok((r.bool()?, ts))
            }
            Party::Rust { c, owner, guards } => {
                let got = Self::rlock(c, *owner, name)?
                    .try_lock_for(Duration::from_millis(wait_ms))
                    .await
                    .map_err(|e| format!("rust try_lock_for: {e}"))?;
                let at = now_ms();
                Ok((got.map(|g| guards.push((name.to_owned(), g))).is_some(), at))
            }
        }
    }

    /// Releases one hold. `Ok(Err(msg))` is the "not held" error (IllegalMonitorStateException /
    /// `Error::NotHeld`); any other failure is an `Err`.
    async fn unlock(&mut self, name: &str) -> Result<UnlockResult> {
        match self {
            Party::Java { h, worker } => {
                let r = h.call(worker, "unlock", &[name], CMD).await?;
                if r.is_illegal_monitor_state() {
                    return Ok(Err(format!(
                        "IllegalMonitorStateException: {}",
                        r.error.unwrap_or_default()
                    )));
                }
                let (start, ts) = (r.start_ms, r.ts_ms);
                r.into_ok()?;
                Ok(Ok((start, ts)))
            }
            Party::Rust { c, owner, guards } => {
                let start = now_ms();
                let res = match guards.iter().rposition(|(n, _)| n == name) {
                    Some(i) => guards.remove(i).1.unlock().await,
                    None => Self::rlock(c, *owner, name)?.unlock().await,
                };
                match res {
                    Ok(_) => Ok(Ok((start, now_ms()))),
                    Err(e @ LockError::NotHeld { .. }) => Ok(Err(format!("Error::NotHeld: {e}"))),
                    Err(e) => Err(format!("rust unlock({name}): {e}")),
                }
            }
        }
    }

    /// An unlock that must succeed; returns (call start, reply) in epoch ms.
    async fn unlock_ok(&mut self, name: &str) -> Result<(f64, f64)> {
        let who = self.desc();
        self.unlock(name)
            .await?
            .map_err(|e| format!("{who}: unlock({name}) failed: {e}"))
    }

    /// Returns whether a lock was deleted, and when the call started and returned (epoch ms).
    async fn force_unlock(&self, name: &str) -> Result<(bool, f64, f64)> {
        match self {
            Party::Java { h, worker } => {
                let r = h.call(worker, "forceUnlock", &[name], CMD).await?;
                let (start, ts) = (r.start_ms, r.ts_ms);
                Ok((r.bool()?, start, ts))
            }
            Party::Rust { c, owner, .. } => {
                let start = now_ms();
                let b = Self::rlock(c, *owner, name)?
                    .force_unlock()
                    .await
                    .map_err(|e| format!("rust force_unlock: {e}"))?;
                Ok((b, start, now_ms()))
            }
        }
    }

    async fn hold_count(&self, name: &str) -> Result<i64> {
        match self {
            Party::Java { h, worker } => h.call(worker, "holdCount", &[name], CMD).await?.int(),
            Party::Rust { c, owner, .. } => Self::rlock(c, *owner, name)?
                .hold_count()
                .await
                .map(|n| n as i64)
                .map_err(|e| format!("rust hold_count: {e}")),
        }
    }

    async fn is_locked(&self, name: &str) -> Result<bool> {
        match self {
            Party::Java { h, worker } => h.call(worker, "isLocked", &[name], CMD).await?.bool(),
            Party::Rust { c, owner, .. } => Self::rlock(c, *owner, name)?
                .is_locked()
                .await
                .map_err(|e| format!("rust is_locked: {e}")),
        }
    }

    async fn is_held(&self, name: &str) -> Result<bool> {
        match self {
            Party::Java { h, worker } => h.call(worker, "isHeldByThread", &[name], CMD).await?.bool(),
            Party::Rust { c, owner, .. } => Self::rlock(c, *owner, name)?
                .is_held()
                .await
                .map_err(|e| format!("rust is_held: {e}")),
        }
    }

    fn take_guard(&mut self, name: &str) -> Option<LockGuard> {
        match self {
            Party::Java { .. } => None,
            Party::Rust { guards, .. } => guards
                .iter()
                .rposition(|(n, _)| n == name)
                .map(|i| guards.remove(i).1),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The per-version environment

struct Env {
    version: String,
    url: String,
    raw: Raw,
    java: Harness,
    java_fast: Harness,
    rust: Client,
    rust_fast: Client,
    jar: PathBuf,
    names: Mutex<Vec<String>>,
}

#[derive(Clone, Copy)]
enum Speed {
    Normal,
    Fast,
}

impl Env {
    fn name(&self, scenario: usize, dir: Dir) -> String {
        let n = format!("compat:{}:s{scenario}:{}", self.version, dir.tag());
        if let Ok(mut names) = self.names.lock() {
            names.push(n.clone());
        }
        n
    }

    fn java_party(&self, speed: Speed, worker: String) -> Party<'_> {
        let h = match speed {
            Speed::Normal => &self.java,
            Speed::Fast => &self.java_fast,
        };
        Party::Java { h, worker }
    }

    fn rust_party(&self, speed: Speed, owner: u64) -> Party<'_> {
        let c = match speed {
            Speed::Normal => &self.rust,
            Speed::Fast => &self.rust_fast,
        };
        Party::Rust {
            c,
            owner,
            guards: Vec::new(),
        }
    }

    /// (A = holder, B = the other side) for scenario `s`; `k` distinguishes further parties.
    fn party(&self, s: usize, dir: Dir, role: &str, java: bool, speed: Speed) -> Party<'_> {
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

    fn pair(&self, s: usize, dir: Dir, speed: Speed) -> (Party<'_>, Party<'_>) {
        let java_holds = dir == Dir::JavaHolds;
        (
            self.party(s, dir, "a", java_holds, speed),
            self.party(s, dir, "b", !java_holds, speed),
        )
    }

    async fn wait_subscribers(&self, name: &str, n: i64) -> Result<()> {
        let ch = channel_of(name);
        until(
            Duration::from_secs(10),
            &format!("{n} subscriber(s) on {ch}"),
            || async { Ok(self.raw.numsub(&ch).await? >= n) },
        )
        .await
    }
}

// ---------------------------------------------------------------------------------------------
// Scenarios

async fn s1(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(1, dir);
    let (mut a, mut b) = env.pair(1, dir, Speed::Normal);
    let fa = a.field(&name).await?;
    a.lock(&name, None).await?;
    ensure!(
        env.raw.hgetall(&name).await? == one_field(&fa, "1"),
        "after A's lock the hash is not {{{fa}: 1}}"
    );
    let got = b.try_lock(&name).await?;
    ensure!(!got, "B ({}) acquired with try_lock while A holds", b.desc());
    let hc = b.hold_count(&name).await?;
    ensure!(hc == 0, "B's hold count is {hc}, expected 0");
    ensure!(b.is_locked(&name).await?, "B's is_locked is false while A holds");
    ensure!(!b.is_held(&name).await?, "B's is_held is true while A holds");
    let ha = a.hold_count(&name).await?;
    ensure!(ha == 1, "A's own hold count is {ha}, expected 1");
    a.unlock_ok(&name).await?;
    ensure!(!b.is_locked(&name).await?, "still locked after A's unlock");
    Ok(Outcome {
        latency_ms: None,
        note: "try_lock false, hold count 0, is_locked true".into(),
    })
}

async fn s2(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(2, dir);
    let (mut a, mut b) = env.pair(2, dir, Speed::Normal);
    a.lock(&name, None).await?;
    let mut w = b.start_lock(&name).await?;
    env.wait_subscribers(&name, 1).await?;
    ensure!(!w.is_done(), "B acquired while A holds");
    let ttl = env.raw.pttl(&name).await?;
    ensure!(
        ttl > 20_000,
        "A's lock TTL is {ttl} ms, expected about 30 s (watchdog mode)"
    );
    let (u_start, t_unlock) = a.unlock_ok(&name).await?;
    let t_acq = b.finish(&name, w, Duration::from_secs(10)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= WAKE_BOUND_MS,
        "B acquired {lat:.1} ms after A's unlock (bound {WAKE_BOUND_MS} ms; the holder's TTL was {ttl} ms)"
    );
    b.unlock_ok(&name).await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "TTL before unlock {ttl} ms; {:.1} ms after the unlock call started",
            t_acq - u_start
        ),
    })
}

async fn s3(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(3, dir);
    let (mut a, mut b) = env.pair(3, dir, Speed::Normal);
    let fa = a.field(&name).await?;
    for _ in 0..3 {
        a.lock(&name, None).await?;
    }
    let seen = env.raw.hget(&name, &fa).await?;
    ensure!(
        seen.as_deref() == Some("3"),
        "HGET {name} {fa} = {seen:?} after 3 locks, expected 3"
    );
    let ha = a.hold_count(&name).await?;
    ensure!(ha == 3, "A's hold_count {ha}, expected 3");
    let hb = b.hold_count(&name).await?;
    ensure!(hb == 0, "B's hold_count {hb}, expected 0");
    let mut w = b.start_lock(&name).await?;
    env.wait_subscribers(&name, 1).await?;
    for left in ["2", "1"] {
        a.unlock_ok(&name).await?;
        let h = env.raw.hgetall(&name).await?;
        ensure!(
            h == one_field(&fa, left),
            "after a partial unlock the hash is {h:?}, expected {{{fa}: {left}}}"
        );
        ensure!(!w.is_done(), "B acquired after a partial unlock (count {left})");
    }
    ensure!(a.is_held(&name).await?, "A does not hold after 2 of 3 unlocks");
    let (u_start, t_unlock) = a.unlock_ok(&name).await?;
    let t_acq = b.finish(&name, w, Duration::from_secs(10)).await?;
    let fb = b.field(&name).await?;
    let h = env.raw.hgetall(&name).await?;
    ensure!(
        h == one_field(&fb, "1"),
        "after the 3rd unlock B should hold alone, hash is {h:?}"
    );
    b.unlock_ok(&name).await?;
    Ok(Outcome {
        latency_ms: Some(t_acq - t_unlock),
        note: format!(
            "HGET read 3 across languages; counts 2, 1 kept the lock; B in {:.1} ms after the 3rd unlock call started",
            t_acq - u_start
        ),
    })
}

async fn s4(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(4, dir);
    let (mut a, mut b) = env.pair(4, dir, Speed::Normal);
    let fa = a.field(&name).await?;
    let t_a = a.lock(&name, Some(LEASE_MS)).await?;
    let ttl = env.raw.pttl(&name).await?;
    ensure!(
        ttl > 0 && ttl <= LEASE_MS as i64,
        "PTTL after lock with lease {LEASE_MS} ms is {ttl}"
    );
    ensure!(
        env.raw.hgetall(&name).await? == one_field(&fa, "1"),
        "A's hold missing"
    );
    let (got, t_b) = b.try_lock_for(&name, LEASE_MS + 5000).await?;
    ensure!(got, "B did not get in within lease + 5 s");
    let held = t_b - t_a;
    ensure!(
        held >= LEASE_MS as f64 - 100.0 && held <= LEASE_MS as f64 + 1000.0,
        "B got in {held:.0} ms after A's acquisition; the lease is {LEASE_MS} ms (expected lease - 100 ms ..= lease + 1 s)"
    );
    let late = a.unlock(&name).await?;
    let msg = match late {
        Ok(_) => return Err("A's late unlock succeeded; expected a 'not held' error".into()),
        Err(msg) => msg,
    };
    let fb = b.field(&name).await?;
    let h = env.raw.hgetall(&name).await?;
    ensure!(
        h == one_field(&fb, "1"),
        "A's late unlock changed B's hold: hash {h:?}"
    );
    b.unlock_ok(&name).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "B in after {held:.0} ms (lease {LEASE_MS}); late unlock: {}",
            short(&msg, 70)
        ),
    })
}

async fn s5(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(5, dir);
    let (mut a, mut b) = env.pair(5, dir, Speed::Fast);
    let fa = a.field(&name).await?;
    let t_a = a.lock(&name, None).await?;
    let mut w = b.start_lock(&name).await?;
    env.wait_subscribers(&name, 1).await?;
    let hold_until =
        Instant::now() + Duration::from_millis(5000u64.saturating_sub((now_ms() - t_a).max(0.0) as u64));
    let (mut min_ttl, mut checks) = (i64::MAX, 0);
    // A holds for 5 s (3 TTLs of 1 s are renewed meanwhile); B must stay out the whole time.
    while Instant::now() < hold_until {
        ensure!(
            !w.is_done(),
            "B got in while A held (after {:.0} ms)",
            now_ms() - t_a
        );
        let h = env.raw.hgetall(&name).await?;
        ensure!(
            h == one_field(&fa, "1"),
            "A's hold disappeared after {:.0} ms: {h:?}",
            now_ms() - t_a
        );
        let ttl = env.raw.pttl(&name).await?;
        ensure!(
            ttl > 0 && ttl <= FAST_WATCHDOG_MS as i64,
            "PTTL {ttl} with watchdog {FAST_WATCHDOG_MS} ms"
        );
        min_ttl = min_ttl.min(ttl);
        checks += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ensure!(!w.is_done(), "B got in while A held");
    let (u_start, t_unlock) = a.unlock_ok(&name).await?;
    let t_acq = b.finish(&name, w, Duration::from_secs(5)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= WAKE_BOUND_MS,
        "B got in {lat:.1} ms after A's unlock (bound {WAKE_BOUND_MS} ms)"
    );
    b.unlock_ok(&name).await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "held {:.1} s, {checks} checks, min PTTL {min_ttl} ms; B in {:.1} ms after the unlock call started",
            (t_unlock - t_a) / 1000.0,
            t_acq - u_start
        ),
    })
}

async fn s6(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(6, dir);
    let java_holds = dir == Dir::JavaHolds;
    // A holds with a 1 s watchdog (so a Rust holder's renewal notices within ~1/3 s); a waiter W of
    // A's language waits; B (the other language) force-unlocks.
    let mut a = env.party(6, dir, "a", java_holds, Speed::Fast);
    let mut w = env.party(6, dir, "w", java_holds, Speed::Normal);
    let b = env.party(6, dir, "b", !java_holds, Speed::Normal);
    let fa = a.field(&name).await?;
    a.lock(&name, None).await?;
    let guard = a.take_guard(&name); // Rust: keep the guard to watch lost()
    let lost = guard.as_ref().map(|g| g.lost());
    let mut waiting = w.start_lock(&name).await?;
    env.wait_subscribers(&name, 1).await?;
    ensure!(
        env.raw.hgetall(&name).await? == one_field(&fa, "1"),
        "A's hold missing before the force unlock"
    );
    ensure!(!waiting.is_done(), "the waiter got in while A held");
    let (deleted, f_start, t_force) = b.force_unlock(&name).await?;
    ensure!(deleted, "force_unlock returned false while A held");
    let t_acq = w.finish(&name, waiting, Duration::from_secs(5)).await?;
    let lat = t_acq - t_force;
    ensure!(
        lat <= WAKE_BOUND_MS,
        "the waiter got in {lat:.1} ms after the force unlock (bound {WAKE_BOUND_MS} ms)"
    );
    let learned = match (guard, lost) {
        (Some(g), Some(lost)) => {
            let t0 = Instant::now();
            let reason = tokio::time::timeout(Duration::from_secs(5), lost)
                .await
                .map_err(|_| {
                    "the Rust guard's lost() did not resolve within 5 s of the force unlock".to_string()
                })?;
            let after = t0.elapsed();
            let held = a.is_held(&name).await?;
            ensure!(!held, "Rust A's is_held is true after the force unlock");
            match g.unlock().await {
                Err(LockError::NotHeld { .. }) => {}
                other => {
                    return Err(format!(
                        "Rust A's guard unlock after the force unlock gave {other:?}, expected NotHeld"
                    ))
                }
            }
            format!(
                "rust guard lost() = {reason:?} ({} ms after the waiter got in); unlock NotHeld",
                after.as_millis()
            )
        }
        _ => {
            let held = a.is_held(&name).await?;
            ensure!(!held, "Java A's isHeldByThread is true after the force unlock");
            let msg = match a.unlock(&name).await? {
                Ok(_) => return Err("Java A's unlock after the force unlock succeeded".into()),
                Err(m) => m,
            };
            format!("java isHeldByThread false; unlock: {}", short(&msg, 40))
        }
    };
    w.unlock_ok(&name).await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "waiter ({}, A's language) in {:.1} ms after the force-unlock call started; {learned}",
            w.desc(),
            t_acq - f_start
        ),
    })
}

async fn s7(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(7, dir);
    let bound_ms = FAST_WATCHDOG_MS as f64 + 1000.0;
    match dir {
        Dir::JavaHolds => {
            let mut h = Harness::start(&env.jar, &env.url, FAST_WATCHDOG_MS, Duration::from_secs(60)).await?;
            let field = h.field_of("holder").await?;
            h.call("holder", "lock", &[&name], CMD).await?.into_ok()?;
            ensure!(
                env.raw.hgetall(&name).await? == one_field(&field, "1"),
                "the Java holder's field is not in the hash"
            );
            let mut b = env.party(7, dir, "b", false, Speed::Normal);
            let waiting = b.start_lock(&name).await?;
            env.wait_subscribers(&name, 1).await?;
            let t_kill = now_ms();
            h.kill().await?;
            let t_acq = b.finish(&name, waiting, Duration::from_secs(10)).await?;
            let after = t_acq - t_kill;
            ensure!(
                after <= bound_ms,
                "Rust got in {after:.0} ms after the JVM was killed (bound {bound_ms} ms)"
            );
            b.unlock_ok(&name).await?;
            Ok(Outcome {
                latency_ms: None,
                note: format!("JVM SIGKILLed; Rust got in after {after:.0} ms"),
            })
        }
        _ => {
            let mut holder = tokio::process::Command::new(env!("CARGO_BIN_EXE_rust-holder"))
                .args([env.url.as_str(), name.as_str(), &FAST_WATCHDOG_MS.to_string()])
                .stdin(Stdio::piped()) // kept open until the kill; EOF makes the holder exit
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| format!("spawn rust-holder: {e}"))?;
            let out = holder.stdout.take().ok_or("no stdout")?;
            let mut lines = tokio::io::BufReader::new(out).lines();
            let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
                .await
                .map_err(|_| "rust-holder did not report within 20 s".to_string())?
                .map_err(|e| format!("read rust-holder: {e}"))?
                .ok_or("rust-holder exited without output")?;
            let field = line
                .strip_prefix("acquired ")
                .ok_or_else(|| format!("unexpected rust-holder output `{line}`"))?
                .to_owned();
            ensure!(
                env.raw.hgetall(&name).await? == one_field(&field, "1"),
                "rust-holder's field {field} is not in the hash"
            );
            let mut b = env.party(7, dir, "b", true, Speed::Normal);
            let waiting = b.start_lock(&name).await?;
            env.wait_subscribers(&name, 1).await?;
            let t_kill = now_ms();
            holder
                .start_kill()
                .map_err(|e| format!("kill -9 rust-holder: {e}"))?;
            holder
                .wait()
                .await
                .map_err(|e| format!("reap rust-holder: {e}"))?;
            let t_acq = b.finish(&name, waiting, Duration::from_secs(10)).await?;
            let after = t_acq - t_kill;
            ensure!(
                after <= bound_ms,
                "Java got in {after:.0} ms after rust-holder was killed (bound {bound_ms} ms)"
            );
            b.unlock_ok(&name).await?;
            Ok(Outcome {
                latency_ms: None,
                note: format!("rust-holder SIGKILLed; Java got in after {after:.0} ms"),
            })
        }
    }
}

async fn s8(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(8, dir);
    let key = format!("{name}:counter");
    let ikey = format!("{key}:intervals");
    env.raw.del(&[&key, &ikey]).await?;
    let t0 = Instant::now();
    let rounds = COUNTER_ROUNDS.to_string();
    // The first language starts alone and completes a round before the other joins.
    let java_first = dir != Dir::RustHolds;
    let (mut java, mut rust) = (Vec::new(), Vec::new());
    for phase in 0..2 {
        if (phase == 0) == java_first {
            for i in 0..COUNTER_TASKS {
                java.push(
                    env.java
                        .send(
                            &format!("s8{}w{i}", dir.tag()),
                            "counter",
                            &[&name, &key, &rounds, "0"],
                        )
                        .await?,
                );
            }
        } else {
            for i in 0..COUNTER_TASKS {
                let lock = env
                    .rust
                    .lock(&name)
                    .map_err(|e| e.to_string())?
                    .with_owner(800_000 + i as u64);
                let raw = env.raw.clone();
                let (key, ikey) = (key.clone(), ikey.clone());
                rust.push(tokio::spawn(async move {
                    for _ in 0..COUNTER_ROUNDS {
                        let g = lock.lock().await.map_err(|e| format!("rust lock: {e}"))?;
                        let start = now_micros();
                        let n: i64 = raw
                            .get(&key)
                            .await?
                            .map(|v| v.parse::<i64>().map_err(|e| format!("counter `{v}`: {e}")))
                            .transpose()?
                            .unwrap_or(0);
                        raw.q::<()>(redis::cmd("SET").arg(&key).arg(n + 1)).await?;
                        let end = now_micros();
                        raw.q::<i64>(
                            redis::cmd("RPUSH")
                                .arg(&ikey)
                                .arg(format!("rust:{i}:{start}:{end}")),
                        )
                        .await?;
                        g.unlock().await.map_err(|e| format!("rust unlock: {e}"))?;
                    }
                    Ok::<(), String>(())
                }));
            }
        }
        if phase == 0 {
            until(
                Duration::from_secs(30),
                "the first language completed a round",
                || async { Ok(env.raw.get(&key).await?.is_some()) },
            )
            .await?;
        }
    }
    let limit = Duration::from_secs(240);
    for p in java {
        let done = p.wait(limit).await?.int()?;
        ensure!(done == COUNTER_ROUNDS as i64, "a Java counter did {done} rounds");
    }
    for j in rust {
        tokio::time::timeout(limit, j)
            .await
            .map_err(|_| "rust counter timed out".to_string())?
            .map_err(|e| format!("rust counter task: {e}"))??;
    }
    let secs = t0.elapsed().as_secs_f64();
    let expected = 2 * COUNTER_TASKS * COUNTER_ROUNDS;
    let total = env.raw.get(&key).await?;
    let records = env.raw.lrange(&ikey).await?;
    let intervals: Vec<Interval> = records
        .iter()
        .map(|r| Interval::parse(r))
        .collect::<Result<_>>()?;
    let (nj, nr) = (
        intervals.iter().filter(|i| i.who.starts_with("java:")).count(),
        intervals.iter().filter(|i| i.who.starts_with("rust:")).count(),
    );
    env.raw.del(&[&key, &ikey]).await?;
    ensure!(
        total.as_deref() == Some(&expected.to_string()),
        "counter is {total:?}, expected {expected} (lost updates)"
    );
    ensure!(
        intervals.len() == expected,
        "{} interval records, expected {expected}",
        intervals.len()
    );
    ensure!(
        nj == expected / 2 && nr == expected / 2,
        "{nj} Java and {nr} Rust intervals"
    );
    if let Some((x, y)) = find_overlap(&intervals) {
        return Err(format!("critical sections overlap: {x:?} and {y:?}"));
    }
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "{} first; counter {expected}, {nj} Java + {nr} Rust sections, none overlap; {secs:.1} s",
            if java_first { "Java" } else { "Rust" }
        ),
    })
}

// ---------------------------------------------------------------------------------------------
// Read-write lock parties (scenarios 10-15): a Java worker thread or a Rust owner

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Read,
    Write,
}

impl Side {
    /// The harness' command prefix (`readLock`, `writeUnlock`, ...).
    fn java(self, op: &str) -> String {
        match self {
            Side::Read => format!("read{op}"),
            Side::Write => format!("write{op}"),
        }
    }
    fn word(self) -> &'static str {
        match self {
            Side::Read => "read",
            Side::Write => "write",
        }
    }
}

enum RwGuard {
    R(ReadGuard),
    W(WriteGuard),
}

impl RwGuard {
    async fn unlock(self) -> redisson_lock::Result<redisson_lock::Unlocked> {
        match self {
            RwGuard::R(g) => g.unlock().await,
            RwGuard::W(g) => g.unlock().await,
        }
    }
}

enum RwParty<'a> {
    Java {
        h: &'a Harness,
        worker: String,
    },
    Rust {
        c: &'a Client,
        owner: u64,
        guards: Vec<(String, Side, RwGuard)>,
    },
}

enum RwWaiting {
    Java(Box<Pending>),
    Rust(tokio::task::JoinHandle<redisson_lock::Result<(RwGuard, f64)>>),
}

impl RwWaiting {
    fn is_done(&mut self) -> bool {
        match self {
            RwWaiting::Java(p) => p.is_done(),
            RwWaiting::Rust(j) => j.is_finished(),
        }
    }
}

/// The rw lock's channel (`redisson_rwlock:{N}`).
fn rw_channel(name: &str) -> String {
    format!("redisson_rwlock:{{{name}}}")
}

/// The timeout key of a reader's `k`-th read hold (`{N}:<field>:rwlock_timeout:k`; N has no `{`).
fn timeout_key(name: &str, field: &str, k: u32) -> String {
    format!("{{{name}}}:{field}:rwlock_timeout:{k}")
}

impl RwParty<'_> {
    fn desc(&self) -> String {
        match self {
            RwParty::Java { worker, .. } => format!("java worker {worker}"),
            RwParty::Rust { owner, .. } => format!("rust owner {owner}"),
        }
    }

    fn rw(c: &Client, owner: u64, name: &str) -> Result<redisson_lock::RReadWriteLock> {
        Ok(c.read_write_lock(name)
            .map_err(|e| format!("client.read_write_lock({name}): {e}"))?
            .with_owner(owner))
    }

    /// The reader field `<id>:<thread or owner>` (the writer field adds `:write`).
    async fn field(&self, name: &str) -> Result<String> {
        match self {
            RwParty::Java { h, worker } => h.field_of(worker).await,
            RwParty::Rust { c, owner, .. } => Self::rw(c, *owner, name)?
                .read_lock()
                .field()
                .ok_or_else(|| "a pinned handle has a field".to_owned()),
        }
    }

    async fn rust_acquire(
        rw: redisson_lock::RReadWriteLock,
        side: Side,
        try_only: bool,
    ) -> redisson_lock::Result<Option<RwGuard>> {
        Ok(match (side, try_only) {
            (Side::Read, false) => Some(RwGuard::R(rw.read_lock().lock().await?)),
            (Side::Write, false) => Some(RwGuard::W(rw.write_lock().lock().await?)),
            (Side::Read, true) => rw.read_lock().try_lock().await?.map(RwGuard::R),
            (Side::Write, true) => rw.write_lock().try_lock().await?.map(RwGuard::W),
        })
    }

    /// Blocking acquire in watchdog mode; returns the epoch ms of acquisition.
    async fn lock(&mut self, side: Side, name: &str) -> Result<f64> {
        match self {
            RwParty::Java { h, worker } => {
                let r = h
                    .call(worker, &side.java("Lock"), &[name], Duration::from_secs(30))
                    .await?;
                let ts = r.ts_ms;
                r.into_ok()?;
                Ok(ts)
            }
            RwParty::Rust { c, owner, guards } => {
                let rw = Self::rw(c, *owner, name)?;
                let g = tokio::time::timeout(Duration::from_secs(30), Self::rust_acquire(rw, side, false))
                    .await
                    .map_err(|_| format!("rust {} lock({name}) did not return within 30 s", side.word()))?
                    .map_err(|e| format!("rust {} lock({name}): {e}", side.word()))?
                    .ok_or("an unbounded lock() returned nothing")?;
                let at = now_ms();
                guards.push((name.to_owned(), side, g));
                Ok(at)
            }
        }
    }

    /// Starts a blocking `lock()` (watchdog mode) in the background.
    async fn start_lock(&self, side: Side, name: &str) -> Result<RwWaiting> {
        match self {
            RwParty::Java { h, worker } => Ok(RwWaiting::Java(Box::new(
                h.send(worker, &side.java("Lock"), &[name]).await?,
            ))),
            RwParty::Rust { c, owner, .. } => {
                let rw = Self::rw(c, *owner, name)?;
                Ok(RwWaiting::Rust(tokio::spawn(async move {
                    let g = Self::rust_acquire(rw, side, false).await?.ok_or_else(|| {
                        redisson_lock::Error::Protocol("an unbounded lock() returned nothing".into())
                    })?;
                    Ok((g, now_ms()))
                })))
            }
        }
    }

    /// Waits for a background `lock()`; returns the epoch ms of acquisition and, for Java, when
    /// the worker started the call.
    async fn finish(
        &mut self,
        side: Side,
        name: &str,
        w: RwWaiting,
        limit: Duration,
    ) -> Result<(f64, Option<f64>)> {
        match (self, w) {
            (RwParty::Java { .. }, RwWaiting::Java(p)) => {
                let r = p.wait(limit).await?;
                let (ts, start) = (r.ts_ms, r.start_ms);
                r.into_ok()?;
                Ok((ts, Some(start)))
            }
            (RwParty::Rust { guards, .. }, RwWaiting::Rust(j)) => {
                let abort = j.abort_handle();
                let joined = tokio::time::timeout(limit, j).await.map_err(|_| {
                    abort.abort();
                    format!("rust {} lock({name}) not acquired within {limit:?}", side.word())
                })?;
                let (g, at) = joined
                    .map_err(|e| format!("rust lock task: {e}"))?
                    .map_err(|e| format!("rust {} lock({name}): {e}", side.word()))?;
                guards.push((name.to_owned(), side, g));
                Ok((at, None))
            }
            _ => Err("waiting handle of the other language".into()),
        }
    }

    async fn try_lock(&mut self, side: Side, name: &str) -> Result<bool> {
        match self {
            RwParty::Java { h, worker } => h.call(worker, &side.java("TryLock"), &[name], CMD).await?.bool(),
            RwParty::Rust { c, owner, guards } => {
                let rw = Self::rw(c, *owner, name)?;
                match Self::rust_acquire(rw, side, true)
                    .await
                    .map_err(|e| format!("rust {} try_lock({name}): {e}", side.word()))?
                {
                    Some(g) => {
                        guards.push((name.to_owned(), side, g));
                        Ok(true)
                    }
                    None => Ok(false),
                }
            }
        }
    }

    /// Releases one hold of `side`, which must succeed; returns (call start, reply) in epoch ms.
    async fn unlock_ok(&mut self, side: Side, name: &str) -> Result<(f64, f64)> {
        let who = self.desc();
        match self {
            RwParty::Java { h, worker } => {
                let r = h.call(worker, &side.java("Unlock"), &[name], CMD).await?;
                let (start, ts) = (r.start_ms, r.ts_ms);
                r.into_ok()
                    .map_err(|e| format!("{who}: {} unlock({name}) failed: {e}", side.word()))?;
                Ok((start, ts))
            }
            RwParty::Rust { guards, .. } => {
                let i = guards
                    .iter()
                    .rposition(|(n, s, _)| n == name && *s == side)
                    .ok_or_else(|| format!("{who} has no {} guard of {name}", side.word()))?;
                let g = guards.remove(i).2;
                let start = now_ms();
                g.unlock()
                    .await
                    .map_err(|e| format!("{who}: {} unlock({name}) failed: {e}", side.word()))?;
                Ok((start, now_ms()))
            }
        }
    }

    async fn is_locked(&self, side: Side, name: &str) -> Result<bool> {
        match self {
            RwParty::Java { h, worker } => h.call(worker, &side.java("IsLocked"), &[name], CMD).await?.bool(),
            RwParty::Rust { c, owner, .. } => {
                let rw = Self::rw(c, *owner, name)?;
                match side {
                    Side::Read => rw.read_lock().is_locked().await,
                    Side::Write => rw.write_lock().is_locked().await,
                }
                .map_err(|e| format!("rust {} is_locked: {e}", side.word()))
            }
        }
    }

    /// Write lock, then read lock, then write unlock by the same thread/owner (Rust:
    /// `WriteGuard::downgrade`). Afterwards this party holds one read lock.
    async fn lock_and_downgrade(&mut self, name: &str) -> Result<()> {
        self.lock(Side::Write, name).await?;
        let who = self.desc();
        match self {
            RwParty::Java { h, worker } => {
                h.call(worker, "readLock", &[name], CMD)
                    .await?
                    .into_ok()
                    .map_err(|e| format!("{who}: readLock while holding the write lock: {e}"))?;
                h.call(worker, "writeUnlock", &[name], CMD)
                    .await?
                    .into_ok()
                    .map_err(|e| format!("{who}: writeUnlock after readLock: {e}"))?;
                Ok(())
            }
            RwParty::Rust { guards, .. } => {
                let i = guards
                    .iter()
                    .rposition(|(n, s, _)| n == name && *s == Side::Write)
                    .ok_or("no write guard to downgrade")?;
                let RwGuard::W(w) = guards.remove(i).2 else {
                    return Err("a read guard filed as write".into());
                };
                let r = w
                    .downgrade()
                    .await
                    .map_err(|e| format!("{who}: WriteGuard::downgrade: {e}"))?;
                guards.push((name.to_owned(), Side::Read, RwGuard::R(r)));
                Ok(())
            }
        }
    }
}

impl Env {
    /// A read-write party; owner ids/worker names follow [`Env::party`].
    fn rw_party(&self, s: usize, dir: Dir, role: &str, java: bool, speed: Speed) -> RwParty<'_> {
        match self.party(s, dir, role, java, speed) {
            Party::Java { h, worker } => RwParty::Java { h, worker },
            Party::Rust { c, owner, .. } => RwParty::Rust {
                c,
                owner,
                guards: Vec::new(),
            },
        }
    }

    /// Checks that the rw hash is exactly `mode=read` plus `readers` (field → count), that the
    /// read-hold timeout keys are exactly `{N}:<field>:rwlock_timeout:1..=count`, and that every
    /// one of them and the hash have `0 < PTTL <= max_ttl`. Returns the smallest timeout-key PTTL.
    async fn expect_readers(&self, name: &str, readers: &[(&str, u32)], max_ttl: i64) -> Result<i64> {
        let mut want = BTreeMap::from([("mode".to_owned(), "read".to_owned())]);
        for (f, n) in readers {
            want.insert((*f).to_owned(), n.to_string());
        }
        let h = self.raw.hgetall(name).await?;
        ensure!(h == want, "HGETALL {name} = {h:?}, expected {want:?}");
        let mut want_keys: Vec<String> = readers
            .iter()
            .flat_map(|(f, n)| (1..=*n).map(move |k| timeout_key(name, f, k)))
            .collect();
        want_keys.sort();
        let mut keys = self.raw.keys_like(&format!("{{{name}}}:*")).await?;
        keys.sort();
        ensure!(
            keys == want_keys,
            "timeout keys of {name} are {keys:?}, expected {want_keys:?} (hash {h:?})"
        );
        let mut min = i64::MAX;
        for k in &keys {
            let t = self.raw.pttl(k).await?;
            ensure!(
                t > 0 && t <= max_ttl,
                "PTTL {k} = {t}, expected 1..={max_ttl} (hash {h:?})"
            );
            min = min.min(t);
        }
        let t = self.raw.pttl(name).await?;
        ensure!(
            t > 0 && t <= max_ttl,
            "PTTL {name} = {t}, expected 1..={max_ttl} (hash {h:?})"
        );
        Ok(min)
    }

    /// The rw lock is gone: no hash, no timeout key.
    async fn expect_rw_gone(&self, name: &str, when: &str) -> Result<()> {
        let h = self.raw.hgetall(name).await?;
        ensure!(h.is_empty(), "{when}: the hash {name} still exists: {h:?}");
        let keys = self.raw.keys_like(&format!("{{{name}}}:*")).await?;
        ensure!(keys.is_empty(), "{when}: timeout keys left: {keys:?}");
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Read-write lock scenarios

async fn s10(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(10, dir);
    let java_holds = dir == Dir::JavaHolds;
    let mut a1 = env.rw_party(10, dir, "a", java_holds, Speed::Normal);
    let mut a2 = env.rw_party(10, dir, "a2", java_holds, Speed::Normal);
    let mut b = env.rw_party(10, dir, "b", !java_holds, Speed::Normal);
    let (f1, f2, fb) = (
        a1.field(&name).await?,
        a2.field(&name).await?,
        b.field(&name).await?,
    );
    a1.lock(Side::Read, &name).await?;
    a2.lock(Side::Read, &name).await?;
    env.expect_readers(&name, &[(&f1, 1), (&f2, 1)], 30_000).await?;
    ensure!(
        !b.try_lock(Side::Write, &name).await?,
        "B's write try_lock succeeded while A's two readers hold"
    );
    ensure!(
        b.try_lock(Side::Read, &name).await?,
        "B's read try_lock failed while only A's readers hold (readers must share across languages)"
    );
    let min = env
        .expect_readers(&name, &[(&f1, 1), (&f2, 1), (&fb, 1)], 30_000)
        .await?;
    ensure!(
        b.is_locked(Side::Read, &name).await?,
        "B's read is_locked is false"
    );
    ensure!(
        !b.is_locked(Side::Write, &name).await?,
        "B's write is_locked is true"
    );
    b.unlock_ok(Side::Read, &name).await?;
    a1.unlock_ok(Side::Read, &name).await?;
    a2.unlock_ok(Side::Read, &name).await?;
    env.expect_rw_gone(&name, "after all three read unlocks").await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "B write try_lock false, read try_lock true; hash mode=read + 3 reader fields (2 {}, 1 {}), 3 exact timeout keys, min PTTL {min} ms",
            if java_holds { "Java" } else { "Rust" },
            if java_holds { "Rust" } else { "Java" },
        ),
    })
}

async fn s11(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(11, dir);
    let java_holds = dir == Dir::JavaHolds;
    let mut a = env.rw_party(11, dir, "a", java_holds, Speed::Normal);
    let mut b1 = env.rw_party(11, dir, "b", !java_holds, Speed::Normal);
    let mut b2 = env.rw_party(11, dir, "b2", !java_holds, Speed::Normal);
    let (fa, fb1, fb2) = (
        a.field(&name).await?,
        b1.field(&name).await?,
        b2.field(&name).await?,
    );
    a.lock(Side::Read, &name).await?;
    // B1 holds twice (timeout keys :1 and :2), B2 once.
    b1.lock(Side::Read, &name).await?;
    b1.lock(Side::Read, &name).await?;
    b2.lock(Side::Read, &name).await?;
    env.expect_readers(&name, &[(&fa, 1), (&fb1, 2), (&fb2, 1)], 30_000)
        .await?;
    a.unlock_ok(Side::Read, &name).await?;
    // The bug class: if B's timeout keys were not where A's unlock script looks, it would see only
    // stale readers and delete the hash under B.
    let min = env
        .expect_readers(&name, &[(&fb1, 2), (&fb2, 1)], 30_000)
        .await
        .map_err(|e| format!("after A's read unlock with B's readers holding: {e}"))?;
    ensure!(
        !a.try_lock(Side::Write, &name).await?,
        "A's write try_lock succeeded after A's read unlock while B's readers hold"
    );
    ensure!(
        b1.is_locked(Side::Read, &name).await?,
        "B's read is_locked is false after A's read unlock"
    );
    b1.unlock_ok(Side::Read, &name).await?;
    env.expect_readers(&name, &[(&fb1, 1), (&fb2, 1)], 30_000)
        .await
        .map_err(|e| format!("after B1's first read unlock: {e}"))?;
    b1.unlock_ok(Side::Read, &name).await?;
    env.expect_readers(&name, &[(&fb2, 1)], 30_000)
        .await
        .map_err(|e| format!("after B1's second read unlock: {e}"))?;
    b2.unlock_ok(Side::Read, &name).await?;
    env.expect_rw_gone(&name, "after B's last read unlock").await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "{} read unlock left mode=read, B's fields (counts 2, 1) and 3 timeout keys intact (min PTTL {min} ms); A's write try_lock false; B's unlocks: 2+1 → 1+1 → 1 → gone",
            if java_holds { "Java" } else { "Rust" }
        ),
    })
}

async fn s12(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(12, dir);
    let java_holds = dir == Dir::JavaHolds;
    let mut a = env.rw_party(12, dir, "a", java_holds, Speed::Normal);
    let fa = a.field(&name).await?;
    a.lock(Side::Write, &name).await?;
    let h = env.raw.hgetall(&name).await?;
    let want = BTreeMap::from([
        ("mode".to_owned(), "write".to_owned()),
        (format!("{fa}:write"), "1".to_owned()),
    ]);
    ensure!(
        h == want,
        "after A's write lock HGETALL = {h:?}, expected {want:?}"
    );
    let mut readers = Vec::new();
    for role in ["b1", "b2", "b3"] {
        readers.push(env.rw_party(12, dir, role, !java_holds, Speed::Normal));
    }
    let mut waits = Vec::new();
    for r in &readers {
        waits.push(r.start_lock(Side::Read, &name).await?);
    }
    let ch = rw_channel(&name);
    until(
        Duration::from_secs(10),
        &format!("a subscriber on {ch}"),
        || async { Ok(env.raw.numsub(&ch).await? >= 1) },
    )
    .await?;
    if java_holds {
        // The Rust readers: all three are waiting on the channel.
        until(Duration::from_secs(10), "3 Rust readers waiting", || async {
            Ok(env.rust.stats().waiters >= 3)
        })
        .await
        .map_err(|e| format!("{e}; stats {:?}", env.rust.stats()))?;
    }
    for w in waits.iter_mut() {
        ensure!(!w.is_done(), "a reader got in while A holds the write lock");
    }
    let (u_start, t_unlock) = a.unlock_ok(Side::Write, &name).await?;
    let mut lats = Vec::new();
    let mut fields = Vec::new();
    for (r, w) in readers.iter_mut().zip(waits) {
        let (t_acq, started) = r.finish(Side::Read, &name, w, Duration::from_secs(5)).await?;
        if let Some(st) = started {
            // A Java reader must have been inside lock() before the unlock (it was really waiting).
            ensure!(
                st <= u_start,
                "{} started its readLock {:.0} ms after A's unlock began; it did not wait",
                r.desc(),
                st - u_start
            );
        }
        lats.push(t_acq - t_unlock);
        fields.push(r.field(&name).await?);
    }
    let last = lats.iter().copied().fold(f64::MIN, f64::max);
    ensure!(
        last <= RW_WAKE_BOUND_MS,
        "the last reader got in {last:.1} ms after A's write unlock (bound {RW_WAKE_BOUND_MS} ms); all: {lats:?}"
    );
    let holders: Vec<(&str, u32)> = fields.iter().map(|f| (f.as_str(), 1)).collect();
    env.expect_readers(&name, &holders, 30_000).await?;
    for r in readers.iter_mut() {
        r.unlock_ok(Side::Read, &name).await?;
    }
    env.expect_rw_gone(&name, "after the readers' unlocks").await?;
    let all: Vec<String> = lats.iter().map(|l| format!("{l:.1}")).collect();
    Ok(Outcome {
        latency_ms: Some(last),
        note: format!(
            "3 {} readers woken by the write unlock (message 1): {} ms; last {:.1} ms after the unlock call started",
            if java_holds { "Rust" } else { "Java" },
            all.join(", "),
            last + t_unlock - u_start
        ),
    })
}

async fn s13(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(13, dir);
    let java_holds = dir == Dir::JavaHolds;
    let mut a = env.rw_party(13, dir, "a", java_holds, Speed::Normal);
    let mut b = env.rw_party(13, dir, "b", !java_holds, Speed::Normal);
    let (fa, fb) = (a.field(&name).await?, b.field(&name).await?);
    a.lock_and_downgrade(&name).await?;
    env.expect_readers(&name, &[(&fa, 1)], 30_000)
        .await
        .map_err(|e| format!("after A's downgrade: {e}"))?;
    ensure!(
        b.is_locked(Side::Read, &name).await?,
        "B's read is_locked is false after A's downgrade"
    );
    ensure!(
        !b.is_locked(Side::Write, &name).await?,
        "B's write is_locked is true after A's downgrade"
    );
    ensure!(
        !b.try_lock(Side::Write, &name).await?,
        "B's write try_lock succeeded while A holds the downgraded read lock"
    );
    ensure!(
        b.try_lock(Side::Read, &name).await?,
        "B's read try_lock failed after A's downgrade"
    );
    env.expect_readers(&name, &[(&fa, 1), (&fb, 1)], 30_000).await?;
    a.unlock_ok(Side::Read, &name).await?;
    env.expect_readers(&name, &[(&fb, 1)], 30_000)
        .await
        .map_err(|e| format!("after A's read unlock: {e}"))?;
    b.unlock_ok(Side::Read, &name).await?;
    env.expect_rw_gone(&name, "after both read unlocks").await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "{}; B: read is_locked true, write is_locked false, write try_lock false, read try_lock true; gone after both unlocks",
            if java_holds {
                "Java writeLock+readLock+writeUnlock"
            } else {
                "Rust WriteGuard::downgrade"
            }
        ),
    })
}

async fn s14(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(14, dir);
    let java_holds = dir == Dir::JavaHolds;
    let mut a = env.rw_party(14, dir, "a", java_holds, Speed::Fast);
    let mut b = env.rw_party(14, dir, "b", !java_holds, Speed::Fast);
    // The writer is in B's language (so the two directions cover a Java and a Rust writer).
    let mut w = env.rw_party(14, dir, "w", !java_holds, Speed::Fast);
    let (fa, fb) = (a.field(&name).await?, b.field(&name).await?);
    let t_a = a.lock(Side::Read, &name).await?;
    b.lock(Side::Read, &name).await?;
    let mut waiting = w.start_lock(Side::Write, &name).await?;
    let ch = rw_channel(&name);
    until(
        Duration::from_secs(10),
        &format!("the writer subscribed to {ch}"),
        || async { Ok(env.raw.numsub(&ch).await? >= 1) },
    )
    .await?;
    let wd = FAST_WATCHDOG_MS as i64;
    let hold_until =
        Instant::now() + Duration::from_millis(5000u64.saturating_sub((now_ms() - t_a).max(0.0) as u64));
    let (mut min_ttl, mut checks) = (i64::MAX, 0);
    while Instant::now() < hold_until {
        ensure!(
            !waiting.is_done(),
            "the writer got in while both readers held (after {:.0} ms)",
            now_ms() - t_a
        );
        let m = env
            .expect_readers(&name, &[(&fa, 1), (&fb, 1)], wd)
            .await
            .map_err(|e| format!("after {:.0} ms of holding: {e}", now_ms() - t_a))?;
        min_ttl = min_ttl.min(m);
        checks += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ensure!(!waiting.is_done(), "the writer got in while both readers held");
    a.unlock_ok(Side::Read, &name).await?;
    env.expect_readers(&name, &[(&fb, 1)], wd)
        .await
        .map_err(|e| format!("after A's read unlock: {e}"))?;
    ensure!(!waiting.is_done(), "the writer got in while B still reads");
    let (u_start, t_unlock) = b.unlock_ok(Side::Read, &name).await?;
    let (t_acq, _) = w
        .finish(Side::Write, &name, waiting, Duration::from_secs(5))
        .await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= RW_WAKE_BOUND_MS,
        "the writer got in {lat:.1} ms after the last read unlock (bound {RW_WAKE_BOUND_MS} ms)"
    );
    let fw = w.field(&name).await?;
    let h = env.raw.hgetall(&name).await?;
    let want = BTreeMap::from([
        ("mode".to_owned(), "write".to_owned()),
        (format!("{fw}:write"), "1".to_owned()),
    ]);
    ensure!(h == want, "the writer's hash is {h:?}, expected {want:?}");
    w.unlock_ok(Side::Write, &name).await?;
    env.expect_rw_gone(&name, "after the writer's unlock").await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "readers held {:.1} s, {checks} checks, min timeout-key PTTL {min_ttl} ms; {} writer in {:.1} ms after the last read unlock call started",
            (u_start - t_a) / 1000.0,
            if java_holds { "Rust" } else { "Java" },
            t_acq - u_start
        ),
    })
}

/// One read or write section of the Rust rwcounter: GET (and SET n+1), then the interval record.
async fn rw_section(raw: &Raw, key: &str, ikey: &str, who: &str, write: bool) -> Result<()> {
    let start = now_micros();
    let n: i64 = raw
        .get(key)
        .await?
        .map(|v| v.parse::<i64>().map_err(|e| format!("counter `{v}`: {e}")))
        .transpose()?
        .unwrap_or(0);
    if write {
        raw.q::<()>(redis::cmd("SET").arg(key).arg(n + 1)).await?;
    }
    let end = now_micros();
    let rw = if write { "w" } else { "r" };
    raw.q::<i64>(
        redis::cmd("RPUSH")
            .arg(ikey)
            .arg(format!("{who}:{rw}:{start}:{end}")),
    )
    .await?;
    Ok(())
}

async fn s15(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(15, dir);
    let key = format!("{name}:counter");
    let ikey = format!("{key}:intervals");
    env.raw.del(&[&key, &ikey]).await?;
    let t0 = Instant::now();
    let rounds = RW_COUNTER_ROUNDS.to_string();
    let pct = RW_WRITE_PERCENT.to_string();
    let java_first = dir != Dir::RustHolds;
    let (mut java, mut rust) = (Vec::new(), Vec::new());
    for phase in 0..2 {
        if (phase == 0) == java_first {
            for i in 0..RW_COUNTER_TASKS {
                java.push(
                    env.java
                        .send(
                            &format!("s15{}w{i}", dir.tag()),
                            "rwcounter",
                            &[&name, &key, &rounds, &pct],
                        )
                        .await?,
                );
            }
        } else {
            for i in 0..RW_COUNTER_TASKS {
                let rw = env
                    .rust
                    .read_write_lock(&name)
                    .map_err(|e| e.to_string())?
                    .with_owner(900_000 + i as u64);
                let raw = env.raw.clone();
                let (key, ikey) = (key.clone(), ikey.clone());
                let mut seed = now_micros() ^ (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i as u64 + 1)) | 1;
                rust.push(tokio::spawn(async move {
                    let who = format!("rust:{i}");
                    let mut writes = 0u64;
                    for _ in 0..RW_COUNTER_ROUNDS {
                        // xorshift64
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if seed % 100 < RW_WRITE_PERCENT {
                            let g = rw
                                .write_lock()
                                .lock()
                                .await
                                .map_err(|e| format!("rust write lock: {e}"))?;
                            rw_section(&raw, &key, &ikey, &who, true).await?;
                            g.unlock().await.map_err(|e| format!("rust write unlock: {e}"))?;
                            writes += 1;
                        } else {
                            let g = rw
                                .read_lock()
                                .lock()
                                .await
                                .map_err(|e| format!("rust read lock: {e}"))?;
                            rw_section(&raw, &key, &ikey, &who, false).await?;
                            g.unlock().await.map_err(|e| format!("rust read unlock: {e}"))?;
                        }
                    }
                    Ok::<u64, String>(writes)
                }));
            }
        }
        if phase == 0 {
            until(
                Duration::from_secs(30),
                "the first language completed a section",
                || async { Ok(env.raw.q::<i64>(redis::cmd("LLEN").arg(&ikey)).await? > 0) },
            )
            .await?;
        }
    }
    let limit = Duration::from_secs(150);
    let (mut java_writes, mut rust_writes) = (0i64, 0u64);
    for p in java {
        java_writes += p.wait(limit).await?.int()?;
    }
    for j in rust {
        rust_writes += tokio::time::timeout(limit, j)
            .await
            .map_err(|_| "rust rwcounter timed out".to_string())?
            .map_err(|e| format!("rust rwcounter task: {e}"))??;
    }
    let secs = t0.elapsed().as_secs_f64();
    let writes = java_writes + rust_writes as i64;
    let total = env.raw.get(&key).await?;
    let records = env.raw.lrange(&ikey).await?;
    let intervals: Vec<Interval> = records
        .iter()
        .map(|r| Interval::parse(r))
        .collect::<Result<_>>()?;
    env.raw.del(&[&key, &ikey]).await?;
    let expected = 2 * RW_COUNTER_TASKS * RW_COUNTER_ROUNDS;
    let is_write = |i: &Interval| i.who.ends_with(":w");
    let count = |lang: &str, w: bool| {
        intervals
            .iter()
            .filter(|i| i.who.starts_with(lang) && is_write(i) == w)
            .count()
    };
    let (jw, jr, rw_, rr) = (
        count("java:", true),
        count("java:", false),
        count("rust:", true),
        count("rust:", false),
    );
    // Overlaps first: they explain lost updates.
    if let Some((x, y)) = find_exclusive_overlap(&intervals, is_write) {
        return Err(format!(
            "a write section overlaps another section: {x:?} and {y:?} (counter {total:?}, writes {writes})"
        ));
    }
    ensure!(
        total.as_deref().unwrap_or("0") == writes.to_string(),
        "counter is {total:?}, expected {writes} ({java_writes} Java + {rust_writes} Rust writes): lost updates"
    );
    ensure!(
        intervals.len() == expected,
        "{} interval records, expected {expected}",
        intervals.len()
    );
    ensure!(
        jw as i64 == java_writes && rw_ as u64 == rust_writes && jw + jr == expected / 2 && rw_ + rr == expected / 2,
        "records: Java {jw} w + {jr} r (reported {java_writes} writes), Rust {rw_} w + {rr} r (counted {rust_writes})"
    );
    ensure!(
        jr > 0 && rr > 0 && jw > 0 && rw_ > 0,
        "a language did no reads or no writes"
    );
    // Readers really shared: count read/read overlaps across languages (informational).
    let shared = {
        let (mut j, mut r): (Vec<&Interval>, Vec<&Interval>) = (Vec::new(), Vec::new());
        for i in intervals.iter().filter(|i| !is_write(i)) {
            if i.who.starts_with("java:") {
                j.push(i)
            } else {
                r.push(i)
            }
        }
        j.iter()
            .filter(|x| r.iter().any(|y| x.start < y.end && y.start < x.end))
            .count()
    };
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "{} first; counter {writes} = {java_writes} Java + {rust_writes} Rust writes; {expected} sections ({jr} Java + {rr} Rust reads), no write overlaps anything; {shared} Java reads overlapped a Rust read; {secs:.1} s",
            if java_first { "Java" } else { "Rust" }
        ),
    })
}

async fn s9(env: &Env) -> Result<Outcome> {
    let names: Vec<String> = env.names.lock().map(|n| n.clone()).unwrap_or_default();
    // Redisson and our hub unsubscribe asynchronously after the last waiter leaves.
    let left = until(Duration::from_secs(10), "no channel is subscribed", || async {
        Ok(env.raw.channels().await?.is_empty())
    })
    .await;
    if left.is_err() {
        return Err(format!(
            "channels still subscribed after 10 s: {:?}",
            env.raw.channels().await?
        ));
    }
    for n in &names {
        for ch in [channel_of(n), rw_channel(n)] {
            let subs = env.raw.numsub(&ch).await?;
            ensure!(subs == 0, "PUBSUB NUMSUB {ch} = {subs}");
        }
        let timeouts = env.raw.keys_like(&format!("{{{n}}}:*:rwlock_timeout:*")).await?;
        ensure!(timeouts.is_empty(), "read-hold timeout keys left: {timeouts:?}");
    }
    for (label, c) in [("rust", &env.rust), ("rust-fast", &env.rust_fast)] {
        let r = until(Duration::from_secs(5), "the Rust client is idle", || async {
            let s = c.stats();
            Ok(s.channels == 0 && s.renewing == 0)
        })
        .await;
        if r.is_err() {
            return Err(format!("{label} client still busy: {:?}", c.stats()));
        }
    }
    let keys = env.raw.keys().await?;
    let (latches, others): (Vec<&String>, Vec<&String>) =
        keys.iter().partition(|k| k.starts_with("redisson_unlock_latch:"));
    ensure!(others.is_empty(), "keys left behind: {others:?}");
    for n in &names {
        ensure!(!keys.contains(n), "lock key {n} left");
    }
    for l in &latches {
        // -2: it expired between KEYS and PTTL (fine); -1 would be a latch that never expires.
        let ttl = env.raw.pttl(l).await?;
        ensure!(ttl != -1, "unlock latch {l} has no TTL");
    }
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "{} lock names checked; 0 channels; {} unlock latch key(s) with TTL still expiring",
            names.len(),
            latches.len()
        ),
    })
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

// ---------------------------------------------------------------------------------------------
// Running

async fn guarded<F: Future<Output = Result<Outcome>>>(limit: Duration, f: F) -> Result<Outcome> {
    match tokio::time::timeout(limit, AssertUnwindSafe(f).catch_unwind()).await {
        Err(_) => Err(format!("scenario did not finish within {limit:?}")),
        Ok(Err(panic)) => Err(format!(
            "panicked: {}",
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        )),
        Ok(Ok(r)) => r,
    }
}

async fn run_scenario(env: &Env, s: usize, dir: Dir) -> Result<Outcome> {
    let limit = if s == 8 || s == 15 {
        Duration::from_secs(300)
    } else {
        Duration::from_secs(60)
    };
    match s {
        1 => guarded(limit, s1(env, dir)).await,
        2 => guarded(limit, s2(env, dir)).await,
        3 => guarded(limit, s3(env, dir)).await,
        4 => guarded(limit, s4(env, dir)).await,
        5 => guarded(limit, s5(env, dir)).await,
        6 => guarded(limit, s6(env, dir)).await,
        7 => guarded(limit, s7(env, dir)).await,
        8 => guarded(limit, s8(env, dir)).await,
        10 => guarded(limit, s10(env, dir)).await,
        11 => guarded(limit, s11(env, dir)).await,
        12 => guarded(limit, s12(env, dir)).await,
        13 => guarded(limit, s13(env, dir)).await,
        14 => guarded(limit, s14(env, dir)).await,
        15 => guarded(limit, s15(env, dir)).await,
        _ => guarded(limit, s9(env)).await,
    }
}

fn dirs_of(s: usize) -> &'static [Dir] {
    match s {
        9 => &[Dir::Both],
        _ => &[Dir::JavaHolds, Dir::RustHolds],
    }
}

async fn setup(version: &str, jar: &Path, server: &RedisServer) -> Result<Env> {
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
    let rust = Client::connect(&url)
        .await
        .map_err(|e| format!("rust connect: {e}"))?;
    let rust_fast = Client::builder()
        .url(url.as_str())
        .config(Config::default().lock_watchdog_timeout(Duration::from_millis(FAST_WATCHDOG_MS)))
        .build()
        .await
        .map_err(|e| format!("rust connect: {e}"))?;
    let raw = Raw(redis::Client::open(url.as_str())
        .map_err(|e| e.to_string())?
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| e.to_string())?);
    Ok(Env {
        version: version.to_owned(),
        url,
        raw,
        java,
        java_fast,
        rust,
        rust_fast,
        jar: jar.to_owned(),
        names: Mutex::new(Vec::new()),
    })
}

async fn run_version(version: &str, jar: std::result::Result<PathBuf, String>, only: &[usize]) -> Vec<Row> {
    let mut rows = Vec::new();
    let fail_all = |rows: &mut Vec<Row>, why: &str| {
        for &s in only {
            for &dir in dirs_of(s) {
                rows.push(Row {
                    scenario: s,
                    version: version.to_owned(),
                    dir,
                    pass: false,
                    latency_ms: None,
                    note: why.to_owned(),
                    secs: 0.0,
                });
            }
        }
    };
    let jar = match jar {
        Ok(j) => j,
        Err(e) => {
            fail_all(&mut rows, &format!("harness build failed: {e}"));
            return rows;
        }
    };
    let server = RedisServer::start();
    let env = match setup(version, &jar, &server).await {
        Ok(env) => env,
        Err(e) => {
            fail_all(&mut rows, &format!("setup failed: {e}"));
            return rows;
        }
    };
    for &s in only {
        for &dir in dirs_of(s) {
            let t0 = Instant::now();
            let r = run_scenario(&env, s, dir).await;
            let secs = t0.elapsed().as_secs_f64();
            let row = match r {
                Ok(o) => Row {
                    scenario: s,
                    version: version.to_owned(),
                    dir,
                    pass: true,
                    latency_ms: o.latency_ms,
                    note: o.note,
                    secs,
                },
                Err(e) => Row {
                    scenario: s,
                    version: version.to_owned(),
                    dir,
                    pass: false,
                    latency_ms: None,
                    note: e,
                    secs,
                },
            };
            eprintln!(
                "compat: [{version}] s{s} {}: {}{} ({:.1} s) {}",
                dir.long(),
                if row.pass { "PASS" } else { "FAIL" },
                row.latency_ms
                    .map(|l| format!(", wake-up {l:.1} ms"))
                    .unwrap_or_default(),
                secs,
                row.note
            );
            rows.push(row);
        }
    }
    for h in [env.java, env.java_fast] {
        if let Err(e) = h.exit(Duration::from_secs(10)).await {
            eprintln!("compat: [{version}] harness exit: {e}");
        }
    }
    rows
}

fn build_jar(version: &str) -> std::result::Result<PathBuf, String> {
    let script = crate_dir().join("build-harness.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .arg(version)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {version} exited with {}",
            script.display(),
            out.status
        ));
    }
    let path = String::from_utf8_lossy(&out.stdout)
        .trim()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    let p = PathBuf::from(&path);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!("build-harness.sh printed `{path}`, not a jar"))
    }
}

fn command_line(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .map(|o| {
            let text = if o.stdout.is_empty() { o.stderr } else { o.stdout };
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
        .unwrap_or_else(|e| format!("unknown ({e})"))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

struct RunInfo {
    date: String,
    redis: String,
    java: String,
    mvn: String,
    versions: Vec<String>,
    secs: f64,
}

fn latency_table(md: &mut String, rows: &[Row], info: &RunInfo, which: impl Fn(usize) -> bool) {
    use std::fmt::Write;
    let _ = writeln!(
        md,
        "| version | samples | p50 | max | all |\n| --- | --- | --- | --- | --- |"
    );
    for v in &info.versions {
        let mut l: Vec<f64> = rows
            .iter()
            .filter(|r| &r.version == v && which(r.scenario))
            .filter_map(|r| r.latency_ms)
            .collect();
        l.sort_by(f64::total_cmp);
        let all: Vec<String> = l.iter().map(|x| format!("{x:.1}")).collect();
        let _ = writeln!(
            md,
            "| {v} | {} | {:.1} | {:.1} | {} |",
            l.len(),
            percentile(&l, 0.5),
            l.last().copied().unwrap_or(f64::NAN),
            all.join(", ")
        );
    }
}

fn render(rows: &[Row], info: &RunInfo) -> String {
    use std::fmt::Write;
    let passed = rows.iter().filter(|r| r.pass).count();
    let failed = rows.len() - passed;
    let mut md = String::new();
    let _ = writeln!(md, "# Interop results: redisson-lock (Rust) vs Redisson (Java)\n");
    let _ = writeln!(
        md,
        "Generated by `cargo test -p redisson-lock-compat-tests --test matrix`; do not edit by hand.\n"
    );
    let _ = writeln!(md, "* date: {}", info.date);
    let _ = writeln!(md, "* redis-server: {}", info.redis);
    let _ = writeln!(md, "* java: {}", info.java);
    let _ = writeln!(md, "* maven: {}", info.mvn);
    let _ = writeln!(
        md,
        "* host: {} CPU(s), versions run one after another",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );
    let _ = writeln!(md, "* Redisson versions: {}", info.versions.join(", "));
    let _ = writeln!(md, "* total run time: {:.0} s", info.secs);
    let _ = writeln!(md, "* **result: {passed} passed, {failed} failed**\n");
    let _ = writeln!(md, "Directions: **J→R** = A (the holder) is a Redisson thread and B a Rust task; **R→J** = A is Rust, B is Java;");
    let _ = writeln!(md, "**J+R** = both languages at once. Wake-up latency = B's acquisition minus A's unlock (or B's force unlock),");
    let _ = writeln!(md, "epoch ms from the harness' `ts_ms` and Rust's `SystemTime` on the same host (Java's side has 1 ms resolution).");
    let _ = writeln!(
        md,
        "A negative value means B acquired before A's side had finished processing its unlock reply: the"
    );
    let _ = writeln!(md, "unlock script publishes inside Redis, so the waiter can be woken before the reply reaches the holder.");
    let _ = writeln!(
        md,
        "The notes give the latency from the *start* of the unlock call too (an upper bound)."
    );
    let _ = writeln!(md, "Scenario 6: the waiter is in A's language, so B's force unlock wakes it across languages. Scenario 8: J→R =");
    let _ = writeln!(md, "the Java threads start first and the Rust tasks join after the first increment, R→J the other way round.");
    let _ = writeln!(
        md,
        "Scenarios 10–15 use the read-write lock (`getReadWriteLock` / `read_write_lock`); timeout keys are"
    );
    let _ = writeln!(md, "`{{N}}:<reader field>:rwlock_timeout:<k>`. Scenario 12: B = 3 readers of the other language; 14: the writer is in B's");
    let _ = writeln!(md, "language; 15: J→R = Java rwcounter workers first, R→J = Rust tasks first. Read-write wake-up bound: {RW_WAKE_BOUND_MS} ms.\n");
    let _ = writeln!(md, "## Matrix\n");
    let _ = write!(md, "| # | scenario |");
    for v in &info.versions {
        let _ = write!(md, " {v} |");
    }
    let _ = write!(md, "\n| --- | --- |");
    for _ in &info.versions {
        let _ = write!(md, " --- |");
    }
    md.push('\n');
    let scenarios: Vec<usize> = {
        let mut s: Vec<usize> = rows.iter().map(|r| r.scenario).collect();
        s.dedup();
        s.sort_unstable();
        s.dedup();
        s
    };
    for &s in &scenarios {
        let _ = write!(md, "| {s} | {} |", TITLES[s - 1]);
        for v in &info.versions {
            let cells: Vec<String> = rows
                .iter()
                .filter(|r| r.scenario == s && &r.version == v)
                .map(|r| {
                    let lat = r.latency_ms.map(|l| format!(" {l:.1} ms")).unwrap_or_default();
                    format!(
                        "{} {}{lat}",
                        r.dir.short(),
                        if r.pass { "pass" } else { "**FAIL**" }
                    )
                })
                .collect();
            let _ = write!(md, " {} |", cells.join("<br>"));
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "\n## Wake-up latency per version (ms; scenarios 2, 3, 5, 6, both directions)\n"
    );
    latency_table(&mut md, rows, info, |s| s <= 8);
    let _ = writeln!(
        md,
        "\n## Read-write wake-up latency per version (ms; scenario 12 = the last of 3 readers woken by a write unlock, 14 = a writer woken by the last read unlock)\n"
    );
    latency_table(&mut md, rows, info, |s| s >= 10);
    let _ = writeln!(md, "\n## Details\n");
    let _ = writeln!(md, "| # | version | direction | result | wake-up ms | time s | notes |\n| --- | --- | --- | --- | --- | --- | --- |");
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {:.1} | {} |",
            r.scenario,
            r.version,
            r.dir.long(),
            if r.pass { "pass" } else { "**FAIL**" },
            r.latency_ms
                .map(|l| format!("{l:.1}"))
                .unwrap_or_else(|| "–".into()),
            r.secs,
            r.note.replace('|', "\\|").replace('\n', " ")
        );
    }
    md
}

async fn run() -> i32 {
    let t0 = Instant::now();
    let ci = std::env::var("CI")
        .map(|v| v == "true" || v == "1")
        .unwrap_or(false);
    let versions: Vec<String> = std::env::var("COMPAT_VERSIONS")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_VERSIONS.to_owned())
        .split([' ', ','])
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let only: Vec<usize> = match std::env::var("COMPAT_SCENARIOS") {
        Ok(s) if !s.trim().is_empty() => {
            let wanted: Vec<usize> = s.split([' ', ',']).filter_map(|x| x.parse().ok()).collect();
            RUN_ORDER.into_iter().filter(|n| wanted.contains(n)).collect()
        }
        _ => RUN_ORDER.to_vec(),
    };
    let full = only.len() == RUN_ORDER.len();

    let redis_bin = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
    let missing: Vec<&str> = [
        ("java", on_path("java")),
        ("mvn", on_path("mvn")),
        (
            "redis-server",
            on_path(&redis_bin) || Path::new(&redis_bin).is_file(),
        ),
    ]
    .into_iter()
    .filter(|(_, ok)| !ok)
    .map(|(n, _)| n)
    .collect();
    if !missing.is_empty() {
        let msg = format!(
            "missing on PATH: {} (the interop matrix needs a JDK 17+, Maven and redis-server)",
            missing.join(", ")
        );
        if ci {
            eprintln!("compat: FAILURE in CI: {msg}");
            println!("compat: 0 passed, 1 failed");
            println!("0 passed, 1 failed");
            return 1;
        }
        eprintln!("\n################################################################");
        eprintln!("compat: SKIPPED (not in CI): {msg}");
        eprintln!("################################################################\n");
        println!("compat: skipped ({msg})");
        return 0;
    }

    let mut rows = Vec::new();
    for v in &versions {
        let jar = build_jar(v);
        rows.extend(run_version(v, jar, &only).await);
    }
    let info = RunInfo {
        date: command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        redis: command_line(&redis_bin, &["--version"]),
        java: command_line("java", &["-version"]),
        mvn: command_line("mvn", &["-B", "-v"])
            .replace("\u{1b}[1m", "")
            .replace("\u{1b}[m", "")
            .replace("\u{1b}[0m", ""),
        versions: versions.clone(),
        secs: t0.elapsed().as_secs_f64(),
    };
    let md = render(&rows, &info);
    let passed = rows.iter().filter(|r| r.pass).count();
    let failed = rows.len() - passed;
    if full {
        let path = crate_dir().join("RESULTS.md");
        match std::fs::write(&path, &md) {
            Ok(()) => eprintln!("compat: wrote {}", path.display()),
            Err(e) => eprintln!("compat: cannot write {}: {e}", path.display()),
        }
    } else {
        eprintln!("compat: scenario filter {only:?}: RESULTS.md not rewritten");
    }
    for r in rows.iter().filter(|r| !r.pass) {
        eprintln!(
            "compat: FAILED s{} [{}] {}: {}",
            r.scenario,
            r.version,
            r.dir.long(),
            r.note
        );
    }
    eprintln!("compat: total {:.1} s", t0.elapsed().as_secs_f64());
    println!("compat: {passed} passed, {failed} failed");
    println!("{passed} passed, {failed} failed");
    i32::from(failed > 0 || rows.is_empty())
}

fn main() {
    // libtest-style probes (`--list`) must not start the whole matrix.
    if std::env::args().any(|a| a == "--list") {
        println!("matrix: test");
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let code = rt.block_on(run());
    drop(rt);
    std::process::exit(code);
}
