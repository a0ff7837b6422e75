//! A master with a replica and `ReplicaSync` (Redisson's `checkLockSyncedSlaves`): lock writes
//! are followed by `WAIT`; with `Required` an acquisition no replica confirmed is undone.

mod common;

use common::kept::Kept;
use std::time::{Duration, Instant};

use common::faults::{pid, Stopped};
use common::{eventually, RedisServer};
use redisson_lock::{Client, Config, Error, ReplicaSync};

/// A master and one replica that has finished its first sync.
async fn pair() -> (RedisServer, RedisServer) {
    let master = RedisServer::start();
    let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut m = master.conn().await;
    eventually(
        Duration::from_secs(20),
        "the replica is connected and in sync",
        || {
            let mut m = m.clone();
            async move {
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query_async(&mut m)
                    .await
                    .unwrap();
                info.contains("connected_slaves:1") && info.contains("state=online")
            }
        },
    )
    .await;
    let _: String = redis::cmd("PING").query_async(&mut m).await.unwrap();
    (master, replica)
}

/// A client whose `WAIT`s give up after 300 ms (for the tests that stop the replica).
async fn client(master: &RedisServer, mode: ReplicaSync) -> Client {
    master
        .client(
            Config::default()
                .with_replica_sync(mode)
                .with_replica_sync_timeout(Duration::from_millis(300))
                .with_retry_attempts(2)
                .with_retry_interval(Duration::from_millis(100)),
        )
        .await
}

/// A client with Redisson's defaults (1 s `WAIT`, 4 retries): for healthy replicas on a machine
/// that may be busy.
async fn patient(master: &RedisServer, mode: ReplicaSync) -> Client {
    master.client(Config::default().with_replica_sync(mode)).await
}

/// How many `WAIT`s the server has run (`INFO commandstats`).
async fn waits(s: &RedisServer) -> u64 {
    common::command_calls(&mut s.conn().await, "wait").await
}

async fn exists(s: &RedisServer, key: &str) -> bool {
    let mut c = s.conn().await;
    common::key_exists(&mut c, key).await
}

/// `Required` with a healthy replica: every acquisition is on the replica when `lock()` returns
/// (the WAIT confirmed it), and the unlock's delete is too.
#[tokio::test]
async fn required_acquisitions_are_on_the_replica_when_lock_returns() {
    let (master, replica) = pair().await;
    let c = patient(&master, ReplicaSync::Required).await;
    let lock = c.lock("sync:a").unwrap();
    let before = waits(&master).await;
    for _ in 0..20 {
        let g = lock.lock().await.unwrap();
        assert!(
            exists(&replica, "sync:a").await,
            "the replica has the hold when lock() returns"
        );
        g.unlock().await.unwrap();
        assert!(
            !exists(&replica, "sync:a").await,
            "the replica has the release when unlock() returns"
        );
    }
    let sent = waits(&master).await - before;
    assert!(
        sent >= 40,
        "a WAIT after every acquire and every release ({sent} for 20 pairs)"
    );
    c.shutdown().await.unwrap();
}

/// `Required` with a stopped replica: the acquisition is undone and, after the retries, the caller
/// gets `ReplicasNotSynced`; nothing is left held on the master. While replicas count as lagging
/// the next acquisition fails before anything is sent. Once the replica is back it works again.
#[tokio::test]
async fn required_undoes_an_unconfirmed_acquisition() {
    let (master, replica) = pair().await;
    let c = client(&master, ReplicaSync::Required).await;
    let lock = c.lock("sync:b").unwrap();
    let stopped = Stopped::new(pid(&replica.url()).await.unwrap()).unwrap();
    let t = Instant::now();
    let err = lock.lock().await.unwrap_err();
    assert!(matches!(err, Error::ReplicasNotSynced { wanted: 1, .. }), "{err}");
    assert!(
        !exists(&master, "sync:b").await,
        "the unconfirmed hold was undone on the master"
    );
    assert_eq!(c.stats().holds, 0, "no hold is left in the client");
    // at least one WAIT ran its 300 ms
    assert!(t.elapsed() >= Duration::from_millis(300), "{:?}", t.elapsed());
    // try_lock does not retry: one more (or a fast refusal while replicas lag)
    let err = lock.try_lock().await.unwrap_err();
    assert!(matches!(err, Error::ReplicasNotSynced { .. }), "{err}");
    assert!(!exists(&master, "sync:b").await);
    drop(stopped);
    // back in sync: works again (after the lagging backoff, at most 5 s)
    eventually(
        Duration::from_secs(20),
        "a required acquisition succeeds again",
        || async {
            match lock.try_lock().await {
                Ok(Some(g)) => {
                    g.unlock().await.unwrap();
                    true
                }
                _ => false,
            }
        },
    )
    .await;
    c.shutdown().await.unwrap();
}

/// `BestEffort` keeps an acquisition no replica confirmed; `Off` never waits.
#[tokio::test]
async fn best_effort_keeps_the_hold_and_off_never_waits() {
    let (master, replica) = pair().await;
    let best = client(&master, ReplicaSync::BestEffort).await;
    let off = client(&master, ReplicaSync::Off).await;
    let stopped = Stopped::new(pid(&replica.url()).await.unwrap()).unwrap();
    let t = Instant::now();
    let g = best.lock("sync:c").unwrap().lock().await.unwrap();
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(300),
        "the WAIT ran its timeout ({waited:?})"
    );
    assert!(exists(&master, "sync:c").await, "best effort keeps the hold");
    g.unlock().await.unwrap();
    // while replicas lag, best effort does not wait again (one stalled WAIT per backoff)
    let t = Instant::now();
    let g = best.lock("sync:c").unwrap().lock().await.unwrap();
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "no second WAIT while lagging: {:?}",
        t.elapsed()
    );
    g.unlock().await.unwrap();
    // off: never waits
    let t = Instant::now();
    for _ in 0..5 {
        off.lock("sync:d")
            .unwrap()
            .lock()
            .await
            .unwrap()
            .unlock()
            .await
            .unwrap();
    }
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "Off sent no WAIT: {:?}",
        t.elapsed()
    );
    let before = waits(&master).await;
    off.lock("sync:d")
        .unwrap()
        .lock()
        .await
        .unwrap()
        .unlock()
        .await
        .unwrap();
    assert_eq!(waits(&master).await, before, "Off sends no WAIT");
    drop(stopped);
    best.shutdown().await.unwrap();
    off.shutdown().await.unwrap();
}

/// Without replicas nothing is waited for, even when required; the cost of `WAIT` with a healthy
/// replica is printed (acquire + release pairs, Off vs Required, same run).
#[tokio::test]
async fn no_replicas_no_wait_and_the_cost_of_wait() {
    let alone = RedisServer::start();
    let c = client(&alone, ReplicaSync::Required).await;
    let g = c.lock("sync:e").unwrap().lock().await.unwrap();
    g.unlock().await.unwrap();
    assert_eq!(waits(&alone).await, 0, "no replicas: no WAIT");
    c.shutdown().await.unwrap();

    let (master, _replica) = pair().await;
    let mut per = Vec::new();
    for mode in [ReplicaSync::Off, ReplicaSync::Required] {
        let c = patient(&master, mode).await;
        let lock = c.lock("sync:f").unwrap();
        for _ in 0..100 {
            lock.lock().await.unwrap().unlock().await.unwrap();
        }
        let n = 500;
        let t = Instant::now();
        for _ in 0..n {
            lock.lock().await.unwrap().unlock().await.unwrap();
        }
        per.push(t.elapsed() / n);
        c.shutdown().await.unwrap();
    }
    eprintln!(
        "lock+unlock: Off {:?}, Required (WAIT 1 replica) {:?} per pair: {:.2}x",
        per[0],
        per[1],
        per[1].as_secs_f64() / per[0].as_secs_f64()
    );
}

/// A cluster of 3 masters with one replica each: `ReplicaSync::Auto` is `Required` on a cluster
/// connection (as in Redisson); the `WAIT` goes to the master of the lock's slot. With that
/// master's replica stopped, acquisitions of a lock in its slot are undone and refused, while a
/// lock in another master's slot is not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_waits_on_the_slots_own_master() {
    let nodes: Vec<RedisServer> = (0..6)
        .map(|_| RedisServer::start_with(&["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"]))
        .collect();
    let addrs: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
    let out = std::process::Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", "1", "--cluster-yes"])
        .output()
        .expect("redis-cli runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    // every replica online at its master
    let mut masters = Vec::new();
    for n in &nodes {
        let mut c = n.conn().await;
        eventually(
            Duration::from_secs(30),
            "cluster ok and every master has its replica online",
            || {
                let mut c = c.clone();
                async move {
                    let ci: String = redis::cmd("CLUSTER")
                        .arg("INFO")
                        .query_async(&mut c)
                        .await
                        .unwrap();
                    let info: String = redis::cmd("INFO")
                        .arg("replication")
                        .query_async(&mut c)
                        .await
                        .unwrap();
                    ci.contains("cluster_state:ok")
                        && (info.contains("role:slave") && info.contains("master_link_status:up")
                            || info.contains("connected_slaves:1") && info.contains("state=online"))
                }
            },
        )
        .await;
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut c)
            .await
            .unwrap();
        if info.contains("role:master") {
            masters.push(n.port);
        }
    }
    assert_eq!(masters.len(), 3);
    let client = Client::builder()
        .cluster(nodes.iter().map(|n| n.url()))
        .config(
            Config::default()
                .with_replica_sync_timeout(Duration::from_millis(300))
                .with_retry_attempts(1)
                .with_retry_interval(Duration::from_millis(100)),
        )
        .build()
        .await
        .unwrap();
    // the node that runs a lock's WAITs is its slot's master: find it for a few names
    let mut node_of = Vec::new();
    for name in [
        "sync:cluster:a",
        "sync:cluster:b",
        "sync:cluster:c",
        "sync:cluster:d",
        "sync:cluster:e",
    ] {
        let lock = client.lock(name).unwrap();
        let before: Vec<u64> = futures::future::join_all(nodes.iter().map(waits)).await;
        for _ in 0..5 {
            lock.lock().await.unwrap().unlock().await.unwrap();
        }
        let after: Vec<u64> = futures::future::join_all(nodes.iter().map(waits)).await;
        let sent: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        assert_eq!(
            sent.iter().filter(|n| **n > 0).count(),
            1,
            "{name}: every WAIT went to one node: {sent:?}"
        );
        assert!(
            sent.iter().sum::<u64>() >= 10,
            "{name}: a WAIT after each acquire and release: {sent:?}"
        );
        let at = sent.iter().position(|n| *n > 0).unwrap();
        assert!(
            masters.contains(&nodes[at].port),
            "{name}: the WAITs ran on a master"
        );
        node_of.push((name, at));
    }
    let (name, at) = node_of[0];
    let other = node_of.iter().find(|(_, n)| *n != at).map(|(k, _)| *k);
    let master = &nodes[at];
    // stop that master's replica: acquisitions in its slots are refused and undone
    let mut replica = None;
    for n in &nodes {
        let mut c = n.conn().await;
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut c)
            .await
            .unwrap();
        if info.contains(&format!("master_port:{}", master.port)) {
            replica = Some(n);
        }
    }
    let replica = replica.expect("the master's replica");
    let stopped = Stopped::new(pid(&replica.url()).await.unwrap()).unwrap();
    let lock = client.lock(name).unwrap();
    let err = lock.lock().await.unwrap_err();
    assert!(matches!(err, Error::ReplicasNotSynced { wanted: 1, .. }), "{err}");
    assert!(!exists(master, name).await, "undone on the master");
    // a lock served by another master is not affected
    if let Some(other) = other {
        let g = client.lock(other).unwrap().lock().await.unwrap();
        g.unlock().await.unwrap();
    }
    drop(stopped);
    client.shutdown().await.unwrap();
}

/// The semaphores follow `ReplicaSync` like the locks (and Redisson's semaphores): with
/// `Required` and a stopped replica an acquisition no replica confirmed is given back and the
/// caller gets `ReplicasNotSynced`; no permit is lost; with the replica back it works again.
#[tokio::test]
async fn required_gives_back_permits_no_replica_confirmed() {
    let (master, replica) = pair().await;
    let c = client(&master, ReplicaSync::Required).await;
    let sem = c.semaphore("sync:sem").unwrap();
    let pes = c.permit_expirable_semaphore("sync:pes").unwrap();
    assert!(sem.try_set_permits(2).await.unwrap());
    assert!(pes.try_set_permits(2).await.unwrap());
    let stopped = Stopped::new(pid(&replica.url()).await.unwrap()).unwrap();
    let err = sem.try_acquire(1).await.kept().unwrap_err();
    assert!(matches!(err, Error::ReplicasNotSynced { wanted: 1, .. }), "{err}");
    let err = pes.try_acquire().await.kept().unwrap_err();
    assert!(matches!(err, Error::ReplicasNotSynced { .. }), "{err}");
    drop(stopped);
    assert_eq!(
        sem.available_permits().await.unwrap(),
        2,
        "the unconfirmed permit was given back"
    );
    assert_eq!(pes.available_permits().await.unwrap(), 2);
    assert_eq!(pes.acquired_permits().await.unwrap(), 0);
    eventually(
        Duration::from_secs(20),
        "a required acquisition succeeds again",
        || async { matches!(sem.try_acquire(1).await.kept(), Ok(true)) },
    )
    .await;
    let id = pes
        .try_acquire_for(Duration::from_secs(10), None)
        .await
        .kept()
        .unwrap()
        .expect("a permit");
    pes.release(id).await.unwrap();
    c.shutdown().await.unwrap();
}
