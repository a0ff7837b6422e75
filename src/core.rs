//! The shared machinery every lock kind runs on: one wait loop, one release path, one guard core.
//!
//! A lock kind only *describes* (which script, which keys and arguments, which channel); this
//! module executes: attempts, settling attempts whose reply was lost, subscription, waiting,
//! cancellation clean-up, bookkeeping in the hold table, release with retries, release on drop.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::{ScriptInvocation, Value};
use tokio::sync::{mpsc, Notify};

use crate::client::ClientInner;
use crate::config::millis;
use crate::error::{Error, Result};
use crate::finish::FinishOnDrop;
use crate::holds::{Mode, ReleasePlan, Released, Turn};
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
    /// One acquisition attempt that records its grant in `latch` (see `lua/common/resolve_acquire.lua`).
    /// Replies `{1, count}` (granted; the field's hold count now), `{0, pttl}` (held elsewhere) or
    /// `{2, 0}` (the attempt was cancelled before it arrived: nothing done).
    fn acquire(&self, ctx: &Ctx<'_>, lease_ms: u64, latch: &str, latch_ms: u64) -> ScriptInvocation<'static>;
    /// Release one hold (`all`: every hold of the field); replies nil (not held) / 0 (the lock
    /// still lives) / 1 (the owner's holds are gone and waiters were told, if anyone's are due).
    fn release(
        &self,
        ctx: &Ctx<'_>,
        lease_ms: u64,
        latch: &str,
        latch_ms: u64,
        all: bool,
    ) -> ScriptInvocation<'static>;
    /// Delete the lock regardless of owner; replies 1 / 0.
    fn force_release(&self, ctx: &Ctx<'_>) -> ScriptInvocation<'static>;
    /// Which batched renewal keeps a watchdog-mode hold alive.
    fn renew(&self) -> RenewKind {
        RenewKind::Hash
    }
    /// Whether an acquisition can only lengthen the key's TTL (it adds to it, or keeps the
    /// maximum). Otherwise (RLock: `PEXPIRE` to the new lease) the client sends the TTL the
    /// owner's longest live hold needs, so that a short re-entry never cuts it.
    fn ttl_only_grows(&self) -> bool {
        false
    }
}

/// Argument layouts shared by several kinds (each with its own script).
pub(crate) mod layout {
    use redis::{Script, ScriptInvocation};

    use super::Ctx;

    /// `KEYS` lock, attempt latch; `ARGV` lease, field, latch TTL: RLock and write-lock acquire.
    pub(crate) fn acquire(
        script: &'static Script,
        c: &Ctx<'_>,
        lease_ms: u64,
        latch: &str,
        latch_ms: u64,
    ) -> ScriptInvocation<'static> {
        let mut inv = script.prepare_invoke();
        inv.key(c.key).key(latch).arg(lease_ms).arg(c.field).arg(latch_ms);
        inv
    }

    /// `KEYS` lock, channel, latch; `ARGV` message, lease, field, publish command, latch TTL,
    /// release-all flag: RLock and write-lock unlock (Redisson 3.24+ plus the flag).
    pub(crate) fn release(
        script: &'static Script,
        c: &Ctx<'_>,
        message: u8,
        lease_ms: u64,
        latch: &str,
        latch_ms: u64,
        all: bool,
    ) -> ScriptInvocation<'static> {
        let mut inv = script.prepare_invoke();
        inv.key(c.key)
            .key(c.channel)
            .key(latch)
            .arg(message)
            .arg(lease_ms)
            .arg(c.field)
            .arg(c.publish)
            .arg(latch_ms)
            .arg(u8::from(all));
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
    /// The owner's last hold was released: the key is gone (or, for a read lock, left to the
    /// other readers) and waiters were notified.
    Released,
}

pub(crate) enum Attempt {
    Granted(Held),
    /// Held by someone else; the lock's PTTL in ms (-1: no TTL).
    Refused(i64),
}

/// An acquire script's reply.
enum Reply {
    Granted(i64),
    Refused(i64),
    Cancelled,
}

fn decode_acquire(v: &Value) -> Result<Reply> {
    let pair = match v {
        Value::Array(items) if items.len() == 2 => match (&items[0], &items[1]) {
            (Value::Int(a), Value::Int(b)) => Some((*a, *b)),
            _ => None,
        },
        _ => None,
    };
    match pair {
        Some((1, count)) if count >= 1 => Ok(Reply::Granted(count)),
        Some((0, pttl)) => Ok(Reply::Refused(pttl)),
        Some((2, _)) => Ok(Reply::Cancelled),
        _ => Err(Error::Protocol(format!("acquire replied {v:?}"))),
    }
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
            owner: OwnerSel::Auto,
        }
    }

    /// A plain read command on this lock, with the command timeout.
    pub(crate) async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T> {
        script::read(
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

    /// The owner of handle-level operations, or an error explaining how to get one.
    pub(crate) fn fixed_owner(&self) -> Result<OwnerId> {
        self.owner.fixed().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "the handle for `{}` has no fixed owner (each acquisition gets a fresh one): ask the \
                 guard (`guard.is_held()`, `guard.unlock()`), or give the handle an owner with \
                 `with_owner(id)` or `OwnerId::scope`",
                self.key
            ))
        })
    }

    fn ctx<'a>(&'a self, field: &'a str) -> Ctx<'a> {
        Ctx {
            key: &self.key,
            channel: &self.channel,
            field,
            publish: self.client.publish_cmd,
        }
    }

    /// The wait loop shared by every kind. `wait`: `None` waits forever, `Some(ZERO)` tries once.
    /// `lease`: `None` = watchdog mode.
    pub(crate) async fn acquire(
        &self,
        wait: Option<Duration>,
        lease: Option<Duration>,
    ) -> Result<Option<Held>> {
        let cfg = &self.client.config;
        let own_ms = match lease {
            Some(l) => millis("lease", l)?,
            None => millis("lock_watchdog_timeout", cfg.lock_watchdog_timeout)?,
        };
        if self.client.holds.is_closed() {
            return Err(Error::Shutdown);
        }
        let start = Instant::now();
        let deadline = wait.map(|w| after(start, w));

        let mut sub: Option<crate::pubsub::Subscription> = None;
        let mut failures: u32 = 0;
        loop {
            let chan = sub.as_ref().map(|s| s.channel());
            let notified = chan.as_ref().map(|c| c.notify.notified());
            let mut notified = std::pin::pin!(notified);
            if let Some(n) = notified.as_mut().as_pin_mut() {
                n.enable();
            }

            let mut ttl: Option<i64> = None;
            let mut last_error: Option<Error> = None;
            // an owner chosen per attempt: with fresh owners, an attempt whose outcome is still
            // being settled in the background never holds up the next one
            let owner = self.owner.for_acquire();
            match self.attempt(owner, lease, own_ms, deadline).await {
                Ok(Attempt::Granted(held)) => {
                    if self.client.holds.is_closed() {
                        drop(held); // granted while the client shut down: give it back
                        return Err(Error::Shutdown);
                    }
                    tracing::debug!(key = %self.key, field = %held.field(), kind = self.kind.label(), lease_ms = own_ms, watchdog = lease.is_none(), "acquired");
                    return Ok(Some(held));
                }
                Ok(Attempt::Refused(t)) => {
                    ttl = Some(t);
                    failures = 0;
                }
                Err(e) if e.is_transient() && wait != Some(Duration::ZERO) => {
                    failures = failures.saturating_add(1);
                    if failures > cfg.retry_attempts {
                        tracing::warn!(key = %self.key, error = %e, attempts = failures, "lock attempt failed; no retries left");
                        return Err(e);
                    }
                    tracing::warn!(key = %self.key, error = %e, attempt = failures, "lock attempt failed; retrying");
                    last_error = Some(e);
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

            if let Some(e) = &last_error {
                let mut pause = cfg.retry_pause();
                if let Some(r) = remaining {
                    pause = pause.min(r);
                }
                tracing::trace!(key = %self.key, error = %e, ?pause, "pausing before the next attempt");
                tokio::time::sleep(pause).await;
                continue;
            }

            if sub.is_none() && self.client.hub.has_connection() {
                let budget = remaining.map_or(cfg.subscription_timeout, |r| r.min(cfg.subscription_timeout));
                match self.client.hub.subscribe(&self.channel, budget).await {
                    Ok(s) => {
                        sub = Some(s);
                        continue; // subscribe, then re-try before sleeping
                    }
                    Err(e) => {
                        tracing::debug!(key = %self.key, channel = %self.channel, error = %e, "could not subscribe; polling instead");
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
            if let Some(d) = deadline {
                nap = nap.min(d.saturating_duration_since(Instant::now()));
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

    /// One attempt, supervised: if the caller's future is dropped while it is in flight, it
    /// finishes in the background, and a hold Redis granted is released at once.
    async fn attempt(
        &self,
        owner: OwnerId,
        lease: Option<Duration>,
        own_ms: u64,
        deadline: Option<Instant>,
    ) -> Result<Attempt> {
        let core = self.clone();
        let request = async move { core.attempt_inner(owner, lease, own_ms, deadline).await };
        FinishOnDrop::new(request, move |res: Result<Attempt>| {
            Box::pin(async move {
                if let Ok(Attempt::Granted(held)) = res {
                    tracing::debug!(key = %held.key(), field = %held.field(), "acquire was cancelled after Redis granted it: releasing");
                    drop(held); // queues the release
                }
            })
        })
        .await
    }

    async fn attempt_inner(
        &self,
        owner: OwnerId,
        lease: Option<Duration>,
        own_ms: u64,
        deadline: Option<Instant>,
    ) -> Result<Attempt> {
        let cfg = &self.client.config;
        let holds = &self.client.holds;
        let field: Arc<str> = self.field_of(owner).into();
        let turn = match deadline {
            None => holds.turn(&self.key, &field, self.kind).await,
            Some(d) => {
                let limit = after(d, cfg.command_timeout);
                match tokio::time::timeout_at(limit.into(), holds.turn(&self.key, &field, self.kind)).await {
                    Ok(t) => t,
                    Err(_) => return Err(Error::CommandTimeout(cfg.command_timeout)),
                }
            }
        };
        let need_ms = if self.kind.ttl_only_grows() {
            own_ms
        } else {
            holds.acquire_need(&turn, own_ms)
        };
        let latch = name::latch(&self.key, &request_id());
        let inv = self
            .kind
            .acquire(&self.ctx(&field), need_ms, &latch, cfg.retry_window_ms());
        let sent_at = Instant::now();
        let mode = match lease {
            None => Mode::Watchdog,
            Some(_) => Mode::Leased {
                lease_ms: own_ms,
                until: after(sent_at, Duration::from_millis(own_ms)),
            },
        };
        let reply = match script::run::<Value>(&self.client.conn, cfg.command_timeout, &self.key, &inv).await
        {
            Ok(v) => decode_acquire(&v)?,
            Err(e) if e.is_ambiguous() => {
                // The request may or may not have run. Never re-send it: ask Redis.
                // Settle it now if the caller's wait allows one more request, else in the background.
                let settled = if deadline.is_none_or(|d| Instant::now() < d) {
                    self.settle(&latch).await.ok()
                } else {
                    None
                };
                match settled {
                    Some(Some(count)) => {
                        tracing::debug!(key = %self.key, field = %field, error = %e, "acquire reply was lost, but Redis had granted it: keeping the hold");
                        Reply::Granted(count)
                    }
                    Some(None) => {
                        tracing::debug!(key = %self.key, field = %field, error = %e, "acquire reply was lost; it never took effect and now never will");
                        return Err(e);
                    }
                    None => {
                        self.settle_in_background(turn, latch, mode, sent_at, need_ms, owner);
                        return Err(e);
                    }
                }
            }
            Err(e) => return Err(e),
        };
        match reply {
            Reply::Granted(count) => {
                self.client.latches.discard(latch);
                Ok(Attempt::Granted(
                    self.record_grant(&turn, owner, mode, sent_at, need_ms, count),
                ))
            }
            Reply::Refused(pttl) => Ok(Attempt::Refused(pttl)),
            Reply::Cancelled => Err(Error::Protocol(
                "a new acquire attempt found its id already cancelled".into(),
            )),
        }
    }

    /// Asks Redis whether the acquire that wrote `latch` took effect, making sure it never will
    /// if it has not. `Ok(Some(count))`: granted; `Ok(None)`: not, and never.
    async fn settle(&self, latch: &str) -> Result<Option<i64>> {
        let cfg = &self.client.config;
        let mut inv = script::RESOLVE_ACQUIRE.prepare_invoke();
        // a copy of the request delayed longer than this would still apply (and expire with its
        // lease): keep the marker for ten minutes, or longer than the retry window
        inv.key(latch).arg(cfg.retry_window_ms().max(600_000));
        let v: Value = script::run(&self.client.conn, cfg.command_timeout, &self.key, &inv).await?;
        match decode_acquire(&v)? {
            Reply::Granted(count) => {
                self.client.latches.discard(latch.to_owned());
                Ok(Some(count))
            }
            Reply::Refused(_) | Reply::Cancelled => Ok(None),
        }
    }

    /// Keeps asking (within the latch's lifetime) whether an ambiguous acquire took effect, and
    /// releases the hold if it did: nobody is waiting for it any more.
    fn settle_in_background(
        &self,
        turn: Turn,
        latch: String,
        mode: Mode,
        sent_at: Instant,
        need_ms: u64,
        owner: OwnerId,
    ) {
        let core = self.clone();
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        rt.spawn(async move {
            let window = Duration::from_millis(core.client.config.retry_window_ms());
            loop {
                match core.settle(&latch).await {
                    Ok(Some(count)) => {
                        let held = core.record_grant(&turn, owner, mode, sent_at, need_ms, count);
                        drop(turn);
                        tracing::info!(key = %core.key, field = %held.field(), "an acquire whose reply was lost had been granted after its caller gave up: releasing it");
                        drop(held); // queues the release
                        return;
                    }
                    Ok(None) => return,
                    Err(e) if sent_at.elapsed() < window => {
                        tracing::debug!(key = %core.key, error = %e, "cannot settle an ambiguous acquire yet; retrying");
                        tokio::time::sleep(core.client.config.retry_pause()).await;
                    }
                    Err(e) => {
                        tracing::warn!(key = %core.key, error = %e, "could not learn whether an acquire whose reply was lost took effect; if it did, it expires with its lease");
                        return;
                    }
                }
            }
        });
    }

    fn record_grant(
        &self,
        turn: &Turn,
        owner: OwnerId,
        mode: Mode,
        sent_at: Instant,
        need_ms: u64,
        count: i64,
    ) -> Held {
        let lease = self
            .client
            .holds
            .granted(turn, self.kind, mode, sent_at, need_ms, count);
        Held {
            inner: Some(HeldInner {
                core: self.clone(),
                field: turn.field().clone(),
                owner,
                lease,
                mode,
            }),
        }
    }

    /// Releases the hold of `field` observed through `lease` (a guard's), unless it is known to
    /// have ended.
    async fn release_hold(&self, field: &Arc<str>, lease: &Arc<Lease>, mode: Mode) -> Result<Unlocked> {
        let turn = self.client.holds.turn(&self.key, field, self.kind).await;
        let plan = self.client.holds.begin_release(&turn, lease, mode);
        self.send_release(&turn, Some(lease), plan).await
    }

    /// Sends the release `plan` asks for. One request id for every retry, so a retried request
    /// can never release twice.
    async fn send_release(
        &self,
        turn: &Turn,
        lease: Option<&Arc<Lease>>,
        plan: ReleasePlan,
    ) -> Result<Unlocked> {
        let cfg = &self.client.config;
        let field = turn.field();
        let not_held = || Error::NotHeld {
            key: self.key.to_string(),
            field: field.to_string(),
        };
        let (last, need_ms) = match plan {
            ReleasePlan::Stale => {
                tracing::debug!(key = %self.key, field = %field, "release of a hold known to have ended: nothing sent");
                return Err(not_held());
            }
            ReleasePlan::Send { last, need_ms } => (last, need_ms),
            ReleasePlan::Unknown => (false, millis("lock_watchdog_timeout", cfg.lock_watchdog_timeout)?),
        };
        let latch = name::latch(&self.key, &request_id());
        let inv = self
            .kind
            .release(&self.ctx(field), need_ms, &latch, cfg.retry_window_ms(), last);
        let sent_at = Instant::now();
        let mut tries = 0;
        let reply = loop {
            match script::run::<Option<i64>>(&self.client.conn, cfg.command_timeout, &self.key, &inv).await {
                Ok(r) => break r,
                Err(e) if e.is_transient() && tries < cfg.retry_attempts => {
                    tries += 1;
                    tracing::debug!(key = %self.key, field = %field, error = %e, tries, "unlock failed; retrying with the same request id");
                    tokio::time::sleep(cfg.retry_pause()).await;
                }
                Err(e) => return Err(e),
            }
        };
        // The latch only matters for our own retries, which are over: the janitor deletes it
        // (batched with other requests' latches, off this call's path).
        self.client.latches.discard(latch);
        let (outcome, result) = match reply {
            None => (Released::NotHeld, Err(not_held())),
            Some(0) if last => (Released::Gone, Ok(Unlocked::Released)),
            Some(0) => (Released::StillHeld, Ok(Unlocked::Partial)),
            Some(1) => (Released::Gone, Ok(Unlocked::Released)),
            Some(other) => return Err(Error::Protocol(format!("unlock replied {other}"))),
        };
        self.client.holds.released(turn, lease, &plan, sent_at, outcome);
        match &result {
            Ok(u) => tracing::debug!(key = %self.key, field = %field, outcome = ?u, "released"),
            Err(_) => tracing::debug!(key = %self.key, field = %field, "unlock refused: not held"),
        }
        result
    }

    /// Redisson-style unlock by the handle's owner (no guard).
    pub(crate) async fn unlock(&self) -> Result<Unlocked> {
        let owner = self.fixed_owner()?;
        let field: Arc<str> = self.field_of(owner).into();
        let core = self.clone();
        let request = async move {
            let turn = core.client.holds.turn(&core.key, &field, core.kind).await;
            let (plan, lease) = core.client.holds.begin_release_any(&turn);
            core.send_release(&turn, lease.as_ref(), plan).await
        };
        detached(request, self.key.clone()).await
    }

    /// Releases every hold of `field` (the client is shutting down).
    pub(crate) async fn release_all(&self, field: Arc<str>) -> Result<Unlocked> {
        let turn = self.client.holds.turn(&self.key, &field, self.kind).await;
        let watchdog_ms = millis("lock_watchdog_timeout", self.client.config.lock_watchdog_timeout)?;
        self.send_release(
            &turn,
            None,
            ReleasePlan::Send {
                last: true,
                need_ms: watchdog_ms,
            },
        )
        .await
    }

    pub(crate) async fn force_unlock(&self) -> Result<bool> {
        let inv = self.kind.force_release(&self.ctx(""));
        let timeout = self.client.config.command_timeout;
        let r: i64 = script::run(&self.client.conn, timeout, &self.key, &inv).await?;
        if r == 1 {
            // only a lock that was really deleted ends this client's holds (a read-side force on
            // a write-locked lock changes nothing)
            self.client.holds.lose_key(&self.key, LostReason::ForceUnlocked);
        }
        tracing::info!(key = %self.key, kind = self.kind.label(), deleted = r == 1, "force unlock");
        Ok(r == 1)
    }
}

/// Runs a release so that dropping the returned future does not cancel it.
async fn detached(
    request: impl std::future::Future<Output = Result<Unlocked>> + Send + 'static,
    key: Arc<str>,
) -> Result<Unlocked> {
    FinishOnDrop::new(request, move |res: Result<Unlocked>| {
        Box::pin(async move {
            if let Err(e) = res {
                tracing::warn!(key = %key, error = %e, "release (its caller gave up waiting) failed");
            }
        })
    })
    .await
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
    /// The hold's epoch (shared with the other live holds of the field).
    lease: Arc<Lease>,
    mode: Mode,
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
        match self.inner().mode {
            Mode::Watchdog => None,
            Mode::Leased { lease_ms, .. } => Some(Duration::from_millis(lease_ms)),
        }
    }

    pub(crate) fn state(&self) -> LeaseState {
        self.inner().lease.state()
    }

    pub(crate) fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        let lease = self.inner().lease.clone();
        async move { lease.lost().await }
    }

    /// Whether `other` belongs to the same epoch (it re-entered this hold).
    pub(crate) fn same_epoch(&self, other: &Held) -> bool {
        Arc::ptr_eq(&self.inner().lease, &other.inner().lease)
    }

    /// The same lock acting for this hold's owner.
    pub(crate) fn pinned_core(&self) -> LockCore {
        let mut core = self.core().clone();
        core.owner = OwnerSel::Pinned(self.owner());
        core
    }

    /// Releases this hold. The release runs in its own task: cancelling the returned future
    /// does not cancel the release. A hold known to have ended sends nothing (`NotHeld`).
    pub(crate) async fn unlock(mut self) -> Result<Unlocked> {
        let Some(inner) = self.inner.take() else {
            return Err(Error::Shutdown);
        };
        let key = inner.core.key.clone();
        let request = async move {
            inner
                .core
                .release_hold(&inner.field, &inner.lease, inner.mode)
                .await
        };
        detached(request, key).await
    }

    /// Gives up the guard without releasing (renewal goes on in watchdog mode).
    pub(crate) fn forget(mut self) {
        self.inner = None;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        if inner.lease.state() != LeaseState::Held {
            tracing::debug!(key = %inner.core.key, field = %inner.field, "guard of an ended hold dropped: nothing to release");
            return;
        }
        let key = inner.core.key.clone();
        let field = inner.field.clone();
        let queue = inner.core.client.releases.clone();
        let job: ReleaseJob = Box::new(move || {
            Box::pin(async move {
                match inner
                    .core
                    .release_hold(&inner.field, &inner.lease, inner.mode)
                    .await
                {
                    Ok(_) => {}
                    Err(Error::NotHeld { .. }) => {
                        tracing::debug!(key = %inner.core.key, field = %inner.field, "dropped guard's hold had already ended")
                    }
                    Err(e) => {
                        tracing::warn!(key = %inner.core.key, field = %inner.field, error = %e, "release on drop failed; the lock expires with its lease")
                    }
                }
            })
        });
        if queue.push(job) {
            tracing::debug!(key = %key, field = %field, "guard dropped: release queued");
        } else {
            tracing::warn!(key = %key, field = %field, "guard dropped after the client stopped: the lock expires with its lease");
        }
    }
}

/// A release queued by a dropped guard.
pub(crate) type ReleaseJob = Box<dyn FnOnce() -> futures::future::BoxFuture<'static, ()> + Send>;

/// The queue of releases from dropped guards, run by one worker per client (guards may be
/// dropped anywhere, even outside a runtime); it can be flushed (shutdown).
pub(crate) struct ReleaseQueue {
    tx: mpsc::UnboundedSender<ReleaseJob>,
    pending: AtomicUsize,
    idle: Notify,
}

impl ReleaseQueue {
    /// Starts the worker on the current runtime.
    pub(crate) fn start() -> Arc<ReleaseQueue> {
        let (tx, mut rx) = mpsc::unbounded_channel::<ReleaseJob>();
        let queue = Arc::new(ReleaseQueue {
            tx,
            pending: AtomicUsize::new(0),
            idle: Notify::new(),
        });
        let weak = Arc::downgrade(&queue);
        tokio::spawn(async move {
            while let Some(job) = rx.recv().await {
                let weak = weak.clone();
                tokio::spawn(async move {
                    job().await;
                    if let Some(q) = weak.upgrade() {
                        q.done();
                    }
                });
            }
        });
        queue
    }

    /// Queues a job; false when the worker is gone.
    fn push(&self, job: ReleaseJob) -> bool {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.tx.send(job).is_err() {
            self.done();
            return false;
        }
        true
    }

    fn done(&self) {
        if self.pending.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.idle.notify_waiters();
        }
    }

    /// Waits until every queued release has finished.
    pub(crate) async fn flush(&self) {
        loop {
            let idle = self.idle.notified();
            let mut idle = std::pin::pin!(idle);
            idle.as_mut().enable();
            if self.pending.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }

    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_id_is_32_lowercase_hex() {
        let a = request_id();
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
            "{a}"
        );
        assert_ne!(a, request_id());
    }

    #[test]
    fn acquire_replies_decode() {
        let pair = |a, b| Value::Array(vec![Value::Int(a), Value::Int(b)]);
        assert!(matches!(decode_acquire(&pair(1, 2)), Ok(Reply::Granted(2))));
        assert!(matches!(decode_acquire(&pair(0, -1)), Ok(Reply::Refused(-1))));
        assert!(matches!(decode_acquire(&pair(2, 0)), Ok(Reply::Cancelled)));
        assert!(decode_acquire(&pair(1, 0)).is_err(), "a grant has a count");
        assert!(decode_acquire(&Value::Nil).is_err());
        assert!(decode_acquire(&Value::Int(5)).is_err());
    }
}
