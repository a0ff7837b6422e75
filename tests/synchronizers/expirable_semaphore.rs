//! `PermitExpirableSemaphore` (Redisson's `RPermitExpirableSemaphore`) against a real
//! redis-server: Redisson's layout (available permits at the name, held permits in the zset
//! `{name}:timeout` as 16 raw bytes scored by their lease end, `922337203685477` without a
//! lease), ids in Java's hex form, messages, leases that end and come back to a waiter at their
//! end, all-or-nothing multi-release, lease updates and queries, bad input and keys of another
//! type, and a lost acquisition reply. Interop with real Redisson is in the compat matrix.

use crate::common;
use crate::common::kept::Kept;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{eventually, faults, init_tracing, key_exists, latches_deleted, RawSubscriber, RedisServer};
use redisson_lock::{Client, Config, Error, PermitId, PermitLease};

const NO_LEASE: f64 = 922_337_203_685_477.0;

fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as f64
}

async fn leases(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> Vec<(Vec<u8>, f64)> {
    redis::cmd("ZRANGE")
        .arg(key)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query_async(raw)
        .await
        .unwrap()
}

async fn get(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query_async(raw).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permits_are_held_under_ids_in_redissons_layout() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let sem = c.permit_expirable_semaphore("pes:layout").unwrap();
    assert_eq!(sem.leases_key(), "{pes:layout}:timeout");
    let mut sub = RawSubscriber::new(&s.url(), "redisson_sc:{pes:layout}").await;

    assert_eq!(
        sem.available_permits().await.unwrap(),
        0,
        "a missing semaphore has no permits"
    );
    assert!(sem.try_acquire().await.kept().unwrap().is_none());
    assert!(sem.try_set_permits(3).await.unwrap());
    assert_eq!(sub.drain(&s).await, vec!["3"]);

    let free = sem.acquire().await.kept().unwrap();
    let before = now_ms();
    let leased = sem
        .acquire_with_lease(Duration::from_secs(60))
        .await
        .kept()
        .unwrap();
    assert_eq!(get(&mut raw, "pes:layout").await.as_deref(), Some("1"));
    let held = leases(&mut raw, "{pes:layout}:timeout").await;
    assert_eq!(held.len(), 2);
    for (member, score) in &held {
        assert_eq!(member.len(), 16, "ids are 16 raw bytes");
        let id = PermitId::from_bytes(member.as_slice().try_into().unwrap());
        if id == free {
            assert_eq!(*score, NO_LEASE, "no lease");
        } else {
            assert_eq!(id, leased);
            assert!(
                *score >= before + 59_000.0 && *score <= now_ms() + 60_000.0,
                "{score}"
            );
        }
    }
    assert_eq!(sem.acquired_permits().await.unwrap(), 2);
    assert_eq!(sem.permits().await.unwrap(), 3);
    assert_eq!(sem.lease_time(free).await.unwrap(), Some(PermitLease::Unlimited));
    match sem.lease_time(leased).await.unwrap() {
        Some(PermitLease::Remaining(d)) => assert!(
            d > Duration::from_secs(55) && d <= Duration::from_secs(60),
            "{d:?}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(sub.drain(&s).await.is_empty(), "taking permits publishes nothing");

    // ids travel as Java shows them
    let text = leased.to_string();
    assert_eq!(text.len(), 32);
    assert_eq!(text.parse::<PermitId>().unwrap(), leased);

    assert!(sem.try_release(leased).await.unwrap());
    assert_eq!(
        sub.drain(&s).await,
        vec!["2"],
        "a release publishes the new total"
    );
    assert!(!sem.try_release(leased).await.unwrap(), "released already");
    assert!(matches!(sem.release(leased).await, Err(Error::NotHeld { .. })));
    assert_eq!(sem.lease_time(leased).await.unwrap(), None);
    assert!(!sem.update_lease_time(leased, None).await.unwrap());

    // update a lease: no lease → 1 minute → none again
    assert!(sem
        .update_lease_time(free, Some(Duration::from_secs(60)))
        .await
        .unwrap());
    assert!(matches!(
        sem.lease_time(free).await.unwrap(),
        Some(PermitLease::Remaining(_))
    ));
    assert!(sem.update_lease_time(free, None).await.unwrap());
    assert_eq!(sem.lease_time(free).await.unwrap(), Some(PermitLease::Unlimited));

    // set_permits keeps what is held: capacity 5 with one held → 4 available
    sem.set_permits(5).await.unwrap();
    assert_eq!(sem.available_permits().await.unwrap(), 4);
    assert_eq!(
        sub.drain(&s).await,
        vec!["5"],
        "set_permits publishes the capacity, as Redisson"
    );
    assert_eq!(sem.add_permits(2).await.unwrap(), 6);
    assert_eq!(
        sub.drain(&s).await,
        vec!["2"],
        "add_permits publishes the change, as Redisson"
    );
    assert_eq!(sem.add_permits(-7).await.unwrap(), -1);
    assert!(
        sub.drain(&s).await.is_empty(),
        "removing permits publishes nothing"
    );
    sem.release(free).await.unwrap();
    assert_eq!(sem.available_permits().await.unwrap(), 0);

    // a TTL on the count is copied onto the leases when permits are taken
    sem.add_permits(2).await.unwrap();
    let _: () = redis::cmd("PEXPIRE")
        .arg("pes:layout")
        .arg(60_000)
        .query_async(&mut raw)
        .await
        .unwrap();
    let _id = sem.acquire().await.kept().unwrap();
    assert!(common::pttl(&mut raw, "{pes:layout}:timeout").await > 50_000);

    assert!(sem.delete().await.unwrap());
    assert!(!key_exists(&mut raw, "pes:layout").await);
    assert!(!key_exists(&mut raw, "{pes:layout}:timeout").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_that_ends_gives_its_permit_to_a_waiter_at_its_end() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let sem = c.permit_expirable_semaphore("pes:expiry").unwrap();
    assert!(sem.try_set_permits(1).await.unwrap());
    let lease = Duration::from_millis(800);
    let taken = Instant::now();
    let first = sem.acquire_with_lease(lease).await.kept().unwrap();
    // nobody releases it: the waiter is not woken by a message, it tries again when the lease
    // ends (far sooner than the 30 s fallback poll)
    let second = tokio::time::timeout(Duration::from_secs(10), sem.acquire())
        .await
        .unwrap()
        .unwrap()
        .forget()[0];
    let waited = taken.elapsed();
    assert!(waited >= lease, "not before the lease ended: {waited:?}");
    assert!(waited < lease + Duration::from_secs(3), "at its end: {waited:?}");
    assert_ne!(first, second);
    assert!(
        !sem.try_release(first).await.unwrap(),
        "the ended permit was reclaimed"
    );
    assert_eq!(sem.acquired_permits().await.unwrap(), 1);

    // an ended lease not yet reclaimed: released late, it still comes back, reported `false`
    sem.release(second).await.unwrap();
    let short = sem
        .acquire_with_lease(Duration::from_millis(1))
        .await
        .kept()
        .unwrap();
    let mut raw = s.conn().await;
    eventually(Duration::from_secs(2), "the lease ended", || {
        let url = s.url();
        async move {
            let mut c = redis::Client::open(url)
                .unwrap()
                .get_multiplexed_async_connection()
                .await
                .unwrap();
            let score: f64 = redis::cmd("ZSCORE")
                .arg("{pes:expiry}:timeout")
                .arg(&short.as_bytes()[..])
                .query_async(&mut c)
                .await
                .unwrap();
            score < now_ms()
        }
    })
    .await;
    assert!(!sem.try_release(short).await.unwrap());
    assert_eq!(
        get(&mut raw, "pes:expiry").await.as_deref(),
        Some("1"),
        "the permit came back once"
    );
}

/// The guard gives its permits back (released, or dropped: in the background, which shutdown
/// waits for); forgotten, they stay taken under their ids; after their lease ended there is
/// nothing to give back, and its release says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guard_gives_its_permits_back_once() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let sem = c.permit_expirable_semaphore("pes:guard").unwrap();
    assert!(sem.try_set_permits(3).await.unwrap());

    let g = sem.acquire_many(2, None).await.unwrap();
    assert_eq!(g.ids().len(), 2);
    assert_eq!(g.id(), g.ids()[0]);
    assert_eq!(sem.available_permits().await.unwrap(), 1);
    g.release().await.unwrap();
    assert_eq!(sem.available_permits().await.unwrap(), 3);
    assert!(leases(&mut raw, "{pes:guard}:timeout").await.is_empty());

    {
        let _g = sem.try_acquire().await.unwrap().expect("a permit");
        assert_eq!(sem.available_permits().await.unwrap(), 2);
    } // given back in the background
    eventually(
        Duration::from_secs(5),
        "the dropped guard's permit is back",
        || async { sem.available_permits().await.unwrap() == 3 },
    )
    .await;

    let kept = sem.acquire().await.unwrap().forget();
    assert_eq!(kept.len(), 1);
    assert_eq!(sem.available_permits().await.unwrap(), 2, "forgotten: kept taken");
    sem.release(kept[0]).await.unwrap();

    let short = sem.acquire_with_lease(Duration::from_millis(50)).await.unwrap();
    let id = short.id();
    eventually(Duration::from_secs(5), "the lease ended", || async {
        sem.lease_time(id).await.unwrap().is_none()
    })
    .await;
    let r = short.release().await;
    assert!(
        matches!(&r, Err(Error::NotHeld { field, .. }) if *field == id.to_string()),
        "{r:?}"
    );
    assert_eq!(
        sem.available_permits().await.unwrap(),
        3,
        "the lease gave it back"
    );

    // dropped just before shutdown: shutdown waits for the give-back
    let g = sem.acquire_many(3, None).await.unwrap();
    drop(g);
    c.shutdown().await.unwrap();
    let fresh = Client::connect(&s.url()).await.unwrap();
    let sem = fresh.permit_expirable_semaphore("pes:guard").unwrap();
    assert_eq!(sem.available_permits().await.unwrap(), 3);
    assert_eq!(sem.acquired_permits().await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_permits_are_released_all_or_none() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let sem = c.permit_expirable_semaphore("pes:many").unwrap();
    assert!(sem.try_set_permits(4).await.unwrap());
    let ids = sem.acquire_many(3, None).await.unwrap().forget();
    assert_eq!(ids.len(), 3);
    assert!(
        sem.try_acquire_many(2, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none(),
        "only one left"
    );
    let stranger: PermitId = "00112233445566778899aabbccddeeff".parse().unwrap();
    let mixed = [ids[0], stranger];
    assert_eq!(
        sem.try_release_many(&mixed).await.unwrap(),
        0,
        "one unknown id: none released"
    );
    assert!(matches!(
        sem.release_many(&mixed).await,
        Err(Error::NotHeld { .. })
    ));
    assert_eq!(sem.acquired_permits().await.unwrap(), 3);
    sem.release_many(&ids).await.unwrap();
    assert_eq!(sem.available_permits().await.unwrap(), 4);
    assert_eq!(sem.acquired_permits().await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_and_keys_of_another_type_are_refused_without_a_write() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let sem = c.permit_expirable_semaphore("pes:bad").unwrap();
    assert!(matches!(
        sem.acquire_with_lease(Duration::ZERO).await.kept(),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sem.acquire_many(0, None).await.kept(),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sem.try_acquire_for(Duration::from_secs(1), Some(Duration::MAX))
            .await
            .kept(),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sem.set_permits(i64::MAX).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(!key_exists(&mut raw, "pes:bad").await);

    // another type at the count, then at the leases
    let _: () = redis::cmd("LPUSH")
        .arg("pes:bad")
        .arg("x")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(matches!(
        sem.try_acquire().await.kept(),
        Err(Error::WrongType { .. })
    ));
    assert!(matches!(
        sem.available_permits().await,
        Err(Error::WrongType { .. })
    ));
    let _: () = redis::cmd("DEL")
        .arg("pes:bad")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(sem.try_set_permits(1).await.unwrap());
    let _: () = redis::cmd("SET")
        .arg("{pes:bad}:timeout")
        .arg("x")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(matches!(
        sem.try_acquire().await.kept(),
        Err(Error::WrongType { .. })
    ));
    assert_eq!(get(&mut raw, "pes:bad").await.as_deref(), Some("1"), "unchanged");
    let _: () = redis::cmd("DEL")
        .arg("{pes:bad}:timeout")
        .query_async(&mut raw)
        .await
        .unwrap();

    // a count that is not an integer
    let _: () = redis::cmd("SET")
        .arg("pes:bad")
        .arg("lots")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(matches!(sem.try_acquire().await.kept(), Err(Error::Redis(_))));
    assert_eq!(get(&mut raw, "pes:bad").await.as_deref(), Some("lots"));
    assert!(
        !key_exists(&mut raw, "{pes:bad}:timeout").await,
        "no lease was written"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquisition_dropped_in_flight_gives_its_permit_back() {
    init_tracing();
    let s = RedisServer::start();
    let cfg = Config::default()
        .with_command_timeout(Duration::from_millis(200))
        .with_retry_interval(Duration::from_millis(100));
    let c = s.client(cfg).await;
    let sem = c.permit_expirable_semaphore("pes:lost").unwrap();
    assert!(sem.try_set_permits(1).await.unwrap());
    // the scripts are loaded (a first EVALSHA answered NOSCRIPT would never run)
    let id = sem.acquire().await.kept().unwrap();
    sem.release(id).await.unwrap();
    // nothing of the client in flight, then Redis stops: the request waits in its socket and
    // runs when it continues, after its caller was dropped
    latches_deleted(&s).await;
    let pid = faults::pid(&s.url()).await.unwrap();
    let stopped = faults::Stopped::new(pid).unwrap();
    let dropped = tokio::time::timeout(Duration::from_millis(100), sem.acquire()).await;
    assert!(dropped.is_err());
    tokio::time::sleep(Duration::from_millis(400)).await; // stopped past the command timeout
    drop(stopped);
    c.shutdown().await.unwrap();
    let fresh = Client::connect(&s.url()).await.unwrap();
    let sem = fresh.permit_expirable_semaphore("pes:lost").unwrap();
    assert_eq!(sem.available_permits().await.unwrap(), 1, "given back");
    assert_eq!(sem.acquired_permits().await.unwrap(), 0);
}
