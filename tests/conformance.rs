//! What every lock kind does, written once and run for all eight kinds (async through the
//! crate's `AnyLock`, blocking through the test-side `BlockingLock`), against a real
//! redis-server: acquire and release with their Redis effects, a rival waiting and being woken,
//! a lease ending the hold (reported through `lost()`), a Redis restart reported through
//! `lost()`, waits cancelled at many points leaving nothing behind, bad input refused without a
//! write, the cost of waiting (no polling while subscribed), and `run` (async and blocking)
//! holding the lock exactly while its body runs, also when the body fails or is dropped. A new
//! kind gets all of it by one line in `tests/common/kinds.rs` (`KINDS`, `open`, `run` and
//! `BlockingLock::open`).

mod common;

use std::time::{Duration, Instant};

use common::kinds::{self, BlockingLock, KINDS};
use common::{eventually, init_tracing, leftovers, script_calls, RedisServer};
use redisson_lock::inspect::inspect;
use redisson_lock::{Config, Error, LostReason, Ttl, Unlocked};

/// Generous bound on wake-ups and expiry (the spin lock polls with a back-off capped at 128 ms).
const WAKE: Duration = Duration::from_secs(5);

fn config() -> Config {
    Config::default()
        .with_command_timeout(Duration::from_secs(2))
        .with_lock_watchdog_timeout(Duration::from_secs(3))
}

/// What a kind leaves in Redis once nothing is held: the fencing token counter (Redisson never
/// deletes it) and nothing else once the unlock latches are gone.
async fn settled(raw: &redis::aio::MultiplexedConnection, what: &str) {
    eventually(WAKE, what, || {
        let mut r = raw.clone();
        async move { leftovers(&mut r).await.is_empty() }
    })
    .await;
}

/// What is left in Redis besides unlock latches and acquire records (which expire by
/// themselves within the settle window) and the fencing token counters.
async fn left_besides_latches(raw: &mut redis::aio::MultiplexedConnection) -> Vec<String> {
    leftovers(raw)
        .await
        .into_iter()
        .filter(|k| !k.starts_with("redisson_unlock_latch:"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acquire_inspect_release() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(config()).await;
    let mut raw = s.conn().await;
    for kind in KINDS {
        let lock = kinds::open(kind, &c, &format!("basic:{kind}"));
        assert!(!lock.is_locked().await.unwrap(), "{kind}");
        let g = lock.lock().await.unwrap();
        assert!(g.is_held(), "{kind}");
        assert!(lock.is_locked().await.unwrap(), "{kind}");
        assert!(lock.is_held_by(g.owner()).await.unwrap(), "{kind}");
        match lock.remain_time_to_live().await.unwrap() {
            Ttl::Expires(d) => assert!(d <= Duration::from_secs(3) && !d.is_zero(), "{kind}: {d:?}"),
            other => panic!("{kind}: a watchdog-mode hold has the watchdog's TTL, not {other:?}"),
        }
        let hash: Vec<(String, String)> = redis::cmd("HGETALL")
            .arg(lock.key())
            .query_async(&mut raw)
            .await
            .unwrap();
        assert!(
            hash.iter().any(|(f, n)| f == g.field() && n == "1"),
            "{kind}: the hold is the owner's field with count 1: {hash:?}"
        );
        assert_eq!(g.token().is_some(), kind == "fenced", "{kind}");
        assert_eq!(g.unlock().await.unwrap(), Unlocked::Released, "{kind}");
        assert!(!lock.is_locked().await.unwrap(), "{kind}");
        assert_eq!(
            lock.remain_time_to_live().await.unwrap(),
            Ttl::NotLocked,
            "{kind}"
        );
    }
    settled(&raw, "every kind leaves nothing once released").await;
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rival_waits_and_is_woken() {
    init_tracing();
    let s = RedisServer::start();
    let a = s.client(config()).await;
    let b = s.client(config()).await;
    let mut raw = s.conn().await;
    for kind in KINDS {
        let name = format!("rival:{kind}");
        let held = kinds::open(kind, &a, &name).lock().await.unwrap();
        let rival = kinds::rival(kind, &b, &name);
        let started = Instant::now();
        assert!(
            rival
                .try_lock_for(Duration::from_millis(150))
                .await
                .unwrap()
                .is_none(),
            "{kind}: refused while held"
        );
        assert!(
            started.elapsed() >= Duration::from_millis(150),
            "{kind}: waited its wait"
        );
        let before = script_calls(&mut raw).await;
        let waiter = tokio::spawn(async move {
            let g = rival.lock().await;
            (Instant::now(), g)
        });
        // the waiter is waiting (its first attempt was refused) before the holder lets go
        eventually(WAKE, "the waiter's first attempt", || {
            let mut r = raw.clone();
            async move { script_calls(&mut r).await > before }
        })
        .await;
        let released = Instant::now();
        held.unlock().await.unwrap();
        let (got_at, g) = tokio::time::timeout(WAKE, waiter)
            .await
            .unwrap_or_else(|_| panic!("{kind}: the waiter was not woken within {WAKE:?}"))
            .unwrap();
        let g = g.unwrap();
        eprintln!(
            "{kind}: woken {:?} after the unlock",
            got_at.saturating_duration_since(released)
        );
        g.unlock().await.unwrap();
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_ends_the_hold_and_lost_reports_it() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(config()).await;
    let other = s.client(config()).await;
    for kind in KINDS {
        let name = format!("lease:{kind}");
        let lock = kinds::open(kind, &c, &name);
        let g = lock.lock_with_lease(Duration::from_millis(300)).await.unwrap();
        assert_eq!(g.lease(), Some(Duration::from_millis(300)), "{kind}");
        let why = tokio::time::timeout(WAKE, g.lost())
            .await
            .unwrap_or_else(|_| panic!("{kind}: lost() did not fire within {WAKE:?} of a 300 ms lease"));
        assert_eq!(why, LostReason::LeaseExpired, "{kind}");
        assert!(!g.is_held(), "{kind}");
        let taken = kinds::rival(kind, &other, &name)
            .try_lock_for(Duration::from_secs(1))
            .await
            .unwrap();
        assert!(taken.is_some(), "{kind}: free once the lease ran out");
        let late = g.unlock().await;
        assert!(matches!(late, Err(Error::NotHeld { .. })), "{kind}: {late:?}");
        taken.unwrap().unlock().await.unwrap();
    }
    c.shutdown().await.unwrap();
    other.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_that_loses_the_hold_is_reported_through_lost() {
    init_tracing();
    let mut s = RedisServer::start();
    let c = s.client(config()).await;
    let mut guards = Vec::new();
    for kind in KINDS {
        guards.push((
            kind,
            kinds::open(kind, &c, &format!("restart:{kind}"))
                .lock()
                .await
                .unwrap(),
        ));
    }
    s.restart(); // no persistence: every hold is gone
    for (kind, g) in &guards {
        // renewals run every watchdog timeout / 3 = 1 s; a reconnect may add a few seconds
        let why = tokio::time::timeout(Duration::from_secs(15), g.lost())
            .await
            .unwrap_or_else(|_| panic!("{kind}: the lost hold was not reported"));
        assert!(
            matches!(why, LostReason::OwnerGone | LostReason::RenewalFailed),
            "{kind}: {why:?}"
        );
    }
    // and the locks work again
    for kind in KINDS {
        let g = kinds::open(kind, &c, &format!("restart:{kind}"))
            .lock()
            .await
            .unwrap();
        g.unlock().await.unwrap();
    }
    drop(guards);
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_cancelled_at_any_point_leave_nothing_behind() {
    init_tracing();
    let s = RedisServer::start();
    let a = s.client(config()).await;
    let b = s.client(config()).await;
    let mut raw = s.conn().await;
    for kind in KINDS {
        let name = format!("cancel:{kind}");
        let held = kinds::open(kind, &a, &name).lock().await.unwrap();
        let rival = kinds::rival(kind, &b, &name);
        // cancel the wait at many points: before the first request is sent, while it is in
        // Redis, while subscribed, between attempts
        for k in 0..16u64 {
            let r = tokio::time::timeout(Duration::from_micros(k * k * 150), rival.lock()).await;
            assert!(r.is_err(), "{kind}: granted while held: {r:?}");
        }
        held.unlock().await.unwrap();
        // nobody took it: the cancelled waits left no queue entry, no hold
        let g = kinds::rival(kind, &a, &name)
            .try_lock_for(WAKE)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{kind}: a cancelled waiter kept the lock from others"));
        g.unlock().await.unwrap();
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
    // what may remain: the markers of attempts that never ran (they expire by themselves)
    let left = left_besides_latches(&mut raw).await;
    assert_eq!(
        left,
        Vec::<String>::new(),
        "no lock, queue or deadline entry is left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_typed_error_and_writes_nothing() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(config()).await;
    let mut raw = s.conn().await;
    assert!(matches!(c.lock(""), Err(Error::InvalidArgument(_))));
    assert!(matches!(c.fair_lock(""), Err(Error::InvalidArgument(_))));
    assert!(matches!(c.fenced_lock(""), Err(Error::InvalidArgument(_))));
    assert!(matches!(c.spin_lock(""), Err(Error::InvalidArgument(_))));
    assert!(matches!(c.non_reentrant_lock(""), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        c.non_reentrant_fair_lock(""),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(c.read_write_lock(""), Err(Error::InvalidArgument(_))));
    for kind in KINDS {
        let lock = kinds::open(kind, &c, &format!("bad:{kind}"));
        let r = lock.lock_with_lease(Duration::ZERO).await;
        assert!(
            matches!(r, Err(Error::InvalidArgument(_))),
            "{kind}: zero lease: {r:?}"
        );
        let r = lock
            .try_lock_with_lease(Duration::from_millis(10), Duration::ZERO)
            .await;
        assert!(
            matches!(r, Err(Error::InvalidArgument(_))),
            "{kind}: zero lease: {r:?}"
        );
        // a key of another type under the lock's name
        let _: () = redis::cmd("SET")
            .arg(lock.key())
            .arg("x")
            .query_async(&mut raw)
            .await
            .unwrap();
        let r = lock.try_lock_for(Duration::from_millis(50)).await;
        assert!(matches!(r, Err(Error::WrongType { .. })), "{kind}: {r:?}");
        let v: String = redis::cmd("GET")
            .arg(lock.key())
            .query_async(&mut raw)
            .await
            .unwrap();
        assert_eq!(v, "x", "{kind}: the other key is untouched");
        let _: () = redis::cmd("DEL")
            .arg(lock.key())
            .query_async(&mut raw)
            .await
            .unwrap();
    }
    c.shutdown().await.unwrap();
    let left = left_besides_latches(&mut raw).await;
    assert_eq!(left, Vec::<String>::new(), "bad input wrote nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_costs_no_polling_while_subscribed() {
    init_tracing();
    let s = RedisServer::start();
    // the waiters' own calls (the holder's loss watch reads its hold when Redis reports a change)
    let quiet = config().with_loss_detection(redisson_lock::LossDetection::Renewal);
    let a = s.client(quiet.clone()).await;
    let b = s.client(quiet).await;
    let mut raw = s.conn().await;
    for kind in KINDS {
        let name = format!("cost:{kind}");
        let held = kinds::open(kind, &a, &name)
            .lock_with_lease(Duration::from_secs(30))
            .await
            .unwrap();
        let rival = kinds::rival(kind, &b, &name);
        let before = script_calls(&mut raw).await;
        let started = Instant::now();
        let r = rival.try_lock_for(Duration::from_secs(2)).await.unwrap();
        assert!(r.is_none(), "{kind}");
        let calls = script_calls(&mut raw).await - before;
        // the client's batched check for locks gone without a message: once per poll interval
        // (1 s by default, 90-100 % jittered), whatever the number of waiters
        let checks = (started.elapsed().as_millis() / 900 + 1) as u64;
        eprintln!("{kind}: {calls} script calls during a 2 s wait ({checks} batched checks at most)");
        if kind == "spin" {
            // the spin lock polls by design (back-off capped at 128 ms)
            assert!(calls > 10, "spin: {calls}");
        } else {
            // three attempts (the first, one once subscribed, one as the wait runs out), a fair
            // waiter's give-up, and the batched checks: nothing per waiter while it listens
            let attempts = 3 + u64::from(kinds::queues(kind));
            assert!(
                calls <= attempts + checks,
                "{kind}: {calls} script calls while subscribed"
            );
        }
        held.unlock().await.unwrap();
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[test]
fn blocking_acquire_contend_release() {
    init_tracing();
    let s = RedisServer::start();
    let a = redisson_lock::blocking::Client::connect_with(&s.url(), config()).unwrap();
    let b = redisson_lock::blocking::Client::connect_with(&s.url(), config()).unwrap();
    let mut sync = redis::Client::open(s.url()).unwrap().get_connection().unwrap();
    let mut calls = move || -> String {
        // the `EVALSHA` line of `INFO commandstats`: changes with every script call
        let info: String = redis::cmd("INFO").arg("commandstats").query(&mut sync).unwrap();
        info.lines()
            .find(|l| l.starts_with("cmdstat_evalsha:"))
            .unwrap_or("")
            .to_owned()
    };
    for kind in KINDS {
        let name = format!("blocking:{kind}");
        let held = BlockingLock::open(kind, &a, &name).lock().unwrap();
        let rival_kind = if kind == "read" { "write" } else { kind };
        let rival = BlockingLock::open(rival_kind, &b, &name);
        assert!(
            rival.try_lock_for(Duration::from_millis(100)).unwrap().is_none(),
            "{kind}"
        );
        let before = calls();
        let waiter = std::thread::spawn(move || rival.lock().map(|g| g.unlock()));
        // the waiter is waiting (its first attempt was refused) before the holder lets go
        let started = Instant::now();
        while calls() == before {
            assert!(started.elapsed() < WAKE, "{kind}: the waiter never tried");
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(held.unlock().unwrap(), Unlocked::Released, "{kind}");
        let started = Instant::now();
        while !waiter.is_finished() {
            assert!(
                started.elapsed() < WAKE,
                "{kind}: the blocked waiter was not woken"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let r = waiter.join().unwrap().unwrap().unwrap();
        assert_eq!(r, Unlocked::Released, "{kind}");
    }
    a.shutdown().unwrap();
    b.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_holds_the_lock_while_the_body_runs_and_returns_its_output() {
    init_tracing();
    let s = RedisServer::start();
    let a = s.client(config()).await;
    let b = s.client(config()).await;
    let mut raw = s.conn().await;
    for kind in KINDS {
        let name = format!("run:{kind}");
        let rival = kinds::rival(kind, &b, &name);
        let mut conn = raw.clone();
        let (holds, refused, out) = kinds::run(kind, &a, &name, async {
            let info = inspect(&mut conn, &name).await.unwrap();
            let holds: Vec<u64> = info.holders.iter().map(|h| h.hold_count).collect();
            let rival_got = rival.try_lock_for(Duration::from_millis(100)).await.unwrap();
            (holds, rival_got.is_none(), format!("output of {kind}"))
        })
        .await
        .unwrap();
        assert_eq!(holds, vec![1], "{kind}: one hold while the body runs");
        assert!(refused, "{kind}: a rival is refused while the body runs");
        assert_eq!(out, format!("output of {kind}"), "{kind}: the body's output");
        // released before `run` returned: nothing to wait for
        let info = inspect(&mut raw, &name).await.unwrap();
        assert!(!info.is_locked(), "{kind}: still held after run: {info:?}");
        assert_eq!(
            left_besides_latches(&mut raw).await,
            Vec::<String>::new(),
            "{kind}: nothing left after run"
        );
        let g = rival.try_lock_for(Duration::ZERO).await.unwrap();
        g.unwrap_or_else(|| panic!("{kind}: a rival is refused after run"))
            .unlock()
            .await
            .unwrap();
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_hands_back_the_body_error_and_releases() {
    init_tracing();
    let s = RedisServer::start();
    let a = s.client(config()).await;
    let b = s.client(config()).await;
    let mut raw = s.conn().await;
    for kind in KINDS {
        let name = format!("run-err:{kind}");
        let r = kinds::run(kind, &a, &name, async { Err::<u32, _>(format!("{kind} failed")) }).await;
        match r {
            Ok(Err(e)) => assert_eq!(e, format!("{kind} failed"), "{kind}"),
            other => panic!("{kind}: the body's error comes back as Ok(Err(..)), not {other:?}"),
        }
        let info = inspect(&mut raw, &name).await.unwrap();
        assert!(
            !info.is_locked(),
            "{kind}: still held after a failed body: {info:?}"
        );
        assert_eq!(
            left_besides_latches(&mut raw).await,
            Vec::<String>::new(),
            "{kind}: nothing left after a failed body"
        );
        let g = kinds::rival(kind, &b, &name)
            .try_lock_for(Duration::ZERO)
            .await
            .unwrap();
        g.unwrap_or_else(|| panic!("{kind}: a rival is refused after a failed body"))
            .unlock()
            .await
            .unwrap();
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_dropped_while_its_body_waits_releases_the_lock() {
    init_tracing();
    let s = RedisServer::start();
    // a hold nobody releases outlives the rival's wait by far (nothing renews it, but its TTL
    // is the 30 s watchdog timeout): only the release of the dropped `run` lets the rival in
    let cfg = || config().with_lock_watchdog_timeout(Duration::from_secs(30));
    let a = s.client(cfg()).await;
    let b = s.client(cfg()).await;
    let mut raw = s.conn().await;
    for kind in KINDS {
        let name = format!("run-drop:{kind}");
        let rival = kinds::rival(kind, &b, &name);
        let (started, body_started) = tokio::sync::oneshot::channel();
        let mut run = Box::pin(kinds::run(kind, &a, &name, async move {
            started.send(()).unwrap();
            std::future::pending::<()>().await
        }));
        tokio::select! {
            r = run.as_mut() => panic!("{kind}: run of a pending body ended: {r:?}"),
            s = body_started => s.unwrap(),
        }
        assert!(
            rival.try_lock_for(Duration::ZERO).await.unwrap().is_none(),
            "{kind}: a rival is refused while the body waits"
        );
        // the body is still pending: `timeout` gives up and drops the `run` future
        let r = tokio::time::timeout(Duration::from_millis(50), run).await;
        assert!(r.is_err(), "{kind}: run of a pending body ended: {r:?}");
        let dropped = Instant::now();
        let g = rival
            .try_lock_for(Duration::from_secs(10))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{kind}: the dropped run kept the lock for 10 s"));
        eprintln!("{kind}: the rival got in {:?} after the drop", dropped.elapsed());
        g.unlock().await.unwrap();
        assert_eq!(
            left_besides_latches(&mut raw).await,
            Vec::<String>::new(),
            "{kind}: nothing left once the rival let go"
        );
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[test]
fn blocking_run_returns_the_output_and_releases() {
    init_tracing();
    let s = RedisServer::start();
    let a = redisson_lock::blocking::Client::connect_with(&s.url(), config()).unwrap();
    let b = redisson_lock::blocking::Client::connect_with(&s.url(), config()).unwrap();
    let mut sync = redis::Client::open(s.url()).unwrap().get_connection().unwrap();
    let mut left = move || -> Vec<String> {
        let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut sync).unwrap();
        let mut left: Vec<String> = keys
            .into_iter()
            .filter(|k| !k.starts_with("redisson_unlock_latch:") && !k.starts_with("redisson_lock_token:"))
            .collect();
        left.sort();
        left
    };
    for kind in KINDS {
        let name = format!("blocking-run:{kind}");
        let lock = BlockingLock::open(kind, &a, &name);
        let rival = BlockingLock::open(if kind == "read" { "write" } else { kind }, &b, &name);
        let (held, refused, out) = lock
            .run(|| {
                let held = lock.is_locked().unwrap();
                let rival_got = rival.try_lock_for(Duration::from_millis(100)).unwrap();
                (held, rival_got.is_none(), format!("output of {kind}"))
            })
            .unwrap();
        assert!(held, "{kind}: locked while the body runs");
        assert!(refused, "{kind}: a rival is refused while the body runs");
        assert_eq!(out, format!("output of {kind}"), "{kind}: the body's output");
        assert!(!lock.is_locked().unwrap(), "{kind}: still held after run");
        assert_eq!(left(), Vec::<String>::new(), "{kind}: nothing left after run");
        let r = lock.run(|| Err::<u32, _>(format!("{kind} failed"))).unwrap();
        assert_eq!(r, Err(format!("{kind} failed")), "{kind}");
        assert!(
            !lock.is_locked().unwrap(),
            "{kind}: still held after a failed body"
        );
        let g = rival.try_lock_for(Duration::ZERO).unwrap();
        g.unwrap_or_else(|| panic!("{kind}: a rival is refused after run"))
            .unlock()
            .unwrap();
        assert_eq!(left(), Vec::<String>::new(), "{kind}: nothing left");
    }
    a.shutdown().unwrap();
    b.shutdown().unwrap();
}
