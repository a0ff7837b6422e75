//! One pub/sub hub per client: shared, reference-counted subscriptions to unlock channels.
//!
//! Each channel has one `Notify`. Redisson's message semantics map onto it directly:
//! `0` → `notify_one` (wake one local waiter, or store one permit for the next),
//! `1` → `notify_waiters` (wake every registered waiter). A waiter registers (`enable`) before
//! it re-tries the lock, so a message published between its attempt and its sleep is never lost.
//! A dropped connection wakes every waiter and makes its subscription stale: each re-tries at
//! once, joins again (the SUBSCRIBE completes when the connection is back) and re-tries after
//! that, so an unlock published while the connection was down is never waited out.
//!
//! # One driver per channel
//!
//! Callers never send SUBSCRIBE or UNSUBSCRIBE themselves. A channel's local users only change
//! its *wanted* state (a user count, and a request for a subscription); one spawned driver task
//! per channel sends the commands, one at a time, until the server matches what is wanted:
//!
//! ```text
//!             join (requested)                SUBSCRIBE ok
//!   [absent] ------------------> [subscribing] -----------> [subscribed]
//!      ^                            |  SUBSCRIBE failed          |
//!      |                            v  or timed out              | last user leaves
//!      |                      [maybe subscribed] <---------------+
//!      |    UNSUBSCRIBE ok        |   (no users)
//!      +--------------------------+   (a user joins meanwhile: SUBSCRIBE again)
//! ```
//!
//! When the last user leaves a confirmed subscription, the driver waits [`LINGER`] (50 ms)
//! before its UNSUBSCRIBE: a lock passed back and forth between two tasks keeps its channel, and
//! the task that re-queues joins it without a command.
//!
//! So a caller that times out, fails or is dropped never cancels a command half-way: the driver
//! finishes it, notices that nobody is left, and undoes it; the map entry goes away only once
//! the server is (as far as can be known) unsubscribed. `subscribe` only waits, bounded by the
//! caller's budget, for the driver's answer.
//!
//! # Sharded subscriptions that the server drops
//!
//! When a sharded channel's slot leaves a node (slot migration, failover), Redis drops its
//! subscribers with a `SUNSUBSCRIBE` push. The hub then counts the channel as dropped and wakes
//! its waiters; each sees its [`Subscription`] is stale and joins again, which sends a new
//! `SSUBSCRIBE` (routed to the slot's new node) before the old user leaves.
//!
//! # Health
//!
//! A failed or timed-out SUBSCRIBE (or UNSUBSCRIBE) marks pub/sub unhealthy. Until a backoff
//! (100 ms, doubling up to 5 s) has passed, `subscribe` calls that would need a new SUBSCRIBE
//! fail at once, so waiters poll instead of spending their budget; then one caller per backoff
//! period is let through to probe. Any successful command makes the hub healthy again. Joining a
//! channel that is already subscribed is never refused.

use foldhash::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;
use redis::{ProtocolVersion, PushInfo, PushKind};
use tokio::sync::Notify;

use crate::config::Config;
use crate::error::{Error, Result};

/// First backoff after pub/sub failed; doubles with each further failure.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
/// Longest backoff.
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// A bound on one SUBSCRIBE/UNSUBSCRIBE should the connection's own response timeout (the
/// client's command timeout) not end it first.
const COMMAND_CAP: Duration = Duration::from_secs(10);
/// Failed UNSUBSCRIBEs of an unused channel are retried (with backoff) this many times; then
/// the channel is forgotten.
const UNSUBSCRIBE_RETRIES: u32 = 5;
/// How long a confirmed subscription stays after its last local user left, before the driver
/// sends UNSUBSCRIBE: a holder that re-queues right after its waiter took over (a lock passed
/// back and forth) joins it without a command and without a second attempt.
const LINGER: Duration = Duration::from_millis(50);

/// The pub/sub commands of one client, resolved once from [`PublishMode`](crate::PublishMode)
/// and the deployment when the client is built: unlock scripts publish and waiters subscribe
/// the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `PUBLISH` / `SUBSCRIBE`.
    Classic,
    /// `SPUBLISH` / `SSUBSCRIBE` (cluster only).
    Sharded,
    /// Both of the above (cluster only): publish on both channels, listen on both.
    Both,
}

impl Mode {
    /// The scripts' "publish mode" argument (lua/common/notify.lua).
    pub(crate) fn script_arg(self) -> &'static str {
        match self {
            Mode::Classic => "PUBLISH",
            Mode::Sharded => "SPUBLISH",
            Mode::Both => "BOTH",
        }
    }

    fn classic(self) -> bool {
        matches!(self, Mode::Classic | Mode::Both)
    }

    fn sharded(self) -> bool {
        matches!(self, Mode::Sharded | Mode::Both)
    }
}

/// A RESP3 cluster connection seeded by `client`'s address (and credentials) that delivers
/// pushes to the hub; it routes SSUBSCRIBE to the node serving a channel's slot and
/// re-subscribes after reconnects and slot moves.
pub(crate) async fn cluster_conn(
    client: &redis::Client,
    config: &Config,
    channels: ChannelsHandle,
) -> Result<PubSubConn> {
    let cc = redis::cluster::ClusterClientBuilder::new([client.get_connection_info().clone()])
        .use_protocol(ProtocolVersion::RESP3)
        .push_sender(push_handler(channels))
        .response_timeout(config.command_timeout)
        .connection_timeout(config.connect_timeout)
        .build()
        .map_err(|e| Error::InvalidArgument(format!("bad cluster pub/sub configuration: {e}")))?;
    Ok(PubSubConn::Cluster(cc.get_async_connection().await?))
}

/// The connection subscriptions are made on.
#[derive(Clone)]
pub(crate) enum PubSubConn {
    Manager(ConnectionManager),
    Cluster(ClusterConnection),
    /// The current master of a Sentinel service (moves with it).
    Sentinel(Arc<crate::sentinel::SentinelLink>),
}

pub(crate) type ChannelsHandle = Arc<Mutex<HashMap<String, Arc<Channel>>>>;

pub(crate) struct Channel {
    pub(crate) notify: Notify,
    /// When the last unlock message arrived (ms since [`clock_ms`]'s origin; 0: never).
    last_message_ms: std::sync::atomic::AtomicU64,
    state: Mutex<State>,
    /// Signalled whenever a SUBSCRIBE of this channel ends (joiners wait on it).
    settled: Notify,
    /// Wakes a driver that sleeps between UNSUBSCRIBE retries when a user arrives.
    kick: Notify,
}

/// What is known about one channel. Lock order: the channel map, then a channel's state.
#[derive(Default)]
struct State {
    /// Local users (waiters holding or waiting for a `Subscription`).
    users: usize,
    /// The server confirmed a SUBSCRIBE and no UNSUBSCRIBE has been sent since.
    subscribed: bool,
    /// A SUBSCRIBE may have reached the server and no UNSUBSCRIBE has been confirmed since.
    maybe_subscribed: bool,
    /// A user waits for a SUBSCRIBE that has not been sent yet.
    requested: bool,
    /// A SUBSCRIBE is in flight.
    subscribing: bool,
    /// A driver task runs for this channel (the only one that sends its commands).
    driving: bool,
    /// Counted in the `redisson_lock_subscriptions` gauge (metrics).
    counted: bool,
    /// SUBSCRIBEs of this channel that failed so far (a joiner fails on the next one).
    failures: u64,
    /// How many times the subscription was dropped without us asking: a sharded channel's slot
    /// moved to another node (Redis sends SUNSUBSCRIBE), or the connection broke. A
    /// [`Subscription`] made before the last drop is stale: its waiter subscribes again.
    dropped: u64,
    last_failure: Option<Failure>,
}

enum Step {
    Subscribe,
    Unsubscribe,
}

impl State {
    fn work(&self) -> Option<Step> {
        if self.users > 0 && self.requested && !self.subscribed {
            Some(Step::Subscribe)
        } else if self.users == 0 && self.maybe_subscribed {
            Some(Step::Unsubscribe)
        } else {
            None
        }
    }
}

impl Channel {
    pub(crate) fn new() -> Channel {
        Channel {
            notify: Notify::new(),
            last_message_ms: std::sync::atomic::AtomicU64::new(0),
            state: Mutex::new(State::default()),
            settled: Notify::new(),
            kick: Notify::new(),
        }
    }

    /// Records that an unlock message arrived now.
    pub(crate) fn note_message(&self) {
        self.last_message_ms
            .store(clock_ms().max(1), std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether an unlock message arrived at or after `since` (a [`clock_ms`] reading).
    pub(crate) fn message_since(&self, since: u64) -> bool {
        self.last_message_ms.load(std::sync::atomic::Ordering::Relaxed) >= since.max(1)
    }

    /// The server no longer delivers this channel's messages (it dropped the subscription, or
    /// the connection broke): a confirmed subscription with users (or, `lingering_too`, one
    /// lingering without users) counts as dropped, so its [`Subscription`]s are stale and
    /// their waiters join again. Returns whether it was.
    fn server_dropped(&self, lingering_too: bool) -> bool {
        let mut st = self.state.lock();
        let dropped = (st.users > 0 || lingering_too) && st.subscribed && !st.subscribing;
        if dropped {
            st.subscribed = false;
            st.dropped += 1;
        }
        dropped
    }
}

/// Why a pub/sub command failed.
#[derive(Clone, Debug)]
enum Failure {
    Redis(redis::RedisError),
    Timeout(Duration),
    /// In [`Mode::Both`]: the first command of the pair succeeded, the second failed (so the
    /// server's state did change).
    Partial(Box<Failure>),
}

impl Failure {
    fn to_error(&self) -> Error {
        match self {
            Failure::Redis(e) => Error::Redis(e.clone()),
            Failure::Timeout(d) => Error::CommandTimeout(*d),
            Failure::Partial(f) => f.to_error(),
        }
    }

    /// The server answered with an error: the command ran and changed nothing.
    fn refused(&self) -> bool {
        matches!(self, Failure::Redis(e) if e.code().is_some())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Redis(e) => write!(f, "{e}"),
            Failure::Timeout(d) => write!(f, "no reply within {d:?}"),
            Failure::Partial(inner) => write!(f, "{inner} (after the classic command succeeded)"),
        }
    }
}

/// Pub/sub health: consecutive failures and when the next probe may go out.
#[derive(Default)]
struct Health {
    failures: u32,
    retry_at: Option<Instant>,
    last: Option<Failure>,
}

impl Health {
    fn backoff(failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(16);
        BACKOFF_MIN.saturating_mul(1 << doublings).min(BACKOFF_MAX)
    }

    fn is_healthy(&self) -> bool {
        self.failures == 0
    }

    /// May a caller that needs a new SUBSCRIBE go ahead? While unhealthy, one caller per backoff
    /// period is let through (to probe); the others get the last failure at once.
    fn admit(&mut self, now: Instant) -> Result<()> {
        if self.failures == 0 {
            return Ok(());
        }
        match self.retry_at {
            Some(at) if now < at => Err(self
                .last
                .as_ref()
                .map_or(Error::CommandTimeout(Duration::ZERO), Failure::to_error)),
            _ => {
                self.retry_at = Some(now + Self::backoff(self.failures));
                Ok(())
            }
        }
    }

    fn succeeded(&mut self) {
        if self.failures > 0 {
            tracing::info!(failures = self.failures, "pub/sub healthy again");
        }
        *self = Health::default();
    }

    fn failed(&mut self, now: Instant, failure: &Failure) {
        if self.failures == 0 {
            tracing::warn!(error = %failure, "pub/sub unhealthy: waiters poll until it recovers");
        }
        self.failures = self.failures.saturating_add(1);
        self.retry_at = Some(now + Self::backoff(self.failures));
        self.last = Some(failure.clone());
    }
}

pub(crate) struct Hub {
    channels: ChannelsHandle,
    conn: Option<PubSubConn>,
    mode: Mode,
    health: Mutex<Health>,
    /// The client's runtime, where channel drivers run (the one `new` was called in).
    runtime: Option<tokio::runtime::Handle>,
}

/// Milliseconds on a monotonic clock local to this process (for comparing message times).
pub(crate) fn clock_ms() -> u64 {
    static ORIGIN: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);
    ORIGIN.elapsed().as_millis() as u64
}

/// Handles every push from the server; must not block.
pub(crate) fn push_handler(
    channels: ChannelsHandle,
) -> impl Fn(PushInfo) -> std::result::Result<(), ()> + Send + Sync + 'static {
    move |push: PushInfo| {
        deliver(&channels, push);
        Ok(())
    }
}

/// The hub's side of a Sentinel link: what the master's pub/sub connection pushes goes to the
/// hub's channels, and a move of the master wakes every waiter.
pub(crate) struct HubSink(pub(crate) ChannelsHandle);

impl crate::sentinel::PushSink for HubSink {
    fn push(&self, push: PushInfo) {
        deliver(&self.0, push);
    }

    fn wake_all(&self) {
        for ch in self.0.lock().values() {
            ch.notify.notify_waiters();
            ch.notify.notify_one();
        }
    }
}

/// Delivers one push to the channels' waiters.
fn deliver(channels: &ChannelsHandle, push: PushInfo) {
    match push.kind {
        PushKind::Message | PushKind::SMessage => {
            if let Some(msg) = redis::Msg::from_push_info(push) {
                let ch = channels.lock().get(msg.get_channel_name()).cloned();
                if let Some(ch) = ch {
                    ch.note_message();
                    match msg.get_payload_bytes() {
                        b"0" => ch.notify.notify_one(),
                        b"1" => ch.notify.notify_waiters(),
                        other => tracing::trace!(
                            channel = msg.get_channel_name(),
                            payload = ?String::from_utf8_lossy(other),
                            "ignoring unknown unlock message"
                        ),
                    }
                }
            }
        }
        // our own SUNSUBSCRIBE is confirmed this way too, but only once nobody uses the
        // channel; with users, the server dropped it (the slot moved to another node)
        PushKind::SUnsubscribe => {
            let name = push.data.first().and_then(|v| match v {
                redis::Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
                _ => None,
            });
            let ch = name.and_then(|n| channels.lock().get(&n).cloned());
            if let Some(ch) = ch {
                // (no users: our own SUNSUBSCRIBE's confirmation)
                if ch.server_dropped(false) {
                    tracing::debug!(
                        "the server dropped a sharded subscription (slot moved): waiters re-subscribe"
                    );
                    ch.notify.notify_waiters();
                    ch.notify.notify_one();
                }
            }
        }
        // Messages published while the connection was down are lost. Every subscription
        // counts as dropped: its waiters re-try at once, join again (a SUBSCRIBE that
        // completes once the connection is back, or fails and leaves them polling every
        // `poll_interval`), and re-try once more after it: one re-poll per waiter after the
        // reconnect, however long they would otherwise sleep.
        PushKind::Disconnection => {
            tracing::debug!("pub/sub connection dropped: every waiter re-tries and re-subscribes");
            for ch in channels.lock().values() {
                // a lingering subscription too: a waiter joining it must not think it listens
                ch.server_dropped(true);
                ch.notify.notify_waiters();
                ch.notify.notify_one();
            }
        }
        _ => {}
    }
}

impl Hub {
    pub(crate) fn new_channels() -> ChannelsHandle {
        Arc::new(Mutex::new(HashMap::default()))
    }

    pub(crate) fn new(channels: ChannelsHandle, conn: Option<PubSubConn>, mode: Mode) -> Hub {
        Hub {
            channels,
            conn,
            mode,
            health: Mutex::new(Health::default()),
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }

    pub(crate) fn has_connection(&self) -> bool {
        self.conn.is_some()
    }

    /// Whether the last pub/sub command succeeded (for tests and diagnostics).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn is_healthy(&self) -> bool {
        self.health.lock().is_healthy()
    }

    /// Joins `channel` only if the server already confirmed its subscription (other local
    /// waiters use it, or used it a moment ago): no command is sent. `None` otherwise (also without a pub/sub
    /// connection, or while the subscription is being made).
    pub(crate) fn join_subscribed(self: &Arc<Self>, channel: &str) -> Option<Subscription> {
        self.conn.as_ref()?;
        let map = self.channels.lock();
        let ch = map.get(channel)?;
        let mut st = ch.state.lock();
        // (no users left but still subscribed: the driver has not sent its UNSUBSCRIBE yet and
        // will see this user and keep the subscription)
        if !st.subscribed {
            return None;
        }
        st.users += 1;
        let dropped = st.dropped;
        drop(st);
        Some(Subscription::new(self, channel, ch.clone(), dropped))
    }

    /// Joins `channel`, subscribing if it is not subscribed yet. Returns within `budget`: with
    /// the subscription, or with the SUBSCRIBE's error, or [`Error::CommandTimeout`] when it
    /// did not complete in time, or at once with the last failure while pub/sub is unhealthy.
    ///
    /// Cancel safe: dropping the future (or an error) leaves the channel again; a SUBSCRIBE
    /// already sent is finished by the channel's driver and undone if nobody uses the channel.
    pub(crate) async fn subscribe(self: &Arc<Self>, channel: &str, budget: Duration) -> Result<Subscription> {
        let (sub, seen_failures) = {
            let mut map = self.channels.lock();
            let existing = map.get(channel).cloned();
            if let Some(ch) = &existing {
                let mut st = ch.state.lock();
                if st.subscribed || self.conn.is_none() {
                    st.users += 1;
                    let dropped = st.dropped;
                    drop(st);
                    return Ok(Subscription::new(self, channel, ch.clone(), dropped));
                }
            }
            if self.conn.is_some() {
                self.health.lock().admit(Instant::now())?;
            }
            let ch = existing.unwrap_or_else(|| {
                let ch = Arc::new(Channel::new());
                map.insert(channel.to_owned(), ch.clone());
                ch
            });
            let mut st = ch.state.lock();
            st.users += 1;
            let sub = Subscription::new(self, channel, ch.clone(), st.dropped);
            if self.conn.is_none() {
                return Ok(sub); // no pub/sub connection: the waiter polls
            }
            if !st.subscribing {
                st.requested = true; // an in-flight SUBSCRIBE serves this user too
            }
            let seen = st.failures;
            let start = !st.driving;
            st.driving = true;
            drop(st);
            if start {
                if !self.spawn_driver(channel, &ch) {
                    ch.state.lock().driving = false;
                    drop(map); // before `sub` leaves, which takes the map lock
                    drop(sub);
                    return Err(Error::Shutdown);
                }
            } else {
                ch.kick.notify_one();
            }
            (sub, seen)
        };

        let ch = sub.ch.clone();
        let outcome = async {
            loop {
                let settled = ch.settled.notified();
                let mut settled = std::pin::pin!(settled);
                settled.as_mut().enable();
                {
                    let st = ch.state.lock();
                    if st.subscribed {
                        return Ok(());
                    }
                    if st.failures > seen_failures {
                        return Err(st
                            .last_failure
                            .as_ref()
                            .map_or(Error::CommandTimeout(budget), Failure::to_error));
                    }
                }
                settled.await;
            }
        };
        match tokio::time::timeout(budget, outcome).await {
            Ok(Ok(())) => Ok(sub),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::CommandTimeout(budget)),
        }
    }

    /// Starts `ch`'s driver (the caller has set `driving`) on the client's runtime. False
    /// without a runtime.
    fn spawn_driver(self: &Arc<Self>, name: &str, ch: &Arc<Channel>) -> bool {
        let rt = self
            .runtime
            .clone()
            .or_else(|| tokio::runtime::Handle::try_current().ok());
        match rt {
            Some(rt) => {
                rt.spawn(self.clone().drive(name.to_owned(), ch.clone()));
                true
            }
            None => {
                tracing::debug!(channel = name, "no runtime to run the pub/sub driver on");
                false
            }
        }
    }

    /// Sends SUBSCRIBE/UNSUBSCRIBE for one channel until the server matches what its users
    /// want, then removes the channel from the map if it has no users left.
    async fn drive(self: Arc<Self>, name: String, ch: Arc<Channel>) {
        let mut unsubscribe_failures = 0u32;
        // after a failed UNSUBSCRIBE: no retry before this (a SUBSCRIBE may go out at once)
        let mut retry_at: Option<Instant> = None;
        let mut lingered = false;
        loop {
            // the last user left a confirmed subscription: keep it a moment for a quick return
            let linger = {
                let st = ch.state.lock();
                !lingered && st.subscribed && matches!(st.work(), Some(Step::Unsubscribe))
            };
            if linger {
                lingered = true;
                tokio::select! {
                    _ = tokio::time::sleep(LINGER) => {}
                    _ = ch.kick.notified() => {}
                }
                continue;
            }
            let (step, was_maybe) = {
                let mut st = ch.state.lock();
                let step = st.work();
                let was_maybe = st.maybe_subscribed;
                match step {
                    Some(Step::Subscribe) => {
                        st.requested = false;
                        st.subscribing = true;
                        st.maybe_subscribed = true;
                    }
                    Some(Step::Unsubscribe) => st.subscribed = false,
                    None => {}
                }
                (step, was_maybe)
            };
            match step {
                None => {
                    let mut map = self.channels.lock();
                    let mut st = ch.state.lock();
                    if st.work().is_some() {
                        continue; // someone joined or left meanwhile
                    }
                    st.driving = false;
                    st.requested = false;
                    if st.users == 0 && map.get(&name).is_some_and(|cur| Arc::ptr_eq(cur, &ch)) {
                        map.remove(&name);
                    }
                    return;
                }
                Some(Step::Subscribe) => {
                    let res = self.command(Step::Subscribe, &name).await;
                    self.record(&res);
                    {
                        let mut st = ch.state.lock();
                        st.subscribing = false;
                        match res {
                            Ok(()) => {
                                (unsubscribe_failures, retry_at) = (0, None);
                                st.subscribed = true;
                                if !std::mem::replace(&mut st.counted, true) {
                                    crate::metrics::subscriptions(1.0);
                                }
                                tracing::trace!(channel = %name, mode = ?self.mode, "subscribed");
                            }
                            Err(f) => {
                                tracing::debug!(channel = %name, error = %f, "subscribe failed");
                                if f.refused() {
                                    st.maybe_subscribed = was_maybe;
                                }
                                st.failures += 1;
                                st.last_failure = Some(f);
                            }
                        }
                    }
                    ch.settled.notify_waiters();
                }
                Some(Step::Unsubscribe) => {
                    if let Some(at) = retry_at.filter(|at| Instant::now() < *at) {
                        // back off, unless a user arrives and wants the channel again
                        tokio::select! {
                            _ = tokio::time::sleep_until(at.into()) => {}
                            _ = ch.kick.notified() => {}
                        }
                        continue;
                    }
                    let res = self.command(Step::Unsubscribe, &name).await;
                    self.record(&res);
                    match res {
                        Ok(()) => {
                            (unsubscribe_failures, retry_at) = (0, None);
                            let mut st = ch.state.lock();
                            st.maybe_subscribed = false;
                            if std::mem::take(&mut st.counted) {
                                crate::metrics::subscriptions(-1.0);
                            }
                            tracing::trace!(channel = %name, "unsubscribed");
                        }
                        Err(f) if unsubscribe_failures >= UNSUBSCRIBE_RETRIES => {
                            tracing::warn!(channel = %name, error = %f, "could not unsubscribe; giving up");
                            (unsubscribe_failures, retry_at) = (0, None);
                            let mut st = ch.state.lock();
                            st.maybe_subscribed = false;
                            if std::mem::take(&mut st.counted) {
                                crate::metrics::subscriptions(-1.0);
                            }
                        }
                        Err(f) => {
                            unsubscribe_failures += 1;
                            let delay = Health::backoff(unsubscribe_failures);
                            tracing::debug!(channel = %name, error = %f, ?delay, "unsubscribe failed; retrying");
                            retry_at = Some(Instant::now() + delay);
                        }
                    }
                }
            }
        }
    }

    /// One SUBSCRIBE or UNSUBSCRIBE of `name` in the hub's mode ([`Mode::Both`]: the classic
    /// command, then the sharded one).
    async fn command(&self, step: Step, name: &str) -> std::result::Result<(), Failure> {
        let Some(conn) = self.conn.clone() else {
            return Ok(());
        };
        let mut classic_done = false;
        if self.mode.classic() {
            self.one(&conn, &step, false, name).await?;
            classic_done = true;
        }
        if self.mode.sharded() {
            let res = self.one(&conn, &step, true, name).await;
            return match res {
                Err(f) if classic_done => Err(Failure::Partial(Box::new(f))),
                other => other,
            };
        }
        Ok(())
    }

    async fn one(
        &self,
        conn: &PubSubConn,
        step: &Step,
        sharded: bool,
        name: &str,
    ) -> std::result::Result<(), Failure> {
        let fut = async move {
            match (conn.clone(), step, sharded) {
                (PubSubConn::Cluster(mut c), Step::Subscribe, true) => c.ssubscribe(name).await,
                (PubSubConn::Cluster(mut c), Step::Unsubscribe, true) => c.sunsubscribe(name).await,
                (PubSubConn::Cluster(mut c), Step::Subscribe, false) => c.subscribe(name).await,
                (PubSubConn::Cluster(mut c), Step::Unsubscribe, false) => c.unsubscribe(name).await,
                // a single node (or a sentinel master): the client resolves every mode to classic there
                (PubSubConn::Manager(mut c), Step::Subscribe, _) => c.subscribe(name).await,
                (PubSubConn::Manager(mut c), Step::Unsubscribe, _) => c.unsubscribe(name).await,
                (PubSubConn::Sentinel(link), Step::Subscribe, _) => link.subscribe(name).await,
                (PubSubConn::Sentinel(link), Step::Unsubscribe, _) => link.unsubscribe(name).await,
            }
        };
        match tokio::time::timeout(COMMAND_CAP, fut).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Failure::Redis(e)),
            Err(_) => Err(Failure::Timeout(COMMAND_CAP)),
        }
    }

    fn record(&self, res: &std::result::Result<(), Failure>) {
        let mut health = self.health.lock();
        match res {
            Ok(()) => health.succeeded(),
            Err(f) => health.failed(Instant::now(), f),
        }
    }

    /// One user leaves `ch`; the last one starts the driver to unsubscribe, or removes the
    /// channel when nothing is (maybe) subscribed.
    fn leave(self: &Arc<Self>, name: &str, ch: &Arc<Channel>) {
        let unsubscribe = {
            let mut map = self.channels.lock();
            let mut st = ch.state.lock();
            st.users -= 1;
            if st.users > 0 || st.driving {
                return; // a running driver sees the change
            }
            if st.maybe_subscribed {
                st.driving = true;
                true
            } else {
                if map.get(name).is_some_and(|cur| Arc::ptr_eq(cur, ch)) {
                    map.remove(name);
                }
                false
            }
        };
        if unsubscribe && !self.spawn_driver(name, ch) {
            // nowhere to unsubscribe from: forget the channel (its connection goes with the runtime)
            let mut map = self.channels.lock();
            let mut st = ch.state.lock();
            st.driving = false;
            st.maybe_subscribed = false;
            st.subscribed = false;
            if std::mem::take(&mut st.counted) {
                crate::metrics::subscriptions(-1.0);
            }
            if st.users == 0 && map.get(name).is_some_and(|cur| Arc::ptr_eq(cur, ch)) {
                map.remove(name);
            }
        }
    }

    /// Number of channels with local users, or still being subscribed or unsubscribed (for
    /// tests and diagnostics).
    pub(crate) fn channel_count(&self) -> usize {
        self.channels.lock().len()
    }

    /// Number of local waiters over all channels.
    pub(crate) fn waiter_count(&self) -> usize {
        self.channels.lock().values().map(|c| c.state.lock().users).sum()
    }
}

/// One local user of a channel; leaving is automatic on drop.
pub(crate) struct Subscription {
    hub: Arc<Hub>,
    name: String,
    ch: Arc<Channel>,
    /// The channel's `dropped` count when this user joined.
    dropped: u64,
}

impl Subscription {
    /// `dropped`: the channel's count of server-side drops (read under its state lock).
    fn new(hub: &Arc<Hub>, name: &str, ch: Arc<Channel>, dropped: u64) -> Subscription {
        Subscription {
            hub: hub.clone(),
            name: name.to_owned(),
            ch,
            dropped,
        }
    }

    pub(crate) fn channel(&self) -> Arc<Channel> {
        self.ch.clone()
    }

    /// The server dropped the subscription since this user joined: join again (a new SUBSCRIBE
    /// goes to the node that serves the channel now).
    pub(crate) fn is_stale(&self) -> bool {
        self.ch.state.lock().dropped != self.dropped
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub.leave(&self.name, &self.ch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::Value;

    fn message(channel: &str, payload: &str) -> PushInfo {
        PushInfo {
            kind: PushKind::Message,
            data: vec![
                Value::BulkString(channel.as_bytes().to_vec()),
                Value::BulkString(payload.as_bytes().to_vec()),
            ],
        }
    }

    async fn waiters(hub: &Arc<Hub>, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
        let mut v = Vec::new();
        for _ in 0..n {
            let sub = hub.subscribe("ch", Duration::from_secs(1)).await.unwrap();
            v.push(tokio::spawn(async move { sub.channel().notify.notified().await }));
        }
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        v
    }

    #[tokio::test]
    async fn zero_wakes_one_one_wakes_all_others_are_ignored() {
        let channels = Hub::new_channels();
        let hub = Arc::new(Hub::new(channels.clone(), None, Mode::Classic));
        let handler = push_handler(channels);
        let ws = waiters(&hub, 3).await;
        assert_eq!(hub.waiter_count(), 3);

        handler(message("ch", "7")).unwrap();
        handler(message("other", "0")).unwrap();
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            ws.iter().filter(|w| w.is_finished()).count(),
            0,
            "unknown payloads and channels wake nobody"
        );

        handler(message("ch", "0")).unwrap();
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            ws.iter().filter(|w| w.is_finished()).count(),
            1,
            "`0` wakes exactly one"
        );

        handler(message("ch", "1")).unwrap();
        for w in ws {
            tokio::time::timeout(Duration::from_secs(1), w)
                .await
                .unwrap()
                .unwrap();
        }
    }

    #[test]
    fn backoff_doubles_to_a_cap_and_one_probe_goes_through_per_period() {
        let ms = Duration::from_millis;
        assert_eq!(Health::backoff(1), ms(100));
        assert_eq!(Health::backoff(2), ms(200));
        assert_eq!(Health::backoff(3), ms(400));
        assert_eq!(Health::backoff(7), ms(5000));
        assert_eq!(Health::backoff(u32::MAX), ms(5000));

        let t0 = Instant::now();
        let mut h = Health::default();
        assert!(h.is_healthy());
        assert!(
            h.admit(t0).is_ok() && h.admit(t0).is_ok(),
            "healthy: never refused"
        );

        h.failed(t0, &Failure::Timeout(ms(300)));
        assert!(!h.is_healthy());
        assert!(matches!(h.admit(t0 + ms(1)), Err(Error::CommandTimeout(d)) if d == ms(300)));
        assert!(h.admit(t0 + ms(99)).is_err());
        assert!(h.admit(t0 + ms(100)).is_ok(), "the period is over: one probe");
        assert!(h.admit(t0 + ms(101)).is_err(), "only one per period");
        assert!(h.admit(t0 + ms(200)).is_ok(), "the probe did not answer: another");

        h.failed(t0 + ms(300), &Failure::Timeout(ms(300)));
        assert!(h.admit(t0 + ms(499)).is_err(), "second failure: 200 ms");
        assert!(h.admit(t0 + ms(500)).is_ok());

        h.succeeded();
        assert!(h.is_healthy());
        assert!(h.admit(t0 + ms(501)).is_ok() && h.admit(t0 + ms(501)).is_ok());
        h.failed(t0 + ms(600), &Failure::Timeout(ms(300)));
        assert!(
            h.admit(t0 + ms(699)).is_err() && h.admit(t0 + ms(700)).is_ok(),
            "reset to 100 ms"
        );
    }

    #[tokio::test]
    async fn channels_are_refcounted_and_removed_with_their_last_user() {
        let channels = Hub::new_channels();
        let hub = Arc::new(Hub::new(channels, None, Mode::Classic));
        assert!(hub.is_healthy());
        let a1 = hub.subscribe("a", Duration::ZERO).await.unwrap();
        let a2 = hub.subscribe("a", Duration::ZERO).await.unwrap();
        let b = hub.subscribe("b", Duration::ZERO).await.unwrap();
        assert!(Arc::ptr_eq(&a1.channel(), &a2.channel()));
        assert_eq!((hub.channel_count(), hub.waiter_count()), (2, 3));
        drop(a1);
        assert_eq!((hub.channel_count(), hub.waiter_count()), (2, 2));
        drop(b);
        assert_eq!((hub.channel_count(), hub.waiter_count()), (1, 1));
        drop(a2);
        assert_eq!((hub.channel_count(), hub.waiter_count()), (0, 0));
    }

    #[test]
    fn each_mode_has_its_script_argument_and_commands() {
        let all = [Mode::Classic, Mode::Sharded, Mode::Both];
        let args: Vec<&str> = all.iter().map(|m| m.script_arg()).collect();
        assert_eq!(
            args,
            ["PUBLISH", "SPUBLISH", "BOTH"],
            "lua/common/notify.lua's values"
        );
        let kinds: Vec<(bool, bool)> = all.iter().map(|m| (m.classic(), m.sharded())).collect();
        assert_eq!(kinds, [(true, false), (false, true), (true, true)]);
    }

    #[tokio::test]
    async fn a_sharded_message_wakes_the_same_channel() {
        // Mode::Both listens on the classic and the sharded channel of one name: either wakes
        let channels = Hub::new_channels();
        let hub = Arc::new(Hub::new(channels.clone(), None, Mode::Both));
        let handler = push_handler(channels);
        let ws = waiters(&hub, 2).await;
        let mut push = message("ch", "0");
        push.kind = PushKind::SMessage;
        handler(push).unwrap();
        handler(message("ch", "0")).unwrap();
        for w in ws {
            tokio::time::timeout(Duration::from_secs(1), w)
                .await
                .unwrap()
                .unwrap();
        }
    }

    #[tokio::test]
    async fn joining_without_a_command_only_when_already_subscribed() {
        let channels = Hub::new_channels();
        let hub = Arc::new(Hub::new(channels, None, Mode::Classic));
        assert!(
            hub.join_subscribed("ch").is_none(),
            "no pub/sub connection: nothing to join"
        );
        // (with a connection: see tests/rlock.rs, a second waiter on a subscribed channel
        // makes one attempt before it sleeps)
    }

    #[tokio::test]
    async fn a_server_side_sunsubscribe_makes_subscriptions_stale_and_wakes_waiters() {
        let channels = Hub::new_channels();
        let hub = Arc::new(Hub::new(channels.clone(), None, Mode::Sharded));
        let handler = push_handler(channels);
        let sub = hub.subscribe("ch", Duration::ZERO).await.unwrap();
        let ws = waiters(&hub, 2).await;
        let sunsubscribe = || PushInfo {
            kind: PushKind::SUnsubscribe,
            data: vec![Value::BulkString(b"ch".to_vec()), Value::Int(0)],
        };
        handler(sunsubscribe()).unwrap();
        assert!(!sub.is_stale(), "not subscribed yet: nothing was dropped");
        sub.channel().state.lock().subscribed = true;
        handler(sunsubscribe()).unwrap();
        assert!(sub.is_stale(), "the server dropped the subscription");
        for w in ws {
            tokio::time::timeout(Duration::from_secs(1), w)
                .await
                .unwrap()
                .unwrap();
        }
        let again = hub.subscribe("ch", Duration::ZERO).await.unwrap();
        assert!(!again.is_stale(), "a new user joins after the drop");
    }

    #[tokio::test]
    async fn disconnection_wakes_everyone_and_makes_subscriptions_stale() {
        let channels = Hub::new_channels();
        let hub = Arc::new(Hub::new(channels.clone(), None, Mode::Classic));
        let handler = push_handler(channels);
        let sub = hub.subscribe("ch", Duration::ZERO).await.unwrap();
        sub.channel().state.lock().subscribed = true;
        let ws = waiters(&hub, 2).await;
        handler(PushInfo {
            kind: PushKind::Disconnection,
            data: vec![],
        })
        .unwrap();
        assert!(
            sub.is_stale(),
            "messages sent while disconnected are lost: the waiter joins again and re-tries"
        );
        for w in ws {
            tokio::time::timeout(Duration::from_secs(1), w)
                .await
                .unwrap()
                .unwrap();
        }
    }
}
