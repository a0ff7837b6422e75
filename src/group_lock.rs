//! Redisson's grouped multi-lock (feature `group-lock`): `redisson.getMultiLock(group, values)`
//! (`RedissonFasterMultiLock`, Redisson 3.38+). One Redis hash per group holds one sub-lock per
//! value; a hold is of a whole value set, taken all at once or not at all, and two sets of one
//! group exclude each other when they share a value.
//!
//! # Why a kind, not a multi-lock
//!
//! [`RMultiLock`](crate::RMultiLock) takes several independent locks one by one through their
//! own protocols. The grouped lock is one key whose values are taken and released by a single
//! script: one request per acquisition, like any single lock. So it is a lock kind
//! ([`kinds::Group`](crate::kinds::Group)) on the generic [`Lock<K>`](crate::Lock): its attempts,
//! the settling of an attempt whose reply was lost, cancel safety, releases, the hold table, the
//! watchdog, lease extension, loss detection and shutdown are the machinery every kind runs on.
//! What is particular to a handle, its value set, rides in the hold's identity (see
//! [`RGroupLock::field`]); the kind reads the ids from it for every request.
//!
//! [`RGroupLock`] wraps that `Lock<kinds::Group>` to give the handle-level queries Redisson
//! defines for this lock (`isLocked`: any of the values; `forceUnlock`: the values only;
//! `isHeldByThread`: all of them) instead of the single-hash ones of other kinds; its guards are
//! the crate's usual [`Guard`](crate::Guard)s.

use std::sync::Arc;
use std::time::Duration;

use crate::client::Client;
use crate::core::Lock;
use crate::error::{Error, Result};
use crate::kind::{AcquireKind, Ctx, Kind};
use crate::kinds::group::{self, Group};
use crate::owner::OwnerId;
use crate::{EntryKey, Guard, Unlocked};

/// One hold of an [`RGroupLock`]: the crate's [`Guard`] (unlock, re-entry, lease extension,
/// loss notification). Its [`field`](Guard::field) is the hold's identity (see
/// [`RGroupLock::field`]).
pub type GroupGuard = Guard<Group>;

/// Redisson's grouped multi-lock: the values `values` of the group `group`
/// (`redisson.getMultiLock(group, values)`, Redisson 3.38+). [`Client::group_lock`] makes one.
///
/// A value is named as Redisson names it: the value as the client's codec encodes it
/// (Redisson's default `Kryo5Codec` unless its config sets another), hashed:
/// [`EntryKey::hash`], so the values are given as [`EntryKey`]s of that codec. Holding the set
/// holds each value; another holder of any of them (Java or Rust, any set of the group) makes
/// the acquisition wait. What Redis keeps is on [`kinds::Group`](crate::kinds::Group).
///
/// The acquisitions, owners, leases, watchdog and cancel safety are those of every lock of the
/// crate ([`Lock`]): each acquisition has a fresh owner unless the handle has one
/// ([`with_owner`](Self::with_owner), [`OwnerId::scope`]), a hold of the same owner re-enters
/// (each value's count goes up), and a waiter wakes on the group's unlock messages or when the
/// latest conflicting hold's deadline passes.
///
/// Deadlines are per value, written by the holder's clock and compared with the reader's
/// (Redisson's design): the hosts' clocks must agree to well under a lease.
///
/// One owner holding two overlapping sets of one group through two handles shares the common
/// values' counts in Redis; the last hold of either set frees the common values (the other
/// set's guard then reports the hold lost). Give such holds different owners.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use redisson_lock::{Codec, EntryKey};
///
/// // Java: redisson.getMultiLock("class_100", List.of("Jack_001", "Mary_002")), default codec
/// let values = [
///     EntryKey::string(Codec::Kryo5, "Jack_001")?,
///     EntryKey::string(Codec::Kryo5, "Mary_002")?,
/// ];
/// let students = client.group_lock("class_100", &values)?;
/// let guard = students.lock().await?;
/// // ... both students are ours until unlock ...
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RGroupLock {
    core: Lock<Group>,
    /// The value ids, sorted, no repeats.
    ids: Arc<[String]>,
}

impl std::fmt::Debug for RGroupLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RGroupLock")
            .field("group", &&*self.core.key)
            .field("values", &self.ids.len())
            .field("owner", &self.core.owner)
            .finish()
    }
}

impl Client {
    /// A handle to the values `values` of the group `group` (Redisson's
    /// `getMultiLock(group, values)`): see [`RGroupLock`]. Repeated values count once. Nothing
    /// is sent yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `values` is empty, or `group` is empty (before or after
    /// the name mapper).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// use redisson_lock::{Codec, EntryKey};
    ///
    /// let seats = client.group_lock("flight:LH400", &[EntryKey::long(Codec::Kryo5, 12)?])?;
    /// assert!(client.group_lock("flight:LH400", &[]).is_err());
    /// # let _ = seats; Ok(()) }
    /// ```
    pub fn group_lock(&self, group: &str, values: &[EntryKey]) -> Result<RGroupLock> {
        let key = crate::name::lock_key(&self.inner.config.name_mapper, group)?;
        self.group_lock_of(key, group, values.iter().map(|v| v.hash()))
    }

    /// A handle to the values of `group` named by their ids, the hash fields Redisson names the
    /// values by ([`RGroupLock::value_ids`], or [`inspect`](crate::inspect::inspect)'s
    /// `values`): for tools that act on the values a group holds, e.g. an operator's force
    /// unlock, without knowing the values themselves. Repeated ids count once.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `ids` is empty, an id is empty or not base64 text (the
    /// alphabet of Redisson's value ids: letters, digits, `+`, `/`, `-`, `_`, `=`), or `group`
    /// is empty (before or after the name mapper).
    ///
    /// ```no_run
    /// # fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let seat = client.group_lock_by_ids("flight:LH400", &["zGp2RnUc2cZchMHly8iqUA"])?;
    /// assert!(client.group_lock_by_ids("flight:LH400", &["a,b"]).is_err());
    /// # let _ = seat; Ok(()) }
    /// ```
    pub fn group_lock_by_ids(&self, group: &str, ids: &[&str]) -> Result<RGroupLock> {
        let is_base64 = |c: char| c.is_ascii_alphanumeric() || "+/-_=".contains(c);
        if let Some(bad) = ids.iter().find(|id| id.is_empty() || !id.chars().all(is_base64)) {
            return Err(Error::InvalidArgument(format!(
                "`{bad}` is not a value id of a grouped lock (base64 text)"
            )));
        }
        let key = crate::name::lock_key(&self.inner.config.name_mapper, group)?;
        self.group_lock_of(key, group, ids.iter().copied())
    }

    fn group_lock_of<'a>(
        &self,
        key: String,
        group: &str,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Result<RGroupLock> {
        let tail = group::tail_of(ids).ok_or_else(|| {
            Error::InvalidArgument(format!("a grouped lock of `{group}` needs at least one value"))
        })?;
        let (_, ids) = group::split(&tail);
        let ids: Arc<[String]> = ids.map(str::to_owned).collect();
        let mut core = Lock::new(self.inner.clone(), key, Group::INSTANCE);
        core.tail = Some(tail.into());
        Ok(RGroupLock { core, ids })
    }
}

impl RGroupLock {
    /// The group's Redis key (the group name after the name mapper).
    pub fn key(&self) -> &str {
        self.core.key()
    }

    /// The value ids this handle holds, sorted: the hash fields Redisson names the values by.
    ///
    /// ```no_run
    /// # fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// use redisson_lock::{Codec, EntryKey};
    /// let v = EntryKey::string(Codec::String, "k")?;
    /// assert_eq!(client.group_lock("g", &[v.clone(), v])?.value_ids(), ["zGp2RnUc2cZchMHly8iqUA"]);
    /// # Ok(()) }
    /// ```
    pub fn value_ids(&self) -> &[String] {
        &self.ids
    }

    /// The same values acting for a fixed owner id ([`Lock::with_owner`]): its acquisitions
    /// re-enter each other, and [`unlock`](Self::unlock), [`is_held`](Self::is_held) and
    /// [`hold_count`](Self::hold_count) act for it.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RGroupLock {
        RGroupLock {
            core: self.core.with_owner(owner),
            ids: self.ids.clone(),
        }
    }

    /// The owner this handle acts for ([`Lock::owner`]).
    pub fn owner(&self) -> Option<OwnerId> {
        self.core.owner()
    }

    /// The identity of this handle's owner's holds, when it has an owner: the owner's hash
    /// field in the group, `<client id>:<owner id>`, then `#` and the value ids, comma-separated
    /// (what [`Guard::field`] and [`Error::Lost`] name).
    pub fn field(&self) -> Option<String> {
        self.core.field()
    }

    /// Acquires every value, waiting as long as it takes, in watchdog mode ([`Lock::lock`];
    /// Redisson `lock()`): each value's deadline and the key's TTL get the watchdog timeout,
    /// renewed every timeout/3 while the guard lives.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future is safe at any point: a waiter just leaves; if Redis granted the
    /// values in the attempt in flight (also once Redis answers later), that hold is released
    /// in the background and never renewed.
    ///
    /// # Errors
    ///
    /// As [`Lock::lock`]: [`Error::WrongType`] when the key holds another type,
    /// [`Error::Shutdown`], the last connection error after the retries.
    pub async fn lock(&self) -> Result<GroupGuard> {
        self.core.lock().await
    }

    /// Acquires every value for `lease`, without watchdog ([`Lock::lock_with_lease`]).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a lease under 1 ms or over
    /// [`MAX_DURATION`](crate::MAX_DURATION) (nothing is sent); otherwise as [`lock`](Self::lock).
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<GroupGuard> {
        self.core.lock_with_lease(lease).await
    }

    /// One attempt, no waiting, watchdog mode (Redisson `tryLock()`): `Ok(None)` when another
    /// owner holds one of the values.
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    pub async fn try_lock(&self) -> Result<Option<GroupGuard>> {
        self.core.try_lock().await
    }

    /// Waits up to `wait` (plus one command timeout), watchdog mode ([`Lock::try_lock_for`]).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<GroupGuard>> {
        self.core.try_lock_for(wait).await
    }

    /// Waits up to `wait` and holds for `lease` without watchdog
    /// ([`Lock::try_lock_with_lease`]).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Errors
    ///
    /// As [`lock_with_lease`](Self::lock_with_lease).
    pub async fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<GroupGuard>> {
        self.core.try_lock_with_lease(wait, lease).await
    }

    /// Runs `body` while holding every value (watchdog mode), then releases them
    /// ([`Lock::run`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping the returned future drops `body` and releases the values in the background.
    pub async fn run<F: std::future::Future>(&self, body: F) -> Result<F::Output> {
        self.core.run(body).await
    }

    /// Releases one hold of this handle's owner without a guard (Redisson `unlock()`): each
    /// value's count goes down by one; a value whose last hold goes is freed and the group's
    /// waiters are woken.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future does not cancel the release: the client's background work finishes it.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] when the owner does not hold every value (nothing changes);
    /// [`Error::NoOwner`] when the handle has no owner.
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Frees every value of this handle whoever holds it (Redisson `forceUnlock()` of the
    /// group lock; other values of the group are kept) and wakes the group's waiters. Returns
    /// whether one of the values was held. This client's holds that include one of the values
    /// report [`LostReason::ForceUnlocked`](crate::LostReason::ForceUnlocked); other clients
    /// learn it as any loss (with client tracking about one round trip later, else at their next
    /// renewal). Such a hold's other
    /// values stay in Redis, no longer renewed, until their deadline passes.
    ///
    /// **Use with care:** the holders may still be working.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future may leave the values freed or not; this client's holds are then
    /// told at their next renewal.
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`] when the key holds another Redis type (nothing changes).
    pub async fn force_unlock(&self) -> Result<bool> {
        let c = &self.core;
        let channel = Group::INSTANCE.channel(&c.key, "");
        let identity: String = c.tail.as_deref().unwrap_or_default().to_owned();
        let inv = Group::INSTANCE.force_release(&Ctx {
            key: &c.key,
            channel: &channel,
            field: &identity,
            publish: c.client.publish_cmd,
        });
        let timeout = c.client.config.command_timeout;
        let forcing = c.client.holds.forcing(&c.key);
        let (freed, _): (i64, _) = c
            .client
            .replica_sync
            .run(&c.client.conn, timeout, &c.key, &inv)
            .await?;
        if freed > 0 {
            let ids = &self.ids;
            forcing.deleted(|field| {
                group::split(field)
                    .1
                    .any(|id| ids.binary_search_by(|x| x.as_str().cmp(id)).is_ok())
            });
        }
        tracing::info!(key = %c.key, values = self.ids.len(), freed, "force unlock of a group's values");
        Ok(freed > 0)
    }

    /// Whether anyone holds one of the values (Redisson `isLocked()` of the group lock).
    pub async fn is_locked(&self) -> Result<bool> {
        let c = &self.core;
        let inv = group::is_locked(&c.key, self.ids.iter().map(String::as_str));
        let n: i64 =
            crate::script::run_read(&c.client.conn, c.client.config.command_timeout, &c.key, &inv).await?;
        Ok(n == 1)
    }

    /// Whether this handle's owner holds every value (Redisson `isHeldByCurrentThread()`).
    ///
    /// # Errors
    ///
    /// [`Error::NoOwner`] when the handle has no owner.
    pub async fn is_held(&self) -> Result<bool> {
        Ok(self.hold_count().await? > 0)
    }

    /// Whether `owner` of this client holds every value (Redisson `isHeldByThread(id)`).
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        Ok(self.count_of(owner.into()).await? > 0)
    }

    /// How many times this handle's owner holds the whole set: the fewest holds it has of one
    /// of the values, 0 when it lacks one (Redisson has no `getHoldCount()` for this lock).
    ///
    /// # Errors
    ///
    /// [`Error::NoOwner`] when the handle has no owner.
    pub async fn hold_count(&self) -> Result<u64> {
        self.count_of(self.core.fixed_owner()?).await
    }

    async fn count_of(&self, owner: OwnerId) -> Result<u64> {
        let c = &self.core;
        let inv = group::hold_count(&c.key, &c.field_of(owner));
        let n: u64 =
            crate::script::run_read(&c.client.conn, c.client.config.command_timeout, &c.key, &inv).await?;
        Ok(n)
    }
}
