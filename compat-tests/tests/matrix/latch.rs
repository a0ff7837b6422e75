//! Count-down latch scenarios 43–47 (`getCountDownLatch` / `Client::count_down_latch`, every
//! Redisson version of the matrix). A latch is not a lock: in these rows A is the side that sets
//! the count and counts down (or deletes), B the other language, which reads or waits; J→R = Java
//! is A, R→J = Rust is A.
//!
//! Redis state: the count is a decimal string at the latch's name N (no TTL), deleted by the
//! count-down that takes it to 0 or below; nothing else is stored. The channel is
//! `redisson_countdownlatch__channel__{N}`: `1` when `trySetCount` sets a count or `delete`
//! removes the latch, `0` only from the count-down that makes the count exactly 0. Every message
//! is checked with a raw `PSUBSCRIBE *{N}*` ([`Watch`]), closed by a marker published on
//! `compat-end:{N}` once the scenario is done (one subscriber connection receives publishes in
//! the order Redis ran them, so every message of the scenario arrived before the marker).
//!
//! Waiters: Java `await(ms)` runs on a harness worker of its own (its thread blocks while other
//! workers count down); Rust `wait_for` runs in a task on the quiet client (`poll_interval`
//! 10 s, `subscribed_poll_interval` 30 s), so a waiter back within [`LATCH_WAKE_BOUND_MS`] of the
//! releasing call was woken by the message. A waiter counts as listening once
//! `PUBSUB NUMSUB` of the latch channel shows its client.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redisson_lock::CountDownLatch;
use redisson_lock_compat_tests::{now_ms, Harness, Pending, Response, Result};

use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS};
use crate::party::{Lang, Party};
use crate::support::{until, Watch, CMD};

/// The bound from the call that released a waiter (the last count-down, a delete) to the
/// waiter's return. Generous: a message gets a waiter out within milliseconds, while without one
/// a Rust waiter re-reads only after 30 s and a Java waiter waits out its timeout.
pub const LATCH_WAKE_BOUND_MS: f64 = 3000.0;
/// The timeout of the waiters of scenarios 44, 46 (J→R) and 47 (Java `await`, Rust `wait_for`).
const WAIT_MS: u64 = 20_000;
/// Scenario 46 R→J: the timeout of the Java waiter that a Rust `delete()` does not wake (Redisson
/// waiters return only on `0`); only observed, never asserted.
const JAVA_DELETE_WAIT_MS: u64 = 1500;
/// Scenario 47: count-downs per language, split over this many Java workers and Rust tasks, and
/// the waiters per language.
const STRESS: (u64, usize, usize) = (200, 2, 2);
const STRESS_WAITERS: usize = 2;

const fn sc(no: usize, title: &'static str) -> Scenario {
    Scenario {
        no,
        title,
        dirs: BOTH_WAYS,
        limit_s: 60,
        last: false,
        needs: None,
    }
}

pub const SCENARIOS: &[Scenario] = &[
    sc(43, "Latch set/read: A's trySetCount(3) is true; raw Redis has exactly the string \"3\" at N (no TTL, no other key); B reads 3, B's and A's trySetCount(5) are false; B's delete is true, A's second delete false; the channel saw `1` (set) and `1` (delete) only"),
    sc(44, "Latch wake-up across languages: B waits (await / wait_for 20 s, subscribed); A counts down 3 times (\"2\", \"1\", then the key is gone); B returns true ≤ 3 s after A's last count-down (Rust re-polls only every 30 s: the message woke it); the channel saw `1`, then `0` once"),
    sc(45, "Latch count-down past zero: count-downs of a latch that does not exist, and past zero after trySetCount(1) (A's, then A's and B's again) raise nothing, leave no key (count 0 in both languages) and publish nothing; await on the missing latch returns true at once in both; trySetCount then works again"),
    sc(46, "Latch delete: J→R: a Rust waiter (wait_for 20 s) is woken by Java's delete() ≤ 3 s after it (it re-reads the count on any message). R→J: Rust's delete() publishes `1` like Redisson's; the Java waiter's await(1.5 s) is only reported, not asserted (Redisson's waiters are woken by `0` alone, so a delete does not wake them). Both: delete true, key gone, the other side's delete false"),
    Scenario {
        limit_s: 120,
        ..sc(47, "Latch mixed stress: trySetCount(400) by A; 2 Java + 2 Rust waiters subscribed; 2 Java workers and 2 Rust tasks count down 200 times per language, interleaved (J→R: Rust joins once Java's count-downs show; R→J: Rust does half, the rest once Java's show); every waiter returns true ≤ 3 s after the last count-down; exactly one `0` published; key gone")
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        43 => s43(env, dir).await,
        44 => s44(env, dir).await,
        45 => s45(env, dir).await,
        46 => s46(env, dir).await,
        47 => s47(env, dir).await,
        _ => Err(format!("no count-down latch scenario {no}")),
    }
}

/// The latch's channel: `redisson_countdownlatch__channel__{N}` (the braces are always added).
pub fn latch_channel(name: &str) -> String {
    format!("redisson_countdownlatch__channel__{{{name}}}")
}

/// One side's handle on latch N: the harness' `latch<Op> N …` on the party's worker, or the Rust
/// `client.count_down_latch(N)` (a latch has no owner: the party's owner id plays no part).
enum Latch<'a> {
    Java {
        h: &'a Harness,
        worker: String,
        name: String,
    },
    Rust(CountDownLatch),
}

/// A wait started in the background: the Java `latchAwait` on its worker, or a Rust task that
/// gives the result and the epoch ms of its return.
enum LatchWaiting {
    Java(Box<Pending>),
    Rust(tokio::task::JoinHandle<Result<(bool, f64)>>),
}

impl LatchWaiting {
    fn is_done(&mut self) -> bool {
        match self {
            LatchWaiting::Java(p) => p.is_done(),
            LatchWaiting::Rust(j) => j.is_finished(),
        }
    }

    /// The wait's result and the epoch ms of its return (Java: the harness' `ts_ms`).
    async fn finish(self, limit: Duration) -> Result<(bool, f64)> {
        match self {
            LatchWaiting::Java(p) => {
                let r = p.wait(limit).await?;
                let ts = r.ts_ms;
                Ok((r.bool()?, ts))
            }
            LatchWaiting::Rust(j) => {
                let abort = j.abort_handle();
                tokio::time::timeout(limit, j)
                    .await
                    .map_err(|_| {
                        abort.abort();
                        format!("rust latch wait_for did not return within {limit:?}")
                    })?
                    .map_err(|e| format!("rust latch wait task: {e}"))?
            }
        }
    }
}

impl<'a> Latch<'a> {
    fn of(party: &Party<'a>, name: &str) -> Result<Latch<'a>> {
        Ok(match &party.lang {
            Lang::Java { h, worker } => Latch::Java {
                h,
                worker: worker.clone(),
                name: name.to_owned(),
            },
            Lang::Rust { c, .. } => Latch::Rust(
                c.count_down_latch(name)
                    .map_err(|e| format!("client.count_down_latch({name}): {e}"))?,
            ),
        })
    }

    fn lang(&self) -> &'static str {
        match self {
            Latch::Java { .. } => "Java",
            Latch::Rust(_) => "Rust",
        }
    }

    /// A harness call `latch<op> N args…` on the worker.
    async fn java(&self, op: &str, args: &[&str], limit: Duration) -> Result<Response> {
        let Latch::Java { h, worker, name } = self else {
            return Err("not a Java latch".into());
        };
        let mut all = vec![name.as_str()];
        all.extend_from_slice(args);
        h.call(worker, op, &all, limit).await
    }

    async fn try_set_count(&self, n: u64) -> Result<bool> {
        match self {
            Latch::Java { .. } => self
                .java("latchTrySetCount", &[n.to_string().as_str()], CMD)
                .await?
                .bool(),
            Latch::Rust(l) => l
                .try_set_count(n)
                .await
                .map_err(|e| format!("rust try_set_count({n}): {e}")),
        }
    }

    /// One count-down; returns the epoch ms of its reply.
    async fn count_down(&self) -> Result<f64> {
        match self {
            Latch::Java { .. } => {
                let r = self.java("latchCountDown", &[], CMD).await?;
                let ts = r.ts_ms;
                r.into_ok()?;
                Ok(ts)
            }
            Latch::Rust(l) => {
                l.count_down()
                    .await
                    .map(drop)
                    .map_err(|e| format!("rust count_down: {e}"))?;
                Ok(now_ms())
            }
        }
    }

    async fn count(&self) -> Result<u64> {
        match self {
            Latch::Java { .. } => {
                let n = self.java("latchGetCount", &[], CMD).await?.int()?;
                u64::try_from(n).map_err(|_| format!("java getCount() = {n}"))
            }
            Latch::Rust(l) => l.count().await.map_err(|e| format!("rust count: {e}")),
        }
    }

    /// `delete()`; returns whether there was a latch and the epoch ms of the reply.
    async fn delete(&self) -> Result<(bool, f64)> {
        match self {
            Latch::Java { .. } => {
                let r = self.java("latchDelete", &[], CMD).await?;
                let ts = r.ts_ms;
                Ok((r.bool()?, ts))
            }
            Latch::Rust(l) => {
                let gone = l.delete().await.map_err(|e| format!("rust delete: {e}"))?;
                Ok((gone, now_ms()))
            }
        }
    }

    /// Starts `await(wait_ms)` / `wait_for(wait_ms)` in the background.
    async fn start_wait(&self, wait_ms: u64) -> Result<LatchWaiting> {
        match self {
            Latch::Java { h, worker, name } => Ok(LatchWaiting::Java(Box::new(
                h.send(
                    worker,
                    "latchAwait",
                    &[name.as_str(), wait_ms.to_string().as_str()],
                )
                .await?,
            ))),
            Latch::Rust(l) => {
                let l = l.clone();
                Ok(LatchWaiting::Rust(tokio::spawn(async move {
                    let reached = l
                        .wait_for(Duration::from_millis(wait_ms))
                        .await
                        .map_err(|e| format!("rust wait_for({wait_ms} ms): {e}"))?;
                    Ok((reached, now_ms()))
                })))
            }
        }
    }

    /// A wait that should return at once (the count is 0): its result and how long it took (ms).
    async fn wait_now(&self, wait_ms: u64) -> Result<(bool, f64)> {
        let t0 = now_ms();
        let w = self.start_wait(wait_ms).await?;
        let (reached, at) = w.finish(Duration::from_millis(wait_ms) + CMD).await?;
        Ok((reached, at - t0))
    }
}

/// The raw count at N: `None` when the key is absent.
async fn raw_count(env: &Env, name: &str) -> Result<Option<String>> {
    env.raw.get(name).await
}

/// The key N is absent, and both sides read count 0.
async fn gone(env: &Env, name: &str, a: &Latch<'_>, b: &Latch<'_>, what: &str) -> Result<()> {
    let left = env.raw.exists(&[name]).await?;
    ensure!(
        left == 0,
        "{what}: the latch key {name} still exists ({:?})",
        raw_count(env, name).await?
    );
    for l in [a, b] {
        let n = l.count().await?;
        ensure!(n == 0, "{what}: {} reads count {n}, expected 0", l.lang());
    }
    Ok(())
}

/// Waits until `n` clients listen on the latch channel (`PUBSUB NUMSUB`: one subscription per
/// client and channel, shared by its waiters, in both libraries).
async fn wait_listening(env: &Env, name: &str, n: i64) -> Result<()> {
    let ch = latch_channel(name);
    until(
        Duration::from_secs(10),
        &format!("{n} client(s) subscribed to {ch}"),
        || async { Ok(env.raw.numsub(&ch).await? >= n) },
    )
    .await
}

/// Every payload published on the latch channel during the scenario, in order; fails on a message
/// on any other channel of N. Publishes the end marker and waits for it.
async fn messages(env: &Env, watch: &Watch, name: &str) -> Result<Vec<String>> {
    let end = format!("compat-end:{{{name}}}");
    env.raw
        .q::<i64>(redis::cmd("PUBLISH").arg(&end).arg("end"))
        .await?;
    let ch = latch_channel(name);
    until(
        Duration::from_secs(5),
        &format!("the marker on {end}"),
        || async { Ok(watch.seen().iter().any(|(_, c, _)| *c == end)) },
    )
    .await
    .map_err(|e| format!("{e}; seen {:?}", watch.seen()))?;
    let mut out = Vec::new();
    for (_, c, p) in watch.seen() {
        if c == end {
            break;
        }
        ensure!(c == ch, "a message on {c} (`{p}`); only {ch} was expected");
        out.push(p);
    }
    Ok(out)
}

/// The latch channel carried exactly `want`.
async fn expect_messages(env: &Env, watch: &Watch, name: &str, want: &[&str]) -> Result<()> {
    let got = messages(env, watch, name).await?;
    ensure!(
        got == want,
        "{} carried {got:?}, expected {want:?}",
        latch_channel(name)
    );
    Ok(())
}

async fn s43(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(43, dir);
    let (pa, pb) = env.pair(43, dir, Speed::QuietPoll);
    let (a, b) = (Latch::of(&pa, &name)?, Latch::of(&pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    let before = b.count().await?;
    ensure!(before == 0, "B reads count {before} before any trySetCount");
    ensure!(
        a.try_set_count(3).await?,
        "A's trySetCount(3) on a new latch returned false"
    );
    let v = raw_count(env, &name).await?;
    ensure!(
        v.as_deref() == Some("3"),
        "after A's trySetCount(3) GET {name} = {v:?}, expected \"3\""
    );
    let ttl = env.raw.pttl(&name).await?;
    ensure!(ttl == -1, "the latch key has PTTL {ttl}, expected -1 (no TTL)");
    let keys = env.raw.keys_like(&format!("*{name}*")).await?;
    ensure!(
        keys == [name.clone()],
        "keys naming the latch: {keys:?}, expected only {name}"
    );
    let n = b.count().await?;
    ensure!(n == 3, "B reads count {n}, expected 3");
    ensure!(
        !b.try_set_count(5).await?,
        "B's trySetCount(5) returned true on an existing latch"
    );
    ensure!(
        !a.try_set_count(5).await?,
        "A's own second trySetCount(5) returned true"
    );
    let v = raw_count(env, &name).await?;
    ensure!(
        v.as_deref() == Some("3"),
        "after the refused trySetCount(5) GET {name} = {v:?}, expected \"3\""
    );
    let n = a.count().await?;
    ensure!(n == 3, "A reads count {n}, expected 3");
    let (deleted, _) = b.delete().await?;
    ensure!(deleted, "B's delete() of A's latch returned false");
    gone(env, &name, &a, &b, "after B's delete").await?;
    let (again, _) = a.delete().await?;
    ensure!(!again, "A's delete() of a deleted latch returned true");
    expect_messages(env, &watch, &name, &["1", "1"]).await?;
    Ok(Outcome {
        latency_ms: None,
        note: "\"3\" at N alone (no TTL); refused trySetCount(5) on both sides; delete across languages; messages 1 (set), 1 (delete)".into(),
    })
}

async fn s44(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(44, dir);
    let (pa, pb) = env.pair(44, dir, Speed::QuietPoll);
    let (a, b) = (Latch::of(&pa, &name)?, Latch::of(&pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    ensure!(a.try_set_count(3).await?, "A's trySetCount(3) returned false");
    let mut w = b.start_wait(WAIT_MS).await?;
    wait_listening(env, &name, 1).await?;
    let mut t_last = 0.0;
    for left in [2u64, 1, 0] {
        ensure!(!w.is_done(), "B's wait returned while the count was {}", left + 1);
        t_last = a.count_down().await?;
        if left > 0 {
            let v = raw_count(env, &name).await?;
            ensure!(
                v == Some(left.to_string()),
                "after a count-down GET {name} = {v:?}, expected \"{left}\""
            );
        }
    }
    let (reached, t_ret) = w.finish(Duration::from_millis(WAIT_MS) + CMD).await?;
    ensure!(reached, "B's wait returned false (timed out)");
    let lat = t_ret - t_last;
    ensure!(
        lat <= LATCH_WAKE_BOUND_MS,
        "B returned {lat:.1} ms after A's last count-down (bound {LATCH_WAKE_BOUND_MS} ms: not woken by the message)"
    );
    gone(env, &name, &a, &b, "after the count reached 0").await?;
    expect_messages(env, &watch, &name, &["1", "0"]).await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "{} waiter returned true {lat:.1} ms after {}'s 3rd count-down; messages 1, 0",
            b.lang(),
            a.lang()
        ),
    })
}

async fn s45(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(45, dir);
    let (pa, pb) = env.pair(45, dir, Speed::QuietPoll);
    let (a, b) = (Latch::of(&pa, &name)?, Latch::of(&pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    // a latch that never existed
    for l in [&a, &b] {
        l.count_down().await?;
        gone(
            env,
            &name,
            &a,
            &b,
            &format!("after {}'s count-down of a missing latch", l.lang()),
        )
        .await?;
    }
    let mut quick = Vec::new();
    for l in [&a, &b] {
        let (reached, took) = l.wait_now(1000).await?;
        ensure!(reached, "{}'s wait on a missing latch returned false", l.lang());
        quick.push(format!("{} {took:.0} ms", l.lang()));
    }
    // past zero
    ensure!(
        a.try_set_count(1).await?,
        "A's trySetCount(1) returned false: the earlier count-downs left a latch"
    );
    let v = raw_count(env, &name).await?;
    ensure!(v.as_deref() == Some("1"), "GET {name} = {v:?}, expected \"1\"");
    a.count_down().await?;
    gone(env, &name, &a, &b, "after A's count-down to 0").await?;
    for l in [&a, &b, &b] {
        l.count_down().await?;
        gone(
            env,
            &name,
            &a,
            &b,
            &format!("after {}'s count-down past 0", l.lang()),
        )
        .await?;
    }
    ensure!(
        b.try_set_count(1).await?,
        "B's trySetCount(1) returned false after the count-downs past 0"
    );
    let v = raw_count(env, &name).await?;
    ensure!(v.as_deref() == Some("1"), "GET {name} = {v:?}, expected \"1\"");
    b.count_down().await?;
    gone(env, &name, &a, &b, "after B's count-down to 0").await?;
    expect_messages(env, &watch, &name, &["1", "0", "1", "0"]).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "5 count-downs of a missing latch (2 before, 3 past 0) raised nothing and left nothing; waits on it returned true at once ({}); messages 1, 0, 1, 0",
            quick.join(", ")
        ),
    })
}

async fn s46(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(46, dir);
    let (pa, pb) = env.pair(46, dir, Speed::QuietPoll);
    let (a, b) = (Latch::of(&pa, &name)?, Latch::of(&pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    ensure!(a.try_set_count(2).await?, "A's trySetCount(2) returned false");
    let java_waits = dir == Dir::RustHolds;
    let wait_ms = if java_waits { JAVA_DELETE_WAIT_MS } else { WAIT_MS };
    let mut w = b.start_wait(wait_ms).await?;
    wait_listening(env, &name, 1).await?;
    ensure!(!w.is_done(), "B's wait returned while the count was 2");
    let (deleted, t_del) = a.delete().await?;
    ensure!(deleted, "A's delete() of its latch returned false");
    let (reached, t_ret) = w.finish(Duration::from_millis(wait_ms) + CMD).await?;
    let after = t_ret - t_del;
    gone(env, &name, &a, &b, "after A's delete").await?;
    let (again, _) = b.delete().await?;
    ensure!(!again, "B's delete() of a deleted latch returned true");
    expect_messages(env, &watch, &name, &["1", "1"]).await?;
    if java_waits {
        // Redisson's waiters leave on `0` only; what its await does after a delete is reported
        return Ok(Outcome {
            latency_ms: None,
            note: format!(
                "Rust delete published 1 as Redisson's does; the Java waiter (await {JAVA_DELETE_WAIT_MS} ms, not asserted) returned {reached} {after:.0} ms after the delete"
            ),
        });
    }
    ensure!(reached, "the Rust waiter returned false after Java's delete");
    ensure!(
        after <= LATCH_WAKE_BOUND_MS,
        "the Rust waiter returned {after:.1} ms after Java's delete (bound {LATCH_WAKE_BOUND_MS} ms: not woken by the message)"
    );
    Ok(Outcome {
        latency_ms: Some(after),
        note: format!("Java delete published 1; the Rust waiter returned true {after:.1} ms after it"),
    })
}

/// A Rust count-down task of scenario 47: the epoch ms of its first call and of its last reply.
type CountDowns = tokio::task::JoinHandle<Result<(f64, f64)>>;
/// Where the task that finishes a phase's last count-down leaves the raw count it read then.
type Probe = Arc<Mutex<Option<Option<String>>>>;

/// `n` split over `parts` shares (the first ones one larger when it does not divide).
fn shares(n: u64, parts: usize) -> Vec<u64> {
    let parts = parts as u64;
    (0..parts).map(|i| n / parts + u64::from(i < n % parts)).collect()
}

/// Rust count-down tasks of scenario 47, one per share, each on its own handle. Each returns the
/// epoch ms of its first call and of its last reply. With `probe`, the task that finishes the
/// phase's last count-down reads the raw count at once and stores it there.
fn rust_countdowns(env: &Env, name: &str, each: &[u64], probe: Option<Probe>) -> Result<Vec<CountDowns>> {
    let left = Arc::new(AtomicU64::new(each.iter().sum()));
    let mut tasks = Vec::new();
    for &share in each {
        let l = env
            .rust_quiet
            .count_down_latch(name)
            .map_err(|e| format!("client.count_down_latch({name}): {e}"))?;
        let (left, probe, raw, name) = (left.clone(), probe.clone(), env.raw.clone(), name.to_owned());
        tasks.push(tokio::spawn(async move {
            let first = now_ms();
            for _ in 0..share {
                l.count_down()
                    .await
                    .map(drop)
                    .map_err(|e| format!("rust count_down: {e}"))?;
                if left.fetch_sub(1, Ordering::SeqCst) == 1 {
                    if let Some(p) = &probe {
                        let v = raw.get(&name).await?;
                        if let Ok(mut slot) = p.lock() {
                            *slot = Some(v);
                        }
                    }
                }
            }
            Ok((first, now_ms()))
        }));
    }
    Ok(tasks)
}

/// Waits until the raw count is below `below` (someone counted down).
async fn count_below(env: &Env, name: &str, below: u64, what: &str) -> Result<()> {
    until(Duration::from_secs(10), what, || async {
        let v = raw_count(env, name).await?;
        Ok(v.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) < below)
    })
    .await
}

async fn s47(env: &Env, dir: Dir) -> Result<Outcome> {
    let (per_lang, java_workers, rust_tasks) = STRESS;
    let name = env.name(47, dir);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    let java_first = dir == Dir::JavaHolds;
    let party = |role: &str, java: bool| env.party(47, dir, role, java, Speed::QuietPoll);
    let setter = party("a", java_first);
    let a = Latch::of(&setter, &name)?;
    let total = per_lang * 2;
    ensure!(
        a.try_set_count(total).await?,
        "A's trySetCount({total}) returned false"
    );
    // waiters in both languages, each Java one on a worker of its own
    let mut waiters = Vec::new();
    for i in 0..STRESS_WAITERS {
        for java in [true, false] {
            let p = party(&format!("w{i}"), java);
            let l = Latch::of(&p, &name)?;
            waiters.push((l.lang(), l.start_wait(WAIT_MS).await?));
        }
    }
    wait_listening(env, &name, 2).await?;
    for (lang, w) in waiters.iter_mut() {
        ensure!(!w.is_done(), "a {lang} waiter returned before any count-down");
    }
    // The count-downs interleave by construction: J→R, Java's (pipelined on its workers) begin,
    // and the Rust tasks start once the count has moved; R→J, the Rust tasks do half of theirs,
    // Java's begin, and the Rust tasks do the rest once Java's count-downs show. How far Java had
    // got when the last Rust count-down returned (the raw count read then) goes into the note.
    let probe = Arc::new(Mutex::new(None));
    let mut rust = Vec::new();
    let rust_shares = shares(per_lang, rust_tasks);
    if !java_first {
        let first: Vec<u64> = rust_shares.iter().map(|s| s / 2).collect();
        for t in rust_countdowns(env, &name, &first, None)? {
            rust.push(t.await.map_err(|e| format!("rust count-down task: {e}"))??);
        }
    }
    let rust_before: u64 = if java_first {
        0
    } else {
        rust_shares.iter().map(|s| s / 2).sum()
    };
    let mut java = Vec::new();
    for (i, share) in shares(per_lang, java_workers).into_iter().enumerate() {
        let p = party(&format!("c{i}"), true);
        let Lang::Java { h, worker } = &p.lang else {
            return Err("a Java party without a worker".into());
        };
        for _ in 0..share {
            java.push(h.send(worker, "latchCountDown", &[name.as_str()]).await?);
        }
    }
    count_below(env, &name, total - rust_before, "Java's count-downs have begun").await?;
    let rest: Vec<u64> = rust_shares
        .iter()
        .map(|s| s - if java_first { 0 } else { s / 2 })
        .collect();
    let tasks = rust_countdowns(env, &name, &rest, Some(probe.clone()))?;
    let limit = Duration::from_secs(60);
    for t in tasks {
        rust.push(
            tokio::time::timeout(limit, t)
                .await
                .map_err(|_| "rust count-down task timed out".to_string())?
                .map_err(|e| format!("rust count-down task: {e}"))??,
        );
    }
    // (first call start, last reply) per language, epoch ms
    let mut java_span = (f64::MAX, f64::MIN);
    for p in java {
        let r = p.wait(limit).await?;
        java_span = (java_span.0.min(r.start_ms), java_span.1.max(r.ts_ms));
        r.into_ok()?;
    }
    let rust_span = rust
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &(f, l)| (a.min(f), b.max(l)));
    let at_rust_end = probe.lock().ok().and_then(|p| p.clone());
    let Some(at_rust_end) = at_rust_end else {
        return Err("the last Rust count-down read no count".into());
    };
    let left = at_rust_end
        .as_deref()
        .map(|v| v.parse::<u64>().map_err(|e| format!("count `{v}`: {e}")))
        .transpose()?
        .unwrap_or(0);
    let java_then = total - per_lang - left.min(total - per_lang);
    // how long both languages were counting down at once (by their first request and last
    // reply): reported, not required, since which side finishes first depends on the machine
    let overlap_ms = (java_span.1.min(rust_span.1) - java_span.0.max(rust_span.0)).max(0.0);
    let t_last = java_span.1.max(rust_span.1);
    let mut slowest = f64::MIN;
    for (lang, w) in waiters {
        let (reached, at) = w.finish(Duration::from_millis(WAIT_MS) + CMD).await?;
        ensure!(reached, "a {lang} waiter returned false");
        let lat = at - t_last;
        ensure!(
            lat <= LATCH_WAKE_BOUND_MS,
            "a {lang} waiter returned {lat:.1} ms after the last count-down (bound {LATCH_WAKE_BOUND_MS} ms)"
        );
        slowest = slowest.max(lat);
    }
    let b = Latch::of(&party("b", !java_first), &name)?;
    gone(env, &name, &a, &b, "after the count-downs").await?;
    expect_messages(env, &watch, &name, &["1", "0"]).await?;
    Ok(Outcome {
        latency_ms: Some(slowest),
        note: format!(
            "{} first; {per_lang} Java + {per_lang} Rust count-downs from {total} ({:.0} ms Java, {:.0} ms Rust; Java had done {java_then} when Rust's last returned; both counting for {overlap_ms:.0} ms); {} waiters per language all true, the slowest {slowest:.1} ms after the last count-down reply; exactly one 0 published",
            if java_first { "Java" } else { "Rust" },
            java_span.1 - java_span.0,
            rust_span.1 - rust_span.0,
            STRESS_WAITERS
        ),
    })
}
