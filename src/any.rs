//! A lock of any kind behind one object-safe type: every Redisson kind *is an* `RLock`, so code
//! that picks the kind at run time (a CLI flag, a configuration) or keeps several kinds in one
//! list works with `Box<dyn AnyLock>` and `Box<dyn AnyGuard>`. [`Lock<K>`](crate::Lock) and
//! [`Guard<K>`](crate::Guard) of every kind implement them; [`RMultiLock`](crate::RMultiLock)'s
//! members are any locks.

use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;

use crate::core::{Guard, Lock};
use crate::error::Result;
use crate::kind::AcquireKind;
use crate::{LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// What the any-lock traits (async and blocking) forward to the handle or guard unchanged, in
/// one list each: `$m!` is called with the list, and writes declarations or implementations.
/// A method added here is on both traits and implemented for every kind.
macro_rules! lock_getters {
    ($m:ident $(, $arg:tt)*) => {
        $m! { $($arg,)* [
            /// [`Lock::key`].
            key() -> &str;
            /// [`Lock::owner`].
            owner() -> Option<OwnerId>;
            /// [`Lock::field`].
            field() -> Option<String>;
        ] }
    };
}
pub(crate) use lock_getters;

/// The handle's queries and its handle-level unlock (see [`lock_getters`]).
macro_rules! lock_queries {
    ($m:ident $(, $arg:tt)*) => {
        $m! { $($arg,)* [
            /// [`Lock::unlock`] (one hold of the handle's owner, without a guard).
            unlock() -> Unlocked;
            /// [`Lock::is_locked`].
            is_locked() -> bool;
            /// [`Lock::is_held`].
            is_held() -> bool;
            /// [`Lock::is_held_by`].
            is_held_by(owner: OwnerId) -> bool;
            /// [`Lock::hold_count`].
            hold_count() -> u64;
            /// [`Lock::remain_time_to_live`].
            remain_time_to_live() -> Ttl;
            /// [`Lock::force_unlock`].
            force_unlock() -> bool;
        ] }
    };
}
pub(crate) use lock_queries;

/// The guard's getters (see [`lock_getters`]).
macro_rules! guard_getters {
    ($m:ident $(, $arg:tt)*) => {
        $m! { $($arg,)* [
            /// [`Guard::key`].
            key() -> &str;
            /// [`Guard::field`].
            field() -> &str;
            /// [`Guard::owner`].
            owner() -> OwnerId;
            /// [`Guard::lease`].
            lease() -> Option<Duration>;
            /// [`Guard::state`].
            state() -> LeaseState;
            /// [`Guard::is_held`].
            is_held() -> bool;
        ] }
    };
}
pub(crate) use guard_getters;

/// Declarations of a list's methods as they are (`fn m(&self, ..) -> T`).
macro_rules! plain_decls {
    ([$($(#[$d:meta])* $name:ident($($a:ident: $t:ty),*) -> $r:ty;)*]) => {
        $($(#[$d])* fn $name(&self $(, $a: $t)*) -> $r;)*
    };
}
pub(crate) use plain_decls;

/// Implementations of a list's methods as they are: `$ty`'s own method of that name.
macro_rules! plain_impls {
    ($ty:ident, [$($(#[$d:meta])* $name:ident($($a:ident: $t:ty),*) -> $r:ty;)*]) => {
        $(fn $name(&self $(, $a: $t)*) -> $r {
            $ty::$name(self $(, $a)*)
        })*
    };
}
pub(crate) use plain_impls;

/// Declarations of a list's methods as boxed futures of results.
macro_rules! async_decls {
    ([$($(#[$d:meta])* $name:ident($($a:ident: $t:ty),*) -> $r:ty;)*]) => {
        $($(#[$d])* fn $name(&self $(, $a: $t)*) -> BoxFuture<'_, Result<$r>>;)*
    };
}

/// Implementations of [`async_decls`]: `Lock`'s own async method, boxed.
macro_rules! async_impls {
    ([$($(#[$d:meta])* $name:ident($($a:ident: $t:ty),*) -> $r:ty;)*]) => {
        $(fn $name(&self $(, $a: $t)*) -> BoxFuture<'_, Result<$r>> {
            Lock::$name(self $(, $a)*).boxed()
        })*
    };
}

/// A lock handle of any kind behind one object-safe type: every Redisson kind *is an* `RLock`,
/// so code that picks the kind at run time (a CLI flag, a configuration) or keeps several kinds
/// in one list works with `Box<dyn AnyLock>`. Every [`Lock<K>`](crate::Lock) implements it; the
/// methods are the handle's, with boxed futures and [`AnyGuard`]s.
/// [`RMultiLock`](crate::RMultiLock)'s members are any locks.
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client, fair: bool) -> redisson_lock::Result<()> {
/// use redisson_lock::AnyLock;
/// let lock: Box<dyn AnyLock> = if fair {
///     Box::new(client.fair_lock("lock:job")?)
/// } else {
///     Box::new(client.lock("lock:job")?)
/// };
/// let guard = lock.lock().await?;
/// println!("{} holds {} ({})", guard.field(), lock.key(), lock.kind());
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
pub trait AnyLock: Send + Sync + 'static {
    lock_getters!(plain_decls);
    lock_queries!(async_decls);
    /// The kind's name: `lock`, `fair`, `non-reentrant fair`, `fenced`, `spin`, `non-reentrant`,
    /// `read` or `write`.
    fn kind(&self) -> &'static str;
    /// [`Lock::with_owner`].
    fn with_owner(&self, owner: OwnerId) -> Box<dyn AnyLock>;
    /// A clone of the handle.
    fn clone_box(&self) -> Box<dyn AnyLock>;
    /// [`Lock::lock`].
    fn lock(&self) -> BoxFuture<'_, Result<Box<dyn AnyGuard>>>;
    /// [`Lock::lock_with_lease`].
    fn lock_with_lease(&self, lease: Duration) -> BoxFuture<'_, Result<Box<dyn AnyGuard>>>;
    /// [`Lock::try_lock_for`] (`Duration::ZERO`: one attempt, as [`Lock::try_lock`]).
    fn try_lock_for(&self, wait: Duration) -> BoxFuture<'_, Result<Option<Box<dyn AnyGuard>>>>;
    /// [`Lock::try_lock_with_lease`].
    fn try_lock_with_lease(
        &self,
        wait: Duration,
        lease: Duration,
    ) -> BoxFuture<'_, Result<Option<Box<dyn AnyGuard>>>>;
}

/// A hold of a lock of any kind, from an [`AnyLock`]: the methods of
/// [`Guard<K>`](crate::Guard), with a boxed future for [`lost`](Self::lost), the fencing token
/// when the kind has one, and [`into_any`](Self::into_any) to get the kind's own guard back. Dropping it releases the hold in the background, as a guard does.
pub trait AnyGuard: Send + Sync + std::fmt::Debug + 'static {
    guard_getters!(plain_decls);
    /// The fencing token of a fenced lock's hold; `None` for the other kinds.
    fn token(&self) -> Option<u64>;
    /// [`Guard::lost`].
    fn lost(&self) -> BoxFuture<'static, LostReason>;
    /// [`Guard::unlock`].
    fn unlock(self: Box<Self>) -> BoxFuture<'static, Result<Unlocked>>;
    /// [`Guard::forget`].
    fn forget(self: Box<Self>);
    /// [`Guard::extend_lease`].
    fn extend_lease(&mut self, lease: Duration) -> BoxFuture<'_, Result<()>>;
    /// The guard itself, to get its kind's own type back (`downcast::<WriteGuard>()` for a
    /// downgrade, say).
    ///
    /// ```no_run
    /// # async fn demo(g: Box<dyn redisson_lock::AnyGuard>) -> redisson_lock::Result<()> {
    /// if let Ok(w) = g.into_any().downcast::<redisson_lock::WriteGuard>() {
    ///     let r = w.downgrade().await?;
    /// #   drop(r);
    /// }
    /// # Ok(()) }
    /// ```
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send>;
}

impl<K: AcquireKind> AnyLock for Lock<K> {
    lock_getters!(plain_impls, Lock);
    lock_queries!(async_impls);

    fn kind(&self) -> &'static str {
        self.kind.label()
    }

    fn with_owner(&self, owner: OwnerId) -> Box<dyn AnyLock> {
        Box::new(Lock::with_owner(self, owner))
    }

    fn clone_box(&self) -> Box<dyn AnyLock> {
        Box::new(self.clone())
    }

    fn lock(&self) -> BoxFuture<'_, Result<Box<dyn AnyGuard>>> {
        async move { Ok(boxed(self.lock_opt(None).await?)) }.boxed()
    }

    fn lock_with_lease(&self, lease: Duration) -> BoxFuture<'_, Result<Box<dyn AnyGuard>>> {
        async move { Ok(boxed(self.lock_opt(Some(lease)).await?)) }.boxed()
    }

    fn try_lock_for(&self, wait: Duration) -> BoxFuture<'_, Result<Option<Box<dyn AnyGuard>>>> {
        async move { Ok(self.try_lock_opt(wait, None).await?.map(boxed)) }.boxed()
    }

    fn try_lock_with_lease(
        &self,
        wait: Duration,
        lease: Duration,
    ) -> BoxFuture<'_, Result<Option<Box<dyn AnyGuard>>>> {
        async move { Ok(self.try_lock_opt(wait, Some(lease)).await?.map(boxed)) }.boxed()
    }
}

fn boxed<K: AcquireKind>(g: Guard<K>) -> Box<dyn AnyGuard> {
    Box::new(g)
}

impl<K: AcquireKind> AnyGuard for Guard<K> {
    guard_getters!(plain_impls, Guard);

    fn token(&self) -> Option<u64> {
        K::fencing_token(&self.grant())
    }

    fn lost(&self) -> BoxFuture<'static, LostReason> {
        Guard::lost(self).boxed()
    }

    fn unlock(self: Box<Self>) -> BoxFuture<'static, Result<Unlocked>> {
        Guard::unlock(*self).boxed()
    }

    fn forget(self: Box<Self>) {
        Guard::forget(*self)
    }

    fn extend_lease(&mut self, lease: Duration) -> BoxFuture<'_, Result<()>> {
        Guard::extend_lease(self, lease).boxed()
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send> {
        self
    }
}

/// Generates [`AnyKind`] from the crate's one list of kinds.
macro_rules! any_kind {
    ($($(#[$ld:meta])* $lock:ident, $(#[$gd:meta])* $guard:ident = $kind:ident $(=> $ctor:ident)?;)*) => {
        /// Every lock kind, as a value: what a configuration or a command-line flag names, for
        /// [`Client::any_lock`](crate::Client::any_lock) (and its blocking twin). Each variant
        /// is named after the kind's type in [`kinds`](crate::kinds); its text form is the
        /// kind's [`label`](Self::label) (`lock`, `fair`, `non-reentrant fair`, `fenced`,
        /// `spin`, `non-reentrant`, `read`, `write`), which [`FromStr`](std::str::FromStr)
        /// also reads with `-` or `_` for the spaces and in any case.
        ///
        /// ```
        /// use redisson_lock::AnyKind;
        ///
        /// assert_eq!("non_reentrant_fair".parse::<AnyKind>()?, AnyKind::NonReentrantFair);
        /// assert_eq!(AnyKind::NonReentrantFair.to_string(), "non-reentrant fair");
        /// assert_eq!(AnyKind::ALL.len(), 8);
        /// assert!("mutex".parse::<AnyKind>().is_err());
        /// # Ok::<_, redisson_lock::Error>(())
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum AnyKind {
            $(
                #[doc = concat!("[`kinds::", stringify!($kind), "`](crate::kinds::", stringify!($kind), "): [`", stringify!($lock), "`](crate::", stringify!($lock), ").")]
                $kind,
            )*
        }

        impl AnyKind {
            /// Every kind, in the order of the crate's list.
            pub const ALL: &'static [AnyKind] = &[$(AnyKind::$kind),*];

            /// The kind's short name, as logs, metrics, [`AnyLock::kind`] and inspection
            /// show it.
            pub fn label(self) -> &'static str {
                match self {
                    $(AnyKind::$kind => crate::kind::Kind::label(
                        <crate::kinds::$kind as crate::kind::AcquireKind>::INSTANCE,
                    ),)*
                }
            }
        }
    };
}

crate::kinds::lock_kinds!(any_kind);

impl std::fmt::Display for AnyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

impl std::str::FromStr for AnyKind {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<AnyKind> {
        let norm = |t: &str| t.to_ascii_lowercase().replace(['_', ' '], "-");
        let wanted = norm(s);
        AnyKind::ALL
            .iter()
            .copied()
            .find(|k| norm(k.label()) == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = AnyKind::ALL.iter().map(|k| k.label()).collect();
                crate::Error::InvalidArgument(format!("no lock kind `{s}` (one of: {})", names.join(", ")))
            })
    }
}
