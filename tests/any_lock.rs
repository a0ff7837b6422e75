//! `AnyLock` / `AnyGuard`: every kind behind one object-safe type does what its own handle does.

mod common;

use std::time::Duration;

use common::kinds::{open, KINDS};
use common::RedisServer;
use redisson_lock::{AnyKind, AnyLock, Config, OwnerId, Ttl, Unlocked, WriteGuard};

/// The tests' list of kinds is the library's: a kind added to the crate fails here until every
/// kind-independent test runs it too; `any_lock` opens each kind, in either spelling.
#[tokio::test]
async fn the_tests_cover_every_kind_the_library_has() {
    let mut parsed: Vec<AnyKind> = KINDS.iter().map(|k| k.parse().unwrap()).collect();
    parsed.sort();
    let mut all = AnyKind::ALL.to_vec();
    all.sort();
    assert_eq!(parsed, all);
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    for kind in AnyKind::ALL.iter().copied() {
        assert_eq!(kind.label().parse::<AnyKind>().unwrap(), kind);
        assert_eq!(client.any_lock(kind, "any:k").unwrap().kind(), kind.label());
    }
    let url = s.url();
    tokio::task::spawn_blocking(move || {
        let blocking = redisson_lock::blocking::Client::connect(&url).unwrap();
        for kind in AnyKind::ALL.iter().copied() {
            let lock = blocking.any_lock(kind, "any:k").unwrap();
            assert_eq!(lock.kind(), kind.label());
            lock.lock().unwrap().unlock().unwrap();
        }
    })
    .await
    .unwrap();
    assert!(matches!(
        "mutex".parse::<AnyKind>(),
        Err(redisson_lock::Error::InvalidArgument(m)) if m.contains("non-reentrant fair")
    ));
    assert!(client.any_lock(AnyKind::Fair, "").is_err());
}

#[tokio::test]
async fn every_kind_works_as_an_any_lock() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    for kind in KINDS {
        let name = format!("any:{kind}");
        let lock: Box<dyn AnyLock> = open(kind, &client, &name).with_owner(OwnerId::from(7));
        assert_eq!(lock.key(), name);
        assert_eq!(lock.owner(), Some(OwnerId::from(7)));
        let g = lock.lock().await.unwrap();
        assert_eq!(Some(g.field().to_owned()), lock.field(), "{kind}");
        assert!(g.is_held());
        assert_eq!(
            g.token().is_some(),
            kind == "fenced",
            "{kind}: a token only for the fenced lock"
        );
        assert!(lock.is_locked().await.unwrap(), "{kind}");
        assert!(lock.is_held().await.unwrap(), "{kind}");
        assert!(lock.is_held_by(OwnerId::from(7)).await.unwrap(), "{kind}");
        assert!(!lock.is_held_by(OwnerId::from(8)).await.unwrap(), "{kind}");
        assert_eq!(lock.hold_count().await.unwrap(), 1, "{kind}");
        assert!(
            matches!(lock.remain_time_to_live().await.unwrap(), Ttl::Expires(_)),
            "{kind}"
        );
        // another owner is refused while held (readers share)
        let other = open(kind, &client, &name).with_owner(OwnerId::from(8));
        let second = other.try_lock_for(Duration::ZERO).await.unwrap();
        assert_eq!(second.is_some(), kind == "read", "{kind}");
        if let Some(second) = second {
            assert_eq!(second.unlock().await.unwrap(), Unlocked::Released);
        }
        assert_eq!(g.unlock().await.unwrap(), Unlocked::Released, "{kind}");
        assert!(!lock.is_locked().await.unwrap(), "{kind}");
        // a leased hold, then force-unlocked
        let g = lock.lock_with_lease(Duration::from_secs(20)).await.unwrap();
        assert_eq!(g.lease(), Some(Duration::from_secs(20)));
        assert!(lock.force_unlock().await.unwrap(), "{kind}");
        assert!(g.unlock().await.is_err(), "{kind}: its hold was force-unlocked");
    }
}

#[tokio::test]
async fn an_any_guard_gives_its_own_type_back() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let rw = client.read_write_lock("any:rw").unwrap();
    let lock: Box<dyn AnyLock> = Box::new(rw.write_lock());
    assert_eq!(lock.kind(), "write");
    let g = lock.lock().await.unwrap();
    let w = g
        .into_any()
        .downcast::<WriteGuard>()
        .expect("a write lock's guard is a WriteGuard");
    let r = w.downgrade().await.unwrap();
    assert!(rw.read_lock().is_locked().await.unwrap());
    assert!(!rw.write_lock().is_locked().await.unwrap());
    r.unlock().await.unwrap();
    let g = lock.lock().await.unwrap();
    let not_lock = g.into_any().downcast::<redisson_lock::LockGuard>();
    assert!(not_lock.is_err(), "not another kind's guard");
    drop(not_lock); // the guard inside is dropped: its release is queued
    client.shutdown().await.unwrap();
    assert!(
        !rw.write_lock().is_locked().await.unwrap(),
        "released by the drop"
    );
}

/// The blocking `AnyLock` / `AnyGuard`, every kind: the same as the kind's own blocking handle.
#[test]
fn every_kind_works_as_a_blocking_any_lock() {
    use redisson_lock::blocking::{self, AnyLock as BlockingAnyLock};
    let s = RedisServer::start();
    let client = blocking::Client::connect(&s.url()).unwrap();
    for kind in KINDS {
        let name = format!("any:blocking:{kind}");
        let lock: Box<dyn BlockingAnyLock> = match kind {
            "lock" => Box::new(client.lock(&name).unwrap()),
            "fair" => Box::new(client.fair_lock(&name).unwrap()),
            "fenced" => Box::new(client.fenced_lock(&name).unwrap()),
            "spin" => Box::new(client.spin_lock(&name).unwrap()),
            "non_reentrant" => Box::new(client.non_reentrant_lock(&name).unwrap()),
            "non_reentrant_fair" => Box::new(client.non_reentrant_fair_lock(&name).unwrap()),
            "read" => Box::new(client.read_write_lock(&name).unwrap().read_lock()),
            "write" => Box::new(client.read_write_lock(&name).unwrap().write_lock()),
            other => panic!("no kind {other}"),
        };
        let lock = lock.with_owner(OwnerId::from(9));
        assert_eq!(lock.key(), name);
        let mut g = lock.lock_with_lease(Duration::from_secs(10)).unwrap();
        assert_eq!(Some(g.field().to_owned()), lock.field(), "{kind}");
        assert_eq!(g.token().is_some(), kind == "fenced", "{kind}");
        assert!(lock.is_held_by(OwnerId::from(9)).unwrap(), "{kind}");
        assert_eq!(lock.hold_count().unwrap(), 1, "{kind}");
        g.extend_lease(Duration::from_secs(30)).unwrap();
        assert_eq!(g.lease(), Some(Duration::from_secs(30)), "{kind}");
        assert!(
            matches!(lock.remain_time_to_live().unwrap(), Ttl::Expires(d) if d > Duration::from_secs(20)),
            "{kind}"
        );
        assert_eq!(g.wait_lost(Duration::ZERO), None, "{kind}");
        assert_eq!(g.unlock().unwrap(), Unlocked::Released, "{kind}");
        assert!(!lock.is_locked().unwrap(), "{kind}");
        assert!(
            lock.try_lock_for(Duration::ZERO).unwrap().is_some(),
            "{kind}: free again (released on drop)"
        );
    }
}
