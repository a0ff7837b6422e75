//! Through a real cluster proxy: one address in front of a Redis Cluster of several masters,
//! which refuses a script over several hash slots. `scripts/proxy-suite` starts the cluster
//! (redis-server processes joined by `redis-cli --cluster create`) and the proxy on loopback
//! ports, and runs these tests with
//!
//! - `REDISSON_PROXY_URL`: the proxy's `redis://` URL (the only address the lock clients get);
//! - `REDISSON_PROXY_NODES` (optional): the masters' URLs, comma-separated, for the checks that
//!   read every node (`KEYS`, which a proxy may not pass on);
//! - `REDISSON_PROXY_SKIP_SETINFO` (optional): the lock clients are built from a redis-rs
//!   client that does not send `CLIENT SETINFO` at connect (a proxy that stalls on it), and the
//!   test of a client built from the URL alone is skipped.
//!
//! Without `REDISSON_PROXY_URL` there is nothing to test: every test is `#[ignore]`d, and one
//! run with `--ignored` but without the variable says so and passes.
//!
//! Every lock kind and synchronizer must work there as on a plain server: holds on many slots
//! survive renewal rounds past a short watchdog, re-enter, release, wake their waiters, report a
//! loss; the batched calls (renewal rounds, the latch janitor's `DEL`, the check for locks gone
//! without a message) go one call per slot.

mod common;

use common::kept::Kept;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::kinds::{self, KINDS};
use common::{eventually, init_tracing, key_exists, pttl};
use redisson_lock::{Client, Config, Error, LostReason, OwnerId, Unlocked};

/// A short watchdog: a renewal every second, holds gone 3 s after the last one.
const WATCHDOG: Duration = Duration::from_secs(3);
/// Far below the subscribed fallback poll (30 s): only a message or the gone-key check is
/// this fast.
const WOKEN: Duration = Duration::from_secs(5);

/// The proxy under test and the masters behind it.
struct Proxy {
    url: String,
    nodes: Vec<String>,
    /// A prefix of this run's key names: the same cluster may serve several runs.
    run: String,
}

impl Proxy {
    /// The proxy named by the environment, or `None` (said on stderr) when there is none.
    fn from_env(test: &str) -> Option<Proxy> {
        let Some(url) = std::env::var("REDISSON_PROXY_URL").ok().filter(|u| !u.is_empty()) else {
            eprintln!("{test}: skipped: REDISSON_PROXY_URL is not set (scripts/proxy-suite sets it)");
            return None;
        };
        let nodes = std::env::var("REDISSON_PROXY_NODES")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect();
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
        Some(Proxy {
            url,
            nodes,
            run: format!("px{}", nanos % 1_000_000_000_000),
        })
    }

    /// `what` with this run's prefix.
    fn name(&self, what: &str) -> String {
        format!("{}:{what}", self.run)
    }

    /// A redis-rs client of the proxy's URL; without redis-rs's `CLIENT SETINFO` calls at
    /// connect when `REDISSON_PROXY_SKIP_SETINFO` is set (a proxy that mishandles them).
    fn redis_client(&self) -> redis::Client {
        let mut info = redis::IntoConnectionInfo::into_connection_info(self.url.as_str()).unwrap();
        if std::env::var_os("REDISSON_PROXY_SKIP_SETINFO").is_some() {
            let settings = info.redis_settings().clone().set_skip_set_lib_name();
            info = info.set_redis_settings(settings);
        }
        redis::Client::open(info).unwrap()
    }

    async fn client(&self, config: Config) -> Client {
        Client::builder()
            .redis_client(self.redis_client())
            .config(config)
            .build()
            .await
            .expect("connect a lock client through the proxy")
    }

    /// A raw connection through the proxy.
    async fn conn(&self) -> redis::aio::MultiplexedConnection {
        self.redis_client()
            .get_multiplexed_async_connection()
            .await
            .expect("connect to the proxy")
    }

    /// Keys matching `pattern` on every master behind the proxy (`None` without
    /// `REDISSON_PROXY_NODES`).
    async fn keys_on_nodes(&self, pattern: &str) -> Option<Vec<String>> {
        if self.nodes.is_empty() {
            return None;
        }
        let mut all = Vec::new();
        for n in &self.nodes {
            let mut c = redis::Client::open(n.as_str())
                .unwrap()
                .get_multiplexed_async_connection()
                .await
                .expect("connect to a master behind the proxy");
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(pattern)
                .query_async(&mut c)
                .await
                .expect("KEYS on a master");
            all.extend(keys);
        }
        Some(all)
    }
}

fn config() -> Config {
    Config::default().with_lock_watchdog_timeout(WATCHDOG)
}

/// Waiters that only an unlock message wakes within [`WOKEN`] (of holds with the default 30 s
/// watchdog: a subscribed waiter sleeps at most the holder's TTL): the check for gone locks and
/// the subscribed fallback poll are 30 s apart.
fn messages_only() -> Config {
    Config::default()
        .with_poll_interval(Duration::from_secs(30))
        .with_subscribed_poll_interval(Duration::from_secs(30))
}

/// What the proxy answers to the commands the client sends, printed for the record (a test
/// run with `--nocapture` shows them).
async fn answer(raw: &mut redis::aio::MultiplexedConnection, args: &[&str]) -> String {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    let reply: redis::RedisResult<redis::Value> =
        tokio::time::timeout(Duration::from_secs(2), cmd.query_async(raw))
            .await
            .unwrap_or_else(|_| Err(redis::RedisError::from((redis::ErrorKind::Io, "no reply in 2 s"))));
    let text = match reply {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("error {:?}: {e}", e.code()),
    };
    eprintln!("{}: {text}", args.join(" "));
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster proxy: scripts/proxy-suite sets REDISSON_PROXY_URL"]
async fn what_the_proxy_answers_to_the_connect_probe() {
    init_tracing();
    let Some(p) = Proxy::from_env("what_the_proxy_answers_to_the_connect_probe") else {
        return;
    };
    let mut raw = p.conn().await;
    // the library's probe at connect (src/slots.rs): two keys of different slots
    let probe: redis::RedisResult<redis::Value> = redis::cmd("EVALSHA")
        .arg("0000000000000000000000000000000000000000")
        .arg(2)
        .arg("test1")
        .arg("test2")
        .query_async(&mut raw)
        .await;
    let e = probe.expect_err("a script over two slots is refused");
    eprintln!("probe answered: code {:?}: {e}", e.code());
    assert_eq!(e.code(), Some("CROSSSLOT"), "{e}");
    // one slot: the script is looked up (not there)
    let one: redis::RedisResult<redis::Value> = redis::cmd("EVALSHA")
        .arg("0000000000000000000000000000000000000000")
        .arg(1)
        .arg("test1")
        .query_async(&mut raw)
        .await;
    assert_eq!(one.unwrap_err().code(), Some("NOSCRIPT"));
    // for the record: the other commands the client sends, as this proxy answers them
    for args in [
        &["CLIENT", "SETINFO", "LIB-NAME", "redis-rs"][..],
        &["CLIENT", "TRACKING", "ON"],
        &["PUBSUB", "NUMSUB", "x"],
        &["PUBSUB", "SHARDNUMSUB", "x"],
        &["SPUBLISH", "x", "0"],
        &["WAIT", "0", "0"],
    ] {
        answer(&mut raw, args).await;
    }
    // what the pub/sub connection is told when it asks for RESP3 (a map when it switched, an
    // error when the proxy has no RESP3), on a connection of its own: it may switch
    let mut fresh = p.conn().await;
    answer(&mut fresh, &["HELLO", "3"]).await;
}

/// A client built from the proxy's URL alone, as an application would build it, connects and
/// takes a lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster proxy: scripts/proxy-suite sets REDISSON_PROXY_URL"]
async fn a_client_of_the_url_alone_connects() {
    init_tracing();
    let Some(p) = Proxy::from_env("a_client_of_the_url_alone_connects") else {
        return;
    };
    if std::env::var_os("REDISSON_PROXY_SKIP_SETINFO").is_some() {
        eprintln!("a_client_of_the_url_alone_connects: skipped: REDISSON_PROXY_SKIP_SETINFO is set (this proxy stalls on redis-rs's connect-time CLIENT SETINFO pipeline)");
        return;
    }
    let c = Client::builder()
        .url(p.url.clone())
        .config(Config::default().with_connect_timeout(Duration::from_secs(5)))
        .build()
        .await
        .expect("a client of the URL alone connects");
    let g = c.lock(&p.name("url")).unwrap().lock().await.unwrap();
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster proxy: scripts/proxy-suite sets REDISSON_PROXY_URL"]
async fn every_lock_kind_keeps_its_holds_through_renewal_rounds() {
    init_tracing();
    let Some(p) = Proxy::from_env("every_lock_kind_keeps_its_holds_through_renewal_rounds") else {
        return;
    };
    let mut raw = p.conn().await;
    let c = p.client(config()).await;
    let waiter = p.client(config()).await;
    let name = |kind: &str, i: usize| p.name(&format!("{kind}:{i}"));

    // five holds of every kind, on as many slots, in watchdog mode
    let mut held = Vec::new();
    for kind in KINDS {
        for i in 0..5 {
            let lock = kinds::open(kind, &c, &name(kind, i));
            held.push((kind, i, lock.lock().await.unwrap()));
        }
    }
    // past the watchdog timeout: only renewal rounds (at least two) keep them
    tokio::time::sleep(WATCHDOG + WATCHDOG / 2).await;
    for (kind, i, g) in &held {
        assert!(g.is_held(), "{kind} {i}: {:?}", g.state());
        let ttl = pttl(&mut raw, &name(kind, *i)).await;
        assert!(ttl > 0, "{kind} {i}: PTTL {ttl}");
    }

    // a waiter on each is woken by the release (a rival for the read lock: the write lock)
    let mut waits = Vec::new();
    for (kind, i, _) in &held {
        if *i != 0 {
            continue;
        }
        let rival = kinds::rival(kind, &waiter, &name(kind, 0));
        waits.push((
            *kind,
            tokio::spawn(async move {
                let g = rival.try_lock_for(Duration::from_secs(60)).await?;
                Ok::<_, Error>((g.map(|g| g.forget()).is_some(), Instant::now()))
            }),
        ));
    }
    eventually(Duration::from_secs(5), "every waiter is subscribed", || {
        let waiter = waiter.clone();
        // (the spin lock's waiter polls: it does not subscribe)
        async move { waiter.stats().waiters >= KINDS.len() - 1 }
    })
    .await;
    // releases of many slots at once: the janitor deletes their latches in one batch per slot
    let released = Instant::now();
    let results = futures::future::join_all(
        held.into_iter()
            .map(|(kind, i, g)| async move { (kind, i, g.unlock().await) }),
    )
    .await;
    for (kind, i, r) in results {
        assert_eq!(r.unwrap(), Unlocked::Released, "{kind} {i}");
    }
    for (kind, w) in waits {
        let (got, at) = w.await.unwrap().unwrap();
        assert!(got, "{kind}: the waiter got the lock");
        assert!(at - released < WOKEN, "{kind}: woken after {:?}", at - released);
    }
    if p.nodes.is_empty() {
        eprintln!("REDISSON_PROXY_NODES not set: the latches' deletion is not checked");
    } else {
        let pattern = format!("redisson_unlock_latch:{{{}:*", p.run);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = p.keys_on_nodes(&pattern).await.unwrap();
            if left.is_empty() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the janitor deleted every latch (they would live for seconds more): {left:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    waiter.shutdown().await.unwrap();
    c.shutdown().await.unwrap();
}

/// The unlock message reaches the waiters through the proxy's pub/sub: with the check for
/// gone locks and the fallback poll 30 s away, only the message wakes them this soon.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster proxy: scripts/proxy-suite sets REDISSON_PROXY_URL"]
async fn waiters_are_woken_by_the_unlock_message() {
    init_tracing();
    let Some(p) = Proxy::from_env("waiters_are_woken_by_the_unlock_message") else {
        return;
    };
    // holds with a 30 s TTL, so that no waiter wakes at its end
    let c = p.client(Config::default()).await;
    let waiter = p.client(messages_only()).await;
    let mut late = Vec::new();
    for kind in KINDS {
        if kind == "spin" {
            // its waiters poll: nothing to wake
            continue;
        }
        let key = p.name(&format!("{kind}:msg"));
        let g = kinds::open(kind, &c, &key).lock().await.unwrap();
        let rival = kinds::rival(kind, &waiter, &key);
        let wait = tokio::spawn(async move {
            let g = rival.try_lock_for(Duration::from_secs(60)).await?;
            Ok::<_, Error>((g.map(|g| g.forget()).is_some(), Instant::now()))
        });
        eventually(Duration::from_secs(5), "the waiter is subscribed", || {
            let waiter = waiter.clone();
            async move { waiter.stats().waiters >= 1 }
        })
        .await;
        let released = Instant::now();
        assert_eq!(g.unlock().await.unwrap(), Unlocked::Released, "{kind}");
        let (got, at) = wait.await.unwrap().unwrap();
        assert!(got, "{kind}: the waiter got the lock");
        if at - released >= WOKEN {
            late.push(format!("{kind}: woken after {:?}", at - released));
        }
    }
    assert!(late.is_empty(), "not woken by the message: {late:?}");
    waiter.shutdown().await.unwrap();
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster proxy: scripts/proxy-suite sets REDISSON_PROXY_URL"]
async fn re_entry_and_the_loss_signal_work_for_every_kind() {
    init_tracing();
    let Some(p) = Proxy::from_env("re_entry_and_the_loss_signal_work_for_every_kind") else {
        return;
    };
    let mut raw = p.conn().await;
    let c = p.client(config()).await;
    for kind in KINDS {
        let key = p.name(&format!("{kind}:7"));
        let lock = kinds::open(kind, &c, &key).with_owner(OwnerId::from(7));
        let g = lock.lock().await.unwrap();
        let again = lock.try_lock_for(Duration::ZERO).await;
        if kind.starts_with("non_reentrant") {
            assert!(
                matches!(again, Err(Error::AlreadyHeld { .. })),
                "{kind}: {again:?}"
            );
        } else {
            let inner = again.unwrap().expect("a re-entry");
            assert_eq!(lock.hold_count().await.unwrap(), 2, "{kind}");
            assert_eq!(inner.unlock().await.unwrap(), Unlocked::Partial, "{kind}");
        }
        // deleted behind the holder's back: its guard learns it
        let _: () = redis::cmd("DEL").arg(&key).query_async(&mut raw).await.unwrap();
        let reason = tokio::time::timeout(WATCHDOG, g.lost())
            .await
            .unwrap_or_else(|_| panic!("{kind}: no loss signal"));
        assert_eq!(reason, LostReason::OwnerGone, "{kind}");
        assert!(!key_exists(&mut raw, &key).await, "{kind}: not re-created");
    }
    c.shutdown().await.unwrap();
}

/// Waiters of locks on several slots whose keys are deleted without a message: the batched
/// check for gone locks wakes them within a poll interval (1 s), not their holders' TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster proxy: scripts/proxy-suite sets REDISSON_PROXY_URL"]
async fn waiters_of_locks_deleted_without_a_message_are_woken() {
    init_tracing();
    let Some(p) = Proxy::from_env("waiters_of_locks_deleted_without_a_message_are_woken") else {
        return;
    };
    let mut raw = p.conn().await;
    let holder = p.client(Config::default()).await;
    let c = p.client(Config::default()).await;
    let names: Vec<String> = (0..6).map(|i| p.name(&format!("gone:{i}"))).collect();
    for n in &names {
        holder
            .lock(n)
            .unwrap()
            .lock_with_lease(Duration::from_secs(120))
            .await
            .unwrap()
            .forget();
    }
    let waits: Vec<_> = names
        .iter()
        .map(|n| {
            let lock = c.lock(n).unwrap();
            tokio::spawn(async move { lock.try_lock_for(Duration::from_secs(60)).await })
        })
        .collect();
    eventually(Duration::from_secs(5), "every waiter is subscribed", || {
        let c = c.clone();
        async move { c.stats().watched_keys >= 6 }
    })
    .await;
    let deleted = Instant::now();
    for n in &names {
        let _: () = redis::cmd("DEL").arg(n).query_async(&mut raw).await.unwrap();
    }
    for w in waits {
        let g = w.await.unwrap().unwrap().expect("the lock");
        assert!(deleted.elapsed() < WOKEN, "woken after {:?}", deleted.elapsed());
        g.unlock().await.unwrap();
    }
    c.shutdown().await.unwrap();
    holder.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster proxy: scripts/proxy-suite sets REDISSON_PROXY_URL"]
async fn the_synchronizers_work_there_too() {
    init_tracing();
    let Some(p) = Proxy::from_env("the_synchronizers_work_there_too") else {
        return;
    };
    let c = p.client(Config::default()).await;
    let other = p.client(Config::default()).await;

    let sem_name = p.name("sem");
    let sem = c.semaphore(&sem_name).unwrap();
    assert!(sem.try_set_permits(1).await.unwrap());
    sem.acquire(1).await.kept().unwrap();
    let waiting = {
        let sem = other.semaphore(&sem_name).unwrap();
        tokio::spawn(async move { sem.try_acquire_for(1, Duration::from_secs(60)).await.kept() })
    };
    eventually(
        Duration::from_secs(5),
        "the semaphore waiter is subscribed",
        || {
            let other = other.clone();
            async move { other.stats().waiters >= 1 }
        },
    )
    .await;
    let released = Instant::now();
    sem.release(1).await.unwrap();
    assert!(waiting.await.unwrap().unwrap(), "the waiter got the permit");
    assert!(released.elapsed() < WOKEN, "woken after {:?}", released.elapsed());

    let pes_name = p.name("pes");
    let pes = c.permit_expirable_semaphore(&pes_name).unwrap();
    assert!(pes.try_set_permits(2).await.unwrap());
    let a = pes.acquire().await.kept().unwrap();
    pes.acquire_with_lease(Duration::from_millis(300))
        .await
        .kept()
        .unwrap();
    let third = {
        let pes = other.permit_expirable_semaphore(&pes_name).unwrap();
        tokio::spawn(async move { pes.try_acquire_for(Duration::from_secs(60), None).await.kept() })
    };
    // the leased permit comes back when its lease ends
    let started = Instant::now();
    assert!(
        third.await.unwrap().unwrap().is_some(),
        "a permit after the lease ended"
    );
    assert!(started.elapsed() < WOKEN, "after {:?}", started.elapsed());
    pes.release(a).await.unwrap();

    let latch_name = p.name("latch");
    let latch = c.count_down_latch(&latch_name).unwrap();
    assert!(latch.try_set_count(2).await.unwrap());
    let waiting = {
        let latch = other.count_down_latch(&latch_name).unwrap();
        tokio::spawn(async move { latch.wait_for(Duration::from_secs(60)).await })
    };
    latch.count_down().await.unwrap();
    let opened = Instant::now();
    latch.count_down().await.unwrap();
    assert!(waiting.await.unwrap().unwrap(), "the latch opened");
    assert!(opened.elapsed() < WOKEN, "woken after {:?}", opened.elapsed());
    other.shutdown().await.unwrap();
    c.shutdown().await.unwrap();
}
