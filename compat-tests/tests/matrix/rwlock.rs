//! Read-write lock scenarios 10–15 (`getReadWriteLock` / `Client::read_write_lock`), both
//! directions, and the read-write assertions (reader hash, timeout keys).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use redisson_lock_compat_tests::{find_exclusive_overlap, now_micros, now_ms, Interval, Result};

use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS};
use crate::party::{Lang, Party, READ, WRITE};
use crate::support::{until, Raw, CMD, FAST_WATCHDOG_MS};

/// Wake-up bound of the read-write scenarios 12 and 14 (from the unlock reply to the acquisition).
pub const RW_WAKE_BOUND_MS: f64 = 1000.0;
/// Scenario 15: tasks per language, rounds per task, and the share of writes.
const RW_COUNTER_TASKS: usize = 3;
const RW_COUNTER_ROUNDS: usize = 150;
const RW_WRITE_PERCENT: u64 = 30;

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
    sc(10, "RW: A's 2 readers hold: B's write try_lock fails, B's read try_lock succeeds; hash has both languages' reader fields and exact timeout keys (PTTL > 0)"),
    sc(11, "RW: A's read unlock while B's readers (counts 2, 1) hold keeps the lock: mode=read, B's fields and timeout keys intact; B's unlocks delete it"),
    sc(12, "RW: A writes, 3 B readers block in lock(); A's write unlock (message 1) wakes all within 1 s (latency of the last)"),
    sc(13, "RW: downgrade by A (write, read, write unlock): B sees read locked, not write locked; B's read try_lock ok, write try_lock fails"),
    sc(14, "RW: read watchdog 1 s on both sides: A and B read 3 s, a writer (B's language) never gets in; after both unlock it gets in at once"),
    Scenario {
        limit_s: 300,
        ..sc(15, "RW: mutual exclusion: 3 Java + 3 Rust rwcounter tasks x 150 rounds, 30% writes; counter = writes, no write overlaps any section")
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        10 => s10(env, dir).await,
        11 => s11(env, dir).await,
        12 => s12(env, dir).await,
        13 => s13(env, dir).await,
        14 => s14(env, dir).await,
        15 => s15(env, dir).await,
        _ => Err(format!("no read-write lock scenario {no}")),
    }
}

/// The rw lock's channel (`redisson_rwlock:{N}`).
pub fn rw_channel(name: &str) -> String {
    format!("redisson_rwlock:{{{name}}}")
}

/// The timeout key of a reader's `k`-th read hold (`{N}:<field>:rwlock_timeout:k`; N has no `{`).
pub fn timeout_key(name: &str, field: &str, k: u32) -> String {
    format!("{{{name}}}:{field}:rwlock_timeout:{k}")
}

impl Env {
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

/// Write lock, then read lock, then write unlock by the same thread/owner (Rust:
/// `WriteGuard::downgrade`). Afterwards the party holds one read lock.
async fn lock_and_downgrade(p: &mut Party<'_>, name: &str) -> Result<()> {
    p.lock(WRITE, name, None).await?;
    let who = p.desc();
    if let Lang::Java { h, worker } = &p.lang {
        h.call(worker, "readLock", &[name], CMD)
            .await?
            .into_ok()
            .map_err(|e| format!("{who}: readLock while holding the write lock: {e}"))?;
        h.call(worker, "writeUnlock", &[name], CMD)
            .await?
            .into_ok()
            .map_err(|e| format!("{who}: writeUnlock after readLock: {e}"))?;
        return Ok(());
    }
    let w = p
        .take_guard(WRITE, name)
        .ok_or("no write guard to downgrade")?
        .into_any()
        .downcast::<redisson_lock::WriteGuard>()
        .map_err(|_| "a read guard filed as write")?;
    let r = w
        .downgrade()
        .await
        .map_err(|e| format!("{who}: WriteGuard::downgrade: {e}"))?;
    p.push_guard(name, READ, Box::new(r));
    Ok(())
}

async fn s10(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(10, dir);
    let java_holds = dir == Dir::JavaHolds;
    let mut a1 = env.party(10, dir, "a", java_holds, Speed::Normal);
    let mut a2 = env.party(10, dir, "a2", java_holds, Speed::Normal);
    let mut b = env.party(10, dir, "b", !java_holds, Speed::Normal);
    let (f1, f2, fb) = (
        a1.field(READ, &name).await?,
        a2.field(READ, &name).await?,
        b.field(READ, &name).await?,
    );
    a1.lock(READ, &name, None).await?;
    a2.lock(READ, &name, None).await?;
    env.expect_readers(&name, &[(&f1, 1), (&f2, 1)], 30_000).await?;
    ensure!(
        !b.try_lock(WRITE, &name).await?,
        "B's write try_lock succeeded while A's two readers hold"
    );
    ensure!(
        b.try_lock(READ, &name).await?,
        "B's read try_lock failed while only A's readers hold (readers must share across languages)"
    );
    let min = env
        .expect_readers(&name, &[(&f1, 1), (&f2, 1), (&fb, 1)], 30_000)
        .await?;
    ensure!(b.is_locked(READ, &name).await?, "B's read is_locked is false");
    ensure!(!b.is_locked(WRITE, &name).await?, "B's write is_locked is true");
    b.unlock_ok(READ, &name).await?;
    a1.unlock_ok(READ, &name).await?;
    a2.unlock_ok(READ, &name).await?;
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
    let mut a = env.party(11, dir, "a", java_holds, Speed::Normal);
    let mut b1 = env.party(11, dir, "b", !java_holds, Speed::Normal);
    let mut b2 = env.party(11, dir, "b2", !java_holds, Speed::Normal);
    let (fa, fb1, fb2) = (
        a.field(READ, &name).await?,
        b1.field(READ, &name).await?,
        b2.field(READ, &name).await?,
    );
    a.lock(READ, &name, None).await?;
    // B1 holds twice (timeout keys :1 and :2), B2 once.
    b1.lock(READ, &name, None).await?;
    b1.lock(READ, &name, None).await?;
    b2.lock(READ, &name, None).await?;
    env.expect_readers(&name, &[(&fa, 1), (&fb1, 2), (&fb2, 1)], 30_000)
        .await?;
    a.unlock_ok(READ, &name).await?;
    // The bug class: if B's timeout keys were not where A's unlock script looks, it would see only
    // stale readers and delete the hash under B.
    let min = env
        .expect_readers(&name, &[(&fb1, 2), (&fb2, 1)], 30_000)
        .await
        .map_err(|e| format!("after A's read unlock with B's readers holding: {e}"))?;
    ensure!(
        !a.try_lock(WRITE, &name).await?,
        "A's write try_lock succeeded after A's read unlock while B's readers hold"
    );
    ensure!(
        b1.is_locked(READ, &name).await?,
        "B's read is_locked is false after A's read unlock"
    );
    b1.unlock_ok(READ, &name).await?;
    env.expect_readers(&name, &[(&fb1, 1), (&fb2, 1)], 30_000)
        .await
        .map_err(|e| format!("after B1's first read unlock: {e}"))?;
    b1.unlock_ok(READ, &name).await?;
    env.expect_readers(&name, &[(&fb2, 1)], 30_000)
        .await
        .map_err(|e| format!("after B1's second read unlock: {e}"))?;
    b2.unlock_ok(READ, &name).await?;
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
    let mut a = env.party(12, dir, "a", java_holds, Speed::Normal);
    let fa = a.field(READ, &name).await?;
    a.lock(WRITE, &name, None).await?;
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
        readers.push(env.party(12, dir, role, !java_holds, Speed::Normal));
    }
    let mut waits = Vec::new();
    for r in &readers {
        waits.push(r.start_lock(READ, &name).await?);
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
    let (u_start, t_unlock) = a.unlock_ok(WRITE, &name).await?;
    let mut lats = Vec::new();
    let mut fields = Vec::new();
    // Java readers that were inside readLock() before the unlock began (the subscription seen
    // above proves one was; the others' threads may start late on a loaded machine)
    let (mut java_waited, mut java_late) = (0, 0);
    for (r, w) in readers.iter_mut().zip(waits) {
        let (t_acq, started) = r.finish(READ, &name, w, Duration::from_secs(5)).await?;
        match started {
            Some(st) if st <= u_start => java_waited += 1,
            Some(_) => java_late += 1,
            None => {}
        }
        lats.push(t_acq - t_unlock);
        fields.push(r.field(READ, &name).await?);
    }
    ensure!(
        java_holds || java_waited >= 1,
        "no Java reader was inside readLock() before A's unlock began; nothing waited"
    );
    let last = lats.iter().copied().fold(f64::MIN, f64::max);
    ensure!(
        last <= RW_WAKE_BOUND_MS,
        "the last reader got in {last:.1} ms after A's write unlock (bound {RW_WAKE_BOUND_MS} ms); all: {lats:?}"
    );
    let holders: Vec<(&str, u32)> = fields.iter().map(|f| (f.as_str(), 1)).collect();
    env.expect_readers(&name, &holders, 30_000).await?;
    for r in readers.iter_mut() {
        r.unlock_ok(READ, &name).await?;
    }
    env.expect_rw_gone(&name, "after the readers' unlocks").await?;
    let all: Vec<String> = lats.iter().map(|l| format!("{l:.1}")).collect();
    Ok(Outcome {
        latency_ms: Some(last),
        note: format!(
            "3 {} readers woken by the write unlock (message 1): {} ms; last {:.1} ms after the unlock call started{}",
            if java_holds { "Rust" } else { "Java" },
            all.join(", "),
            last + t_unlock - u_start,
            if java_late > 0 {
                format!(" ({java_waited} Java readers waited, {java_late} started after the unlock began)")
            } else {
                String::new()
            }
        ),
    })
}

async fn s13(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(13, dir);
    let java_holds = dir == Dir::JavaHolds;
    let mut a = env.party(13, dir, "a", java_holds, Speed::Normal);
    let mut b = env.party(13, dir, "b", !java_holds, Speed::Normal);
    let (fa, fb) = (a.field(READ, &name).await?, b.field(READ, &name).await?);
    lock_and_downgrade(&mut a, &name).await?;
    env.expect_readers(&name, &[(&fa, 1)], 30_000)
        .await
        .map_err(|e| format!("after A's downgrade: {e}"))?;
    ensure!(
        b.is_locked(READ, &name).await?,
        "B's read is_locked is false after A's downgrade"
    );
    ensure!(
        !b.is_locked(WRITE, &name).await?,
        "B's write is_locked is true after A's downgrade"
    );
    ensure!(
        !b.try_lock(WRITE, &name).await?,
        "B's write try_lock succeeded while A holds the downgraded read lock"
    );
    ensure!(
        b.try_lock(READ, &name).await?,
        "B's read try_lock failed after A's downgrade"
    );
    env.expect_readers(&name, &[(&fa, 1), (&fb, 1)], 30_000).await?;
    a.unlock_ok(READ, &name).await?;
    env.expect_readers(&name, &[(&fb, 1)], 30_000)
        .await
        .map_err(|e| format!("after A's read unlock: {e}"))?;
    b.unlock_ok(READ, &name).await?;
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
    let mut a = env.party(14, dir, "a", java_holds, Speed::Fast);
    let mut b = env.party(14, dir, "b", !java_holds, Speed::Fast);
    // The writer is in B's language (so the two directions cover a Java and a Rust writer).
    let mut w = env.party(14, dir, "w", !java_holds, Speed::Fast);
    let (fa, fb) = (a.field(READ, &name).await?, b.field(READ, &name).await?);
    let t_a = a.lock(READ, &name, None).await?;
    b.lock(READ, &name, None).await?;
    let mut waiting = w.start_lock(WRITE, &name).await?;
    let ch = rw_channel(&name);
    until(
        Duration::from_secs(10),
        &format!("the writer subscribed to {ch}"),
        || async { Ok(env.raw.numsub(&ch).await? >= 1) },
    )
    .await?;
    let wd = FAST_WATCHDOG_MS as i64;
    let hold_until =
        Instant::now() + Duration::from_millis(3000u64.saturating_sub((now_ms() - t_a).max(0.0) as u64));
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
    a.unlock_ok(READ, &name).await?;
    env.expect_readers(&name, &[(&fb, 1)], wd)
        .await
        .map_err(|e| format!("after A's read unlock: {e}"))?;
    ensure!(!waiting.is_done(), "the writer got in while B still reads");
    let (u_start, t_unlock) = b.unlock_ok(READ, &name).await?;
    let (t_acq, _) = w.finish(WRITE, &name, waiting, Duration::from_secs(5)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= RW_WAKE_BOUND_MS,
        "the writer got in {lat:.1} ms after the last read unlock (bound {RW_WAKE_BOUND_MS} ms)"
    );
    let fw = w.field(READ, &name).await?;
    let h = env.raw.hgetall(&name).await?;
    let want = BTreeMap::from([
        ("mode".to_owned(), "write".to_owned()),
        (format!("{fw}:write"), "1".to_owned()),
    ]);
    ensure!(h == want, "the writer's hash is {h:?}, expected {want:?}");
    w.unlock_ok(WRITE, &name).await?;
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
