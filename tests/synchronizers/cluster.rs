//! The synchronizers in a Redis Cluster (3 masters): every script's keys (the count, the leases,
//! the request and attempt latches) and the channel share one slot, for plain names and names
//! with a hash tag; waiters are woken through sharded pub/sub (what Redisson 3.22+ uses in a
//! Redis 7 cluster) by a release from another client.

use crate::common;
use crate::common::kept::Kept;

use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::init_tracing;
use redisson_lock::Client;

/// Far below the subscribed fallback poll (30 s by default): only a message wakes this fast.
const WOKEN: Duration = Duration::from_secs(5);

async fn client(cluster: &Cluster) -> Client {
    Client::builder().cluster(cluster.urls()).build().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphores_work_across_slots_and_wake_waiters_through_sharded_pubsub() {
    init_tracing();
    let cluster = Cluster::start(3, 0).await;
    let a = client(&cluster).await;
    let b = client(&cluster).await;
    // Redis 6: no sharded pub/sub, and the clients' Auto mode picks classic pub/sub, which must
    // wake the waiters as well
    let sharded = cluster.sharded_pubsub().await;
    if !sharded {
        crate::common::skip_unsupported(
            "semaphores_work_across_slots_and_wake_waiters_through_sharded_pubsub (its sharded part)",
            "no sharded pub/sub (PUBSUB SHARDNUMSUB unknown): checked with classic pub/sub",
        );
    }
    // names on different masters, with and without a hash tag
    for name in ["sem:a", "sem:b:7", "sem:{tenant-1}:jobs", "{x}y"] {
        let sem = a.semaphore(name).unwrap();
        assert!(sem.try_set_permits(0).await.unwrap());
        let waiter = {
            let sem = sem.clone();
            tokio::spawn(async move { sem.try_acquire_for(2, Duration::from_secs(60)).await.kept() })
        };
        // wait until the waiter listens: the channel has a (sharded) subscriber
        let channel = format!(
            "redisson_sc:{}",
            if name.contains('{') {
                name.to_owned()
            } else {
                format!("{{{name}}}")
            }
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while cluster.numsub(&channel, sharded).await < 1 {
            assert!(
                Instant::now() < deadline,
                "{name}: the waiter never subscribed to {channel}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let released = Instant::now();
        b.semaphore(name).unwrap().release(2).await.unwrap();
        assert!(waiter.await.unwrap().unwrap(), "{name}");
        assert!(
            released.elapsed() < WOKEN,
            "{name}: woken after {:?}",
            released.elapsed()
        );
        assert_eq!(sem.available_permits().await.unwrap(), 0);
        assert_eq!(sem.add_permits(3).await.unwrap(), 3);
        assert_eq!(sem.drain_permits().await.unwrap(), 3);

        let pes = a.permit_expirable_semaphore(name).unwrap();
        assert!(pes.delete().await.unwrap(), "the drained count is still there");
        assert!(pes.try_set_permits(1).await.unwrap());
        let id = pes
            .acquire_with_lease(Duration::from_secs(30))
            .await
            .kept()
            .unwrap();
        let waiter = {
            let pes = pes.clone();
            tokio::spawn(async move { pes.try_acquire_for(Duration::from_secs(60), None).await.kept() })
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while cluster.numsub(&channel, sharded).await < 1 {
            assert!(
                Instant::now() < deadline,
                "{name}: the expirable waiter never subscribed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let released = Instant::now();
        b.permit_expirable_semaphore(name)
            .unwrap()
            .release(id)
            .await
            .unwrap();
        let second = waiter.await.unwrap().unwrap().expect("woken with the permit");
        assert!(
            released.elapsed() < WOKEN,
            "{name}: woken after {:?}",
            released.elapsed()
        );
        assert!(pes
            .update_lease_time(second, Some(Duration::from_secs(5)))
            .await
            .unwrap());
        assert!(matches!(
            pes.lease_time(second).await.unwrap(),
            Some(redisson_lock::PermitLease::Remaining(_))
        ));
        pes.release_many(&[second]).await.unwrap();
        assert_eq!(pes.permits().await.unwrap(), 1);
        pes.set_permits(2).await.unwrap();
        assert_eq!(pes.available_permits().await.unwrap(), 2);
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}
