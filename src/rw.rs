//! Redisson's read-write lock (`RReadWriteLock`): two lock kinds plus thin public types.

use std::sync::Arc;
use std::time::Duration;

use redis::ScriptInvocation;

use crate::client::ClientInner;
use crate::core::{layout, Ctx, Held, LockCore, LockKind};
use crate::error::{Error, Result};
use crate::handle::{lock_guard_methods, lock_handle_methods};
use crate::owner::OwnerSel;
use crate::watchdog::RenewKind;
use crate::{name, script, OwnerId};

/// The read side: shared holds, one `rwlock_timeout` key per hold.
struct Read;

impl LockKind for Read {
    fn label(&self) -> &'static str {
        "read"
    }

    fn channel(&self, key: &str) -> String {
        name::rwlock_channel(key)
    }

    fn acquire(&self, c: &Ctx<'_>, lease_ms: u64, latch: &str, latch_ms: u64) -> ScriptInvocation<'static> {
        let mut inv = script::RW_READ_ACQUIRE.prepare_invoke();
        inv.key(c.key)
            .key(name::rw_timeout_prefix(c.key, c.field))
            .key(latch)
            .arg(lease_ms)
            .arg(c.field)
            .arg(format!("{}:write", c.field))
            .arg(latch_ms);
        inv
    }

    fn release(
        &self,
        c: &Ctx<'_>,
        _lease_ms: u64,
        latch: &str,
        latch_ms: u64,
        all: bool,
    ) -> ScriptInvocation<'static> {
        let mut inv = script::RW_READ_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(c.channel)
            .key(name::rw_timeout_prefix(c.key, c.field))
            .key(name::rw_key_prefix(c.key))
            .key(latch)
            .arg(0)
            .arg(c.field)
            .arg(c.publish)
            .arg(latch_ms)
            .arg(u8::from(all));
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

/// The write side: exclusive, field `<client id>:<owner>:write`, unlock wakes every waiter.
struct Write;

impl LockKind for Write {
    fn label(&self) -> &'static str {
        "write"
    }

    fn field(&self, owner_field: String) -> String {
        owner_field + ":write"
    }

    fn channel(&self, key: &str) -> String {
        name::rwlock_channel(key)
    }

    fn acquire(&self, c: &Ctx<'_>, lease_ms: u64, latch: &str, latch_ms: u64) -> ScriptInvocation<'static> {
        layout::acquire(&script::RW_WRITE_ACQUIRE, c, lease_ms, latch, latch_ms)
    }

    fn release(
        &self,
        c: &Ctx<'_>,
        lease_ms: u64,
        latch: &str,
        latch_ms: u64,
        all: bool,
    ) -> ScriptInvocation<'static> {
        layout::release(&script::RW_WRITE_UNLOCK, c, 1, lease_ms, latch, latch_ms, all)
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        layout::force(&script::RW_WRITE_FORCE_UNLOCK, c, 1)
    }

    fn ttl_only_grows(&self) -> bool {
        true // a write re-entry adds its lease to the TTL (Redisson)
    }
}

static READ: Read = Read;
static WRITE: Write = Write;

/// A read-write lock, wire-compatible with Redisson's `RReadWriteLock`.
///
/// Many owners may hold the [read lock](Self::read_lock) together; the
/// [write lock](Self::write_lock) is exclusive. Redis state: one hash under the key with field
/// `mode` (`read` / `write`), one field per reader `<client id>:<owner>` → read count, and the
/// writer's field `<client id>:<owner>:write` → write count; plus, for each read hold, a key
/// `{<key>}:<reader field>:rwlock_timeout:<k>` whose TTL is that hold's lease (Java read-unlocks
/// use these to decide how long the hash may live). Unlocks publish on `redisson_rwlock:{<key>}`:
/// `0` after a read unlock (wakes one waiter per client), `1` after a write unlock (wakes all).
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
/// let r2 = rw.read_lock().with_owner(2).lock().await?;
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
    pub fn read_lock(&self) -> RReadLock {
        self.read.clone()
    }

    /// The write side (Redisson `writeLock()`).
    pub fn write_lock(&self) -> RWriteLock {
        self.write.clone()
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.read.key()
    }

    /// Both sides acting for a fixed owner id.
    ///
    /// ```no_run
    /// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
    /// let mine = rw.with_owner(7);
    /// let w = mine.write_lock().lock().await?;
    /// # drop(w); Ok(()) }
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
#[derive(Clone)]
pub struct RReadLock {
    core: LockCore,
}

impl RReadLock {
    /// Whether the lock is read-locked (Redisson 3.24+: `read` mode, or `write` mode with reader
    /// fields, i.e. a downgrading writer also reads).
    ///
    /// ```no_run
    /// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
    /// println!("{}", rw.read_lock().is_locked().await?);
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
}

lock_handle_methods!(RReadLock, ReadGuard);

/// The write side of an [`RReadWriteLock`]: exclusive.
#[derive(Clone)]
pub struct RWriteLock {
    core: LockCore,
}

impl RWriteLock {
    /// Whether the lock is write-locked (`HGET <key> mode` is `write`).
    ///
    /// ```no_run
    /// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
    /// println!("{}", rw.write_lock().is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        let mode: Option<String> = self
            .core
            .query(redis::cmd("HGET").arg(&*self.core.key).arg("mode"))
            .await?;
        Ok(mode.as_deref() == Some("write"))
    }
}

lock_handle_methods!(RWriteLock, WriteGuard);

/// Proof of one read hold; see [`LockGuard`](crate::LockGuard) for the drop behaviour.
///
/// ```no_run
/// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
/// let guard = rw.read_lock().lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct ReadGuard {
    held: Held,
}

lock_guard_methods!(ReadGuard);

/// Proof of one write hold; see [`LockGuard`](crate::LockGuard) for the drop behaviour.
///
/// ```no_run
/// # async fn demo(rw: redisson_lock::RReadWriteLock) -> redisson_lock::Result<()> {
/// let guard = rw.write_lock().lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct WriteGuard {
    held: Held,
}

lock_guard_methods!(WriteGuard);

impl WriteGuard {
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
    /// # Examples
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
        let write = self.held.core();
        let mut read = LockCore::new(write.client.clone(), write.key.to_string(), &READ);
        read.owner = OwnerSel::Pinned(self.owner());
        if self.state() != crate::LeaseState::Held {
            return Err(Error::NotHeld {
                key: write.key.to_string(),
                field: self.field().to_owned(),
            });
        }
        let not_held = || Error::NotHeld {
            key: write.key.to_string(),
            field: self.field().to_owned(),
        };
        let read_held = read
            .acquire(Some(Duration::ZERO), self.lease())
            .await?
            .ok_or_else(not_held)?;
        let read_guard = ReadGuard::new(read_held);
        self.unlock().await?;
        Ok(read_guard)
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
