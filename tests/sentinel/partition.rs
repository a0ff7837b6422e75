//! The master ↔ replica link partitioned (through a toxiproxy) while holds are taken, then a
//! Sentinel failover to the stale replica, for each `ReplicaSync` mode: overlaps counted and
//! explained.

use std::time::{Duration, Instant};

use super::common::topology::{Topology, MASTER};
use super::common::{self, eventually, RedisServer};
use super::master_port;
use redisson_lock::{Client, Config, Error, ReplicaSync};

/// How the master ↔ replica link is partitioned (the replica replicates through a toxiproxy
/// proxy; the clients and the sentinel reach both nodes directly).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LinkPartition {
    /// A `timeout` toxic that never closes, both ways: every byte is dropped and the TCP
    /// connections stay open, as a real partition looks until `repl-timeout` (60 s). The master
    /// still counts the replica (`connected_slaves:1`); its `WAIT`s time out.
    Blackhole,
    /// The proxy disabled (`set_enabled(false)`): the connections are closed and new ones
    /// refused, so the master drops the replica at once (`connected_slaves:0`).
    Cut,
}

/// What one run of [`partition_then_failover`] saw.
struct PartitionRow {
    mode: ReplicaSync,
    partition: LinkPartition,
    /// Holds taken (and replicated) before the partition.
    before: usize,
    /// Acquisitions during the partition: granted, refused.
    during_ok: usize,
    during_failed: usize,
    /// The first refusal's message.
    refusal: Option<String>,
    /// `WAIT`s the master ran for A's lock writes during the partition, and how long it lasted.
    waits: u64,
    during_took: Duration,
    /// A's holds the new master lacks.
    missing: usize,
    /// Names A holds that B got; of those, the ones A still believed it held (overlaps).
    b_got_held: usize,
    overlaps: usize,
    /// Names A was refused that B got.
    b_got_free: usize,
    /// Losses signalled to A, and the latest of them after `SENTINEL FAILOVER`.
    lost: usize,
    lost_after: Option<Duration>,
    /// `SENTINEL FAILOVER` until the replica's `ROLE` is master, until A is on it.
    failover: Duration,
    followed: Duration,
    took: Duration,
}

/// `INFO replication` of `s` (on a connection error: an empty string).
async fn replication_info(s: &RedisServer) -> String {
    let Ok(client) = redis::Client::open(s.url()) else {
        return String::new();
    };
    let Ok(mut c) = client.get_multiplexed_async_connection().await else {
        return String::new();
    };
    redis::cmd("INFO")
        .arg("replication")
        .query_async(&mut c)
        .await
        .unwrap_or_default()
}

/// Writes `key` on the master, then `WAIT 1 <timeout_ms>`: whether the replica acknowledged it
/// (`WAIT` waits for its connection's last write; on one that wrote nothing it returns at once).
async fn acked_by_replica(raw: &mut redis::aio::MultiplexedConnection, key: &str, timeout_ms: u64) -> i64 {
    let _: () = redis::cmd("SET").arg(key).arg(1).query_async(raw).await.unwrap();
    redis::cmd("WAIT")
        .arg(1)
        .arg(timeout_ms)
        .query_async(raw)
        .await
        .unwrap()
}

/// One master, one replica whose replication link goes through a toxiproxy proxy, one sentinel
/// (quorum 1, down-after 1 s). Client A (`mode`, 15 s watchdog, `WAIT` timeout 300 ms) takes 3
/// holds that reach the replica (`WAIT 1` on the master says so); the link is partitioned
/// (`partition`) and A takes holds on 10 other names, one every 300 ms or so (a partition of
/// about 3 s). Then `SENTINEL FAILOVER`: the sentinel promotes the partitioned replica
/// (`REPLICAOF NO ONE`; its link has been down for far less than the 10 × down-after a
/// candidate may have been cut off) and announces it, and the clients follow. The old master,
/// the only node with what was written during the partition, stays a master until the sentinel
/// demotes it several seconds later (not awaited: no client talks to it any more). Client B
/// (another owner, on the new master) then tries every name once.
async fn partition_then_failover(
    tp: &common::proxy::Toxiproxy,
    mode: ReplicaSync,
    partition: LinkPartition,
) -> PartitionRow {
    use common::proxy::{Stream, Toxic};
    use std::collections::HashMap;

    let started = Instant::now();
    let what = format!("{mode:?}/{partition:?}");
    let tag = format!("{mode:?}-{partition:?}").to_lowercase();
    // no 5 s wait for more replicas before the first (diskless) sync
    let master = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let proxy = tp
        .proxy(&format!("replica-link-{tag}"), master.port)
        .await
        .expect("a proxy in front of the master");
    let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &proxy.port.to_string()]);
    eventually(
        Duration::from_secs(20),
        "the replica is in sync through the proxy",
        || async {
            replication_info(&replica).await.contains("master_link_status:up")
                && replication_info(&master).await.contains("state=online")
        },
    )
    .await;
    // WAITs of up to 5 s
    let cfg = redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(10)));
    let mut raw_master = redis::Client::open(master.url())
        .unwrap()
        .get_multiplexed_async_connection_with_config(&cfg)
        .await
        .unwrap();
    // after a diskless sync the stream starts with the replica's first ACK (up to 1 s)
    assert_eq!(
        acked_by_replica(&mut raw_master, &format!("partition:{tag}:synced"), 5000).await,
        1,
        "{what}: the replica acknowledges writes through the proxy"
    );
    // A sentinel sends `REPLICAOF <master>` to a replica that replicates from another address
    // (here the proxy) once `failover-timeout` has passed since it found it: 60 s, not 5 s, so
    // that the link stays on the proxy for this run.
    let sentinel = RedisServer::start_sentinel_with(
        master.port,
        MASTER,
        1,
        &format!("sentinel failover-timeout {MASTER} 60000"),
    );
    let mut s = sentinel.conn().await;
    eventually(
        Duration::from_secs(20),
        "the sentinel knows the replica, with its link up",
        || {
            let mut s = s.clone();
            let port = replica.port.to_string();
            async move {
                let replicas: Vec<HashMap<String, String>> = redis::cmd("SENTINEL")
                    .arg("REPLICAS")
                    .arg(MASTER)
                    .query_async(&mut s)
                    .await
                    .unwrap_or_default();
                replicas.len() == 1
                    && replicas[0].get("port") == Some(&port)
                    && replicas[0].get("flags").map(String::as_str) == Some("slave")
                    && replicas[0].get("master-link-status").map(String::as_str) == Some("ok")
            }
        },
    )
    .await;

    let config = Config::default()
        .with_replica_sync(mode)
        .with_replica_sync_timeout(Duration::from_millis(300))
        .with_retry_attempts(1)
        .with_retry_interval(Duration::from_millis(100))
        // a failover takes seconds: a 15 s watchdog (renewal every 5 s) outlives it
        .with_lock_watchdog_timeout(Duration::from_secs(15))
        .with_sentinel_scan_interval(Duration::from_millis(200));
    let a = Client::builder()
        .sentinel([sentinel.url()], MASTER)
        .config(config.clone())
        .build()
        .await
        .expect("client A");
    assert_eq!(master_port(&a), master.port);

    // A's holds: (name, guard, replicated before the partition, when lost() fired and why)
    let mut held = Vec::new();
    let watch = |g: &redisson_lock::LockGuard| {
        let lost = g.lost();
        tokio::spawn(async move {
            let reason = lost.await;
            (reason, Instant::now())
        })
    };
    for i in 0..3 {
        let name = format!("partition:{tag}:before:{i}");
        let g = a
            .lock(&name)
            .unwrap()
            .lock()
            .await
            .expect("a hold before the partition");
        let w = watch(&g);
        held.push((name, g, true, w));
    }
    // a write made after A's holds, acknowledged: the replica applies the stream in order
    assert_eq!(
        acked_by_replica(&mut raw_master, &format!("partition:{tag}:replicated"), 5000).await,
        1,
        "{what}: the replica has the holds taken before the partition"
    );
    let before = held.len();

    match partition {
        LinkPartition::Blackhole => {
            proxy.add(&Toxic::timeout(Stream::Up, 0)).await.unwrap();
            proxy.add(&Toxic::timeout(Stream::Down, 0)).await.unwrap();
            assert_eq!(
                acked_by_replica(&mut raw_master, &format!("partition:{tag}:probe"), 300).await,
                0,
                "{what}: the blackholed replica acknowledges nothing"
            );
        }
        LinkPartition::Cut => {
            proxy.set_enabled(false).await.unwrap();
            eventually(
                Duration::from_secs(10),
                "the master dropped the cut replica",
                || async { replication_info(&master).await.contains("connected_slaves:0") },
            )
            .await;
        }
    }

    // during the partition: 10 more names, spread over about 3 s
    let waits_before = common::command_calls(&mut raw_master, "wait").await;
    let partitioned = Instant::now();
    let (mut during_ok, mut during_failed, mut refusal) = (0, 0, None);
    for i in 0..10 {
        let name = format!("partition:{tag}:during:{i}");
        let got = tokio::time::timeout(Duration::from_secs(10), a.lock(&name).unwrap().lock())
            .await
            .expect("an acquisition during the partition returns");
        match got {
            Ok(g) => {
                assert!(
                    common::key_exists(&mut raw_master, &name).await,
                    "{what}: the granted hold of {name} is on the master"
                );
                during_ok += 1;
                let w = watch(&g);
                held.push((name, g, false, w));
            }
            Err(e) => {
                assert!(
                    matches!(e, Error::ReplicasNotSynced { .. }),
                    "{what}: the only refusal during the partition is ReplicasNotSynced: {e}"
                );
                assert!(
                    !common::key_exists(&mut raw_master, &name).await,
                    "{what}: the unconfirmed grant of {name} was given back on the master"
                );
                during_failed += 1;
                refusal.get_or_insert(e.to_string());
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let during_took = partitioned.elapsed();
    let waits = common::command_calls(&mut raw_master, "wait").await - waits_before;
    // the master's view of its replica did not change meanwhile
    let info = replication_info(&master).await;
    let expected = match partition {
        LinkPartition::Blackhole => "connected_slaves:1",
        LinkPartition::Cut => "connected_slaves:0",
    };
    assert!(
        info.contains(expected),
        "{what}: the master still says {expected}: {info}"
    );

    // the failover, to the partitioned replica
    let _: String = redis::cmd("SENTINEL")
        .arg("FAILOVER")
        .arg(MASTER)
        .query_async(&mut s)
        .await
        .expect("SENTINEL FAILOVER");
    let asked = Instant::now();
    eventually(
        Duration::from_secs(30),
        "the partitioned replica was promoted",
        || async { Topology::role(&replica).await.as_deref() == Some("master") },
    )
    .await;
    let failover = asked.elapsed();
    eventually(
        Duration::from_secs(30),
        "client A moved to the new master",
        || async { master_port(&a) == replica.port },
    )
    .await;
    let moved = Instant::now();
    let followed = asked.elapsed();

    // which of A's holds the new master has, before B writes anything
    let mut raw_new = replica.conn().await;
    let mut missing = Vec::new();
    for (name, ..) in &held {
        missing.push(!common::key_exists(&mut raw_new, name).await);
    }

    // B (another owner; Off: it only probes) tries every name once
    let b = Client::builder()
        .sentinel([sentinel.url()], MASTER)
        .config(config.with_replica_sync(ReplicaSync::Off))
        .build()
        .await
        .expect("client B");
    assert_eq!(master_port(&b), replica.port, "{what}: B is on the new master");
    let (mut b_got_held, mut overlaps, mut b_got_free) = (0, 0, 0);
    let mut b_guards = Vec::new();
    for i in 0..10 {
        let name = format!("partition:{tag}:during:{i}");
        if !held.iter().any(|(n, ..)| *n == name) {
            let gb = b.lock(&name).unwrap().try_lock().await.unwrap();
            assert!(gb.is_some(), "{what}: nobody holds {name}, B gets it");
            b_got_free += 1;
            b_guards.extend(gb);
        }
    }
    for (k, (name, g, replicated, _)) in held.iter().enumerate() {
        let Some(gb) = b.lock(name).unwrap().try_lock().await.unwrap() else {
            continue;
        };
        // B holds a name A was granted and never released
        b_got_held += 1;
        let believed = g.is_held();
        overlaps += usize::from(believed);
        eprintln!(
            "{what}: B got {name}: A's hold was {}, {}on the new master, and A {}",
            if *replicated {
                "replicated before the partition"
            } else {
                "granted during the partition"
            },
            if missing[k] { "missing " } else { "" },
            if believed {
                "still believed it held it: OVERLAP"
            } else {
                "had been told it is lost"
            }
        );
        assert!(
            missing[k],
            "{what}: B got {name}, which the new master has: the lock failed"
        );
        b_guards.push(gb);
    }

    // every hold the new master lacks is reported lost, the others are still held
    let (mut lost, mut lost_after) = (0, None);
    for (k, (name, g, replicated, w)) in held.iter_mut().enumerate() {
        if !missing[k] {
            assert!(
                g.is_held() && !w.is_finished(),
                "{what}: {name} is on the new master and still held: {:?}",
                g.state()
            );
            continue;
        }
        assert!(
            !*replicated,
            "{what}: {name} was replicated before the partition, yet the new master lacks it"
        );
        let (reason, at) = tokio::time::timeout_at((moved + Duration::from_secs(10)).into(), w)
            .await
            .unwrap_or_else(|_| {
                panic!("{what}: {name}, missing on the new master, is reported lost within 10 s of the move")
            })
            .unwrap();
        assert_eq!(reason, redisson_lock::LostReason::OwnerGone, "{what}: {name}");
        lost += 1;
        lost_after = lost_after.max(Some(at.saturating_duration_since(asked)));
    }

    // what the modes promise about the holds granted during the partition
    let missing_during = held
        .iter()
        .zip(&missing)
        .filter(|((_, _, replicated, _), m)| !replicated && **m)
        .count();
    assert_eq!(
        missing_during, during_ok,
        "{what}: nothing granted during the partition crossed the partitioned link"
    );
    match (mode, partition) {
        (ReplicaSync::Required, _) => {
            // blackholed, the master still counts the replica; cut, the master has dropped it
            // but the client still waits for a replica that left within the last minute: no
            // WAIT confirms, every grant is undone
            assert!(waits >= 1, "{what}: A waited for the replica");
            assert_eq!(
                during_ok, 0,
                "{what}: no replica confirmed a grant, none may be kept"
            );
            assert_eq!(b_got_held, 0, "{what}: B gets no name A holds");
        }
        (ReplicaSync::BestEffort, LinkPartition::Blackhole) => {
            assert!(waits >= 1, "{what}: A waited for the replica");
            assert_eq!(
                during_ok, 10,
                "{what}: a grant no replica confirmed is kept ({refusal:?})"
            );
        }
        (ReplicaSync::Off, _) => {
            assert_eq!(waits, 0, "{what}: Off sends no WAIT");
            assert_eq!(during_ok, 10, "{what}: every grant is kept ({refusal:?})");
        }
        _ => assert_eq!(
            during_ok, 10,
            "{what}: a grant no replica confirmed is kept ({refusal:?})"
        ),
    }
    b.shutdown().await.unwrap();
    a.shutdown().await.unwrap();
    drop(b_guards);
    for (.., w) in held {
        w.abort();
    }
    PartitionRow {
        mode,
        partition,
        before,
        during_ok,
        during_failed,
        refusal,
        waits,
        during_took,
        missing: missing.iter().filter(|m| **m).count(),
        b_got_held,
        overlaps,
        b_got_free,
        lost,
        lost_after,
        failover,
        followed,
        took: started.elapsed(),
    }
}

/// The master ↔ replica link partitioned while client A takes holds, then a Sentinel failover
/// to that replica, for each `ReplicaSync` mode and two kinds of partition (the 6 runs at once;
/// see [`partition_then_failover`] and [`LinkPartition`]). An overlap is client B getting a
/// name whose hold A still believes it has.
///
/// * In every mode the holds taken before the partition, which were replicated, survive the
///   failover: still held by A, refused to B.
/// * `Off` and `BestEffort` keep every grant made during the partition; none of them reaches the
///   replica, so the new master lacks all of them: the documented hazard of asynchronous
///   replication. B may get those names; A is told each such hold is lost (`OwnerGone`) within
///   10 s of following the new master. B never gets a name the new master has.
/// * `Required`: no `WAIT` confirms, every grant is undone (`ReplicasNotSynced`, nothing left on
///   the master): nothing to lose, no overlap. Blackholed, the master still counts the replica;
///   cut, the master drops it at once (`connected_slaves:0`), and the client still waits for
///   it, as for any replica that left the master within the last minute.
///
/// B starts after A has followed the new master, and on that move A's loss watch reads every
/// hold on the new master: A has usually been told before B gets a name, so the overlaps column
/// (B gets a name A still believes it holds) has stayed 0 in our runs, while `B got held` counts
/// the broken exclusions (not asserted either way: it is a race the loss watch usually wins).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replica_link_partition_then_failover_per_replica_sync_mode() {
    common::init_tracing();
    let tp = match common::proxy::Toxiproxy::start().await {
        Ok(tp) => tp,
        Err(e) if common::java::ci() => panic!("CI=true: this test needs toxiproxy: {e}"),
        Err(e) => {
            eprintln!("SKIPPED: this test needs toxiproxy: {e}");
            return;
        }
    };
    let t = Instant::now();
    let mut runs = Vec::new();
    for partition in [LinkPartition::Blackhole, LinkPartition::Cut] {
        for mode in [ReplicaSync::Required, ReplicaSync::BestEffort, ReplicaSync::Off] {
            runs.push(partition_then_failover(&tp, mode, partition));
        }
    }
    let rows = futures::future::join_all(runs).await;
    let mut table = format!(
        "{:<10} {:<9} {:>6} {:>9} {:>13} {:>5} {:>7} {:>7} {:>10} {:>8} {:>10} {:>4} {:>8} {:>8} {:>8} {:>6}\n",
        "mode",
        "partition",
        "before",
        "during ok",
        "during failed",
        "WAITs",
        "lasted",
        "missing",
        "B got held",
        "overlaps",
        "B got free",
        "lost",
        "lost at",
        "failover",
        "followed",
        "run"
    );
    for r in &rows {
        table += &format!(
            "{:<10} {:<9} {:>6} {:>9} {:>13} {:>5} {:>7} {:>7} {:>10} {:>8} {:>10} {:>4} {:>8} {:>8} {:>8} {:>6}\n",
            format!("{:?}", r.mode),
            format!("{:?}", r.partition),
            r.before,
            r.during_ok,
            r.during_failed,
            r.waits,
            format!("{:.1?}", r.during_took),
            r.missing,
            r.b_got_held,
            r.overlaps,
            r.b_got_free,
            r.lost,
            r.lost_after.map_or("-".into(), |d| format!("{d:.1?}")),
            format!("{:.1?}", r.failover),
            format!("{:.1?}", r.followed),
            format!("{:.1?}", r.took),
        );
    }
    for r in rows.iter().filter(|r| r.refusal.is_some()) {
        table += &format!(
            "{:?}/{:?} refusal: {}\n",
            r.mode,
            r.partition,
            r.refusal.as_deref().unwrap_or_default()
        );
    }
    eprintln!(
        "\nreplica link partitioned, then SENTINEL FAILOVER to that replica (failover, followed and \
         lost at: after SENTINEL FAILOVER):\n{table}B got only names whose hold the new master \
         lacks, all granted during the partition and reported lost to A: with Off and BestEffort \
         asynchronous replication (the documented hazard); Required kept none ({:.1?} in all)",
        t.elapsed()
    );
}
