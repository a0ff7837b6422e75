//! Non-reentrant fair lock scenarios 31–34 (`getNonReentrantFairLock` /
//! `Client::non_reentrant_fair_lock`, Redisson 4.4.0+, so only 4.7.0 here), both directions: the
//! holder's second acquisition is refused in both languages and queues nothing; then the fair
//! scenarios' FIFO order, head-only wake-up and mutual exclusion on this kind.

use redisson_lock_compat_tests::Result;

use crate::env::{Env, Speed};
use crate::fair::{counter, expect_no_queue, fifo, head_wake, wait_queue};
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS};
use crate::non_reentrant::reacquire_fails;
use crate::party::{Lang, NON_REENTRANT_FAIR};
use crate::support::{one_field, short};

/// Scenario 34: tasks per language and rounds per task.
const COUNTER: (usize, usize, usize) = (3, 3, 100);

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
    sc(31, "Non-reentrant fair: the holder's 2nd acquisition (lock, lock+lease, try_lock, try_lock_for, try+lease) fails at once (Java IllegalMonitorStateException 'Lock … is non-reentrant and is already held by thread', Rust Error::AlreadyHeld), count 1, and queues nothing (no redisson_lock_queue / redisson_lock_timeout key); B's try_lock() queues nothing, B's try_lock_for(300 ms) queues and leaves; late unlock: Java ok, Rust NotHeld"),
    sc(32, "Non-reentrant fair: FIFO across languages (as 27)"),
    sc(33, "Non-reentrant fair: only the head is woken, on its own channel, ≤ 200 ms (as 29)"),
    Scenario {
        limit_s: 120,
        ..sc(34, "Non-reentrant fair: mutual exclusion: 3 Java + 3 Rust tasks x 100 rounds, counter = 600, no overlap, ≥ 10 hand-overs each way; queue and zset gone")
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        31 => s31(env, dir).await,
        32 => fifo(env, 32, dir, NON_REENTRANT_FAIR).await,
        33 => head_wake(env, 33, dir, NON_REENTRANT_FAIR).await,
        34 => counter(env, 34, dir, NON_REENTRANT_FAIR, COUNTER).await,
        _ => Err(format!("no non-reentrant fair lock scenario {no}")),
    }
}

async fn s31(env: &Env, dir: Dir) -> Result<Outcome> {
    let kind = NON_REENTRANT_FAIR;
    let name = env.name(31, dir);
    let (mut a, mut b) = env.pair(31, dir, Speed::Normal);
    let (fa, fb) = (a.field(kind, &name).await?, b.field(kind, &name).await?);
    a.lock(kind, &name, None).await?;
    let ttl = env.raw.pttl(&name).await?;
    ensure!(ttl > 20_000, "PTTL {ttl} after A's lock (watchdog mode, 30 s)");
    let ea = reacquire_fails(env, &a, kind, &name, &fa).await?;
    // B, the other language: a single attempt queues nothing; a timed one queues and leaves
    ensure!(
        !b.try_lock(kind, &name).await?,
        "B's try_lock acquired while A holds"
    );
    expect_no_queue(env, &name, "after B's refused try_lock()").await?;
    let (got, _) = b.try_lock_for(kind, &name, 300).await?;
    ensure!(!got, "B's try_lock_for(300 ms) acquired while A holds");
    wait_queue(
        env,
        &name,
        &[],
        "B's timed-out try_lock_for(300 ms) left the queue",
    )
    .await?;
    expect_no_queue(env, &name, "after B's timed-out try_lock_for").await?;
    let hb = b.hold_count(kind, &name).await?;
    ensure!(hb == 0, "B's hold count {hb} while A holds");
    ensure!(b.is_locked(kind, &name).await?, "B sees is_locked false");
    let h = env.raw.hgetall(&name).await?;
    ensure!(h == one_field(&fa, "1"), "after B's attempts the hash is {h:?}");
    a.unlock_ok(kind, &name).await?;
    let h = env.raw.hgetall(&name).await?;
    ensure!(h.is_empty(), "one unlock did not release the lock: {h:?}");
    // A's second unlock of the free lock: Redisson's fair unlock counts a missing lock as released
    let java = matches!(a.lang, Lang::Java { .. });
    let late = match (java, a.unlock(kind, &name).await?) {
        (true, Ok(_)) => "Java: no exception".to_owned(),
        (false, Err(m)) if m.starts_with("Error::NotHeld") => "Rust: Error::NotHeld".to_owned(),
        (_, r) => return Err(format!("A's 2nd unlock gave {r:?}")),
    };
    // the other language's holder refuses its own 2nd acquisition too
    b.lock(kind, &name, None).await?;
    let eb = reacquire_fails(env, &b, kind, &name, &fb).await?;
    ensure!(
        !a.try_lock(kind, &name).await?,
        "A's try_lock acquired while B holds"
    );
    expect_no_queue(env, &name, "after A's refused try_lock()").await?;
    b.unlock_ok(kind, &name).await?;
    ensure!(
        env.raw.hgetall(&name).await?.is_empty(),
        "B's unlock did not release the lock"
    );
    expect_no_queue(env, &name, "at the end").await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "5 re-acquires each, count 1 and nothing queued throughout; A: {}; B: {}; B's try_lock_for(300) queued and left; A's 2nd unlock: {late}",
            short(&ea, 160),
            short(&eb, 160)
        ),
    })
}
