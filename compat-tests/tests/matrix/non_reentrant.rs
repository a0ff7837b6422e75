//! Non-reentrant lock scenarios 24–26 (`getNonReentrantLock` / `Client::non_reentrant_lock`,
//! Redisson 4.4.0+, so only 4.7.0 here), both directions: a second acquisition by the holder
//! fails in both languages and leaves the count at 1, the wake-up over the RLock channel, mutual
//! exclusion.

use std::time::Duration;

use redisson_lock::Error as LockError;
use redisson_lock_compat_tests::{JavaKind, Result};

use crate::counter::mixed_counter;
use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS};
use crate::party::{Party, NON_REENTRANT, NON_REENTRANT_FAIR};
use crate::support::{channel_of, one_field, short, Watch, WAKE_BOUND_MS};

/// Scenario 26: tasks per language and rounds per task.
const COUNTER: (usize, usize, usize) = (3, 3, 150);

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
    sc(24, "Non-reentrant: the holder's 2nd acquisition (lock, lock+lease, try_lock, try_lock_for, try+lease) fails at once: Java IllegalMonitorStateException 'Lock … is non-reentrant and is already held by thread', Rust Error::AlreadyHeld; the count stays 1 on both sides; the other side's try_lock is false"),
    sc(25, "Non-reentrant: B blocked in lock() is woken by A's unlock (message 0 on redisson_lock__channel) within 200 ms; count 1"),
    Scenario {
        limit_s: 120,
        ..sc(26, "Non-reentrant: mutual exclusion: 3 Java + 3 Rust tasks x 150 rounds, counter = 900, no overlap, ≥ 10 hand-overs each way")
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        24 => s24(env, dir).await,
        25 => s25(env, dir).await,
        26 => s26(env, dir).await,
        _ => Err(format!("no non-reentrant lock scenario {no}")),
    }
}

/// The start of Redisson's message for a re-acquire by the holding thread (the thread id that
/// follows is a Redisson/Netty thread's, not the caller's: match the prefix only).
fn java_reacquire_prefix(name: &str) -> String {
    format!("Lock '{name}' is non-reentrant and is already held by thread ")
}

/// The five ways of a Rust re-acquire (`lock`, `lock+lease`, `try_lock`, `try_lock_for`,
/// `try_lock+lease`) on a non-reentrant handle of either kind; the guard is dropped.
macro_rules! rust_reacquire {
    ($l:expr, $way:expr, $wait:expr, $lease:expr) => {
        match $way {
            "lock" => $l.lock().await.map(drop),
            "lock+lease" => $l.lock_with_lease($lease).await.map(drop),
            "try_lock" => $l.try_lock_for(Duration::ZERO).await.map(drop),
            "try_lock_for" => $l.try_lock_for($wait).await.map(drop),
            _ => $l.try_lock_with_lease($wait, $lease).await.map(drop),
        }
    };
}

/// The holder `p` tries to take `name` (of `kind`: the non-reentrant lock, or the non-reentrant
/// fair lock) again in five ways; each must fail at once with its language's error and leave the
/// hash at `{field: 1}` (and, for the fair lock, nothing queued: no queue, no deadline). Returns a
/// sample of the error.
pub async fn reacquire_fails(
    env: &Env,
    p: &Party<'_>,
    kind: JavaKind,
    name: &str,
    field: &str,
) -> Result<String> {
    let who = p.desc();
    let mut sample = String::new();
    // Java: the thread ids named in the messages, and the caller's (the worker's) thread id.
    let (mut tids, mut caller) = (Vec::new(), None);
    let ways = ["lock", "lock+lease", "try_lock", "try_lock_for", "try_lock+lease"];
    for way in ways {
        let t0 = std::time::Instant::now();
        if let Some(j) = p.java_lock(kind, name) {
            let r = match way {
                "lock" => j.lock_response(None).await?,
                "lock+lease" => j.lock_response(Some(5000)).await?,
                "try_lock" => j.try_lock_response(None, None).await?,
                "try_lock_for" => j.try_lock_response(Some(2000), None).await?,
                _ => j.try_lock_response(Some(2000), Some(5000)).await?,
            };
            let raw = r.raw.clone();
            caller = r.thread_id;
            let e = r
                .java_error()
                .ok_or_else(|| format!("{who}: Java re-acquire by {way} succeeded: {raw}"))?;
            let prefix = java_reacquire_prefix(name);
            ensure!(
                e.is_illegal_monitor_state() && e.message.starts_with(&prefix),
                "{who}: Java re-acquire by {way} failed with {e}, expected IllegalMonitorStateException `{prefix}<T>`"
            );
            let tid = e.message[prefix.len()..].trim().to_owned();
            ensure!(
                !tid.is_empty() && tid.bytes().all(|b| b.is_ascii_digit()),
                "{who}: no thread id after the prefix: {}",
                e.message
            );
            tids.push(tid);
            sample = format!("IllegalMonitorStateException `{prefix}<T>`");
        } else {
            let handle = p.rust_lock(kind, name)?;
            let (wait, lease) = (Duration::from_millis(2000), Duration::from_millis(5000));
            let r = tokio::time::timeout(Duration::from_secs(5), async {
                match kind {
                    NON_REENTRANT | NON_REENTRANT_FAIR => Ok(rust_reacquire!(handle.any(), way, wait, lease)),
                    _ => Err(format!("{kind:?} is not a non-reentrant kind")),
                }
            })
            .await
            .map_err(|_| format!("{who}: Rust re-acquire by {way} did not return within 5 s"))??;
            match &r {
                Err(e @ LockError::AlreadyHeld { key, field: f }) => {
                    ensure!(
                        key == name && f == field,
                        "{who}: AlreadyHeld names key {key} field {f}, expected {name} / {field}"
                    );
                    sample = format!("Error::AlreadyHeld: {e}");
                }
                other => {
                    return Err(format!(
                        "{who}: Rust re-acquire by {way} gave {other:?}, expected Err(AlreadyHeld)"
                    ))
                }
            }
        }
        let took = t0.elapsed();
        ensure!(
            took < Duration::from_millis(1000),
            "{who}: the re-acquire by {way} took {took:?} (it must fail at once, not wait)"
        );
        let h = env.raw.hgetall(name).await?;
        ensure!(
            h == one_field(field, "1"),
            "{who}: after the re-acquire by {way} the hash is {h:?}, expected {{{field}: 1}}"
        );
        let hc = p.hold_count(kind, name).await?;
        ensure!(hc == 1, "{who}: hold count {hc} after the re-acquire by {way}");
        ensure!(p.is_held(kind, name).await?, "{who} lost its hold after {way}");
        if kind == NON_REENTRANT_FAIR {
            crate::fair::expect_no_queue(env, name, &format!("{who}: after the re-acquire by {way}")).await?;
        }
    }
    if !tids.is_empty() {
        tids.dedup();
        let caller = caller.map(|c| c.to_string()).unwrap_or_else(|| "?".into());
        sample = format!(
            "{sample} with T = {} (the caller's thread: {caller})",
            tids.join("/")
        );
    }
    Ok(sample)
}

async fn s24(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(24, dir);
    let (mut a, mut b) = env.pair(24, dir, Speed::Normal);
    let (fa, fb) = (
        a.field(NON_REENTRANT, &name).await?,
        b.field(NON_REENTRANT, &name).await?,
    );
    a.lock(NON_REENTRANT, &name, None).await?;
    let ttl = env.raw.pttl(&name).await?;
    ensure!(ttl > 20_000, "PTTL {ttl} after A's lock (watchdog mode, 30 s)");
    let ea = reacquire_fails(env, &a, NON_REENTRANT, &name, &fa).await?;
    ensure!(
        !b.try_lock(NON_REENTRANT, &name).await?,
        "B's try_lock acquired while A holds"
    );
    let hb = b.hold_count(NON_REENTRANT, &name).await?;
    ensure!(hb == 0, "B's hold count {hb} while A holds");
    ensure!(b.is_locked(NON_REENTRANT, &name).await?, "B sees is_locked false");
    let h = env.raw.hgetall(&name).await?;
    ensure!(h == one_field(&fa, "1"), "after B's try_lock the hash is {h:?}");
    a.unlock_ok(NON_REENTRANT, &name).await?;
    let h = env.raw.hgetall(&name).await?;
    ensure!(h.is_empty(), "one unlock did not release the lock: {h:?}");
    let late = match a.unlock(NON_REENTRANT, &name).await? {
        Ok(_) => return Err("A's 2nd unlock succeeded".into()),
        Err(m) => m,
    };
    // The other language's holder refuses its own 2nd acquisition too.
    b.lock(NON_REENTRANT, &name, None).await?;
    let eb = reacquire_fails(env, &b, NON_REENTRANT, &name, &fb).await?;
    ensure!(
        !a.try_lock(NON_REENTRANT, &name).await?,
        "A's try_lock acquired while B holds"
    );
    b.unlock_ok(NON_REENTRANT, &name).await?;
    ensure!(
        env.raw.hgetall(&name).await?.is_empty(),
        "B's unlock did not release the lock"
    );
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "5 re-acquires each, count 1 throughout; A: {}; B: {}; A's 2nd unlock: {}",
            short(&ea, 160),
            short(&eb, 160),
            short(&late, 40)
        ),
    })
}

async fn s25(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(25, dir);
    let (mut a, mut b) = env.pair(25, dir, Speed::Normal);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    a.lock(NON_REENTRANT, &name, None).await?;
    let mut w = b.start_lock(NON_REENTRANT, &name).await?;
    env.wait_subscribers(&name, 1).await?;
    ensure!(!w.is_done(), "B acquired while A holds");
    let (u_start, t_unlock) = a.unlock_ok(NON_REENTRANT, &name).await?;
    let (t_acq, started) = b.finish(NON_REENTRANT, &name, w, Duration::from_secs(10)).await?;
    if let Some(s) = started {
        ensure!(s <= u_start, "B's lock started after A's unlock");
    }
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= WAKE_BOUND_MS,
        "B acquired {lat:.1} ms after A's unlock (bound {WAKE_BOUND_MS} ms)"
    );
    let fb = b.field(NON_REENTRANT, &name).await?;
    let h = env.raw.hgetall(&name).await?;
    ensure!(h == one_field(&fb, "1"), "after B got in the hash is {h:?}");
    let ch = channel_of(&name);
    let seen = watch.wait_for(1, Duration::from_secs(2)).await?;
    ensure!(
        seen.len() == 1 && seen[0].1 == ch && seen[0].2 == "0",
        "after A's unlock the lock's channels carried {seen:?}, expected one `0` on {ch}"
    );
    b.unlock_ok(NON_REENTRANT, &name).await?;
    let seen = watch.wait_for(2, Duration::from_secs(2)).await?;
    ensure!(
        seen.len() == 2 && seen[1].1 == ch && seen[1].2 == "0",
        "after B's unlock the lock's channels carried {seen:?}, expected a second `0` on {ch}"
    );
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "message `0` on {ch} from each unlock; B in {:.1} ms after the unlock call started",
            t_acq - u_start
        ),
    })
}

async fn s26(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(26, dir);
    let run = mixed_counter(env, 26, dir, NON_REENTRANT, &name, COUNTER, 0).await?;
    Ok(Outcome {
        latency_ms: None,
        note: run.summary(),
    })
}
