//! RLock scenarios 1–9 (`getLock` / `Client::lock`), both directions; 9 checks what every
//! scenario (of every kind) left behind and runs last.

use std::process::Stdio;
use std::time::{Duration, Instant};

use redisson_lock::Error as LockError;
use redisson_lock_compat_tests::{find_overlap, now_micros, now_ms, Harness, Interval, Result};
use tokio::io::AsyncBufReadExt;

use crate::env::{Env, Speed};
use crate::kinds::{scenario, Dir, Kind, Outcome, Scenario, BOTH_WAYS, TOGETHER};
use crate::party::LOCK;
use crate::rwlock::rw_channel;
use crate::semaphore::sem_channel;
use crate::support::{
    channel_of, fair_deadlines, fair_queue, one_field, short, token_key, until, CMD, FAST_WATCHDOG_MS,
    WAKE_BOUND_MS,
};

/// Lease of scenario 4.
const LEASE_MS: u64 = 1500;
/// Scenario 8: tasks per language and rounds per task.
const COUNTER_TASKS: usize = 4;
const COUNTER_ROUNDS: usize = 250;

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
    sc(1, "A holds: B's try_lock fails, B's hold count 0, B sees is_locked"),
    sc(2, "A releases: B blocked in lock() acquires within 200 ms (pub/sub; TTL 30 s)"),
    sc(3, "Reentrancy: A locks 3x, B reads count via HGET; 2 unlocks keep it; 3rd lets B in"),
    sc(4, "Lease without watchdog expires on time; B gets in; A's late unlock is 'not held'"),
    sc(5, "Watchdog 1 s: A holds 3 s, B never gets in; after A's unlock B gets in at once"),
    sc(6, "force_unlock by B: waiter woken; A learns its hold is gone"),
    sc(7, "A's process SIGKILLed while holding: B acquires within watchdog + 1 s"),
    Scenario {
        limit_s: 300,
        ..sc(8, "Mutual exclusion: 4 Rust tasks + 4 Java threads x 250 rounds, counter = 2000, no overlap")
    },
    Scenario {
        dirs: TOGETHER,
        last: true,
        ..sc(9, "Afterwards (runs last, after 56): no channel subscribed, no lock, latch or semaphore keys left (incl. rwlock_timeout keys, redisson_rwlock channels, the fair locks' redisson_lock_queue / redisson_lock_timeout keys and per-waiter channels, the latch and semaphore channels, the permit-expirable semaphores' {N}:timeout lease sets); only the fenced token counters (no TTL, never deleted) stay")
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        1 => s1(env, dir).await,
        2 => s2(env, dir).await,
        3 => s3(env, dir).await,
        4 => s4(env, dir).await,
        5 => s5(env, dir).await,
        6 => s6(env, dir).await,
        7 => s7(env, dir).await,
        8 => s8(env, dir).await,
        9 => s9(env).await,
        _ => Err(format!("no RLock scenario {no}")),
    }
}

async fn s1(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(1, dir);
    let (mut a, mut b) = env.pair(1, dir, Speed::Normal);
    let fa = a.field(LOCK, &name).await?;
    a.lock(LOCK, &name, None).await?;
    ensure!(
        env.raw.hgetall(&name).await? == one_field(&fa, "1"),
        "after A's lock the hash is not {{{fa}: 1}}"
    );
    let got = b.try_lock(LOCK, &name).await?;
    ensure!(!got, "B ({}) acquired with try_lock while A holds", b.desc());
    let hc = b.hold_count(LOCK, &name).await?;
    ensure!(hc == 0, "B's hold count is {hc}, expected 0");
    ensure!(
        b.is_locked(LOCK, &name).await?,
        "B's is_locked is false while A holds"
    );
    ensure!(
        !b.is_held(LOCK, &name).await?,
        "B's is_held is true while A holds"
    );
    let ha = a.hold_count(LOCK, &name).await?;
    ensure!(ha == 1, "A's own hold count is {ha}, expected 1");
    a.unlock_ok(LOCK, &name).await?;
    ensure!(!b.is_locked(LOCK, &name).await?, "still locked after A's unlock");
    Ok(Outcome {
        latency_ms: None,
        note: "try_lock false, hold count 0, is_locked true".into(),
    })
}

async fn s2(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(2, dir);
    let (mut a, mut b) = env.pair(2, dir, Speed::Normal);
    a.lock(LOCK, &name, None).await?;
    let mut w = b.start_lock(LOCK, &name).await?;
    env.wait_subscribers(&name, 1).await?;
    ensure!(!w.is_done(), "B acquired while A holds");
    let ttl = env.raw.pttl(&name).await?;
    ensure!(
        ttl > 20_000,
        "A's lock TTL is {ttl} ms, expected about 30 s (watchdog mode)"
    );
    let (u_start, t_unlock) = a.unlock_ok(LOCK, &name).await?;
    let (t_acq, _) = b.finish(LOCK, &name, w, Duration::from_secs(10)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= WAKE_BOUND_MS,
        "B acquired {lat:.1} ms after A's unlock (bound {WAKE_BOUND_MS} ms; the holder's TTL was {ttl} ms)"
    );
    b.unlock_ok(LOCK, &name).await?;
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
    let fa = a.field(LOCK, &name).await?;
    for _ in 0..3 {
        a.lock(LOCK, &name, None).await?;
    }
    let seen = env.raw.hget(&name, &fa).await?;
    ensure!(
        seen.as_deref() == Some("3"),
        "HGET {name} {fa} = {seen:?} after 3 locks, expected 3"
    );
    let ha = a.hold_count(LOCK, &name).await?;
    ensure!(ha == 3, "A's hold_count {ha}, expected 3");
    let hb = b.hold_count(LOCK, &name).await?;
    ensure!(hb == 0, "B's hold_count {hb}, expected 0");
    let mut w = b.start_lock(LOCK, &name).await?;
    env.wait_subscribers(&name, 1).await?;
    for left in ["2", "1"] {
        a.unlock_ok(LOCK, &name).await?;
        let h = env.raw.hgetall(&name).await?;
        ensure!(
            h == one_field(&fa, left),
            "after a partial unlock the hash is {h:?}, expected {{{fa}: {left}}}"
        );
        ensure!(!w.is_done(), "B acquired after a partial unlock (count {left})");
    }
    ensure!(
        a.is_held(LOCK, &name).await?,
        "A does not hold after 2 of 3 unlocks"
    );
    let (u_start, t_unlock) = a.unlock_ok(LOCK, &name).await?;
    let (t_acq, _) = b.finish(LOCK, &name, w, Duration::from_secs(10)).await?;
    let fb = b.field(LOCK, &name).await?;
    let h = env.raw.hgetall(&name).await?;
    ensure!(
        h == one_field(&fb, "1"),
        "after the 3rd unlock B should hold alone, hash is {h:?}"
    );
    b.unlock_ok(LOCK, &name).await?;
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
    let fa = a.field(LOCK, &name).await?;
    let t_a = a.lock(LOCK, &name, Some(LEASE_MS)).await?;
    let ttl = env.raw.pttl(&name).await?;
    ensure!(
        ttl > 0 && ttl <= LEASE_MS as i64,
        "PTTL after lock with lease {LEASE_MS} ms is {ttl}"
    );
    ensure!(
        env.raw.hgetall(&name).await? == one_field(&fa, "1"),
        "A's hold missing"
    );
    let (got, t_b) = b.try_lock_for(LOCK, &name, LEASE_MS + 5000).await?;
    ensure!(got, "B did not get in within lease + 5 s");
    let held = t_b - t_a;
    ensure!(
        held >= LEASE_MS as f64 - 100.0 && held <= LEASE_MS as f64 + 1000.0,
        "B got in {held:.0} ms after A's acquisition; the lease is {LEASE_MS} ms (expected lease - 100 ms ..= lease + 1 s)"
    );
    let late = a.unlock(LOCK, &name).await?;
    let msg = match late {
        Ok(_) => return Err("A's late unlock succeeded; expected a 'not held' error".into()),
        Err(msg) => msg,
    };
    let fb = b.field(LOCK, &name).await?;
    let h = env.raw.hgetall(&name).await?;
    ensure!(
        h == one_field(&fb, "1"),
        "A's late unlock changed B's hold: hash {h:?}"
    );
    b.unlock_ok(LOCK, &name).await?;
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
    let fa = a.field(LOCK, &name).await?;
    let t_a = a.lock(LOCK, &name, None).await?;
    let mut w = b.start_lock(LOCK, &name).await?;
    env.wait_subscribers(&name, 1).await?;
    let hold_until =
        Instant::now() + Duration::from_millis(3000u64.saturating_sub((now_ms() - t_a).max(0.0) as u64));
    let (mut min_ttl, mut checks) = (i64::MAX, 0);
    // A holds for 3 s (3 TTLs of 1 s are renewed meanwhile); B must stay out the whole time.
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
    let (u_start, t_unlock) = a.unlock_ok(LOCK, &name).await?;
    let (t_acq, _) = b.finish(LOCK, &name, w, Duration::from_secs(5)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= WAKE_BOUND_MS,
        "B got in {lat:.1} ms after A's unlock (bound {WAKE_BOUND_MS} ms)"
    );
    b.unlock_ok(LOCK, &name).await?;
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
    let fa = a.field(LOCK, &name).await?;
    a.lock(LOCK, &name, None).await?;
    // Rust: keep the guard to watch lost()
    let guard = a.take_guard(LOCK, &name);
    let lost = guard.as_ref().map(|g| g.lost());
    let mut waiting = w.start_lock(LOCK, &name).await?;
    env.wait_subscribers(&name, 1).await?;
    ensure!(
        env.raw.hgetall(&name).await? == one_field(&fa, "1"),
        "A's hold missing before the force unlock"
    );
    ensure!(!waiting.is_done(), "the waiter got in while A held");
    let (deleted, f_start, t_force) = b.force_unlock(LOCK, &name).await?;
    ensure!(deleted, "force_unlock returned false while A held");
    let (t_acq, _) = w.finish(LOCK, &name, waiting, Duration::from_secs(5)).await?;
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
            let held = a.is_held(LOCK, &name).await?;
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
            let held = a.is_held(LOCK, &name).await?;
            ensure!(!held, "Java A's isHeldByThread is true after the force unlock");
            let msg = match a.unlock(LOCK, &name).await? {
                Ok(_) => return Err("Java A's unlock after the force unlock succeeded".into()),
                Err(m) => m,
            };
            format!("java isHeldByThread false; unlock: {}", short(&msg, 40))
        }
    };
    w.unlock_ok(LOCK, &name).await?;
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
            let waiting = b.start_lock(LOCK, &name).await?;
            env.wait_subscribers(&name, 1).await?;
            let t_kill = now_ms();
            h.kill().await?;
            let (t_acq, _) = b.finish(LOCK, &name, waiting, Duration::from_secs(10)).await?;
            let after = t_acq - t_kill;
            ensure!(
                after <= bound_ms,
                "Rust got in {after:.0} ms after the JVM was killed (bound {bound_ms} ms)"
            );
            b.unlock_ok(LOCK, &name).await?;
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
            let waiting = b.start_lock(LOCK, &name).await?;
            env.wait_subscribers(&name, 1).await?;
            let t_kill = now_ms();
            holder
                .start_kill()
                .map_err(|e| format!("kill -9 rust-holder: {e}"))?;
            holder
                .wait()
                .await
                .map_err(|e| format!("reap rust-holder: {e}"))?;
            let (t_acq, _) = b.finish(LOCK, &name, waiting, Duration::from_secs(10)).await?;
            let after = t_acq - t_kill;
            ensure!(
                after <= bound_ms,
                "Java got in {after:.0} ms after rust-holder was killed (bound {bound_ms} ms)"
            );
            b.unlock_ok(LOCK, &name).await?;
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

/// Scenario 9: runs after every other scenario of every kind and checks all their lock names.
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
        for ch in [channel_of(n), rw_channel(n), sem_channel(n)] {
            let subs = env.raw.numsub(&ch).await?;
            ensure!(subs == 0, "PUBSUB NUMSUB {ch} = {subs}");
        }
        let timeouts = env.raw.keys_like(&format!("{{{n}}}:*:rwlock_timeout:*")).await?;
        ensure!(timeouts.is_empty(), "read-hold timeout keys left: {timeouts:?}");
        // a fair lock's waiter channels (`redisson_lock__channel:{N}:<field>`)
        let waiters: Vec<String> = env
            .raw
            .q(redis::cmd("PUBSUB")
                .arg("CHANNELS")
                .arg(format!("{}:*", channel_of(n))))
            .await?;
        ensure!(
            waiters.is_empty(),
            "fair waiter channels still subscribed: {waiters:?}"
        );
    }
    // every fair lock name: no queue, no deadlines (nobody waits any more)
    let mut fair_names = 0;
    for n in &names {
        let (q, d) = (fair_queue(n), fair_deadlines(n));
        let left = env.raw.exists(&[&q, &d]).await?;
        if left != 0 {
            return Err(format!(
                "fair lock {n}: {q} = {:?}, {d} = {:?} left behind",
                env.raw.lrange(&q).await?,
                env.raw.zrange_scores(&d).await?
            ));
        }
        let no = n
            .rsplit(':')
            .nth(1)
            .and_then(|s| s.strip_prefix('s')?.parse().ok());
        if let Some((Kind::Fair | Kind::NonReentrantFair, _)) = no.and_then(scenario) {
            fair_names += 1;
        }
    }
    for (label, c) in [
        ("rust", &env.rust),
        ("rust-fast", &env.rust_fast),
        ("rust-quiet", &env.rust_quiet),
    ] {
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
    // A fenced lock's token counter stays by design (Redisson never deletes it): allowed for the
    // names the scenarios used, as a plain decimal string without TTL.
    let token_keys: Vec<String> = names.iter().map(|n| token_key(n)).collect();
    let (tokens, others): (Vec<&String>, Vec<&String>) =
        others.into_iter().partition(|k| token_keys.contains(k));
    // Redisson's local cached map (scenario 63 reads its entry names) runs a task once per map
    // and marks it with a latch that expires: Redisson's own key, not a lock's; it must expire
    let (task_latches, others): (Vec<&String>, Vec<&String>) = others
        .into_iter()
        .partition(|k| k.starts_with("redisson__execute_task_once_latch:"));
    ensure!(others.is_empty(), "keys left behind: {others:?}");
    for k in &task_latches {
        let ttl = env.raw.pttl(k).await?;
        ensure!(ttl != -1, "Redisson's task latch {k} has no TTL");
    }
    for k in &tokens {
        let v = env.raw.get(k).await?.unwrap_or_default();
        ensure!(
            !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()),
            "token counter {k} = `{v}`, expected a decimal"
        );
        let ttl = env.raw.pttl(k).await?;
        ensure!(
            ttl == -1,
            "token counter {k} has PTTL {ttl}, expected -1 (no TTL)"
        );
    }
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
            "{} lock names checked ({fair_names} of fair locks: no queue, no deadlines); 0 channels; {} fenced token counter(s) kept (no TTL); {} unlock latch key(s) with TTL still expiring",
            names.len(),
            tokens.len(),
            latches.len()
        ),
    })
}
