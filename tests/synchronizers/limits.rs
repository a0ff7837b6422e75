//! Every synchronizer count stays within ±`MAX_PERMITS` (2^53 − 1, the integers the scripts hold
//! exactly): a call that would take a count beyond it, or that finds one beyond it in Redis
//! (written by hand or by another client), is `Error::OutOfRange` and writes nothing; an
//! argument beyond it is `Error::InvalidArgument` and sends nothing.

use crate::common::kept::Kept;
use std::time::Duration;

use redis::AsyncCommands;
use redisson_lock::{Config, Error, MAX_PERMITS};

use crate::common::{self, RedisServer};

const MAX: i64 = MAX_PERMITS as i64;

fn out_of_range<T: std::fmt::Debug>(what: &str, r: redisson_lock::Result<T>) {
    match r {
        Err(Error::OutOfRange { detail, .. }) => {
            assert!(detail.contains("9007199254740991"), "{what}: {detail}")
        }
        other => panic!("{what}: expected Error::OutOfRange, got {other:?}"),
    }
}

async fn text(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> Option<String> {
    raw.get(key).await.unwrap()
}

#[tokio::test]
async fn semaphore_counts_never_leave_the_range() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let sem = client.semaphore("lim:sem").unwrap();
    assert!(sem.try_set_permits(MAX - 1).await.unwrap());
    // up to the bound exactly, then not one more
    sem.release(1).await.unwrap();
    assert_eq!(sem.available_permits().await.unwrap(), MAX);
    out_of_range("release at the bound", sem.release(1).await);
    out_of_range("release_if_exists at the bound", sem.release_if_exists(1).await);
    out_of_range("add_permits at the bound", sem.add_permits(1).await);
    assert_eq!(
        text(&mut raw, "lim:sem").await.as_deref(),
        Some("9007199254740991"),
        "nothing written"
    );
    assert_eq!(
        sem.add_permits(-MAX).await.unwrap(),
        0,
        "a change within the range"
    );
    assert_eq!(
        sem.add_permits(-MAX).await.unwrap(),
        -MAX,
        "down to the lower bound"
    );
    out_of_range("add_permits below the bound", sem.add_permits(-1).await);
    assert_eq!(sem.available_permits().await.unwrap(), -MAX);
    // arguments beyond the range are refused before anything is sent
    assert!(matches!(
        sem.add_permits(MAX + 1).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sem.try_set_permits(-MAX - 1).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sem.release(MAX_PERMITS + 1).await,
        Err(Error::InvalidArgument(_))
    ));
    // a count beyond the range, written by somebody else: refused by every call that reads it,
    // and left as it was; the exact value is still readable
    for beyond in ["9007199254740992", "9223372036854775807", "-9007199254740992"] {
        let _: () = raw.set("lim:sem", beyond).await.unwrap();
        out_of_range("try_acquire", sem.try_acquire(1).await.kept());
        out_of_range(
            "try_acquire_for",
            sem.try_acquire_for(1, Duration::from_millis(100)).await.kept(),
        );
        out_of_range("release", sem.release(1).await);
        out_of_range("add_permits", sem.add_permits(-1).await);
        out_of_range("drain_permits", sem.drain_permits().await);
        assert_eq!(
            text(&mut raw, "lim:sem").await.as_deref(),
            Some(beyond),
            "nothing written"
        );
        assert_eq!(
            sem.available_permits().await.unwrap().to_string(),
            beyond,
            "read exactly"
        );
    }
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn expirable_semaphore_counts_never_leave_the_range() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let sem = client.permit_expirable_semaphore("lim:pes").unwrap();
    assert!(sem.try_set_permits(MAX).await.unwrap());
    let id = sem.try_acquire().await.kept().unwrap().expect("a permit");
    assert_eq!(sem.available_permits().await.unwrap(), MAX - 1);
    // the permit's return would take the count to MAX; one more permit added first, and the
    // return would overflow: refused, the permit still held
    assert_eq!(sem.add_permits(1).await.unwrap(), MAX);
    out_of_range("release over the bound", sem.release(id).await);
    out_of_range(
        "try_release_many over the bound",
        sem.try_release_many(&[id]).await,
    );
    assert_eq!(
        sem.acquired_permits().await.unwrap(),
        1,
        "the permit is still held"
    );
    assert_eq!(sem.add_permits(-1).await.unwrap(), MAX - 1);
    sem.release(id).await.unwrap();
    // set_permits: the held permits count against the new total
    let held = sem
        .try_acquire_many(2, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("two permits")
        .forget();
    assert_eq!(held.len(), 2, "two permits");
    out_of_range("set_permits below the bound", sem.set_permits(-MAX + 1).await);
    assert_eq!(sem.available_permits().await.unwrap(), MAX - 2, "nothing written");
    sem.release_many(&held).await.unwrap();
    // a lease that ends and comes back is counted too: its return would overflow
    let leased = sem
        .try_acquire_for(Duration::ZERO, Some(Duration::from_millis(50)))
        .await
        .kept()
        .unwrap()
        .expect("a permit");
    assert_eq!(sem.add_permits(1).await.unwrap(), MAX);
    let leases = sem.leases_key().to_owned();
    common::eventually(Duration::from_secs(5), "the lease ends", || {
        let mut raw = raw.clone();
        let leases = leases.clone();
        async move {
            let ended: Vec<Vec<u8>> = redis::cmd("ZRANGEBYSCORE")
                .arg(&leases)
                .arg(0)
                .arg(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_millis() as u64,
                )
                .query_async(&mut raw)
                .await
                .unwrap();
            !ended.is_empty()
        }
    })
    .await;
    out_of_range("a reclaim over the bound", sem.available_permits().await);
    out_of_range(
        "an acquire whose reclaim would overflow",
        sem.try_acquire().await.kept(),
    );
    out_of_range(
        "a lease update whose reclaim would overflow",
        sem.update_lease_time(leased, None).await,
    );
    assert_eq!(
        text(&mut raw, "lim:pes").await.as_deref(),
        Some("9007199254740991"),
        "nothing written"
    );
    // a count beyond the range in Redis
    let _: () = raw.set("lim:pes", "9007199254740993").await.unwrap();
    out_of_range("counts of a count beyond the range", sem.permits().await);
    out_of_range("add_permits", sem.add_permits(-1).await);
    assert_eq!(
        text(&mut raw, "lim:pes").await.as_deref(),
        Some("9007199254740993")
    );
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn latch_counts_never_leave_the_range() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let latch = client.count_down_latch("lim:latch").unwrap();
    assert!(matches!(
        latch.try_set_count(MAX_PERMITS + 1).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(!common::key_exists(&mut raw, "lim:latch").await, "nothing sent");
    assert!(latch.try_set_count(MAX_PERMITS).await.unwrap());
    assert_eq!(
        latch.count_down().await.unwrap(),
        MAX_PERMITS - 1,
        "exact below the bound"
    );
    assert_eq!(latch.count().await.unwrap(), MAX_PERMITS - 1);
    // a count beyond the range in Redis: a count-down is refused, the latch stays as it was
    for beyond in ["9007199254740993", "9223372036854775807"] {
        let _: () = raw.set("lim:latch", beyond).await.unwrap();
        out_of_range("count_down", latch.count_down().await);
        assert_eq!(
            text(&mut raw, "lim:latch").await.as_deref(),
            Some(beyond),
            "nothing written"
        );
        assert_eq!(latch.count().await.unwrap().to_string(), beyond, "read exactly");
        assert!(
            !latch.wait_for(Duration::from_millis(50)).await.unwrap(),
            "still closed"
        );
    }
    // a wait without a practical bound does not overflow the clock
    let _: () = raw.del("lim:latch").await.unwrap();
    assert!(latch.wait_for(Duration::MAX).await.unwrap(), "open at once");
    client.shutdown().await.unwrap();
}

/// `Duration::MAX` as a wait means "no practical bound" on every path, async and blocking: one
/// deadline rule (saturating), never an overflow of the clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_of_duration_max_is_taken_as_no_bound() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let sem = client.semaphore("lim:max:sem").unwrap();
    assert!(sem.try_set_permits(2).await.unwrap());
    assert!(sem.try_acquire_for(1, Duration::MAX).await.kept().unwrap());
    let g = sem
        .try_acquire_for(1, Duration::MAX)
        .await
        .unwrap()
        .expect("a permit");
    g.release().await.unwrap();
    let pes = client.permit_expirable_semaphore("lim:max:pes").unwrap();
    assert!(pes.try_set_permits(1).await.unwrap());
    let id = pes
        .try_acquire_for(Duration::MAX, None)
        .await
        .kept()
        .unwrap()
        .expect("a permit");
    pes.release(id).await.unwrap();
    let lock = client.lock("lim:max:lock").unwrap();
    lock.try_lock_for(Duration::MAX)
        .await
        .unwrap()
        .expect("free")
        .unlock()
        .await
        .unwrap();
    client.shutdown().await.unwrap();
    let url = s.url();
    tokio::task::spawn_blocking(move || {
        let b = redisson_lock::blocking::Client::connect(&url).unwrap();
        let latch = b.count_down_latch("lim:max:latch").unwrap();
        assert!(latch.wait_for(Duration::MAX).unwrap(), "no latch: open at once");
        assert!(b
            .semaphore("lim:max:sem")
            .unwrap()
            .try_acquire_for(1, Duration::MAX)
            .kept()
            .unwrap());
    })
    .await
    .unwrap();
}
