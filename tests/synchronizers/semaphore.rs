//! `Semaphore` (Redisson's `RSemaphore`) against a real redis-server: Redisson's layout and
//! messages (a decimal count at the name; the new total on `redisson_sc:{name}` after every
//! change that can let a waiter in), waiters woken by a release, bad input and keys of another
//! type refused without a write, lost replies (an acquisition never loses a permit, a release
//! never counts twice), the guard, shutdown, and the blocking twin. Interop with real Redisson
//! is in the compat matrix.

use crate::common;
use crate::common::kept::Kept;
use crate::subscribed_to;

use std::time::{Duration, Instant};

use common::{
    eventually, faults, init_tracing, key_exists, latches_deleted, pause_all, pttl, RawSubscriber,
    RedisServer,
};
use redisson_lock::{Client, Config, Error, Semaphore, MAX_PERMITS};

/// Far below the subscribed fallback poll (30 s by default): only a message wakes this fast.
const WOKEN: Duration = Duration::from_secs(3);

async fn get(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query_async(raw).await.unwrap()
}

fn spawn_acquire(sem: &Semaphore, permits: u64) -> tokio::task::JoinHandle<redisson_lock::Result<bool>> {
    let s = sem.clone();
    tokio::spawn(async move { s.try_acquire_for(permits, Duration::from_secs(60)).await.kept() })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_permits_with_redissons_layout_and_messages() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let sem = c.semaphore("sem:layout").unwrap();
    let mut sub = RawSubscriber::new(&s.url(), "redisson_sc:{sem:layout}").await;

    assert_eq!(
        sem.available_permits().await.unwrap(),
        0,
        "a missing semaphore has no permits"
    );
    assert!(!sem.try_acquire(1).await.kept().unwrap(), "nothing to take");
    assert!(sem.try_set_permits(3).await.unwrap());
    assert_eq!(get(&mut raw, "sem:layout").await.as_deref(), Some("3"));
    assert!(
        !sem.try_set_permits(7).await.unwrap(),
        "an existing semaphore is never overwritten"
    );
    assert_eq!(
        sub.drain(&s).await,
        vec!["3"],
        "a new count publishes it, a refused one nothing"
    );

    assert!(sem.try_acquire(2).await.kept().unwrap());
    assert_eq!(get(&mut raw, "sem:layout").await.as_deref(), Some("1"));
    assert!(!sem.try_acquire(2).await.kept().unwrap(), "only one left");
    assert!(sub.drain(&s).await.is_empty(), "taking permits publishes nothing");

    sem.release(2).await.unwrap();
    assert_eq!(get(&mut raw, "sem:layout").await.as_deref(), Some("3"));
    assert_eq!(
        sub.drain(&s).await,
        vec!["3"],
        "a release publishes the new total"
    );

    assert_eq!(sem.add_permits(-5).await.unwrap(), -2);
    assert_eq!(
        sem.available_permits().await.unwrap(),
        -2,
        "the count may go below zero"
    );
    assert_eq!(
        sub.drain(&s).await,
        vec!["-2"],
        "add_permits publishes the new total, as Redisson"
    );
    assert_eq!(
        sem.drain_permits().await.unwrap(),
        -2,
        "drain returns what there was"
    );
    assert_eq!(get(&mut raw, "sem:layout").await.as_deref(), Some("0"));
    assert!(sub.drain(&s).await.is_empty(), "draining publishes nothing");

    // a TTL set with the count; add_permits leaves the count without one (as Redisson's SET)
    assert!(sem.delete().await.unwrap());
    assert!(!sem.delete().await.unwrap());
    assert!(sem
        .try_set_permits_with_ttl(2, Duration::from_secs(60))
        .await
        .unwrap());
    let ttl = pttl(&mut raw, "sem:layout").await;
    assert!(ttl > 50_000 && ttl <= 60_000, "{ttl}");
    assert!(sem.try_acquire(1).await.kept().unwrap());
    assert!(pttl(&mut raw, "sem:layout").await > 0, "taking keeps the TTL");
    sem.add_permits(1).await.unwrap();
    assert_eq!(pttl(&mut raw, "sem:layout").await, -1);

    // release_if_exists: nothing without a semaphore; release creates one
    let other = c.semaphore("sem:layout:missing").unwrap();
    assert!(!other.release_if_exists(2).await.unwrap());
    assert!(!key_exists(&mut raw, "sem:layout:missing").await);
    other.release(2).await.unwrap();
    assert!(other.release_if_exists(1).await.unwrap());
    assert_eq!(other.available_permits().await.unwrap(), 3);
    assert!(!other.try_set_permits(1).await.unwrap(), "release created it");

    // zero permits never reach Redis
    assert!(sem.try_acquire(0).await.kept().unwrap());
    assert!(!other.release_if_exists(0).await.unwrap());

    // request latches are cleaned up once answered
    latches_deleted(&s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_wakes_every_waiter_it_lets_in() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let sem = c.semaphore("sem:wake").unwrap();
    assert!(sem.try_set_permits(0).await.unwrap());
    let waiters: Vec<_> = (0..3).map(|_| spawn_acquire(&sem, 1)).collect();
    subscribed_to(&c, 1, "waiters subscribed").await;
    let other = Client::connect(&s.url()).await.unwrap();
    let released = Instant::now();
    other.semaphore("sem:wake").unwrap().release(3).await.unwrap();
    for w in waiters {
        assert!(w.await.unwrap().unwrap());
    }
    assert!(
        released.elapsed() < WOKEN,
        "woken by the message: {:?}",
        released.elapsed()
    );
    assert_eq!(sem.available_permits().await.unwrap(), 0);
    subscribed_to(&c, 0, "the channel is left once nobody waits").await;

    // one permit for two waiters: exactly one gets it, the other times out
    let short = |sem: &Semaphore| {
        let s = sem.clone();
        tokio::spawn(async move { s.try_acquire_for(1, Duration::from_millis(2000)).await.kept() })
    };
    let (a, b) = (short(&sem), short(&sem));
    subscribed_to(&c, 1, "both waiting").await;
    sem.release(1).await.unwrap();
    let got = [a.await.unwrap().unwrap(), b.await.unwrap().unwrap()];
    assert_eq!(got.iter().filter(|g| **g).count(), 1, "{got:?}");
    assert_eq!(sem.available_permits().await.unwrap(), 0);
}

/// Redisson's payload is the number of permits available: a release of one wakes one local
/// waiter, not all of them (a herd of attempts where one can succeed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_of_one_permit_wakes_one_waiter() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let sem = c.semaphore("sem:wake-one").unwrap();
    assert!(sem.try_set_permits(0).await.unwrap());
    let waiters: Vec<_> = (0..5).map(|_| spawn_acquire(&sem, 1)).collect();
    subscribed_to(&c, 1, "waiters subscribed").await;
    eventually(Duration::from_secs(5), "all five wait", || {
        let c = c.clone();
        async move { c.stats().waiters == 5 }
    })
    .await;
    common::server_subscribers(&raw, "redisson_sc:{sem:wake-one}", 1, "subscribed on the server").await;
    let before = common::settled_script_calls(&mut raw).await;
    sem.release(1).await.unwrap();
    eventually(Duration::from_secs(5), "one waiter got the permit", || async {
        waiters.iter().filter(|w| w.is_finished()).count() == 1
    })
    .await;
    // a window for a herd to show: every woken waiter tries at once
    tokio::time::sleep(Duration::from_millis(300)).await;
    let scripts = common::script_calls(&mut raw).await - before;
    assert!(
        scripts <= 3,
        "the release, the woken waiter's attempt (and at most one more): {scripts}"
    );
    assert_eq!(waiters.iter().filter(|w| w.is_finished()).count(), 1);
    for w in waiters {
        w.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_and_keys_of_another_type_are_refused_without_a_write() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    assert!(matches!(c.semaphore(""), Err(Error::InvalidArgument(_))));
    let sem = c.semaphore("sem:bad").unwrap();
    for r in [
        sem.try_acquire(MAX_PERMITS + 1).await.kept(),
        sem.try_acquire_for(u64::MAX, Duration::from_secs(1)).await.kept(),
    ] {
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    }
    assert!(matches!(
        sem.release(MAX_PERMITS + 1).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sem.add_permits(i64::MIN).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sem.try_set_permits(i64::MAX).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sem.try_set_permits_with_ttl(1, Duration::ZERO).await,
        Err(Error::InvalidArgument(_))
    ));
    let none = sem.acquire(0).await.unwrap();
    assert_eq!(none.permits(), 0, "a guard of no permits");
    none.release().await.unwrap();
    assert!(!key_exists(&mut raw, "sem:bad").await, "nothing was written");

    // a hash under the name
    let _: () = redis::cmd("HSET")
        .arg("sem:bad")
        .arg("f")
        .arg("1")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(matches!(
        sem.try_acquire(1).await.kept(),
        Err(Error::WrongType { .. })
    ));
    assert!(matches!(sem.release(1).await, Err(Error::WrongType { .. })));
    assert!(matches!(sem.add_permits(1).await, Err(Error::WrongType { .. })));
    assert!(matches!(sem.drain_permits().await, Err(Error::WrongType { .. })));
    assert!(matches!(
        sem.try_set_permits(1).await,
        Err(Error::WrongType { .. })
    ));
    assert!(matches!(
        sem.available_permits().await,
        Err(Error::WrongType { .. })
    ));
    let t: String = redis::cmd("TYPE")
        .arg("sem:bad")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(t, "hash");

    // a string that is not a count
    let _: () = redis::cmd("SET")
        .arg("sem:bad")
        .arg("many")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(matches!(sem.try_acquire(1).await.kept(), Err(Error::Redis(_))));
    assert!(matches!(sem.release(1).await, Err(Error::Redis(_))));
    assert!(matches!(sem.add_permits(1).await, Err(Error::Redis(_))));
    assert!(matches!(sem.available_permits().await, Err(Error::Protocol(_))));
    assert_eq!(
        get(&mut raw, "sem:bad").await.as_deref(),
        Some("many"),
        "unchanged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquisition_whose_reply_is_lost_never_loses_a_permit() {
    init_tracing();
    let s = RedisServer::start();
    let cfg = Config::default()
        .with_command_timeout(Duration::from_millis(200))
        .with_retry_interval(Duration::from_millis(100));
    let c = s.client(cfg).await;
    let sem = c.semaphore("sem:lost-acquire").unwrap();
    assert!(sem.try_set_permits(2).await.unwrap());

    // Redis is stopped (SIGSTOP): requests wait in its socket, and run when it continues even
    // if their sender timed out or was dropped meanwhile, so the grant happens after the
    // caller stopped waiting for it.
    let pid = faults::pid(&s.url()).await.unwrap();
    // the scripts are loaded (a first EVALSHA answered NOSCRIPT would never run)
    assert!(sem.try_acquire(1).await.kept().unwrap());
    sem.release(1).await.unwrap();

    // 1. the caller waits: its reply and its settle time out; the background settles it late,
    //    finds the grant, and gives it back
    latches_deleted(&s).await;
    let stopped = faults::Stopped::new(pid).unwrap();
    let r = sem.try_acquire(1).await.kept();
    assert!(matches!(&r, Err(e) if e.is_transient()), "a timeout: {r:?}");
    drop(stopped);
    eventually(Duration::from_secs(10), "the late grant is given back", || {
        let sem = sem.clone();
        async move { sem.available_permits().await.ok() == Some(2) }
    })
    .await;

    // 2. the caller is dropped while its request is in flight: the same
    latches_deleted(&s).await;
    let stopped = faults::Stopped::new(pid).unwrap();
    let dropped = tokio::time::timeout(Duration::from_millis(100), sem.try_acquire(1)).await;
    assert!(dropped.is_err(), "the future was dropped in flight");
    tokio::time::sleep(Duration::from_millis(400)).await; // keep it stopped past the command timeout
    drop(stopped);
    c.shutdown().await.unwrap(); // waits for the settling and the give-back
    let fresh = Client::connect(&s.url()).await.unwrap();
    assert_eq!(
        fresh
            .semaphore("sem:lost-acquire")
            .unwrap()
            .available_permits()
            .await
            .unwrap(),
        2,
        "the permit taken after the caller gave up came back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_whose_reply_is_lost_counts_once() {
    init_tracing();
    let s = RedisServer::start();
    let cfg = Config::default()
        .with_command_timeout(Duration::from_millis(200))
        .with_retry_interval(Duration::from_millis(100));
    let c = s.client(cfg).await;
    let sem = c.semaphore("sem:lost-release").unwrap();
    assert!(sem.try_set_permits(0).await.unwrap());
    for round in 1..=3 {
        let paused_until = pause_all(&s, Duration::from_millis(600)).await;
        // sent, timed out, sent again (up to the retry window): every copy reaches Redis
        let r = sem.release(1).await;
        tokio::time::sleep_until(paused_until.into()).await;
        tracing::info!(round, ?r, "release during a pause");
        assert_eq!(
            sem.available_permits().await.unwrap(),
            round,
            "round {round}: released exactly once"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guard_gives_its_permits_back_once() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let sem = c.semaphore("sem:guard").unwrap();
    assert!(sem.try_set_permits(3).await.unwrap());
    let g = sem.acquire(2).await.unwrap();
    assert_eq!(g.permits(), 2);
    assert_eq!(sem.available_permits().await.unwrap(), 1);
    g.release().await.unwrap();
    assert_eq!(sem.available_permits().await.unwrap(), 3);

    {
        let _g = sem
            .try_acquire_for(3, Duration::from_secs(1))
            .await
            .unwrap()
            .unwrap();
        assert!(sem
            .try_acquire_for(1, Duration::from_millis(50))
            .await
            .unwrap()
            .is_none());
    }
    eventually(Duration::from_secs(5), "a dropped guard gives back", || {
        let sem = sem.clone();
        async move { sem.available_permits().await.ok() == Some(3) }
    })
    .await;

    sem.acquire(1).await.unwrap().forget();
    assert_eq!(sem.available_permits().await.unwrap(), 2, "forgotten: kept taken");

    // dropped just before shutdown: shutdown waits for the give-back
    let g = sem.acquire(2).await.unwrap();
    drop(g);
    c.shutdown().await.unwrap();
    let fresh = Client::connect(&s.url()).await.unwrap();
    assert_eq!(
        fresh
            .semaphore("sem:guard")
            .unwrap()
            .available_permits()
            .await
            .unwrap(),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_a_waiting_acquisition() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let sem = c.semaphore("sem:shutdown").unwrap();
    let waiter = {
        let sem = sem.clone();
        tokio::spawn(async move { sem.acquire(1).await.kept() })
    };
    subscribed_to(&c, 1, "waiting").await;
    c.shutdown().await.unwrap();
    let r = tokio::time::timeout(WOKEN, waiter).await.expect("ended").unwrap();
    assert!(matches!(r, Err(Error::Shutdown)), "{r:?}");
    assert!(matches!(sem.try_acquire(1).await.kept(), Err(Error::Shutdown)));
}

#[test]
fn the_blocking_twin_takes_and_gives_back() {
    init_tracing();
    let s = RedisServer::start();
    let c = redisson_lock::blocking::Client::connect(&s.url()).unwrap();
    let sem = c.semaphore("sem:blocking").unwrap();
    assert!(sem.try_set_permits(1).unwrap());
    let g = sem.acquire(1).unwrap();
    let waiter = {
        let sem = sem.clone();
        std::thread::spawn(move || sem.try_acquire_for(1, Duration::from_secs(30)).kept())
    };
    g.release().unwrap();
    assert!(waiter.join().unwrap().unwrap());
    assert_eq!(sem.available_permits().unwrap(), 0);
    sem.release(1).unwrap();
    assert_eq!(sem.drain_permits().unwrap(), 1);
}

/// Redis refusing writes for lack of memory (`maxmemory` reached, `noeviction`): a give-back
/// fails for the caller but is kept trying in the background and lands once memory is freed;
/// no permit of either semaphore kind is lost, none counted twice, nothing is half done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permits_given_back_while_redis_is_out_of_memory_come_back() {
    init_tracing();
    let s = RedisServer::start();
    let cfg = Config::default()
        .with_command_timeout(Duration::from_millis(300))
        .with_retry_interval(Duration::from_millis(100));
    let c = s.client(cfg).await;
    let mut raw = s.conn().await;
    let sem = c.semaphore("sem:oom").unwrap();
    let pes = c.permit_expirable_semaphore("pes:oom").unwrap();
    assert!(sem.try_set_permits(2).await.unwrap());
    assert!(pes.try_set_permits(2).await.unwrap());
    let (g1, g2) = (sem.acquire(1).await.unwrap(), sem.acquire(1).await.unwrap());
    let ids = pes.acquire_many(2, None).await.unwrap().forget();
    latches_deleted(&s).await;
    let admin = raw.clone();
    let config_set = |k: &'static str, v: &'static str| {
        let mut raw = admin.clone();
        async move {
            let () = redis::cmd("CONFIG")
                .arg("SET")
                .arg(k)
                .arg(v)
                .query_async(&mut raw)
                .await
                .unwrap();
        }
    };
    config_set("maxmemory-policy", "noeviction").await;
    config_set("maxmemory", "1").await;

    let r = g1.release().await;
    assert!(
        matches!(&r, Err(Error::Redis(e)) if e.to_string().contains("OOM")),
        "{r:?}"
    );
    drop(g2);
    let r = pes.release(ids[0]).await;
    assert!(
        matches!(&r, Err(Error::Redis(e)) if e.to_string().contains("OOM")),
        "{r:?}"
    );
    let r = pes.try_release_many(&ids[1..]).await;
    assert!(r.is_err(), "{r:?}");
    // nothing half done meanwhile: both ids still held, both counts untouched
    let held: i64 = redis::cmd("ZCARD")
        .arg("{pes:oom}:timeout")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(held, 2);
    assert_eq!(get(&mut raw, "sem:oom").await.as_deref(), Some("0"));
    assert_eq!(get(&mut raw, "pes:oom").await.as_deref(), Some("0"));

    config_set("maxmemory", "0").await;
    eventually(Duration::from_secs(10), "every give-back landed", || {
        let url = s.url();
        async move {
            let mut c = redis::Client::open(url)
                .unwrap()
                .get_multiplexed_async_connection()
                .await
                .unwrap();
            let counts: (Option<String>, Option<String>, i64) = redis::pipe()
                .cmd("GET")
                .arg("sem:oom")
                .cmd("GET")
                .arg("pes:oom")
                .cmd("ZCARD")
                .arg("{pes:oom}:timeout")
                .query_async(&mut c)
                .await
                .unwrap();
            counts == (Some("2".into()), Some("2".into()), 0)
        }
    })
    .await;
    c.shutdown().await.unwrap();
    assert_eq!(
        get(&mut raw, "sem:oom").await.as_deref(),
        Some("2"),
        "each given back once"
    );
    assert_eq!(get(&mut raw, "pes:oom").await.as_deref(), Some("2"));
}
