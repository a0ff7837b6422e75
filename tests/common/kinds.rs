//! Every lock kind behind one type, async (the crate's `AnyLock`, through [`open`]) and blocking
//! ([`BlockingLock`], a test-side enum), so that kind-independent behaviour is tested once for all
//! eight kinds. Each method dispatches to the kind's own handle: nothing here re-implements a lock.
//! What `AnyLock` cannot carry (the generic `Lock::run`, whose body is a type parameter) goes
//! through [`run`], which hands the body to the kind's own `run`.
#![allow(dead_code)]

use std::future::Future;
use std::time::Duration;

use redisson_lock::{blocking, AnyKind, AnyLock, Client, Result, Unlocked};

/// The labels of every lock kind, in the order the tests run them: the library's kinds
/// ([`AnyKind::ALL`], which a test checks this list against), `_` for spaces and hyphens.
pub const KINDS: [&str; 8] = [
    "lock",
    "fair",
    "fenced",
    "spin",
    "non_reentrant",
    "non_reentrant_fair",
    "read",
    "write",
];

/// Whether waiters of `kind` leave a trace in Redis while they wait (the fair queue).
pub fn queues(kind: &str) -> bool {
    kind.ends_with("fair")
}

macro_rules! any_types {
    ($lock:ident, $guard:ident, $m:ident) => {
        /// A handle of any kind.
        pub enum $lock {
            Lock($m::RLock),
            Fair($m::RFairLock),
            Fenced($m::RFencedLock),
            Spin($m::RSpinLock),
            NonReentrant($m::RNonReentrantLock),
            NonReentrantFair($m::RNonReentrantFairLock),
            Read($m::RReadLock),
            Write($m::RWriteLock),
        }

        /// A guard of any kind.
        #[derive(Debug)]
        pub enum $guard {
            Lock($m::LockGuard),
            Fair($m::FairGuard),
            Fenced($m::FencedGuard),
            Spin($m::SpinGuard),
            NonReentrant($m::NonReentrantGuard),
            NonReentrantFair($m::NonReentrantFairGuard),
            Read($m::ReadGuard),
            Write($m::WriteGuard),
        }

        any_types!(@from $guard, $m, Lock LockGuard, Fair FairGuard, Fenced FencedGuard,
            Spin SpinGuard, NonReentrant NonReentrantGuard, NonReentrantFair NonReentrantFairGuard,
            Read ReadGuard, Write WriteGuard);
    };
    (@from $guard:ident, $m:ident, $($v:ident $t:ident),*) => {
        $(impl From<$m::$t> for $guard {
            fn from(g: $m::$t) -> Self {
                $guard::$v(g)
            }
        })*
    };
}

/// `$e` with `$x` bound to the inner value of whichever variant `$v` is.
macro_rules! each {
    ($ty:ident, $v:expr, $x:ident => $e:expr) => {
        match $v {
            $ty::Lock($x) => $e,
            $ty::Fair($x) => $e,
            $ty::Fenced($x) => $e,
            $ty::Spin($x) => $e,
            $ty::NonReentrant($x) => $e,
            $ty::NonReentrantFair($x) => $e,
            $ty::Read($x) => $e,
            $ty::Write($x) => $e,
        }
    };
}

any_types!(BlockingLock, BlockingGuard, blocking);

/// The handle of `kind` for `name`, as the crate's any-lock.
pub fn open(kind: &str, c: &Client, name: &str) -> Box<dyn AnyLock> {
    let kind: AnyKind = kind.parse().unwrap_or_else(|e| panic!("{e}"));
    c.any_lock(kind, name).unwrap()
}

/// `run(body)` on the handle of `kind` for `name`: the crate's generic `Lock::run`, reached
/// through each kind's alias (the kind trait bounding `Lock<K>` cannot be named outside the
/// crate, so a test cannot be generic over `K` itself).
pub async fn run<F: Future>(kind: &str, c: &Client, name: &str, body: F) -> Result<F::Output> {
    match kind {
        "lock" => c.lock(name).unwrap().run(body).await,
        "fair" => c.fair_lock(name).unwrap().run(body).await,
        "fenced" => c.fenced_lock(name).unwrap().run(body).await,
        "spin" => c.spin_lock(name).unwrap().run(body).await,
        "non_reentrant" => c.non_reentrant_lock(name).unwrap().run(body).await,
        "non_reentrant_fair" => c.non_reentrant_fair_lock(name).unwrap().run(body).await,
        "read" => c.read_write_lock(name).unwrap().read_lock().run(body).await,
        "write" => c.read_write_lock(name).unwrap().write_lock().run(body).await,
        other => panic!("no lock kind `{other}`"),
    }
}

/// A handle that excludes holders of `kind` on `name`: the write lock for the read lock, the
/// same kind otherwise.
pub fn rival(kind: &str, c: &Client, name: &str) -> Box<dyn AnyLock> {
    open(if kind == "read" { "write" } else { kind }, c, name)
}

impl BlockingLock {
    /// The handle of `kind` for `name`.
    pub fn open(kind: &str, c: &blocking::Client, name: &str) -> BlockingLock {
        match kind {
            "lock" => BlockingLock::Lock(c.lock(name).unwrap()),
            "fair" => BlockingLock::Fair(c.fair_lock(name).unwrap()),
            "fenced" => BlockingLock::Fenced(c.fenced_lock(name).unwrap()),
            "spin" => BlockingLock::Spin(c.spin_lock(name).unwrap()),
            "non_reentrant" => BlockingLock::NonReentrant(c.non_reentrant_lock(name).unwrap()),
            "non_reentrant_fair" => BlockingLock::NonReentrantFair(c.non_reentrant_fair_lock(name).unwrap()),
            "read" => BlockingLock::Read(c.read_write_lock(name).unwrap().read_lock()),
            "write" => BlockingLock::Write(c.read_write_lock(name).unwrap().write_lock()),
            other => panic!("no lock kind `{other}`"),
        }
    }

    pub fn key(&self) -> String {
        each!(BlockingLock, self, h => h.key().to_owned())
    }

    pub fn lock(&self) -> Result<BlockingGuard> {
        each!(BlockingLock, self, h => h.lock().map(BlockingGuard::from))
    }

    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<BlockingGuard>> {
        each!(BlockingLock, self, h => h.try_lock_for(wait).map(|g| g.map(BlockingGuard::from)))
    }

    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        each!(BlockingLock, self, h => h.run(body))
    }

    pub fn is_locked(&self) -> Result<bool> {
        each!(BlockingLock, self, h => h.is_locked())
    }
}

impl BlockingGuard {
    pub fn unlock(self) -> Result<Unlocked> {
        each!(BlockingGuard, self, g => g.unlock())
    }

    /// The kind's blocking `wait_lost(timeout)`: the reason, or `None` while held.
    pub fn wait_lost(&self, timeout: Duration) -> Option<redisson_lock::LostReason> {
        each!(BlockingGuard, self, g => g.wait_lost(timeout))
    }

    pub fn is_held(&self) -> bool {
        each!(BlockingGuard, self, g => g.is_held())
    }
}
