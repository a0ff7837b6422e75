//! Semaphore scenarios 48–52 (`getSemaphore` / `Client::semaphore`, every Redisson version of the
//! matrix; 49 needs `trySetPermits(int, Duration)`, 3.29.0+, and 50 `releaseIfExists`, 4.0.0+,
//! else they are n/a). A semaphore is not a lock and its permits have no owner: in these rows A is
//! the side that sets the permits up and takes or gives back first, B the other language; J→R =
//! Java is A, R→J = Rust is A.
//! Both languages' operations are [`Sem`], in [`crate::semaphore_party`].
//!
//! Redis state: the available permits are a decimal string at the semaphore's name N (no TTL
//! unless `trySetPermits(p, ttl)` gave one); nothing else is stored. The channel is
//! `redisson_sc:{N}`; its messages are the number of permits available after the call: from
//! `trySetPermits` (the count set), `release` and `addPermits` (the new total); an acquisition,
//! `drainPermits` and `delete` publish nothing. Every message is checked with a raw
//! `PSUBSCRIBE *{N}*` ([`Watch`]), closed by a marker published on `compat-end:{N}`.
//!
//! Waiters: Java `acquire(n)` runs on a harness worker of its own (Redisson's waiter does not
//! poll: it tries again only when a message says permits came back, and then wakes at most as
//! many waiters as the message's number); Rust `acquire(n)` runs in a task on the quiet client
//! (`poll_interval` 10 s, 30 s once subscribed), so a waiter back within [`SEM_WAKE_BOUND_MS`] of
//! the release was woken by the message. A waiter counts as listening once `PUBSUB NUMSUB
//! redisson_sc:{N}` shows its client.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redisson_lock_compat_tests::Result;

use crate::env::{Env, Speed};
use crate::kinds::{Dir, Needs, Outcome, Scenario, BOTH_WAYS};
use crate::party::Lang;
use crate::semaphore_party::Sem;
use crate::support::{until, Watch, CMD};

/// The bound from the release that lets a waiter in to the waiter's return (scenarios 51, 56),
/// and from a lease's end to the waiter that gets the permit back (55). Generous: a message gets
/// a waiter in within milliseconds, while without one a Java waiter never tries again and a
/// Rust waiter only after 30 s.
pub const SEM_WAKE_BOUND_MS: f64 = 5000.0;
/// Scenario 49: the semaphore's TTL.
const TTL_MS: u64 = 1500;
/// Scenario 52: the permits, the Java workers and Rust tasks, how long each runs, and the
/// longest hold (a random 0..=this many ms inside).
const STRESS_PERMITS: i64 = 3;
const STRESS_PARTIES: usize = 3;
const STRESS_MS: u64 = 1500;
const STRESS_MAX_HOLD_MS: u64 = 3;
/// Scenario 52: the fewest rounds each language must complete (hundreds are usual); fewer means
/// its waiters were not woken by the other language's releases.
const STRESS_MIN_ROUNDS: u64 = 20;

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
    sc(48, "Semaphore counts across languages: B reads 0 before anything; A's trySetPermits(3) true (\"3\" at N, no TTL, no other key but the crate's request latches, which expire), B's trySetPermits(5) false; A takes 2, B's tryAcquire(2) refused, B takes 1, A's tryAcquire(1) refused; B gives back 2 (A's), A gives back 1; A addPermits(2), B addPermits(-1); B drains 4, A drains 0; A releases 1, B deletes (true), A's delete false; after every step raw GET and both availablePermits agree; the channel saw exactly 3, 2, 3, 5, 4, 1"),
    Scenario {
        needs: Some(Needs {
            since: "3.29.0",
            what: "RSemaphore.trySetPermits(int, Duration)",
        }),
        ..sc(49, "Semaphore TTL: A's trySetPermits(2, 1.5 s) true (0 < PTTL ≤ 1.5 s); B's trySetPermits(2, ttl) and trySetPermits(5) false; B's acquire and release keep the TTL; the key expires by itself and both read 0; B's trySetPermits(1, ttl) true again, A's addPermits(1) then drops the TTL (PTTL −1, as Redisson's) and A's drainPermits too; channel 2, 2, 1, 2")
    },
    Scenario {
        needs: Some(Needs {
            since: "4.0.0",
            what: "RSemaphore.releaseIfExists(int)",
        }),
        ..sc(50, "Semaphore releaseIfExists: on a missing semaphore A's and B's are false, create no key and publish nothing; after A's trySetPermits(1), B's releaseIfExists(2) true (\"3\"), A's releaseIfExists(1) true (\"4\"); channel 1, 3, 4")
    },
    sc(51, "Semaphore wake-up across languages: A sets 1 permit and takes it; B blocks in acquire(2) (subscribed to redisson_sc:{N}); A's first release(1) (message 1) leaves B waiting 300 ms, A's second (message 2) gets B in ≤ 5 s (Java's acquire does not poll, Rust's re-polls only every 30 s: the message's number woke it); then B gives both back"),
    Scenario {
        limit_s: 90,
        ..sc(52, "Semaphore mixed stress: 3 permits; 3 Java workers (semaphoreStress) and 3 Rust tasks loop acquire(1), INCR a shared counter, hold 0–3 ms, DECR, release(1) for 1.5 s each (J→R: Java starts first, R→J: Rust); no INCR ever sees more than 3 inside, a raw sampler never sees the count below 0 or above 3, each language does ≥ 20 rounds, and afterwards the count is 3 again (both sides read 3) and the counter 0")
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        48 => s48(env, dir).await,
        49 => s49(env, dir).await,
        50 => s50(env, dir).await,
        51 => s51(env, dir).await,
        52 => s52(env, dir).await,
        _ => Err(format!("no semaphore scenario {no}")),
    }
}

/// The semaphores' channel: `redisson_sc:{N}` (both kinds).
pub fn sem_channel(name: &str) -> String {
    format!("redisson_sc:{{{name}}}")
}

/// Raw `GET N`, both sides' `availablePermits` and `want` agree (`None`: no key, both read 0).
async fn agree(env: &Env, name: &str, a: &Sem<'_>, b: &Sem<'_>, want: Option<i64>, what: &str) -> Result<()> {
    let raw = env.raw.get(name).await?;
    let want_raw = want.map(|w| w.to_string());
    ensure!(
        raw == want_raw,
        "{what}: GET {name} = {raw:?}, expected {want_raw:?}"
    );
    for s in [a, b] {
        let n = s.available().await?;
        ensure!(
            n == want.unwrap_or(0),
            "{what}: {} availablePermits = {n}, expected {}",
            s.lang(),
            want.unwrap_or(0)
        );
    }
    Ok(())
}

/// The only key naming N is N itself, apart from request latches
/// (`redisson_unlock_latch:{N}:<id>`, with a TTL: how the crate makes a re-sent request apply
/// once; Redisson leaves none for a semaphore).
async fn only_key(env: &Env, name: &str) -> Result<()> {
    let keys = env.raw.keys_like(&format!("*{name}*")).await?;
    let latch = format!("redisson_unlock_latch:{{{name}}}:");
    let (latches, others): (Vec<&String>, Vec<&String>) = keys.iter().partition(|k| k.starts_with(&latch));
    ensure!(
        others == [name],
        "keys naming the semaphore: {keys:?}, expected only {name} (and request latches with a TTL)"
    );
    for l in latches {
        let ttl = env.raw.pttl(l).await?;
        ensure!(ttl != -1, "request latch {l} has no TTL");
    }
    Ok(())
}

/// Every payload published on `redisson_sc:{N}` during the scenario, in order; fails on a
/// message on any other channel of N. Publishes the end marker and waits for it.
pub async fn sem_messages(env: &Env, watch: &Watch, name: &str) -> Result<Vec<String>> {
    let end = format!("compat-end:{{{name}}}");
    env.raw
        .q::<i64>(redis::cmd("PUBLISH").arg(&end).arg("end"))
        .await?;
    until(
        Duration::from_secs(5),
        &format!("the marker on {end}"),
        || async { Ok(watch.seen().iter().any(|(_, c, _)| *c == end)) },
    )
    .await
    .map_err(|e| format!("{e}; seen {:?}", watch.seen()))?;
    let ch = sem_channel(name);
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

/// `redisson_sc:{N}` carried exactly `want`.
pub async fn expect_sem_messages(env: &Env, watch: &Watch, name: &str, want: &[&str]) -> Result<()> {
    let got = sem_messages(env, watch, name).await?;
    ensure!(
        got == want,
        "{} carried {got:?}, expected {want:?}",
        sem_channel(name)
    );
    Ok(())
}

/// Waits until `n` clients listen on `redisson_sc:{N}`.
pub async fn wait_sem_listening(env: &Env, name: &str, n: i64) -> Result<()> {
    let ch = sem_channel(name);
    until(
        Duration::from_secs(10),
        &format!("{n} client(s) subscribed to {ch}"),
        || async { Ok(env.raw.numsub(&ch).await? >= n) },
    )
    .await
}

async fn s48(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(48, dir);
    let (pa, pb) = env.pair(48, dir, Speed::QuietPoll);
    let (a, b) = (Sem::of(&pa, &name)?, Sem::of(&pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    agree(env, &name, &a, &b, None, "before anything").await?;
    ensure!(
        a.try_set_permits(3, None).await?,
        "A's trySetPermits(3) on a new semaphore returned false"
    );
    let ttl = env.raw.pttl(&name).await?;
    ensure!(
        ttl == -1,
        "the semaphore key has PTTL {ttl}, expected -1 (no TTL)"
    );
    only_key(env, &name).await?;
    ensure!(
        !b.try_set_permits(5, None).await?,
        "B's trySetPermits(5) returned true on an existing semaphore"
    );
    agree(env, &name, &a, &b, Some(3), "after A's trySetPermits(3)").await?;
    ensure!(a.try_acquire(2).await?, "A's tryAcquire(2) of 3 was refused");
    agree(env, &name, &a, &b, Some(1), "after A took 2").await?;
    ensure!(
        !b.try_acquire(2).await?,
        "B's tryAcquire(2) with 1 available returned true"
    );
    agree(env, &name, &a, &b, Some(1), "after B's refused tryAcquire(2)").await?;
    ensure!(b.try_acquire(1).await?, "B's tryAcquire(1) of 1 was refused");
    agree(env, &name, &a, &b, Some(0), "after B took 1").await?;
    ensure!(
        !a.try_acquire(1).await?,
        "A's tryAcquire(1) with none available returned true"
    );
    b.release(2).await?;
    agree(env, &name, &a, &b, Some(2), "after B gave back A's 2").await?;
    a.release(1).await?;
    agree(env, &name, &a, &b, Some(3), "after A gave back B's 1").await?;
    a.add_permits(2).await?;
    agree(env, &name, &a, &b, Some(5), "after A's addPermits(2)").await?;
    b.add_permits(-1).await?;
    agree(env, &name, &a, &b, Some(4), "after B's addPermits(-1)").await?;
    let drained = b.drain().await?;
    ensure!(drained == 4, "B's drainPermits returned {drained}, expected 4");
    agree(env, &name, &a, &b, Some(0), "after B's drainPermits").await?;
    let drained = a.drain().await?;
    ensure!(
        drained == 0,
        "A's drainPermits of an empty semaphore returned {drained}"
    );
    a.release(1).await?;
    agree(env, &name, &a, &b, Some(1), "after A's release(1)").await?;
    ensure!(b.delete().await?, "B's delete() returned false");
    agree(env, &name, &a, &b, None, "after B's delete").await?;
    ensure!(
        !a.delete().await?,
        "A's delete() of a deleted semaphore returned true"
    );
    expect_sem_messages(env, &watch, &name, &["3", "2", "3", "5", "4", "1"]).await?;
    Ok(Outcome {
        latency_ms: None,
        note: "\"3\" at N alone (no TTL); permits taken by one language given back by the other; refused tryAcquire changes nothing; add ±, drain 4 then 0, delete; both sides' availablePermits = GET after each of 14 steps; messages 3, 2, 3, 5, 4, 1".into(),
    })
}

async fn s49(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(49, dir);
    let (pa, pb) = env.pair(49, dir, Speed::QuietPoll);
    let (a, b) = (Sem::of(&pa, &name)?, Sem::of(&pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    let pttl = |what: &'static str| {
        let name = name.clone();
        async move {
            let t = env.raw.pttl(&name).await?;
            ensure!(
                t > 0 && t <= TTL_MS as i64,
                "{what}: PTTL {name} = {t}, expected 0 < PTTL ≤ {TTL_MS}"
            );
            Ok::<i64, String>(t)
        }
    };
    ensure!(
        a.try_set_permits(2, Some(TTL_MS)).await?,
        "A's trySetPermits(2, {TTL_MS} ms) returned false"
    );
    let set_at = Instant::now();
    let first = pttl("after A's trySetPermits(2, ttl)").await?;
    ensure!(
        !b.try_set_permits(2, Some(TTL_MS)).await?,
        "B's trySetPermits(2, ttl) returned true on an existing semaphore"
    );
    ensure!(
        !b.try_set_permits(5, None).await?,
        "B's trySetPermits(5) returned true on an existing semaphore"
    );
    agree(env, &name, &a, &b, Some(2), "after the refused sets").await?;
    ensure!(b.try_acquire(1).await?, "B's tryAcquire(1) was refused");
    pttl("after B's tryAcquire(1)").await?;
    b.release(1).await?;
    let kept = pttl("after B's release(1)").await?;
    agree(env, &name, &a, &b, Some(2), "after B's acquire and release").await?;
    until(
        Duration::from_millis(TTL_MS + 2000),
        "the semaphore key expired",
        || async { Ok(env.raw.exists(&[&name]).await? == 0) },
    )
    .await?;
    let expired_after = set_at.elapsed().as_millis();
    agree(env, &name, &a, &b, None, "after the TTL ran out").await?;
    ensure!(
        b.try_set_permits(1, Some(TTL_MS)).await?,
        "B's trySetPermits(1, ttl) after the expiry returned false"
    );
    pttl("after B's trySetPermits(1, ttl)").await?;
    a.add_permits(1).await?;
    let t = env.raw.pttl(&name).await?;
    ensure!(
        t == -1,
        "after A's addPermits(1) PTTL {name} = {t}, expected -1 (Redisson's addPermits drops the TTL)"
    );
    agree(env, &name, &a, &b, Some(2), "after A's addPermits(1)").await?;
    ensure!(
        b.try_set_permits(1, Some(TTL_MS)).await.map(|set| !set)?,
        "B's trySetPermits(1, ttl) returned true on an existing semaphore"
    );
    let drained = a.drain().await?;
    ensure!(drained == 2, "A's drainPermits returned {drained}, expected 2");
    let t = env.raw.pttl(&name).await?;
    ensure!(t == -1, "after A's drainPermits PTTL {name} = {t}, expected -1");
    ensure!(b.delete().await?, "B's delete() returned false");
    expect_sem_messages(env, &watch, &name, &["2", "2", "1", "2"]).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "PTTL {first} ms after the set, {kept} ms after B's acquire + release (kept); expired {expired_after} ms after the set; addPermits and drainPermits leave PTTL −1; messages 2, 2, 1, 2"
        ),
    })
}

async fn s50(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(50, dir);
    let (pa, pb) = env.pair(50, dir, Speed::QuietPoll);
    let (a, b) = (Sem::of(&pa, &name)?, Sem::of(&pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    for s in [&a, &b] {
        ensure!(
            !s.release_if_exists(1).await?,
            "{}'s releaseIfExists(1) on a missing semaphore returned true",
            s.lang()
        );
        agree(
            env,
            &name,
            &a,
            &b,
            None,
            &format!("after {}'s releaseIfExists on a missing semaphore", s.lang()),
        )
        .await?;
    }
    ensure!(
        a.try_set_permits(1, None).await?,
        "A's trySetPermits(1) returned false"
    );
    ensure!(
        b.release_if_exists(2).await?,
        "B's releaseIfExists(2) returned false on an existing semaphore"
    );
    agree(env, &name, &a, &b, Some(3), "after B's releaseIfExists(2)").await?;
    ensure!(
        a.release_if_exists(1).await?,
        "A's releaseIfExists(1) returned false on an existing semaphore"
    );
    agree(env, &name, &a, &b, Some(4), "after A's releaseIfExists(1)").await?;
    ensure!(b.delete().await?, "B's delete() returned false");
    expect_sem_messages(env, &watch, &name, &["1", "3", "4"]).await?;
    Ok(Outcome {
        latency_ms: None,
        note: "false and no key on a missing semaphore (both languages), true and the new total published on an existing one; messages 1, 3, 4".into(),
    })
}

async fn s51(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(51, dir);
    let (pa, pb) = env.pair(51, dir, Speed::QuietPoll);
    let (a, b) = (Sem::of(&pa, &name)?, Sem::of(&pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    ensure!(
        a.try_set_permits(1, None).await?,
        "A's trySetPermits(1) returned false"
    );
    ensure!(a.try_acquire(1).await?, "A's tryAcquire(1) was refused");
    let mut w = b.start_acquire(2).await?;
    wait_sem_listening(env, &name, 1).await?;
    ensure!(!w.is_done(), "B's acquire(2) returned with no permit available");
    a.release(1).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    ensure!(
        !w.is_done(),
        "B's acquire(2) returned with only 1 permit available"
    );
    let v = env.raw.get(&name).await?;
    ensure!(
        v.as_deref() == Some("1"),
        "with B waiting for 2, GET {name} = {v:?}, expected \"1\""
    );
    let t_rel = a.release(1).await?;
    let t_ret = w
        .finish(Duration::from_millis(SEM_WAKE_BOUND_MS as u64) + CMD)
        .await?;
    let lat = t_ret - t_rel;
    ensure!(
        lat <= SEM_WAKE_BOUND_MS,
        "B's acquire(2) returned {lat:.1} ms after A's second release (bound {SEM_WAKE_BOUND_MS} ms: not woken by the message)"
    );
    agree(env, &name, &a, &b, Some(0), "after B's acquire(2)").await?;
    b.release(2).await?;
    agree(env, &name, &a, &b, Some(2), "after B gave back 2").await?;
    ensure!(a.delete().await?, "A's delete() returned false");
    expect_sem_messages(env, &watch, &name, &["1", "1", "2", "2"]).await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "{} acquire(2) stayed waiting after message 1, returned {lat:.1} ms after {}'s release that made 2 (message 2); messages 1, 1, 2, 2",
            b.lang(),
            a.lang()
        ),
    })
}

/// What one side of scenario 52 did: rounds, the most inside any of its INCRs saw, and how many
/// of its INCRs saw more than the permits.
#[derive(Default)]
struct StressSide {
    rounds: u64,
    max_inside: i64,
    over: u64,
}

/// The Rust side of scenario 52: `tasks` tasks on the quiet client, each looping
/// `try_acquire_for(1, 5 s)` (a refusal is an error: nobody holds a permit that long), INCR,
/// hold, DECR, `release(1)` for [`STRESS_MS`].
fn rust_stress(
    env: &Env,
    name: &str,
    key: &str,
    tasks: usize,
) -> Result<Vec<tokio::task::JoinHandle<Result<StressSide>>>> {
    let mut out = Vec::new();
    for _ in 0..tasks {
        let s = env
            .rust_quiet
            .semaphore(name)
            .map_err(|e| format!("client.semaphore({name}): {e}"))?;
        let (raw, key) = (env.raw.clone(), key.to_owned());
        out.push(tokio::spawn(async move {
            let end = Instant::now() + Duration::from_millis(STRESS_MS);
            let mut side = StressSide::default();
            while Instant::now() < end {
                let got = s
                    .try_acquire_for(1, Duration::from_secs(5))
                    .await
                    .map(|g| g.map(|g| g.forget()).is_some())
                    .map_err(|e| format!("rust try_acquire_for: {e}"))?;
                ensure!(got, "a Rust task waited 5 s for a permit (never woken)");
                let n: i64 = raw.q(redis::cmd("INCR").arg(&key)).await?;
                side.max_inside = side.max_inside.max(n);
                if n > STRESS_PERMITS {
                    side.over += 1;
                }
                let hold = rand::random_range(0..=STRESS_MAX_HOLD_MS);
                if hold > 0 {
                    tokio::time::sleep(Duration::from_millis(hold)).await;
                }
                raw.q::<i64>(redis::cmd("DECR").arg(&key)).await?;
                s.release(1).await.map_err(|e| format!("rust release: {e}"))?;
                side.rounds += 1;
            }
            Ok(side)
        }));
    }
    Ok(out)
}

async fn s52(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(52, dir);
    let key = format!("{name}:inside");
    let java_first = dir == Dir::JavaHolds;
    let party = |role: &str, java: bool| env.party(52, dir, role, java, Speed::QuietPoll);
    let (pa, pb) = (party("a", java_first), party("b", !java_first));
    let (a, b) = (Sem::of(&pa, &name)?, Sem::of(&pb, &name)?);
    ensure!(
        a.try_set_permits(STRESS_PERMITS, None).await?,
        "A's trySetPermits({STRESS_PERMITS}) returned false"
    );
    // the raw sampler: the count must stay within 0..=permits
    let stop = Arc::new(AtomicBool::new(false));
    let (lo, hi) = (
        Arc::new(AtomicI64::new(i64::MAX)),
        Arc::new(AtomicI64::new(i64::MIN)),
    );
    let sampler = {
        let (stop, lo, hi, raw, name) = (
            stop.clone(),
            lo.clone(),
            hi.clone(),
            env.raw.clone(),
            name.clone(),
        );
        tokio::spawn(async move {
            let mut samples = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let v: Option<String> = raw.get(&name).await?;
                let n = v
                    .as_deref()
                    .map(|v| v.parse::<i64>().map_err(|e| format!("count `{v}`: {e}")))
                    .transpose()?
                    .unwrap_or(i64::MIN);
                lo.fetch_min(n, Ordering::SeqCst);
                hi.fetch_max(n, Ordering::SeqCst);
                samples += 1;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            Ok::<u64, String>(samples)
        })
    };
    let start_java = || async {
        let mut java = Vec::new();
        for i in 0..STRESS_PARTIES {
            let p = party(&format!("j{i}"), true);
            let Lang::Java { h, worker } = &p.lang else {
                return Err("a Java party without a worker".to_string());
            };
            java.push(
                h.send(
                    worker,
                    "semaphoreStress",
                    &[
                        name.as_str(),
                        key.as_str(),
                        STRESS_MS.to_string().as_str(),
                        STRESS_MAX_HOLD_MS.to_string().as_str(),
                        STRESS_PERMITS.to_string().as_str(),
                    ],
                )
                .await?,
            );
        }
        Ok(java)
    };
    let moved = || {
        until(
            Duration::from_secs(10),
            "the first language took a permit",
            || async {
                let v = env.raw.get(&name).await?;
                Ok(v.as_deref() != Some(STRESS_PERMITS.to_string().as_str()))
            },
        )
    };
    let (java, rust) = if java_first {
        let java = start_java().await?;
        moved().await?;
        (java, rust_stress(env, &name, &key, STRESS_PARTIES)?)
    } else {
        let rust = rust_stress(env, &name, &key, STRESS_PARTIES)?;
        moved().await?;
        (start_java().await?, rust)
    };
    let limit = Duration::from_millis(STRESS_MS) + Duration::from_secs(20);
    let mut rust_side = StressSide::default();
    let mut failure = None;
    for t in rust {
        match tokio::time::timeout(limit, t).await {
            Ok(Ok(Ok(s))) => {
                rust_side.rounds += s.rounds;
                rust_side.max_inside = rust_side.max_inside.max(s.max_inside);
                rust_side.over += s.over;
            }
            Ok(Ok(Err(e))) => failure = failure.or(Some(e)),
            Ok(Err(e)) => failure = failure.or(Some(format!("rust stress task: {e}"))),
            Err(_) => failure = failure.or(Some("a rust stress task did not finish".to_string())),
        }
    }
    let mut java_side = StressSide::default();
    for p in java {
        let v = p.wait(limit).await?.into_ok()?;
        let field = |k: &str| {
            v[k].as_i64()
                .ok_or_else(|| format!("semaphoreStress result without {k}: {v}"))
        };
        java_side.rounds += field("rounds")? as u64;
        java_side.max_inside = java_side.max_inside.max(field("maxInside")?);
        java_side.over += field("over")? as u64;
    }
    stop.store(true, Ordering::SeqCst);
    let samples = sampler.await.map_err(|e| format!("sampler task: {e}"))??;
    if let Some(e) = failure {
        return Err(e);
    }
    let (lo, hi) = (lo.load(Ordering::SeqCst), hi.load(Ordering::SeqCst));
    ensure!(
        java_side.over == 0 && rust_side.over == 0,
        "more than {STRESS_PERMITS} inside: {} Java and {} Rust INCRs saw it (max {} / {})",
        java_side.over,
        rust_side.over,
        java_side.max_inside,
        rust_side.max_inside
    );
    ensure!(
        (0..=STRESS_PERMITS).contains(&lo) && (0..=STRESS_PERMITS).contains(&hi),
        "the raw count left 0..={STRESS_PERMITS}: sampled {lo}..={hi} ({} = missing key)",
        i64::MIN
    );
    ensure!(
        java_side.rounds >= STRESS_MIN_ROUNDS && rust_side.rounds >= STRESS_MIN_ROUNDS,
        "too few rounds: Java {}, Rust {} (at least {STRESS_MIN_ROUNDS} each)",
        java_side.rounds,
        rust_side.rounds
    );
    agree(env, &name, &a, &b, Some(STRESS_PERMITS), "after the stress").await?;
    let inside = env.raw.get(&key).await?;
    ensure!(
        inside.as_deref() == Some("0"),
        "the inside counter {key} = {inside:?} afterwards, expected \"0\""
    );
    ensure!(b.delete().await?, "B's delete() returned false");
    env.raw.del(&[&key]).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "{} first; rounds Java {} + Rust {} ({} parties each, {STRESS_MS} ms); most inside: Java {} / Rust {} (≤ {STRESS_PERMITS}); {samples} raw samples within {lo}..={hi}; count {STRESS_PERMITS} and counter 0 afterwards",
            if java_first { "Java" } else { "Rust" },
            java_side.rounds,
            rust_side.rounds,
            STRESS_PARTIES,
            java_side.max_inside,
            rust_side.max_inside
        ),
    })
}
