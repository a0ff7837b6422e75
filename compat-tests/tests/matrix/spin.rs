//! Spin lock scenarios 20–23 (`getSpinLock` / `Client::spin_lock`, Redisson 3.15.0+, so every
//! matrix version), both directions: the RLock's hash and re-entry counts, hand-over by polling
//! only (nothing published, nothing subscribed), force unlock, mutual exclusion.
//!
//! A spin waiter never subscribes: Redisson's polls with its exponential back-off, ours with
//! [`redisson_lock::BackOff`]'s default (1 ms ×2 plus jitter, capped at 128 ms). So the wake-up
//! bound here is [`SPIN_WAKE_BOUND_MS`], not the pub/sub bound of the other kinds.

use std::time::{Duration, Instant};

use redisson_lock_compat_tests::Result;

use crate::counter::mixed_counter;
use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS};
use crate::party::{Lang, Party, Waiting, SPIN};
use crate::support::{one_field, short, Watch};

/// From the holder's unlock reply (or the force unlock's) to the polling waiter's acquisition:
/// the back-off cap (128 ms, both libraries) plus jitter, round trips and a busy 2-core host.
pub const SPIN_WAKE_BOUND_MS: f64 = 500.0;
/// How long the waiter polls before the release: long enough for its back-off to reach the cap.
const SPIN_WAIT_MS: u64 = 600;
/// Scenario 23: tasks per language and rounds per task.
const COUNTER: (usize, usize, usize) = (2, 2, 100);
/// Scenario 23: the pause between rounds, outside the lock (see [`mixed_counter`]).
const COUNTER_GAP_MS: u64 = 2;

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
    sc(20, "Spin: RLock hash layout: A locks 2x ({A field: 2}, PTTL ≈ 30 s, hold count 2), B's try_lock false, hold count 0, is_locked; A's unlocks 2 → 1 → gone, a 3rd is 'not held'; then B locks 3x, counts 3 → 0 read back the same"),
    sc(21, "Spin: hand-over by polling only: B polls in lock() without subscribing; A's unlock publishes nothing on the lock's channels; B gets in within 500 ms"),
    sc(22, "Spin: force_unlock by B publishes nothing; a polling waiter of A's language gets in within 500 ms; A's unlock is then 'not held'"),
    Scenario {
        limit_s: 120,
        ..sc(23, "Spin: mutual exclusion: 2 Java + 2 Rust tasks x 100 rounds, 2 ms apart; counter = 400, no overlap, ≥ 3 hand-overs each way (polling, not fair) within 20 s, nothing published")
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        20 => s20(env, dir).await,
        21 => s21(env, dir).await,
        22 => s22(env, dir).await,
        23 => s23(env, dir).await,
        _ => Err(format!("no spin lock scenario {no}")),
    }
}

/// Expects the spin hash of `name` to be exactly `{field: count}` (or gone for 0).
async fn expect_count(env: &Env, name: &str, field: &str, count: u32, when: &str) -> Result<()> {
    let h = env.raw.hgetall(name).await?;
    if count == 0 {
        ensure!(h.is_empty(), "{when}: the hash is {h:?}, expected no key");
    } else {
        ensure!(
            h == one_field(field, &count.to_string()),
            "{when}: the hash is {h:?}, expected {{{field}: {count}}}"
        );
    }
    Ok(())
}

/// Holds `name` with `count` holds by `holder`; `other` must be refused and see it locked.
async fn hold_and_check(
    env: &Env,
    holder: &mut Party<'_>,
    other: &mut Party<'_>,
    name: &str,
    count: u32,
) -> Result<()> {
    let f = holder.field(SPIN, name).await?;
    for k in 1..=count {
        holder.lock(SPIN, name, None).await?;
        expect_count(env, name, &f, k, &format!("after {}'s lock #{k}", holder.desc())).await?;
    }
    let ttl = env.raw.pttl(name).await?;
    ensure!(
        ttl > 20_000 && ttl <= 30_000,
        "PTTL {ttl} while held in watchdog mode (30 s)"
    );
    let hc = holder.hold_count(SPIN, name).await?;
    ensure!(
        hc == count as i64,
        "{}'s hold count is {hc}, expected {count}",
        holder.desc()
    );
    ensure!(
        holder.is_held(SPIN, name).await?,
        "{} does not see its own hold",
        holder.desc()
    );
    let ho = other.hold_count(SPIN, name).await?;
    ensure!(
        ho == 0,
        "{}'s hold count is {ho} while the other side holds",
        other.desc()
    );
    ensure!(
        other.is_locked(SPIN, name).await?,
        "{} sees is_locked false",
        other.desc()
    );
    ensure!(
        !other.is_held(SPIN, name).await?,
        "{} sees is_held true",
        other.desc()
    );
    ensure!(
        !other.try_lock(SPIN, name).await?,
        "{}'s try_lock acquired while the other side holds",
        other.desc()
    );
    expect_count(env, name, &f, count, "after the other side's try_lock").await?;
    for k in (0..count).rev() {
        holder.unlock_ok(SPIN, name).await?;
        expect_count(env, name, &f, k, &format!("after {}'s unlock", holder.desc())).await?;
    }
    Ok(())
}

async fn s20(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(20, dir);
    let (mut a, mut b) = env.pair(20, dir, Speed::Normal);
    hold_and_check(env, &mut a, &mut b, &name, 2).await?;
    let late = match a.unlock(SPIN, &name).await? {
        Ok(_) => return Err("A's 3rd unlock succeeded; expected 'not held'".into()),
        Err(m) => m,
    };
    hold_and_check(env, &mut b, &mut a, &name, 3).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "A: 2 holds, B: 3 holds, exactly {{field: n}} at every step; 3rd unlock: {}",
            short(&late, 60)
        ),
    })
}

/// Nobody subscribed to any channel of `name`, and (Rust) the waiter's client has no channel.
async fn expect_polling(env: &Env, waiter: &Party<'_>, name: &str) -> Result<()> {
    let chans = env
        .raw
        .q::<Vec<String>>(redis::cmd("PUBSUB").arg("CHANNELS").arg(format!("*{{{name}}}*")))
        .await?;
    ensure!(
        chans.is_empty(),
        "channels subscribed while a spin waiter waits: {chans:?}"
    );
    if let Lang::Rust { c, .. } = &waiter.lang {
        let s = c.stats();
        ensure!(
            s.channels == 0 && s.waiters == 0,
            "the Rust spin waiter's client has channels or pub/sub waiters: {s:?}"
        );
    }
    Ok(())
}

/// Lets `waiting` poll for [`SPIN_WAIT_MS`], checking it neither gets in nor subscribes.
async fn poll_phase(env: &Env, waiter: &Party<'_>, waiting: &mut Waiting, name: &str) -> Result<usize> {
    let until = Instant::now() + Duration::from_millis(SPIN_WAIT_MS);
    let mut checks = 0;
    while Instant::now() < until {
        ensure!(
            !waiting.is_done(),
            "the spin waiter got in while the lock was held"
        );
        expect_polling(env, waiter, name).await?;
        checks += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    ensure!(
        !waiting.is_done(),
        "the spin waiter got in while the lock was held"
    );
    Ok(checks)
}

async fn s21(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(21, dir);
    let (mut a, mut b) = env.pair(21, dir, Speed::Normal);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    a.lock(SPIN, &name, None).await?;
    let mut waiting = b.start_lock(SPIN, &name).await?;
    let checks = poll_phase(env, &b, &mut waiting, &name).await?;
    let (u_start, t_unlock) = a.unlock_ok(SPIN, &name).await?;
    let (t_acq, started) = b.finish(SPIN, &name, waiting, Duration::from_secs(5)).await?;
    if let Some(s) = started {
        ensure!(
            s <= u_start,
            "B's spinLock started {:.0} ms after A's unlock",
            s - u_start
        );
    }
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= SPIN_WAKE_BOUND_MS,
        "B got in {lat:.1} ms after A's unlock (bound {SPIN_WAKE_BOUND_MS} ms)"
    );
    let fb = b.field(SPIN, &name).await?;
    expect_count(env, &name, &fb, 1, "after B got in").await?;
    b.unlock_ok(SPIN, &name).await?;
    // Give a stray message time to arrive.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let seen = watch.seen();
    ensure!(
        seen.is_empty(),
        "spin unlocks published on the lock's channels ({}): {seen:?}",
        watch.pattern
    );
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "{checks} checks in {SPIN_WAIT_MS} ms: no channel subscribed; 0 messages on {} from both unlocks; B in {:.1} ms after the unlock call started",
            watch.pattern,
            t_acq - u_start
        ),
    })
}

async fn s22(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(22, dir);
    let java_holds = dir == Dir::JavaHolds;
    let mut a = env.party(22, dir, "a", java_holds, Speed::Normal);
    let mut w = env.party(22, dir, "w", java_holds, Speed::Normal);
    let b = env.party(22, dir, "b", !java_holds, Speed::Normal);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    let fa = a.field(SPIN, &name).await?;
    a.lock(SPIN, &name, None).await?;
    let mut waiting = w.start_lock(SPIN, &name).await?;
    poll_phase(env, &w, &mut waiting, &name).await?;
    expect_count(env, &name, &fa, 1, "before the force unlock").await?;
    let (deleted, f_start, t_force) = b.force_unlock(SPIN, &name).await?;
    ensure!(deleted, "force_unlock returned false while A held");
    let (t_acq, _) = w.finish(SPIN, &name, waiting, Duration::from_secs(5)).await?;
    let lat = t_acq - t_force;
    ensure!(
        lat <= SPIN_WAKE_BOUND_MS,
        "the waiter got in {lat:.1} ms after the force unlock (bound {SPIN_WAKE_BOUND_MS} ms)"
    );
    ensure!(
        !a.is_held(SPIN, &name).await?,
        "A still sees its hold after the force unlock"
    );
    let late = match a.unlock(SPIN, &name).await? {
        Ok(_) => return Err("A's unlock after the force unlock succeeded".into()),
        Err(m) => m,
    };
    let fw = w.field(SPIN, &name).await?;
    expect_count(env, &name, &fw, 1, "after A's late unlock").await?;
    w.unlock_ok(SPIN, &name).await?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let seen = watch.seen();
    ensure!(
        seen.is_empty(),
        "the spin force unlock / unlock published ({}): {seen:?}",
        watch.pattern
    );
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "waiter ({}) in {:.1} ms after the force-unlock call started; 0 messages; A's unlock: {}",
            w.desc(),
            t_acq - f_start,
            short(&late, 50)
        ),
    })
}

async fn s23(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(23, dir);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    let run = mixed_counter(env, 23, dir, SPIN, &name, COUNTER, COUNTER_GAP_MS).await?;
    let seen = watch.seen();
    ensure!(
        seen.is_empty(),
        "spin unlocks published: {} message(s), first {:?}",
        seen.len(),
        seen.first()
    );
    Ok(Outcome {
        latency_ms: None,
        note: format!("{}; 0 messages", run.summary()),
    })
}
