//! RLock holds that end without their owner's unlock, against real redis-server processes: the
//! watchdog keeping a lock and stopping after the unlock, a force-unlock by another client, a
//! dead client's lock expiring, a Redis restart (the holder learns the loss, waiters get in,
//! scripts reload), a script flush, bad input, and a Redis that is down.

mod common;

use std::time::{Duration, Instant};

use common::{eventually, init_tracing, pttl, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, Error, LeaseState, LostReason, Unlocked};

async fn hgetall(c: &mut redis::aio::MultiplexedConnection, key: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = c.hgetall(key).await.unwrap();
    v.sort();
    v
}

#[tokio::test]
async fn watchdog_keeps_a_lock_alive_and_stops_after_unlock() {
    let s = RedisServer::start();
    let wd = Duration::from_millis(900);
    let client = s.client(Config::default().with_lock_watchdog_timeout(wd)).await;
    let mut raw = s.conn().await;
    let lock = client.lock("wd").unwrap();
    let g = lock.lock().await.unwrap();
    let field = g.field().to_owned();
    let start = Instant::now();
    while start.elapsed() < wd * 5 {
        let ttl = pttl(&mut raw, "wd").await;
        assert!(
            ttl > 0 && ttl <= 900,
            "held with a renewed TTL, got {ttl} after {:?}",
            start.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(g.is_held());
    assert_eq!(client.stats().renewing, 1);
    g.unlock().await.unwrap();
    assert_eq!(client.stats().renewing, 0);
    // If anything still renewed this (key, field), it would cut this TTL to 900 ms.
    let _: () = raw.hset("wd", &field, 1).await.unwrap();
    let _: () = raw.pexpire("wd", 100_000).await.unwrap();
    tokio::time::sleep(wd).await; // three renewal periods
    let ttl = pttl(&mut raw, "wd").await;
    assert!(ttl > 98_000, "no renewal after unlock, PTTL {ttl}");
}

#[tokio::test]
async fn force_unlock_by_another_client_reports_lost_and_stops_renewal() {
    let s = RedisServer::start();
    let client = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_millis(900)))
        .await;
    let other = Client::connect(&s.url()).await.unwrap();
    let g = client.lock("lost").unwrap().lock().await.unwrap();
    assert!(other.lock("lost").unwrap().force_unlock().await.unwrap());
    let reason = tokio::time::timeout(Duration::from_secs(3), g.lost())
        .await
        .expect("lost within a few renewal periods");
    assert_eq!(reason, LostReason::OwnerGone);
    assert_eq!(g.state(), LeaseState::Lost(LostReason::OwnerGone));
    assert_eq!(client.stats().renewing, 0);
    // renewal never re-creates the lock
    let mut raw = s.conn().await;
    let exists: i64 = raw.exists("lost").await.unwrap();
    assert_eq!(exists, 0);
    assert!(matches!(g.unlock().await, Err(Error::NotHeld { .. })));
}

#[tokio::test]
async fn dead_clients_lock_expires_within_the_watchdog_timeout() {
    let s = RedisServer::start();
    let url = s.url();
    // The "dead" client lives on its own runtime (on its own thread), shut down without
    // releasing anything, like a killed process.
    let forgotten = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let f = rt.block_on(async {
            let c = Client::builder()
                .url(url)
                .config(Config::default().with_lock_watchdog_timeout(Duration::from_millis(1500)))
                .build()
                .await
                .unwrap();
            let g = c.lock("dead").unwrap().lock().await.unwrap();
            let f = g.field().to_owned();
            g.forget();
            f
        });
        rt.shutdown_background();
        f
    })
    .join()
    .unwrap();
    let client = s.client(Config::default()).await;
    let start = Instant::now();
    let g = client
        .lock("dead")
        .unwrap()
        .try_lock_for(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("acquired after the dead client's lock expired");
    assert!(
        start.elapsed() < Duration::from_millis(2500),
        "{:?}",
        start.elapsed()
    );
    assert_ne!(g.field(), forgotten);
    g.unlock().await.unwrap();
}

#[tokio::test]
async fn redis_restart_holder_learns_loss_waiters_acquire_scripts_reload() {
    init_tracing();
    let mut s = RedisServer::start();
    let config = Config::default()
        .with_lock_watchdog_timeout(Duration::from_millis(900))
        .with_command_timeout(Duration::from_millis(500))
        .with_poll_interval(Duration::from_millis(200));
    let holder = s.client(config.clone()).await;
    let waiter_client = s.client(config).await;
    let g = holder.lock("restart").unwrap().lock().await.unwrap();
    let wl = waiter_client.lock("restart").unwrap();
    let waiter = tokio::spawn(async move { wl.lock().await });
    eventually(Duration::from_secs(5), "the waiter is waiting", || {
        let c = waiter_client.clone();
        async move { c.stats().channels == 1 }
    })
    .await;

    s.restart(); // data and script cache gone
    let reason = tokio::time::timeout(Duration::from_secs(10), g.lost())
        .await
        .expect("the holder learns it lost the lock");
    assert!(
        matches!(reason, LostReason::OwnerGone | LostReason::RenewalFailed),
        "{reason:?}"
    );
    let wg = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiter acquires after the restart")
        .unwrap()
        .unwrap();
    assert!(wg.is_held());
    // the waiter's hold is renewed with reloaded scripts
    let mut raw = s.conn().await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let fields = hgetall(&mut raw, "restart").await;
    assert_eq!(fields, vec![(wg.field().to_owned(), "1".to_owned())]);
    assert!(matches!(g.unlock().await, Err(Error::NotHeld { .. })));
    wg.unlock().await.unwrap();
}

#[tokio::test]
async fn script_flush_is_invisible() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("flush").unwrap();
    lock.lock().await.unwrap().unlock().await.unwrap();
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut raw)
        .await
        .unwrap();
    let g = lock.lock().await.unwrap();
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
}

#[tokio::test]
async fn bad_input_gets_typed_errors_and_changes_nothing() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    assert!(matches!(client.lock(""), Err(Error::InvalidArgument(_))));
    let lock = client.lock("typed").unwrap();
    assert!(matches!(
        lock.lock_with_lease(Duration::ZERO).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        lock.lock_with_lease(Duration::from_micros(10)).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        lock.try_lock_with_lease(Duration::from_secs(1), Duration::ZERO)
            .await,
        Err(Error::InvalidArgument(_))
    ));
    let exists: i64 = raw.exists("typed").await.unwrap();
    assert_eq!(exists, 0);

    let _: () = raw.set("string-key", "precious").await.unwrap();
    let lock = client.lock("string-key").unwrap();
    assert!(matches!(lock.lock().await, Err(Error::WrongType { key }) if key == "string-key"));
    assert!(matches!(lock.try_lock().await, Err(Error::WrongType { .. })));
    assert!(matches!(
        lock.try_lock_for(Duration::from_millis(200)).await,
        Err(Error::WrongType { .. })
    ));
    assert!(matches!(
        lock.with_owner(1).unlock().await,
        Err(Error::WrongType { .. })
    ));
    assert!(matches!(
        lock.with_owner(1).hold_count().await,
        Err(Error::WrongType { .. })
    ));
    let v: String = raw.get("string-key").await.unwrap();
    assert_eq!(v, "precious");
    assert_eq!(
        pttl(&mut raw, "string-key").await,
        -1,
        "no TTL was set on the foreign key"
    );

    assert!(matches!(
        Client::connect("http://nope").await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Client::connect("not a url").await,
        Err(Error::InvalidArgument(_))
    ));
    let bad = Client::builder()
        .url(s.url())
        .config(Config::default().with_lock_watchdog_timeout(Duration::ZERO))
        .build()
        .await;
    assert!(matches!(bad, Err(Error::InvalidArgument(_))));
    // nothing listens on a port we just released
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = Client::connect(&format!("redis://127.0.0.1:{port}/")).await;
    match down {
        Err(Error::Connect { address, .. }) => {
            assert_eq!(
                address,
                format!("redis://127.0.0.1:{port}/"),
                "the error names the address"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn try_lock_returns_within_wait_while_redis_is_down() {
    let mut s = RedisServer::start();
    let client = s
        .client(Config::default().with_command_timeout(Duration::from_millis(500)))
        .await;
    let lock = client.lock("down").unwrap();
    s.kill();
    let start = Instant::now();
    let r = lock.try_lock_for(Duration::from_secs(1)).await;
    let took = start.elapsed();
    assert!(r.is_err(), "Redis is down: an error, not `None`: {r:?}");
    assert!(r.as_ref().unwrap_err().is_transient());
    assert!(
        took < Duration::from_millis(1000 + 500 + 300),
        "returned after {took:?}"
    );
    let r = lock.try_lock().await;
    assert!(matches!(r, Err(ref e) if e.is_transient()), "{r:?}");
}
