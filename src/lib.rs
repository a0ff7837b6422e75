//! Distributed locks and synchronizers on Redis, **wire-compatible with Java's [Redisson]**: a
//! Rust service using this crate and a Java service using Redisson lock the same key and see each
//! other's holds, re-entry counts, leases and wake-ups.
//!
//! # Install
//!
//! Not yet published on crates.io; until it is, depend on the repository:
//! `redisson-lock = { git = "https://github.com/redisson-lock/redisson-lock" }` (or
//! `cargo add redisson-lock --git https://github.com/redisson-lock/redisson-lock`). The async
//! [`Client`] runs inside a tokio runtime.
//!
//! | feature | what it adds |
//! |---|---|
//! | (default) | every lock kind and synchronizer, the [`blocking`] facade, single server, Sentinel, Cluster |
//! | `tls-rustls` | `rediss://` / `valkeys://` URLs and `Tls` settings (trust store, client certificate, verification) through rustls |
//! | `metrics` | counters, gauges and histograms through the `metrics` facade ([`guide::operations`]) |
//! | `redisson-config` | Redisson's YAML/JSON configuration files: `RedissonConfig`, `Client::from_redisson_config` |
//! | `map-entry` | the locks and synchronizers of one map entry or set value (Redisson's `RMap.getLock(key)` & co): `Client::map_entry`, `EntryKey`, `Codec` |
//! | `group-lock` | Redisson's grouped multi-lock, one hash per group and a sub-lock per value (`getMultiLock(group, values)`, 3.38+): `Client::group_lock`, `RGroupLock` (implies `map-entry`) |
//!
//! # Connecting
//!
//! | Redis deployment | how |
//! |---|---|
//! | one server, by URL | [`Client::connect`]`("redis://user:pass@host:6379/0")` |
//! | your own `redis::Client` | [`Client::builder`]`().`[`redis_client`](ClientBuilder::redis_client)`(c)` |
//! | your own `ConnectionManager` (or multiplexed / cluster connection) | [`connection`](ClientBuilder::connection)`(conn)` with [`pubsub_client`](ClientBuilder::pubsub_client)`(c)` |
//! | Redis Cluster | [`cluster`](ClientBuilder::cluster)`([node urls])`, pub/sub per [`PublishMode`] |
//! | Sentinel | [`sentinel`](ClientBuilder::sentinel)`([sentinel urls], "mymaster")` |
//! | TLS (`tls-rustls`) | a `rediss://` URL, or `ClientBuilder::tls` with a `Tls` |
//! | the Java service's `redisson.yaml` (`redisson-config`) | `Client::from_redisson_config("redisson.yaml")` |
//!
//! Settings (watchdog timeout, retries, timeouts) are a [`Config`] given to
//! [`ClientBuilder::config`]. Topologies, failover and loss detection: [`guide::deployment`].
//!
//! # Quick start
//!
//! ```no_run
//! use redisson_lock::{Client, Result};
//!
//! #[tokio::main]
//! async fn main() -> Result<()> {
//!     let client = Client::connect("redis://127.0.0.1:6379/").await?;
//!     let lock = client.lock("lock:order:42")?; // Java: redisson.getLock("lock:order:42")
//!     let guard = lock.lock().await?; // no lease: the watchdog renews it
//!     let outcome = tokio::select! {
//!         reason = guard.lost() => { eprintln!("lost it: {reason}"); Ok(()) }
//!         () = process_order(42) => guard.unlock().await.map(drop), // wakes a waiter, Java or Rust
//!     };
//!     client.shutdown().await?; // on every path, before exiting
//!     outcome
//! }
//!
//! async fn process_order(id: u64) {
//!     println!("processing order {id}");
//! }
//! ```
//!
//! Coming from Redisson: [`guide::from_redisson`]. What the crate promises when things go wrong:
//! [`guide::guarantees`].
//!
//! # What you get
//!
//! * [`RLock`]: Redisson's reentrant lock, with the same keys, hash fields, scripts' arguments and
//!   replies, channels and messages (Redisson 3.24+ unlock form with the idempotency latch).
//! * Explicit owners ([`OwnerId`]) instead of thread affinity: by default **every acquisition
//!   has a fresh owner**, so two acquisitions exclude each other even inside one task (as with
//!   `tokio::sync::Mutex`); re-entry is explicit ([`LockGuard::reenter`], [`RLock::with_owner`],
//!   [`OwnerId::scope`]). The blocking facade uses the OS thread, as Java does.
//! * Guards ([`LockGuard`]) that release on drop in the background, never blocking or panicking.
//! * A lock-lost signal ([`LockGuard::lost`]) fed by the watchdog.
//! * One pub/sub connection and one batched watchdog per [`Client`].
//! * [`RReadWriteLock`]: Redisson's read-write lock, including the per-hold timeout keys Java
//!   read-unlocks rely on, downgrade, and batched read-lock renewal.
//! * [`RFencedLock`]: every acquisition takes a fencing token ([`FencedGuard::token`]) for the
//!   protected resource to check; [`RSpinLock`]: waiters poll with a [`BackOff`] instead of
//!   pub/sub; [`RNonReentrantLock`]: an owner's second acquisition is [`Error::AlreadyHeld`].
//! * [`RFairLock`]: first come, first served, Java and Rust waiters in one queue; a waiter that
//!   gives up or is cancelled leaves the queue at once.
//! * [`RMultiLock`]: several locks of any kinds taken together, or a RedLock over independent
//!   Redis servers ([`RMultiLock::red_lock`]).
//! * One API for every kind: the names above are aliases of [`Lock<K>`](Lock) and
//!   [`Guard<K>`](Guard) over the kinds' types in [`kinds`], whose methods are documented once;
//!   a kind's own abilities (a token, a downgrade, a back-off) are methods of that kind only.
//!   [`AnyLock`] / [`AnyGuard`] put any kind behind one object-safe type (every Redisson kind is
//!   an `RLock`).
//! * A blocking facade in [`blocking`], of the same shape: every async method has a blocking
//!   twin, multi-lock and RedLock included.
//!
//! # Leases and the watchdog
//!
//! Without a lease ([`RLock::lock`], [`RLock::try_lock_for`]) the lock's TTL is the watchdog
//! timeout (30 s) and the client renews it every timeout/3 while the guard lives. **Passing a
//! lease turns the watchdog off**: the lock then expires after the lease even if the work is not
//! done, and a second holder may get in. Choose a lease only for work with a hard time bound.
//!
//! # What a Redis lock can and cannot promise
//!
//! Redis replicates asynchronously: a failover can lose a lock another client then takes, and a
//! holder paused longer than its lease (GC, swap, a stopped VM) keeps working after the lock
//! expired. Use these locks to avoid duplicate work and contention, and make the protected
//! resource check ownership where correctness matters (fencing tokens, conditional updates,
//! idempotency keys). When a hold ends early the guard reports it ([`LockGuard::lost`]) and its
//! unlock returns [`Error::NotHeld`] rather than pretending all went well.
//!
//! # When a request's fate is unknown
//!
//! A request that timed out, or whose connection broke, may or may not have run in Redis. The
//! crate never re-sends an acquisition blindly: it asks Redis whether that attempt took effect
//! (every attempt leaves a short-lived record) and either keeps the hold or makes sure the
//! attempt can never take effect. One guard is always one hold. Unlocks are retried with one
//! request id, so a retry can never release twice. A guard whose hold is known to have ended
//! never sends anything, so it cannot take away a later hold. A grant found after its caller
//! gave up, or answered after the time its hold could be trusted, is released at once, whatever
//! its deadline says. The attempt's record lives for the [settle window](Config::settle_window)
//! (25.5 s by default). Connection errors are retried [`Config::with_retry_attempts`] times, then
//! returned: `lock()` does not wait forever for a Redis that is down.
//!
//! # Shutdown
//!
//! Call [`Client::shutdown`] before a service exits: it stops every acquisition (waiters end
//! with [`Error::Shutdown`], never with the lock), releases everything the client holds or had
//! queued, settles every acquisition that was in flight (releasing what it was granted) and
//! deletes its records, so nothing is left in Redis to expire by TTL.
//! [`guide::guarantees`] has the details and the tests that show them.
//!
//! # Cancel safety
//!
//! Every acquire future may be dropped at any point: if Redis granted the lock in the attempt in
//! flight — also long after, once Redis answers again — that hold is released in the background
//! and never renewed; a fair waiter leaves the queue. Dropping an unlock future does not cancel
//! the release: the client's background work finishes it, with the same request id (it never
//! releases twice). [`Client::shutdown`] waits for all such work. None of this costs anything
//! until a future is dropped: requests run in the caller's task, unboxed.
//!
//! [Redisson]: https://github.com/redisson/redisson
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]
// an example that drops a guard it meant to keep (a lock, permits) fails to compile
#![doc(test(attr(deny(unused_must_use))))]
// docs.rs (`--cfg docsrs`, Cargo.toml's [package.metadata.docs.rs]): each feature-gated item
// says which feature it needs
#![cfg_attr(docsrs, feature(doc_cfg))]

mod any;
mod background;
mod backoff;
pub mod blocking;
mod client;
mod config;
mod conn;
mod connect;
mod core;
mod count_down_latch;
mod deadline;
mod error;
mod gone_keys;
#[cfg(feature = "group-lock")]
mod group_lock;
pub mod guide;
mod hold_record;
mod holds;
mod inner;
pub mod inspect;
mod kind;
pub mod kinds;
mod latch_janitor;
mod layout;
mod loss_watch;
mod lost;
#[cfg(feature = "map-entry")]
mod map_entry;
mod metrics;
mod multi;
mod name;
mod once;
mod owner;
mod primitives;
mod pubsub;
#[cfg(feature = "redisson-config")]
mod redisson_config;
mod replica_sync;
mod script;
mod semaphore;
mod sentinel;
mod settle;
mod slots;
mod synchronizer;
#[cfg(feature = "tls-rustls")]
mod tls;
mod waiting;
mod watchdog;

pub use crate::any::{AnyGuard, AnyKind, AnyLock};
pub use crate::backoff::{BackOff, BackOffPolicy};
pub use crate::client::{Client, ClientStats};
pub use crate::config::{Config, LossDetection, PublishMode, ReplicaSync, MAX_DURATION};
pub use crate::conn::Connection;
pub use crate::connect::ClientBuilder;
pub use crate::core::handle::Ttl;
pub use crate::core::Unlocked;
pub use crate::core::{Guard, Lock};
pub use crate::count_down_latch::CountDownLatch;
pub use crate::error::{Error, Result};
pub use crate::kinds::rw::RReadWriteLock;
pub use crate::semaphore::{
    PermitExpirableSemaphore, PermitGuard, PermitId, PermitLease, Semaphore, SemaphoreGuard, MAX_PERMITS,
};

/// The aliases of one [`kinds::lock_kinds`](crate::kinds::lock_kinds) list, for the `Lock` and `Guard` in scope.
macro_rules! kind_aliases {
    ($($(#[$ld:meta])* $lock:ident, $(#[$gd:meta])* $guard:ident = $kind:ident $(=> $ctor:ident)?;)*) => {
        $(
            $(#[$ld])*
            pub type $lock = Lock<crate::kinds::$kind>;
            $(#[$gd])*
            pub type $guard = Guard<crate::kinds::$kind>;
        )*
    };
}
pub(crate) use kind_aliases;

crate::kinds::lock_kinds!(kind_aliases);

#[cfg(feature = "group-lock")]
pub use crate::group_lock::{GroupGuard, RGroupLock};
pub use crate::lost::{LeaseState, LossSignal, LostReason};
#[cfg(feature = "map-entry")]
pub use crate::map_entry::{entry_name, Codec, EntryKey, EntryObject, MapEntry};
pub use crate::multi::{Member, MultiGuard, RMultiLock};
pub use crate::name::NameMapper;
pub use crate::owner::OwnerId;
#[cfg(feature = "redisson-config")]
pub use crate::redisson_config::{RedissonConfig, RedissonConfigLoader, RedissonServers};
pub use crate::sentinel::SentinelConnection;
#[cfg(feature = "tls-rustls")]
pub use crate::tls::{Tls, TlsVerify};

/// The `redis` crate this one is built on, for the types [`Client::connection`] hands out and
/// [`ClientBuilder`] accepts (`redis::Client`, commands, values) without a second, possibly
/// different, `redis` dependency.
pub use redis;

// The Rust blocks of the README are doctests (`cargo test --doc`), as are those of the guides in
// docs/*.md, which are the modules of `guide`. Each block is written as a reader pastes it (a
// whole `main` or function, no hidden `#` lines: tests/markdown.rs); `no_run` when it needs a
// Redis server, and any other block has a language tag (`text`, `sh`, `java`, ...). The README
// shows every feature (TLS, metrics, Redisson's config files): it is a doctest of a build with
// all of them (`--all-features`, as the suite runs).
#[cfg(all(
    doctest,
    feature = "tls-rustls",
    feature = "metrics",
    feature = "redisson-config"
))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
