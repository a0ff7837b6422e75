//! Redisson's `RedissonMultiLock` and `RedissonRedLock`: one lock made of several locks, of any
//! kind, on one Redis or on several. Purely client-side: each member is taken and released
//! through its own kind's protocol, all for one owner.

use std::time::{Duration, Instant};

use crate::any::{AnyGuard, AnyLock};
use crate::core::Lock;
use crate::error::{Error, Result};
use crate::kind::AcquireKind;
use crate::owner::{OwnerId, OwnerSel};
use crate::{LeaseState, LostReason};

/// One member of an [`RMultiLock`]: a lock handle of any kind (from any client), taken with
/// [`From`]: `Member::from(&lock)`.
///
/// ```no_run
/// # fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use redisson_lock::Member;
/// let members = [
///     Member::from(&client.lock("a")?),
///     Member::from(&client.fair_lock("b")?),
///     Member::from(&client.read_write_lock("c")?.write_lock()),
/// ];
/// # Ok(()) }
/// ```
pub struct Member(Box<dyn AnyLock>);

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Member({} {})", self.0.kind(), self.0.key())
    }
}

impl<K: AcquireKind> From<&Lock<K>> for Member {
    fn from(lock: &Lock<K>) -> Member {
        Member(Box::new(lock.clone()))
    }
}

impl From<Box<dyn AnyLock>> for Member {
    fn from(lock: Box<dyn AnyLock>) -> Member {
        Member(lock)
    }
}

/// Several locks taken together, as one (Redisson's `RedissonMultiLock`), or a **RedLock**: a
/// majority of independent locks (Redisson's `RedissonRedLock`).
///
/// Members can be of any kind and come from any [`Client`](crate::Client) (so from several
/// Redis servers); every member is taken for the same owner id (Redisson: the same thread id),
/// through its own kind's protocol, so Java services using `RedissonMultiLock` on the same names
/// contend with us member by member. Members are tried in list order with Redisson's budgets:
///
/// * **multi-lock** ([`RMultiLock::new`]): all members are needed. Each member may wait for the
///   remaining budget; on the first member that cannot be had, every member taken so far is
///   released, and (while the wait lasts) the whole list is tried again from the start.
/// * **RedLock** ([`RMultiLock::red_lock`]): `N/2 + 1` members are enough; each member may wait
///   `max(remaining / N, 1 ms)`; a member that cannot be had (held elsewhere, or its Redis is down
///   or slow) only counts as a failure, until more than `N - quorum` failed.
///
/// With a lease, the lease counts from when the lock is held, as in Redisson: each member is taken
/// with the lease, and once enough are held every member's lease is extended to the full lease
/// from then ([`Guard::extend_lease`](crate::Guard::extend_lease); Redisson sends a raw `PEXPIRE`
/// instead), so a member taken early does not end first. The guard trusts the lock until its
/// earliest member's lease runs out.
///
/// Differences from Redisson, on purpose: each member is taken with the caller's lease (Redisson
/// takes members with twice the wait, then sets every key to the lease). `lock()` without a wait
/// simply waits as long as it takes (Redisson retries with a `N × 1.5 s` budget per round). Redisson's `RedissonFasterMultiLock` (one hash per group, field
/// ids from HighwayHash over Java-codec-encoded values) is not offered: its field names depend on
/// the Java codec (Kryo by default), which a Rust client cannot reproduce faithfully.
///
/// # What a RedLock does and does not guarantee
///
/// A majority of independent Redis servers must agree, so one server crashing, failing over
/// without the lock, or being partitioned away does not let a second holder in. It does **not**
/// survive a holder paused longer than its lease (GC, VM stop: the holder keeps working after
/// every member expired) nor clock jumps on the servers (TTLs are wall-clock based), and a
/// restarted server without persistence forgets its member. Use fencing tokens
/// ([`RFencedLock`](crate::RFencedLock)) at the resource where correctness matters.
///
/// ```no_run
/// # async fn demo(a: redisson_lock::Client, b: redisson_lock::Client, c: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use std::time::Duration;
/// use redisson_lock::{Member, RMultiLock};
/// // three locks on one Redis, taken together
/// let all = RMultiLock::new([
///     Member::from(&a.lock("order:1")?),
///     Member::from(&a.lock("order:2")?),
///     Member::from(&a.lock("stock:7")?),
/// ])?;
/// let guard = all.lock().await?;
/// guard.unlock().await?;
/// // one lock name on three independent Redis servers, a majority suffices
/// let red = RMultiLock::red_lock([a.lock("job")?, b.lock("job")?, c.lock("job")?].iter().map(Member::from))?;
/// if let Some(g) = red.try_lock_for(Duration::from_secs(1)).await? {
///     g.unlock().await?;
/// }
/// # Ok(()) }
/// ```
pub struct RMultiLock {
    members: Vec<Box<dyn AnyLock>>,
    quorum: usize,
    owner: OwnerSel,
}

/// A handle on the same members with the same owner choice (cheap: each member is a handle).
impl Clone for RMultiLock {
    fn clone(&self) -> RMultiLock {
        RMultiLock {
            members: self.members.iter().map(|m| m.clone_box()).collect(),
            quorum: self.quorum,
            owner: self.owner,
        }
    }
}

impl std::fmt::Debug for RMultiLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RMultiLock")
            .field(
                "members",
                &self.members.iter().map(|m| m.key()).collect::<Vec<_>>(),
            )
            .field("quorum", &self.quorum)
            .field("owner", &self.owner)
            .finish()
    }
}

impl RMultiLock {
    /// A lock made of all `members` (Redisson `getMultiLock(locks...)`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] without members.
    ///
    /// ```no_run
    /// # fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// use redisson_lock::{Member, RMultiLock};
    /// let m = RMultiLock::new([Member::from(&client.lock("a")?), Member::from(&client.lock("b")?)])?;
    /// # Ok(()) }
    /// ```
    pub fn new(members: impl IntoIterator<Item = Member>) -> Result<RMultiLock> {
        let members: Vec<_> = members.into_iter().map(|m| m.0).collect();
        if members.is_empty() {
            return Err(Error::InvalidArgument(
                "a multi-lock needs at least one member".into(),
            ));
        }
        Ok(RMultiLock {
            quorum: members.len(),
            members,
            owner: OwnerSel::Auto,
        })
    }

    /// A RedLock: a majority (`N/2 + 1`) of `members` suffices (Redisson `getRedLock(locks...)`).
    /// Members should be the same name on independent Redis servers.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] without members.
    ///
    /// ```no_run
    /// # fn demo(a: redisson_lock::Client, b: redisson_lock::Client, c: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// use redisson_lock::{Member, RMultiLock};
    /// let red = RMultiLock::red_lock([&a, &b, &c].iter().map(|c| Member::from(&c.lock("job").unwrap())))?;
    /// # Ok(()) }
    /// ```
    pub fn red_lock(members: impl IntoIterator<Item = Member>) -> Result<RMultiLock> {
        let mut m = RMultiLock::new(members)?;
        m.quorum = m.members.len() / 2 + 1;
        Ok(m)
    }

    /// How many members must be held (all, or a majority for a RedLock).
    ///
    /// ```no_run
    /// # fn demo(m: redisson_lock::RMultiLock) { println!("{}", m.quorum()); }
    /// ```
    pub fn quorum(&self) -> usize {
        self.quorum
    }

    /// The same lock acting for a fixed owner id on every member (Redisson: the thread id).
    ///
    /// ```no_run
    /// # fn demo(m: redisson_lock::RMultiLock) { let mine = m.with_owner(7); }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RMultiLock {
        let owner = owner.into();
        RMultiLock {
            members: self.members.iter().map(|m| m.with_owner(owner)).collect(),
            quorum: self.quorum,
            owner: OwnerSel::Pinned(owner),
        }
    }

    /// Takes the lock, waiting as long as it takes; watchdog mode on every member.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future releases (in the background) every member taken so far.
    ///
    /// ```no_run
    /// # async fn demo(m: redisson_lock::RMultiLock) -> redisson_lock::Result<()> {
    /// let guard = m.lock().await?;
    /// guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<MultiGuard> {
        self.acquire(None, None)
            .await?
            .ok_or_else(|| Error::Protocol("an unbounded wait ended without the lock".into()))
    }

    /// Takes the lock for `lease`, counted from when it is held (every member's lease then ends
    /// together), waiting as long as it takes.
    ///
    /// ```no_run
    /// # async fn demo(m: redisson_lock::RMultiLock) -> redisson_lock::Result<()> {
    /// let guard = m.lock_with_lease(std::time::Duration::from_secs(10)).await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<MultiGuard> {
        self.acquire(None, Some(lease))
            .await?
            .ok_or_else(|| Error::Protocol("an unbounded wait ended without the lock".into()))
    }

    /// One pass over the members, no waiting.
    ///
    /// ```no_run
    /// # async fn demo(m: redisson_lock::RMultiLock) -> redisson_lock::Result<()> {
    /// let maybe = m.try_lock().await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<MultiGuard>> {
        self.acquire(Some(Duration::ZERO), None).await
    }

    /// Tries for up to `wait` (watchdog mode).
    ///
    /// ```no_run
    /// # async fn demo(m: redisson_lock::RMultiLock) -> redisson_lock::Result<()> {
    /// let maybe = m.try_lock_for(std::time::Duration::from_secs(1)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<MultiGuard>> {
        self.acquire(Some(wait), None).await
    }

    /// Tries for up to `wait`; the lock is held for `lease`, counted from when it is held.
    ///
    /// ```no_run
    /// # async fn demo(m: redisson_lock::RMultiLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let maybe = m.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(10)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<MultiGuard>> {
        self.acquire(Some(wait), Some(lease)).await
    }

    async fn acquire(&self, wait: Option<Duration>, lease: Option<Duration>) -> Result<Option<MultiGuard>> {
        let owner = self.owner.for_acquire();
        let members: Vec<Box<dyn AnyLock>> = self.members.iter().map(|m| m.with_owner(owner)).collect();
        let n = members.len();
        let allowed_failures = n - self.quorum;
        let start = Instant::now();
        let deadline = wait.map(|w| crate::deadline::after(start, w));
        let mut last_error: Option<Error> = None;
        loop {
            let mut held: Vec<Box<dyn AnyGuard>> = Vec::with_capacity(n);
            let mut failures = 0;
            for m in &members {
                let remaining = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                let member_wait = match remaining {
                    // one attempt per member when the caller does not wait
                    Some(r) if r.is_zero() => Duration::ZERO,
                    Some(r) if self.quorum < n => (r / n as u32).max(Duration::from_millis(1)),
                    Some(r) => r,
                    // waiting forever: a RedLock member must not block the others; a multi-lock
                    // member may wait (Redisson: N x 1.5 s per round)
                    None if self.quorum < n => Duration::from_millis(1_500),
                    None => Duration::from_millis(1_500 * n as u64),
                };
                let attempt = match lease {
                    None => m.try_lock_for(member_wait),
                    Some(lease) => m.try_lock_with_lease(member_wait, lease),
                };
                match attempt.await {
                    Ok(Some(h)) => held.push(h),
                    Ok(None) => failures += 1,
                    Err(e) if e.is_transient() => {
                        tracing::debug!(key = %m.key(), error = %e, "multi-lock member failed");
                        last_error = Some(e);
                        failures += 1;
                    }
                    Err(e) => {
                        release_all(held).await;
                        return Err(e);
                    }
                }
                if failures > allowed_failures {
                    break;
                }
            }
            if held.len() >= self.quorum && lease.is_some() {
                // the lease counts from when the lock is held, not from when each member was
                // taken (members taken early would otherwise end first, within the lease)
                held = relet(held, lease, self.quorum).await;
            }
            if held.len() >= self.quorum {
                tracing::debug!(
                    members = n,
                    held = held.len(),
                    quorum = self.quorum,
                    "multi-lock acquired"
                );
                return Ok(Some(MultiGuard {
                    holds: held,
                    quorum: self.quorum,
                    owner,
                }));
            }
            release_all(held).await;
            let out_of_time = deadline.is_some_and(|d| Instant::now() >= d);
            if out_of_time || wait == Some(Duration::ZERO) {
                return match (last_error, wait) {
                    (Some(e), _) => Err(e),
                    (None, _) => Ok(None),
                };
            }
            // let the members' holders move on before the next round
            let pause = Duration::from_millis(5 + fastrand::u64(..20));
            tokio::time::sleep(
                deadline.map_or(pause, |d| pause.min(d.saturating_duration_since(Instant::now()))),
            )
            .await;
        }
    }
}

/// Extends every member's lease to `lease` from now, all at once (members may be on several
/// servers). A member whose extension failed keeps the lease it had (an error) or is lost (found
/// gone): what is left held is returned; when fewer than `quorum` are, all are released.
async fn relet(
    mut held: Vec<Box<dyn AnyGuard>>,
    lease: Option<Duration>,
    quorum: usize,
) -> Vec<Box<dyn AnyGuard>> {
    let Some(lease) = lease else { return held };
    let results = futures::future::join_all(held.iter_mut().map(|h| h.extend_lease(lease))).await;
    for (h, r) in held.iter().zip(results) {
        if let Err(e) = r {
            tracing::debug!(key = %h.key(), error = %e, "multi-lock member: its lease could not be extended");
        }
    }
    if held.iter().filter(|h| h.is_held()).count() >= quorum {
        return held;
    }
    release_all(held).await;
    Vec::new()
}

async fn release_all(held: Vec<Box<dyn AnyGuard>>) {
    for h in held {
        let key = h.key().to_owned();
        if let Err(e) = h.unlock().await {
            tracing::debug!(key = %key, error = %e, "releasing a multi-lock member failed");
        }
    }
}

/// Proof of a held [`RMultiLock`]: the member holds (all of them, or at least a quorum for a
/// RedLock). Dropping it releases every member in the background.
///
/// ```no_run
/// # async fn demo(m: redisson_lock::RMultiLock) -> redisson_lock::Result<()> {
/// let guard = m.lock().await?;
/// println!("holding {:?}", guard.keys());
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct MultiGuard {
    holds: Vec<Box<dyn AnyGuard>>,
    quorum: usize,
    owner: OwnerId,
}

impl std::fmt::Debug for MultiGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiGuard")
            .field("keys", &self.keys())
            .field("quorum", &self.quorum)
            .field("owner", &self.owner)
            .finish()
    }
}

impl MultiGuard {
    /// Releases every member held, in order. A multi-lock returns the first error (after trying
    /// every member); a RedLock returns an error only when fewer than a quorum of members could
    /// be released cleanly (Redisson's RedLock ignores member errors).
    ///
    /// # Cancel safety
    ///
    /// Dropping this future does not cancel the releases: the member being released and those
    /// not reached yet are finished by their clients' background work.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::MultiGuard) -> redisson_lock::Result<()> {
    /// g.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(mut self) -> Result<()> {
        let holds = std::mem::take(&mut self.holds);
        let total = holds.len();
        let mut first: Option<Error> = None;
        let mut ok = 0;
        for h in holds {
            match h.unlock().await {
                Ok(_) => ok += 1,
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        match first {
            Some(e) if self.quorum == total || ok < self.quorum => Err(e),
            _ => Ok(()),
        }
    }

    /// Resolves when the lock's promise breaks: a member of a multi-lock is lost, or a RedLock
    /// keeps fewer than its quorum. Cancel safe: it only observes.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::MultiGuard) { let reason = g.lost().await; }
    /// ```
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        let spare = self.holds.len().saturating_sub(self.quorum);
        let mut pending: futures::stream::FuturesUnordered<_> = self.holds.iter().map(|h| h.lost()).collect();
        async move {
            use futures::StreamExt;
            let mut lost = 0;
            while let Some(reason) = pending.next().await {
                lost += 1;
                if lost > spare {
                    return reason;
                }
            }
            std::future::pending().await
        }
    }

    /// `Guard` while enough members are held (all, or a quorum), else the first loss seen.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::MultiGuard) { println!("{:?}", g.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        let held = self
            .holds
            .iter()
            .filter(|h| h.state() == LeaseState::Held)
            .count();
        if held >= self.quorum {
            return LeaseState::Held;
        }
        self.holds
            .iter()
            .map(|h| h.state())
            .find(|s| *s != LeaseState::Held)
            .unwrap_or(LeaseState::Released)
    }

    /// `state() == LeaseState::Held`.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::MultiGuard) { assert!(g.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.state() == LeaseState::Held
    }

    /// The keys of the members held.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::MultiGuard) { println!("{:?}", g.keys()); }
    /// ```
    pub fn keys(&self) -> Vec<&str> {
        self.holds.iter().map(|h| h.key()).collect()
    }

    /// The owner every member is held for.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::MultiGuard) { println!("{}", g.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.owner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        fn assert_send_sync_static<T: Send + Sync + 'static>() {}
        assert_send_sync_static::<MultiGuard>();
        assert_send_sync_static::<RMultiLock>();
        assert_send_sync_static::<Member>();
    }
}
