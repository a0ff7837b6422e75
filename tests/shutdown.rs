//! Shutdown, and answers that come after their caller gave up, for every lock kind, async and
//! blocking.
//!
//! What is promised: after `Client::shutdown` returns, no acquisition of the client is waiting,
//! in flight or being settled, and every hold any of them produced has been released; later
//! acquisitions fail with `Error::Shutdown` without touching Redis. A grant found after its caller
//! gave up is released whatever its deadline says. `try_lock_for(wait)` returns within `wait`
//! plus one command timeout. An acquire's record in Redis lives no longer than settling it can
//! take, and a shutdown leaves none.
//!
//! Redis is made slow with `CLIENT PAUSE <ms> ALL`: requests sent meanwhile wait in Redis and run
//! when the pause ends, after their senders stopped waiting for the reply.

mod common;

use std::time::{Duration, Instant};

use common::kinds::{self, queues, BlockingLock, KINDS};
use common::{eventually, init_tracing, key_exists, leftovers, pause_all, pttl, script_calls, RedisServer};
use redisson_lock::{blocking, Config, Error, OwnerId};

/// The command timeout of the clients under test.
const CT: Duration = Duration::from_millis(500);

fn config() -> Config {
    Config::default()
        .with_command_timeout(CT)
        .with_retry_interval(Duration::from_millis(100))
}

/// A 3 s watchdog (a grant is trusted for 2.5 s after it was sent), settled for 5 s (the retry
/// window): a 3 s pause makes every grant late, and its settling still sees the end of it.
fn late_config() -> Config {
    config()
        .with_lock_watchdog_timeout(Duration::from_secs(3))
        .with_retry_interval(Duration::from_millis(500))
}

/// How long an acquire attempt's record may live: the retry window plus one command timeout
/// (`docs/guarantees.md`), for `config`.
fn settle_window(config: &Config) -> Duration {
    config.settle_window()
}

/// A raw connection that waits out a pause (the default reply timeout would not).
async fn patient_conn(s: &RedisServer) -> redis::aio::MultiplexedConnection {
    common::faults::admin_conn(&s.url(), None).await.unwrap()
}

/// Runs one acquisition and release of every kind, so that every script is loaded (a `NOSCRIPT`
/// reply is not ambiguous: the tests below want the first request of each kind to run).
async fn load_scripts(client: &redisson_lock::Client) {
    for kind in KINDS {
        let g = kinds::open(kind, client, &format!("warm-up:{kind}"))
            .lock()
            .await
            .unwrap();
        g.unlock().await.unwrap();
    }
}

/// The unlock latches and acquire records in Redis.
async fn latches(raw: &mut redis::aio::MultiplexedConnection) -> Vec<String> {
    redis::cmd("KEYS")
        .arg("redisson_unlock_latch:*")
        .query_async(raw)
        .await
        .unwrap()
}

/// Splits what is left in Redis into the keys that must not be there and the number of
/// cancellation markers: an aborted acquisition that had not reached Redis yet (still queued
/// in the client's connection) is settled by writing a marker that makes sure no copy of it can
/// ever apply. A marker names no lock, and it must expire within `window`.
async fn split_markers(
    raw: &mut redis::aio::MultiplexedConnection,
    window: Duration,
) -> (Vec<String>, usize) {
    let mut left = Vec::new();
    let mut markers = 0;
    for k in leftovers(raw).await {
        let v: Option<String> = if k.starts_with("redisson_unlock_latch:") {
            redis::cmd("GET").arg(&k).query_async(raw).await.unwrap()
        } else {
            None
        };
        if v.as_deref() == Some("cancelled") {
            let ttl = pttl(raw, &k).await;
            assert!(
                ttl > 0 && ttl <= window.as_millis() as i64,
                "marker `{k}` lives {ttl} ms (settle window {window:?})"
            );
            markers += 1;
        } else {
            let ttl = pttl(raw, &k).await;
            left.push(format!("{k} = {v:?}, pttl {ttl} ms"));
        }
    }
    (left, markers)
}

/// Asserts that every unlock latch and acquire record in Redis expires within `window`; returns
/// how many there are.
async fn latches_within(raw: &mut redis::aio::MultiplexedConnection, window: Duration) -> usize {
    let left = latches(raw).await;
    for k in &left {
        let ttl = pttl(raw, k).await;
        assert!(
            ttl > 0 && ttl <= window.as_millis() as i64,
            "`{k}` lives {ttl} ms (settle window {window:?})"
        );
    }
    left.len()
}

/// A waiting acquisition of every kind ends with `Error::Shutdown` within one command timeout
/// of `shutdown()` and is never granted: when the holder lets go, nobody takes the lock, and
/// the fair queues hold no entry of the client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_every_waiting_acquisition_without_a_grant() {
    init_tracing();
    let s = RedisServer::start();
    let holder = s.client(config()).await;
    let a = s.client(config()).await;
    let mut raw = patient_conn(&s).await;
    let mut held = Vec::new();
    let mut waiting = Vec::new();
    for kind in KINDS {
        let name = format!("waiting:{kind}");
        held.push(kinds::rival(kind, &holder, &name).lock().await.unwrap());
        let before = script_calls(&mut raw).await;
        let lock = kinds::open(kind, &a, &name);
        waiting.push((
            kind,
            tokio::spawn(async move { lock.lock().await.map(|g| g.field().to_owned()) }),
        ));
        eventually(Duration::from_secs(5), "the waiter was refused once", || {
            let mut raw = raw.clone();
            async move { script_calls(&mut raw).await > before }
        })
        .await;
    }
    let started = Instant::now();
    a.shutdown().await.expect("shutdown");
    for (kind, task) in waiting {
        let left = (CT + Duration::from_secs(1)).saturating_sub(started.elapsed());
        let r = tokio::time::timeout(left, task)
            .await
            .unwrap_or_else(|_| panic!("{kind}: still waiting one command timeout after shutdown"))
            .unwrap();
        assert!(matches!(r, Err(Error::Shutdown)), "{kind}: {r:?}");
    }
    let calls = script_calls(&mut raw).await;
    for kind in KINDS {
        let r = kinds::open(kind, &a, &format!("after:{kind}")).lock().await;
        assert!(matches!(r, Err(Error::Shutdown)), "{kind}: {r:?}");
    }
    assert_eq!(
        script_calls(&mut raw).await,
        calls,
        "acquisitions after shutdown never reach Redis"
    );
    for g in held {
        g.unlock().await.unwrap();
    }
    holder.shutdown().await.unwrap();
    assert_eq!(
        leftovers(&mut raw).await,
        Vec::<String>::new(),
        "nobody took the locks once free, and no queue entry is left"
    );
    let token: Option<String> = redis::cmd("GET")
        .arg("redisson_lock_token:{waiting:fenced}")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(
        token.as_deref(),
        Some("1"),
        "only the holder took a fencing token"
    );
}

/// Acquisitions of every kind are in Redis (sent, not yet run) when `shutdown()` is called;
/// `abort`: their tasks were aborted first (the service gave up on them). Once `shutdown()`
/// returns, every lock they were granted has been released: nothing of the client is left.
async fn shutdown_with_acquisitions_in_flight(abort: bool) {
    init_tracing();
    const PER_KIND: usize = 100;
    let s = RedisServer::start();
    let a = s.client(config()).await;
    let mut raw = patient_conn(&s).await;
    load_scripts(&a).await;
    let pause = Duration::from_secs(2);
    pause_all(&s, pause).await;
    let mut tasks = Vec::new();
    for kind in KINDS {
        for i in 0..PER_KIND {
            let lock = kinds::open(kind, &a, &format!("in-flight:{kind}:{i}"));
            tasks.push((
                kind,
                tokio::spawn(async move { lock.lock().await.map(|g| g.field().to_owned()) }),
            ));
        }
    }
    let all = KINDS.len() * PER_KIND;
    eventually(Duration::from_secs(5), "every acquisition is in flight", || {
        let a = a.clone();
        async move { a.stats().holds >= all }
    })
    .await;
    if abort {
        for (_, t) in &tasks {
            t.abort();
        }
    }
    let started = Instant::now();
    let r = a.shutdown().await;
    let took = started.elapsed();
    eprintln!(
        "shutdown with {all} acquisitions in flight (aborted: {abort}) while Redis was paused for {pause:?}: {took:?}"
    );
    r.expect("shutdown");
    // every settled attempt leaves its cancellation marker for the settle window (a copy of it
    // still on its way changes nothing, also after its grant's release); no other key
    let (left, markers) = split_markers(&mut raw, settle_window(&config())).await;
    eprintln!("{markers} cancellation markers of settled attempts");
    assert!(markers <= all, "{markers} markers for {all} attempts");
    assert_eq!(
        left,
        Vec::<String>::new(),
        "every lock the acquisitions were granted is released, no latch or queue entry is left"
    );
    assert_eq!(a.stats().holds, 0);
    assert_eq!(a.stats().queued_releases, 0);
    if !abort {
        for (kind, t) in tasks {
            assert!(t.is_finished(), "{kind}: still running after shutdown returned");
            let r = t.await.unwrap();
            assert!(matches!(r, Err(Error::Shutdown)), "{kind}: {r:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_waits_for_acquisitions_in_flight_and_releases_their_grants() {
    shutdown_with_acquisitions_in_flight(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_waits_for_aborted_acquisitions_and_releases_their_grants() {
    shutdown_with_acquisitions_in_flight(true).await;
}

/// An acquisition given up while its request waits in Redis (its future dropped, or its wait
/// over before the reply), and granted only after its hold's trusted time is over (Redis stalled
/// longer than the watchdog timeout): the grant is found by the background settling and
/// released at once, not left to expire with its TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_found_after_its_caller_gave_up_is_released_whatever_its_deadline() {
    init_tracing();
    let s = RedisServer::start();
    // trusted for 2.5 s (3 s less one command timeout); settled within 5 s (the retry window)
    let config = late_config();
    let a = s.client(config).await;
    let mut raw = patient_conn(&s).await;
    load_scripts(&a).await;
    pause_all(&s, Duration::from_secs(3)).await;
    let mut names = Vec::new();
    let mut tries = Vec::new();
    for kind in KINDS {
        let dropped = format!("late:{kind}:dropped");
        let lock = kinds::open(kind, &a, &dropped);
        tries.push(tokio::spawn(async move {
            let r = tokio::time::timeout(Duration::from_millis(100), lock.lock()).await;
            assert!(r.is_err(), "{kind}: granted while Redis is paused?");
        }));
        names.push((kind, dropped));

        let waited = format!("late:{kind}:waited");
        let lock = kinds::open(kind, &a, &waited);
        tries.push(tokio::spawn(async move {
            let r = lock.try_lock_for(Duration::from_millis(50)).await;
            assert!(matches!(&r, Err(e) if e.is_transient()), "{kind}: {r:?}");
        }));
        names.push((kind, waited));
    }
    for t in tries {
        t.await.unwrap();
    }
    eventually(Duration::from_secs(15), "every late grant was settled", || {
        let a = a.clone();
        async move { a.stats().holds == 0 && a.stats().queued_releases == 0 }
    })
    .await;
    for (kind, name) in &names {
        let ttl = pttl(&mut raw, name).await;
        assert_eq!(
            ttl, -2,
            "{kind}: `{name}` is still locked (PTTL {ttl} ms): the late grant was left to expire"
        );
    }
    // and the client can take them at once: it does not wait behind its own phantom holds
    for (kind, name) in &names {
        let g = kinds::open(kind, &a, name)
            .try_lock_for(Duration::ZERO)
            .await
            .unwrap();
        assert!(g.is_some(), "{kind}: `{name}` is not free");
    }
}

/// `try_lock_for(wait)` of every kind returns within `wait` plus one command timeout while
/// Redis does not answer (the fair kinds' give-up included: it finishes in the background),
/// and once Redis answers again nothing of the client is left in the fair queues.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_lock_for_of_every_kind_returns_within_wait_plus_one_command_timeout() {
    init_tracing();
    let s = RedisServer::start();
    let ct = Duration::from_secs(1);
    let config = config().with_command_timeout(ct);
    let holder = s.client(config.clone()).await;
    let a = s.client(config).await;
    let mut raw = patient_conn(&s).await;
    load_scripts(&a).await;
    let mut held = Vec::new();
    for kind in KINDS {
        held.push(
            kinds::rival(kind, &holder, &format!("bound:{kind}"))
                .lock()
                .await
                .unwrap(),
        );
    }
    let wait = Duration::from_millis(200);
    pause_all(&s, Duration::from_secs(4)).await;
    let tries = KINDS.map(|kind| {
        let lock = kinds::open(kind, &a, &format!("bound:{kind}"));
        tokio::spawn(async move {
            let started = Instant::now();
            let r = lock.try_lock_for(wait).await.map(|g| g.is_some());
            (kind, r, started.elapsed())
        })
    });
    for t in tries {
        let (kind, r, took) = t.await.unwrap();
        eprintln!("{kind}: try_lock_for({wait:?}) with Redis paused: {r:?} after {took:?}");
        assert!(!matches!(r, Ok(true)), "{kind}: granted while held");
        assert!(
            took < wait + ct + Duration::from_millis(400),
            "{kind}: took {took:?}, more than the wait ({wait:?}) plus one command timeout ({ct:?})"
        );
    }
    a.shutdown().await.expect("shutdown");
    for kind in KINDS.into_iter().filter(|k| queues(k)) {
        let queue = format!("redisson_lock_queue:{{bound:{kind}}}");
        let len: i64 = redis::cmd("LLEN")
            .arg(&queue)
            .query_async(&mut raw)
            .await
            .unwrap();
        assert_eq!(len, 0, "{kind}: the waiter that gave up is still queued");
        let deadlines = format!("redisson_lock_timeout:{{bound:{kind}}}");
        assert!(
            !key_exists(&mut raw, &deadlines).await,
            "{kind}: its deadline is still recorded"
        );
    }
    for g in held {
        g.unlock().await.unwrap();
    }
}

/// A process that stops without `shutdown()` (its runtime dropped: `main` returned, a crash)
/// leaves acquire records that live no longer than settling them could take; one that shuts
/// down leaves none.
#[test]
fn acquire_records_live_no_longer_than_settling_needs() {
    init_tracing();
    let s = RedisServer::start();
    let config = config();
    let window = settle_window(&config);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut raw = rt.block_on(patient_conn(&s));

    // 200 acquisitions and releases, then the process "exits": its runtime is dropped
    let worker = tokio::runtime::Runtime::new().unwrap();
    worker.block_on(async {
        let c = s.client(config.clone()).await;
        for round in 0..25 {
            for kind in KINDS {
                let lock = kinds::open(kind, &c, &format!("exit:{kind}:{round}"));
                lock.lock().await.unwrap().unlock().await.unwrap();
            }
        }
    });
    worker.shutdown_background();
    let left = rt.block_on(latches_within(&mut raw, window));
    eprintln!("{left} latch keys left by 200 lock/unlock cycles without shutdown");

    // a process that dies while its acquisition waits, unread, in the socket of a stopped Redis:
    // Redis runs it when it continues (the bytes come before the close), and nobody settles it.
    // A pinned owner's attempt records its grant in a latch, whose life is checked here (an
    // owner new to its attempt writes no record: its hold alone expires with its TTL)
    let pid = rt.block_on(common::faults::pid(&s.url())).unwrap();
    let worker = tokio::runtime::Runtime::new().unwrap();
    let stopped = worker.block_on(async {
        let c = s.client(config.clone()).await;
        load_scripts(&c).await;
        let stopped = common::faults::Stopped::new(pid).unwrap();
        let lock = kinds::open("lock", &c, "exit:in-flight").with_owner(OwnerId::from(7));
        drop(tokio::spawn(async move {
            lock.lock().await.map(|g| g.field().to_owned())
        }));
        eventually(
            Duration::from_secs(5),
            "the request waits in Redis' socket",
            || async { common::bytes_waiting_at(s.port) > 0 },
        )
        .await;
        stopped
    });
    worker.shutdown_background();
    drop(stopped);
    let record = rt.block_on(async {
        eventually(Duration::from_secs(5), "the attempt ran", || {
            let mut raw = raw.clone();
            async move { key_exists(&mut raw, "exit:in-flight").await }
        })
        .await;
        latches(&mut raw).await
    });
    let record = record
        .iter()
        .find(|k| k.starts_with("redisson_unlock_latch:{exit:in-flight}:"))
        .expect("the granted attempt left its record");
    let ttl = rt.block_on(pttl(&mut raw, record));
    assert!(
        ttl > 0 && ttl <= window.as_millis() as i64,
        "the record of an acquisition nobody settled lives {ttl} ms (settle window {window:?})"
    );

    // the same work, then shutdown(): nothing left
    rt.block_on(async {
        let _: () = redis::cmd("FLUSHALL").query_async(&mut raw).await.unwrap();
        let c = s.client(config.clone()).await;
        for round in 0..25 {
            for kind in KINDS {
                let lock = kinds::open(kind, &c, &format!("graceful:{kind}:{round}"));
                lock.lock().await.unwrap().unlock().await.unwrap();
            }
        }
        c.shutdown().await.unwrap();
        assert_eq!(leftovers(&mut raw).await, Vec::<String>::new());
    });
}

/// When Redis does not answer at all, `shutdown()` still returns within its bound (the longer of
/// the settle window and the watchdog timeout) and names the locks it could not release.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_against_a_stopped_redis_returns_in_time_and_names_what_it_left() {
    init_tracing();
    let s = RedisServer::start();
    let config = config().with_lock_watchdog_timeout(Duration::from_secs(3));
    let bound = settle_window(&config).max(Duration::from_secs(3));
    let a = s.client(config).await;
    let mut guards = Vec::new();
    for kind in KINDS {
        guards.push(
            kinds::open(kind, &a, &format!("stuck:{kind}"))
                .lock()
                .await
                .unwrap(),
        );
    }
    let pid = common::faults::pid(&s.url()).await.unwrap();
    let stopped = common::faults::Stopped::new(pid).unwrap();
    let started = Instant::now();
    let r = a.shutdown().await;
    let took = started.elapsed();
    drop(stopped);
    eprintln!("shutdown with Redis stopped: {took:?} (bound {bound:?}): {r:?}");
    assert!(
        took < bound + Duration::from_secs(2),
        "took {took:?}, bound {bound:?}"
    );
    match r {
        Err(Error::Unreleased { keys, .. }) => {
            for kind in KINDS {
                let key = format!("stuck:{kind}");
                assert!(keys.contains(&key), "{key} is not named in {keys:?}");
            }
        }
        other => panic!("expected Error::Unreleased, got {other:?}"),
    }
    drop(guards);
}

// ---- the blocking facade ----

fn blocking_client(s: &RedisServer, config: Config) -> blocking::Client {
    blocking::Client::connect_with(&s.url(), config).expect("connect a blocking client")
}

/// A thread blocked in `lock()` returns `Error::Shutdown` within one command timeout of
/// another thread's `shutdown()`, never with the lock.
#[test]
fn blocking_shutdown_ends_every_waiting_acquisition_without_a_grant() {
    init_tracing();
    let s = RedisServer::start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut raw = rt.block_on(patient_conn(&s));
    let holder = blocking_client(&s, config());
    let a = blocking_client(&s, config());
    let mut held = Vec::new();
    let mut waiting = Vec::new();
    for kind in KINDS {
        let name = format!("waiting:{kind}");
        let rival = if kind == "read" { "write" } else { kind };
        held.push(BlockingLock::open(rival, &holder, &name).lock().unwrap());
        let before = rt.block_on(script_calls(&mut raw));
        let lock = BlockingLock::open(kind, &a, &name);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(lock.lock().map(|_| ()));
        });
        rt.block_on(eventually(
            Duration::from_secs(5),
            "the waiter was refused once",
            || {
                let mut raw = raw.clone();
                async move { script_calls(&mut raw).await > before }
            },
        ));
        waiting.push((kind, rx));
    }
    let started = Instant::now();
    a.shutdown().expect("shutdown");
    for (kind, rx) in waiting {
        let left = (CT + Duration::from_secs(1)).saturating_sub(started.elapsed());
        let r = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("{kind}: still waiting one command timeout after shutdown"));
        assert!(matches!(r, Err(Error::Shutdown)), "{kind}: {r:?}");
    }
    for g in held {
        g.unlock().unwrap();
    }
    holder.shutdown().unwrap();
    assert_eq!(rt.block_on(leftovers(&mut raw)), Vec::<String>::new());
}

/// Threads' acquisitions of every kind are in Redis when `shutdown()` is called: once it
/// returns, whatever they were granted has been released and the threads got `Error::Shutdown`.
#[test]
fn blocking_shutdown_waits_for_acquisitions_in_flight() {
    init_tracing();
    const PER_KIND: usize = 10;
    let s = RedisServer::start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut raw = rt.block_on(patient_conn(&s));
    let a = blocking_client(&s, config());
    for kind in KINDS {
        let l = BlockingLock::open(kind, &a, &format!("warm-up:{kind}"));
        l.lock().unwrap().unlock().unwrap();
    }
    rt.block_on(pause_all(&s, Duration::from_secs(2)));
    let mut threads = Vec::new();
    for kind in KINDS {
        for i in 0..PER_KIND {
            let lock = BlockingLock::open(kind, &a, &format!("in-flight:{kind}:{i}"));
            threads.push((kind, std::thread::spawn(move || lock.lock().map(|_| ()))));
        }
    }
    let all = KINDS.len() * PER_KIND;
    rt.block_on(eventually(
        Duration::from_secs(5),
        "every acquisition is in flight",
        || {
            let n = a.stats().holds;
            async move { n >= all }
        },
    ));
    let started = Instant::now();
    a.shutdown().expect("shutdown");
    eprintln!(
        "blocking shutdown with {all} acquisitions in flight: {:?}",
        started.elapsed()
    );
    assert_eq!(rt.block_on(leftovers(&mut raw)), Vec::<String>::new());
    for (kind, t) in threads {
        let r = t.join().unwrap();
        assert!(matches!(r, Err(Error::Shutdown)), "{kind}: {r:?}");
    }
}

/// A blocking `try_lock_for` whose wait ends before Redis answers returns the timeout; the grant
/// Redis makes later (after the hold's trusted time) is found and released in the background.
#[test]
fn blocking_late_grants_are_released() {
    init_tracing();
    let s = RedisServer::start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut raw = rt.block_on(patient_conn(&s));
    let a = blocking_client(&s, late_config());
    for kind in KINDS {
        let l = BlockingLock::open(kind, &a, &format!("warm-up:{kind}"));
        l.lock().unwrap().unlock().unwrap();
    }
    rt.block_on(pause_all(&s, Duration::from_secs(3)));
    let threads = KINDS.map(|kind| {
        let lock = BlockingLock::open(kind, &a, &format!("late:{kind}"));
        std::thread::spawn(move || {
            let r = lock.try_lock_for(Duration::from_millis(50)).map(|g| g.is_some());
            assert!(matches!(&r, Err(e) if e.is_transient()), "{kind}: {r:?}");
        })
    });
    for t in threads {
        t.join().unwrap();
    }
    rt.block_on(eventually(
        Duration::from_secs(15),
        "every late grant was settled",
        || {
            let st = a.stats();
            async move { st.holds == 0 && st.queued_releases == 0 }
        },
    ));
    for kind in KINDS {
        let name = format!("late:{kind}");
        let ttl = rt.block_on(pttl(&mut raw, &name));
        assert_eq!(
            ttl, -2,
            "{kind}: still locked (PTTL {ttl} ms): the late grant was left to expire"
        );
    }
}

/// Dropping the last handle of a blocking client shuts it down: no acquire record or unlock
/// latch is left behind.
#[test]
fn blocking_client_dropped_leaves_nothing_behind() {
    init_tracing();
    let s = RedisServer::start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut raw = rt.block_on(patient_conn(&s));
    let a = blocking_client(&s, config());
    for round in 0..25 {
        for kind in KINDS {
            let l = BlockingLock::open(kind, &a, &format!("dropped:{kind}:{round}"));
            l.lock().unwrap().unlock().unwrap();
        }
    }
    drop(a);
    assert_eq!(rt.block_on(leftovers(&mut raw)), Vec::<String>::new());
}

/// A process with a blocking client that exits without shutting down (`std::process::exit`: no
/// destructor runs, as in a crash) leaves acquire records and unlock latches that expire within
/// the settle window.
#[test]
fn blocking_process_exit_leaves_records_for_at_most_the_settle_window() {
    const WORKER: &str = "REDISSON_LOCK_TEST_EXIT_WORKER_URL";
    if let Ok(url) = std::env::var(WORKER) {
        // the child process: 200 acquisitions and releases, then exit on the spot
        let c = blocking::Client::connect_with(&url, config()).expect("connect");
        for round in 0..25 {
            for kind in KINDS {
                let l = BlockingLock::open(kind, &c, &format!("exit:{kind}:{round}"));
                l.lock().unwrap().unlock().unwrap();
            }
        }
        std::process::exit(0);
    }
    init_tracing();
    let s = RedisServer::start();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "blocking_process_exit_leaves_records_for_at_most_the_settle_window",
            "--test-threads=1",
        ])
        .env(WORKER, s.url())
        .status()
        .expect("run the worker process");
    assert!(status.success(), "worker: {status}");
    let window = settle_window(&config());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut raw = rt.block_on(patient_conn(&s));
    let left = rt.block_on(latches_within(&mut raw, window));
    eprintln!("{left} latch keys left by a process that exited without shutdown");
}

/// A client that was shut down and dropped closes its connections at once: no background task
/// (the watchdog, the check for keys gone without a message, the loss watch) keeps one open
/// until its next round (a renewal period, 10 s with the default watchdog).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shut_down_client_closes_its_connections_at_once() {
    init_tracing();
    let s = RedisServer::start();
    let before = common::app_connections(&s).await;
    let c = s.client(Config::default()).await;
    let g = c.lock("shutdown:connections").unwrap().lock().await.unwrap();
    assert!(common::app_connections(&s).await > before);
    c.shutdown().await.unwrap();
    drop(g);
    drop(c);
    let dropped = Instant::now();
    eventually(Duration::from_secs(3), "the client's connections closed", || {
        let s = &s;
        async move { common::app_connections(s).await == before }
    })
    .await;
    eprintln!(
        "connections closed {:?} after the client was dropped",
        dropped.elapsed()
    );
}
