//! The grouped multi-lock (`Client::group_lock`, feature `group-lock`; Redisson's
//! `getMultiLock(group, values)`) against real redis-server processes: the hash Redisson reads,
//! re-entry, leases and per-value deadlines, watchdog renewal, release, force unlock, overlapping
//! value sets excluding each other, cancel safety, and refused input. Interop with real Redisson
//! is in compat-tests (scenarios 65, 66).

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::{eventually, init_tracing, key_exists, pause_all, pttl, RawSubscriber, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Codec, Config, EntryKey, Error, LeaseState, LostReason, RGroupLock, Unlocked};

fn values(names: &[&str]) -> Vec<EntryKey> {
    names
        .iter()
        .map(|n| EntryKey::string(Codec::Kryo5, n).expect("a value"))
        .collect()
}

fn group(client: &redisson_lock::Client, key: &str, names: &[&str]) -> RGroupLock {
    client.group_lock(key, &values(names)).expect("a group lock")
}

fn id(name: &str) -> String {
    EntryKey::string(Codec::Kryo5, name)
        .expect("a value")
        .hash()
        .to_owned()
}

fn epoch_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as i64
}

async fn hash(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> HashMap<String, String> {
    raw.hgetall(key).await.expect("HGETALL")
}

/// The hash holds, per value, the three fields Redisson's `RedissonFasterMultiLock` writes and
/// reads, under the owner field `<client id>:<owner id>`; the key's TTL is the watchdog
/// timeout; a release deletes them and publishes `0` on the group's RLock channel.
#[tokio::test]
async fn a_hold_writes_redissons_fields_and_its_release_wakes_the_group() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = group(&client, "class_100", &["Jack_001", "Mary_002", "Jack_001"]);
    assert_eq!(lock.value_ids().len(), 2, "a repeated value counts once");
    let mut sub = RawSubscriber::new(&s.url(), "redisson_lock__channel:{class_100}").await;

    let before = epoch_ms();
    let g = lock.lock().await.unwrap();
    let owner = g.field().split('#').next().unwrap().to_owned();
    assert!(common::uuid_field_regex().is_match(&owner), "{owner}");
    assert_eq!(g.field(), format!("{owner}#{}", lock.value_ids().join(",")));
    let h = hash(&mut raw, "class_100").await;
    assert_eq!(h.len(), 6, "{h:?}");
    for v in ["Jack_001", "Mary_002"] {
        let v = id(v);
        assert_eq!(h[&v], owner);
        assert_eq!(h[&format!("{v}:{owner}:lock_count")], "1");
        let deadline: i64 = h[&format!("{v}:{owner}:expire_time")].parse().unwrap();
        assert!(
            (before + 30_000..=epoch_ms() + 30_000).contains(&deadline),
            "{deadline}"
        );
    }
    let ttl = pttl(&mut raw, "class_100").await;
    assert!((29_000..=30_000).contains(&ttl), "{ttl}");
    assert!(lock.is_locked().await.unwrap());
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
    assert!(!key_exists(&mut raw, "class_100").await);
    assert_eq!(sub.drain(&s).await, ["0"]);
    assert!(!lock.is_locked().await.unwrap());
    client.shutdown().await.unwrap();
}

/// One owner re-enters its set (every value's count goes up) and each release takes one hold;
/// the handle-level queries and `unlock` act for the pinned owner.
#[tokio::test]
async fn re_entry_counts_every_value_and_releases_one_hold_at_a_time() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let mine = group(&client, "g:reenter", &["a", "b"]).with_owner(7);
    let first = mine.lock().await.unwrap();
    let second = first.reenter().await.unwrap();
    let third = mine.try_lock().await.unwrap().expect("the same owner re-enters");
    assert_eq!(mine.hold_count().await.unwrap(), 3);
    assert!(mine.is_held().await.unwrap());
    assert!(!mine.is_held_by(8).await.unwrap());
    let owner = format!("{}:7", client.id());
    assert_eq!(
        hash(&mut raw, "g:reenter").await[&format!("{}:{owner}:lock_count", id("a"))],
        "3"
    );
    assert_eq!(third.unlock().await.unwrap(), Unlocked::Partial);
    assert_eq!(second.unlock().await.unwrap(), Unlocked::Partial);
    assert_eq!(mine.hold_count().await.unwrap(), 1);
    first.forget();
    assert_eq!(mine.unlock().await.unwrap(), Unlocked::Released);
    assert!(!key_exists(&mut raw, "g:reenter").await);
    assert!(matches!(mine.unlock().await, Err(Error::NotHeld { .. })));
    assert!(matches!(
        group(&client, "g:reenter", &["a"]).hold_count().await,
        Err(Error::NoOwner { .. })
    ));
    client.shutdown().await.unwrap();
}

/// Sets that share a value exclude each other (from any client), sets that do not are held at
/// once, and a waiter on a shared value wakes on the release's message, long before the
/// holder's deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_sets_exclude_each_other_and_a_waiter_wakes_on_release() {
    let s = RedisServer::start();
    let a = s.client(Config::default()).await;
    let b = s.client(Config::default()).await;
    let held = group(&a, "g:overlap", &["1", "2"]).lock().await.unwrap();
    assert!(group(&b, "g:overlap", &["2", "3"])
        .try_lock()
        .await
        .unwrap()
        .is_none());
    assert!(
        group(&a, "g:overlap", &["1"]).try_lock().await.unwrap().is_none(),
        "another owner of the same client"
    );
    let disjoint = group(&b, "g:overlap", &["3", "4"]).try_lock().await.unwrap();
    assert!(disjoint.is_some(), "no shared value: both held");

    let waiter = group(&b, "g:overlap", &["2", "5"]);
    let t = tokio::spawn(async move {
        let started = Instant::now();
        let g = waiter.lock().await.unwrap();
        (started.elapsed(), g)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!t.is_finished(), "the waiter got a value another owner holds");
    held.unlock().await.unwrap();
    let (waited, g) = tokio::time::timeout(Duration::from_secs(5), t)
        .await
        .unwrap()
        .unwrap();
    assert!(
        waited < Duration::from_secs(5),
        "{waited:?}: woken by the message, not the 30 s deadline"
    );
    g.unlock().await.unwrap();
    disjoint.unwrap().unlock().await.unwrap();
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// A leased hold ends at its values' deadline even while the group's key lives on for other
/// holds: another owner then takes the value, and the old guard reports the lease over.
#[tokio::test]
async fn a_lease_ends_at_its_values_deadline_while_the_key_lives_on() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let other = group(&client, "g:lease", &["z"]).lock().await.unwrap(); // keeps the key 30 s
    let leased = group(&client, "g:lease", &["a"])
        .lock_with_lease(Duration::from_millis(400))
        .await
        .unwrap();
    assert_eq!(leased.lease(), Some(Duration::from_millis(400)));
    assert!(group(&client, "g:lease", &["a"])
        .try_lock()
        .await
        .unwrap()
        .is_none());
    let taken = group(&client, "g:lease", &["a"])
        .try_lock_for(Duration::from_secs(3))
        .await
        .unwrap()
        .expect("free once the lease's deadline passed");
    assert!(key_exists(&mut raw, "g:lease").await);
    assert_eq!(leased.state(), LeaseState::Lost(LostReason::LeaseExpired));
    // the old holder's fields went when the value was taken over
    let h = hash(&mut raw, "g:lease").await;
    assert_eq!(h.len(), 6, "{h:?}");
    assert!(matches!(leased.unlock().await, Err(Error::NotHeld { .. })));
    taken.unlock().await.unwrap();
    other.unlock().await.unwrap();
    assert!(!key_exists(&mut raw, "g:lease").await);
    client.shutdown().await.unwrap();
}

/// The watchdog renews every value's deadline and the key's TTL while the guard lives.
#[tokio::test]
async fn the_watchdog_renews_every_value() {
    let s = RedisServer::start();
    let client = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_secs(1)))
        .await;
    let mut raw = s.conn().await;
    let lock = group(&client, "g:watchdog", &["a", "b"]).with_owner(1);
    let g = lock.lock().await.unwrap();
    let owner = format!("{}:1", client.id());
    let deadline = |h: &HashMap<String, String>, v: &str| -> i64 {
        h[&format!("{}:{owner}:expire_time", id(v))].parse().unwrap()
    };
    let first = deadline(&hash(&mut raw, "g:watchdog").await, "b");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let h = hash(&mut raw, "g:watchdog").await;
    assert!(
        deadline(&h, "a") > first + 1000 && deadline(&h, "b") > first + 1000,
        "{h:?}"
    );
    assert!(g.is_held());
    assert!(group(&client, "g:watchdog", &["b"])
        .try_lock()
        .await
        .unwrap()
        .is_none());
    assert!(pttl(&mut raw, "g:watchdog").await > 0);
    g.unlock().await.unwrap();
    client.shutdown().await.unwrap();
}

/// Force unlock frees the handle's values only, whoever holds them; this client's holds of one
/// of them report it, holds of other values of the group are kept.
#[tokio::test]
async fn force_unlock_frees_the_values_of_the_handle_only() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let ab = group(&client, "g:force", &["a", "b"]).lock().await.unwrap();
    let c = group(&client, "g:force", &["c"]).lock().await.unwrap();
    // the loss watch has read the new holds (the group is tracked): its read cannot race the
    // force unlock below and report the hold it ends as gone rather than force-unlocked
    eventually(Duration::from_secs(5), "the group tracked", || {
        let mut raw = raw.clone();
        async move {
            let info: String = redis::cmd("INFO")
                .arg("stats")
                .query_async(&mut raw)
                .await
                .unwrap();
            info.lines()
                .find_map(|l| l.strip_prefix("tracking_total_keys:"))
                .is_some_and(|n| n.trim() != "0")
        }
    })
    .await;
    assert!(group(&client, "g:force", &["b", "x"])
        .force_unlock()
        .await
        .unwrap());
    assert_eq!(ab.state(), LeaseState::Lost(LostReason::ForceUnlocked));
    assert!(c.is_held());
    let h = hash(&mut raw, "g:force").await;
    assert!(!h.contains_key(&id("b")) && h.contains_key(&id("a")) && h.contains_key(&id("c")));
    assert!(
        !group(&client, "g:force", &["x"]).force_unlock().await.unwrap(),
        "nobody held x"
    );
    c.unlock().await.unwrap();
    drop(ab);
    client.shutdown().await.unwrap();
}

/// An acquisition dropped while its request waits in a paused Redis leaves no hold behind: the
/// attempt is settled in the background (never applied, or found granted and given back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_acquisition_leaves_no_hold() {
    init_tracing();
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    // the scripts are loaded before Redis stops answering
    group(&client, "g:cancel", &["a"])
        .lock()
        .await
        .unwrap()
        .unlock()
        .await
        .unwrap();
    pause_all(&s, Duration::from_secs(1)).await;
    let lock = group(&client, "g:cancel", &["a", "b"]);
    let r = tokio::time::timeout(Duration::from_millis(100), lock.lock()).await;
    assert!(r.is_err(), "granted while Redis is paused?");
    eventually(
        Duration::from_secs(10),
        "the abandoned attempt was settled",
        || {
            let client = client.clone();
            async move { client.stats().holds == 0 && client.stats().queued_releases == 0 }
        },
    )
    .await;
    assert!(
        !key_exists(&mut raw, "g:cancel").await,
        "{:?}",
        hash(&mut raw, "g:cancel").await
    );
    // and a waiter dropped while it waits for a held value leaves nothing either
    let held = group(&client, "g:cancel", &["a"]).lock().await.unwrap();
    let waiting = group(&client, "g:cancel", &["a", "c"]);
    assert!(tokio::time::timeout(Duration::from_millis(200), waiting.lock())
        .await
        .is_err());
    held.unlock().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!key_exists(&mut raw, "g:cancel").await);
    client.shutdown().await.unwrap();
}

/// Input that cannot name a grouped lock, or a lease no lock can have, is refused before
/// anything is sent; a key of another type is reported as such.
#[tokio::test]
async fn bad_input_is_refused_with_a_typed_error() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    assert!(matches!(
        client.group_lock("g", &[]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        client.group_lock("", &values(&["a"])),
        Err(Error::InvalidArgument(_))
    ));
    let lock = group(&client, "g:bad", &["a"]);
    for lease in [Duration::ZERO, Duration::from_secs(u64::MAX / 2)] {
        let r = lock.lock_with_lease(lease).await;
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{lease:?}: {r:?}");
    }
    assert!(!key_exists(&mut raw, "g:bad").await);
    let _: () = raw.set("g:string", "x").await.unwrap();
    let r = group(&client, "g:string", &["a"]).try_lock().await;
    assert!(matches!(r, Err(Error::WrongType { .. })), "{r:?}");
    let r = group(&client, "g:string", &["a"]).force_unlock().await;
    assert!(matches!(r, Err(Error::WrongType { .. })), "{r:?}");
    client.shutdown().await.unwrap();
}

/// Inspection reads a group's hash as a grouped lock: each value with its holder, count and
/// deadline, the holders among them, found by `scan_locks` too; a handle made from the ids
/// inspection shows frees them, and a hash that is half a group is still no lock.
#[tokio::test]
async fn inspection_shows_a_groups_values_and_their_ids_free_them() {
    use redisson_lock::inspect::{self, LockKind};
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let a = group(&client, "g:seen", &["x", "y"]).with_owner(7u64);
    let b = group(&client, "g:seen", &["z"]).with_owner(8u64);
    let _ga = a.lock().await.unwrap();
    let _ga2 = a.lock().await.unwrap();
    let gb = b.lock_with_lease(Duration::from_secs(60)).await.unwrap();
    let before = epoch_ms();

    let info = inspect::inspect(&mut client.connection(), "g:seen")
        .await
        .unwrap();
    assert_eq!(info.kind, Some(LockKind::Group));
    assert!(info.is_locked());
    let mut ids = vec![id("x"), id("y"), id("z")];
    ids.sort();
    let shown: Vec<&str> = info.values.iter().map(|v| v.value_id.as_str()).collect();
    assert_eq!(shown, ids);
    let owner_a = a.field().unwrap().split('#').next().unwrap().to_owned();
    let owner_b = b.field().unwrap().split('#').next().unwrap().to_owned();
    for v in &info.values {
        let (owner, count) = if v.value_id == id("z") {
            (&owner_b, 1)
        } else {
            (&owner_a, 2)
        };
        assert_eq!((&v.holder, v.hold_count), (owner, count), "{v:?}");
        assert!(v.is_held_at(info.redis_time_ms), "{v:?}");
        let deadline = v.deadline_ms.unwrap();
        assert!(deadline > before && deadline <= epoch_ms() + 60_000, "{v:?}");
    }
    let mut holders: Vec<(&str, u64, u64)> = info
        .holders
        .iter()
        .map(|h| (h.field.as_str(), h.owner_id, h.hold_count))
        .collect();
    holders.sort();
    let mut want = vec![(owner_a.as_str(), 7, 2), (owner_b.as_str(), 8, 1)];
    want.sort();
    assert_eq!(holders, want);
    let found = inspect::scan_locks(&mut client.connection(), "g:*")
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, Some(LockKind::Group));

    // a handle by the ids inspection shows: an operator's force unlock of b's value only
    let by_ids = client.group_lock_by_ids("g:seen", &[&id("z")]).unwrap();
    assert!(by_ids.force_unlock().await.unwrap());
    let lost = tokio::time::timeout(Duration::from_secs(5), gb.lost()).await;
    assert_eq!(lost, Ok(LostReason::ForceUnlocked));
    let info = inspect::inspect(&mut client.connection(), "g:seen")
        .await
        .unwrap();
    assert_eq!(info.values.len(), 2);
    assert_eq!(info.holders.len(), 1);
    for bad in [&[][..], &[""][..], &["a,b"][..], &["a#b"][..], &["a:b"][..]] {
        let r = client.group_lock_by_ids("g:seen", bad);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{bad:?}");
    }

    // a group's fields beside a field of neither layout: not a lock, whichever way it is read
    let _: () = raw.hset("g:seen", "user", "x").await.unwrap();
    let r = inspect::inspect(&mut client.connection(), "g:seen").await;
    assert!(matches!(r, Err(Error::NotALock { .. })), "{r:?}");
    client.shutdown().await.unwrap();
}

/// The blocking twin: the calling thread is the owner, as in Java.
#[test]
fn the_blocking_twin_holds_for_the_calling_thread() {
    let s = RedisServer::start();
    let client = redisson_lock::blocking::Client::connect(&s.url()).unwrap();
    let lock = client.group_lock("g:blocking", &values(&["a", "b"])).unwrap();
    let g = lock.lock().unwrap();
    let nested = lock.lock().unwrap();
    assert_eq!(lock.hold_count().unwrap(), 2);
    let other = lock.clone();
    let busy = std::thread::spawn(move || other.try_lock().unwrap().is_none())
        .join()
        .unwrap();
    assert!(busy, "another thread is another owner");
    assert_eq!(nested.unlock().unwrap(), Unlocked::Partial);
    assert_eq!(g.unlock().unwrap(), Unlocked::Released);
    assert!(!lock.is_locked().unwrap());
}

/// Another client's force unlock of one value is noticed by this client's loss watch (Redis
/// tracks the group's key; a hold is read by its values' counts), well before any renewal; a
/// hold of other values of the same key stays held.
#[tokio::test]
async fn the_loss_watch_reads_a_group_hold_by_its_values() {
    let s = RedisServer::start();
    let holder = s.client(Config::default()).await;
    let other = s.client(Config::default()).await;
    let ab = group(&holder, "g:watch", &["a", "b"]).lock().await.unwrap();
    let c = group(&holder, "g:watch", &["c"]).lock().await.unwrap();
    assert!(group(&other, "g:watch", &["b"]).force_unlock().await.unwrap());
    let gone = LeaseState::Lost(LostReason::OwnerGone);
    eventually(
        Duration::from_secs(3),
        "the holder learns b was force-unlocked",
        || {
            let state = ab.state();
            async move { state == gone }
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(c.is_held(), "a hold of other values is kept");
    c.unlock().await.unwrap();
    drop(ab);
    holder.shutdown().await.unwrap();
    other.shutdown().await.unwrap();
}
