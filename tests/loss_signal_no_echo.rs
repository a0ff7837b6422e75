//! The loss signal without the echo of our own writes: where the server tracks only the keys a
//! script reads (Redis 7.2+, Valkey), a connection of the loss watch's own (the tracker) renews
//! and tracks the held keys with `NOLOOP`, so renewals are neither pushed back nor read again;
//! elsewhere the pub/sub connection tracks them as before, and every renewal is read again.
//! Either way a deletion is reported at once, also after the tracker was cut (it reconnects
//! without a word; the watch finds its tracking gone and turns it on again).

mod common;

use std::time::{Duration, Instant};

use common::{
    eventually, hexists_pexpire_calls as calls, info_sections, init_tracing, per_key_script_tracking,
    RedisServer,
};
use redisson_lock::Config;

/// Without the echo, holding locks costs the client no command beyond the renewal calls (no
/// `CLIENT CACHING`), and the server tracks the held keys alone: not the keys the application
/// reads on `Client::connection()`, nor a lock someone else holds that an attempt found taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_held_keys_are_tracked_and_no_command_marks_them() {
    init_tracing();
    if !per_key_script_tracking() {
        common::skip_unsupported(
            "only_held_keys_are_tracked_and_no_command_marks_them",
            "held keys are tracked without the echo only where the server tracks the keys a script reads (7.2+)",
        );
        return;
    }
    const N: u64 = 10;
    let s = RedisServer::start();
    let c = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_secs(3)))
        .await;
    // another service's hold, which tracks nothing itself
    let other = s
        .client(Config::default().with_loss_detection(redisson_lock::LossDetection::Renewal))
        .await;
    let busy = other.lock("tracked:busy").unwrap().lock().await.unwrap();
    let mut raw = s.conn().await;
    let mut guards = Vec::new();
    for i in 0..N {
        guards.push(c.lock(&format!("tracked:{i}")).unwrap().lock().await.unwrap());
    }
    let stat = |raw: &redis::aio::MultiplexedConnection| {
        let mut raw = raw.clone();
        async move {
            let info = info_sections(&mut raw, &["commandstats", "stats"]).await;
            let caching = common::faults::info_field(&info, "cmdstat_client|caching")
                .and_then(|v| v.split(',').find_map(|p| p.strip_prefix("calls=")))
                .map_or(0, |n| n.parse::<u64>().unwrap());
            let tracked: u64 =
                common::faults::info_field(&info, "tracking_total_keys").map_or(0, |n| n.parse().unwrap());
            (caching, tracked)
        }
    };
    eventually(Duration::from_secs(10), "every held key tracked", || {
        let raw = raw.clone();
        async move { stat(&raw).await.1 == N }
    })
    .await;
    // the application reads its own keys on the client's connection, and an attempt finds a
    // lock taken
    let mut app = c.connection();
    for i in 0..5 {
        let _: Option<String> = redis::cmd("GET")
            .arg(format!("tracked:app:{i}"))
            .query_async(&mut app)
            .await
            .unwrap();
    }
    assert!(c
        .lock("tracked:busy")
        .unwrap()
        .try_lock()
        .await
        .unwrap()
        .is_none());
    // two renewal rounds
    let (_, p0) = calls(&mut raw).await;
    eventually(Duration::from_secs(20), "two renewal rounds", || {
        let mut raw = raw.clone();
        async move { calls(&mut raw).await.1 >= p0 + 2 * N }
    })
    .await;
    let (caching, tracked) = stat(&raw).await;
    assert_eq!(caching, 0, "CLIENT CACHING was sent");
    assert_eq!(tracked, N, "the server tracks {tracked} keys for {N} holds");
    for g in guards {
        g.unlock().await.unwrap();
    }
    busy.unlock().await.unwrap();
    c.shutdown().await.unwrap();
    other.shutdown().await.unwrap();
}

/// Several renewal rounds of 20 holds: each round's script checks (`HEXISTS`) and extends
/// (`PEXPIRE`) every hold once. Without the echo nothing else reads the holds; with it, the
/// watch reads each renewed hold again (one more `HEXISTS` per renewal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewals_are_read_again_only_where_they_are_echoed() {
    init_tracing();
    const N: u64 = 20;
    let s = RedisServer::start();
    // a renewal round every second
    let c = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_secs(3)))
        .await;
    let mut raw = s.conn().await;
    let mut guards = Vec::new();
    for i in 0..N {
        guards.push(c.lock(&format!("echo:{i}")).unwrap().lock().await.unwrap());
    }
    // the watch's first reads of the new holds are done
    eventually(Duration::from_secs(10), "the holds read once", || {
        let mut raw = raw.clone();
        async move { calls(&mut raw).await.0 >= N }
    })
    .await;
    let (h0, p0) = calls(&mut raw).await;
    // three renewal rounds
    eventually(Duration::from_secs(20), "three renewal rounds", || {
        let mut raw = raw.clone();
        async move { calls(&mut raw).await.1 >= p0 + 3 * N }
    })
    .await;
    // the echoed reads of the last round come right after it
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (h1, p1) = calls(&mut raw).await;
    let (reads, extensions) = (h1 - h0, p1 - p0);
    common::assert_renewals_read_again(!per_key_script_tracking(), reads, extensions, N, "one server");
    // and the holds are watched: a deletion is reported long before the next renewal
    let victim = guards.remove(0);
    let _: () = redis::cmd("DEL")
        .arg(victim.key())
        .query_async(&mut raw)
        .await
        .unwrap();
    let t0 = Instant::now();
    tokio::time::timeout(Duration::from_millis(800), victim.lost())
        .await
        .expect("the deletion is reported before the next renewal");
    eprintln!("deletion reported in {:?}", t0.elapsed());
    for g in guards {
        assert!(g.is_held());
        g.unlock().await.unwrap();
    }
    c.shutdown().await.unwrap();
}

/// The tracker cut (`CLIENT KILL`): it reconnects on its own at its next request,
/// without tracking. Within about a second the watch finds that out, turns tracking on again and
/// reads every hold, so a deletion after that is reported at once again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tracker_that_reconnected_tracks_again() {
    init_tracing();
    if !per_key_script_tracking() {
        common::skip_unsupported(
            "a_tracker_that_reconnected_tracks_again",
            "the tracker tracks only on servers that track the keys a script reads (7.2+)",
        );
        return;
    }
    let s = RedisServer::start();
    // 30 s watchdog: a renewal (every 10 s) cannot be what notices the deletion
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let held = c.lock("reconnect:held").unwrap().lock().await.unwrap();
    let redirected = |raw: &redis::aio::MultiplexedConnection| {
        let mut raw = raw.clone();
        async move {
            let list: String = redis::cmd("CLIENT")
                .arg("LIST")
                .query_async(&mut raw)
                .await
                .unwrap();
            list.lines()
                .find(|l| l.split(' ').any(|f| f.starts_with("redir=") && f != "redir=-1"))
                .and_then(|l| {
                    l.split(' ')
                        .find_map(|f| f.strip_prefix("id="))
                        .map(str::to_owned)
                })
        }
    };
    eventually(Duration::from_secs(10), "the tracker tracks", || {
        let raw = raw.clone();
        async move { redirected(&raw).await.is_some() }
    })
    .await;
    let id = redirected(&raw).await.unwrap();
    let () = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(&id)
        .query_async(&mut raw)
        .await
        .unwrap();
    // a new tracker, tracking again
    eventually(Duration::from_secs(10), "the new tracker tracks", || {
        let raw = raw.clone();
        let id = id.clone();
        async move { redirected(&raw).await.is_some_and(|now| now != id) }
    })
    .await;
    assert!(held.is_held(), "the hold is in place");
    let _: () = redis::cmd("DEL")
        .arg("reconnect:held")
        .query_async(&mut raw)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(2), held.lost())
        .await
        .expect("the deletion is reported long before the next renewal (10 s)");
    c.shutdown().await.unwrap();
}

/// `ClientStats::loss_signal` says which of the paths the client took, from the moment it is
/// connected: without the echo where the server tracks the keys a script reads, with it
/// elsewhere, renewal only when configured so, and renewal once the client shut down.
#[tokio::test]
async fn the_client_says_how_it_learns_a_loss() {
    use redisson_lock::{LossDetection, LossSignal};
    init_tracing();
    let s = RedisServer::start();
    let before = common::app_connections(&s).await;
    let c = s.client(Config::default()).await;
    let want = if per_key_script_tracking() {
        LossSignal::TrackingWithoutEcho
    } else {
        LossSignal::Tracking
    };
    // decided before the client is handed out (what `doctor` reports), and kept while it holds
    assert_eq!(c.stats().loss_signal, want, "right after connect");
    // the command and pub/sub connections, and the watch's own only where it tracks: a server
    // the probe found unable to costs no connection more
    let own = usize::from(want == LossSignal::TrackingWithoutEcho);
    assert_eq!(
        common::app_connections(&s).await,
        before + 2 + own,
        "the client's connections"
    );
    let g = c.lock("signal:held").unwrap().lock().await.unwrap();
    eventually(Duration::from_secs(10), "the hold read", || {
        let c = c.clone();
        async move { c.stats().loss_signal == want }
    })
    .await;
    g.unlock().await.unwrap();
    c.shutdown().await.unwrap();
    assert_eq!(c.stats().loss_signal, LossSignal::Renewal);
    let r = s
        .client(Config::default().with_loss_detection(LossDetection::Renewal))
        .await;
    assert_eq!(r.stats().loss_signal, LossSignal::Renewal);
    r.shutdown().await.unwrap();
}

/// The client's connections to every node of `cluster` (see [`common::app_connections`]).
async fn cluster_connections(cluster: &common::cluster::Cluster) -> usize {
    let mut n = 0;
    for node in &cluster.nodes {
        n += common::app_connections(node).await;
    }
    n
}

/// In a cluster each master tracks the held keys of its slots for a connection of the watch's
/// own to it (where the masters track only the keys a script reads), so renewals are neither
/// pushed back nor read again on any master; elsewhere every renewal is read again, and the
/// client keeps no connection of the watch's own (the probe closes them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_renews_without_the_echo_on_every_master_where_they_do_it() {
    use redisson_lock::{LossDetection, LossSignal};
    init_tracing();
    const N: u64 = 12;
    let cluster = common::cluster::Cluster::start(3, 0).await;
    let connect = |config: Config| {
        redisson_lock::Client::builder()
            .cluster(cluster.urls())
            .config(config)
            .build()
    };
    let want = if per_key_script_tracking() {
        LossSignal::TrackingWithoutEcho
    } else {
        LossSignal::Tracking
    };
    // the connections a client without the loss watch keeps (it stays connected: when a
    // dropped client's connections close is up to the cluster client's tasks)
    let before = cluster_connections(&cluster).await;
    let plain = connect(Config::default().with_loss_detection(LossDetection::Renewal))
        .await
        .expect("a cluster client");
    let base = cluster_connections(&cluster).await - before;
    // a renewal round every second
    let c = connect(Config::default().with_lock_watchdog_timeout(Duration::from_secs(3)))
        .await
        .expect("a cluster client");
    assert_eq!(c.stats().loss_signal, want, "right after connect");
    let own = if want == LossSignal::TrackingWithoutEcho {
        cluster.nodes.len()
    } else {
        0
    };
    eventually(Duration::from_secs(10), "the client's connections", || {
        let cluster = &cluster;
        async move { cluster_connections(cluster).await == before + 2 * base + own }
    })
    .await;
    // names over the slots of all three masters
    let mut guards = Vec::new();
    for i in 0..N {
        guards.push(
            c.lock(&format!("cluster-echo:{i}"))
                .unwrap()
                .lock()
                .await
                .unwrap(),
        );
    }
    let mut raws = Vec::new();
    for node in &cluster.nodes {
        raws.push(node.conn().await);
    }
    let total = |raws: &Vec<redis::aio::MultiplexedConnection>| {
        let raws = raws.clone();
        async move {
            let (mut h, mut p) = (0, 0);
            for mut raw in raws {
                let (dh, dp) = calls(&mut raw).await;
                h += dh;
                p += dp;
            }
            (h, p)
        }
    };
    eventually(Duration::from_secs(10), "the holds read once", || {
        let f = total(&raws);
        async move { f.await.0 >= N }
    })
    .await;
    let (h0, p0) = total(&raws).await;
    eventually(Duration::from_secs(20), "three renewal rounds", || {
        let f = total(&raws);
        async move { f.await.1 >= p0 + 3 * N }
    })
    .await;
    // the echoed reads of the last round come right after it
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (h1, p1) = total(&raws).await;
    let (reads, extensions) = (h1 - h0, p1 - p0);
    let echo = want != LossSignal::TrackingWithoutEcho;
    common::assert_renewals_read_again(echo, reads, extensions, N, "cluster");
    // and every master's holds are watched: a deletion is reported before the next renewal
    let mut raw = redis::cluster::ClusterClient::new(cluster.urls())
        .unwrap()
        .get_async_connection()
        .await
        .unwrap();
    for (i, g) in guards.into_iter().enumerate() {
        let _: i64 = redis::cmd("DEL")
            .arg(format!("cluster-echo:{i}"))
            .query_async(&mut raw)
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_millis(800), g.lost())
            .await
            .expect("the deletion is reported before the next renewal (1 s)");
    }
    assert_eq!(c.stats().loss_signal, want);
    c.shutdown().await.unwrap();
    plain.shutdown().await.unwrap();
}
