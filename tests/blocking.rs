//! The blocking facade against a real redis-server.

mod common;

use std::time::{Duration, Instant};

use common::RedisServer;
use redisson_lock::blocking::Client;
use redisson_lock::{Error, Unlocked};

#[test]
fn blocking_lock_reenters_per_thread_and_excludes_other_threads() {
    let s = RedisServer::start();
    let client = Client::connect(&s.url()).unwrap();
    let lock = client.lock("blocking").unwrap();
    let a = lock.lock().unwrap();
    let b = lock.lock().unwrap(); // same thread: re-entry
    assert_eq!(lock.hold_count().unwrap(), 2);
    assert_eq!(a.field(), b.field());
    assert!(a.field().starts_with(client.id()));

    let l2 = lock.clone();
    let other = std::thread::spawn(move || (l2.try_lock().unwrap().is_none(), l2.is_held().unwrap()));
    assert_eq!(
        other.join().unwrap(),
        (true, false),
        "another thread is another owner"
    );

    assert_eq!(b.unlock().unwrap(), Unlocked::Partial);
    assert_eq!(a.unlock().unwrap(), Unlocked::Released);
    assert!(!lock.is_locked().unwrap());
}

#[test]
fn blocking_waiter_is_woken_and_drop_releases_synchronously() {
    let s = RedisServer::start();
    let client = Client::connect(&s.url()).unwrap();
    let lock = client.lock("blocking-wait").unwrap();
    let g = lock.lock().unwrap();
    let l2 = lock.clone();
    let waiter = std::thread::spawn(move || {
        let g = l2
            .try_lock_for(Duration::from_secs(10))
            .unwrap()
            .expect("acquired");
        let at = Instant::now();
        drop(g); // releases synchronously (no runtime on this thread)
        at
    });
    std::thread::sleep(Duration::from_millis(200));
    let released = Instant::now();
    drop(g);
    let acquired = waiter.join().unwrap();
    assert!(acquired.duration_since(released) < Duration::from_millis(800));
    assert!(
        !lock.is_locked().unwrap(),
        "the dropped guard was released before drop returned"
    );
}

#[test]
fn blocking_run_and_errors() {
    let s = RedisServer::start();
    let client = Client::connect(&s.url()).unwrap();
    let lock = client.lock("blocking-run").unwrap();
    assert_eq!(lock.run(|| 6 * 7).unwrap(), 42);
    assert!(!lock.is_locked().unwrap());
    assert!(matches!(lock.unlock(), Err(Error::NotHeld { .. })));
    assert!(matches!(
        lock.lock_with_lease(Duration::ZERO),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(client.lock(""), Err(Error::InvalidArgument(_))));
    let g = lock
        .with_owner(9)
        .lock_with_lease(Duration::from_millis(300))
        .unwrap();
    // reported lost a safety margin before the key really expires
    assert_eq!(
        g.wait_lost(Duration::from_secs(3)),
        Some(redisson_lock::LostReason::LeaseExpired)
    );
    let deadline = Instant::now() + Duration::from_secs(3);
    while lock.is_locked().unwrap() {
        assert!(Instant::now() < deadline, "the leased lock never expired");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(matches!(g.unlock(), Err(Error::NotHeld { .. })));
}

/// The blocking multi-lock and RedLock: members of any kind, from several blocking clients, taken
/// for the calling thread; another thread is another owner; a RedLock holds with a majority;
/// `wait_lost(ZERO)` checks without waiting; drop releases.
#[test]
fn blocking_multi_lock_and_red_lock() {
    use redisson_lock::blocking::{Member, RMultiLock};
    let servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
    let clients: Vec<Client> = servers
        .iter()
        .map(|s| Client::connect(&s.url()).unwrap())
        .collect();
    let both = RMultiLock::new([
        Member::from(&clients[0].lock("m:a").unwrap()),
        Member::from(&clients[0].fair_lock("m:b").unwrap()),
    ])
    .unwrap();
    let g = both.lock().unwrap();
    assert_eq!(g.keys(), vec!["m:a", "m:b"]);
    assert_eq!(g.owner(), redisson_lock::OwnerId::current_thread());
    assert_eq!(g.wait_lost(Duration::ZERO), None, "held: no loss, no wait");
    let other = {
        let both = both.clone();
        std::thread::spawn(move || both.try_lock().unwrap().is_none())
    };
    assert!(other.join().unwrap(), "another thread is another owner");
    g.unlock().unwrap();
    assert!(!clients[0].lock("m:a").unwrap().is_locked().unwrap());

    let red = RMultiLock::red_lock(clients.iter().map(|c| Member::from(&c.lock("red").unwrap()))).unwrap();
    assert_eq!(red.quorum(), 2);
    // one member is taken elsewhere: a majority still suffices
    let elsewhere = clients[2].lock("red").unwrap().with_owner(99).lock().unwrap();
    let g = red
        .try_lock_for(Duration::from_secs(2))
        .unwrap()
        .expect("a majority");
    assert_eq!(g.keys().len(), 2);
    drop(g); // released synchronously (outside a runtime)
    for c in &clients[..2] {
        assert!(!c.lock("red").unwrap().is_locked().unwrap());
    }
    elsewhere.unlock().unwrap();
    let via_client = clients[1].multi_lock(&["x", "y"]).unwrap().lock().unwrap();
    assert_eq!(via_client.keys(), vec!["x", "y"]);
    via_client.unlock().unwrap();
}

/// A blocking call from async code (a thread that drives a tokio runtime's tasks) panics with a
/// message that names the fix, never with a double panic (which would abort the process); in
/// `spawn_blocking` the same calls work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_calls_from_async_code_panic_naming_the_fix() {
    let s = RedisServer::start();
    let url = s.url();
    let text = |p: Box<dyn std::any::Any + Send>| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    };
    // connecting
    let u = url.clone();
    let p = std::panic::catch_unwind(move || redisson_lock::blocking::Client::connect(&u))
        .expect_err("connecting from async code is refused");
    let msg = text(p);
    assert!(
        msg.contains("spawn_blocking") && msg.contains("async API"),
        "{msg}"
    );
    // a call on a client made where blocking is allowed
    let u = url.clone();
    let client = tokio::task::spawn_blocking(move || redisson_lock::blocking::Client::connect(&u).unwrap())
        .await
        .unwrap();
    let lock = client.lock("inside").unwrap();
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lock.try_lock()))
        .expect_err("locking from async code is refused");
    let msg = text(p);
    assert!(msg.contains("spawn_blocking"), "{msg}");
    // and in spawn_blocking it works
    let held = tokio::task::spawn_blocking(move || {
        let g = lock.lock().unwrap();
        let held = g.is_held();
        g.unlock().unwrap();
        held
    })
    .await
    .unwrap();
    assert!(held);
    tokio::task::spawn_blocking(move || client.shutdown().unwrap())
        .await
        .unwrap();
}

/// A RedLock over three blocking clients, each on a server of its own, whose `Client` values and
/// lock handles the caller dropped once the multi-lock was built: the multi-lock keeps every
/// member's client running (its watchdog renews, its releases are sent), not only the first's.
#[test]
fn a_blocking_multi_lock_keeps_every_members_client_running() {
    let servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
    let config = redisson_lock::Config::default().with_lock_watchdog_timeout(Duration::from_secs(3));
    let red = {
        let members: Vec<redisson_lock::blocking::Member> = servers
            .iter()
            .map(|s| {
                let c = Client::connect_with(&s.url(), config.clone()).unwrap();
                redisson_lock::blocking::Member::from(&c.lock("red:kept").unwrap())
            })
            .collect();
        redisson_lock::blocking::RMultiLock::red_lock(members).unwrap()
    };
    let g = red.lock().unwrap();
    // past the watchdog timeout: every member renewed by its own client
    std::thread::sleep(Duration::from_millis(4_500));
    assert!(g.is_held(), "{:?}", g.state());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for s in &servers {
        let ttl = rt.block_on(async { common::pttl(&mut s.conn().await, "red:kept").await });
        assert!(ttl > 0, "server {}: PTTL {ttl}", s.port);
    }
    g.unlock().unwrap();
    for s in &servers {
        assert!(!rt.block_on(async { common::key_exists(&mut s.conn().await, "red:kept").await }));
    }
}
