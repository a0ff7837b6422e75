//! Owner identity: the `<client id>:<owner id>` hash field (`docs/protocol.md`, "Owners").
//!
//! Redisson's owner is the Java thread. Async Rust has no such thing: two futures of one task
//! run concurrently (`join!`, `select!`), so a task id as owner would let both into the lock at
//! once. Our default is therefore a **fresh owner per acquisition**, which gives the semantics
//! of `tokio::sync::Mutex`; re-entry is explicit.

use std::sync::atomic::{AtomicU64, Ordering};

/// Owner ids for OS threads (the blocking facade's default) start here.
const THREAD_OWNER_BASE: u64 = 1 << 40;
/// Fresh per-acquisition owner ids start here (far above thread ids; still a positive Java `long`).
const FRESH_OWNER_BASE: u64 = 1 << 48;

static NEXT_THREAD_OWNER: AtomicU64 = AtomicU64::new(1);
static NEXT_FRESH_OWNER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static THREAD_OWNER: u64 = THREAD_OWNER_BASE + NEXT_THREAD_OWNER.fetch_add(1, Ordering::Relaxed);
}

tokio::task_local! {
    static SCOPE: OwnerId;
}

/// Who holds a lock: the numeric part of the hash field `<client id>:<owner id>`.
///
/// Redisson uses the Java thread id, and every `lock()` by one thread re-enters that thread's
/// hold. Async Rust cannot use that model safely: two futures of one task (`join!`, `select!`,
/// `FuturesUnordered`) run at the same time, so if they shared an owner both would be "inside"
/// the lock at once. So here, as with `tokio::sync::Mutex`:
///
/// * **By default every acquisition gets a fresh owner** ([`OwnerId::fresh`]). Two acquisitions
///   always exclude each other, also within one task; a nested `lock()` on the same lock in the
///   same task **waits for itself** (it does not re-enter), exactly like a nested
///   `tokio::sync::Mutex::lock`.
/// * **Re-entry is explicit**: `guard.reenter()` takes another hold for the guard's owner (the
///   hold count goes to 2, as in Java); [`RLock::with_owner`](crate::RLock::with_owner) pins an
///   owner on a handle (Redisson's `lock(threadId)` overloads; use it to act as a given Java
///   thread or to share one hold between tasks on purpose); [`OwnerId::scope`] runs a future
///   in which every handle without a pinned owner acts for one owner, so nested acquisitions in
///   that future re-enter like nested ones in one Java thread. Futures inside one scope share the
///   owner (and so do not exclude each other): that is the choice the scope makes.
/// * **The blocking facade** ([`crate::blocking`]) keeps Java's model: the default owner is the
///   calling OS thread ([`OwnerId::current_thread`]), which is safe there because a thread runs
///   one call at a time.
///
/// A guard remembers its owner, so it can be released from any task.
///
/// What a Java developer should know: a Rust owner id is a number in the hash field like a
/// Java thread id, and Java sees Rust holds as holds of another thread. Ids the crate makes are
/// at or above 2^40 (threads) and 2^48 (fresh owners); pick your own pinned ids below 2^40.
///
/// # Examples
///
/// ```
/// use redisson_lock::OwnerId;
/// let a = OwnerId::fresh();
/// let b = OwnerId::fresh();
/// assert_ne!(a, b);
/// let thread_owner = std::thread::spawn(OwnerId::current_thread).join().unwrap();
/// assert_ne!(thread_owner, OwnerId::current_thread());
/// assert_eq!(OwnerId::from(57).get(), 57);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OwnerId(u64);

impl OwnerId {
    /// A new owner id, never returned before in this process.
    ///
    /// ```
    /// assert_ne!(redisson_lock::OwnerId::fresh(), redisson_lock::OwnerId::fresh());
    /// ```
    pub fn fresh() -> OwnerId {
        OwnerId(FRESH_OWNER_BASE + NEXT_FRESH_OWNER.fetch_add(1, Ordering::Relaxed))
    }

    /// The owner id of the current OS thread (stable for the thread's life): the blocking
    /// facade's default owner, Java's model.
    ///
    /// ```
    /// use redisson_lock::OwnerId;
    /// assert_eq!(OwnerId::current_thread(), OwnerId::current_thread());
    /// ```
    pub fn current_thread() -> OwnerId {
        OwnerId(THREAD_OWNER.with(|id| *id))
    }

    /// Runs `fut` with `self` as the owner of every acquisition (and every handle-level
    /// `unlock`, `is_held`, `hold_count`) made inside it through a handle without a pinned owner.
    /// Nested acquisitions of one lock in the scope re-enter it, as in one Java thread.
    ///
    /// Scopes nest (the innermost wins) and are task-local: a task spawned inside a scope is
    /// outside it. Futures polled concurrently inside one scope share the owner, so they do not
    /// exclude each other: only put code in one scope that should act as one holder.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use redisson_lock::OwnerId;
    /// OwnerId::fresh().scope(async {
    ///     let outer = lock.lock().await?;
    ///     let inner = lock.lock().await?;          // re-enters: hold count 2
    ///     assert_eq!(lock.hold_count().await?, 2);
    ///     inner.unlock().await?;
    ///     outer.unlock().await?;
    ///     Ok::<_, redisson_lock::Error>(())
    /// }).await
    /// # }
    /// ```
    pub async fn scope<F: std::future::Future>(self, fut: F) -> F::Output {
        SCOPE.scope(self, fut).await
    }

    /// The owner of the innermost [`OwnerId::scope`] around the calling code, if any.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use redisson_lock::OwnerId;
    /// assert_eq!(OwnerId::scoped(), None);
    /// let me = OwnerId::from(7);
    /// assert_eq!(me.scope(async { OwnerId::scoped() }).await, Some(me));
    /// # }
    /// ```
    pub fn scoped() -> Option<OwnerId> {
        SCOPE.try_with(|o| *o).ok()
    }

    /// The numeric id, as written in the hash field.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl From<u64> for OwnerId {
    fn from(id: u64) -> Self {
        OwnerId(id)
    }
}

impl std::fmt::Display for OwnerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// How a lock handle picks its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OwnerSel {
    /// The enclosing [`OwnerId::scope`], else a fresh owner per acquisition.
    Auto,
    /// Always this owner.
    Pinned(OwnerId),
}

impl OwnerSel {
    /// The owner of a new acquisition.
    pub(crate) fn for_acquire(self) -> OwnerId {
        self.fixed().unwrap_or_else(OwnerId::fresh)
    }

    /// The owner handle-level operations (`unlock`, `is_held`, ...) act for, if there is one.
    pub(crate) fn fixed(self) -> Option<OwnerId> {
        match self {
            OwnerSel::Auto => OwnerId::scoped(),
            OwnerSel::Pinned(id) => Some(id),
        }
    }
}

/// The hash field of an owner.
/// `<client id>:<owner id><suffix>`, the owner's hash field, built in one allocation (this runs
/// for every acquisition: owners are per acquisition by default).
pub(crate) fn field(client_id: &str, owner: OwnerId, suffix: &str) -> std::sync::Arc<str> {
    // written by hand into a stack buffer (no formatting machinery), then one allocation
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = owner.0;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let parts: [&[u8]; 4] = [client_id.as_bytes(), b":", &digits[at..], suffix.as_bytes()];
    let mut buf = [0u8; 128];
    let mut len = 0;
    for p in parts {
        let Some(dst) = buf.get_mut(len..len + p.len()) else {
            // an unusually long client id or suffix
            return format!("{client_id}:{}{suffix}", owner.0).into();
        };
        dst.copy_from_slice(p);
        len += p.len();
    }
    match std::str::from_utf8(&buf[..len]) {
        Ok(s) => s.into(),
        Err(_) => format!("{client_id}:{}{suffix}", owner.0).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_owner_is_stable_per_thread() {
        assert_eq!(OwnerId::current_thread(), OwnerId::current_thread());
        let other = std::thread::spawn(OwnerId::current_thread).join().unwrap();
        assert_ne!(other, OwnerId::current_thread());
        assert!(other.get() > THREAD_OWNER_BASE);
        assert!(other.get() < FRESH_OWNER_BASE);
    }

    #[tokio::test]
    async fn auto_is_fresh_per_acquisition_outside_a_scope() {
        let a = OwnerSel::Auto.for_acquire();
        let b = OwnerSel::Auto.for_acquire();
        assert_ne!(a, b);
        assert!(a.get() > FRESH_OWNER_BASE && a.get() < i64::MAX as u64);
        assert_eq!(OwnerSel::Auto.fixed(), None);
        let pinned = OwnerSel::Pinned(OwnerId(5));
        assert_eq!(
            (pinned.for_acquire(), pinned.fixed()),
            (OwnerId(5), Some(OwnerId(5)))
        );
    }

    #[tokio::test]
    async fn scopes_nest_and_are_task_local() {
        let outer = OwnerId(1);
        let inner = OwnerId(2);
        outer
            .scope(async move {
                assert_eq!(OwnerSel::Auto.for_acquire(), outer);
                inner
                    .scope(async move { assert_eq!(OwnerSel::Auto.fixed(), Some(inner)) })
                    .await;
                assert_eq!(OwnerSel::Auto.fixed(), Some(outer));
                let spawned = tokio::spawn(async { OwnerId::scoped() }).await.unwrap();
                assert_eq!(spawned, None, "a spawned task is outside the scope");
                // a pinned owner wins over the scope
                assert_eq!(OwnerSel::Pinned(OwnerId(9)).for_acquire(), OwnerId(9));
            })
            .await;
        assert_eq!(OwnerId::scoped(), None);
    }

    #[test]
    fn field_format() {
        assert_eq!(&*field("abc", OwnerId(7), ""), "abc:7");
        assert_eq!(&*field("abc", OwnerId(0), ""), "abc:0");
        assert_eq!(&*field("abc", OwnerId(1_000_000), ":x"), "abc:1000000:x");
        assert_eq!(
            &*field("abc", OwnerId(u64::MAX), ":write"),
            format!("abc:{}:write", u64::MAX)
        );
        // a client id longer than the stack buffer still gives the whole field
        let long = "x".repeat(200);
        assert_eq!(&*field(&long, OwnerId(1), ":write"), format!("{long}:1:write"));
    }
}
