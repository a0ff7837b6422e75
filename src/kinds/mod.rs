//! The lock kinds. Each is one `lua/<kind>/` folder plus one module here that says what it sends
//! and how it reads the replies (the seam, `crate::kind`); its type here names it in the generic
//! public API: [`Lock<K>`](crate::Lock) and [`Guard<K>`](crate::Guard) are written once for every
//! kind, and [`RLock`](crate::RLock), [`RFairLock`](crate::RFairLock), ... are their aliases.
//! A kind's type documents what it keeps in Redis and what it adds to the generic API.

pub(crate) mod fair;
pub(crate) mod fenced;
#[cfg(feature = "group-lock")]
pub(crate) mod group;
pub(crate) mod non_reentrant;
pub(crate) mod reentrant;
pub(crate) mod rw;
pub(crate) mod spin;

use crate::layout::Layout;

pub use fair::{Fair, FairKind, NonReentrantFair};
pub use fenced::Fenced;
#[cfg(feature = "group-lock")]
pub use group::Group;
pub use non_reentrant::NonReentrant;
pub use reentrant::Reentrant;
pub use rw::{Read, Write};
pub use spin::Spin;

/// Every lock kind, as a bound for code generic over them: `Lock<K>` and `Guard<K>` are written
/// once for every kind, and so can your code be. Sealed: implemented by the kinds in this
/// module, and by nothing outside the crate.
///
/// ```
/// use redisson_lock::kinds::LockKind;
/// use redisson_lock::Lock;
///
/// /// Whether the lock is held by anyone, for any kind of lock.
/// async fn busy<K: LockKind>(lock: &Lock<K>) -> redisson_lock::Result<bool> {
///     lock.is_locked().await
/// }
/// ```
pub trait LockKind: crate::kind::AcquireKind {}

impl<K: crate::kind::AcquireKind> LockKind for K {}

/// The kinds one owner may hold more than once ([`Guard::reenter`](crate::Guard::reenter)): all
/// but the non-reentrant ones. Sealed, as [`LockKind`].
///
/// ```
/// use redisson_lock::kinds::ReentrantKind;
/// use redisson_lock::Guard;
///
/// /// A second hold of the same owner, for any reentrant kind.
/// async fn nested<K: ReentrantKind>(outer: &Guard<K>) -> redisson_lock::Result<Guard<K>> {
///     outer.reenter().await
/// }
/// ```
pub trait ReentrantKind: crate::kind::Reenterable + LockKind {}

impl<K: crate::kind::Reenterable> ReentrantKind for K {}

/// Every lock kind, in one list: the public aliases (`RLock`, `LockGuard`, ...), both clients'
/// constructors and [`Client::any_lock`](crate::Client::any_lock), [`AnyKind`](crate::AnyKind),
/// and the layouts inspection reads are generated from it (`lock_kinds!(m)` calls `m!` with the
/// list). An entry: the lock alias and its docs, the guard alias and its docs, the kind's type in
/// this module, and the client's constructor when the kind has one of its own. A new kind is a
/// module here, its scripts, and an entry.
macro_rules! lock_kinds {
    ($then:ident) => {
        $then! {
            /// Redisson's reentrant lock (`RLock`, `getLock(name)`): what it keeps in Redis is on
            /// [`kinds::Reentrant`](crate::kinds::Reentrant), its methods on [`Lock`].
            RLock,
            /// One hold of an [`RLock`] (see [`Guard`]).
            LockGuard = Reentrant => lock;
            /// Redisson's fair lock (`RFairLock`, `getFairLock(name)`): first come, first served,
            /// Java and Rust waiters in one queue ([`kinds::FairKind`](crate::kinds::FairKind));
            /// its methods on [`Lock`].
            RFairLock,
            /// One hold of an [`RFairLock`] (see [`Guard`]).
            FairGuard = Fair => fair_lock;
            /// Redisson's non-reentrant fair lock (`getNonReentrantFairLock(name)`, 4.4+;
            /// [`kinds::FairKind`](crate::kinds::FairKind)); its methods on [`Lock`].
            RNonReentrantFairLock,
            /// One hold of an [`RNonReentrantFairLock`] (see [`Guard`]).
            NonReentrantFairGuard = NonReentrantFair => non_reentrant_fair_lock;
            /// Redisson's fenced lock (`RFencedLock`, `getFencedLock(name)`, 3.19+): every
            /// acquisition takes a fencing token ([`kinds::Fenced`](crate::kinds::Fenced)); its
            /// methods on [`Lock`].
            RFencedLock,
            /// One hold of an [`RFencedLock`], with its [token](Guard::token) (see [`Guard`]).
            FencedGuard = Fenced => fenced_lock;
            /// Redisson's spin lock (`RSpinLock`, `getSpinLock(name)`, 3.15+): waiters poll with a
            /// [`BackOff`](crate::BackOff) ([`kinds::Spin`](crate::kinds::Spin)); its methods on
            /// [`Lock`].
            RSpinLock,
            /// One hold of an [`RSpinLock`] (see [`Guard`]).
            SpinGuard = Spin => spin_lock;
            /// Redisson's non-reentrant lock (`getNonReentrantLock(name)`, 4.4+;
            /// [`kinds::NonReentrant`](crate::kinds::NonReentrant)); its methods on [`Lock`].
            RNonReentrantLock,
            /// One hold of an [`RNonReentrantLock`] (see [`Guard`]).
            NonReentrantGuard = NonReentrant => non_reentrant_lock;
            /// The read side of an [`RReadWriteLock`](crate::RReadWriteLock)
            /// ([`kinds::Read`](crate::kinds::Read)); its methods on [`Lock`].
            RReadLock,
            /// One read hold (see [`Guard`]).
            ReadGuard = Read;
            /// The write side of an [`RReadWriteLock`](crate::RReadWriteLock)
            /// ([`kinds::Write`](crate::kinds::Write)); its methods on [`Lock`].
            RWriteLock,
            /// One write hold, which can [downgrade](Guard::downgrade) (see [`Guard`]).
            WriteGuard = Write;
        }
    };
}
pub(crate) use lock_kinds;

/// The RLock's channel and release scripts, for the kinds that release as it does (the
/// reentrant, non-reentrant and fenced locks): `rlock_release!();` in a `Kind` impl.
macro_rules! rlock_release {
    () => {
        fn write_channel(&self, out: &mut String, key: &str, _field: &str) {
            crate::name::push_lock_channel(out, key)
        }

        fn release(
            &self,
            c: &crate::kind::Ctx<'_>,
            a: &crate::kind::ReleaseArgs<'_>,
        ) -> redis::ScriptInvocation<'static> {
            crate::kind::layout::release(&crate::kinds::reentrant::LOCK_UNLOCK, c, 0, a)
        }

        fn force_release(&self, c: &crate::kind::Ctx<'_>) -> redis::ScriptInvocation<'static> {
            crate::kind::layout::force(&crate::kinds::reentrant::LOCK_FORCE_UNLOCK, c, 0)
        }
    };
}
pub(crate) use rlock_release;

/// What a kind keeps in Redis and sends, declared beside its scripts: read by inspection,
/// force-unlock checks and the CLI's ACL probes (not by the lock machinery).
pub(crate) trait KindLayout {
    /// The kind's layout.
    const LAYOUT: &'static Layout;
    /// The family of layouts it belongs to, which is all Redis can tell of a lock's kind.
    const FAMILY: Family;
}

/// The families of lock layouts inspection tells apart (`inspect::LockKind`): kinds of one
/// family keep the same keys and fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// The RLock's hash alone.
    Lock,
    /// A hash with a `mode` field, and read holds' timeout keys.
    ReadWrite,
    /// A hash, a wait queue and its deadlines.
    Fair,
    /// A hash and a fencing-token counter.
    Fenced,
}

/// Every kind's layout (from [`lock_kinds`]): what inspection, force-unlock checks and the
/// CLI's ACL probes read.
macro_rules! layouts {
    ($($(#[$ld:meta])* $lock:ident, $(#[$gd:meta])* $guard:ident = $kind:ident $(=> $ctor:ident)?;)*) => {
        pub(crate) static LAYOUTS: &[&Layout] = &[$(<$kind as KindLayout>::LAYOUT),*];
        /// Every kind's layout family, in the list's order (that of `AnyKind::ALL`).
        pub(crate) static FAMILIES: &[Family] = &[$(<$kind as KindLayout>::FAMILY),*];
    };
}

lock_kinds!(layouts);

/// Keys and channels several kinds share.
pub(crate) mod common {
    use crate::error::Error;
    use crate::layout::{ChannelSpec, KeySpec};
    use crate::name;

    /// The lock's own key.
    pub(crate) fn lock_key(key: &str, _: &str) -> String {
        key.to_owned()
    }

    fn latch(key: &str, request_id: &str) -> String {
        name::latch(key, request_id)
    }

    fn lock_channel(key: &str, _: &str) -> String {
        name::lock_channel(key)
    }

    /// An acquisition's or release's latch: it records the outcome for the request's retries
    /// and for settling (`resolve_acquire.lua`).
    pub(crate) const LATCH: KeySpec =
        KeySpec::new("attempt latch", latch, Some("string"), true, &["get", "set"])
            .with_client_commands(&["del"]);

    /// What the client reads from a lock hash itself: `is_locked` (`EXISTS`, or the read-write
    /// lock's `HGET mode`), `is_held` (`HEXISTS`), the hold count (`HGET`), the TTL (`PTTL`).
    pub(crate) const LOCK_READS: &[&str] = &["exists", "hexists", "hget", "pttl"];

    /// The RLock's unlock channel `redisson_lock__channel:{N}`.
    pub(crate) const LOCK_CHANNEL: ChannelSpec = ChannelSpec::new("unlock channel", lock_channel, true);

    /// The non-reentrant kinds' refusal of an owner's second hold (Redisson's error code
    /// `NON_REENTRANT_REACQUIRE`, Java's `IllegalMonitorStateException`) as
    /// [`Error::AlreadyHeld`]; any other error as it is.
    pub(crate) fn already_held(key: &str, field: &str, e: Error) -> Error {
        match &e {
            Error::Redis(r) if r.code() == Some("NON_REENTRANT_REACQUIRE") => Error::AlreadyHeld {
                key: key.to_owned(),
                field: field.to_owned(),
            },
            _ => e,
        }
    }

    /// The same channel where the unlock scripts get it as a key.
    pub(crate) const LOCK_CHANNEL_KEY: KeySpec =
        KeySpec::new("unlock channel", lock_channel, None, false, &[]);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::kind::{AcquireKind, Kind};

    /// Every layout declares exactly the commands its scripts send, names the kind as the kind
    /// does, and starts with the lock's own hash.
    #[test]
    fn layouts_declare_what_their_scripts_send() {
        let kinds: [&dyn Kind; 8] = [
            Reentrant::INSTANCE,
            Fair::INSTANCE,
            NonReentrantFair::INSTANCE,
            Fenced::INSTANCE,
            Spin::INSTANCE,
            NonReentrant::INSTANCE,
            Read::INSTANCE,
            Write::INSTANCE,
        ];
        for (layout, kind) in LAYOUTS.iter().zip(kinds) {
            assert_eq!(layout.kind(), kind.label());
            let lock = &layout.keys()[0];
            assert_eq!((lock.role(), lock.redis_type()), ("lock", Some("hash")));
            assert_eq!(lock.name("a", "f"), "a");
            assert_eq!(
                layout.declared_commands(),
                layout.commands(),
                "{}: declared vs. sent by its scripts",
                layout.kind()
            );
            for k in layout.keys() {
                assert_eq!(
                    k.redis_type().is_none(),
                    k.commands().is_empty(),
                    "{}: {}",
                    layout.kind(),
                    k.role()
                );
            }
        }
        let names: BTreeSet<&str> = LAYOUTS.iter().map(|l| l.kind()).collect();
        assert_eq!(names.len(), LAYOUTS.len(), "one layout per kind");
    }

    /// The names a layout gives are the ones the kind's requests use.
    #[test]
    fn layout_names_are_the_requests_names() {
        let fair = &LAYOUTS[1];
        let ch = &fair.channels()[0];
        assert_eq!(ch.name("q", "c:1"), Fair::INSTANCE.channel("q", "c:1"));
        let read = &LAYOUTS[6];
        let t = read
            .keys()
            .iter()
            .find(|k| k.role() == "read hold timeout")
            .unwrap();
        assert_eq!(t.name("d", "c:1"), "{d}:c:1:rwlock_timeout:1");
        assert_eq!(read.channels()[0].name("d", ""), Read::INSTANCE.channel("d", ""));
    }
}
