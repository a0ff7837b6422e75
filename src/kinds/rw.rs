//! Redisson's read-write lock (`RReadWriteLock`): two kinds (`lua/rw/`) and their public types.

use std::sync::Arc;
use std::time::Duration;

use redis::{ScriptInvocation, Value};

use crate::core::{Held, LockCore};
use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::kind::{
    decode_plain, layout, AcquireArgs, AcquireKind, Ctx, Kind, Reentrant, ReleaseArgs, RenewKind, Reply,
};

use crate::{name, script, LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// The read side: shared holds, one `rwlock_timeout` key per hold.
pub(crate) struct ReadKind;

impl Kind for ReadKind {
    fn label(&self) -> &'static str {
        "read"
    }

    fn write_channel(&self, out: &mut String, key: &str, _field: &str) {
        name::push_rwlock_channel(out, key)
    }

    fn release(&self, c: &Ctx<'_>, a: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = script::RW_READ_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(c.channel)
            .key(name::rw_timeout_prefix(c.key, c.field))
            .key(name::rw_key_prefix(c.key))
            .key(a.latch)
            .arg(0)
            .arg(c.field)
            .arg(c.publish)
            .arg(a.latch_ms)
            .arg(u8::from(a.all));
        inv
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        layout::force(&script::RW_READ_FORCE_UNLOCK, c, 0)
    }

    fn renew(&self) -> RenewKind {
        RenewKind::Read
    }

    fn ttl_only_grows(&self) -> bool {
        true // the hash keeps the longest hold's TTL; each hold has its own timeout key
    }
}

impl AcquireKind for ReadKind {
    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = script::RW_READ_ACQUIRE.prepare_invoke();
        inv.key(c.key)
            .key(name::rw_timeout_prefix(c.key, c.field))
            .key(a.latch)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(format!("{}:write", c.field))
            .arg(a.latch_ms);
        inv
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

impl Reentrant for ReadKind {}

/// The write side: exclusive, field `<client id>:<owner>:write`, unlock wakes every waiter.
pub(crate) struct WriteKind;

impl Kind for WriteKind {
    fn label(&self) -> &'static str {
        "write"
    }

    fn field_suffix(&self) -> &'static str {
        ":write"
    }

    fn write_channel(&self, out: &mut String, key: &str, _field: &str) {
        name::push_rwlock_channel(out, key)
    }

    fn release(&self, c: &Ctx<'_>, a: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
        layout::release(&script::RW_WRITE_UNLOCK, c, 1, a)
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        layout::force(&script::RW_WRITE_FORCE_UNLOCK, c, 1)
    }

    fn ttl_only_grows(&self) -> bool {
        true // a write re-entry adds its lease to the TTL (Redisson)
    }

    /// `write_acquire.lua` refuses an upgrade (the owner holds a read lock) with this code.
    fn map_error(&self, key: &str, _field: &str, e: Error) -> Error {
        match &e {
            Error::Redis(r) if r.code() == Some("REDISSON_LOCK_WOULD_DEADLOCK") => Error::WouldDeadlock {
                key: key.to_owned(),
                why: "the owner holds a read lock; a write lock would wait for itself forever (read-to-write upgrade)",
            },
            _ => e,
        }
    }
}

impl AcquireKind for WriteKind {
    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        layout::acquire(&script::RW_WRITE_ACQUIRE, c, a)
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

impl Reentrant for WriteKind {}

static READ: ReadKind = ReadKind;
static WRITE: WriteKind = WriteKind;

/// A read-write lock, wire-compatible with Redisson's `RReadWriteLock`.
///
/// Many owners may hold the [read lock](Self::read_lock) together; the
/// [write lock](Self::write_lock) is exclusive. Redis state: one hash under the key with field
/// `mode` (`read` / `write`), one field per reader `<client id>:<owner>` → read count, and the
/// writer's field `<client id>:<owner>:write` → write count; plus, for each read hold, a key
/// `{<key>}:<reader field>:rwlock_timeout:<k>` whose TTL is that hold's lease (Java read-unlocks
/// use these to decide how long the hash may live). Unlocks publish on `redisson_rwlock:{<key>}`:
/// `0` when a read unlock deletes the hash (wakes one waiter per client), `1` when a write unlock
/// does (wakes all).
///
/// Differences from Redisson:
/// * a read holder asking for the write lock (an upgrade, which can never succeed) gets
///   [`Error::WouldDeadlock`] instead of waiting forever;
/// * read-lock renewal never shortens the hash's TTL below another holder's longer lease.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let rw = client.read_write_lock("lock:catalog")?;
/// let r1 = rw.read_lock().lock().await?;            // readers share
/// let r2 = rw.read_lock().lock().await?;
/// drop((r1.unlock().await?, r2.unlock().await?));
/// let w = rw.write_lock().lock().await?;            // writers exclude everyone
/// let r = w.downgrade().await?;                     // write -> read, never unlocked in between
/// r.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct RReadWriteLock {
    read: RReadLock,
    write: RWriteLock,
}

impl RReadWriteLock {
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> RReadWriteLock {
        RReadWriteLock {
            read: RReadLock {
                core: LockCore::new(client.clone(), key.clone(), &READ),
            },
            write: RWriteLock {
                core: LockCore::new(client, key, &WRITE),
            },
        }
    }

    /// The read side (Redisson `readLock()`).
    ///
    /// ```no_run
    /// # fn demo(rw: redisson_lock::RReadWriteLock) { let read = rw.read_lock(); }
    /// ```
    pub fn read_lock(&self) -> RReadLock {
        self.read.clone()
    }

    /// The write side (Redisson `writeLock()`).
    ///
    /// ```no_run
    /// # fn demo(rw: redisson_lock::RReadWriteLock) { let write = rw.write_lock(); }
    /// ```
    pub fn write_lock(&self) -> RWriteLock {
        self.write.clone()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(rw: redisson_lock::RReadWriteLock) { println!("{}", rw.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.read.core.key
    }

    /// Both sides acting for a fixed owner id (a writer that also reads, a downgrade, Java's
    /// thread model).
    ///
    /// ```no_run
    /// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
    /// let mine = rw.with_owner(7);
    /// let w = mine.write_lock().lock().await?;
    /// let r = mine.read_lock().lock().await?; // the writer may read
    /// # drop((w, r)); Ok(()) }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RReadWriteLock {
        let owner = owner.into();
        RReadWriteLock {
            read: self.read.with_owner(owner),
            write: self.write.with_owner(owner),
        }
    }
}

/// The read side of an [`RReadWriteLock`]: shared with other readers, excluded by a writer
/// (except the writer's own reads: a downgrade).
///
/// A read acquisition adds one to the reader's count and writes the hold's own timeout key
/// `{<key>}:<field>:rwlock_timeout:<k>` with the hold's TTL; the hash keeps the longest TTL of
/// all holds. A read unlock removes the newest of the reader's holds and its timeout key and
/// cuts the hash's TTL to the longest remaining hold (of any reader, Java's too); the last hold
/// of the last reader deletes the hash and publishes `0` on `redisson_rwlock:{<key>}`. Partial
/// read unlocks publish nothing.
///
/// ```no_run
/// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
/// let guard = rw.read_lock().lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RReadLock {
    pub(crate) core: LockCore<ReadKind>,
}

/// The write side of an [`RReadWriteLock`]: exclusive.
///
/// A write acquisition sets `mode` to `write` and adds one to the writer's count; a write
/// re-entry *adds* its lease to the remaining TTL (Redisson's rule). A write unlock removes one
/// hold; the last one deletes the hash and publishes `1` on `redisson_rwlock:{<key>}` (every
/// waiter wakes, readers may all get in) — unless the owner also reads (a downgrade), in which
/// case the hash stays in `read` mode and nothing is published.
///
/// ```no_run
/// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
/// let guard = rw.write_lock().lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RWriteLock {
    pub(crate) core: LockCore<WriteKind>,
}

impl RReadLock {
    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(r: redisson_lock::RReadLock) { println!("{}", r.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.core.key
    }

    /// The read side acting for a fixed owner id (its reads re-enter each other; see
    /// [`RLock::with_owner`](crate::RLock::with_owner)).
    ///
    /// ```no_run
    /// # fn demo(r: redisson_lock::RReadLock) { let mine = r.with_owner(7); }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RReadLock {
        RReadLock {
            core: self.core.with_owner(owner.into()),
        }
    }

    /// The owner this handle acts for, if it has one (see [`RLock::owner`](crate::RLock::owner)).
    ///
    /// ```no_run
    /// # fn demo(r: redisson_lock::RReadLock) { assert!(r.owner().is_none()); }
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        self.core.owner.fixed()
    }

    /// The reader field `<client id>:<owner id>` of this handle's owner, if it has one.
    ///
    /// ```no_run
    /// # fn demo(r: redisson_lock::RReadLock) { println!("{:?}", r.with_owner(7).field()); }
    /// ```
    pub fn field(&self) -> Option<String> {
        self.core.handle_field()
    }

    /// Takes a read hold, waiting while a writer (other than this owner) holds the lock;
    /// watchdog mode (Redisson `readLock().lock()`). Cancel safety and errors as
    /// [`RLock::lock`](crate::RLock::lock).
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// let guard = r.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<ReadGuard> {
        self.core.lock(None).await.map(ReadGuard)
    }

    /// Takes a read hold for `lease` (its timeout key gets that TTL; no watchdog), waiting as
    /// long as it takes.
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// let guard = r.lock_with_lease(std::time::Duration::from_secs(10)).await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<ReadGuard> {
        self.core.lock(Some(lease)).await.map(ReadGuard)
    }

    /// One attempt, no waiting (watchdog mode): `Ok(None)` while another owner writes.
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// let maybe = r.try_lock().await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<ReadGuard>> {
        Ok(self.core.try_lock(Duration::ZERO, None).await?.map(ReadGuard))
    }

    /// Waits up to `wait` for a read hold (watchdog mode); returns within `wait` plus one
    /// command timeout.
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// let maybe = r.try_lock_for(std::time::Duration::from_secs(1)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<ReadGuard>> {
        Ok(self.core.try_lock(wait, None).await?.map(ReadGuard))
    }

    /// Waits up to `wait` for a read hold of `lease` (no watchdog).
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let maybe = r.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(10)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<ReadGuard>> {
        Ok(self.core.try_lock(wait, Some(lease)).await?.map(ReadGuard))
    }

    /// Runs `body` under a read hold (watchdog mode); see [`RLock::run`](crate::RLock::run).
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// let n = r.run(async { 1 }).await?;
    /// # let _ = n; Ok(()) }
    /// ```
    pub async fn run<F: std::future::Future>(&self, body: F) -> Result<F::Output> {
        self.core.run(body).await
    }

    /// Releases one read hold of this handle's owner without a guard (Redisson
    /// `readLock().unlock()`); the handle needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// let mine = r.with_owner(7);
    /// mine.lock().await?.forget();
    /// mine.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Deletes the hash if it is in `read` mode (whoever reads) and publishes `0`; a
    /// write-locked lock is left alone (`Ok(false)`). The readers' timeout keys expire by
    /// themselves (Redisson `readLock().forceUnlock()`).
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// let deleted = r.force_unlock().await?;
    /// # let _ = deleted; Ok(()) }
    /// ```
    pub async fn force_unlock(&self) -> Result<bool> {
        self.core.force_unlock().await
    }

    /// Whether the lock is read-locked (Redisson 3.24+: `read` mode, or `write` mode with reader
    /// fields, i.e. a writer that also reads).
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// println!("{}", r.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        let mut inv = script::RW_READ_IS_LOCKED.prepare_invoke();
        inv.key(&*self.core.key);
        let n: i64 = script::run_read(
            &self.core.client.conn,
            self.core.client.config.command_timeout,
            &self.core.key,
            &inv,
        )
        .await?;
        Ok(n == 1)
    }

    /// Whether this handle's owner reads (`HEXISTS` of its reader field); needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// println!("{}", r.with_owner(7).is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.core.is_held().await
    }

    /// Whether `owner` of this client reads.
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// println!("{}", r.is_held_by(7).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.core.is_held_by(owner.into()).await
    }

    /// How many read holds this handle's owner has; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// println!("{}", r.with_owner(7).hold_count().await?);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        self.core.hold_count().await
    }

    /// The hash's remaining time to live (`PTTL`).
    ///
    /// ```no_run
    /// # async fn demo(r: redisson_lock::RReadLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", r.remain_time_to_live().await?);
    /// # Ok(()) }
    /// ```
    pub async fn remain_time_to_live(&self) -> Result<Ttl> {
        self.core.remain_time_to_live().await
    }
}

impl RWriteLock {
    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(w: redisson_lock::RWriteLock) { println!("{}", w.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.core.key
    }

    /// The write side acting for a fixed owner id (its writes re-enter each other; see
    /// [`RLock::with_owner`](crate::RLock::with_owner)).
    ///
    /// ```no_run
    /// # fn demo(w: redisson_lock::RWriteLock) { let mine = w.with_owner(7); }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RWriteLock {
        RWriteLock {
            core: self.core.with_owner(owner.into()),
        }
    }

    /// The owner this handle acts for, if it has one (see [`RLock::owner`](crate::RLock::owner)).
    ///
    /// ```no_run
    /// # fn demo(w: redisson_lock::RWriteLock) { assert!(w.owner().is_none()); }
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        self.core.owner.fixed()
    }

    /// The writer field `<client id>:<owner id>:write` of this handle's owner, if it has one.
    ///
    /// ```no_run
    /// # fn demo(w: redisson_lock::RWriteLock) { println!("{:?}", w.with_owner(7).field()); }
    /// ```
    pub fn field(&self) -> Option<String> {
        self.core.handle_field()
    }

    /// Takes the write lock, waiting while anyone else reads or writes; watchdog mode (Redisson
    /// `writeLock().lock()`). Cancel safety as [`RLock::lock`](crate::RLock::lock).
    ///
    /// # Errors
    ///
    /// [`Error::WouldDeadlock`] when this owner holds a read lock (an upgrade would wait for
    /// itself forever); otherwise as [`RLock::lock`](crate::RLock::lock).
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// let guard = w.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<WriteGuard> {
        self.core.lock(None).await.map(WriteGuard)
    }

    /// Takes the write lock for `lease` (no watchdog), waiting as long as it takes.
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// let guard = w.lock_with_lease(std::time::Duration::from_secs(10)).await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<WriteGuard> {
        self.core.lock(Some(lease)).await.map(WriteGuard)
    }

    /// One attempt, no waiting (watchdog mode).
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// let maybe = w.try_lock().await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<WriteGuard>> {
        Ok(self.core.try_lock(Duration::ZERO, None).await?.map(WriteGuard))
    }

    /// Waits up to `wait` (watchdog mode); returns within `wait` plus one command timeout.
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// let maybe = w.try_lock_for(std::time::Duration::from_secs(1)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<WriteGuard>> {
        Ok(self.core.try_lock(wait, None).await?.map(WriteGuard))
    }

    /// Waits up to `wait` for the write lock for `lease` (no watchdog).
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let maybe = w.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(10)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<WriteGuard>> {
        Ok(self.core.try_lock(wait, Some(lease)).await?.map(WriteGuard))
    }

    /// Runs `body` under the write lock (watchdog mode); see [`RLock::run`](crate::RLock::run).
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// let n = w.run(async { 1 }).await?;
    /// # let _ = n; Ok(()) }
    /// ```
    pub async fn run<F: std::future::Future>(&self, body: F) -> Result<F::Output> {
        self.core.run(body).await
    }

    /// Releases one write hold of this handle's owner without a guard (Redisson
    /// `writeLock().unlock()`); the handle needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// let mine = w.with_owner(7);
    /// mine.lock().await?.forget();
    /// mine.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Deletes the hash if it is in `write` mode (whoever writes) and publishes `1`; a
    /// read-locked lock is left alone (`Ok(false)`) (Redisson `writeLock().forceUnlock()`).
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// let deleted = w.force_unlock().await?;
    /// # let _ = deleted; Ok(()) }
    /// ```
    pub async fn force_unlock(&self) -> Result<bool> {
        self.core.force_unlock().await
    }

    /// Whether the lock is write-locked (`HGET <key> mode` is `write`).
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// println!("{}", w.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        let mode: Option<String> = self
            .core
            .query(redis::cmd("HGET").arg(&*self.core.key).arg("mode"))
            .await?;
        Ok(mode.as_deref() == Some("write"))
    }

    /// Whether this handle's owner writes; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// println!("{}", w.with_owner(7).is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.core.is_held().await
    }

    /// Whether `owner` of this client writes.
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// println!("{}", w.is_held_by(7).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.core.is_held_by(owner.into()).await
    }

    /// How many write holds this handle's owner has; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// println!("{}", w.with_owner(7).hold_count().await?);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        self.core.hold_count().await
    }

    /// The hash's remaining time to live (`PTTL`).
    ///
    /// ```no_run
    /// # async fn demo(w: redisson_lock::RWriteLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", w.remain_time_to_live().await?);
    /// # Ok(()) }
    /// ```
    pub async fn remain_time_to_live(&self) -> Result<Ttl> {
        self.core.remain_time_to_live().await
    }
}

impl std::fmt::Debug for RReadLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RReadLock")
            .field("key", &&*self.core.key)
            .field("owner", &self.core.owner)
            .finish()
    }
}

impl std::fmt::Debug for RWriteLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RWriteLock")
            .field("key", &&*self.core.key)
            .field("owner", &self.core.owner)
            .finish()
    }
}

/// Proof of one read hold; dropping it queues its release (see [`LockGuard`](crate::LockGuard)
/// for what drop does).
///
/// ```no_run
/// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
/// let guard = rw.read_lock().lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct ReadGuard(Held<ReadKind>);

/// Proof of one write hold; dropping it queues its release (see [`LockGuard`](crate::LockGuard)
/// for what drop does).
///
/// ```no_run
/// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
/// let guard = rw.write_lock().lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct WriteGuard(Held<WriteKind>);

impl ReadGuard {
    pub(crate) fn into_held(self) -> Held<ReadKind> {
        self.0
    }

    /// Releases this read hold: its timeout key goes, and the hash's TTL becomes the longest
    /// remaining hold's (any reader's). When no reader is left the hash is deleted and `0` is
    /// published; otherwise nothing is published. Returns [`Unlocked::Released`] when this
    /// owner reads no more (even if others still read), [`Unlocked::Partial`] when it still has
    /// read holds. A hold known to have ended sends nothing.
    ///
    /// # Cancel safety
    ///
    /// Dropping this future does not cancel the release: the client's background work finishes it.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] when the hold had already ended (Redis unchanged).
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::ReadGuard) -> redisson_lock::Result<()> {
    /// g.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(self) -> Result<Unlocked> {
        self.0.unlock().await
    }

    /// Another read hold for this guard's owner (count + 1, a timeout key of its own).
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::ReadGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter().await?;
    /// # drop(again); Ok(()) }
    /// ```
    pub async fn reenter(&self) -> Result<ReadGuard> {
        self.0.reenter(None).await.map(ReadGuard)
    }

    /// Another read hold for this guard's owner, with its own lease.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::ReadGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter_with_lease(std::time::Duration::from_secs(5)).await?;
    /// # drop(again); Ok(()) }
    /// ```
    pub async fn reenter_with_lease(&self, lease: Duration) -> Result<ReadGuard> {
        self.0.reenter(Some(lease)).await.map(ReadGuard)
    }

    /// Resolves when this hold is lost (see [`LostReason`]). Cancel safe: it only observes.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::ReadGuard) { let reason = g.lost().await; }
    /// ```
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.0.lost()
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::ReadGuard) { println!("{:?}", g.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.0.state()
    }

    /// `state() == LeaseState::Held`.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::ReadGuard) { assert!(g.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.0.is_held()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::ReadGuard) { println!("{}", g.key()); }
    /// ```
    pub fn key(&self) -> &str {
        self.0.key()
    }

    /// The reader field of this hold (`<client id>:<owner id>`).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::ReadGuard) { println!("{}", g.field()); }
    /// ```
    pub fn field(&self) -> &str {
        self.0.field()
    }

    /// The owner of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::ReadGuard) { println!("{}", g.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::ReadGuard) { println!("{:?}", g.lease()); }
    /// ```
    pub fn lease(&self) -> Option<Duration> {
        self.0.lease()
    }

    /// Keeps the hold without a guard (renewal goes on in watchdog mode).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::ReadGuard) { g.forget(); }
    /// ```
    pub fn forget(self) {
        self.0.forget()
    }
}

impl WriteGuard {
    pub(crate) fn from_held(held: Held<WriteKind>) -> WriteGuard {
        WriteGuard(held)
    }

    /// Releases this write hold. The owner's last write hold deletes the hash and publishes `1`
    /// (every waiter wakes), unless the owner also reads: then the hash stays, in `read` mode,
    /// and nothing is published. A partial release re-applies the TTL the owner's remaining
    /// holds need. A hold known to have ended sends nothing.
    ///
    /// # Cancel safety
    ///
    /// Dropping this future does not cancel the release: the client's background work finishes it.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] when the hold had already ended (Redis unchanged).
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::WriteGuard) -> redisson_lock::Result<()> {
    /// g.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(self) -> Result<Unlocked> {
        self.0.unlock().await
    }

    /// Another write hold for this guard's owner (a re-entry: it adds its lease to the TTL).
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::WriteGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter().await?;
    /// # drop(again); Ok(()) }
    /// ```
    pub async fn reenter(&self) -> Result<WriteGuard> {
        self.0.reenter(None).await.map(WriteGuard)
    }

    /// Another write hold for this guard's owner, with a lease.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::WriteGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter_with_lease(std::time::Duration::from_secs(5)).await?;
    /// # drop(again); Ok(()) }
    /// ```
    pub async fn reenter_with_lease(&self, lease: Duration) -> Result<WriteGuard> {
        self.0.reenter(Some(lease)).await.map(WriteGuard)
    }

    /// Turns this write hold into a read hold of the same owner without letting anyone in
    /// between: takes the read lock (allowed to the writer), then releases this write hold, which
    /// leaves the lock in `read` mode. The read hold has the same lease mode as this guard.
    ///
    /// If the owner holds the write lock more than once, the lock stays write-locked until the
    /// other write holds are released too.
    ///
    /// # Cancel safety
    ///
    /// If the future is dropped after the read hold was taken, that hold is released in the
    /// background; the write hold is then released by this guard's drop.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] when the write hold had already ended.
    ///
    /// ```no_run
    /// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
    /// let w = rw.write_lock().lock().await?;
    /// let r = w.downgrade().await?;
    /// assert!(rw.read_lock().is_locked().await?);
    /// assert!(!rw.write_lock().is_locked().await?);
    /// r.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn downgrade(self) -> Result<ReadGuard> {
        if !self.is_held() {
            return Err(self.0.not_held());
        }
        let write = self.0.core();
        let read = LockCore::new(write.client.clone(), write.key.to_string(), &READ).with_owner(self.owner());
        let read_held = read
            .try_lock(Duration::ZERO, self.lease())
            .await?
            .ok_or_else(|| self.0.not_held())?;
        let read_guard = ReadGuard(read_held);
        self.unlock().await?;
        Ok(read_guard)
    }

    /// Resolves when this hold is lost (see [`LostReason`]). Cancel safe: it only observes.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::WriteGuard) { let reason = g.lost().await; }
    /// ```
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.0.lost()
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::WriteGuard) { println!("{:?}", g.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.0.state()
    }

    /// `state() == LeaseState::Held`.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::WriteGuard) { assert!(g.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.0.is_held()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::WriteGuard) { println!("{}", g.key()); }
    /// ```
    pub fn key(&self) -> &str {
        self.0.key()
    }

    /// The writer field of this hold (`<client id>:<owner id>:write`).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::WriteGuard) { println!("{}", g.field()); }
    /// ```
    pub fn field(&self) -> &str {
        self.0.field()
    }

    /// The owner of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::WriteGuard) { println!("{}", g.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::WriteGuard) { println!("{:?}", g.lease()); }
    /// ```
    pub fn lease(&self) -> Option<Duration> {
        self.0.lease()
    }

    /// Keeps the hold without a guard (renewal goes on in watchdog mode).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::WriteGuard) { g.forget(); }
    /// ```
    pub fn forget(self) {
        self.0.forget()
    }
}

impl std::fmt::Debug for ReadGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ReadGuard").field(&self.0).finish()
    }
}

impl std::fmt::Debug for WriteGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("WriteGuard").field(&self.0).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync_static<T: Send + Sync + 'static>() {}

    #[test]
    fn bounds() {
        assert_send_sync_static::<ReadGuard>();
        assert_send_sync_static::<WriteGuard>();
        assert_send_sync_static::<RReadWriteLock>();
    }
}
