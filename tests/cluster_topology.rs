//! Held locks while the cluster changes under them (production topologies): a slot
//! migration (`CLUSTER SETSLOT … IMPORTING/MIGRATING`, `MIGRATE`, `SETSLOT … NODE`) and a
//! `CLUSTER FAILOVER` to a replica. What survives: the hold, its renewal, its unlock. What is
//! lost: a hold the new master never got (asynchronous replication) — `guard.lost()` reports it.

mod common;

use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{eventually, pttl};
use redis::aio::MultiplexedConnection;
use redisson_lock::{Client, Config, LostReason, Unlocked};

/// Renewal every second: a failover or a slot move under CI load (seconds of MOVED and topology
/// refreshes) must not outlast the TTL of a replicated hold.
const WATCHDOG: Duration = Duration::from_millis(3_000);
/// A poll interval and lease far beyond every bound below.
const QUIET_POLL: Duration = Duration::from_secs(60);

/// (port, node id, flags, slot ranges) of every node, from `CLUSTER NODES`.
async fn nodes(c: &mut MultiplexedConnection) -> Vec<(u16, String, String, Vec<(u16, u16)>)> {
    // a node busy with a failover under CI load may time a query out: ask again (for a while)
    let mut tries = 0;
    let text: String = loop {
        match redis::cmd("CLUSTER").arg("NODES").query_async(c).await {
            Ok(t) => break t,
            Err(e) if tries < 20 => {
                tries += 1;
                eprintln!("CLUSTER NODES failed ({e}); asking again");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => panic!("CLUSTER NODES: {e}"),
        }
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let port = f
                .get(1)?
                .split(['@', ','])
                .next()?
                .rsplit_once(':')?
                .1
                .parse()
                .ok()?;
            let ranges = f
                .iter()
                .skip(8)
                .filter(|r| !r.starts_with('['))
                .filter_map(|r| match r.split_once('-') {
                    Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                    None => r.parse().ok().map(|n| (n, n)),
                })
                .collect();
            Some((port, f[0].to_owned(), f[2].to_owned(), ranges))
        })
        .collect()
}

/// (port, id) of the master that serves `slot`, as `via` sees it.
async fn owner(via: &mut MultiplexedConnection, slot: u16) -> (u16, String) {
    nodes(via)
        .await
        .into_iter()
        .find(|(_, _, flags, ranges)| {
            flags.contains("master") && ranges.iter().any(|(a, b)| (*a..=*b).contains(&slot))
        })
        .map(|(port, id, _, _)| (port, id))
        .expect("a master serves the slot")
}

/// The port of the first online replica in `INFO replication` of a master.
async fn online_replica(master: &mut MultiplexedConnection) -> Option<u16> {
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query_async(master)
        .await
        .unwrap();
    info.lines()
        .find(|l| l.starts_with("slave0:") && l.contains("state=online"))
        .and_then(|l| l.split(',').find_map(|kv| kv.strip_prefix("port=")))
        .and_then(|p| p.parse().ok())
}

async fn keyslot(c: &mut MultiplexedConnection, key: &str) -> u16 {
    redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query_async(c)
        .await
        .unwrap()
}

fn node(cluster: &Cluster, port: u16) -> &common::RedisServer {
    cluster
        .nodes
        .iter()
        .find(|n| n.port == port)
        .expect("a node of the cluster")
}

/// Waits until the watchdog has renewed `key` on the node `c` is connected to (its PTTL went up).
async fn renewed_on(c: &MultiplexedConnection, key: &str, what: &str) {
    let mut c = c.clone();
    let mut low = pttl(&mut c, key).await;
    assert!(low > 0, "{what}: {key} is not on this node (PTTL {low})");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let p = pttl(&mut c, key).await;
        if p > low + 100 {
            return;
        }
        low = low.min(p);
        assert!(
            Instant::now() < deadline,
            "{what}: no renewal of {key} within 5 s (PTTL {p})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn cmd(c: &mut MultiplexedConnection, args: &[&str]) -> redis::Value {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query_async(c)
        .await
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// A held lock's slot moves to another master: renewal follows it through MIGRATING/IMPORTING
/// (ASK) and the final move (MOVED), the hold is never lost, and the unlock releases it on the new
/// master. A waiter's sharded subscription, which Redis drops when the slot leaves its node
/// (SUNSUBSCRIBE push), is made again on the new node: the unlock there still wakes it by message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_lock_survives_its_slot_migrating_to_another_master() {
    let cluster = Cluster::start(3, 0).await;
    let config = Config::default().with_lock_watchdog_timeout(WATCHDOG);
    let client = Client::builder()
        .cluster(cluster.urls())
        .config(config.clone())
        .build()
        .await
        .unwrap();
    let waiter_client = Client::builder()
        .cluster(cluster.urls())
        .config(config.with_poll_interval(QUIET_POLL))
        .build()
        .await
        .unwrap();
    // `name` is renewed by the watchdog; the waiter waits for `waited` (same slot), held with a
    // 60 s lease: with a 60 s poll as well, only a message gets the waiter in quickly
    // (no hash tags: the unlock channel `redisson_lock__channel:{<name>}` must share the slot)
    let name = "migrating:renewed";
    let waited = (0..)
        .map(|i| format!("migrating:waited:{i}"))
        .find(|w| crc16(w.as_bytes()) % 16384 == crc16(name.as_bytes()) % 16384)
        .unwrap();
    let waited = waited.as_str();
    let guard = client.lock(name).unwrap().lock().await.unwrap();
    let waited_guard = client
        .lock(waited)
        .unwrap()
        .lock_with_lease(QUIET_POLL)
        .await
        .unwrap();

    let mut any = cluster.nodes[0].conn().await;
    let slot = keyslot(&mut any, name).await;
    assert_eq!(keyslot(&mut any, waited).await, slot);
    let slot_s = slot.to_string();
    let (src_port, src_id) = owner(&mut any, slot).await;
    let (dst_port, dst_id) = nodes(&mut any)
        .await
        .into_iter()
        .find(|(p, _, flags, _)| *p != src_port && flags.contains("master"))
        .map(|(p, id, _, _)| (p, id))
        .unwrap();
    let mut src = node(&cluster, src_port).conn().await;
    let mut dst = node(&cluster, dst_port).conn().await;
    renewed_on(&src, name, "before the migration").await;

    // Redis 6: no sharded pub/sub; Auto is classic, a subscription on any node that survives
    // the migration (a published message reaches every node)
    let sharded = cluster.sharded_pubsub().await;
    if !sharded {
        common::skip_unsupported(
            "a_held_lock_survives_its_slot_migrating_to_another_master (its sharded re-subscription)",
            "no sharded pub/sub (PUBSUB SHARDNUMSUB unknown): checked with classic pub/sub",
        );
    }
    // a waiter of another client, subscribed (sharded: on the source master)
    let wl = waiter_client.lock(waited).unwrap();
    let w = tokio::spawn(async move {
        let g = wl.lock().await.unwrap();
        let at = Instant::now();
        g.unlock().await.unwrap();
        at
    });
    let channel = format!("redisson_lock__channel:{{{waited}}}");
    eventually(
        Duration::from_secs(5),
        "the waiter subscribed on the source",
        || {
            let mut c = src.clone();
            let ch = channel.clone();
            let cluster = &cluster;
            async move {
                if sharded {
                    shard_subscribers(&mut c, &ch).await == 1
                } else {
                    cluster.numsub(&ch, false).await == 1
                }
            }
        },
    )
    .await;

    cmd(&mut dst, &["CLUSTER", "SETSLOT", &slot_s, "IMPORTING", &src_id]).await;
    cmd(&mut src, &["CLUSTER", "SETSLOT", &slot_s, "MIGRATING", &dst_id]).await;
    renewed_on(&src, name, "slot MIGRATING, key still on the source").await;

    let keys: Vec<String> = redis::cmd("CLUSTER")
        .arg("GETKEYSINSLOT")
        .arg(slot)
        .arg(1000)
        .query_async(&mut src)
        .await
        .unwrap();
    assert!(keys.iter().any(|k| k == name), "{keys:?}");
    let dst_port_s = dst_port.to_string();
    let mut migrate = vec![
        "MIGRATE",
        "127.0.0.1",
        dst_port_s.as_str(),
        "",
        "0",
        "5000",
        "KEYS",
    ];
    migrate.extend(keys.iter().map(String::as_str));
    cmd(&mut src, &migrate).await;
    // the key is on the target; the source answers ASK for it and the client follows
    let on_src: redis::RedisResult<i64> = redis::cmd("PTTL").arg(name).query_async(&mut src).await;
    assert!(
        matches!(&on_src, Err(e) if e.code() == Some("ASK")),
        "the key left the source, which redirects with ASK: {on_src:?}"
    );
    eventually(
        Duration::from_secs(5),
        "a renewal through ASK reached the target",
        || {
            let mut d = dst.clone();
            async move {
                let (_, p): ((), i64) = redis::pipe()
                    .cmd("ASKING")
                    .cmd("PTTL")
                    .arg(name)
                    .query_async(&mut d)
                    .await
                    .unwrap();
                p > (WATCHDOG.as_millis() as i64) - 150
            }
        },
    )
    .await;
    assert!(guard.is_held(), "the hold was lost during MIGRATING/IMPORTING");

    for n in &cluster.nodes {
        let mut c = n.conn().await;
        cmd(&mut c, &["CLUSTER", "SETSLOT", &slot_s, "NODE", &dst_id]).await;
    }
    // Redis dropped the waiter's SSUBSCRIBE with the slot; it subscribes again on the new node
    eventually(
        Duration::from_secs(5),
        "the waiter subscribed again on the target",
        || {
            let mut c = dst.clone();
            let ch = channel.clone();
            let cluster = &cluster;
            async move {
                if sharded {
                    shard_subscribers(&mut c, &ch).await == 1
                } else {
                    cluster.numsub(&ch, false).await == 1
                }
            }
        },
    )
    .await;
    renewed_on(&dst, name, "after the slot moved (MOVED)").await;
    renewed_on(&dst, name, "again on the new owner").await;
    assert!(guard.is_held());
    assert_eq!(owner(&mut any, slot).await.0, dst_port);

    // the unlocks reach the new master; the waiter is woken by the message there
    assert_eq!(guard.unlock().await.unwrap(), Unlocked::Released);
    let released = Instant::now();
    assert_eq!(waited_guard.unlock().await.unwrap(), Unlocked::Released);
    let acquired = tokio::time::timeout(Duration::from_secs(5), w)
        .await
        .expect("the waiter was not woken by the unlock on the new master")
        .unwrap();
    assert!(acquired.duration_since(released) < Duration::from_secs(5));
}

/// Redis Cluster's key hash (CRC16-XMODEM; the slot is this mod 16384), for names without `{`.
fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// `PUBSUB SHARDNUMSUB channel` on one node.
async fn shard_subscribers(c: &mut MultiplexedConnection, channel: &str) -> i64 {
    let (_, n): (String, i64) = redis::cmd("PUBSUB")
        .arg("SHARDNUMSUB")
        .arg(channel)
        .query_async(c)
        .await
        .unwrap();
    n
}

/// The port of the online replica of the master serving `key`'s slot, and that slot.
async fn replica_for(cluster: &Cluster, key: &str) -> (u16, u16) {
    let mut any = cluster.nodes[0].conn().await;
    let slot = keyslot(&mut any, key).await;
    let (master_port, _) = owner(&mut any, slot).await;
    let master = node(cluster, master_port).conn().await;
    eventually(
        Duration::from_secs(20),
        "the slot's master has an online replica",
        || {
            let mut m = master.clone();
            async move { online_replica(&mut m).await.is_some() }
        },
    )
    .await;
    let mut m = master.clone();
    // every write so far (the holds) reached the replica
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query_async(&mut m)
        .await
        .unwrap();
    assert_eq!(acked, 1, "the replica acknowledged the writes");
    (online_replica(&mut m).await.expect("an online replica"), slot)
}

/// Promotes `replica_port` with `CLUSTER FAILOVER` (coordinated: it catches up with its master
/// first) or `CLUSTER FAILOVER FORCE` (no hand-shake with the master, as when it is unreachable),
/// and waits until it serves `slot`.
async fn failover(cluster: &Cluster, replica_port: u16, slot: u16, force: bool) {
    let replica = node(cluster, replica_port).conn().await;
    let mut args = vec!["CLUSTER", "FAILOVER"];
    if force {
        args.push("FORCE");
    }
    cmd(&mut replica.clone(), &args).await;
    eventually(Duration::from_secs(20), "the replica took over the slot", || {
        let mut r = replica.clone();
        async move { owner(&mut r, slot).await.0 == replica_port }
    })
    .await;
}

/// `CLUSTER FAILOVER` to a replica keeps a replicated hold: renewal and unlock follow the new
/// master. A hold the new master never received (a write lost to asynchronous replication,
/// simulated by flushing the replica before the failover) is reported by `guard.lost()` with
/// [`LostReason::OwnerGone`] at the next renewal, and the lock is free for others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_keeps_replicated_holds_and_reports_the_lost_ones() {
    let cluster = Cluster::start(3, 1).await;
    // a failover on a loaded machine can take seconds (clients paused on the old master, then
    // MOVED and a slot refresh): a TTL of 6 s outlives it, and the renewals every 2 s still come
    // well within the waits below
    let config = Config::default().with_lock_watchdog_timeout(Duration::from_secs(6));
    let client = Client::builder()
        .cluster(cluster.urls())
        .config(config)
        .build()
        .await
        .unwrap();

    // a replicated hold survives the failover
    let kept_name = "failover:kept";
    let kept = client.lock(kept_name).unwrap().lock().await.unwrap();
    let (replica_port, slot) = replica_for(&cluster, kept_name).await;
    failover(&cluster, replica_port, slot, false).await;
    let new_master = node(&cluster, replica_port).conn().await;
    renewed_on(&new_master, kept_name, "on the new master").await;
    renewed_on(&new_master, kept_name, "again on the new master").await;
    assert!(kept.is_held());
    assert_eq!(kept.unlock().await.unwrap(), Unlocked::Released);
    assert_eq!(
        pttl(&mut new_master.clone(), kept_name).await,
        -2,
        "released on the new master"
    );

    // a hold the replica never got vanishes with the failover: lost() says so. Another shard:
    // masters refuse to vote for a second failover of one shard within 2 × node timeout.
    let mut any = cluster.nodes[0].conn().await;
    let mut lost_name = String::new();
    for i in 0.. {
        lost_name = format!("failover:lost:{i}");
        let slot = keyslot(&mut any, &lost_name).await;
        if owner(&mut any, slot).await.0 != replica_port {
            break;
        }
    }
    let lost_name = lost_name.as_str();
    let lost = client.lock(lost_name).unwrap().lock().await.unwrap();
    let mut lost_reason = Box::pin(lost.lost());
    let (replica_port, slot) = replica_for(&cluster, lost_name).await;
    let mut replica = node(&cluster, replica_port).conn().await;
    cmd(&mut replica, &["CONFIG", "SET", "replica-read-only", "no"]).await;
    cmd(&mut replica, &["FLUSHALL"]).await; // local to the replica: its master still has the hold
    failover(&cluster, replica_port, slot, true).await;
    let reason = tokio::time::timeout(Duration::from_secs(5), &mut lost_reason)
        .await
        .expect("guard.lost() fires for the hold that vanished in the failover");
    assert_eq!(reason, LostReason::OwnerGone);
    assert!(!lost.is_held());
    // the lock is free on the new master at once
    let again = client.lock(lost_name).unwrap().try_lock().await.unwrap();
    assert!(again.is_some(), "the vanished lock is free on the new master");
    drop(again);
    drop(lost);
}
