//! Knowing a lock is lost within about one round trip (`LossDetection::Tracking`, the
//! default, on a single server): for every cause Redis can report, every kind's `lost()` fires
//! long before the next renewal could notice (the watchdog timeout here is 30 s, so renewal
//! would take up to 10 s); a restart is noticed within one reconnect; and nothing that leaves
//! the hold in place is ever reported (renewals, re-entries, partial releases, another reader
//! joining, unrelated keys). With `LossDetection::Renewal` a deletion waits for the renewal.

mod common;

use std::time::{Duration, Instant};

use common::kinds::{self, KINDS};
use common::{init_tracing, RedisServer};
use redisson_lock::{AnyGuard, Config, LossDetection, LostReason};

/// Far below one renewal period (10 s): only the loss watch can be this fast.
const SIGNAL: Duration = Duration::from_secs(2);

fn config() -> Config {
    Config::default()
        .lock_watchdog_timeout(Duration::from_secs(30))
        .command_timeout(Duration::from_secs(1))
}

/// What an operator or another service does to a held lock's key.
#[derive(Clone, Copy, Debug)]
enum Cause {
    Del,
    Unlink,
    FlushAll,
    FlushDb,
    /// Another Redis type written under the lock's name.
    Overwrite,
    /// The key expires (a TTL cut short, as after a stall past the lease margin).
    Expire,
    /// Another client's force-unlock (Redisson's `forceUnlock()` sends the same script).
    ForceUnlock,
}

const CAUSES: [Cause; 7] = [
    Cause::Del,
    Cause::Unlink,
    Cause::FlushAll,
    Cause::FlushDb,
    Cause::Overwrite,
    Cause::Expire,
    Cause::ForceUnlock,
];

async fn apply(
    cause: Cause,
    raw: &mut redis::aio::MultiplexedConnection,
    other: &redisson_lock::Client,
    kind: &str,
    name: &str,
    key: &str,
) {
    let cmd = match cause {
        Cause::Del => redis::cmd("DEL").arg(key).clone(),
        Cause::Unlink => redis::cmd("UNLINK").arg(key).clone(),
        Cause::FlushAll => redis::cmd("FLUSHALL").clone(),
        Cause::FlushDb => redis::cmd("FLUSHDB").clone(),
        Cause::Overwrite => redis::cmd("SET").arg(key).arg("not a lock").clone(),
        Cause::Expire => redis::cmd("PEXPIRE").arg(key).arg(1).clone(),
        Cause::ForceUnlock => {
            let forced = kinds::open(kind, other, name)
                .force_unlock()
                .await
                .expect("force unlock");
            assert!(forced, "{kind}: the force-unlock found the lock");
            return;
        }
    };
    let _: redis::Value = cmd.query_async(raw).await.expect("the cause");
}

/// The time until `g.lost()` fires, if it does within `bound`.
async fn signalled(g: &dyn AnyGuard, bound: Duration) -> Option<(LostReason, Duration)> {
    let t0 = Instant::now();
    let why = tokio::time::timeout(bound, g.lost()).await.ok()?;
    Some((why, t0.elapsed()))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cause_redis_reports_is_signalled_within_a_round_trip() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(config()).await;
    let other = s.client(config()).await;
    let mut raw = s.conn().await;
    let mut latencies = Vec::new();
    for cause in CAUSES {
        for kind in KINDS {
            let name = format!("loss:{cause:?}:{kind}");
            let lock = kinds::open(kind, &c, &name);
            let g = lock.lock().await.unwrap();
            let key = g.key().to_owned();
            apply(cause, &mut raw, &other, kind, &name, &key).await;
            let (why, after) = signalled(&*g, SIGNAL)
                .await
                .unwrap_or_else(|| panic!("{kind}, {cause:?}: lost() did not fire within {SIGNAL:?}"));
            assert_eq!(why, LostReason::OwnerGone, "{kind}, {cause:?}");
            assert!(!g.is_held(), "{kind}, {cause:?}");
            latencies.push(after);
            // the key may hold another type now: clear it for the next case
            let _: () = redis::cmd("DEL").arg(&key).query_async(&mut raw).await.unwrap();
        }
    }
    latencies.sort();
    eprintln!(
        "loss to lost(): {} cases, p50 {:?}, p99 {:?}, max {:?}",
        latencies.len(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies[latencies.len() - 1]
    );
    c.shutdown().await.unwrap();
    other.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_that_loses_the_holds_is_signalled_within_one_reconnect() {
    init_tracing();
    let mut s = RedisServer::start();
    let c = s.client(config()).await;
    let mut guards = Vec::new();
    for kind in KINDS {
        let name = format!("restart:{kind}");
        guards.push((kind, kinds::open(kind, &c, &name).lock().await.unwrap()));
    }
    let t0 = Instant::now();
    s.restart(); // no persistence: every hold is gone
    for (kind, g) in &guards {
        let why = tokio::time::timeout(Duration::from_secs(5), g.lost())
            .await
            .unwrap_or_else(|_| panic!("{kind}: lost() did not fire within 5 s of the restart"));
        assert_eq!(why, LostReason::OwnerGone, "{kind}");
    }
    eprintln!("restart to every lost(): {:?}", t0.elapsed());
    drop(guards);
    let _ = c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_that_leaves_the_hold_in_place_is_reported() {
    init_tracing();
    let s = RedisServer::start();
    // renewals every 300 ms: several during the test, each a change of the key
    let fast = config().lock_watchdog_timeout(Duration::from_millis(900));
    let c = s.client(fast.clone()).await;
    let other = s.client(fast).await;
    let mut raw = s.conn().await;
    let mut held = Vec::new();
    for kind in KINDS {
        let name = format!("calm:{kind}");
        let lock = kinds::open(kind, &c, &name);
        let g = lock.lock().await.unwrap();
        // a re-entry and its release (re-entrant kinds; the others refuse, which changes nothing)
        if let Ok(Some(again)) = lock.with_owner(g.owner()).try_lock_for(Duration::ZERO).await {
            again.unlock().await.unwrap();
        }
        // another reader joins a read lock (a write of the same key by another client)
        if kind == "read" {
            let joiner = kinds::open(kind, &other, &name).lock().await.unwrap();
            joiner.unlock().await.unwrap();
        }
        // an unrelated key
        let _: () = redis::cmd("SET")
            .arg(format!("unrelated:{kind}"))
            .arg("x")
            .query_async(&mut raw)
            .await
            .unwrap();
        held.push((kind, g));
    }
    // several renewals of every hold
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for (kind, g) in &held {
        assert!(g.is_held(), "{kind}: a hold still in Redis was reported lost");
        assert!(
            tokio::time::timeout(Duration::from_millis(50), g.lost())
                .await
                .is_err(),
            "{kind}: lost() fired for a hold still in Redis"
        );
    }
    // and the watch is really looking: a deletion now is still reported at once
    let (kind, g) = &held[0];
    let _: () = redis::cmd("DEL")
        .arg(g.key())
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(
        signalled(&**g, SIGNAL).await.is_some(),
        "{kind}: a deletion after the calm changes was not reported"
    );
    for (_, g) in held.into_iter().skip(1) {
        g.unlock().await.unwrap();
    }
    c.shutdown().await.unwrap();
    other.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_renewal_only_a_deletion_waits_for_the_renewal() {
    init_tracing();
    let s = RedisServer::start();
    let c = s
        .client(
            config()
                .lock_watchdog_timeout(Duration::from_secs(3))
                .loss_detection(LossDetection::Renewal),
        )
        .await;
    let mut raw = s.conn().await;
    let g = kinds::open("lock", &c, "renewal-only").lock().await.unwrap();
    let _: () = redis::cmd("DEL")
        .arg(g.key())
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(300), g.lost())
            .await
            .is_err(),
        "with renewal only, a deletion is not known before the next renewal"
    );
    // the next renewal (1 s period) finds the field gone
    let (why, _) = signalled(&*g, Duration::from_secs(3))
        .await
        .expect("the renewal reports the deletion");
    assert_eq!(why, LostReason::OwnerGone);
    c.shutdown().await.unwrap();
}
