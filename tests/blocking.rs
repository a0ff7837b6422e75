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
