//! Knowing a lock is lost within about one round trip (`LossDetection::Tracking`, the
//! default, on a single server): for every cause Redis can report, every kind's `lost()` fires
//! long before the next renewal could notice (the watchdog timeout here is 30 s, so renewal
//! would take up to 10 s); a restart is noticed within one reconnect; and nothing that leaves
//! the hold in place is ever reported (renewals, re-entries, partial releases, another reader
//! joining, unrelated keys). With `LossDetection::Renewal` a deletion waits for the renewal.
//! The same holds across the fence to Java (real Redisson in a JVM, compat-tests harness): its
//! `forceUnlock()` is reported, its readers joining and leaving are not; and for the blocking
//! facade's guards and for a multi-lock whose member is lost.

mod common;

use std::time::{Duration, Instant};

use common::java::{self, Jvm};
use common::kinds::{self, BlockingLock, KINDS};
use common::{init_tracing, RedisServer};
use redisson_lock::{AnyGuard, Config, LossDetection, LostReason, Member, RMultiLock};

/// Far below one renewal period (10 s): only the loss watch can be this fast.
const SIGNAL: Duration = Duration::from_secs(2);

fn config() -> Config {
    Config::default()
        .with_lock_watchdog_timeout(Duration::from_secs(30))
        .with_command_timeout(Duration::from_secs(1))
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
    let fast = config().with_lock_watchdog_timeout(Duration::from_millis(900));
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

/// `HEXISTS`, `PTTL` and `PEXPIRE` calls so far (INFO commandstats: top-level and inside
/// scripts), and the keys in the server's tracking table, read by one command (one moment).
async fn counts(raw: &mut redis::aio::MultiplexedConnection) -> (u64, u64, u64, u64) {
    let info = common::info_sections(raw, &["commandstats", "stats"]).await;
    let calls = |cmd: &str| {
        common::faults::info_field(&info, &format!("cmdstat_{cmd}"))
            .and_then(|v| v.split(',').find_map(|p| p.strip_prefix("calls=")))
            .map_or(0, |n| n.parse().unwrap())
    };
    let tracked = common::faults::info_field(&info, "tracking_total_keys").map_or(0, |n| n.parse().unwrap());
    (calls("hexists"), calls("pttl"), calls("pexpire"), tracked)
}

/// Waits (up to 20 s) until `cond` holds for the counts.
async fn await_counts(
    raw: &mut redis::aio::MultiplexedConnection,
    what: &str,
    cond: impl Fn((u64, u64, u64, u64)) -> bool,
) -> (u64, u64, u64, u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let c = counts(raw).await;
        if cond(c) {
            return c;
        }
        assert!(Instant::now() < deadline, "{what}: still {c:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A loss right after the watch first read a new hold (the key just tracked) is read at once,
/// and so is a TTL cut short when it runs out, even in a key's quiet time: only a key reported
/// again soon after a read that found it in place waits for that quiet. Holds one after another,
/// each deleted, or given a 1 ms TTL right after a false alarm, once its key is tracked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loss_right_after_a_holds_first_read_is_not_deferred() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(config()).await;
    let mut raw = s.conn().await;
    let (mut deleted, mut expired) = (Vec::new(), Vec::new());
    for i in 0..10 {
        // (each earlier key stays in the table: the watch's read that found it gone tracks it)
        let (_, _, _, before) = counts(&mut raw).await;
        let g = c.lock(&format!("fresh:{i}")).unwrap().lock().await.unwrap();
        await_counts(&mut raw, "the new hold's key tracked", |(_, _, _, tracked)| {
            tracked > before
        })
        .await;
        if i % 2 == 0 {
            let _: () = redis::cmd("DEL")
                .arg(g.key())
                .query_async(&mut raw)
                .await
                .unwrap();
        } else {
            // a false alarm first (the TTL raised: the hold stays), read; then the TTL cut to
            // 1 ms, reported within the quiet that second report starts: the read when the TTL
            // runs out is due then all the same
            // (a read a report asks for reads the TTL too: `PTTL`)
            let (_, ttl_reads, _, _) = counts(&mut raw).await;
            let _: () = redis::cmd("PEXPIRE")
                .arg(g.key())
                .arg(60_000)
                .query_async(&mut raw)
                .await
                .unwrap();
            await_counts(&mut raw, "the false alarm read", |(_, t, _, _)| t > ttl_reads).await;
            let _: () = redis::cmd("PEXPIRE")
                .arg(g.key())
                .arg(1)
                .query_async(&mut raw)
                .await
                .unwrap();
        }
        let (why, after) = signalled(&g, SIGNAL).await.expect("lost() fires");
        assert_eq!(why, LostReason::OwnerGone);
        if i % 2 == 0 { &mut deleted } else { &mut expired }.push(after);
    }
    // a deferred read comes after the 100 ms quiet; an immediate one within a round trip (an
    // expiry within a ms or two more): the median of five, so a loaded machine does not decide
    for (what, mut latencies) in [("DEL", deleted), ("PEXPIRE 1", expired)] {
        latencies.sort();
        assert!(
            latencies[2] < Duration::from_millis(50),
            "{what} to lost(): {latencies:?}"
        );
    }
    c.shutdown().await.unwrap();
}

/// Redis pushes each renewal as a change of the key (renewals go on the command connection),
/// which drops the key from the server's tracking table until the watch reads the hold again:
/// after several renewal rounds every held key is tracked again, and a deletion right after a
/// renewal is still reported at once, long before the next renewal could notice. For both
/// renewal scripts: the exclusive holds' and the read holds'.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_renewals_every_key_is_tracked_again() {
    init_tracing();
    const N: u64 = 20;
    for kind in ["lock", "read"] {
        // a server per kind: the counts are the server's
        let s = RedisServer::start();
        // a renewal round every second
        let c = s
            .client(config().with_lock_watchdog_timeout(Duration::from_secs(3)))
            .await;
        let mut raw = s.conn().await;
        let mut guards = Vec::new();
        for i in 0..N {
            guards.push(
                kinds::open(kind, &c, &format!("renewed:{kind}:{i}"))
                    .lock()
                    .await
                    .unwrap(),
            );
        }
        // the watch read every new hold, so each key is tracked
        let before = await_counts(&mut raw, "every held key tracked", |(_, _, _, t)| t == N).await;
        // two renewal rounds (each runs one PEXPIRE per held key, a read hold's also one of its
        // timeout key), then every key tracked again
        let round = if kind == "read" { 2 * N } else { N };
        let renewed = await_counts(&mut raw, "two renewal rounds", |(_, _, p, _)| {
            p >= before.2 + 2 * round
        })
        .await;
        await_counts(&mut raw, "every renewed key tracked again", |(_, _, _, t)| t == N).await;
        // right after the next round, a deletion: reported long before the round after it
        await_counts(&mut raw, "the next renewal round, re-read", |(_, _, p, t)| {
            p >= renewed.2 + round && t == N
        })
        .await;
        let victim = &guards[0];
        let _: () = redis::cmd("DEL")
            .arg(victim.key())
            .query_async(&mut raw)
            .await
            .unwrap();
        // the next renewal is about a second away; the watch answers in milliseconds
        assert!(
            signalled(&**victim, Duration::from_millis(500)).await.is_some(),
            "{kind}: a deletion right after a renewal was not reported before the next renewal"
        );
        for g in guards.drain(1..) {
            assert!(g.is_held(), "{kind}: a renewed hold was reported lost");
            g.unlock().await.unwrap();
        }
        c.shutdown().await.unwrap();
    }
}

/// A TTL cut short is read again when it runs out: the expiry is reported then, even where
/// Redis would delete the key much later (here its active expiry is off, so only a read of the
/// key expires it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ttl_cut_short_is_reported_when_it_runs_out() {
    init_tracing();
    let s = RedisServer::start_with(&["--enable-debug-command", "yes"]);
    let c = s.client(config()).await;
    let mut raw = s.conn().await;
    let _: () = redis::cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(0)
        .query_async(&mut raw)
        .await
        .unwrap();
    for kind in KINDS {
        // (a key read after it was deleted stays tracked: count from here)
        let (_, _, _, tracked) = counts(&mut raw).await;
        let g = kinds::open(kind, &c, &format!("cut:{kind}"))
            .lock()
            .await
            .unwrap();
        // tracked once the watch has read it
        await_counts(&mut raw, "the hold tracked", |(_, _, _, t)| t > tracked).await;
        let _: () = redis::cmd("PEXPIRE")
            .arg(g.key())
            .arg(300)
            .query_async(&mut raw)
            .await
            .unwrap();
        let (why, after) = signalled(&*g, SIGNAL)
            .await
            .unwrap_or_else(|| panic!("{kind}: an expiry was not reported before the next renewal"));
        assert_eq!(why, LostReason::OwnerGone, "{kind}");
        assert!(
            after >= Duration::from_millis(250),
            "{kind}: reported {after:?} after a 300 ms TTL was set"
        );
    }
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_renewal_only_a_deletion_waits_for_the_renewal() {
    init_tracing();
    let s = RedisServer::start();
    let c = s
        .client(
            config()
                .with_lock_watchdog_timeout(Duration::from_secs(3))
                .with_loss_detection(LossDetection::Renewal),
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

// ---------------------------------------------------------------------------------------------
// A Java party: real Redisson (compat-tests harness, line protocol of compat-tests/README.md)

/// A harness JVM (Redisson watchdog 30 s, as the Rust clients here), and the lock kinds its jar
/// supports (`lock`, `readWrite`, `fair`, `spin`, ...).
async fn start_java(h: &java::Harness, url: &str) -> (Jvm, Vec<String>) {
    let (j, ready) = h
        .start(&["--url", url, "--watchdog-ms", "30000", "--exit-grace-ms", "2000"])
        .await;
    let kinds = ready["kinds"]
        .as_array()
        .map(|a| a.iter().filter_map(|k| k.as_str().map(str::to_owned)).collect())
        // a jar older than the field has the core kinds only
        .unwrap_or_else(|| vec!["lock".into(), "readWrite".into()]);
    eprintln!(
        "java: Redisson {} from {}, kinds {kinds:?}",
        ready["version"], h.source
    );
    (j, kinds)
}

/// Ends the harness: `exit` must be answered; the process then has 20 s to end.
async fn exit_java(mut j: Jvm) {
    j.expect_call("w0", "exit").await;
    let _ = j.wait(Duration::from_secs(20)).await;
}

/// Redisson's `forceUnlock()` of the Java twin of `kind`: (the harness kind, the command).
fn java_force_unlock(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "lock" => ("lock", "forceUnlock"),
        "fair" => ("fair", "fairForceUnlock"),
        "fenced" => ("fenced", "fencedForceUnlock"),
        "spin" => ("spin", "spinForceUnlock"),
        "non_reentrant" => ("nonReentrant", "nonReentrantForceUnlock"),
        "non_reentrant_fair" => ("nonReentrantFair", "nonReentrantFairForceUnlock"),
        "read" => ("readWrite", "readForceUnlock"),
        "write" => ("readWrite", "writeForceUnlock"),
        other => panic!("no lock kind `{other}`"),
    }
}

/// Java's `forceUnlock()` of a lock a Rust guard holds: the guard's `lost()` fires within
/// [`SIGNAL`] of Java's answer (renewal, every 10 s here, could not be that fast).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redisson_force_unlock_is_signalled_within_a_round_trip() {
    init_tracing();
    let Some(h) = java::locate_or_skip("a_redisson_force_unlock_is_signalled_within_a_round_trip") else {
        return;
    };
    let s = RedisServer::start();
    let c = s.client(config()).await;
    let mut raw = s.conn().await;
    let (mut java, java_kinds) = start_java(&h, &s.url()).await;
    let mut done = Vec::new();
    for kind in KINDS {
        let (java_kind, cmd) = java_force_unlock(kind);
        if !java_kinds.iter().any(|k| k == java_kind) {
            // the core kinds are in every harness jar
            assert!(
                !matches!(kind, "lock" | "read" | "write"),
                "{kind}: the harness lacks `{java_kind}`"
            );
            eprintln!(
                "{kind}: not in this Redisson (harness kinds {:?}), not tested",
                java_kinds
            );
            continue;
        }
        let name = format!("jforce:{kind}");
        let g = kinds::open(kind, &c, &name).lock().await.unwrap();
        assert_eq!(g.key(), name, "{kind}: Java's lock of that name is this key");
        // the watch has read (so tracks) the key: let its 2 ms gathering window pass
        tokio::time::sleep(Duration::from_millis(20)).await;
        let t0 = Instant::now();
        let forced = java.expect_call("w1", &format!("{cmd} {name}")).await;
        let answered = t0.elapsed();
        assert_eq!(forced, true, "{kind}: Java's `{cmd}` found the lock");
        assert!(
            !common::key_exists(&mut raw, &name).await,
            "{kind}: Java deleted the key"
        );
        let (why, after) = signalled(&*g, SIGNAL)
            .await
            .unwrap_or_else(|| panic!("{kind}: lost() did not fire within {SIGNAL:?} of Java's `{cmd}`"));
        assert_eq!(why, LostReason::OwnerGone, "{kind}");
        assert!(!g.is_held(), "{kind}");
        eprintln!("{kind}: Java `{cmd}` answered in {answered:?}, lost() {after:?} after the answer");
        done.push(kind);
        // the lock is free for Java now (nothing of the Rust hold is left behind)
        if kind == "lock" {
            assert_eq!(java.expect_call("w1", &format!("tryLock {name}")).await, true);
            java.expect_call("w1", &format!("unlock {name}")).await;
        }
    }
    eprintln!("Java forceUnlock reported for {} kinds: {done:?}", done.len());
    exit_java(java).await;
    c.shutdown().await.unwrap();
}

/// A Redisson reader joining a read lock Rust holds (re-entering on one Java thread, and a
/// second Java thread) and leaving again changes the key several times, but Rust's hold stays:
/// nothing is reported. A `DEL` afterwards still is (the watch was looking all along).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redisson_readers_joining_and_leaving_are_not_reported() {
    init_tracing();
    let Some(h) = java::locate_or_skip("redisson_readers_joining_and_leaving_are_not_reported") else {
        return;
    };
    let s = RedisServer::start();
    let c = s.client(config()).await;
    let mut raw = s.conn().await;
    let (mut java, _) = start_java(&h, &s.url()).await;
    let name = "jcalm:read";
    let g = kinds::open("read", &c, name).lock().await.unwrap();
    let field = g.field().to_owned();
    // the watch has read (so tracks) the key before Java writes it
    tokio::time::sleep(Duration::from_millis(50)).await;

    java.expect_call("w1", &format!("readLock {name}")).await;
    java.expect_call("w1", &format!("readLock {name}")).await; // re-entry on one Java thread
    assert_eq!(java.expect_call("w1", &format!("readHoldCount {name}")).await, 2);
    java.expect_call("w2", &format!("readLock {name}")).await; // another Java thread
    let fields: Vec<String> = redis::cmd("HKEYS").arg(name).query_async(&mut raw).await.unwrap();
    assert_eq!(
        fields.len(),
        4,
        "mode, Rust's reader and two Java readers: {fields:?}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(g.is_held(), "a Java reader joining was reported as a loss");
    java.expect_call("w1", &format!("readUnlock {name}")).await; // partial: count 1
    java.expect_call("w1", &format!("readUnlock {name}")).await;
    java.expect_call("w2", &format!("readUnlock {name}")).await;

    // the hold is really still there (else a report would be right, and a wire-compat bug)
    let still: bool = redis::cmd("HEXISTS")
        .arg(name)
        .arg(&field)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(still, "Java's read unlocks removed Rust's read hold");
    let pttl: i64 = redis::cmd("PTTL").arg(name).query_async(&mut raw).await.unwrap();
    assert!(
        pttl > 20_000,
        "Java's last read unlock left Rust's TTL: {pttl} ms"
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(300), g.lost())
            .await
            .is_err(),
        "lost() fired after Redisson's readers came and went, the Rust hold still in Redis"
    );
    assert!(g.is_held(), "the Rust read guard is no longer held");

    // and the watch is really looking
    let _: () = redis::cmd("DEL").arg(name).query_async(&mut raw).await.unwrap();
    let (why, after) = signalled(&*g, SIGNAL)
        .await
        .expect("a DEL after Java's readers was not reported within SIGNAL");
    assert_eq!(why, LostReason::OwnerGone);
    eprintln!("DEL after Java's readers: lost() after {after:?}");
    exit_java(java).await;
    c.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------------
// The blocking facade and the multi-lock

/// The blocking facade's guards (every kind, and a blocking multi-lock) are the async guards
/// underneath: `wait_lost` reports a raw `DEL` as `OwnerGone` within [`SIGNAL`].
#[test]
fn the_blocking_facade_reports_a_deletion_within_a_round_trip() {
    init_tracing();
    let s = RedisServer::start();
    let c = redisson_lock::blocking::Client::connect_with(&s.url(), config()).unwrap();
    let mut raw = redis::Client::open(s.url()).unwrap().get_connection().unwrap();
    let mut del = |key: &str| {
        let n: i64 = redis::cmd("DEL").arg(key).query(&mut raw).unwrap();
        assert_eq!(n, 1, "{key} existed");
    };
    for kind in KINDS {
        let lock = BlockingLock::open(kind, &c, &format!("bloss:{kind}"));
        let g = lock.lock().unwrap();
        assert_eq!(g.wait_lost(Duration::ZERO), None, "{kind}: held");
        del(&lock.key());
        let t0 = Instant::now();
        let why = g.wait_lost(SIGNAL);
        let after = t0.elapsed();
        assert_eq!(
            why,
            Some(LostReason::OwnerGone),
            "{kind}: wait_lost({SIGNAL:?}) after a DEL"
        );
        assert!(after < SIGNAL && !g.is_held(), "{kind}");
        eprintln!("blocking {kind}: wait_lost() returned {after:?} after the DEL");
    }
    let multi = c.multi_lock(&["bloss:m1", "bloss:m2", "bloss:m3"]).unwrap();
    let g = multi.lock().unwrap();
    assert_eq!(g.wait_lost(Duration::ZERO), None, "multi: held");
    del("bloss:m2");
    let t0 = Instant::now();
    assert_eq!(
        g.wait_lost(SIGNAL),
        Some(LostReason::OwnerGone),
        "blocking multi-lock"
    );
    assert!(!g.is_held());
    eprintln!(
        "blocking multi-lock: wait_lost() returned {:?} after the DEL",
        t0.elapsed()
    );
    drop(g);
    c.shutdown().unwrap();
}

/// A multi-lock of three members of different kinds: whichever member's key is deleted, the
/// multi guard's `lost()` fires within [`SIGNAL`] and it is no longer held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_lock_reports_a_lost_member_within_a_round_trip() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(config()).await;
    let mut raw = s.conn().await;
    let members = ["lock", "fair", "write"];
    for lost in 0..members.len() {
        let names: Vec<String> = members.iter().map(|k| format!("mloss:{lost}:{k}")).collect();
        let multi = RMultiLock::new(
            members
                .iter()
                .zip(&names)
                .map(|(k, n)| Member::from(kinds::open(k, &c, n))),
        )
        .unwrap();
        let g = multi.lock().await.unwrap();
        assert!(g.is_held());
        tokio::time::sleep(Duration::from_millis(20)).await;
        let _: () = redis::cmd("DEL")
            .arg(&names[lost])
            .query_async(&mut raw)
            .await
            .unwrap();
        let t0 = Instant::now();
        let why = tokio::time::timeout(SIGNAL, g.lost()).await.unwrap_or_else(|_| {
            panic!(
                "member {} deleted: the multi guard's lost() did not fire within {SIGNAL:?}",
                members[lost]
            )
        });
        assert_eq!(why, LostReason::OwnerGone, "member {}", members[lost]);
        assert!(!g.is_held(), "member {}", members[lost]);
        eprintln!(
            "multi-lock, {} member deleted: lost() after {:?}",
            members[lost],
            t0.elapsed()
        );
        g.unlock().await.ok(); // the lost member is NotHeld; the others are released
    }
    c.shutdown().await.unwrap();
}

/// A cluster: tracking is on on every master, each hold is read on its slot's master, so a
/// deletion on any master is reported at once; after every node cut the client's connections
/// (as a failover or a network cut does), tracking is turned on again and deletions are still
/// reported at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_reports_deletions_on_every_master_also_after_its_connections_were_cut() {
    init_tracing();
    let cluster = common::cluster::Cluster::start(3, 0).await;
    let c = redisson_lock::Client::builder()
        .cluster(cluster.urls())
        .config(config())
        .build()
        .await
        .expect("a cluster client");
    let mut raw = redis::cluster::ClusterClient::new(cluster.urls())
        .unwrap()
        .get_async_connection()
        .await
        .unwrap();
    // names over the slots of all three masters
    let names: Vec<String> = (0..12).map(|i| format!("cluster-loss:{i}")).collect();
    // Without CLIENT TRACKINGINFO (Redis < 6.2) a node connection the cluster client replaced
    // without a disconnection push cannot be found: a deletion there is reported by renewal
    // (within a renewal period), as the README says; asked, not assumed from the version
    let mut probe = cluster.nodes[0].conn().await;
    let trackinginfo: redis::RedisResult<redis::Value> = redis::cmd("CLIENT")
        .arg("TRACKINGINFO")
        .query_async(&mut probe)
        .await;
    let after_cut = match trackinginfo {
        Ok(_) => SIGNAL,
        Err(e) => {
            common::skip_unsupported(
                "a_cluster_reports_deletions_on_every_master_also_after_its_connections_were_cut (at once after the cut)",
                &format!("CLIENT TRACKINGINFO: {e}: reported within a renewal period instead"),
            );
            Duration::from_secs(12)
        }
    };
    for cut in [false, true] {
        let mut guards = Vec::new();
        for n in &names {
            guards.push(c.lock(n).unwrap().lock().await.unwrap());
        }
        if cut {
            for node in &cluster.nodes {
                let mut admin = node.conn().await;
                let _: i64 = redis::cmd("CLIENT")
                    .arg("KILL")
                    .arg("TYPE")
                    .arg("normal")
                    .query_async(&mut admin)
                    .await
                    .unwrap();
            }
        }
        for (n, g) in names.iter().zip(&guards) {
            let _: i64 = redis::cmd("DEL").arg(n).query_async(&mut raw).await.unwrap();
            let t0 = Instant::now();
            let bound = if cut { after_cut } else { SIGNAL };
            let why = tokio::time::timeout(bound, g.lost())
                .await
                .unwrap_or_else(|_| panic!("{n} (cut: {cut}): lost() did not fire within {bound:?}"));
            assert_eq!(why, LostReason::OwnerGone, "{n}");
            eprintln!(
                "cluster, cut {cut}: {n} reported {:?} after its DEL",
                t0.elapsed()
            );
        }
    }
    c.shutdown().await.unwrap();
}
