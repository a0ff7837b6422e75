//! Redis Sentinel: 1 master, 2 replicas and 3 sentinels (real redis-server processes on loopback
//! ports); a client built with `ClientBuilder::sentinel` follows a forced failover. `partition`:
//! the master ↔ replica link cut while holds are taken, then a failover, per `ReplicaSync` mode.

#[path = "../common/mod.rs"]
mod common;
mod partition;

use std::time::{Duration, Instant};

use common::{app_connections, eventually, hexists_pexpire_calls, per_key_script_tracking, RedisServer};
use redisson_lock::{Client, Config, Connection, Error, LeaseState, LossSignal, Unlocked};

use common::topology::{Topology, MASTER};

pub(crate) fn master_port(client: &Client) -> u16 {
    match client.connection() {
        Connection::Sentinel(s) => s
            .master_addr()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("host:port"),
        other => panic!("not a sentinel connection: {other:?}"),
    }
}

/// Replicates everything written so far to both replicas: a marker written on this connection,
/// then `WAIT 2` on it (a `WAIT` covers the writes of its own connection only, and the
/// replication stream is in order, so the marker's acknowledgement covers every earlier write).
async fn replicate(master: &RedisServer) {
    let cfg = redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(10)));
    let mut c = redis::Client::open(master.url())
        .unwrap()
        .get_multiplexed_async_connection_with_config(&cfg)
        .await
        .unwrap();
    let t = Instant::now();
    let _: () = redis::cmd("SET")
        .arg("test:replication-marker")
        .arg(format!("{:?}", t))
        .query_async(&mut c)
        .await
        .unwrap();
    let acked: i64 = redis::cmd("WAIT")
        .arg(2)
        .arg(5000)
        .query_async(&mut c)
        .await
        .unwrap();
    eprintln!("WAIT 2 took {:?}", t.elapsed());
    assert_eq!(acked, 2, "both replicas acknowledged");
}

/// A hold taken before a forced failover (and replicated) survives it: the client follows the new
/// master, the watchdog renews the hold there, another client is refused, the unlock releases it
/// and wakes a waiter through the new master's pub/sub.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replicated_hold_survives_a_failover_and_the_client_follows() {
    common::init_tracing();
    let t = Topology::start().await;
    // a failover takes seconds: a 15 s watchdog (renewal every 5 s) outlives it
    let fast = Config::default()
        .with_lock_watchdog_timeout(Duration::from_secs(15))
        .with_sentinel_scan_interval(Duration::from_millis(200));
    let a = t.client(fast.clone()).await;
    // B only wakes by message within the bound: it re-polls every minute
    let b = t
        .client(fast.clone().with_poll_interval(Duration::from_secs(60)))
        .await;
    let first = t.master().await.expect("a master").port;
    assert_eq!(master_port(&a), first);

    let lock = a.lock("sentinel:order:1").unwrap();
    let g = lock.lock().await.unwrap();
    replicate(t.master().await.unwrap()).await;

    let (promoted, took) = t.failover().await;
    let new_master = promoted.port;
    let seen = Instant::now();
    eventually(
        Duration::from_secs(30),
        "both clients moved to the new master",
        || async { master_port(&a) == new_master && master_port(&b) == new_master },
    )
    .await;
    let followed = seen.elapsed();
    t.wait_demoted(first).await;
    let demoted = seen.elapsed();

    // the hold is on the new master, and the watchdog renews it there: its TTL goes up again
    let node = t.nodes.iter().find(|n| n.port == new_master).unwrap();
    let raw = node.conn().await;
    let pttl = |mut c: redis::aio::MultiplexedConnection| async move {
        redis::cmd("PTTL")
            .arg("sentinel:order:1")
            .query_async::<i64>(&mut c)
            .await
            .unwrap()
    };
    let before = pttl(raw.clone()).await;
    assert!(
        before > 0,
        "the replicated hold is on the new master (PTTL {before} ms)"
    );
    eventually(
        Duration::from_secs(15),
        "the watchdog renewed the hold on the new master",
        || {
            let raw = raw.clone();
            async move { pttl(raw).await > before + 300 }
        },
    )
    .await;
    assert_eq!(g.state(), LeaseState::Held);
    let other = b.lock("sentinel:order:1").unwrap();
    assert!(
        other.try_lock().await.unwrap().is_none(),
        "B is refused while A holds"
    );

    // the new master's replicas are back in sync (the default ReplicaSync::Auto is Required on a
    // sentinel client: its acquisitions wait for a replica)
    eventually(
        Duration::from_secs(30),
        "the new master has 2 replicas online",
        || {
            let mut raw = raw.clone();
            async move {
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query_async(&mut raw)
                    .await
                    .unwrap();
                info.contains("connected_slaves:2") && info.matches("state=online").count() == 2
            }
        },
    )
    .await;
    // B waits; A's unlock on the new master wakes it through the new master's pub/sub
    let waiter = tokio::spawn(async move {
        let got = other.lock().await;
        (got, Instant::now())
    });
    eventually(
        Duration::from_secs(10),
        "B waits on the lock's channel",
        || async { b.stats().waiters >= 1 },
    )
    .await;
    let unlocked_at = Instant::now();
    assert!(matches!(g.unlock().await.unwrap(), Unlocked::Released));
    let (got, at) = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    let gb = got.unwrap();
    let wake = at.duration_since(unlocked_at);
    assert!(
        wake < Duration::from_secs(2),
        "B woken by the unlock message, not by polling ({wake:?})"
    );
    gb.unlock().await.unwrap();
    eprintln!(
        "SENTINEL FAILOVER: a replica was master {took:?} after the command; both clients were on it {followed:?} after that \
         (the old master was demoted {demoted:?} after it); wake-up on the new master {wake:?}"
    );
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// Commands that meet a demoted master (`READONLY`) move to the new one and are sent again.
/// Replication is asynchronous, so a hold granted by the old master just before the switch may
/// be missing on the new one: its unlock then says `NotHeld` (reported, never hidden). With
/// `ReplicaSync::Auto` (Required here) the old master, whose replicas have left it for the new
/// one, grants nothing confirmed until Sentinel demotes it: those acquisitions fail with
/// `ReplicasNotSynced` (and are undone) instead of being granted where a failover just lost
/// them. Acquisitions go on on the new master; a hold the new master got from the old one
/// before the switch, released only on the old one, is gone within its TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acquisitions_during_a_failover_count_once() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    common::init_tracing();
    let t = Topology::start().await;
    // a long scan interval: the client learns of the move from the replies; a short watchdog:
    // a hold left on the new master by the switch expires soon
    let watchdog = Duration::from_secs(5);
    let a = t
        .client(
            Config::default()
                .with_sentinel_scan_interval(Duration::from_secs(3600))
                .with_lock_watchdog_timeout(watchdog),
        )
        .await;
    let lock = a.lock("sentinel:counter").unwrap();
    let done = std::sync::Arc::new(AtomicU32::new(0));
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let worker = {
        let (lock, done, stop) = (lock.clone(), done.clone(), stop.clone());
        tokio::spawn(async move {
            let (mut lost, mut unconfirmed) = (0u32, 0u32);
            let mut errors = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                match lock.try_lock_for(Duration::from_secs(5)).await {
                    Ok(Some(g)) => match g.unlock().await {
                        Ok(_) => {
                            done.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(Error::NotHeld { .. }) => lost += 1,
                        Err(e) => errors.push(format!("unlock: {e}")),
                    },
                    Ok(None) => errors.push("try_lock_for timed out".into()),
                    // the old master's replicas leave it for the new one: a grant there is not
                    // confirmed, and is undone
                    Err(Error::ReplicasNotSynced { .. }) => unconfirmed += 1,
                    Err(e) => errors.push(format!("lock: {e}")),
                }
            }
            (lost, unconfirmed, errors)
        })
    };
    eventually(
        Duration::from_secs(10),
        "acquisitions before the failover",
        || {
            let done = done.clone();
            async move { done.load(Ordering::SeqCst) >= 10 }
        },
    )
    .await;
    let old = t.master().await.expect("a master").port;
    let new_master = t.failover().await.0.port;
    t.wait_demoted(old).await;
    eventually(
        Duration::from_secs(30),
        "the client followed the new master",
        || async { master_port(&a) == new_master },
    )
    .await;
    let after = done.load(Ordering::SeqCst);
    eventually(
        Duration::from_secs(30),
        "10 acquisitions on the new master",
        || {
            let done = done.clone();
            async move { done.load(Ordering::SeqCst) >= after + 10 }
        },
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    let (lost, unconfirmed, errors) = worker.await.unwrap();
    let done = done.load(Ordering::SeqCst);
    assert_eq!(master_port(&a), new_master, "the client stayed on the new master");
    // after the move nothing is left behind on the new master, beyond a hold's TTL
    let node = t.nodes.iter().find(|n| n.port == new_master).unwrap();
    let mut raw = node.conn().await;
    eventually(
        watchdog + Duration::from_secs(5),
        "no lock key left on the new master",
        || {
            let mut raw = raw.clone();
            async move { !common::key_exists(&mut raw, "sentinel:counter").await }
        },
    )
    .await;
    let _: () = redis::cmd("PING").query_async(&mut raw).await.unwrap();
    for e in &errors {
        // the only acceptable failures are the transient ones of the move itself
        assert!(
            e.contains("timed out") || e.contains("connection") || e.contains("broken") || e.contains("I/O"),
            "unexpected error during the failover: {e}"
        );
    }
    eprintln!(
        "{done} acquisitions across the failover, {lost} lost to the switch (unlock NotHeld), {unconfirmed} refused \
         unconfirmed by replicas, {} transient errors: {errors:?}",
        errors.len()
    );
    a.shutdown().await.unwrap();
}

#[tokio::test]
async fn bad_sentinel_arguments_are_typed_errors() {
    let err = Client::builder()
        .sentinel(Vec::<String>::new(), MASTER)
        .build()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let err = Client::builder()
        .sentinel(["redis://127.0.0.1:1"], "")
        .build()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let err = Client::builder()
        .sentinel(["not a url"], MASTER)
        .build()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    // nobody listens: a clear connection error, not a hang
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        Client::builder()
            .sentinel(["redis://127.0.0.1:1"], MASTER)
            .config(Config::default().with_connect_timeout(Duration::from_secs(2)))
            .build(),
    )
    .await
    .expect("build returns")
    .unwrap_err();
    assert!(err.is_transient() || matches!(err, Error::Redis(_)), "{err}");
}

/// Passwords on both sides: the master (and replica) with `requirepass`, the sentinel with its
/// own `requirepass`; the client logs in to the sentinels through their URLs and to the master
/// through `sentinel_master_auth`. A wrong password on either side is a clear error.
#[tokio::test]
async fn passwords_for_the_sentinels_and_for_the_master() {
    let master = RedisServer::start_with(&["--requirepass", "m-secret", "--masterauth", "m-secret"]);
    let port = master.port.to_string();
    let _replica = RedisServer::start_with(&[
        "--replicaof",
        "127.0.0.1",
        &port,
        "--requirepass",
        "m-secret",
        "--masterauth",
        "m-secret",
    ]);
    let sentinel = RedisServer::start_sentinel_with(
        master.port,
        MASTER,
        1,
        &format!("sentinel auth-pass {MASTER} m-secret\nrequirepass s-secret"),
    );
    let sentinel_url = format!("redis://:s-secret@127.0.0.1:{}", sentinel.port);
    let build = |sentinel_url: String, master_password: &str| {
        Client::builder()
            .sentinel([sentinel_url], MASTER)
            .sentinel_master_auth(None, Some(master_password.to_owned()))
            .config(
                Config::default()
                    .with_connect_timeout(Duration::from_secs(3))
                    .with_replica_sync(redisson_lock::ReplicaSync::Off),
            )
            .build()
    };
    let client = build(sentinel_url.clone(), "m-secret")
        .await
        .expect("both passwords right");
    assert_eq!(master_port(&client), master.port);
    let lock = client.lock("sentinel:auth").unwrap();
    let g = lock.lock().await.unwrap();
    assert!(matches!(g.unlock().await.unwrap(), Unlocked::Released));
    client.shutdown().await.unwrap();

    let err = build(sentinel_url, "wrong").await.unwrap_err();
    assert!(
        err.to_string().to_lowercase().contains("auth") || err.to_string().contains("WRONGPASS"),
        "a wrong master password says so: {err}"
    );
    let err = build(format!("redis://:wrong@127.0.0.1:{}", sentinel.port), "m-secret")
        .await
        .unwrap_err();
    assert!(
        !err.to_string().is_empty(),
        "a wrong sentinel password fails: {err}"
    );
    eprintln!("wrong sentinel password: {err}");
}

/// A hold the new master does not have (its grant never reached the promoted replica; here the
/// key is deleted on the new master right after the switch, which a client cannot tell apart):
/// the watchdog's next renewal on the new master finds the owner gone, `lost()` fires with
/// `OwnerGone`, and the unlock says `NotHeld` instead of pretending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_missing_on_the_new_master_is_reported_lost() {
    common::init_tracing();
    let t = Topology::start().await;
    let c = t
        .client(
            Config::default()
                .with_lock_watchdog_timeout(Duration::from_secs(15))
                .with_sentinel_scan_interval(Duration::from_millis(200)),
        )
        .await;
    let first = t.master().await.expect("a master").port;
    let want = expected_loss_signal();
    assert_eq!(
        c.stats().loss_signal,
        want,
        "the path the probe finds on the master"
    );
    let g = c.lock("sentinel:lost").unwrap().lock().await.unwrap();
    let (promoted, _) = t.failover().await;
    let new_master = promoted.port;
    eventually(
        Duration::from_secs(15),
        "the client moved to the new master",
        || async { master_port(&c) == new_master },
    )
    .await;
    t.wait_demoted(first).await;
    let mut raw = promoted.conn().await;
    let _: i64 = redis::cmd("DEL")
        .arg("sentinel:lost")
        .query_async(&mut raw)
        .await
        .unwrap();
    let deleted = Instant::now();
    // the loss watch tracks the key on the new master: well before the next renewal (5 s)
    let reason = tokio::time::timeout(Duration::from_secs(2), g.lost())
        .await
        .expect("lost() fires within 2 s of the deletion on the new master");
    assert_eq!(reason, redisson_lock::LostReason::OwnerGone);
    assert_eq!(c.stats().loss_signal, want, "the same path on the new master");
    assert!(matches!(g.state(), LeaseState::Lost(_)), "{:?}", g.state());
    let err = g.unlock().await.unwrap_err();
    assert!(matches!(err, Error::NotHeld { .. }), "{err}");
    eprintln!(
        "a hold missing on the new master was reported lost {:?} after it vanished",
        deleted.elapsed()
    );
    c.shutdown().await.unwrap();
}

/// How the probe at connect makes a client learn a loss on this server: without the echo of its
/// renewals where the server tracks only the keys a script reads, else with it.
fn expected_loss_signal() -> LossSignal {
    if per_key_script_tracking() {
        LossSignal::TrackingWithoutEcho
    } else {
        LossSignal::Tracking
    }
}

/// Renewal rounds on `master`: how many of the `n` held keys the loss watch read again
/// (`HEXISTS` beyond the renewal scripts' own checks) against how many extensions ran.
async fn reads_per_renewals(master: &RedisServer, n: u64) -> (u64, u64) {
    let mut raw = master.conn().await;
    let (h0, p0) = hexists_pexpire_calls(&mut raw).await;
    eventually(Duration::from_secs(20), "three renewal rounds", || {
        let mut raw = raw.clone();
        async move { hexists_pexpire_calls(&mut raw).await.1 >= p0 + 3 * n }
    })
    .await;
    // the echoed reads of the last round come right after it
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (h1, p1) = hexists_pexpire_calls(&mut raw).await;
    (h1 - h0, p1 - p0)
}

/// A Sentinel client tracks its held keys as a single-server client does: where the master
/// tracks only the keys a script reads, on a connection of the loss watch's own that renews
/// them, so renewals are not pushed back and read again, and it keeps that path on the new
/// master after a failover (its own connection and the pub/sub connection move together);
/// elsewhere every renewal is read again, and the client keeps no connection of the watch's
/// own. Either way a deletion on the new master is reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewals_are_not_read_again_where_the_master_tracks_without_the_echo_across_a_failover() {
    common::init_tracing();
    const N: u64 = 5;
    let t = Topology::start().await;
    let first = t.master().await.expect("a master");
    let before = app_connections(first).await;
    // a renewal round every 2 s; the holds outlive the failover's few seconds without one
    let c = t
        .client(
            Config::default()
                .with_lock_watchdog_timeout(Duration::from_secs(6))
                .with_sentinel_scan_interval(Duration::from_millis(200)),
        )
        .await;
    let want = expected_loss_signal();
    assert_eq!(c.stats().loss_signal, want, "right after connect");
    // the command and pub/sub connections, and the loss watch's own where it tracks there
    let own = usize::from(want == LossSignal::TrackingWithoutEcho);
    eventually(
        Duration::from_secs(5),
        "the client's connections to the master",
        || async { app_connections(first).await == before + 2 + own },
    )
    .await;
    let mut guards = Vec::new();
    for i in 0..N {
        guards.push(
            c.lock(&format!("sentinel:echo:{i}"))
                .unwrap()
                .lock()
                .await
                .unwrap(),
        );
    }
    let echo = want != LossSignal::TrackingWithoutEcho;
    let check = |(reads, extensions): (u64, u64), on: &str| {
        common::assert_renewals_read_again(echo, reads, extensions, N, on)
    };
    let mut raw = first.conn().await;
    eventually(Duration::from_secs(10), "the holds read once", || {
        let mut raw = raw.clone();
        async move { hexists_pexpire_calls(&mut raw).await.0 >= N }
    })
    .await;
    check(reads_per_renewals(first, N).await, "the first master");
    let first = first.port;
    replicate(t.master().await.expect("a master")).await;
    let (promoted, _) = t.failover().await;
    let new_master = promoted.port;
    eventually(
        Duration::from_secs(15),
        "the client moved to the new master",
        || async { master_port(&c) == new_master },
    )
    .await;
    t.wait_demoted(first).await;
    // the holds are read on the new master once tracking is on there
    raw = promoted.conn().await;
    eventually(
        Duration::from_secs(10),
        "the holds read on the new master",
        || {
            let mut raw = raw.clone();
            async move { hexists_pexpire_calls(&mut raw).await.0 >= N }
        },
    )
    .await;
    check(reads_per_renewals(promoted, N).await, "the new master");
    assert_eq!(c.stats().loss_signal, want, "the same path on the new master");
    assert!(
        guards.iter().all(|g| g.is_held()),
        "the replicated holds survived"
    );
    let victim = guards.remove(0);
    let _: i64 = redis::cmd("DEL")
        .arg("sentinel:echo:0")
        .query_async(&mut raw)
        .await
        .unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(5), victim.lost())
        .await
        .expect("the deletion on the new master is reported");
    assert_eq!(reason, redisson_lock::LostReason::OwnerGone);
    for g in guards {
        g.unlock().await.unwrap();
    }
    c.shutdown().await.unwrap();
}
