//! The clients: what each one knows (its guards, until when it trusts its hold, what it has in
//! flight) and the requests and replies between it and Redis.

use crate::fenced::Work;
use crate::redis::{ClientId, Field, Owner, ReqId};
use crate::rlock::{Acquired, Record};

/// Which library a client runs, and how it names its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// Redisson 3.24+: owner `uuid:threadId` for the whole run, re-entrant, watchdog renewal,
    /// unlock retried with one request id; an acquisition whose reply is lost ends in an
    /// exception and nothing is settled or released (the hold, if any, expires with its TTL).
    Java,
    /// This crate's default: a fresh owner per acquisition, whose field is the record.
    Fresh,
    /// This crate with a pinned owner (`with_owner`, `OwnerId::scope`): every attempt writes
    /// its latch record, settled with `lua/common/resolve_acquire.lua`.
    Pinned,
}

/// Which side of the lock a client takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The lock's only side (RLock, fair, fenced).
    Plain,
    /// A read hold of the read-write lock.
    Read,
    /// A write hold of the read-write lock.
    Write,
}

/// A client's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Spec {
    /// Its library and owner.
    pub flavor: Flavor,
    /// Its side.
    pub role: Role,
    /// How many acquisitions it starts.
    pub acquisitions: u8,
    /// How many re-entries (extra holds of a held owner) it may take (Java and pinned only).
    pub reentries: u8,
    /// How many times it may ask again after a refusal (the wait loop: pub/sub wake-ups and
    /// polls are one nondeterministic "ask again").
    pub polls: u8,
}

/// What a client is waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// Nothing.
    Idle,
    /// An acquire attempt's reply.
    Acquire {
        /// The attempt's id.
        attempt: ReqId,
        /// When it was sent: a grant is trusted from then, never from the reply.
        sent_at: u8,
        /// A re-entry (another hold of a held owner).
        reentry: bool,
    },
    /// Refused: the caller waits and may ask again (same owner).
    Wait,
    /// A settle's reply (the attempt's reply was lost, or its caller gave up).
    Settle {
        /// The attempt being settled.
        attempt: ReqId,
        /// When the attempt was sent.
        sent_at: u8,
        /// Whether the caller still waits (a grant found may then be kept).
        waiting: bool,
        /// A re-entry.
        reentry: bool,
    },
    /// An unlock's reply (every retry carries the same id).
    Unlock {
        /// The unlock's request id.
        id: ReqId,
        /// Release every hold of the owner.
        all: bool,
    },
}

/// Whether a client runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Running.
    Running,
    /// `Client::shutdown` was called: no new acquisitions, holds released.
    ShutDown,
    /// The process died: it sends and reads nothing more (its requests may still arrive).
    Crashed,
}

/// A client's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    /// What it runs.
    pub spec: Spec,
    /// Whether it runs.
    pub status: Status,
    /// What it waits for.
    pub op: Op,
    /// The owner of its current (or last) acquisition.
    pub owner: Owner,
    /// Guards it holds (holds it believes it has).
    pub guards: u8,
    /// The tick until which its last grant or renewal proves the hold (from when it was sent).
    pub trusted_until: u8,
    /// The data-loss epoch in which that proof was made.
    pub epoch: u8,
    /// The hold's serial: replies of renewals of an older hold are ignored.
    pub hold: u8,
    /// The hold's loss is known (reported, final); for the Java party: its watchdog stopped.
    pub lost: bool,
    /// Acquisitions it may still start.
    pub acquisitions_left: u8,
    /// Re-entries it may still take.
    pub reentries_left: u8,
    /// Asks it may still make after refusals.
    pub polls_left: u8,
    /// The fencing token of its hold.
    pub token: Option<i64>,
    /// Its work on the protected resource (fenced models).
    pub work: Work,
    /// Ghost: the fresh owner of an acquisition whose caller gave up (its grant must go), and
    /// the data-loss epoch it gave up in.
    pub gave_up: Option<(Owner, u8)>,
    /// Ghost: the attempt it gave up on without settling (the `TrustLateGrant` mutant).
    pub abandoned: Option<ReqId>,
    /// Ghost: its last hold was released (the `RenewAfterRelease` mutant renews it still).
    pub released: bool,
}

impl Client {
    /// A client at rest.
    pub fn new(id: ClientId, spec: Spec) -> Self {
        Client {
            spec,
            status: Status::Running,
            op: Op::Idle,
            owner: Owner {
                client: id,
                serial: 0,
            },
            guards: 0,
            trusted_until: 0,
            epoch: 0,
            hold: 0,
            lost: false,
            acquisitions_left: spec.acquisitions,
            reentries_left: spec.reentries,
            polls_left: spec.polls,
            token: None,
            work: Work::default(),
            gave_up: None,
            abandoned: None,
            released: false,
        }
    }

    /// Its owner's field in the lock hash.
    pub fn field(&self) -> Field {
        match self.spec.role {
            Role::Write => Field::Writer(self.owner),
            _ => Field::Holder(self.owner),
        }
    }

    /// Whether it trusts its hold at `now`: running, holding, no loss known, within the window
    /// its last grant or renewal proves. (For the Java party this is what its grants and
    /// renewals prove; Redisson itself does not stop its caller.)
    pub fn trusts(&self, now: u8) -> bool {
        self.status != Status::Crashed && self.guards > 0 && !self.lost && now < self.trusted_until
    }

    /// Whether the crate runs it (not the Java party).
    pub fn ours(&self) -> bool {
        self.spec.flavor != Flavor::Java
    }

    /// How its attempts record their grant.
    pub fn record(&self, fenced: bool) -> Record {
        match self.spec.flavor {
            Flavor::Java => Record::Redisson,
            Flavor::Fresh if !fenced => Record::Field,
            _ => Record::Latch,
        }
    }
}

/// A request on its way to Redis (it may arrive late, twice, or never).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Msg {
    /// Its sender.
    pub from: ClientId,
    /// When it was sent.
    pub sent_at: u8,
    /// What it asks.
    pub req: Request,
    /// Its reply will not be read (a copy re-sent after its connection dropped replaced it).
    pub silent: bool,
}

/// What a request asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Request {
    /// An acquisition attempt.
    Acquire {
        /// The attempt's id (its latch).
        attempt: ReqId,
        /// The owner.
        owner: Owner,
    },
    /// Settle an attempt (by its field, or by its latch record).
    Settle {
        /// The attempt.
        attempt: ReqId,
        /// The attempt's owner.
        owner: Owner,
    },
    /// Release one hold, or all of the owner's.
    Unlock {
        /// The request id (its latch).
        id: ReqId,
        /// The owner.
        owner: Owner,
        /// All holds.
        all: bool,
    },
    /// A watchdog renewal of the hold with serial `hold`.
    Renew {
        /// The owner.
        owner: Owner,
        /// The hold's serial.
        hold: u8,
    },
    /// A fair waiter leaves the queue.
    GiveUp {
        /// The waiter.
        owner: Owner,
    },
}

/// A reply on its way back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplyMsg {
    /// Its reader.
    pub to: ClientId,
    /// What it says.
    pub reply: Reply,
}

/// What a reply says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reply {
    /// An acquire's reply.
    Acquired {
        /// The attempt.
        attempt: ReqId,
        /// Granted (count, token), refused, or cancelled.
        grant: Option<(i64, Option<i64>)>,
        /// The data-loss epoch Redis was in when it ran.
        epoch: u8,
    },
    /// A settle's reply: the grant, or none (and now never).
    Settled {
        /// The attempt.
        attempt: ReqId,
        /// The grant found.
        grant: Option<(i64, Option<i64>)>,
        /// The data-loss epoch Redis was in when it ran.
        epoch: u8,
    },
    /// An unlock's reply (`None`: not held).
    Unlocked {
        /// The request id.
        id: ReqId,
        /// nil / 0 / 1.
        result: Option<i64>,
    },
    /// A renewal's reply.
    Renewed {
        /// When the renewal was sent.
        sent_at: u8,
        /// The hold's serial.
        hold: u8,
        /// Renewed (the field was there).
        ok: bool,
        /// The data-loss epoch Redis was in when it ran.
        epoch: u8,
    },
}

/// An [`Acquired`] as a reply's grant.
pub fn grant_of(a: Acquired) -> Option<(i64, Option<i64>)> {
    match a {
        Acquired::Granted { count, token } => Some((count, token)),
        _ => None,
    }
}
