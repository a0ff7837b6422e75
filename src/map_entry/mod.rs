//! The locks and synchronizers of one map entry or set value (feature `map-entry`): Redisson's
//! `RMap.getLock(key)`, `getFairLock`, `getReadWriteLock`, `getSemaphore`,
//! `getPermitExpirableSemaphore` and `getCountDownLatch` (the same on `RMapCache`,
//! `RLocalCachedMap`, `RListMultimap` and `RSetMultimap`, and on `RSet` / `RSetCache` for a
//! value: the interop tests compare all of their names with Redisson's).
//!
//! Such an object is an ordinary lock or synchronizer whose name Redisson derives from the map's
//! name and the entry's key: `{map}:<hash>:<suffix>` (`map:<hash>:<suffix>` when the map's name
//! has a `{`), where `<hash>` is [`EntryKey::hash`] of the key as the map's codec encodes it.
//! Nothing else differs: the handles are the crate's usual ones on that name.

mod codec;
mod hash;
mod key;

pub use codec::Codec;
pub use key::EntryKey;

use crate::client::Client;
use crate::error::{Error, Result};

/// Which object of an entry: each has its own name (the suffix Redisson gives it).
///
/// ```
/// use redisson_lock::{entry_name, Codec, EntryKey, EntryObject};
///
/// let key = EntryKey::string(Codec::String, "k")?;
/// assert_eq!(entry_name("m", &key, EntryObject::Lock), "{m}:zGp2RnUc2cZchMHly8iqUA:lock");
/// assert_eq!(EntryObject::ReadWriteLock.suffix(), "rw_lock");
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryObject {
    /// `getLock(key)`: a reentrant lock, suffix `lock`.
    Lock,
    /// `getFairLock(key)`, suffix `fairlock`.
    FairLock,
    /// `getReadWriteLock(key)`, suffix `rw_lock`.
    ReadWriteLock,
    /// `getSemaphore(key)`, suffix `semaphore`.
    Semaphore,
    /// `getPermitExpirableSemaphore(key)`, suffix `permitexpirablesemaphore`.
    PermitExpirableSemaphore,
    /// `getCountDownLatch(key)`, suffix `countdownlatch`.
    CountDownLatch,
}

impl EntryObject {
    /// Every object of an entry.
    pub const ALL: [EntryObject; 6] = [
        EntryObject::Lock,
        EntryObject::FairLock,
        EntryObject::ReadWriteLock,
        EntryObject::Semaphore,
        EntryObject::PermitExpirableSemaphore,
        EntryObject::CountDownLatch,
    ];

    /// The last part of the object's name.
    pub fn suffix(self) -> &'static str {
        match self {
            EntryObject::Lock => "lock",
            EntryObject::FairLock => "fairlock",
            EntryObject::ReadWriteLock => "rw_lock",
            EntryObject::Semaphore => "semaphore",
            EntryObject::PermitExpirableSemaphore => "permitexpirablesemaphore",
            EntryObject::CountDownLatch => "countdownlatch",
        }
    }
}

/// The name Redisson gives `object` of the entry `key` of the map (or set) `map_name`, with no
/// name mapper: `{map_name}:<hash>:<suffix>`, or `map_name:<hash>:<suffix>` when `map_name` has a
/// `{`. With a [`NameMapper`](crate::NameMapper), use [`Client::map_entry`], which maps the map's
/// name first and the derived name again, as Redisson does.
///
/// ```
/// use redisson_lock::{entry_name, Codec, EntryKey, EntryObject};
///
/// let key = EntryKey::string(Codec::Kryo5, "k")?;
/// assert_eq!(entry_name("{tag}m", &key, EntryObject::CountDownLatch), "{tag}m:PK5e7RsqZhPILwC/8SWg9w:countdownlatch");
/// # Ok::<_, redisson_lock::Error>(())
/// ```
pub fn entry_name(map_name: &str, key: &EntryKey, object: EntryObject) -> String {
    crate::name::suffix_name(map_name, &format!("{}:{}", key.hash(), object.suffix()))
}

/// The part of an entry every object's name is built from: the map's name after the name
/// mapper, and the key's hash.
#[derive(Clone, Debug)]
pub(crate) struct EntryNames {
    map: String,
    hash: String,
}

impl EntryNames {
    /// `map_name` through `mapper` (Redisson's `getRawName()` of the map), with `key`'s hash.
    pub(crate) fn new(mapper: &crate::NameMapper, map_name: &str, key: &EntryKey) -> Result<EntryNames> {
        if map_name.is_empty() {
            return Err(Error::InvalidArgument("map name must not be empty".into()));
        }
        let map = mapper.map(map_name);
        if map.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "the name mapper turned the map name `{map_name}` into an empty name"
            )));
        }
        Ok(EntryNames {
            map,
            hash: key.hash().to_owned(),
        })
    }

    /// The object's name as the object's constructor receives it (before the name mapper's
    /// second pass).
    pub(crate) fn name(&self, object: EntryObject) -> String {
        crate::name::suffix_name(&self.map, &format!("{}:{}", self.hash, object.suffix()))
    }
}

/// The locks and synchronizers of one map entry (or set value): [`Client::map_entry`],
/// [`Client::set_entry`]. Each method returns the crate's usual handle on the entry's object, so
/// a Java service's `map.getLock(key)` and this entry's [`lock`](Self::lock) are one lock.
///
/// With a [`NameMapper`](crate::NameMapper) the name is mapped as Redisson maps it: the map's
/// name first, then the derived name again (as every constructor maps its name).
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use redisson_lock::{Codec, EntryKey};
///
/// // Java: redisson.getMap("orders").getLock("order:42") (the default codec, Kryo5Codec)
/// let entry = client.map_entry("orders", &EntryKey::string(Codec::Kryo5, "order:42")?)?;
/// let guard = entry.lock()?.lock().await?;
/// // ... work on order 42 ...
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MapEntry {
    client: Client,
    names: EntryNames,
}

impl std::fmt::Debug for MapEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapEntry")
            .field("map", &self.names.map)
            .field("hash", &self.names.hash)
            .finish()
    }
}

impl MapEntry {
    /// The name of `object` of this entry, as Java's `getName()` of it returns it: after the
    /// map's name went through the name mapper, before the name mapper's second pass (with the
    /// default mapper, the object's Redis key).
    pub fn name(&self, object: EntryObject) -> String {
        self.names.name(object)
    }

    /// The entry's reentrant lock (Java: `getLock(key)`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the name mapper turns the name into an empty one.
    pub fn lock(&self) -> Result<crate::RLock> {
        self.client.lock(&self.name(EntryObject::Lock))
    }

    /// The entry's fair lock (Java: `getFairLock(key)`).
    ///
    /// # Errors
    ///
    /// As [`lock`](Self::lock).
    pub fn fair_lock(&self) -> Result<crate::RFairLock> {
        self.client.fair_lock(&self.name(EntryObject::FairLock))
    }

    /// The entry's read-write lock (Java: `getReadWriteLock(key)`).
    ///
    /// # Errors
    ///
    /// As [`lock`](Self::lock).
    pub fn read_write_lock(&self) -> Result<crate::RReadWriteLock> {
        self.client
            .read_write_lock(&self.name(EntryObject::ReadWriteLock))
    }

    /// The entry's semaphore (Java: `getSemaphore(key)`).
    ///
    /// # Errors
    ///
    /// As [`lock`](Self::lock).
    pub fn semaphore(&self) -> Result<crate::Semaphore> {
        self.client.semaphore(&self.name(EntryObject::Semaphore))
    }

    /// The entry's permit-expirable semaphore (Java: `getPermitExpirableSemaphore(key)`).
    ///
    /// # Errors
    ///
    /// As [`lock`](Self::lock).
    pub fn permit_expirable_semaphore(&self) -> Result<crate::PermitExpirableSemaphore> {
        self.client
            .permit_expirable_semaphore(&self.name(EntryObject::PermitExpirableSemaphore))
    }

    /// The entry's count-down latch (Java: `getCountDownLatch(key)`).
    ///
    /// # Errors
    ///
    /// As [`lock`](Self::lock); and where the server enforces hash slots (a cluster, or one
    /// address in front of one) [`Error::InvalidArgument`] when the latch's channel hashes to
    /// another slot than its count, which for an entry it does (but for about one map name in
    /// 16,384): Redisson names a latch's channel by wrapping the latch's name in braces, and an
    /// entry's name has braces of its own. Redisson's own latch scripts fail there with
    /// `CROSSSLOT`.
    pub fn count_down_latch(&self) -> Result<crate::CountDownLatch> {
        self.client
            .count_down_latch(&self.name(EntryObject::CountDownLatch))
    }
}

impl Client {
    /// The locks and synchronizers of the entry `key` of the Java map `map_name` (Redisson's
    /// `redisson.getMap(map_name, codec).getLock(key)` and the other per-entry getters; the same
    /// for `RMapCache`, `RLocalCachedMap` and the multimaps). The key's [`Codec`] must be the map's. Nothing is sent yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `map_name` is empty, before or after the name mapper.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// use redisson_lock::{Codec, EntryKey};
    ///
    /// // Java: redisson.getMap("accounts", LongCodec.INSTANCE).getSemaphore(7L)
    /// let sem = client.map_entry("accounts", &EntryKey::long(Codec::Long, 7)?)?.semaphore()?;
    /// let permit = sem.acquire(1).await?;
    /// permit.release().await?;
    /// # Ok(()) }
    /// ```
    pub fn map_entry(&self, map_name: &str, key: &EntryKey) -> Result<MapEntry> {
        Ok(MapEntry {
            client: self.clone(),
            names: EntryNames::new(&self.inner.config.name_mapper, map_name, key)?,
        })
    }

    /// The locks and synchronizers of the value `value` of the Java set `set_name` (Redisson's
    /// `RSet.getLock(value)` & co, and `RSetCache`'s). Redisson names them exactly as a map
    /// entry's: the value as the set's codec encodes it (every [`Codec`] here encodes a value as
    /// it encodes a map key).
    ///
    /// # Errors
    ///
    /// As [`map_entry`](Self::map_entry).
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// use redisson_lock::{Codec, EntryKey};
    ///
    /// // Java: redisson.getSet("jobs", StringCodec.INSTANCE).getFairLock("nightly")
    /// let fair = client.set_entry("jobs", &EntryKey::string(Codec::String, "nightly")?)?.fair_lock()?;
    /// let guard = fair.lock().await?;
    /// guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub fn set_entry(&self, set_name: &str, value: &EntryKey) -> Result<MapEntry> {
        self.map_entry(set_name, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redisson's names (`getMap(map, codec).getLock(key).getName()` & co, harness
    /// `mapEntryName`, 4.7.0).
    #[test]
    fn names_as_redisson_derives_them() {
        let key = EntryKey::string(Codec::String, "k").expect("key");
        let names: Vec<_> = EntryObject::ALL
            .iter()
            .map(|&o| entry_name("m", &key, o))
            .collect();
        assert_eq!(
            names,
            [
                "{m}:zGp2RnUc2cZchMHly8iqUA:lock",
                "{m}:zGp2RnUc2cZchMHly8iqUA:fairlock",
                "{m}:zGp2RnUc2cZchMHly8iqUA:rw_lock",
                "{m}:zGp2RnUc2cZchMHly8iqUA:semaphore",
                "{m}:zGp2RnUc2cZchMHly8iqUA:permitexpirablesemaphore",
                "{m}:zGp2RnUc2cZchMHly8iqUA:countdownlatch",
            ]
        );
        let uuid = uuid::Uuid::parse_str("123e4567-e89b-12d3-a456-426614174000").expect("uuid");
        for (key, name) in [
            (
                EntryKey::long(Codec::Kryo5, 42),
                "{m}:VQXPsX8R0Nuk4PCULzvfjg:lock",
            ),
            (EntryKey::int(Codec::Kryo5, 42), "{m}:Y5MJ+mge9H+XMmohFCsrTg:lock"),
            (
                EntryKey::uuid(Codec::Kryo5, uuid),
                "{m}:cZo/a6ax2M0dNkdHiRmntQ:lock",
            ),
            (
                EntryKey::string(Codec::JsonJackson, "k"),
                "{m}:MVqIGLrZGxv6VtioR3jeNg:lock",
            ),
            (
                EntryKey::long(Codec::JsonJackson, 42),
                "{m}:WwNbBTVB1zGkaLw39wufaA:lock",
            ),
            (
                EntryKey::int(Codec::JsonJackson, 42),
                "{m}:RE0IojEvPTY8Dofe3IkBNA:lock",
            ),
            // Redisson 4.7.0's form of a UUID under JsonJacksonCodec, given as bytes
            (
                Ok(EntryKey::encoded(format!("[\"java.util.UUID\",\"{uuid}\"]"))),
                "{m}:0Ek1q/OjLE1xCFi+kU+2sw:lock",
            ),
            (
                EntryKey::uuid(Codec::String, uuid),
                "{m}:dQ6jkanmtIifV5mBhKjjDQ:lock",
            ),
        ] {
            assert_eq!(entry_name("m", &key.expect("key"), EntryObject::Lock), name);
        }
    }

    #[test]
    fn suffix_rule_and_name_mapper() {
        let key = EntryKey::string(Codec::String, "k").expect("key");
        assert_eq!(
            entry_name("{t}m", &key, EntryObject::Lock),
            "{t}m:zGp2RnUc2cZchMHly8iqUA:lock"
        );
        // the mapper runs on the map's name here; the constructor runs it once more
        let mapper = crate::NameMapper::prefix("app:");
        let names = EntryNames::new(&mapper, "m", &key).expect("names");
        assert_eq!(
            names.name(EntryObject::Lock),
            "{app:m}:zGp2RnUc2cZchMHly8iqUA:lock"
        );
        assert!(EntryNames::new(&mapper, "", &key).is_err());
        let empty = crate::NameMapper::custom(|_| String::new());
        assert!(matches!(
            EntryNames::new(&empty, "m", &key),
            Err(Error::InvalidArgument(_))
        ));
    }
}
