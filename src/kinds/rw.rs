//! Redisson's read-write lock (`RReadWriteLock`): two kinds (`lua/rw/`) and their public types.

use std::sync::Arc;
use std::time::Duration;

use redis::{ScriptInvocation, Value};

use crate::core::{Guard, Lock};
use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::kind::{
    decode_plain, layout, AcquireArgs, AcquireKind, Ctx, Kind, Query, Reenterable, ReleaseArgs, Renewal,
    Reply,
};

use crate::layout::{ChannelSpec, KeySpec, Layout};
use crate::script::{self, lua};
use crate::{name, OwnerId};

use super::common;

/// The read side of Redisson's read-write lock (`RReadWriteLock.readLock()`): shared with other
/// readers, excluded by a writer (except the writer's own reads: a downgrade);
/// [`RReadLock`](crate::RReadLock) is `Lock<Read>`. Its `is_locked` says whether anyone reads.
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
pub struct Read {
    _sealed: (),
}

impl Kind for Read {
    fn label(&self) -> &'static str {
        "read"
    }

    fn write_channel(&self, out: &mut String, key: &str, _field: &str) {
        name::push_rwlock_channel(out, key)
    }

    fn release(&self, c: &Ctx<'_>, a: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = RW_READ_UNLOCK.prepare_invoke();
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
        layout::force(&RW_READ_FORCE_UNLOCK, c, 0)
    }

    fn renewal(&self) -> Option<&'static dyn Renewal> {
        Some(&ReadRenewal)
    }

    /// Whether anyone reads (Redisson 3.24+: `read` mode, or `write` mode with reader fields,
    /// i.e. a writer that also reads).
    fn is_locked(&self, key: &str) -> Query {
        let mut inv = RW_READ_IS_LOCKED.prepare_invoke();
        inv.key(key);
        Query::Script(inv)
    }

    fn ttl_only_grows(&self) -> bool {
        true // the hash keeps the longest hold's TTL; each hold has its own timeout key
    }
}

impl AcquireKind for Read {
    const INSTANCE: &'static Self = &Read { _sealed: () };

    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = RW_READ_ACQUIRE.prepare_invoke();
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

impl Reenterable for Read {}

/// The write side of Redisson's read-write lock (`RReadWriteLock.writeLock()`): exclusive, field
/// `<client id>:<owner>:write`; [`RWriteLock`](crate::RWriteLock) is `Lock<Write>`. Its
/// `is_locked` says whether anyone writes; its guards can [downgrade](crate::Guard::downgrade).
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
pub struct Write {
    _sealed: (),
}

impl Kind for Write {
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
        layout::release(&RW_WRITE_UNLOCK, c, 1, a)
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        layout::force(&RW_WRITE_FORCE_UNLOCK, c, 1)
    }

    fn ttl_only_grows(&self) -> bool {
        true // a write re-entry adds its lease to the TTL (Redisson)
    }

    /// Whether anyone writes: `HGET <key> mode` is `write`.
    fn is_locked(&self, key: &str) -> Query {
        let mut cmd = redis::cmd("HGET");
        cmd.arg(key).arg("mode");
        Query::Cmd(cmd)
    }

    fn read_is_locked(&self, v: &Value) -> Result<bool> {
        Ok(matches!(v, Value::BulkString(b) if b.as_slice() == b"write"))
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

impl AcquireKind for Write {
    const INSTANCE: &'static Self = &Write { _sealed: () };

    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        layout::acquire(&RW_WRITE_ACQUIRE, c, a)
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

impl Reenterable for Write {}

lua!(RW_READ_ACQUIRE, "rw/read_acquire", with "common/attempt");
lua!(RW_WRITE_ACQUIRE, "rw/write_acquire", with "common/attempt");
lua!(RW_READ_UNLOCK, "rw/read_unlock", with "common/notify");
lua!(RW_WRITE_UNLOCK, "rw/write_unlock", with "common/notify");
lua!(RW_READ_FORCE_UNLOCK, "rw/read_force_unlock", with "common/lock_shape", "common/notify");
lua!(RW_WRITE_FORCE_UNLOCK, "rw/write_force_unlock", with "common/lock_shape", "common/notify");
lua!(RW_READ_IS_LOCKED, "rw/read_is_locked");

fn rw_channel(key: &str, _: &str) -> String {
    let mut s = String::new();
    name::push_rwlock_channel(&mut s, key);
    s
}

fn read_timeout_key(key: &str, field: &str) -> String {
    format!("{}:1", name::rw_timeout_prefix(key, field))
}

fn read_timeout_prefix(key: &str, field: &str) -> String {
    name::rw_timeout_prefix(key, field)
}

fn key_prefix(key: &str, _: &str) -> String {
    name::rw_key_prefix(key)
}

/// The commands the read-write lock's scripts run on its hash.
const RW_HASH_COMMANDS: &[&str] = &[
    "del", "exists", "hdel", "hexists", "hget", "hgetall", "hincrby", "hlen", "hscan", "hset", "pexpire",
    "pttl", "type",
];

/// The unlock scripts get the channel as a key.
const RW_CHANNEL_KEY: KeySpec = KeySpec::new("unlock channel", rw_channel, None, false, &[]);

const RW_CHANNELS: &[ChannelSpec] = &[ChannelSpec::new("unlock channel", rw_channel, true)];

pub(crate) static READ_LAYOUT: Layout = Layout::new(
    "read",
    "getReadWriteLock(..).readLock",
    &[
        KeySpec::new("lock", common::lock_key, Some("hash"), false, RW_HASH_COMMANDS)
            .with_client_commands(common::LOCK_READS),
        KeySpec::new(
            "read hold timeout",
            read_timeout_key,
            Some("string"),
            true,
            &["del", "pexpire", "pttl", "set"],
        ),
        KeySpec::new("read hold timeout prefix", read_timeout_prefix, None, true, &[]),
        KeySpec::new("key prefix", key_prefix, None, false, &[]),
        RW_CHANNEL_KEY,
        common::LATCH,
    ],
    RW_CHANNELS,
    &[
        &RW_READ_ACQUIRE,
        &RW_READ_UNLOCK,
        &RW_READ_FORCE_UNLOCK,
        &RW_READ_IS_LOCKED,
        &RW_READ_RENEW_BATCH,
        &script::RESOLVE_ACQUIRE,
        &script::RESOLVE_BY_FIELD,
        &script::MISSING,
    ],
);

pub(crate) static WRITE_LAYOUT: Layout = Layout::new(
    "write",
    "getReadWriteLock(..).writeLock",
    &[
        KeySpec::new("lock", common::lock_key, Some("hash"), false, RW_HASH_COMMANDS)
            .with_client_commands(common::LOCK_READS),
        RW_CHANNEL_KEY,
        common::LATCH,
    ],
    RW_CHANNELS,
    &[
        &RW_WRITE_ACQUIRE,
        &RW_WRITE_UNLOCK,
        &RW_WRITE_FORCE_UNLOCK,
        &script::LOCK_RENEW_BATCH,
        &script::RESOLVE_ACQUIRE,
        &script::RESOLVE_BY_FIELD,
        &script::MISSING,
    ],
);

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
///   [`Error::WouldDeadlock`](crate::Error::WouldDeadlock) instead of waiting forever;
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
    read: Lock<Read>,
    write: Lock<Write>,
}

impl RReadWriteLock {
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> RReadWriteLock {
        RReadWriteLock {
            read: Lock::new(client.clone(), key.clone(), Read::INSTANCE),
            write: Lock::new(client, key, Write::INSTANCE),
        }
    }

    /// The read side (Redisson `readLock()`).
    ///
    /// ```no_run
    /// # fn demo(rw: redisson_lock::RReadWriteLock) { let read = rw.read_lock(); }
    /// ```
    pub fn read_lock(&self) -> Lock<Read> {
        self.read.clone()
    }

    /// The write side (Redisson `writeLock()`).
    ///
    /// ```no_run
    /// # fn demo(rw: redisson_lock::RReadWriteLock) { let write = rw.write_lock(); }
    /// ```
    pub fn write_lock(&self) -> Lock<Write> {
        self.write.clone()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(rw: redisson_lock::RReadWriteLock) { println!("{}", rw.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.read.key
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

impl Guard<Write> {
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
    /// [`Error::NotHeld`](crate::Error::NotHeld) when the write hold had already ended.
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
    pub async fn downgrade(self) -> Result<Guard<Read>> {
        if !self.is_held() {
            return Err(self.not_held());
        }
        let write = self.core();
        let read =
            Lock::new(write.client.clone(), write.key.to_string(), Read::INSTANCE).with_owner(self.owner());
        let read_guard = read
            .try_lock_opt(Duration::ZERO, self.lease())
            .await?
            .ok_or_else(|| self.not_held())?;
        self.unlock().await?;
        Ok(read_guard)
    }
}

/// A read hold's renewal (`lua/rw/read_renew_batch.lua`): the owner's timeout keys and the hash.
struct ReadRenewal;

impl Renewal for ReadRenewal {
    fn name(&self) -> &'static str {
        "read holds"
    }

    fn renew(&self, ttl_ms: u64, locks: &[(&str, Vec<&str>)], track: bool) -> ScriptInvocation<'static> {
        let mut inv = RW_READ_RENEW_BATCH.prepare_invoke();
        inv.arg(ttl_ms);
        for (key, fields) in locks {
            inv.key(*key)
                .key(crate::name::rw_key_prefix(key))
                .arg(fields.len());
            for field in fields {
                inv.arg(*field);
            }
        }
        inv.arg(u8::from(track));
        inv
    }
}

lua!(RW_READ_RENEW_BATCH, "rw/read_renew_batch", with "common/extend_ttl");

impl super::KindLayout for Read {
    const LAYOUT: &'static Layout = &READ_LAYOUT;
    const FAMILY: super::Family = super::Family::ReadWrite;
}

impl super::KindLayout for Write {
    const LAYOUT: &'static Layout = &WRITE_LAYOUT;
    const FAMILY: super::Family = super::Family::ReadWrite;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync_static<T: Send + Sync + 'static>() {}

    #[test]
    fn bounds() {
        assert_send_sync_static::<crate::ReadGuard>();
        assert_send_sync_static::<crate::WriteGuard>();
        assert_send_sync_static::<RReadWriteLock>();
    }
}
