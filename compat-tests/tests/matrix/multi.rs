//! Multi-lock scenarios 35–37 (`new RedissonMultiLock(getLock(n1), getLock(n2), getLock(n3))` /
//! `Client::multi_lock(&[n1, n2, n3])`, every Redisson version of the matrix), both directions:
//! the holder's field on every member, nothing left by refused attempts, a partial acquisition
//! released when the last member is busy, a waiting multi-lock woken by a member's unlock, and
//! mutual exclusion of Java and Rust multi-locks over the same three names.
//!
//! Members are plain locks (`getLock`), so every step is also checked member by member in Redis:
//! a multi-lock is just its members, each held by the same owner field (Java: the worker thread's
//! `<clientId>:<threadId>`; Rust: the multi-lock's owner).

use std::time::{Duration, Instant};

use redisson_lock::{MultiGuard, RMultiLock};
use redisson_lock_compat_tests::{now_ms, Harness, Pending, Result};

use crate::counter::{mixed_counter_on, Target};
use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS};
use crate::party::{Lang, Party, LOCK};
use crate::support::{one_field, until, CMD};

/// Members per multi-lock.
const MEMBERS: usize = 3;
/// Scenario 37: Java workers, Rust tasks, rounds each.
const COUNTER: (usize, usize, usize) = (3, 3, 100);
/// Scenario 36: the bound from the last member's unlock reply to the waiting multi-lock's
/// acquisition (generous: both sides wait for the member's unlock message, ~1 ms when healthy).
const WAKE_BOUND_MS: f64 = 1000.0;

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
    sc(35, "MultiLock over 3 names: A's multi lock() puts A's field (count 1, watchdog PTTL) on every member; B's multi try_lock(), try_lock_for(300 ms) and plain try_lock of the last member fail and leave the members untouched; A's multi unlock deletes all three; then B's multi try_lock() holds all three"),
    sc(36, "MultiLock partial failure: B holds the last member alone; A's multi try_lock() and try_lock_for(500 ms) fail and release the members they took (none left); A's multi lock() waits and gets all three ≤ 1 s after B's unlock of the last member"),
    Scenario {
        limit_s: 180,
        ..sc(37, "MultiLock mutual exclusion: 3 Java RedissonMultiLock + 3 Rust multi-lock tasks x 100 rounds over the same 3 names, counter = 600, no overlap, ≥ 10 hand-overs each way")
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        35 => s35(env, dir).await,
        36 => s36(env, dir).await,
        37 => s37(env, dir).await,
        _ => Err(format!("no multi-lock scenario {no}")),
    }
}

/// The member names of scenario `no` in `dir` (remembered for scenario 9).
fn members(env: &Env, no: usize, dir: Dir) -> Vec<String> {
    let base = env.name(no, dir);
    let names: Vec<String> = (1..=MEMBERS).map(|i| format!("{base}:m{i}")).collect();
    if let Ok(mut all) = env.names.lock() {
        all.extend(names.iter().cloned());
    }
    names
}

/// One party's multi-lock over `names`: Java `multi<Op> n1,n2,n3` on the party's worker (a new
/// `RedissonMultiLock` per call; its unlock releases every member for the worker's thread), Rust
/// `client.multi_lock(names)` pinned to the party's owner. The party itself is kept for the
/// single-member calls (`field`, `try_lock`, `unlock` of one member).
struct Multi<'a> {
    party: Party<'a>,
    names: Vec<String>,
    rust: Option<RMultiLock>,
    guard: Option<MultiGuard>,
}

/// A multi `lock()` started in the background.
enum MultiWaiting {
    Java(Box<Pending>),
    Rust(tokio::task::JoinHandle<Result<(MultiGuard, f64)>>),
}

impl<'a> Multi<'a> {
    fn new(party: Party<'a>, names: &[String]) -> Result<Multi<'a>> {
        let rust = match &party.lang {
            Lang::Rust { c, owner } => {
                let ns: Vec<&str> = names.iter().map(String::as_str).collect();
                Some(
                    c.multi_lock(&ns)
                        .map_err(|e| format!("client.multi_lock({ns:?}): {e}"))?
                        .with_owner(*owner),
                )
            }
            Lang::Java { .. } => None,
        };
        Ok(Multi {
            party,
            names: names.to_vec(),
            rust,
            guard: None,
        })
    }

    fn java(&self) -> Option<(&'a Harness, String)> {
        match &self.party.lang {
            Lang::Java { h, worker } => Some((*h, worker.clone())),
            Lang::Rust { .. } => None,
        }
    }

    fn joined(&self) -> String {
        self.names.join(",")
    }

    fn rust(&self) -> Result<&RMultiLock> {
        self.rust.as_ref().ok_or_else(|| "no Rust multi-lock".to_owned())
    }

    /// The owner field every member gets.
    async fn field(&self) -> Result<String> {
        self.party.field(LOCK, &self.names[0]).await
    }

    async fn lock(&mut self) -> Result<()> {
        if let Some((h, w)) = self.java() {
            h.call(&w, "multiLock", &[&self.joined()], Duration::from_secs(30))
                .await?
                .into_ok()?;
            return Ok(());
        }
        let g = tokio::time::timeout(Duration::from_secs(30), self.rust()?.lock())
            .await
            .map_err(|_| "rust multi lock() did not return within 30 s".to_owned())?
            .map_err(|e| format!("rust multi lock(): {e}"))?;
        self.guard = Some(g);
        Ok(())
    }

    /// `tryLock()` / `try_lock()` (no wait) or `tryLock(wait)` / `try_lock_for(wait)`; returns
    /// whether it acquired and how long the call took (ms).
    async fn try_lock(&mut self, wait_ms: Option<u64>) -> Result<(bool, f64)> {
        let t = Instant::now();
        if let Some((h, w)) = self.java() {
            let wait = wait_ms.map(|m| m.to_string());
            let mut args = vec![self.joined()];
            args.extend(wait);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let got = h.call(&w, "multiTryLock", &args, CMD).await?.bool()?;
            return Ok((got, t.elapsed().as_secs_f64() * 1000.0));
        }
        let m = self.rust()?;
        let got = match wait_ms {
            None => m.try_lock().await,
            Some(ms) => m.try_lock_for(Duration::from_millis(ms)).await,
        }
        .map_err(|e| format!("rust multi try_lock({wait_ms:?}): {e}"))?;
        let elapsed = t.elapsed().as_secs_f64() * 1000.0;
        let acquired = got.is_some();
        if got.is_some() {
            self.guard = got;
        }
        Ok((acquired, elapsed))
    }

    /// Releases every member; must succeed.
    async fn unlock(&mut self) -> Result<()> {
        if let Some((h, w)) = self.java() {
            h.call(&w, "multiUnlock", &[&self.joined()], CMD)
                .await?
                .into_ok()?;
            return Ok(());
        }
        self.guard
            .take()
            .ok_or_else(|| "rust multi unlock without a guard".to_owned())?
            .unlock()
            .await
            .map_err(|e| format!("rust multi unlock(): {e}"))
    }

    async fn start_lock(&self) -> Result<MultiWaiting> {
        if let Some((h, w)) = self.java() {
            return Ok(MultiWaiting::Java(Box::new(
                h.send(&w, "multiLock", &[&self.joined()]).await?,
            )));
        }
        let m = self.rust()?.clone();
        Ok(MultiWaiting::Rust(tokio::spawn(async move {
            let g = m.lock().await.map_err(|e| format!("rust multi lock(): {e}"))?;
            Ok((g, now_ms()))
        })))
    }

    /// Waits for a background `lock()`; returns the epoch ms of acquisition.
    async fn finish(&mut self, w: MultiWaiting, limit: Duration) -> Result<f64> {
        match w {
            MultiWaiting::Java(p) => {
                let r = p.wait(limit).await?;
                let ts = r.ts_ms;
                r.into_ok()?;
                Ok(ts)
            }
            MultiWaiting::Rust(j) => {
                let abort = j.abort_handle();
                let (g, at) = tokio::time::timeout(limit, j)
                    .await
                    .map_err(|_| {
                        abort.abort();
                        format!("rust multi lock() not acquired within {limit:?}")
                    })?
                    .map_err(|e| format!("rust multi lock task: {e}"))??;
                self.guard = Some(g);
                Ok(at)
            }
        }
    }
}

/// Every member's hash is exactly `{field: 1}` with a watchdog PTTL (about 30 s).
async fn all_held_by(env: &Env, names: &[String], field: &str, what: &str) -> Result<()> {
    for n in names {
        let h = env.raw.hgetall(n).await?;
        ensure!(
            h == one_field(field, "1"),
            "{what}: member {n} is {h:?}, expected {{{field}: 1}}"
        );
        let ttl = env.raw.pttl(n).await?;
        ensure!(
            ttl > 20_000,
            "{what}: member {n} has PTTL {ttl} ms, expected about 30 s (watchdog mode)"
        );
    }
    Ok(())
}

/// None of `names` exists.
async fn none_held(env: &Env, names: &[String], what: &str) -> Result<()> {
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let left = env.raw.exists(&refs).await?;
    ensure!(left == 0, "{what}: {left} of the members {names:?} still exist");
    Ok(())
}

async fn s35(env: &Env, dir: Dir) -> Result<Outcome> {
    let names = members(env, 35, dir);
    let (a, b) = env.pair(35, dir, Speed::Normal);
    let (mut a, mut b) = (Multi::new(a, &names)?, Multi::new(b, &names)?);
    let (fa, fb) = (a.field().await?, b.field().await?);
    a.lock().await?;
    all_held_by(env, &names, &fa, "after A's multi lock()").await?;
    let (got, _) = b.try_lock(None).await?;
    ensure!(!got, "B's multi try_lock() acquired while A holds");
    all_held_by(env, &names, &fa, "after B's refused multi try_lock()").await?;
    let (got, took) = b.try_lock(Some(300)).await?;
    ensure!(!got, "B's multi try_lock_for(300 ms) acquired while A holds");
    all_held_by(env, &names, &fa, "after B's refused multi try_lock_for(300 ms)").await?;
    let last = &names[MEMBERS - 1];
    ensure!(
        !b.party.try_lock(LOCK, last).await?,
        "B's plain try_lock of the last member {last} acquired while A's multi-lock holds it"
    );
    a.unlock().await?;
    none_held(env, &names, "after A's multi unlock").await?;
    let (got, _) = b.try_lock(None).await?;
    ensure!(got, "B's multi try_lock() failed on free members");
    all_held_by(env, &names, &fb, "after B's multi try_lock()").await?;
    b.unlock().await?;
    none_held(env, &names, "after B's multi unlock").await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "A's field on all {MEMBERS} members; B refused 3 ways (its try_lock_for took {took:.0} ms), members untouched; then B's field on all"
        ),
    })
}

async fn s36(env: &Env, dir: Dir) -> Result<Outcome> {
    let names = members(env, 36, dir);
    let (a, mut b) = env.pair(36, dir, Speed::Normal);
    let mut a = Multi::new(a, &names)?;
    let fa = a.field().await?;
    let last = names[MEMBERS - 1].clone();
    let early = &names[..MEMBERS - 1];
    let fb = b.field(LOCK, &last).await?;
    b.lock(LOCK, &last, None).await?;
    let (got, _) = a.try_lock(None).await?;
    ensure!(!got, "A's multi try_lock() acquired while B holds {last}");
    none_held(env, early, "after A's refused multi try_lock()").await?;
    let (got, took) = a.try_lock(Some(500)).await?;
    ensure!(
        !got,
        "A's multi try_lock_for(500 ms) acquired while B holds {last}"
    );
    ensure!(
        took >= 450.0,
        "A's multi try_lock_for(500 ms) gave up after {took:.0} ms, before its wait ran out"
    );
    none_held(env, early, "after A's timed-out multi try_lock_for(500 ms)").await?;
    ensure!(
        env.raw.hgetall(&last).await? == one_field(&fb, "1"),
        "B's hold of {last} changed by A's attempts"
    );
    // A's multi lock() takes the free members and waits for the last one
    let w = a.start_lock().await?;
    until(
        Duration::from_secs(10),
        "A's waiting multi lock() holds the free members",
        || async {
            for n in early {
                if env.raw.hgetall(n).await? != one_field(&fa, "1") {
                    return Ok(false);
                }
            }
            Ok(true)
        },
    )
    .await?;
    let (_, t_unlock) = b.unlock_ok(LOCK, &last).await?;
    let t_acq = a.finish(w, Duration::from_secs(10)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= WAKE_BOUND_MS,
        "A's multi lock() got in {lat:.1} ms after B's unlock of {last} (bound {WAKE_BOUND_MS} ms)"
    );
    all_held_by(env, &names, &fa, "after A's multi lock()").await?;
    a.unlock().await?;
    none_held(env, &names, "after A's multi unlock").await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "refused multi attempts left no member behind (try_lock_for took {took:.0} ms); the waiting multi lock() got in {lat:.1} ms after the last member's unlock"
        ),
    })
}

async fn s37(env: &Env, dir: Dir) -> Result<Outcome> {
    let names = members(env, 37, dir);
    let run = mixed_counter_on(env, 37, dir, Target::Multi(&names), COUNTER, 0).await?;
    none_held(env, &names, "after the counter").await?;
    Ok(Outcome {
        latency_ms: None,
        note: run.summary(),
    })
}
