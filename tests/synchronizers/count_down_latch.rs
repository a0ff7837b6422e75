//! `CountDownLatch` (Redisson's `RCountDownLatch`) against a real redis-server: the layout and
//! messages Redisson uses (a decimal count at the name, deleted at zero; `1` on a new count or a
//! deletion, `0` when a count-down reaches zero), waiters woken by messages, by a deletion and
//! (as a fallback) without any message, bad input and keys of another type refused without a
//! write, a pub/sub connection killed under a waiter, shutdown, and the blocking twin. Interop
//! with real Redisson is in the compat matrix.

use crate::common;
use crate::subscribed_to;

use std::time::{Duration, Instant};

use common::{eventually, init_tracing, key_exists, server_subscribers, RawSubscriber, RedisServer};
use redisson_lock::{Config, CountDownLatch, Error};

/// Far below the subscribed fallback poll (30 s by default): only a message wakes this fast.
const WOKEN: Duration = Duration::from_secs(3);

async fn get(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query_async(raw).await.unwrap()
}

/// A task waiting (up to a minute) on `latch`.
fn spawn_wait(latch: &CountDownLatch) -> tokio::task::JoinHandle<redisson_lock::Result<bool>> {
    let l = latch.clone();
    tokio::spawn(async move { l.wait_for(Duration::from_secs(60)).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_down_to_zero_with_redissons_layout_and_messages() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let latch = c.count_down_latch("latch:layout").unwrap();
    let mut sub = RawSubscriber::new(&s.url(), "redisson_countdownlatch__channel__{latch:layout}").await;

    assert_eq!(latch.count().await.unwrap(), 0, "a missing latch counts 0");
    assert!(latch.try_set_count(3).await.unwrap());
    assert_eq!(get(&mut raw, "latch:layout").await.as_deref(), Some("3"));
    assert!(
        !latch.try_set_count(5).await.unwrap(),
        "an existing latch is never overwritten"
    );
    assert_eq!(latch.count().await.unwrap(), 3);
    assert_eq!(
        sub.drain(&s).await,
        vec!["1"],
        "a new count publishes 1, a refused one nothing"
    );

    assert_eq!(latch.count_down().await.unwrap(), 2);
    assert_eq!(latch.count_down().await.unwrap(), 1);
    assert!(sub.drain(&s).await.is_empty(), "nothing is published above zero");
    assert_eq!(latch.count_down().await.unwrap(), 0);
    assert_eq!(sub.drain(&s).await, vec!["0"], "reaching zero publishes 0");
    assert!(
        !key_exists(&mut raw, "latch:layout").await,
        "the count is deleted at zero"
    );

    // past zero: nothing written, nothing published
    assert_eq!(latch.count_down().await.unwrap(), 0);
    assert!(!key_exists(&mut raw, "latch:layout").await);
    assert!(sub.drain(&s).await.is_empty());

    assert!(
        latch.try_set_count(1).await.unwrap(),
        "a latch that reached zero can be set again"
    );
    assert!(latch.delete().await.unwrap());
    assert!(!latch.delete().await.unwrap(), "deleting nothing");
    assert_eq!(sub.drain(&s).await, vec!["1", "1"], "a set and one deletion");
    assert_eq!(common::leftovers(&mut raw).await, Vec::<String>::new());
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_waiter_is_woken_by_the_count_down_that_reaches_zero() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let other = s.client(Config::default()).await;
    let latch = c.count_down_latch("latch:wake").unwrap();
    assert!(latch.try_set_count(2).await.unwrap());
    let waiters: Vec<_> = (0..3).map(|_| spawn_wait(&latch)).collect();
    // every waiter is listening before the count moves
    subscribed_to(&c, 1, "the waiters' channel subscribed").await;
    let by_other = other.count_down_latch("latch:wake").unwrap();
    by_other.count_down().await.unwrap();
    let t0 = Instant::now();
    by_other.count_down().await.unwrap();
    for w in waiters {
        assert!(w.await.unwrap().unwrap(), "a waiter saw the latch reach zero");
    }
    assert!(
        t0.elapsed() < WOKEN,
        "woken {:?} after the last count-down",
        t0.elapsed()
    );
    // the waiters left the channel
    subscribed_to(&c, 0, "the channel unsubscribed").await;
    c.shutdown().await.unwrap();
    other.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_and_a_vanished_count_wake_waiters_too() {
    init_tracing();
    let s = RedisServer::start();
    // the fallback poll while subscribed, cut short so that a count gone without a message is
    // seen within the test
    let c = s
        .client(Config::default().with_subscribed_poll_interval(Duration::from_millis(300)))
        .await;
    let mut raw = s.conn().await;

    // a deletion publishes "1": Redisson's waiters ignore it, ours read the count (now 0)
    let latch = c.count_down_latch("latch:deleted").unwrap();
    assert!(latch.try_set_count(5).await.unwrap());
    let waiter = spawn_wait(&latch);
    subscribed_to(&c, 1, "the waiter subscribed").await;
    let t0 = Instant::now();
    assert!(latch.delete().await.unwrap());
    assert!(waiter.await.unwrap().unwrap());
    assert!(t0.elapsed() < WOKEN);

    // an operator's DEL publishes nothing: the fallback poll finds the count gone
    let latch = c.count_down_latch("latch:vanished").unwrap();
    assert!(latch.try_set_count(5).await.unwrap());
    let waiter = spawn_wait(&latch);
    let _: () = redis::cmd("DEL")
        .arg("latch:vanished")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(waiter.await.unwrap().unwrap());
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_that_times_out_says_so_and_leaves_nothing() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let latch = c.count_down_latch("latch:slow").unwrap();
    assert!(latch.try_set_count(1).await.unwrap());
    let t0 = Instant::now();
    assert!(!latch.wait_for(Duration::from_millis(300)).await.unwrap());
    assert!(t0.elapsed() >= Duration::from_millis(300));
    // a dropped wait leaves the channel too
    let dropped = tokio::time::timeout(Duration::from_millis(200), latch.wait()).await;
    assert!(dropped.is_err(), "the count is 1: wait() is still waiting");
    subscribed_to(&c, 0, "the channel unsubscribed").await;
    // an empty latch: at once
    assert!(c
        .count_down_latch("latch:none")
        .unwrap()
        .wait_for(Duration::ZERO)
        .await
        .unwrap());
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_and_other_types_are_refused_without_a_write() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    assert!(matches!(c.count_down_latch(""), Err(Error::InvalidArgument(_))));
    let latch = c.count_down_latch("latch:huge").unwrap();
    assert!(matches!(
        latch.try_set_count(u64::MAX).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(!key_exists(&mut raw, "latch:huge").await, "nothing written");

    // another type under the name
    let _: () = redis::cmd("RPUSH")
        .arg("latch:list")
        .arg("x")
        .query_async(&mut raw)
        .await
        .unwrap();
    let list = c.count_down_latch("latch:list").unwrap();
    assert!(
        !list.try_set_count(3).await.unwrap(),
        "an existing key is not overwritten"
    );
    assert!(matches!(list.count().await, Err(Error::WrongType { .. })));
    assert!(matches!(list.count_down().await, Err(Error::WrongType { .. })));
    assert!(matches!(
        list.wait_for(Duration::from_secs(1)).await,
        Err(Error::WrongType { .. })
    ));
    assert!(
        matches!(list.delete().await, Ok(true)),
        "delete removes whatever is there, as Redisson's"
    );

    // a string that is not a count
    let _: () = redis::cmd("SET")
        .arg("latch:text")
        .arg("abc")
        .query_async(&mut raw)
        .await
        .unwrap();
    let text = c.count_down_latch("latch:text").unwrap();
    assert!(matches!(text.count().await, Err(Error::Protocol(_))));
    assert!(text.count_down().await.is_err());
    assert_eq!(
        get(&mut raw, "latch:text").await.as_deref(),
        Some("abc"),
        "nothing written"
    );
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_survives_its_pub_sub_connection_being_killed() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let latch = c.count_down_latch("latch:killed").unwrap();
    assert!(latch.try_set_count(1).await.unwrap());
    let waiter = spawn_wait(&latch);
    let channel = "redisson_countdownlatch__channel__{latch:killed}";
    server_subscribers(&raw, channel, 1, "the waiter subscribed on the server").await;
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(killed >= 1, "the waiter's pub/sub connection was killed");
    server_subscribers(
        &raw,
        channel,
        1,
        "the channel subscribed again on a new connection",
    )
    .await;
    let t0 = Instant::now();
    latch.count_down().await.unwrap();
    assert!(waiter.await.unwrap().unwrap());
    assert!(
        t0.elapsed() < WOKEN,
        "woken {:?} after the count-down",
        t0.elapsed()
    );
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_a_wait() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let latch = c.count_down_latch("latch:shutdown").unwrap();
    assert!(latch.try_set_count(1).await.unwrap());
    let l = latch.clone();
    let waiter = tokio::spawn(async move { l.wait().await });
    subscribed_to(&c, 1, "the waiter subscribed").await;
    c.shutdown().await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(ended, Err(Error::Shutdown)), "{ended:?}");
}

#[test]
fn the_blocking_twin_waits_on_a_thread() {
    init_tracing();
    let s = RedisServer::start();
    let c = redisson_lock::blocking::Client::connect(&s.url()).unwrap();
    let latch = c.count_down_latch("latch:blocking").unwrap();
    assert!(latch.try_set_count(2).unwrap());
    let waiter = std::thread::spawn({
        let latch = latch.clone();
        move || latch.wait_for(Duration::from_secs(60))
    });
    assert_eq!(latch.count_down().unwrap(), 1);
    assert_eq!(latch.count().unwrap(), 1);
    let t0 = Instant::now();
    assert_eq!(latch.count_down().unwrap(), 0);
    assert!(waiter.join().unwrap().unwrap());
    assert!(t0.elapsed() < WOKEN);
    assert!(!latch.delete().unwrap());
    c.shutdown().unwrap();
}

/// A count-down whose reply is lost is an error for its caller and is never sent again: Redis
/// (stopped, so the request waits in its socket and runs when it continues) counts it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_down_whose_reply_is_lost_counts_at_most_once() {
    init_tracing();
    let s = RedisServer::start();
    let cfg = Config::default()
        .with_command_timeout(Duration::from_millis(200))
        .with_retry_interval(Duration::from_millis(100));
    let c = s.client(cfg).await;
    let mut raw = s.conn().await;
    let latch = c.count_down_latch("latch:lost").unwrap();
    assert!(latch.try_set_count(5).await.unwrap());
    assert_eq!(latch.count_down().await.unwrap(), 4); // the script is loaded
    let pid = common::faults::pid(&s.url()).await.unwrap();
    let stopped = common::faults::Stopped::new(pid).unwrap();
    let r = latch.count_down().await;
    assert!(matches!(&r, Err(e) if e.is_transient()), "a timeout: {r:?}");
    tokio::time::sleep(Duration::from_millis(300)).await; // stopped past another command timeout
    drop(stopped);
    eventually(Duration::from_secs(5), "the stopped count-down ran", || {
        let latch = latch.clone();
        async move { latch.count().await.ok() == Some(3) }
    })
    .await;
    // nothing sent it again meanwhile
    c.shutdown().await.unwrap();
    assert_eq!(
        get(&mut raw, "latch:lost").await.as_deref(),
        Some("3"),
        "counted once"
    );
}
