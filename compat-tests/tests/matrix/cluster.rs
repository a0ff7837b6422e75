//! RLock scenarios 38–42 in a **Redis Cluster** (3 masters + 3 replicas on loopback; Redisson
//! in cluster mode, Rust cluster clients). They run once per Redisson version of
//! [`CLUSTER_VERSIONS`] that the run includes, in the crate's publish mode for that version
//! ([`mode_for`]: `Auto` = sharded for 3.22+, `Both` for 3.17.7, which only knows classic
//! pub/sub), on one cluster shared by those versions (names differ per version).
//!
//! * 38 hold: B's `try_lock` refused (RLock scenario 1's checks, in a cluster);
//! * 39 wake-up: B blocked in `lock()` acquires within [`CLUSTER_WAKE_BOUND_MS`] of A's unlock;
//!   the Rust waiter polls only every 10 s and Java's waits its 30 s TTL, so only a message of the
//!   pub/sub kind the waiter listens on gets it in that fast;
//! * 40 a mixed-language counter (no overlap, the lock passes between the languages);
//! * 41 fair lock: B (the head) woken on its own channel by A's unlock;
//! * 42 the bug: a Rust client in **`Auto`** (the default: sharded in a cluster) against
//!   this version. 3.22+: Java listens and publishes sharded too, so both directions wake at once.
//!   3.17.7 (classic only): R→J, Java's `tryLock(3 s)` answers **false** although the lock was
//!   free from the start of its wait (the `SPUBLISH` never reaches its `SUBSCRIBE`); J→R, the
//!   Rust waiter gets in only at its own 10 s poll. Passing = the outcome matches the version.
//! * 71 a map entry's six objects used from both languages (scenario 70, in a cluster);
//! * 72 the grouped multi-lock across languages (scenario 65, in a cluster: the group's hash and
//!   its channel share the group's slot), n/a before Redisson 3.38.

use std::time::Duration;

use redisson_lock::{Client, Config, PublishMode};
use redisson_lock_compat_tests::Result;

use crate::counter::mixed_counter;
use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS};
use crate::party::{Party, FAIR, LOCK};
use crate::rlock;
use crate::support::{channel_of, fair_channel, fair_queue, until, QUIET_POLL};

/// The Redisson versions that get cluster rows (when the run includes them).
pub const CLUSTER_VERSIONS: &[&str] = &["4.7.0", "3.52.0", "3.17.7"];
/// From A's unlock reply to B's acquisition, in a cluster.
pub const CLUSTER_WAKE_BOUND_MS: f64 = 500.0;
/// Scenario 40: Java workers, Rust tasks, rounds each.
const COUNTER: (usize, usize, usize) = (2, 2, 100);
/// Scenario 42: Java's `tryLock` wait.
const TRY_WAIT_MS: u64 = 3000;

/// The crate's publish mode for a cluster shared with Redisson `version`: `Both` for a Redisson
/// that only knows classic pub/sub (< 3.22), else `Auto` (sharded, like Redisson 3.22+).
pub fn mode_for(version: &str) -> PublishMode {
    if sharded_redisson(version) {
        PublishMode::Auto
    } else {
        PublishMode::Both
    }
}

/// Whether Redisson `version` uses sharded pub/sub in a Redis 7 cluster (3.22.0+; `docs/protocol.md`,
/// "Pub/sub").
pub fn sharded_redisson(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (3, 22)
}

const fn sc(no: usize, title: &'static str) -> Scenario {
    Scenario {
        no,
        title,
        dirs: BOTH_WAYS,
        limit_s: 60,
        last: false,
        needs: None,
    }
}

pub const SCENARIOS: &[Scenario] = &[
    sc(38, "Cluster: A holds: B's try_lock fails, hold count 0, is_locked (as 1)"),
    sc(39, "Cluster: A releases: B blocked in lock() acquires within 500 ms (message; Rust polls every 10 s, Java TTL 30 s)"),
    sc(40, "Cluster: 2 Java + 2 Rust x 100 rounds, counter = 400, no overlap, hand-overs both ways"),
    sc(41, "Cluster: fair lock: B (the head) woken on its own channel by A's unlock within 500 ms"),
    sc(42, "Cluster, Rust in Auto (default): 3.22+ woken by message; 3.17.7 NOT woken (R→J: tryLock(3 s) false on a free lock; J→R: only the 10 s poll)"),
    Scenario {
        no: 71,
        title: crate::map_entry::LIVE_TITLE,
        dirs: crate::kinds::TOGETHER,
        limit_s: 120,
        last: false,
        needs: None,
    },
    Scenario {
        no: 72,
        title: "Cluster: grouped lock across languages (as 65): the value ids are the hash's fields, overlapping sets exclude each other, B's lock() of the overlapping set woken ≤ 1000 ms after A's unlock",
        dirs: BOTH_WAYS,
        limit_s: 60,
        last: false,
        needs: crate::group::NEEDS,
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    let mut o = match no {
        38 => rlock::run(env, 1, dir).await?,
        39 => s39(env, dir).await?,
        40 => s40(env, dir).await?,
        41 => s41(env, dir).await?,
        42 => s42(env, dir).await?,
        71 => crate::map_entry::live(env, 71).await?,
        72 => crate::group::s65(env, dir).await?,
        _ => return Err(format!("no cluster scenario {no}")),
    };
    let mode = if no == 42 { PublishMode::Auto } else { env.mode };
    o.note = format!("crate {mode:?}; {}", o.note);
    Ok(o)
}

async fn s39(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(39, dir);
    let (mut a, mut b) = env.pair(39, dir, Speed::QuietPoll);
    a.lock(LOCK, &name, None).await?;
    let mut w = b.start_lock(LOCK, &name).await?;
    env.wait_subscribers(&name, 1).await?;
    let (classic, sharded) = env.subscribers(&channel_of(&name)).await?;
    ensure!(!w.is_done(), "B acquired while A holds");
    let (u_start, t_unlock) = a.unlock_ok(LOCK, &name).await?;
    let (t_acq, _) = b.finish(LOCK, &name, w, Duration::from_secs(40)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= CLUSTER_WAKE_BOUND_MS,
        "B acquired {lat:.1} ms after A's unlock (bound {CLUSTER_WAKE_BOUND_MS} ms): not woken by a message"
    );
    b.unlock_ok(LOCK, &name).await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "B's subscriptions: {classic} classic, {sharded} sharded; {:.1} ms after the unlock call started",
            t_acq - u_start
        ),
    })
}

async fn s40(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(40, dir);
    let run = mixed_counter(env, 40, dir, LOCK, &name, COUNTER, 0).await?;
    Ok(Outcome {
        latency_ms: None,
        note: run.summary(),
    })
}

async fn s41(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(41, dir);
    let (mut a, mut b) = env.pair(41, dir, Speed::QuietPoll);
    let fb = b.field(FAIR, &name).await?;
    a.lock(FAIR, &name, None).await?;
    let mut w = b.start_lock(FAIR, &name).await?;
    let queue = fair_queue(&name);
    until(Duration::from_secs(10), "B is queued", || async {
        Ok(env.raw.lrange(&queue).await? == [fb.clone()])
    })
    .await?;
    let chb = fair_channel(&name, &fb);
    until(
        Duration::from_secs(10),
        "B listens on its own channel",
        || async {
            let (c, s) = env.subscribers(&chb).await?;
            Ok(c + s >= 1)
        },
    )
    .await?;
    ensure!(!w.is_done(), "B acquired while A holds");
    let (_, t_unlock) = a.unlock_ok(FAIR, &name).await?;
    let (t_acq, _) = b.finish(FAIR, &name, w, Duration::from_secs(40)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= CLUSTER_WAKE_BOUND_MS,
        "B (the head) got in {lat:.1} ms after A's unlock (bound {CLUSTER_WAKE_BOUND_MS} ms): not woken by a message"
    );
    b.unlock_ok(FAIR, &name).await?;
    until(Duration::from_secs(5), "the queue is gone", || async {
        Ok(env.raw.lrange(&queue).await?.is_empty())
    })
    .await?;
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!("woken on {chb}"),
    })
}

/// Scenario 42: a Rust client in `Auto` (its own, polling every 10 s) against this version.
async fn s42(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(42, dir);
    let auto = Client::builder()
        .cluster(env.nodes.clone())
        .config(
            Config::default()
                .with_publish_mode(PublishMode::Auto)
                .with_poll_interval(QUIET_POLL),
        )
        .build()
        .await
        .map_err(|e| format!("rust cluster connect (Auto): {e}"))?;
    let wakes = sharded_redisson(&env.version);
    let java_party = |role: &str| env.java_party(Speed::Normal, format!("s42{}{role}", dir.tag()));
    let rust_party = |role: u64| Party::rust(&auto, 4_200_000 + role);
    let ch = channel_of(&name);
    let out = match dir {
        Dir::RustHolds => {
            let (mut a, mut b) = (rust_party(1), java_party("b"));
            a.lock(LOCK, &name, None).await?;
            // Java's tryLock(3 s) subscribes, then waits for a message until its time is up
            let waiting = b.java_lock(LOCK, &name).ok_or("B is not Java")?;
            let pending = waiting.send("tryLock", &[&TRY_WAIT_MS.to_string()]).await?;
            env.wait_subscribers(&name, 1).await?;
            let (classic, sharded) = env.subscribers(&ch).await?;
            let (_, t_unlock) = a.unlock_ok(LOCK, &name).await?;
            let r = pending.wait(Duration::from_secs(15)).await?;
            let at = r.ts_ms;
            let got = r.bool()?;
            let lat = at - t_unlock;
            if wakes {
                ensure!(
                    got && lat <= CLUSTER_WAKE_BOUND_MS,
                    "Java {} (sharded) was not woken by the Auto unlock: tryLock answered {got} {lat:.0} ms after it",
                    env.version
                );
            } else {
                ensure!(
                    !got,
                    "Java {} (classic pub/sub) acquired {lat:.0} ms after an Auto (SPUBLISH) unlock: the issue's bug did not reproduce",
                    env.version
                );
            }
            if got {
                b.unlock_ok(LOCK, &name).await?;
            }
            Outcome {
                latency_ms: got.then_some(lat),
                note: format!(
                    "Java waiter: {classic} classic / {sharded} sharded subscription(s); tryLock({TRY_WAIT_MS} ms) answered {got} {lat:.0} ms after the unlock ({})",
                    if got { "woken by the SPUBLISH" } else { "the lock was free all along: never woken" }
                ),
            }
        }
        _ => {
            let (mut a, mut b) = (java_party("a"), rust_party(2));
            a.lock(LOCK, &name, None).await?;
            let w = b.start_lock(LOCK, &name).await?;
            until(Duration::from_secs(10), "the Rust waiter subscribed", || async {
                Ok(auto.stats().waiters == 1)
            })
            .await?;
            env.wait_subscribers(&name, 1).await?;
            let (_, t_unlock) = a.unlock_ok(LOCK, &name).await?;
            let (t_acq, _) = b.finish(LOCK, &name, w, Duration::from_secs(30)).await?;
            let lat = t_acq - t_unlock;
            if wakes {
                ensure!(
                    lat <= CLUSTER_WAKE_BOUND_MS,
                    "the Auto waiter got in {lat:.0} ms after Java {}'s unlock: not woken by its SPUBLISH",
                    env.version
                );
            } else {
                ensure!(
                    lat > CLUSTER_WAKE_BOUND_MS,
                    "the Auto waiter got in {lat:.0} ms after Java {}'s classic unlock: woken by a message it cannot hear?",
                    env.version
                );
            }
            b.unlock_ok(LOCK, &name).await?;
            Outcome {
                latency_ms: wakes.then_some(lat),
                note: format!(
                    "Rust (Auto, polls every 10 s) got in {lat:.0} ms after Java's unlock ({})",
                    if wakes {
                        "woken by Java's SPUBLISH"
                    } else {
                        "by its own poll: Java's PUBLISH never reached its SSUBSCRIBE"
                    }
                ),
            }
        }
    };
    Ok(out)
}
