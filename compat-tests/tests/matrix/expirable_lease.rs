//! Permit-expirable semaphore scenarios 55–57: leases that end and waiters that wake. 55: a
//! holder that never releases (a Java worker / Rust task of the shared environment); 56: a
//! release wakes the other language's waiter; 57: the holder is a process of its own (a harness
//! JVM / `rust-holder --expirable-permits`) that is SIGKILLed while it holds every permit, and
//! its leases give them back. The kind's table and the raw state helpers are in
//! [`crate::expirable`] (its docs describe the Redis state), the [`Pes`] wrapper of both
//! languages in [`crate::expirable_party`]; A sets the permits up, B is the other language.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;

use redisson_lock_compat_tests::{now_ms, Harness, Result};
use tokio::io::AsyncBufReadExt;

use crate::env::{Env, Speed};
use crate::expirable::{about, sc, state, NO_LEASE};
use crate::expirable_party::Pes;
use crate::kinds::{Dir, Outcome, Scenario};
use crate::semaphore::{expect_sem_messages, sem_channel, wait_sem_listening, SEM_WAKE_BOUND_MS};
use crate::support::{Watch, CMD, FAST_WATCHDOG_MS};

/// Scenario 56: how long a waiter is left after it subscribed before the release that should
/// wake it (a waiter of either library tries once more right after subscribing; a release
/// before that try would let it in without any message). Scenario 51 needs no pause: its first
/// release cannot satisfy the waiter, and the second comes 300 ms later.
const SETTLE: Duration = Duration::from_millis(300);
/// Scenario 55: the lease of A's permit.
const SHORT_LEASE_MS: u64 = 1500;
/// Scenarios 55, 57: how far a waiter's return may lie before the lease end it waited for (both
/// read the same machine's clock; a lease ends at its score, which the waiter's reclaim compares
/// with its own clock, so only the readings in between count).
const EARLY_TOLERANCE_MS: f64 = 5.0;
/// Scenario 57: the semaphore's permits, all taken by the holder process.
const CRASH_PERMITS: u64 = 2;
/// Scenario 57: the lease of each of the holder process' permits.
const CRASH_LEASE_MS: u64 = 2000;
/// Scenario 57: the holder process must be dead (SIGKILLed and reaped) at least this long before
/// its first lease ends, so that what B waits for is a dead process' lease.
const DEAD_BEFORE_END_MS: f64 = 300.0;

pub(crate) const S55: Scenario = sc(55, "Lease expiry across languages: A's trySetPermits(1); A takes it with a 1.5 s lease and never releases it (a crashed holder); B blocks in acquire() (subscribed); B has not returned shortly before the lease end and gets the permit ≤ 5 s after it (J→R: Rust's retry at the earliest lease end; R→J: Java's scheduled retry; nobody publishes); A's late release is refused and its tryRelease false; channel 1 (set), 1 (the reclaim by B's attempt), 1 (B's release)");
pub(crate) const S56: Scenario = sc(56, "Permit wake-up across languages: A's trySetPermits(1), A takes it without a lease; B blocks in acquire() (subscribed; no lease to wait for, so only a message can wake it: Java's waiter does not poll, Rust's re-polls every 30 s); A's release(id) gets B in ≤ 5 s; B's id is the zset's only member; B releases; channel 1, 1, 1");
pub(crate) const S57: Scenario = sc(57, "Expirable permits of a SIGKILLed process come back to the other language's waiter: A's trySetPermits(2); a process of A's language of its own (J→R: a harness JVM, two acquire(2 s lease); R→J: rust-holder --expirable-permits, acquire_many(2, 2 s lease)) takes both; B blocks in acquire() (subscribed); the holder is SIGKILLed ≥ 300 ms before its first lease ends (R→J: the exit status says signal 9), which leaves N = \"0\" and both ids with their scores; B gets a new id no earlier than the first lease end and ≤ 5 s after it; B's attempt reclaims only the one it takes (both libraries): N = \"0\", the zset B's id (no lease) and the other dead id (its score unchanged); once both leases have ended A's availablePermits reclaims it: 1, only B's id left; A's release of a dead holder's id is refused, tryRelease false; B releases (N = \"2\"); channel 2, 1 (B's reclaim), 1 (A's), 2");

pub(crate) async fn s55(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(55, dir);
    let (pa, pb) = env.pair(55, dir, Speed::QuietPoll);
    let (a, b) = (Pes::of(env, &pa, &name)?, Pes::of(env, &pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    ensure!(a.try_set_permits(1).await?, "A's trySetPermits(1) returned false");
    let id_a = a.acquire(Some(SHORT_LEASE_MS)).await?;
    let leases = state(
        env,
        &name,
        Some("0"),
        &[&id_a],
        about(SHORT_LEASE_MS as i64),
        "after A's acquire(1.5 s)",
    )
    .await?;
    let lease_end = leases[0].1 as f64;
    let mut w = b.start_acquire().await?;
    wait_sem_listening(env, &name, 1).await?;
    // shortly before the lease ends, B still waits (on a machine so busy that B subscribed
    // after that moment, B's own return time below is the check: a waiter seen done after the
    // lease ended proves nothing either way)
    let before = lease_end - 150.0 - now_ms();
    if before > 0.0 {
        tokio::time::sleep(Duration::from_millis(before as u64)).await;
    }
    let left = lease_end - now_ms();
    ensure!(
        left <= 0.0 || !w.is_done(),
        "B's acquire() returned at least {left:.0} ms before A's lease ended"
    );
    let (id_b, t_ret) = w
        .finish(Duration::from_millis(SHORT_LEASE_MS + SEM_WAKE_BOUND_MS as u64) + CMD)
        .await?;
    let lat = t_ret - lease_end;
    ensure!(
        lat >= -EARLY_TOLERANCE_MS,
        "B got a permit {:.1} ms before A's lease ended",
        -lat
    );
    ensure!(
        lat <= SEM_WAKE_BOUND_MS,
        "B got the permit {lat:.1} ms after A's lease ended (bound {SEM_WAKE_BOUND_MS} ms)"
    );
    ensure!(id_b != id_a, "B got A's id {id_a}");
    state(
        env,
        &name,
        Some("0"),
        &[&id_b],
        |_, s| s == NO_LEASE,
        "after B's acquire()",
    )
    .await?;
    let refused = a.release(&id_a).await?;
    let Err(refusal) = refused else {
        return Err(format!("A's release of its expired {id_a} succeeded"));
    };
    ensure!(
        !a.try_release(&id_a).await?,
        "A's tryRelease of its expired {id_a} returned true"
    );
    state(
        env,
        &name,
        Some("0"),
        &[&id_b],
        |_, _| true,
        "after A's late releases",
    )
    .await?;
    b.release(&id_b)
        .await?
        .map_err(|e| format!("B's release of its {id_b} was refused: {e}"))?;
    state(env, &name, Some("1"), &[], |_, _| true, "after B's release").await?;
    ensure!(a.delete().await?, "A's delete() returned false");
    expect_sem_messages(env, &watch, &name, &["1", "1", "1"]).await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "{} waiter got the permit {lat:.1} ms after the end of {}'s {SHORT_LEASE_MS} ms lease; A's late release refused (`{refusal}`); messages 1, 1 (reclaim), 1",
            b.lang(),
            a.lang()
        ),
    })
}

pub(crate) async fn s56(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(56, dir);
    let (pa, pb) = env.pair(56, dir, Speed::QuietPoll);
    let (a, b) = (Pes::of(env, &pa, &name)?, Pes::of(env, &pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    ensure!(a.try_set_permits(1).await?, "A's trySetPermits(1) returned false");
    let id_a = a.acquire(None).await?;
    let mut w = b.start_acquire().await?;
    wait_sem_listening(env, &name, 1).await?;
    // a waiter tries once more right after it subscribed; let it go to sleep first, so that only
    // the release's message can wake it
    tokio::time::sleep(SETTLE).await;
    ensure!(
        !w.is_done(),
        "B's acquire() returned while A held the only permit"
    );
    let t_rel = a
        .release(&id_a)
        .await?
        .map_err(|e| format!("A's release of its {id_a} was refused: {e}"))?;
    let (id_b, t_ret) = w
        .finish(Duration::from_millis(SEM_WAKE_BOUND_MS as u64) + CMD)
        .await?;
    let lat = t_ret - t_rel;
    ensure!(
        lat <= SEM_WAKE_BOUND_MS,
        "B's acquire() returned {lat:.1} ms after A's release (bound {SEM_WAKE_BOUND_MS} ms: not woken by the message)"
    );
    ensure!(id_b != id_a, "B got A's id {id_a}");
    state(
        env,
        &name,
        Some("0"),
        &[&id_b],
        |_, s| s == NO_LEASE,
        "after B's acquire()",
    )
    .await?;
    b.release(&id_b)
        .await?
        .map_err(|e| format!("B's release of its {id_b} was refused: {e}"))?;
    state(env, &name, Some("1"), &[], |_, _| true, "after B's release").await?;
    ensure!(a.delete().await?, "A's delete() returned false");
    expect_sem_messages(env, &watch, &name, &["1", "1", "1"]).await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "{} acquire() returned {lat:.1} ms after {}'s release(id); messages 1, 1, 1",
            b.lang(),
            a.lang()
        ),
    })
}

/// Scenario 57's holder: a process of A's language of its own, started for the scenario, that
/// takes permits with a lease and is then SIGKILLed (no release, no shutdown hook).
enum Holder {
    /// A harness JVM (worker `holder`), as scenario 7's.
    Jvm(Harness),
    /// `rust-holder --expirable-permits`; its stdin stays open until the kill (EOF would make it
    /// exit by itself).
    Rust(tokio::process::Child),
}

impl Holder {
    /// Starts the process and makes it take `n` permits of semaphore `name`, each with a lease
    /// of `lease_ms`; the ids.
    async fn start(env: &Env, dir: Dir, name: &str, n: u64, lease_ms: u64) -> Result<(Holder, Vec<String>)> {
        if dir == Dir::JavaHolds {
            let h = Harness::start(&env.jar, &env.url, FAST_WATCHDOG_MS, Duration::from_secs(60)).await?;
            // `acquire(lease)` one at a time: every version has it (`acquire(n, lease)` is 3.23.4+)
            let sem = Pes::Java {
                h: &h,
                worker: "holder".to_owned(),
                name: name.to_owned(),
                version: env.version.clone(),
            };
            let mut ids = Vec::new();
            for _ in 0..n {
                ids.push(sem.acquire(Some(lease_ms)).await?);
            }
            return Ok((Holder::Jvm(h), ids));
        }
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rust-holder"))
            .args([
                "--expirable-permits",
                env.url.as_str(),
                name,
                &lease_ms.to_string(),
                &n.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("spawn rust-holder: {e}"))?;
        let out = child.stdout.take().ok_or("no stdout")?;
        let mut lines = tokio::io::BufReader::new(out).lines();
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .map_err(|_| "rust-holder did not report within 20 s".to_string())?
            .map_err(|e| format!("read rust-holder: {e}"))?
            .ok_or("rust-holder exited without output")?;
        let ids = line
            .strip_prefix("acquired ")
            .ok_or_else(|| format!("unexpected rust-holder output `{line}`"))?
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        Ok((Holder::Rust(child), ids))
    }

    fn what(&self) -> &'static str {
        match self {
            Holder::Jvm(_) => "the Java holder JVM",
            Holder::Rust(_) => "rust-holder",
        }
    }

    fn pid(&self) -> Result<u32> {
        match self {
            Holder::Jvm(h) => h.pid(),
            Holder::Rust(c) => c.id(),
        }
        .ok_or_else(|| format!("{} is not running", self.what()))
    }

    /// SIGKILLs the process and reaps it; how it ended.
    async fn kill(&mut self) -> Result<String> {
        match self {
            Holder::Jvm(h) => h.kill().await.map(|()| "kill -9, reaped".to_owned()),
            Holder::Rust(c) => {
                c.start_kill().map_err(|e| format!("kill -9 rust-holder: {e}"))?;
                let status = c.wait().await.map_err(|e| format!("reap rust-holder: {e}"))?;
                ensure!(
                    status.signal() == Some(9),
                    "rust-holder ended with {status}, not by the SIGKILL"
                );
                Ok(format!("{status}"))
            }
        }
    }
}

pub(crate) async fn s57(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(57, dir);
    let (pa, pb) = env.pair(57, dir, Speed::QuietPoll);
    let (a, b) = (Pes::of(env, &pa, &name)?, Pes::of(env, &pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    let n = CRASH_PERMITS as i64;
    ensure!(
        a.try_set_permits(n).await?,
        "A's trySetPermits({n}) returned false"
    );
    let (mut holder, ids) = Holder::start(env, dir, &name, CRASH_PERMITS, CRASH_LEASE_MS).await?;
    let pid = holder.pid()?;
    ensure!(
        ids.len() == CRASH_PERMITS as usize && ids[0] != ids[1],
        "{} took the permits {ids:?}, expected {CRASH_PERMITS} ids",
        holder.what()
    );
    let held: Vec<&str> = ids.iter().map(String::as_str).collect();
    let leases = state(
        env,
        &name,
        Some("0"),
        &held,
        about(CRASH_LEASE_MS as i64),
        "after the holder process took the permits",
    )
    .await?;
    let first_end = leases.iter().map(|l| l.1).min().unwrap_or_default() as f64;
    let last_end = leases.iter().map(|l| l.1).max().unwrap_or_default() as f64;
    // the holder got its permits without waiting: nobody listens but B, once it waits
    let ch = sem_channel(&name);
    let listening = env.raw.numsub(&ch).await?;
    ensure!(
        listening == 0,
        "{listening} client(s) subscribed to {ch} before B waits"
    );
    let mut w = b.start_acquire().await?;
    wait_sem_listening(env, &name, 1).await?;
    let how = holder.kill().await?;
    let t_dead = now_ms();
    ensure!(
        first_end - t_dead >= DEAD_BEFORE_END_MS,
        "{} was dead only {:.0} ms before its first lease ended (≥ {DEAD_BEFORE_END_MS} ms wanted)",
        holder.what(),
        first_end - t_dead
    );
    ensure!(
        !w.is_done(),
        "B's acquire() returned before the dead holder's leases ended"
    );
    // the kill gave nothing back: the permits stay the dead holder's until their leases end
    let after_kill = state(
        env,
        &name,
        Some("0"),
        &held,
        |_, _| true,
        "right after the SIGKILL",
    )
    .await?;
    ensure!(
        after_kill == leases,
        "the SIGKILL changed the leases: {leases:?}, then {after_kill:?}"
    );
    let left = Duration::from_millis((first_end - now_ms()).max(0.0) as u64);
    let (id_b, t_ret) = w
        .finish(left + Duration::from_millis(SEM_WAKE_BOUND_MS as u64) + CMD)
        .await?;
    let lat = t_ret - first_end;
    ensure!(
        lat >= -EARLY_TOLERANCE_MS,
        "B got a permit {:.1} ms before the dead holder's first lease ended",
        -lat
    );
    ensure!(
        lat <= SEM_WAKE_BOUND_MS,
        "B got a permit {lat:.1} ms after the dead holder's first lease ended (bound {SEM_WAKE_BOUND_MS} ms)"
    );
    ensure!(!ids.contains(&id_b), "B got the dead holder's id {id_b}");
    // an acquire reclaims only as many ended leases as it takes (both libraries: `limit` in the
    // ZRANGEBYSCORE): the first in ZRANGE order came back and went to B, the other one stays,
    // ended or not (Java's end apart), with its score
    let (other, other_end) = leases[1].clone();
    let nb = id_b.clone();
    state(
        env,
        &name,
        Some("0"),
        &[id_b.as_str(), other.as_str()],
        move |id, s| if id == nb { s == NO_LEASE } else { s == other_end },
        "after B's acquire()",
    )
    .await?;
    // A's count reclaims the rest once every lease has ended (Java's two end up to ~100 ms apart)
    let rest = last_end + 1.0 - now_ms();
    if rest > 0.0 {
        tokio::time::sleep(Duration::from_millis(rest.ceil() as u64)).await;
    }
    let available = a.available().await?;
    ensure!(
        available == n - 1,
        "A's availablePermits after every lease ended = {available}, expected {}",
        n - 1
    );
    state(
        env,
        &name,
        Some(&(n - 1).to_string()),
        &[&id_b],
        |_, s| s == NO_LEASE,
        "after every lease of the dead holder ended",
    )
    .await?;
    let refusal = match a.release(&ids[0]).await? {
        Ok(_) => return Err(format!("A's release of the dead holder's {} succeeded", ids[0])),
        Err(e) => e,
    };
    ensure!(
        !a.try_release(&ids[1]).await?,
        "A's tryRelease of the dead holder's {} returned true",
        ids[1]
    );
    b.release(&id_b)
        .await?
        .map_err(|e| format!("B's release of its {id_b} was refused: {e}"))?;
    state(
        env,
        &name,
        Some(&n.to_string()),
        &[],
        |_, _| true,
        "after B's release",
    )
    .await?;
    ensure!(a.delete().await?, "A's delete() returned false");
    // 2 (set), 1 (the reclaim by B's attempt), 1 (the reclaim by A's count), 2 (B's release)
    expect_sem_messages(env, &watch, &name, &["2", "1", "1", "2"]).await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "{} (pid {pid}) took {n} permits with {CRASH_LEASE_MS} ms leases (ending {:.0} ms apart) and was SIGKILLed ({how}) {:.0} ms before the first ended; the {} waiter got a permit {lat:.1} ms after that lease end, reclaiming 1, A's count the other; A's release of a dead id refused (`{refusal}`); messages 2, 1, 1, 2",
            holder.what(),
            last_end - first_end,
            first_end - t_dead,
            b.lang(),
        ),
    })
}
