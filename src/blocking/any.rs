//! The blocking twins of [`crate::AnyLock`] and [`crate::AnyGuard`]: a blocking lock of any kind
//! behind one object-safe type, for code that picks the kind at run time.

use std::time::Duration;

use super::{Guard, Lock};
use crate::any::{guard_getters, lock_getters, lock_queries, plain_decls, plain_impls};
use crate::error::Result;
use crate::kind::AcquireKind;
use crate::{LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// Implementations of the methods `blocking_decls!` declares: each calls the blocking `Lock`'s
/// own method.
macro_rules! blocking_impls {
    ([$($(#[$d:meta])* $name:ident($($a:ident: $t:ty),*) -> $r:ty;)*]) => {
        $(fn $name(&self $(, $a: $t)*) -> Result<$r> {
            Lock::$name(self $(, $a)*)
        })*
    };
}

/// Declarations of a list's methods as blocking calls.
macro_rules! blocking_decls {
    ([$($(#[$d:meta])* $name:ident($($a:ident: $t:ty),*) -> $r:ty;)*]) => {
        $($(#[$d])* fn $name(&self $(, $a: $t)*) -> Result<$r>;)*
    };
}

/// A blocking lock handle of any kind: the blocking twin of [`crate::AnyLock`]. Every
/// [`blocking::Lock<K>`](Lock) implements it; each method is the handle's own.
///
/// ```no_run
/// use redisson_lock::blocking::AnyLock;
/// let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let fair = std::env::var("FAIR").is_ok();
/// let lock: Box<dyn AnyLock> = if fair {
///     Box::new(client.fair_lock("lock:job")?)
/// } else {
///     Box::new(client.lock("lock:job")?)
/// };
/// let guard = lock.lock()?;
/// println!("{} holds {} ({})", guard.field(), lock.key(), lock.kind());
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
pub trait AnyLock: Send + Sync + 'static {
    lock_getters!(plain_decls);
    lock_queries!(blocking_decls);
    /// The kind's name, as [`crate::AnyLock::kind`].
    fn kind(&self) -> &'static str;
    /// [`Lock::with_owner`].
    fn with_owner(&self, owner: OwnerId) -> Box<dyn AnyLock>;
    /// A clone of the handle.
    fn clone_box(&self) -> Box<dyn AnyLock>;
    /// [`Lock::lock`].
    fn lock(&self) -> Result<Box<dyn AnyGuard>>;
    /// [`Lock::lock_with_lease`].
    fn lock_with_lease(&self, lease: Duration) -> Result<Box<dyn AnyGuard>>;
    /// [`Lock::try_lock_for`] (`Duration::ZERO`: one attempt).
    fn try_lock_for(&self, wait: Duration) -> Result<Option<Box<dyn AnyGuard>>>;
    /// [`Lock::try_lock_with_lease`].
    fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<Box<dyn AnyGuard>>>;
}

/// A hold of a blocking lock of any kind: the blocking twin of [`crate::AnyGuard`]. Dropping it
/// releases the hold, as a guard does.
pub trait AnyGuard: Send + Sync + std::fmt::Debug + 'static {
    guard_getters!(plain_decls);
    /// The fencing token of a fenced lock's hold; `None` for the other kinds.
    fn token(&self) -> Option<u64>;
    /// [`Guard::lost`].
    fn lost(&self) -> futures::future::BoxFuture<'static, LostReason>;
    /// [`Guard::wait_lost`].
    fn wait_lost(&self, timeout: Duration) -> Option<LostReason>;
    /// [`Guard::unlock`].
    fn unlock(self: Box<Self>) -> Result<Unlocked>;
    /// [`Guard::forget`].
    fn forget(self: Box<Self>);
    /// [`Guard::extend_lease`].
    fn extend_lease(&mut self, lease: Duration) -> Result<()>;
    /// The guard itself, to get its kind's own type back (`downcast::<blocking::WriteGuard>()`).
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send>;
}

fn boxed<K: AcquireKind>(g: Guard<K>) -> Box<dyn AnyGuard> {
    Box::new(g)
}

impl<K: AcquireKind> AnyLock for Lock<K> {
    lock_getters!(plain_impls, Lock);
    lock_queries!(blocking_impls);

    fn kind(&self) -> &'static str {
        self.core.kind.label()
    }

    fn with_owner(&self, owner: OwnerId) -> Box<dyn AnyLock> {
        Box::new(Lock::with_owner(self, owner))
    }

    fn clone_box(&self) -> Box<dyn AnyLock> {
        Box::new(self.clone())
    }

    fn lock(&self) -> Result<Box<dyn AnyGuard>> {
        Lock::lock(self).map(boxed)
    }

    fn lock_with_lease(&self, lease: Duration) -> Result<Box<dyn AnyGuard>> {
        Lock::lock_with_lease(self, lease).map(boxed)
    }

    fn try_lock_for(&self, wait: Duration) -> Result<Option<Box<dyn AnyGuard>>> {
        Ok(Lock::try_lock_for(self, wait)?.map(boxed))
    }

    fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<Box<dyn AnyGuard>>> {
        Ok(Lock::try_lock_with_lease(self, wait, lease)?.map(boxed))
    }
}

impl<K: AcquireKind> AnyGuard for Guard<K> {
    guard_getters!(plain_impls, Guard);

    fn token(&self) -> Option<u64> {
        self.fencing_token()
    }

    fn lost(&self) -> futures::future::BoxFuture<'static, LostReason> {
        Box::pin(Guard::lost(self))
    }

    fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        Guard::wait_lost(self, timeout)
    }

    fn unlock(self: Box<Self>) -> Result<Unlocked> {
        Guard::unlock(*self)
    }

    fn forget(self: Box<Self>) {
        Guard::forget(*self)
    }

    fn extend_lease(&mut self, lease: Duration) -> Result<()> {
        Guard::extend_lease(self, lease)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send> {
        self
    }
}
