//! The blocking twin of [`crate::RGroupLock`]: a grouped multi-lock whose methods block the
//! calling thread, the owner being the calling thread unless pinned.

use std::sync::Arc;
use std::time::Duration;

use super::{Client, Guard, Rt};
use crate::error::Result;
use crate::kinds::Group;
use crate::{EntryKey, OwnerId, Unlocked};

/// One hold of a blocking [`RGroupLock`]: the blocking [`Guard`].
pub type GroupGuard = Guard<Group>;

/// The blocking twin of [`crate::RGroupLock`] (Redisson's `getMultiLock(group, values)`): the
/// default owner is the calling thread, as in Java, unless pinned with
/// [`with_owner`](Self::with_owner).
///
/// ```no_run
/// use redisson_lock::{Codec, EntryKey};
///
/// let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let values = [EntryKey::string(Codec::Kryo5, "Jack_001")?, EntryKey::string(Codec::Kryo5, "Mary_002")?];
/// let guard = client.group_lock("class_100", &values)?.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone)]
pub struct RGroupLock {
    rt: Arc<Rt>,
    core: crate::RGroupLock,
    pinned: bool,
}

impl std::fmt::Debug for RGroupLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::RGroupLock")
            .field("core", &self.core)
            .field("pinned", &self.pinned)
            .finish()
    }
}

impl Client {
    /// A handle to the values `values` of the group `group`: [`crate::Client::group_lock`].
    ///
    /// # Errors
    ///
    /// As [`crate::Client::group_lock`].
    pub fn group_lock(&self, group: &str, values: &[EntryKey]) -> Result<RGroupLock> {
        Ok(RGroupLock {
            rt: self.rt.clone(),
            core: self.rt.client.group_lock(group, values)?,
            pinned: false,
        })
    }

    /// A handle to the values of `group` named by their ids: [`crate::Client::group_lock_by_ids`].
    ///
    /// # Errors
    ///
    /// As [`crate::Client::group_lock_by_ids`].
    pub fn group_lock_by_ids(&self, group: &str, ids: &[&str]) -> Result<RGroupLock> {
        Ok(RGroupLock {
            rt: self.rt.clone(),
            core: self.rt.client.group_lock_by_ids(group, ids)?,
            pinned: false,
        })
    }
}

impl RGroupLock {
    /// The async handle acting for this handle's owner: the pinned one, else the calling thread.
    fn owned(&self) -> crate::RGroupLock {
        if self.pinned {
            self.core.clone()
        } else {
            self.core.with_owner(OwnerId::current_thread())
        }
    }

    fn guard(&self, held: crate::GroupGuard) -> GroupGuard {
        Guard::of(self.rt.clone(), held)
    }

    /// [`crate::RGroupLock::key`].
    pub fn key(&self) -> &str {
        self.core.key()
    }

    /// [`crate::RGroupLock::value_ids`].
    pub fn value_ids(&self) -> &[String] {
        self.core.value_ids()
    }

    /// The same values acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RGroupLock {
        RGroupLock {
            rt: self.rt.clone(),
            core: self.core.with_owner(owner),
            pinned: true,
        }
    }

    super::acquisitions!("crate::RGroupLock", GroupGuard);
    super::owner_calls!("crate::RGroupLock");

    super::twins! {"crate::RGroupLock", core;
        fn force_unlock() -> bool;
        fn is_locked() -> bool;
        fn is_held_by(owner: impl Into<OwnerId>) -> bool;
    }
}
