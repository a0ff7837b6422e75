//! The shared machinery every lock kind runs on: one wait loop, one release path, one guard core.
//!
//! A lock kind only *describes* (which script, which keys and arguments, which channel); this
//! module executes: attempts, subscription, waiting, cancellation clean-up, watchdog
//! registration, release with retries, and release on drop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::ScriptInvocation;

use crate::client::ClientInner;
use crate::config::millis;
use crate::error::{Error, Result};
use crate::finish::FinishOnDrop;
use crate::lease::{after, Lease, LeaseState, LostReason};
use crate::owner::{self, OwnerId, OwnerSel};
use crate::watchdog::RenewKind;
use crate::{name, script};

/// What one script call needs to know about the lock it acts on.
pub(crate) struct Ctx<'a> {
    pub key: &'a str,
    pub channel: &'a str,
    pub field: &'a str,
    pub publish: &'static str,
}

/// A lock kind: the scripts and names of one Redisson lock type (sans I/O).
pub(crate) trait LockKind: Send + Sync + 'static {
    /// A short name for logs ("lock", "read", "write", ...).
    fn label(&self) -> &'static str;
    /// The hash field of an owner (`<client id>:<owner>`, plus e.g. `:write`).
    fn field(&self, owner_field: String) -> String {
        owner_field
    }
    /// The channel waiters listen on.
    fn channel(&self, key: &str) -> String;
    /// One acquisition attempt; replies nil (granted) or the PTTL.
    fn acquire(&self, ctx: &Ctx<'_>, lease_ms: u64) -> ScriptInvocation<'static>;
    /// Release one hold; replies nil (not held) / 0 (still held) / 1 (released).
    fn release(&self, ctx: &Ctx<'_>, lease_ms: u64, latch: &str, latch_ms: u64) -> ScriptInvocation<'static>;
    /// Delete the lock regardless of owner; replies 1 / 0.
    fn force_release(&self, ctx: &Ctx<'_>) -> ScriptInvocation<'static>;
    /// Which batched renewal keeps a watchdog-mode hold alive.
    fn renew(&self) -> RenewKind {
        RenewKind::Hash
    }
}

/// Argument layouts shared by several kinds (each with its own script).
pub(crate) mod layout {
    use redis::{Script, ScriptInvocation};

    use super::Ctx;

    /// `KEYS[1]` lock; `ARGV` lease, field: RLock and write-lock acquire.
    pub(crate) fn acquire(script: &'static Script, c: &Ctx<'_>, lease_ms: u64) -> ScriptInvocation<'static> {
        let mut inv = script.prepare_invoke();
        inv.key(c.key).arg(lease_ms).arg(c.field);
        inv
    }

    /// `KEYS` lock, channel, latch; `ARGV` message, lease, field, publish command, latch TTL:
    /// RLock and write-lock unlock (Redisson 3.24+).
    pub(crate) fn release(
        script: &'static Script,
        c: &Ctx<'_>,
        message: u8,
        lease_ms: u64,
        latch: &str,
        latch_ms: u64,
    ) -> ScriptInvocation<'static> {
        let mut inv = script.prepare_invoke();
        inv.key(c.key)
            .key(c.channel)
            .key(latch)
            .arg(message)
            .arg(lease_ms)
            .arg(c.field)
            .arg(c.publish)
            .arg(latch_ms);
        inv
    }

    /// `KEYS` lock, channel; `ARGV` message, publish command: every force unlock.
    pub(crate) fn force(script: &'static Script, c: &Ctx<'_>, message: u8) -> ScriptInvocation<'static> {
        let mut inv = script.prepare_invoke();
        inv.key(c.key).key(c.channel).arg(message).arg(c.publish);
        inv
    }
}

/// The outcome of a successful unlock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unlocked {
    /// One re-entrant hold was released; the owner still holds the lock (no message published).
    Partial,
    /// The last hold was released: the key is gone and waiters were notified.
    Released,
}

pub(crate) enum Attempt {
    Acquired,
    /// Held by someone else; the lock's PTTL in ms (-1: no TTL).
    HeldElsewhere(i64),
}

/// One lock of one kind, as seen through one handle (name + owner choice).
#[derive(Clone)]
pub(crate) struct LockCore {
    pub client: Arc<ClientInner>,
    pub key: Arc<str>,
    pub channel: Arc<str>,
    pub kind: &'static dyn LockKind,
    pub owner: OwnerSel,
}

impl LockCore {
    pub(crate) fn new(client: Arc<ClientInner>, key: String, kind: &'static dyn LockKind) -> Self {
        let channel = kind.channel(&key);
        LockCore {
            client,
            key: key.into(),
            channel: channel.into(),
            kind,
            owner: OwnerSel::Current,
        }
    }

    /// A plain read command on this lock, with the command timeout.
    pub(crate) async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T> {
        script::cmd(
            &self.client.conn,
            self.client.config.command_timeout,
            &self.key,
            cmd,
        )
        .await
    }

    pub(crate) fn field_of(&self, owner: OwnerId) -> String {
        self.kind.field(owner::field(&self.client.id, owner))
    }

    fn ctx<'a>(&'a self, field: &'a str) -> Ctx<'a> {
        Ctx {
            key: &self.key,
            channel: &self.channel,
            field,
            publish: self.client.publish_cmd,
        }
    }

    async fn attempt_once(&self, field: &str, lease_ms: u64) -> Result<Attempt> {
        let inv = self.kind.acquire(&self.ctx(field), lease_ms);
        let reply: Option<i64> = script::run(
            &self.client.conn,
            self.client.config.command_timeout,
            &self.key,
            &inv,
        )
        .await?;
        Ok(match reply {
            None => Attempt::Acquired,
            Some(ttl) => Attempt::HeldElsewhere(ttl),
        })
    }

    /// One attempt, supervised: if the caller's future is dropped while the script is in flight,
    /// the request finishes in the background, and a hold Redis granted is released at once.
    async fn attempt(&self, field: &Arc<str>, lease_ms: u64) -> Result<Attempt> {
        let (core, f) = (self.clone(), field.clone());
        let request = async move { core.attempt_once(&f, lease_ms).await };
        let (core, field) = (self.clone(), field.clone());
        FinishOnDrop::new(request, move |res: Result<Attempt>| {
            Box::pin(async move {
                if let Ok(Attempt::Acquired) = res {
                    tracing::debug!(key = %core.key, field = %field, "acquire was cancelled after Redis granted it: releasing");
                    if let Err(e) = core.release_field(&field, lease_ms).await {
                        tracing::warn!(key = %core.key, field = %field, error = %e, "could not undo a cancelled acquisition; it expires with its lease");
                    }
                }
            })
        })
        .await
    }

    /// The wait loop shared by every kind. `wait`: `None` waits forever, `Some(ZERO)` tries once.
    /// `lease`: `None` = watchdog mode.
    pub(crate) async fn acquire(
        &self,
        wait: Option<Duration>,
        lease: Option<Duration>,
    ) -> Result<Option<Held>> {
        let lease_ms = match lease {
            Some(l) => millis("lease", l)?,
            None => millis("lock_watchdog_timeout", self.client.config.lock_watchdog_timeout)?,
        };
        let owner = self.owner.resolve();
        let field: Arc<str> = self.field_of(owner).into();
        let start = Instant::now();
        let deadline = wait.map(|w| after(start, w));
        let cfg = &self.client.config;

        let mut sub: Option<crate::pubsub::Subscription> = None;
        let mut last_error: Option<Error>;
        let mut failures: u32 = 0;
        loop {
            let chan = sub.as_ref().map(|s| s.channel());
            let notified = chan.as_ref().map(|c| c.notify.notified());
            let mut notified = std::pin::pin!(notified);
            if let Some(n) = notified.as_mut().as_pin_mut() {
                n.enable();
            }

            let sent_at = Instant::now();
            let mut ttl: Option<i64> = None;
            last_error = None;
            match self.attempt(&field, lease_ms).await {
                Ok(Attempt::Acquired) => {
                    tracing::debug!(key = %self.key, field = %field, kind = self.kind.label(), lease_ms, watchdog = lease.is_none(), "acquired");
                    return Ok(Some(self.held(field, owner, lease, lease_ms, sent_at)));
                }
                Ok(Attempt::HeldElsewhere(t)) => {
                    ttl = Some(t);
                    failures = 0;
                }
                Err(e) if e.is_transient() && wait != Some(Duration::ZERO) => {
                    tracing::warn!(key = %self.key, field = %field, error = %e, "lock attempt failed; retrying while the wait lasts");
                    last_error = Some(e);
                    failures = failures.saturating_add(1);
                }
                Err(e) => return Err(e),
            }

            let now = Instant::now();
            let remaining = deadline.map(|d| d.saturating_duration_since(now));
            if remaining == Some(Duration::ZERO) {
                return match last_error {
                    Some(e) => Err(e),
                    None => Ok(None),
                };
            }

            if sub.is_none() && last_error.is_none() && self.client.hub.has_connection() {
                let budget = remaining.map_or(cfg.subscription_timeout, |r| r.min(cfg.subscription_timeout));
                match self.client.hub.subscribe(&self.channel, budget).await {
                    Ok(s) => {
                        sub = Some(s);
                        continue; // subscribe, then re-try before sleeping
                    }
                    Err(e) => {
                        tracing::warn!(key = %self.key, channel = %self.channel, error = %e, "could not subscribe; polling instead");
                    }
                }
            }

            // 80-100 % of the poll interval: thousands of waiters do not re-poll in lockstep
            let mut nap = cfg.poll_interval.mul_f64(0.8 + 0.2 * rand::random::<f64>());
            if let Some(t) = ttl {
                if t >= 0 {
                    nap = nap.min(Duration::from_millis(t.max(1) as u64));
                }
            }
            if last_error.is_some() {
                nap = nap.min(Duration::from_millis(50u64 << failures.min(4)));
            }
            let now = Instant::now();
            if let Some(d) = deadline {
                nap = nap.min(d.saturating_duration_since(now));
            }
            match notified.as_mut().as_pin_mut() {
                Some(n) => {
                    tokio::select! {
                        _ = n => {}
                        _ = tokio::time::sleep(nap) => {}
                    }
                }
                None => tokio::time::sleep(nap).await,
            }
        }
    }

    fn held(
        &self,
        field: Arc<str>,
        owner: OwnerId,
        lease: Option<Duration>,
        lease_ms: u64,
        sent_at: Instant,
    ) -> Held {
        let lease_state = match lease {
            None => self
                .client
                .watchdog
                .register(&self.key, &field, self.kind.renew(), sent_at),
            Some(l) => Arc::new(Lease::new(
                after(sent_at, l - self.client.config.lease_margin(l)),
                LostReason::LeaseExpired,
            )),
        };
        Held {
            inner: Some(HeldInner {
                core: self.clone(),
                field,
                owner,
                lease: lease_state,
                lease_ms,
                watchdog: lease.is_none(),
            }),
        }
    }

    /// Releases one hold of `field` (no watchdog bookkeeping). One request id for every retry,
    /// so a retried request can never release twice.
    pub(crate) async fn release_field(&self, field: &str, lease_ms: u64) -> Result<Unlocked> {
        let cfg = &self.client.config;
        let request_id = request_id();
        let latch = name::latch(&self.key, &request_id);
        let backoff = Duration::from_millis(100);
        let retries = cfg.unlock_retries as u32;
        let window = (cfg.command_timeout + backoff) * (retries + 1);
        let latch_ms = window.as_millis().clamp(1, u64::MAX as u128) as u64;
        let inv = self.kind.release(&self.ctx(field), lease_ms, &latch, latch_ms);
        let mut tries = 0;
        let reply = loop {
            match script::run::<Option<i64>>(&self.client.conn, cfg.command_timeout, &self.key, &inv).await {
                Ok(r) => break r,
                Err(e) if e.is_transient() && tries < retries => {
                    tries += 1;
                    tracing::debug!(key = %self.key, field, error = %e, tries, "unlock failed; retrying with the same request id");
                    tokio::time::sleep(backoff).await;
                }
                Err(e) => return Err(e),
            }
        };
        // The latch only matters for our own retries, which are over: the janitor deletes it
        // (batched with other unlocks' latches, off this call's path).
        self.client.latches.discard(latch);
        match reply {
            None => {
                tracing::debug!(key = %self.key, field, "unlock refused: not held");
                Err(Error::NotHeld {
                    key: self.key.to_string(),
                    field: field.to_owned(),
                })
            }
            Some(0) => {
                tracing::debug!(key = %self.key, field, "released one re-entrant hold");
                Ok(Unlocked::Partial)
            }
            Some(1) => {
                tracing::debug!(key = %self.key, field, "released");
                Ok(Unlocked::Released)
            }
            Some(other) => Err(Error::Protocol(format!("unlock replied {other}"))),
        }
    }

    /// Redisson-style unlock by the handle's owner (no guard).
    pub(crate) async fn unlock(&self) -> Result<Unlocked> {
        let field = self.field_of(self.owner.resolve());
        // Redisson: every unlock call drops one watchdog count, whatever the result.
        self.client.watchdog.unregister(&self.key, &field, None);
        let lease_ms = millis("lock_watchdog_timeout", self.client.config.lock_watchdog_timeout)?;
        self.release_detached(field.into(), lease_ms).await
    }

    /// A release that goes on if the caller's future is dropped (cancelling the wait for the
    /// reply must not cancel the unlock).
    pub(crate) async fn release_detached(&self, field: Arc<str>, lease_ms: u64) -> Result<Unlocked> {
        let (core, f) = (self.clone(), field.clone());
        let request = async move { core.release_field(&f, lease_ms).await };
        let key = self.key.clone();
        FinishOnDrop::new(request, move |res: Result<Unlocked>| {
            Box::pin(async move {
                if let Err(e) = res {
                    tracing::warn!(key = %key, field = %field, error = %e, "release (its caller gave up waiting) failed");
                }
            })
        })
        .await
    }

    pub(crate) async fn force_unlock(&self) -> Result<bool> {
        let inv = self.kind.force_release(&self.ctx(""));
        let timeout = self.client.config.command_timeout;
        let r: i64 = script::run(&self.client.conn, timeout, &self.key, &inv).await?;
        if r == 1 {
            // only a lock that was really deleted ends this client's holds (a read-side force on
            // a write-locked lock changes nothing)
            self.client
                .watchdog
                .remove_key(&self.key, LostReason::ForceUnlocked);
        }
        tracing::info!(key = %self.key, kind = self.kind.label(), deleted = r == 1, "force unlock");
        Ok(r == 1)
    }
}

/// 16 random bytes, lowercase hex (Redisson's unlock request id).
fn request_id() -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes: [u8; 16] = rand::random();
    let mut s = String::with_capacity(32);
    for b in bytes {
        s.push(HEX[usize::from(b >> 4)] as char);
        s.push(HEX[usize::from(b & 15)] as char);
    }
    s
}

/// The state every guard type wraps: who holds what, and how to let go.
pub(crate) struct Held {
    inner: Option<HeldInner>,
}

struct HeldInner {
    core: LockCore,
    field: Arc<str>,
    owner: OwnerId,
    lease: Arc<Lease>,
    lease_ms: u64,
    watchdog: bool,
}

impl Held {
    fn inner(&self) -> &HeldInner {
        self.inner
            .as_ref()
            .expect("a guard's state is present until it is consumed")
    }

    pub(crate) fn key(&self) -> &str {
        &self.inner().core.key
    }

    pub(crate) fn core(&self) -> &LockCore {
        &self.inner().core
    }

    pub(crate) fn field(&self) -> &str {
        &self.inner().field
    }

    pub(crate) fn owner(&self) -> OwnerId {
        self.inner().owner
    }

    pub(crate) fn lease(&self) -> Option<Duration> {
        let i = self.inner();
        (!i.watchdog).then(|| Duration::from_millis(i.lease_ms))
    }

    pub(crate) fn state(&self) -> LeaseState {
        self.inner().lease.state()
    }

    pub(crate) fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        let lease = self.inner().lease.clone();
        async move { lease.lost().await }
    }

    /// Stops renewal for this hold (before anything is sent) and returns what the release needs.
    fn detach(&mut self) -> Option<HeldInner> {
        let inner = self.inner.take()?;
        if inner.watchdog {
            inner
                .core
                .client
                .watchdog
                .unregister(&inner.core.key, &inner.field, Some(&inner.lease));
        } else {
            inner.lease.set(LeaseState::Released);
        }
        Some(inner)
    }

    /// Releases this hold. The release runs in its own task: cancelling the returned future
    /// does not cancel the release.
    pub(crate) async fn unlock(mut self) -> Result<Unlocked> {
        let Some(inner) = self.detach() else {
            return Err(Error::Shutdown);
        };
        inner.core.release_detached(inner.field, inner.lease_ms).await
    }

    /// Gives up the guard without releasing (renewal goes on in watchdog mode).
    pub(crate) fn forget(mut self) {
        self.inner = None;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(inner) = self.detach() else {
            return;
        };
        let key = inner.core.key.clone();
        let field = inner.field.clone();
        let sender = inner.core.client.release_tx.clone();
        let job: ReleaseJob = Box::new(move || {
            Box::pin(async move {
                match inner.core.release_field(&inner.field, inner.lease_ms).await {
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(key = %inner.core.key, field = %inner.field, error = %e, "release on drop failed")
                    }
                }
            })
        });
        if sender.send(job).is_err() {
            tracing::warn!(key = %key, field = %field, "guard dropped after the client shut down: the lock expires with its lease");
        } else {
            tracing::debug!(key = %key, field = %field, "guard dropped: release queued");
        }
    }
}

/// A release queued by a dropped guard.
pub(crate) type ReleaseJob = Box<dyn FnOnce() -> futures::future::BoxFuture<'static, ()> + Send>;

/// Runs queued releases (from guards dropped anywhere, even outside a runtime).
pub(crate) async fn release_worker(mut rx: tokio::sync::mpsc::UnboundedReceiver<ReleaseJob>) {
    while let Some(job) = rx.recv().await {
        tokio::spawn(job());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn request_id_is_32_lowercase_hex() {
        let a = super::request_id();
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
            "{a}"
        );
        assert_ne!(a, super::request_id());
    }
}
