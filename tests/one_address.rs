//! A cluster behind one address (a cluster proxy, a serverless endpoint): it looks like one
//! server, but refuses a script or multi-key command over several hash slots (`CROSSSLOT`).
//! Stood in for by a cluster-enabled redis-server that owns every slot, reached through a plain
//! `redis://` URL. Every lock kind and synchronizer works there as on a plain server: holds of
//! several slots survive renewal rounds, re-enter, release, wake their waiters, report a loss;
//! the batched calls (renewal, the latch janitor's `DEL`, the check for locks gone without a
//! message) are grouped by slot, detected at connect, or learned from the first refusal.

mod common;

use common::kept::Kept;
use std::time::{Duration, Instant};

use common::cluster::one_address;
use common::kinds::{self, KINDS};
use common::{eventually, init_tracing, key_exists, pttl};
use redis::AsyncCommands;
use redisson_lock::{Config, Error, LostReason, OwnerId, Unlocked};

/// A short watchdog: a renewal every second, holds gone 3 s after the last one.
const WATCHDOG: Duration = Duration::from_secs(3);
/// Far below the subscribed fallback poll (30 s): only a message or the gone-key check is
/// this fast.
const WOKEN: Duration = Duration::from_secs(5);

fn config() -> Config {
    Config::default().with_lock_watchdog_timeout(WATCHDOG)
}

/// How many calls the server refused with `CROSSSLOT` (`INFO errorstats`, Redis 6.2+; `None`
/// before).
async fn cross_slot_refusals(raw: &mut redis::aio::MultiplexedConnection) -> Option<u64> {
    let info: String = redis::cmd("INFO").arg("errorstats").query_async(raw).await.ok()?;
    if !info.contains("errorstat_") && !info.contains("# Errorstats") {
        return None;
    }
    Some(
        info.lines()
            .find_map(|l| l.strip_prefix("errorstat_CROSSSLOT:count="))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0),
    )
}

/// The names of the holds, one per kind, spread over several slots (one slot each).
fn name(kind: &str, i: usize) -> String {
    format!("px:{kind}:{i}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_lock_kind_keeps_its_holds_through_renewal_rounds() {
    init_tracing();
    let s = one_address(&[]).await;
    let mut raw = s.conn().await;
    let before = cross_slot_refusals(&mut raw).await;
    let c = s.client(config()).await;
    let waiter = s.client(config()).await;
    // what the probe at connect costs: one refusal per client, nothing more below
    let probed = cross_slot_refusals(&mut raw).await;

    // five holds of every kind, on as many slots, in watchdog mode
    let mut held = Vec::new();
    for kind in KINDS {
        for i in 0..5 {
            let lock = kinds::open(kind, &c, &name(kind, i));
            held.push((kind, i, lock.lock().await.unwrap()));
        }
    }
    // past the watchdog timeout: only renewal rounds (at least two) keep them
    tokio::time::sleep(WATCHDOG + WATCHDOG / 2).await;
    for (kind, i, g) in &held {
        assert!(g.is_held(), "{kind} {i}: {:?}", g.state());
        let ttl = pttl(&mut raw, &name(kind, *i)).await;
        assert!(ttl > 0, "{kind} {i}: PTTL {ttl}");
    }
    if let (Some(b), Some(p), Some(now)) = (before, probed, cross_slot_refusals(&mut raw).await) {
        assert_eq!(p - b, 2, "the probe of each client");
        assert_eq!(
            now, p,
            "no call after connect was refused: grouped by slot from the start"
        );
    }

    // a waiter on each is woken by the release (a rival for the read lock: the write lock)
    let mut waits = Vec::new();
    for (kind, i, _) in &held {
        if *i != 0 {
            continue;
        }
        let rival = kinds::rival(kind, &waiter, &name(kind, 0));
        waits.push((
            *kind,
            tokio::spawn(async move {
                let g = rival.try_lock_for(Duration::from_secs(60)).await?;
                Ok::<_, Error>((g.map(|g| g.forget()).is_some(), Instant::now()))
            }),
        ));
    }
    eventually(Duration::from_secs(5), "every waiter is subscribed", || {
        let waiter = waiter.clone();
        // (the spin lock's waiter polls: it does not subscribe)
        async move { waiter.stats().waiters >= KINDS.len() - 1 }
    })
    .await;
    // releases of many slots at once: the janitor deletes their latches in one batch per slot
    let released = Instant::now();
    let results = futures::future::join_all(
        held.into_iter()
            .map(|(kind, i, g)| async move { (kind, i, g.unlock().await) }),
    )
    .await;
    for (kind, i, r) in results {
        assert_eq!(r.unwrap(), Unlocked::Released, "{kind} {i}");
    }
    for (kind, w) in waits {
        let (got, at) = w.await.unwrap().unwrap();
        assert!(got, "{kind}: the waiter got the lock");
        assert!(at - released < WOKEN, "{kind}: woken after {:?}", at - released);
    }
    eventually(
        Duration::from_secs(5),
        "the janitor deleted every latch (they would live for seconds more)",
        || {
            let mut raw = raw.clone();
            async move {
                let left: Vec<String> = raw.keys("redisson_unlock_latch:*").await.unwrap();
                left.is_empty()
            }
        },
    )
    .await;
    waiter.shutdown().await.unwrap();
    c.shutdown().await.unwrap();
    if let (Some(p), Some(now)) = (probed, cross_slot_refusals(&mut raw).await) {
        assert_eq!(now, p, "nothing was refused");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn re_entry_and_the_loss_signal_work_for_every_kind() {
    init_tracing();
    let s = one_address(&[]).await;
    let mut raw = s.conn().await;
    let c = s.client(config()).await;
    for kind in KINDS {
        let key = name(kind, 7);
        let lock = kinds::open(kind, &c, &key).with_owner(OwnerId::from(7));
        let g = lock.lock().await.unwrap();
        let again = lock.try_lock_for(Duration::ZERO).await;
        if kind.starts_with("non_reentrant") {
            assert!(
                matches!(again, Err(Error::AlreadyHeld { .. })),
                "{kind}: {again:?}"
            );
        } else {
            let inner = again.unwrap().expect("a re-entry");
            assert_eq!(lock.hold_count().await.unwrap(), 2, "{kind}");
            assert_eq!(inner.unlock().await.unwrap(), Unlocked::Partial, "{kind}");
        }
        // deleted behind the holder's back: its guard learns it
        let _: () = raw.del(&key).await.unwrap();
        let reason = tokio::time::timeout(WATCHDOG, g.lost())
            .await
            .unwrap_or_else(|_| panic!("{kind}: no loss signal"));
        assert_eq!(reason, LostReason::OwnerGone, "{kind}");
        assert!(!key_exists(&mut raw, &key).await, "{kind}: not re-created");
    }
    c.shutdown().await.unwrap();
}

/// Waiters of locks on several slots whose keys are deleted without a message: the batched
/// check for gone locks wakes them within a poll interval (1 s), not their holders' TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_of_locks_deleted_without_a_message_are_woken() {
    init_tracing();
    let s = one_address(&[]).await;
    let mut raw = s.conn().await;
    let holder = s.client(Config::default()).await;
    let c = s.client(Config::default()).await;
    let names: Vec<String> = (0..6).map(|i| format!("gone:{i}")).collect();
    for n in &names {
        holder
            .lock(n)
            .unwrap()
            .lock_with_lease(Duration::from_secs(120))
            .await
            .unwrap()
            .forget();
    }
    let waits: Vec<_> = names
        .iter()
        .map(|n| {
            let lock = c.lock(n).unwrap();
            tokio::spawn(async move { lock.try_lock_for(Duration::from_secs(60)).await })
        })
        .collect();
    eventually(Duration::from_secs(5), "every waiter is subscribed", || {
        let c = c.clone();
        async move { c.stats().watched_keys >= 6 }
    })
    .await;
    let deleted = Instant::now();
    for n in &names {
        let _: () = raw.del(n).await.unwrap();
    }
    for w in waits {
        let g = w.await.unwrap().unwrap().expect("the lock");
        assert!(deleted.elapsed() < WOKEN, "woken after {:?}", deleted.elapsed());
        g.unlock().await.unwrap();
    }
    c.shutdown().await.unwrap();
    holder.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_synchronizers_work_there_too() {
    init_tracing();
    let s = one_address(&[]).await;
    let c = s.client(Config::default()).await;
    let other = s.client(Config::default()).await;

    let sem = c.semaphore("px:sem").unwrap();
    assert!(sem.try_set_permits(1).await.unwrap());
    sem.acquire(1).await.kept().unwrap();
    let waiting = {
        let sem = other.semaphore("px:sem").unwrap();
        tokio::spawn(async move { sem.try_acquire_for(1, Duration::from_secs(60)).await.kept() })
    };
    eventually(
        Duration::from_secs(5),
        "the semaphore waiter is subscribed",
        || {
            let other = other.clone();
            async move { other.stats().waiters >= 1 }
        },
    )
    .await;
    let released = Instant::now();
    sem.release(1).await.unwrap();
    assert!(waiting.await.unwrap().unwrap(), "the waiter got the permit");
    assert!(released.elapsed() < WOKEN);

    let pes = c.permit_expirable_semaphore("px:pes").unwrap();
    assert!(pes.try_set_permits(2).await.unwrap());
    let a = pes.acquire().await.kept().unwrap();
    pes.acquire_with_lease(Duration::from_millis(300))
        .await
        .kept()
        .unwrap();
    let third = {
        let pes = other.permit_expirable_semaphore("px:pes").unwrap();
        tokio::spawn(async move { pes.try_acquire_for(Duration::from_secs(60), None).await.kept() })
    };
    // the leased permit comes back when its lease ends
    assert!(
        third.await.unwrap().unwrap().is_some(),
        "a permit after the lease ended"
    );
    pes.release(a).await.unwrap();

    let latch = c.count_down_latch("px:latch").unwrap();
    assert!(latch.try_set_count(2).await.unwrap());
    let waiting = {
        let latch = other.count_down_latch("px:latch").unwrap();
        tokio::spawn(async move { latch.wait_for(Duration::from_secs(60)).await })
    };
    latch.count_down().await.unwrap();
    latch.count_down().await.unwrap();
    assert!(waiting.await.unwrap().unwrap(), "the latch opened");
    other.shutdown().await.unwrap();
    c.shutdown().await.unwrap();
}

/// An endpoint the probe at connect could not ask (an ACL narrowed to the lock names, without
/// the probe's two keys: the probe is refused `NOPERM`): the first renewal round is refused
/// `CROSSSLOT`, the client switches to per-slot calls at once and sends the round again, and no
/// hold is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_met_after_connect_switches_to_per_slot_calls_and_keeps_the_holds() {
    init_tracing();
    let s = one_address(&[]).await;
    let mut raw = s.conn().await;
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("default")
        .arg("resetkeys")
        .arg("~px:*")
        .arg("~redisson_*")
        .query_async(&mut raw)
        .await
        .unwrap();
    let c = s.client(config()).await;
    let before = cross_slot_refusals(&mut raw).await;
    let mut held = Vec::new();
    for i in 0..5 {
        let n = format!("px:{}", (b'a' + i) as char);
        held.push((n.clone(), c.lock(&n).unwrap().lock().await.unwrap()));
    }
    // past the watchdog timeout: the holds live only if a refused round was sent again grouped
    tokio::time::sleep(WATCHDOG + WATCHDOG / 2).await;
    for (n, g) in &held {
        assert!(g.is_held(), "{n}: {:?}", g.state());
        assert!(pttl(&mut raw, n).await > 0, "{n}");
    }
    if let (Some(b), Some(now)) = (before, cross_slot_refusals(&mut raw).await) {
        assert_eq!(now - b, 1, "one round was refused, then every call went per slot");
    }
    for (n, g) in held {
        assert_eq!(g.unlock().await.unwrap(), Unlocked::Released, "{n}");
    }
    c.shutdown().await.unwrap();
}
