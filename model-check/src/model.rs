//! The model: its configuration (kind, clients, bounds, mutation), its state and its actions.
//! Every action is one step; Redis runs a whole script in one step; a tick moves the clock.
//! Client steps are in the `step` module, the scripts' dispatch in the `network` module.

use crate::client::{Client, Msg, ReplyMsg, Spec};
use crate::fenced::Resource;
use crate::redis::{ClientId, Key, Redis, ReqId};

/// The lock kind a model checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// RLock (`lua/lock/`).
    RLock,
    /// Fenced lock (`lua/fenced/`, unlock and renewal from `lua/lock/`).
    Fenced,
    /// Fair lock (`lua/fair/`).
    Fair,
    /// Read-write lock (`lua/rw/`).
    ReadWrite,
}

/// A deliberate bug, to show that a property bites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mutation {
    /// None: the protocol as written.
    None,
    /// Unlocks without the latch (Redisson before 3.24): a retried unlock applies twice.
    NoUnlockLatch,
    /// A caller that gave up does not settle its attempt, and a grant found after that is
    /// trusted from when its reply was read instead of when it was sent.
    TrustLateGrant,
    /// The watchdog keeps the hold after its release: a renewal answered after the release
    /// re-arms the guard.
    RenewAfterRelease,
    /// The resource checks the token only in the write (no claim before the read).
    WriteOnlyFence,
    /// Settling by field does not mark the latch `cancelled`: a late copy of the attempt applies.
    NoSettleMarker,
    /// The fair scripts do not purge waiters whose deadline passed.
    FairNoPurge,
}

/// A model's configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// A name for reports.
    pub name: &'static str,
    /// The lock kind.
    pub kind: Kind,
    /// The clients.
    pub clients: Vec<Spec>,
    /// The lock's TTL (lease, or the watchdog timeout) in ticks.
    pub ttl: u8,
    /// The last tick.
    pub max_ticks: u8,
    /// Network faults: lost replies, dropped or duplicated requests, client timeouts.
    pub faults: u8,
    /// Whether a network fault may be a connection layer sending a request twice (the first
    /// copy's reply never read, both copies may run, in either order).
    pub duplicates: bool,
    /// Data-loss events: restarts without persistence and failovers to a stale replica.
    pub losses: u8,
    /// Client crashes.
    pub crashes: u8,
    /// Whether clients may shut down.
    pub shutdown: bool,
    /// The fair waiter's budget (`threadWaitTime`) in ticks.
    pub fair_wait: u8,
    /// The longest path explored, in steps (0: every reachable state).
    pub depth: usize,
    /// The mutation.
    pub mutation: Mutation,
}

impl Config {
    /// The latch TTL (the settle window): longer than any run, so no latch expires within the
    /// bound, as the settle window outlasts the retry window in the crate.
    pub fn latch_ttl(&self) -> i64 {
        i64::from(self.max_ticks) + 2
    }
}

/// Events seen so far, for the `sometimes` properties.
pub mod seen {
    /// A hold was granted and trusted.
    pub const ACQUIRED: u16 = 1;
    /// A reply was lost.
    pub const REPLY_LOST: u16 = 1 << 1;
    /// A grant was found too late to trust, or after its caller gave up, and released.
    pub const LATE_GRANT: u16 = 1 << 2;
    /// Data was lost (restart or failover).
    pub const DATA_LOSS: u16 = 1 << 3;
    /// An unlock retry replayed its latch.
    pub const LATCH_REPLAY: u16 = 1 << 4;
    /// A settle found a grant and the caller kept it.
    pub const SETTLED_GRANT: u16 = 1 << 5;
    /// Two clients trusted at once after a data loss (the promise's stated exception).
    pub const OVERLAP_AFTER_LOSS: u16 = 1 << 6;
    /// A fair waiter was queued.
    pub const QUEUED: u16 = 1 << 7;
    /// A renewal read after its hold's window had passed kept the hold.
    pub const LATE_RENEWAL: u16 = 1 << 8;
    /// A holder learnt its loss from the loss signal.
    pub const SIGNALLED: u16 = 1 << 9;
    /// A late copy of an attempt arrived after it was settled, and changed nothing.
    pub const LATE_COPY: u16 = 1 << 10;
    /// A lock expired with nobody's release (a crash or a paused holder).
    pub const EXPIRED: u16 = 1 << 11;
    /// A stale token holder's write was refused by the resource.
    pub const STALE_REFUSED: u16 = 1 << 12;
}

/// Violations seen at a transition (set once, kept).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ghost {
    /// Unlock ids whose script changed the lock.
    pub unlocks_applied: Vec<ReqId>,
    /// One unlock id changed the lock twice.
    pub unlock_twice: bool,
    /// The highest token trusted so far, and its epoch.
    pub last_token: Option<(u8, i64)>,
    /// A trusted token was not above every earlier one of its epoch.
    pub token_regressed: bool,
    /// A fair grant skipped a live waiter.
    pub skipped_live: bool,
    /// A fair attempt was refused for a free lock behind a head whose deadline had passed.
    pub dead_head_blocked: bool,
    /// Since when the lock has had no live owner and nothing in flight.
    pub orphan_since: Option<u8>,
    /// The tick of each data-loss event (epoch `e` ended at `loss_at[e]`).
    pub loss_at: Vec<u8>,
    /// [`seen`] flags.
    pub seen: u16,
}

/// The model's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// The server.
    pub redis: Redis,
    /// The clients.
    pub clients: Vec<Client>,
    /// Requests in flight (sorted).
    pub requests: Vec<Msg>,
    /// Replies in flight (sorted).
    pub replies: Vec<ReplyMsg>,
    /// The next request id.
    pub next_id: ReqId,
    /// Network faults left.
    pub faults_left: u8,
    /// Data-loss events left.
    pub losses_left: u8,
    /// Crashes left.
    pub crashes_left: u8,
    /// The protected resource (fenced models).
    pub resource: Resource,
    /// Ghost state for the properties.
    pub ghost: Ghost,
}

impl State {
    /// The lock's count for a client's owner field.
    pub fn count_of(&self, c: &Client) -> Option<i64> {
        self.redis.hget(Key::Lock, c.field())
    }

    /// Whether a client has a renewal in flight (its request or its reply).
    pub fn renewing(&self, id: ClientId) -> bool {
        self.requests
            .iter()
            .any(|m| m.from == id && matches!(m.req, crate::client::Request::Renew { .. }))
            || self
                .replies
                .iter()
                .any(|r| r.to == id && matches!(r.reply, crate::client::Reply::Renewed { .. }))
    }

    /// Whether a client has nothing of its own in flight (no op, request, reply or renewal).
    pub fn quiet(&self, id: ClientId) -> bool {
        let c = &self.clients[usize::from(id)];
        c.op == crate::client::Op::Idle
            && !self.requests.iter().any(|m| m.from == id)
            && !self.replies.iter().any(|r| r.to == id)
    }
}

/// One step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// The clock moves one tick; keys whose TTL ran out are gone.
    Tick,
    /// A client starts an acquisition (`src/core/mod.rs`: the wait loop's first attempt).
    Acquire(ClientId),
    /// A client asks again after a refusal (a wake-up or a poll).
    Retry(ClientId),
    /// A holder takes another hold of its owner (`Guard::reenter`, Java's re-entry).
    Reenter(ClientId),
    /// A guard is unlocked (`src/core/release.rs`).
    Unlock(ClientId),
    /// The watchdog sends a renewal (`src/watchdog.rs`).
    Renew(ClientId),
    /// A caller stops waiting (`src/core/give_up.rs`).
    GiveUp(ClientId),
    /// A client stops waiting for a reply (a command timeout).
    Timeout(ClientId),
    /// A holder finds its trust window passed (`src/hold_record.rs`).
    Expire(ClientId),
    /// The loss signal reaches a holder whose field vanished (`src/loss_watch/mod.rs`).
    Signal(ClientId),
    /// `Client::shutdown` (`src/client.rs`).
    Shutdown(ClientId),
    /// The client process dies.
    Crash(ClientId),
    /// A fenced holder claims the resource row with its token.
    Claim(ClientId),
    /// A fenced holder reads the row.
    ReadRow(ClientId),
    /// A fenced holder writes the row.
    WriteRow(ClientId),
    /// Redis runs a request; its reply goes back.
    Deliver(Msg),
    /// Redis runs a request; its reply is lost.
    DeliverLoseReply(Msg),
    /// A request never reaches Redis.
    Drop(Msg),
    /// A connection layer sends a request a second time.
    Duplicate(Msg),
    /// A client reads a reply.
    Receive(ReplyMsg),
    /// Redis restarts without persistence.
    Restart,
    /// A failover to a replica that misses the last script.
    Failover,
}

/// The model: a configuration.
#[derive(Clone, Debug)]
pub struct ProtocolModel {
    /// Its configuration.
    pub cfg: Config,
}

impl ProtocolModel {
    /// The initial state.
    pub fn init(&self) -> State {
        let cfg = &self.cfg;
        State {
            redis: Redis::new(cfg.losses > 0),
            clients: cfg
                .clients
                .iter()
                .enumerate()
                .map(|(i, s)| Client::new(i as ClientId, *s))
                .collect(),
            requests: Vec::new(),
            replies: Vec::new(),
            next_id: 1,
            faults_left: cfg.faults,
            losses_left: cfg.losses,
            crashes_left: cfg.crashes,
            resource: Resource::default(),
            ghost: Ghost::default(),
        }
    }
}
