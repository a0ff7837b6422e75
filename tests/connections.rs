//! Connection variants against real redis-server processes: password + db in the URL, watchdog
//! batching, and a Redis Cluster (three loopback nodes) with sharded pub/sub, and every
//! [`PublishMode`] there: one mode per client for publishing and subscribing, and `Both` talking
//! to classic and sharded peers at once.

mod common;

use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{eventually, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, PublishMode, Unlocked};

#[tokio::test]
async fn password_and_database_from_the_url() {
    let s = RedisServer::start_with(&["--requirepass", "s3cret"]);
    let url = format!("redis://:s3cret@127.0.0.1:{}/3", s.port);
    let client = Client::connect(&url).await.unwrap();
    let lock = client.lock("in-db-3").unwrap();
    let g = lock.lock().await.unwrap();
    let mut db3 = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    assert_eq!(
        db3.exists::<_, i64>("in-db-3").await.unwrap(),
        1,
        "the lock lives in db 3"
    );
    let mut db0 = redis::Client::open(format!("redis://:s3cret@127.0.0.1:{}/0", s.port))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    assert_eq!(db0.exists::<_, i64>("in-db-3").await.unwrap(), 0);
    // waiting works through the authenticated pub/sub connection too
    let other = lock.with_owner(2);
    let w = tokio::spawn(async move { other.lock().await.unwrap().unlock().await.unwrap() });
    eventually(Duration::from_secs(5), "the waiter subscribed", || {
        let c = client.clone();
        async move { c.stats().waiters == 1 }
    })
    .await;
    let t = Instant::now();
    g.unlock().await.unwrap();
    tokio::time::timeout(Duration::from_secs(2), w)
        .await
        .unwrap()
        .unwrap();
    assert!(t.elapsed() < Duration::from_millis(500));

    let wrong = Client::connect(&format!("redis://:wrong@127.0.0.1:{}/", s.port)).await;
    match wrong {
        Err(e @ redisson_lock::Error::Connect { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains(&format!("127.0.0.1:{}", s.port)),
                "names the address: {text}"
            );
            assert!(!text.contains("wrong"), "never the password: {text}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn watchdog_sends_at_most_batch_size_keys_per_call() {
    let s = RedisServer::start();
    // renewal's own calls (with tracking, each renewal is also read again by the loss watch)
    let config = Config::default()
        .with_lock_watchdog_timeout(Duration::from_millis(900))
        .with_watchdog_batch_size(2)
        .with_loss_detection(redisson_lock::LossDetection::Renewal);
    let client = Client::builder()
        .url(s.url())
        .config(config)
        .build()
        .await
        .unwrap();
    let mut raw = s.conn().await;
    let mut guards = Vec::new();
    for i in 0..5 {
        guards.push(client.lock(&format!("batch:{i}")).unwrap().lock().await.unwrap());
    }
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut raw)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await; // about three renewal periods
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut raw)
        .await
        .unwrap();
    let calls: u64 = info
        .lines()
        .find(|l| l.starts_with("cmdstat_evalsha:"))
        .and_then(|l| l.split("calls=").nth(1))
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // 5 locks in batches of 2 → 3 calls per period
    assert!(calls >= 6, "renewals ran: {calls} calls");
    assert_eq!(calls % 3, 0, "3 calls per period (2 + 2 + 1 keys), got {calls}");
    for g in guards {
        g.unlock().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_with_sharded_pubsub_and_per_slot_renewal() {
    let cluster = Cluster::start(3, 0).await;
    let config = Config::default().with_lock_watchdog_timeout(Duration::from_millis(900));
    let client = Client::builder()
        .cluster(cluster.urls())
        .config(config.clone())
        .build()
        .await
        .unwrap();
    let waiter_client = Client::builder()
        .cluster(cluster.urls())
        .config(config)
        .build()
        .await
        .unwrap();
    if cluster.sharded_pubsub().await {
        assert!(
            format!("{client:?}").contains("SPUBLISH"),
            "Auto picks sharded pub/sub on a Redis 7 cluster: {client:?}"
        );
    } else {
        assert!(
            format!("{client:?}").contains("publish: \"PUBLISH\""),
            "Auto picks classic pub/sub on a cluster without sharded pub/sub: {client:?}"
        );
        common::skip_unsupported(
            "cluster_with_sharded_pubsub_and_per_slot_renewal (its sharded part)",
            "no sharded pub/sub (PUBSUB SHARDNUMSUB unknown): Auto is classic, checked with that",
        );
    }

    // locks spread over all three nodes stay alive under per-slot batched renewal
    let mut guards = Vec::new();
    for i in 0..12 {
        guards.push(client.lock(&format!("c:{i}")).unwrap().lock().await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(2700)).await; // 3x the watchdog timeout
    for g in &guards {
        assert!(g.is_held(), "{} lost", g.key());
        assert!(client.lock(g.key()).unwrap().is_locked().await.unwrap());
    }

    // a waiter on another client is woken by SPUBLISH through SSUBSCRIBE
    let wl = waiter_client.lock("c:0").unwrap();
    let w = tokio::spawn(async move {
        let g = wl.lock().await.unwrap();
        let at = Instant::now();
        g.unlock().await.unwrap();
        at
    });
    eventually(Duration::from_secs(5), "the waiter subscribed", || {
        let c = waiter_client.clone();
        async move { c.stats().waiters == 1 }
    })
    .await;
    let released = Instant::now();
    for g in guards {
        g.unlock().await.unwrap();
    }
    let acquired = tokio::time::timeout(Duration::from_secs(5), w)
        .await
        .unwrap()
        .unwrap();
    assert!(
        acquired.duration_since(released) < Duration::from_millis(500),
        "woken, not polled"
    );
    eventually(Duration::from_secs(5), "no waiter left", || {
        let c = waiter_client.clone();
        async move { c.stats().channels == 0 }
    })
    .await;

    // forcing classic pub/sub also works (both sides must agree, as with Redisson)
    let classic = Client::builder()
        .cluster(cluster.urls())
        .config(Config::default().with_publish_mode(PublishMode::Classic))
        .build()
        .await
        .unwrap();
    let g = classic.lock("c:classic").unwrap().lock().await.unwrap();
    g.unlock().await.unwrap();

    // every kind works in a cluster: its helper keys share the lock's slot (no CROSSSLOT)
    let (token, g) = client
        .fenced_lock("c:fenced")
        .unwrap()
        .lock_and_get_token()
        .await
        .unwrap();
    assert_eq!((token, g.reenter().await.unwrap().token()), (1, 2));
    assert_eq!(
        client.fenced_lock("c:fenced").unwrap().get_token().await.unwrap(),
        Some(2)
    );
    let s = client.spin_lock("c:spin").unwrap().lock().await.unwrap();
    let n = client.non_reentrant_lock("c:nr").unwrap().lock().await.unwrap();
    let rw = client.read_write_lock("c:rw").unwrap();
    let w = rw.write_lock().lock().await.unwrap();
    let r = w.downgrade().await.unwrap();
    assert_eq!(r.unlock().await.unwrap(), Unlocked::Released);
    assert_eq!(n.unlock().await.unwrap(), Unlocked::Released);
    assert_eq!(s.unlock().await.unwrap(), Unlocked::Released);
    drop(g); // the re-entered fenced guard went with the temporary above; this releases the last
    eventually(Duration::from_secs(5), "every kind's lock is gone", || {
        let c = client.clone();
        async move {
            let mut gone = true;
            for k in ["c:fenced", "c:spin", "c:nr", "c:rw"] {
                gone &= !c.lock(k).unwrap().is_locked().await.unwrap();
            }
            gone
        }
    })
    .await;
}

/// A waiter that only an unlock message can wake within this bound: its client polls every
/// [`QUIET_POLL`] and the holder's TTL is the 30 s watchdog timeout.
const WAKE_BOUND: Duration = Duration::from_secs(3);
const QUIET_POLL: Duration = Duration::from_secs(60);

fn channel_of(name: &str) -> String {
    format!("redisson_lock__channel:{{{name}}}")
}

/// (classic, sharded): which subscriptions a waiter of a client in `mode` makes in a Redis 7
/// cluster, and which messages its unlocks publish (in a cluster without sharded pub/sub,
/// `sharded` false, Auto and Both are classic).
fn expected_kinds(mode: PublishMode, sharded: bool) -> (bool, bool) {
    match mode {
        PublishMode::Classic => (true, false),
        PublishMode::Auto | PublishMode::Both if !sharded => (true, false),
        PublishMode::Auto | PublishMode::Sharded => (false, true),
        _ => (true, true),
    }
}

/// Waits until `channel` has the subscriptions `mode` makes, then checks it has no other kind.
async fn wait_subscribed(cluster: &Cluster, channel: &str, mode: PublishMode) {
    let (classic, sharded) = expected_kinds(mode, cluster.sharded_pubsub().await);
    eventually(
        Duration::from_secs(10),
        &format!("{mode:?} waiter subscribed on {channel}"),
        || async {
            (!classic || cluster.numsub(channel, false).await >= 1)
                && (!sharded || cluster.numsub(channel, true).await >= 1)
        },
    )
    .await;
    assert_eq!(
        (
            cluster.numsub(channel, false).await >= 1,
            cluster.numsub(channel, true).await >= 1
        ),
        (classic, sharded),
        "{mode:?}: (classic, sharded) subscriptions on {channel}"
    );
}

/// A client built from the application's own cluster connection plus a pub/sub client resolves
/// its pub/sub mode once and subscribes in it: its waiters are woken by its unlock messages, in
/// every mode (before, such a client published with SPUBLISH but subscribed with classic
/// SUBSCRIBE on one node, so its waiters only woke by polling).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_from_a_cluster_connection_subscribes_in_its_publish_mode() {
    let cluster = Cluster::start(3, 0).await;
    let urls = cluster.urls();
    let sharded = cluster.sharded_pubsub().await;
    for mode in [
        PublishMode::Auto,
        PublishMode::Sharded,
        PublishMode::Classic,
        PublishMode::Both,
    ] {
        if mode == PublishMode::Sharded && !sharded {
            common::skip_unsupported(
                "a_client_from_a_cluster_connection_subscribes_in_its_publish_mode (PublishMode::Sharded)",
                "no sharded pub/sub (PUBSUB SHARDNUMSUB unknown)",
            );
            continue;
        }
        let user_conn = redis::cluster::ClusterClient::new(urls.clone())
            .unwrap()
            .get_async_connection()
            .await
            .unwrap();
        let client = Client::builder()
            .connection(user_conn)
            .pubsub_client(redis::Client::open(urls[0].as_str()).unwrap())
            .config(
                Config::default()
                    .with_publish_mode(mode)
                    .with_poll_interval(QUIET_POLL),
            )
            .build()
            .await
            .unwrap();
        // names spread over the masters: the pub/sub connection must reach the slot's node
        for i in 0..3 {
            let name = format!("own-conn:{mode:?}:{i}");
            let holder = client.lock(&name).unwrap().lock().await.unwrap();
            let wl = client.lock(&name).unwrap().with_owner(2);
            let w = tokio::spawn(async move {
                let g = wl.lock().await.unwrap();
                let at = Instant::now();
                g.unlock().await.unwrap();
                at
            });
            wait_subscribed(&cluster, &channel_of(&name), mode).await;
            let released = Instant::now();
            holder.unlock().await.unwrap();
            let acquired = tokio::time::timeout(WAKE_BOUND, w)
                .await
                .unwrap_or_else(|_| {
                    panic!("{mode:?}: the waiter on {name} was not woken by the unlock message")
                })
                .unwrap();
            assert!(acquired.duration_since(released) < WAKE_BOUND);
        }
        eventually(Duration::from_secs(5), "every channel left", || {
            let c = client.clone();
            async move { c.stats().channels == 0 }
        })
        .await;
    }
}

/// `PublishMode::Both` in a cluster: one unlock publishes on the classic and the sharded channel
/// (Redisson < 3.22 and ≥ 3.22 waiters both hear it), and a waiter listens on both, so either
/// kind of unlock message wakes it. Outside a cluster it is classic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_mode_publishes_and_listens_on_classic_and_sharded_channels() {
    let cluster = Cluster::start(3, 0).await;
    if !cluster.sharded_pubsub().await {
        // (Both then is classic: what the other tests check)
        common::skip_unsupported(
            "both_mode_publishes_and_listens_on_classic_and_sharded_channels",
            "no sharded pub/sub (PUBSUB SHARDNUMSUB unknown)",
        );
        return;
    }
    let config = Config::default()
        .with_publish_mode(PublishMode::Both)
        .with_poll_interval(QUIET_POLL);
    let client = Client::builder()
        .cluster(cluster.urls())
        .config(config.clone())
        .build()
        .await
        .unwrap();
    assert!(format!("{client:?}").contains("\"BOTH\""), "{client:?}");

    // a peer that listens both ways (a classic Redisson and a sharded one) gets both messages
    let name = "both:publish";
    let channel = channel_of(name);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut listener = redis::cluster::ClusterClientBuilder::new(cluster.urls())
        .use_protocol(redis::ProtocolVersion::RESP3)
        .push_sender(tx)
        .build()
        .unwrap()
        .get_async_connection()
        .await
        .unwrap();
    listener.subscribe(&channel).await.unwrap();
    listener.ssubscribe(&channel).await.unwrap();
    let g = client.lock(name).unwrap().lock().await.unwrap();
    g.unlock().await.unwrap();
    let mut got = (false, false);
    tokio::time::timeout(WAKE_BOUND, async {
        while got != (true, true) {
            let push = rx.recv().await.expect("the listener's push channel is open");
            let is_ours = push
                .data
                .first()
                .is_some_and(|c| *c == redis::Value::BulkString(channel.clone().into_bytes()))
                && push.data.get(1) == Some(&redis::Value::BulkString(b"0".to_vec()));
            match push.kind {
                redis::PushKind::Message if is_ours => got.0 = true,
                redis::PushKind::SMessage if is_ours => got.1 = true,
                _ => {}
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("(classic, sharded) messages received: {got:?}"));

    // an unlock by a classic peer (PUBLISH) and by a sharded one (SPUBLISH) each wake a waiter
    let mut raw = redis::cluster::ClusterClient::new(cluster.urls())
        .unwrap()
        .get_async_connection()
        .await
        .unwrap();
    for publish in ["PUBLISH", "SPUBLISH"] {
        let name = format!("both:woken-by:{publish}");
        let channel = channel_of(&name);
        // a foreign holder, as a Redisson client writes it
        let field = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:1";
        let _: () = redis::pipe()
            .atomic()
            .hset(&name, field, 1)
            .pexpire(&name, 30_000)
            .query_async(&mut raw)
            .await
            .unwrap();
        let wl = client.lock(&name).unwrap().with_owner(7);
        let w = tokio::spawn(async move {
            let g = wl.lock().await.unwrap();
            let at = Instant::now();
            g.unlock().await.unwrap();
            at
        });
        wait_subscribed(&cluster, &channel, PublishMode::Both).await;
        let _: i64 = raw.del(&name).await.unwrap();
        let released = Instant::now();
        let _: i64 = redis::cmd(publish)
            .arg(&channel)
            .arg("0")
            .query_async(&mut raw)
            .await
            .unwrap();
        let acquired = tokio::time::timeout(WAKE_BOUND, w)
            .await
            .unwrap_or_else(|_| panic!("a {publish} of `0` did not wake the Both waiter"))
            .unwrap();
        assert!(acquired.duration_since(released) < WAKE_BOUND);
    }

    // outside a cluster, Both is classic pub/sub (as every Redisson outside cluster mode)
    let single = RedisServer::start();
    let c = Client::builder()
        .url(single.url())
        .config(config)
        .build()
        .await
        .unwrap();
    assert!(format!("{c:?}").contains("publish: \"PUBLISH\""), "{c:?}");
    let g = c.lock("single").unwrap().lock().await.unwrap();
    let wl = c.lock("single").unwrap().with_owner(2);
    let w = tokio::spawn(async move { wl.lock().await.unwrap().unlock().await.unwrap() });
    eventually(Duration::from_secs(5), "the waiter subscribed", || {
        let c = c.clone();
        async move { c.stats().waiters == 1 }
    })
    .await;
    g.unlock().await.unwrap();
    tokio::time::timeout(WAKE_BOUND, w).await.unwrap().unwrap();
}

/// Without the `tls-rustls` feature a `rediss://` URL is refused before any connection, naming
/// the feature to turn on. (Run by `cargo test --test connections` without `--all-features`.)
#[cfg(not(feature = "tls-rustls"))]
#[tokio::test]
async fn rediss_without_the_tls_feature_names_the_feature() {
    for url in ["rediss://:secret@127.0.0.1:1/", "valkeys://127.0.0.1:1/"] {
        match Client::connect(url).await {
            Err(redisson_lock::Error::InvalidArgument(m)) => {
                assert!(m.contains("tls-rustls"), "{m}");
                assert!(!m.contains("secret"), "never the password: {m}");
            }
            other => panic!("{url}: {other:?}"),
        }
    }
}
