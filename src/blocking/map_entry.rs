//! The blocking twin of [`crate::MapEntry`]: a map entry's (or set value's) locks and
//! synchronizers, as the blocking client's handles.

use super::{Client, CountDownLatch, PermitExpirableSemaphore, RFairLock, RLock, RReadWriteLock, Semaphore};
use crate::error::Result;
use crate::map_entry::EntryNames;
use crate::{EntryKey, EntryObject};

/// The locks and synchronizers of one map entry or set value: the blocking twin of
/// [`crate::MapEntry`] ([`Client::map_entry`], [`Client::set_entry`]).
///
/// ```no_run
/// use redisson_lock::{Codec, EntryKey};
///
/// let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// // Java: redisson.getMap("orders").getLock("order:42")
/// let entry = client.map_entry("orders", &EntryKey::string(Codec::Kryo5, "order:42")?)?;
/// let guard = entry.lock()?.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone)]
pub struct MapEntry {
    client: Client,
    names: EntryNames,
}

impl std::fmt::Debug for MapEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::MapEntry")
            .field("names", &self.names)
            .finish()
    }
}

impl MapEntry {
    /// [`crate::MapEntry::name`].
    pub fn name(&self, object: EntryObject) -> String {
        self.names.name(object)
    }

    /// The entry's reentrant lock: [`crate::MapEntry::lock`].
    pub fn lock(&self) -> Result<RLock> {
        self.client.lock(&self.name(EntryObject::Lock))
    }

    /// The entry's fair lock: [`crate::MapEntry::fair_lock`].
    pub fn fair_lock(&self) -> Result<RFairLock> {
        self.client.fair_lock(&self.name(EntryObject::FairLock))
    }

    /// The entry's read-write lock: [`crate::MapEntry::read_write_lock`].
    pub fn read_write_lock(&self) -> Result<RReadWriteLock> {
        self.client
            .read_write_lock(&self.name(EntryObject::ReadWriteLock))
    }

    /// The entry's semaphore: [`crate::MapEntry::semaphore`].
    pub fn semaphore(&self) -> Result<Semaphore> {
        self.client.semaphore(&self.name(EntryObject::Semaphore))
    }

    /// The entry's permit-expirable semaphore: [`crate::MapEntry::permit_expirable_semaphore`].
    pub fn permit_expirable_semaphore(&self) -> Result<PermitExpirableSemaphore> {
        self.client
            .permit_expirable_semaphore(&self.name(EntryObject::PermitExpirableSemaphore))
    }

    /// The entry's count-down latch: [`crate::MapEntry::count_down_latch`].
    pub fn count_down_latch(&self) -> Result<CountDownLatch> {
        self.client
            .count_down_latch(&self.name(EntryObject::CountDownLatch))
    }
}

impl Client {
    /// The locks and synchronizers of the entry `key` of the Java map `map_name`: the blocking
    /// twin of [`crate::Client::map_entry`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `map_name` is empty,
    /// before or after the name mapper.
    pub fn map_entry(&self, map_name: &str, key: &EntryKey) -> Result<MapEntry> {
        Ok(MapEntry {
            client: self.clone(),
            names: EntryNames::new(&self.config().name_mapper, map_name, key)?,
        })
    }

    /// The locks and synchronizers of the value `value` of the Java set `set_name`: the blocking
    /// twin of [`crate::Client::set_entry`].
    ///
    /// # Errors
    ///
    /// As [`map_entry`](Self::map_entry).
    pub fn set_entry(&self, set_name: &str, value: &EntryKey) -> Result<MapEntry> {
        self.map_entry(set_name, value)
    }
}
