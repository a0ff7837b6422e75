//! A map entry's locks and synchronizers (`Client::map_entry`, feature `map-entry`) against a
//! real redis-server: each object lives under the name Redisson derives, the name mapper runs on
//! the map's name and again on the derived name, and the blocking twin names the same keys. The
//! names themselves are compared with real Redisson in compat-tests (scenario 63).

mod common;

use common::{key_exists, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{entry_name, Codec, Config, EntryKey, EntryObject, NameMapper};

#[tokio::test]
async fn every_object_of_an_entry_lives_under_its_derived_name() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let key = EntryKey::string(Codec::Kryo5, "order:42").unwrap();
    let entry = client.map_entry("orders", &key).unwrap();
    let name = |o| entry_name("orders", &key, o);
    assert_eq!(name(EntryObject::Lock), "{orders}:5OzHoosaaUThGHY6izs43Q:lock");
    for o in EntryObject::ALL {
        assert_eq!(entry.name(o), name(o));
    }

    let g = entry.lock().unwrap().lock().await.unwrap();
    let fields: Vec<(String, String)> = raw.hgetall(name(EntryObject::Lock)).await.unwrap();
    assert_eq!(fields, vec![(g.field().to_owned(), "1".to_owned())]);
    g.unlock().await.unwrap();

    let g = entry.fair_lock().unwrap().lock().await.unwrap();
    assert!(key_exists(&mut raw, &name(EntryObject::FairLock)).await);
    g.unlock().await.unwrap();

    let r = entry.read_write_lock().unwrap().read_lock().lock().await.unwrap();
    let mode: String = raw.hget(name(EntryObject::ReadWriteLock), "mode").await.unwrap();
    assert_eq!(mode, "read");
    r.unlock().await.unwrap();

    let sem = entry.semaphore().unwrap();
    assert!(sem.try_set_permits(2).await.unwrap());
    let permits: String = raw.get(name(EntryObject::Semaphore)).await.unwrap();
    assert_eq!(permits, "2");

    let pes = entry.permit_expirable_semaphore().unwrap();
    assert!(pes.try_set_permits(1).await.unwrap());
    assert!(key_exists(&mut raw, &name(EntryObject::PermitExpirableSemaphore)).await);

    let latch = entry.count_down_latch().unwrap();
    assert!(latch.try_set_count(3).await.unwrap());
    let count: String = raw.get(name(EntryObject::CountDownLatch)).await.unwrap();
    assert_eq!(count, "3");

    // a set's value names its objects as a map entry does
    let value = client.set_entry("orders", &key).unwrap();
    assert_eq!(value.name(EntryObject::Semaphore), name(EntryObject::Semaphore));
    client.shutdown().await.unwrap();
}

/// Redisson maps the map's name when the map is made and the derived name when the lock is:
/// with a prefix mapper the key is `app:{app:orders}:<hash>:lock`.
#[tokio::test]
async fn the_name_mapper_runs_on_the_map_name_and_on_the_derived_name() {
    let s = RedisServer::start();
    let client = s
        .client(Config::default().with_name_mapper(NameMapper::prefix("app:")))
        .await;
    let mut raw = s.conn().await;
    let key = EntryKey::long(Codec::Long, 7).unwrap();
    let entry = client.map_entry("orders", &key).unwrap();
    let derived = format!("{{app:orders}}:{}:lock", key.hash());
    assert_eq!(entry.name(EntryObject::Lock), derived);
    let lock = entry.lock().unwrap();
    assert_eq!(lock.key(), format!("app:{derived}"));
    let g = lock.lock().await.unwrap();
    assert!(key_exists(&mut raw, &format!("app:{derived}")).await);
    g.unlock().await.unwrap();
    assert!(client.map_entry("", &key).is_err());
    client.shutdown().await.unwrap();
}

#[test]
fn the_blocking_twin_names_the_same_keys() {
    let s = RedisServer::start();
    let config = Config::default().with_name_mapper(NameMapper::prefix("app:"));
    let client = redisson_lock::blocking::Client::connect_with(&s.url(), config).unwrap();
    let key = EntryKey::uuid(Codec::Kryo5, uuid::Uuid::nil()).unwrap();
    let entry = client.map_entry("orders", &key).unwrap();
    let lock = entry.lock().unwrap();
    assert_eq!(lock.key(), format!("app:{{app:orders}}:{}:lock", key.hash()));
    let g = lock.lock().unwrap();
    assert_eq!(lock.hold_count().unwrap(), 1);
    g.unlock().unwrap();
    let latch = entry.count_down_latch().unwrap();
    assert!(latch.try_set_count(1).unwrap());
    assert_eq!(
        client.set_entry("orders", &key).unwrap().name(EntryObject::Lock),
        entry.name(EntryObject::Lock)
    );
    client.shutdown().unwrap();
}
