//! The `metrics` feature: a Prometheus exporter (the `metrics` facade's recorder) serves
//! `/metrics`; the test drives real locks against a real redis-server and scrapes the endpoint.
#![cfg(feature = "metrics")]

mod common;

use common::kept::Kept;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use common::{eventually, RedisServer};
use metrics_exporter_prometheus::PrometheusBuilder;
use redisson_lock::{Config, LostReason};

fn free_addr() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

/// `GET /metrics`, parsed into `series -> value` (`name{labels}` as printed).
fn scrape(addr: SocketAddr) -> BTreeMap<String, f64> {
    let mut s = TcpStream::connect(addr).expect("the exporter listens");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    body.lines()
        .filter(|l| l.starts_with("redisson_lock_"))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((series.to_owned(), value.parse().ok()?))
        })
        .collect()
}

fn value(m: &BTreeMap<String, f64>, series: &str) -> f64 {
    m.get(series).copied().unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exporter_serves_the_lock_metrics() {
    let addr = free_addr();
    PrometheusBuilder::new()
        .with_http_listener(addr)
        .install()
        .expect("install the Prometheus exporter");
    let s = RedisServer::start();
    let client = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_millis(300)))
        .await;
    let lock = client.lock("metrics:a").unwrap();

    // 3 plain acquisitions
    for _ in 0..3 {
        lock.lock().await.unwrap().unlock().await.unwrap();
    }
    // a hold renewed by the watchdog (every 100 ms), while a waiter waits and then gets it by
    // the unlock message (a hand-over)
    let holder = lock.lock().await.unwrap();
    let waiter = {
        let lock = lock.clone();
        tokio::spawn(async move { lock.lock().await })
    };
    eventually(Duration::from_secs(10), "the waiter waits", || async {
        client.stats().waiters >= 1
    })
    .await;
    // while it waits: one lock held, one waiter, one channel subscribed
    let mid = scrape(addr);
    assert_eq!(value(&mid, r#"redisson_lock_held{kind="lock"}"#), 1.0, "{mid:#?}");
    assert_eq!(
        value(&mid, r#"redisson_lock_waiters{kind="lock"}"#),
        1.0,
        "{mid:#?}"
    );
    assert_eq!(value(&mid, "redisson_lock_subscriptions"), 1.0, "{mid:#?}");
    eventually(Duration::from_secs(10), "a renewal happened", || async {
        value(&scrape(addr), r#"redisson_lock_renewals_total{result="renewed"}"#) >= 1.0
    })
    .await;
    holder.unlock().await.unwrap();
    let handed = waiter.await.unwrap().unwrap();
    handed.unlock().await.unwrap();
    // a timeout
    let other = client.lock("metrics:a").unwrap();
    let blocker = other.lock().await.unwrap();
    assert!(lock
        .try_lock_for(Duration::from_millis(50))
        .await
        .unwrap()
        .is_none());
    blocker.unlock().await.unwrap();
    // a lost hold (the lease runs out)
    let leased = lock.lock_with_lease(Duration::from_millis(50)).await.unwrap();
    assert_eq!(leased.lost().await, LostReason::LeaseExpired);
    drop(leased);

    let m = scrape(addr);
    let acquired = value(
        &m,
        r#"redisson_lock_acquisitions_total{kind="lock",outcome="acquired"}"#,
    );
    assert_eq!(acquired, 7.0, "3 + holder + waiter + blocker + leased: {m:#?}");
    assert_eq!(
        value(
            &m,
            r#"redisson_lock_acquisitions_total{kind="lock",outcome="timeout"}"#
        ),
        1.0
    );
    assert!(
        value(&m, r#"redisson_lock_handoffs_total{kind="lock"}"#) >= 1.0,
        "{m:#?}"
    );
    assert_eq!(
        value(&m, r#"redisson_lock_lost_total{reason="lease_expired"}"#),
        1.0
    );
    assert_eq!(
        value(
            &m,
            r#"redisson_lock_acquire_wait_seconds_count{kind="lock",outcome="acquired"}"#
        ),
        7.0
    );
    assert_eq!(
        value(&m, r#"redisson_lock_acquire_attempts_count{kind="lock"}"#),
        7.0
    );
    // every guard is gone: nothing held, nobody waiting; each hold's life was recorded
    eventually(Duration::from_secs(5), "held and waiters back to 0", || async {
        let m = scrape(addr);
        value(&m, r#"redisson_lock_held{kind="lock"}"#) == 0.0
            && value(&m, r#"redisson_lock_waiters{kind="lock"}"#) == 0.0
    })
    .await;
    assert_eq!(
        value(&scrape(addr), r#"redisson_lock_hold_seconds_count{kind="lock"}"#),
        7.0
    );
    // lock names are not a label unless asked for
    assert!(m.keys().all(|k| !k.contains("name=")), "{m:#?}");

    let named = s.client(Config::default().with_metrics_lock_names(true)).await;
    named
        .fair_lock("metrics:named")
        .unwrap()
        .lock()
        .await
        .unwrap()
        .unlock()
        .await
        .unwrap();
    let m = scrape(addr);
    assert_eq!(
        value(
            &m,
            r#"redisson_lock_acquisitions_total{kind="fair",name="metrics:named",outcome="acquired"}"#
        ),
        1.0,
        "{m:#?}"
    );

    // the synchronizers: waits are acquisitions of their kind, waiting ones are waiters
    let sem = client.semaphore("metrics:sem").unwrap();
    assert!(sem.try_set_permits(0).await.unwrap());
    let waiting = {
        let sem = sem.clone();
        tokio::spawn(async move { sem.acquire(1).await.kept() })
    };
    eventually(
        Duration::from_secs(10),
        "the semaphore waiter is counted",
        || async { value(&scrape(addr), r#"redisson_lock_waiters{kind="semaphore"}"#) == 1.0 },
    )
    .await;
    sem.release(1).await.unwrap();
    waiting.await.unwrap().unwrap();
    let pes = client.permit_expirable_semaphore("metrics:pes").unwrap();
    assert!(pes
        .try_acquire_for(Duration::from_millis(50), None)
        .await
        .kept()
        .unwrap()
        .is_none());
    let latch = client.count_down_latch("metrics:latch").unwrap();
    assert!(latch.wait_for(Duration::from_secs(1)).await.unwrap());
    let m = scrape(addr);
    for (series, want) in [
        (
            r#"redisson_lock_acquisitions_total{kind="semaphore",outcome="acquired"}"#,
            1.0,
        ),
        (r#"redisson_lock_waiters{kind="semaphore"}"#, 0.0),
        (
            r#"redisson_lock_acquisitions_total{kind="expirable semaphore",outcome="timeout"}"#,
            1.0,
        ),
        (
            r#"redisson_lock_acquisitions_total{kind="latch",outcome="acquired"}"#,
            1.0,
        ),
    ] {
        assert_eq!(value(&m, series), want, "{series}: {m:#?}");
    }
    client.shutdown().await.unwrap();
    named.shutdown().await.unwrap();
}
