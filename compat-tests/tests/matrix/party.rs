//! One side of a scenario: a Java worker thread of the harness or a Rust owner (a [`Client`]
//! handle pinned to an owner id), with the operations every lock kind shares.
//!
//! A [`Party`] is not tied to one lock: every operation names the lock by kind and name
//! (`a.lock(LOCK, &name, None)`, `b.try_lock(WRITE, &name)`), so one party can hold the read and
//! the write side of a read-write lock with the same owner field, as Redisson threads do.
//!
//! * Java: the kind picks the harness command (`lock`, `readLock`, `spinLock`, ...; see
//!   [`JavaKind::command`]), sent through the driver's typed [`JavaLock`] calls.
//! * Rust: the kind picks the handle ([`RustLock`]); acquired guards are kept in the party,
//!   newest last, until an unlock (or [`Party::take_guard`]) takes them out.
//!
//! A new lock kind adds its Rust handle to [`RustLock::new`]; its Java side needs nothing here. Operations only one kind has (tokens, downgrade) live in the kind's scenario
//! module, built on [`Party::lang`], [`Party::push_guard`] and [`Party::take_guard`].

use std::time::Duration;

use redisson_lock::{AnyGuard, AnyLock, Client, Error as LockError, OwnerId, Unlocked};
use redisson_lock_compat_tests::{now_ms, Harness, JavaKind, JavaLock, JavaUnlock, Pending, Result};

/// The plain lock (`getLock` / `Client::lock`).
pub const LOCK: JavaKind = JavaKind::Lock;
/// The read side of a read-write lock (`getReadWriteLock(..).readLock()` / `read_lock()`).
pub const READ: JavaKind = JavaKind::Read;
/// The write side of a read-write lock.
pub const WRITE: JavaKind = JavaKind::Write;
/// The fenced lock (`getFencedLock` / `Client::fenced_lock`).
pub const FENCED: JavaKind = JavaKind::Fenced;
/// The spin lock (`getSpinLock` / `Client::spin_lock`).
pub const SPIN: JavaKind = JavaKind::Spin;
/// The non-reentrant lock (`getNonReentrantLock` / `Client::non_reentrant_lock`).
pub const NON_REENTRANT: JavaKind = JavaKind::NonReentrant;
/// The fair lock (`getFairLock` / `Client::fair_lock`).
pub const FAIR: JavaKind = JavaKind::Fair;
/// The non-reentrant fair lock (`getNonReentrantFairLock` / `Client::non_reentrant_fair_lock`).
pub const NON_REENTRANT_FAIR: JavaKind = JavaKind::NonReentrantFair;

/// The kind in messages: `rust lock(N)`, `rust read lock(N)`, `rust write unlock(N)`.
pub fn word(kind: JavaKind) -> &'static str {
    match kind {
        JavaKind::Lock => "",
        JavaKind::Read => "read ",
        JavaKind::Write => "write ",
        JavaKind::Spin => "spin ",
        JavaKind::Fenced => "fenced ",
        JavaKind::NonReentrant => "non-reentrant ",
        JavaKind::Fair => "fair ",
        JavaKind::NonReentrantFair => "non-reentrant fair ",
    }
}

/// The language of a party.
pub enum Lang<'a> {
    /// A harness worker: one Java platform thread, owner `<clientId>:<thread id>`.
    Java { h: &'a Harness, worker: String },
    /// A Rust owner id on a client: owner `<client id>:<owner>`.
    Rust { c: &'a Client, owner: u64 },
}

/// A Rust guard of any kind: the crate's any-guard (`into_any().downcast::<WriteGuard>()` gets a
/// kind's own guard back for what only that kind does).
pub type Guard = Box<dyn AnyGuard>;

/// The Rust handle of one lock kind, pinned to an owner: the crate's any-lock.
pub struct RustLock(Box<dyn AnyLock>);

impl RustLock {
    /// The handle of lock (kind, name) on `c`, pinned to `owner`.
    pub fn new(c: &Client, owner: u64, kind: JavaKind, name: &str) -> Result<RustLock> {
        let e = |what: &str, err: LockError| format!("client.{what}({name}): {err}");
        let lock: Box<dyn AnyLock> = match kind {
            JavaKind::Lock => Box::new(c.lock(name).map_err(|x| e("lock", x))?),
            JavaKind::Read => Box::new(
                c.read_write_lock(name)
                    .map_err(|x| e("read_write_lock", x))?
                    .read_lock(),
            ),
            JavaKind::Write => Box::new(
                c.read_write_lock(name)
                    .map_err(|x| e("read_write_lock", x))?
                    .write_lock(),
            ),
            JavaKind::Fenced => Box::new(c.fenced_lock(name).map_err(|x| e("fenced_lock", x))?),
            JavaKind::Spin => Box::new(c.spin_lock(name).map_err(|x| e("spin_lock", x))?),
            JavaKind::NonReentrant => Box::new(
                c.non_reentrant_lock(name)
                    .map_err(|x| e("non_reentrant_lock", x))?,
            ),
            JavaKind::Fair => Box::new(c.fair_lock(name).map_err(|x| e("fair_lock", x))?),
            JavaKind::NonReentrantFair => Box::new(
                c.non_reentrant_fair_lock(name)
                    .map_err(|x| e("non_reentrant_fair_lock", x))?,
            ),
        };
        Ok(RustLock(lock.with_owner(OwnerId::from(owner))))
    }

    /// The handle itself.
    pub fn any(&self) -> &dyn AnyLock {
        &*self.0
    }

    fn field(&self) -> Option<String> {
        // A read-write lock's reader field (the writer's adds `:write`).
        self.0.field()
    }

    /// `lock()` / `lock_with_lease(lease)`.
    pub async fn lock(&self, lease: Option<Duration>) -> redisson_lock::Result<Guard> {
        match lease {
            None => self.0.lock().await,
            Some(d) => self.0.lock_with_lease(d).await,
        }
    }

    async fn try_lock(&self) -> redisson_lock::Result<Option<Guard>> {
        self.0.try_lock_for(Duration::ZERO).await
    }

    async fn try_lock_for(&self, wait: Duration) -> redisson_lock::Result<Option<Guard>> {
        self.0.try_lock_for(wait).await
    }

    async fn unlock(&self) -> redisson_lock::Result<Unlocked> {
        self.0.unlock().await
    }

    async fn force_unlock(&self) -> redisson_lock::Result<bool> {
        self.0.force_unlock().await
    }

    async fn hold_count(&self) -> redisson_lock::Result<u64> {
        self.0.hold_count().await
    }

    async fn is_locked(&self) -> redisson_lock::Result<bool> {
        self.0.is_locked().await
    }

    async fn is_held(&self) -> redisson_lock::Result<bool> {
        self.0.is_held().await
    }
}

/// A `lock()` started in the background.
pub enum Waiting {
    Java(Box<Pending>),
    /// The guard and the epoch ms of acquisition, or the failure (already a message).
    Rust(tokio::task::JoinHandle<Result<(Guard, f64)>>),
}

impl Waiting {
    pub fn is_done(&mut self) -> bool {
        match self {
            Waiting::Java(p) => p.is_done(),
            Waiting::Rust(j) => j.is_finished(),
        }
    }
}

/// The outcome of an unlock that reached Redis: released at (epoch ms), or "not held" (message).
/// On success: (epoch ms when the unlock call started, epoch ms of its reply).
pub type UnlockResult = std::result::Result<(f64, f64), String>;

/// One side of a scenario (see the module docs).
pub struct Party<'a> {
    /// Java worker or Rust owner.
    pub lang: Lang<'a>,
    /// Rust guards held: (name, kind, guard), newest last.
    guards: Vec<(String, JavaKind, Guard)>,
}

impl<'a> Party<'a> {
    pub fn java(h: &'a Harness, worker: String) -> Party<'a> {
        Party {
            lang: Lang::Java { h, worker },
            guards: Vec::new(),
        }
    }

    pub fn rust(c: &'a Client, owner: u64) -> Party<'a> {
        Party {
            lang: Lang::Rust { c, owner },
            guards: Vec::new(),
        }
    }

    pub fn desc(&self) -> String {
        match &self.lang {
            Lang::Java { worker, .. } => format!("java worker {worker}"),
            Lang::Rust { owner, .. } => format!("rust owner {owner}"),
        }
    }

    /// The Java side of lock (kind, name); `None` for a Rust party.
    pub fn java_lock(&self, kind: JavaKind, name: &str) -> Option<JavaLock<'a>> {
        match &self.lang {
            Lang::Java { h, worker } => Some(h.java_lock(kind, worker, name)),
            Lang::Rust { .. } => None,
        }
    }

    /// The Rust handle of lock (kind, name) pinned to this party's owner (Java: an error).
    pub fn rust_lock(&self, kind: JavaKind, name: &str) -> Result<RustLock> {
        match &self.lang {
            Lang::Rust { c, owner } => RustLock::new(c, *owner, kind, name),
            Lang::Java { .. } => Err("a Java party has no Rust handle".into()),
        }
    }

    /// Files a Rust guard acquired outside the party's own calls.
    pub fn push_guard(&mut self, name: &str, kind: JavaKind, g: Guard) {
        self.guards.push((name.to_owned(), kind, g));
    }

    /// Takes the newest Rust guard of (kind, name) out of the party (Java: `None`).
    pub fn take_guard(&mut self, kind: JavaKind, name: &str) -> Option<Guard> {
        self.guards
            .iter()
            .rposition(|(n, k, _)| n == name && *k == kind)
            .map(|i| self.guards.remove(i).2)
    }

    /// The owner field `<id>:<thread or owner>` (a read-write lock's reader field; the writer
    /// field adds `:write`).
    pub async fn field(&self, kind: JavaKind, name: &str) -> Result<String> {
        match &self.lang {
            Lang::Java { h, worker } => h.field_of(worker).await,
            Lang::Rust { .. } => self
                .rust_lock(kind, name)?
                .field()
                .ok_or_else(|| "a pinned handle has a field".to_owned()),
        }
    }

    /// Blocking acquire (watchdog, or a lease); returns the epoch ms of acquisition.
    pub async fn lock(&mut self, kind: JavaKind, name: &str, lease_ms: Option<u64>) -> Result<f64> {
        if let Some(j) = self.java_lock(kind, name) {
            return Ok(j.lock(lease_ms).await?.ts_ms);
        }
        let w = word(kind);
        let l = self.rust_lock(kind, name)?;
        let g = tokio::time::timeout(
            Duration::from_secs(30),
            l.lock(lease_ms.map(Duration::from_millis)),
        )
        .await
        .map_err(|_| format!("rust {w}lock({name}) did not return within 30 s"))?
        .map_err(|e| format!("rust {w}lock({name}): {e}"))?;
        let at = now_ms();
        self.push_guard(name, kind, g);
        Ok(at)
    }

    /// Starts a blocking `lock()` (watchdog mode) in the background.
    pub async fn start_lock(&self, kind: JavaKind, name: &str) -> Result<Waiting> {
        if let Some(j) = self.java_lock(kind, name) {
            return Ok(Waiting::Java(Box::new(j.start_lock().await?)));
        }
        let l = self.rust_lock(kind, name)?;
        let (w, name) = (word(kind), name.to_owned());
        Ok(Waiting::Rust(tokio::spawn(async move {
            let g = l
                .lock(None)
                .await
                .map_err(|e| format!("rust {w}lock({name}): {e}"))?;
            Ok((g, now_ms()))
        })))
    }

    /// Waits for a background `lock()`; returns the epoch ms of acquisition and, for Java, when
    /// the worker started the call.
    pub async fn finish(
        &mut self,
        kind: JavaKind,
        name: &str,
        waiting: Waiting,
        limit: Duration,
    ) -> Result<(f64, Option<f64>)> {
        match (&self.lang, waiting) {
            (Lang::Java { .. }, Waiting::Java(p)) => {
                let r = p.wait(limit).await?;
                let (ts, start) = (r.ts_ms, r.start_ms);
                r.into_ok()?;
                Ok((ts, Some(start)))
            }
            (Lang::Rust { .. }, Waiting::Rust(j)) => {
                let abort = j.abort_handle();
                let joined = tokio::time::timeout(limit, j).await.map_err(|_| {
                    abort.abort();
                    format!("rust {}lock({name}) not acquired within {limit:?}", word(kind))
                })?;
                let (g, at) = joined.map_err(|e| format!("rust lock task: {e}"))??;
                self.push_guard(name, kind, g);
                Ok((at, None))
            }
            _ => Err("waiting handle of the other language".into()),
        }
    }

    /// One attempt (`tryLock()` / `try_lock()`), watchdog mode.
    pub async fn try_lock(&mut self, kind: JavaKind, name: &str) -> Result<bool> {
        if let Some(j) = self.java_lock(kind, name) {
            return Ok(j.try_lock(None, None).await?.value);
        }
        let got = self
            .rust_lock(kind, name)?
            .try_lock()
            .await
            .map_err(|e| match kind {
                JavaKind::Lock => format!("rust try_lock: {e}"),
                _ => format!("rust {}try_lock({name}): {e}", word(kind)),
            })?;
        Ok(got.map(|g| self.push_guard(name, kind, g)).is_some())
    }

    /// `tryLock(wait)` in watchdog mode; returns whether acquired and when (epoch ms).
    pub async fn try_lock_for(&mut self, kind: JavaKind, name: &str, wait_ms: u64) -> Result<(bool, f64)> {
        if let Some(j) = self.java_lock(kind, name) {
            let a = j.try_lock(Some(wait_ms), None).await?;
            return Ok((a.value, a.ts_ms));
        }
        let got = self
            .rust_lock(kind, name)?
            .try_lock_for(Duration::from_millis(wait_ms))
            .await
            .map_err(|e| format!("rust {}try_lock_for: {e}", word(kind)))?;
        let at = now_ms();
        Ok((got.map(|g| self.push_guard(name, kind, g)).is_some(), at))
    }

    /// Releases one hold. `Ok(Err(msg))` is the "not held" error (IllegalMonitorStateException /
    /// `Error::NotHeld`); any other failure is an `Err`. Rust: the newest guard of (kind, name);
    /// without one, the owner-pinned handle's `unlock()` (a late unlock, after the guards are gone).
    pub async fn unlock(&mut self, kind: JavaKind, name: &str) -> Result<UnlockResult> {
        if let Some(j) = self.java_lock(kind, name) {
            return Ok(match j.unlock().await? {
                JavaUnlock::Released { start_ms, ts_ms } => Ok((start_ms, ts_ms)),
                JavaUnlock::NotHeld(e) => Err(format!("IllegalMonitorStateException: {}", e.message)),
            });
        }
        let w = word(kind);
        let res = match self.take_guard(kind, name) {
            Some(g) => {
                let start = now_ms();
                (start, g.unlock().await)
            }
            None => {
                let start = now_ms();
                (start, self.rust_lock(kind, name)?.unlock().await)
            }
        };
        match res {
            (start, Ok(_)) => Ok(Ok((start, now_ms()))),
            (_, Err(e @ LockError::NotHeld { .. })) => Ok(Err(format!("Error::NotHeld: {e}"))),
            (_, Err(e)) => Err(format!("rust {w}unlock({name}): {e}")),
        }
    }

    /// An unlock that must succeed; returns (call start, reply) in epoch ms.
    pub async fn unlock_ok(&mut self, kind: JavaKind, name: &str) -> Result<(f64, f64)> {
        let who = self.desc();
        self.unlock(kind, name)
            .await?
            .map_err(|e| format!("{who}: {}unlock({name}) failed: {e}", word(kind)))
    }

    /// Returns whether a lock was deleted, and when the call started and returned (epoch ms).
    pub async fn force_unlock(&self, kind: JavaKind, name: &str) -> Result<(bool, f64, f64)> {
        if let Some(j) = self.java_lock(kind, name) {
            let a = j.force_unlock().await?;
            return Ok((a.value, a.start_ms, a.ts_ms));
        }
        let start = now_ms();
        let b = self
            .rust_lock(kind, name)?
            .force_unlock()
            .await
            .map_err(|e| format!("rust {}force_unlock: {e}", word(kind)))?;
        Ok((b, start, now_ms()))
    }

    pub async fn hold_count(&self, kind: JavaKind, name: &str) -> Result<i64> {
        if let Some(j) = self.java_lock(kind, name) {
            return j.hold_count().await;
        }
        self.rust_lock(kind, name)?
            .hold_count()
            .await
            .map(|n| n as i64)
            .map_err(|e| format!("rust {}hold_count: {e}", word(kind)))
    }

    pub async fn is_locked(&self, kind: JavaKind, name: &str) -> Result<bool> {
        if let Some(j) = self.java_lock(kind, name) {
            return j.is_locked().await;
        }
        self.rust_lock(kind, name)?
            .is_locked()
            .await
            .map_err(|e| format!("rust {}is_locked: {e}", word(kind)))
    }

    /// `isHeldByCurrentThread()` / `is_held()`.
    pub async fn is_held(&self, kind: JavaKind, name: &str) -> Result<bool> {
        if let Some(j) = self.java_lock(kind, name) {
            return j.is_held_by_thread().await;
        }
        self.rust_lock(kind, name)?
            .is_held()
            .await
            .map_err(|e| format!("rust {}is_held: {e}", word(kind)))
    }
}
