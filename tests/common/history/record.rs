//! What a history holds, one JSON line per record: critical sections (lock holds and semaphore
//! permit holdings), acquisitions without a section, injected faults, phases of the run, sampler
//! findings, semaphore (re-)creations and quiescent checks of semaphores, with their outcomes.

use serde::{Deserialize, Serialize};

/// How an unlock call ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum UnlockResult {
    /// `Ok(Unlocked::Released)`.
    Released,
    /// `Ok(Unlocked::Partial)`: the owner still holds it, so Redis counted more acquisitions.
    Partial,
    /// `Err(Error::NotHeld)`.
    NotHeld,
    /// Any other error.
    Error { message: String },
    /// The unlock call did not return within the worker's limit.
    Hung,
    /// A semaphore guard was dropped instead of released: the client gives its permits back in
    /// the background (a section of a semaphore only).
    Dropped,
}

impl UnlockResult {
    pub fn label(&self) -> &'static str {
        match self {
            UnlockResult::Released => "released",
            UnlockResult::Partial => "partial",
            UnlockResult::NotHeld => "not-held",
            UnlockResult::Error { .. } => "error",
            UnlockResult::Hung => "hung",
            UnlockResult::Dropped => "dropped",
        }
    }
}

/// The holder learned that its hold was lost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loss {
    /// `LostReason` as `Debug` text (`OwnerGone`, `RenewalFailed`, ...).
    pub reason: String,
    /// When the holder learned it.
    pub learned: u64,
}

/// Who recorded a section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Party {
    /// A worker of this crate (the checkers' rules are this crate's promises).
    #[default]
    Rust,
    /// Real Redisson (the `contend` command of `compat-tests/`' JVM harness): its sections count
    /// for the overlap check only; its unlock results and losses are Redisson's business, and
    /// the report lists them.
    Java,
}

impl Party {
    pub fn label(self) -> &'static str {
        match self {
            Party::Rust => "rust",
            Party::Java => "java",
        }
    }
}

/// Which semaphore API a permit holding went through; it decides what data loss does to the
/// count (see `check_capacity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SemKind {
    /// `Semaphore` (Redisson's `RSemaphore`): unowned permits in a counter. A release creates the
    /// counter when it is missing, so after data loss a permit taken before the loss and given
    /// back after the semaphore was set up again counts once more: the count may exceed N until
    /// someone resets it at a quiescent point.
    Semaphore,
    /// `PermitExpirableSemaphore`: permits held under ids in a sorted set. A release of an id the
    /// data loss erased is refused, so the count never exceeds N; only holders from before the
    /// loss may be one too many, while they still hold.
    Expirable,
}

impl SemKind {
    pub fn label(self) -> &'static str {
        match self {
            SemKind::Semaphore => "semaphore",
            SemKind::Expirable => "expirable",
        }
    }

    /// Whether a release of a permit taken before a data loss adds to the count set up after it.
    pub fn counts_stale_releases(self) -> bool {
        self == SemKind::Semaphore
    }
}

/// What makes a section (or an attempt) one of a semaphore: the permits it takes of a
/// semaphore with `capacity` permits. Absent for a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sem {
    pub kind: SemKind,
    /// Permits taken by this holding.
    pub permits: u32,
    /// The semaphore's permits (N): at most N may be held at once.
    pub capacity: u32,
}

/// One critical section: an acquisition that succeeded, the hold, and how it ended. For a
/// semaphore (`sem` set), one holding of `sem.permits` permits: such sections may overlap up to
/// the semaphore's capacity (`check_capacity`), and never count as lock overlaps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// Absent in the JSON of a Rust worker's section.
    #[serde(default, skip_serializing_if = "Party::is_rust")]
    pub party: Party,
    pub lock: String,
    /// Worker process index.
    pub process: u32,
    /// Task index inside the process.
    pub worker: u32,
    /// What the task does (`hot`, `long`, `renew`, `victim`).
    pub role: String,
    /// `lock`, `try_lock_for`, `lock_with_lease`; for a semaphore `acquire`,
    /// `try_acquire_for`; for an expirable one `acquire_with_lease`, `try_acquire_for`.
    pub method: String,
    /// The hold's hash field `<client id>:<owner id>`.
    pub owner: String,
    /// When the acquire call was made.
    pub acquire_start: u64,
    /// When the acquire call returned the guard.
    pub start: u64,
    /// When the holder stopped working and called unlock.
    pub end: u64,
    /// When unlock returned.
    pub unlock_done: u64,
    pub unlock: UnlockResult,
    pub lost: Option<Loss>,
    /// Set for a semaphore's permit holding (`lock` is then the semaphore's name); absent in the
    /// JSON of a lock's section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sem: Option<Sem>,
}

impl Party {
    fn is_rust(&self) -> bool {
        *self == Party::Rust
    }
}

impl Section {
    /// Who held it, for messages: `p<process>/w<task>` or `java/w<worker>`.
    pub fn holder(&self) -> String {
        match self.party {
            Party::Rust => format!("p{}/w{}", self.process, self.worker),
            Party::Java => format!("java/w{}", self.worker),
        }
    }

    /// The end under "lost = released when learned".
    pub fn effective_end(&self) -> u64 {
        match &self.lost {
            Some(l) => l.learned.min(self.end),
            None => self.end,
        }
    }

    /// The hold ended otherwise than by its owner: a loss was signalled or unlock found nothing.
    pub fn lost_hold(&self) -> bool {
        self.lost.is_some() || self.unlock == UnlockResult::NotHeld
    }

    /// Permits held (semaphore sections; 0 for a lock).
    pub fn permits(&self) -> u32 {
        self.sem.map_or(0, |s| s.permits)
    }

    /// Whether a background give-back may still apply after `unlock_done`: the release failed or
    /// did not return, or the guard was dropped.
    pub fn release_in_background(&self) -> bool {
        matches!(
            self.unlock,
            UnlockResult::Error { .. } | UnlockResult::Hung | UnlockResult::Dropped
        )
    }
}

/// How an acquisition that produced no section ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum AttemptResult {
    /// `try_lock_for` returned `Ok(None)`.
    NotAcquired,
    Error {
        message: String,
    },
    /// Dropped at the end of the run (the acquire future was cancelled).
    Cancelled,
    /// Did not return within the worker's limit (then dropped).
    Hung,
    /// The worker dropped the acquisition before the end of the run (a semaphore acquisition
    /// that found no permits for a while, or a pause of the semaphore tasks): the client settles
    /// it in the background and gives back what Redis granted it.
    GaveUp,
}

impl AttemptResult {
    pub fn label(&self) -> String {
        match self {
            AttemptResult::NotAcquired => "not-acquired".into(),
            AttemptResult::Error { message } => format!("error: {}", error_class(message)),
            AttemptResult::Cancelled => "cancelled-at-stop".into(),
            AttemptResult::Hung => "hung".into(),
            AttemptResult::GaveUp => "gave-up".into(),
        }
    }
}

/// The first words of an error message, without the variable parts (keys, fields, durations).
pub fn error_class(message: &str) -> String {
    let m = message;
    for (needle, class) in [
        ("timed out after", "command timeout"),
        ("holds a value of another type", "wrong type"),
        ("OOM", "OOM"),
        ("BUSY", "BUSY"),
        ("Connection refused", "connection refused"),
        ("refused", "connection refused"),
        ("broken pipe", "broken pipe"),
        ("Broken pipe", "broken pipe"),
        ("reset by peer", "connection reset"),
        ("dropped", "connection dropped"),
        ("closed", "connection closed"),
        ("not held", "not held"),
        ("NOSCRIPT", "NOSCRIPT"),
        ("LOADING", "LOADING"),
        ("shut down", "shutdown"),
        ("timeout", "timeout"),
        ("Timeout", "timeout"),
    ] {
        if m.contains(needle) {
            return class.to_owned();
        }
    }
    m.chars().take(60).collect()
}

/// An acquisition that produced no section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub lock: String,
    pub process: u32,
    pub worker: u32,
    pub role: String,
    pub method: String,
    pub start: u64,
    pub end: u64,
    /// The wait passed to `try_lock_for`, in ms.
    pub wait_ms: Option<u64>,
    pub outcome: AttemptResult,
    /// Set for a semaphore's acquisition; absent in the JSON of a lock's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sem: Option<Sem>,
}

/// One injected fault, from the moment the injector started to the moment its effect ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRecord {
    /// `sigstop`, `client-kill-normal`, `flushall`, `restart`, ...
    pub kind: String,
    pub detail: String,
    /// Erases every lock in Redis (restart without persistence, `FLUSHALL`).
    pub data_loss: bool,
    /// A lock name whose data this fault overwrote (a key of another type written over it).
    pub target: Option<String>,
    /// Cuts the clients off the server (a network stall or outage) long enough that a hold
    /// may run out before a renewal or a release gets through: such a loss, signalled, is the
    /// promised behaviour, not a failure.
    #[serde(default)]
    pub severs: bool,
    pub start: u64,
    pub end: u64,
    /// The injector failed (the fault may not have happened).
    pub error: Option<String>,
}

impl FaultRecord {
    /// Whether this fault may have erased the data of lock `lock`.
    pub fn erases(&self, lock: &str) -> bool {
        self.error.is_none() && (self.data_loss || self.target.as_deref() == Some(lock))
    }

    /// Whether this fault cut the clients off the server at some time in `[from, to]`.
    pub fn severed_within(&self, from: u64, to: u64) -> bool {
        self.error.is_none() && self.severs && self.start <= to && self.end >= from
    }
}

/// A stretch of the run (warm-up, the non-data-loss nemesis, the data-loss nemesis, ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    pub name: String,
    /// Whether data-loss faults are injected in this phase.
    pub data_loss: bool,
    pub start: u64,
    pub end: u64,
}

/// A sampler's finding about a lock key: no TTL (`pttl == -1`) or more than one owner field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    pub time: u64,
    pub lock: String,
    pub pttl: i64,
    /// Fields in the lock hash; -1 when the key is not a hash.
    pub hlen: i64,
    pub problem: String,
}

/// A worker's `try_set_permits(N)` that created a semaphore (it returned `true`), or the
/// parent's set-up of one (`by` = `parent`). Between two creations the semaphore must have been
/// erased by a data-loss fault (`check_reinits`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reinit {
    pub lock: String,
    /// `p<process>/w<task>`, or `parent`.
    pub by: String,
    pub start: u64,
    pub end: u64,
}

/// The parent's look at a semaphore while nobody held or was acquiring a permit of it and every
/// worker's background work had drained; afterwards it holds exactly its capacity (the parent
/// set it when needed), so data loss before it explains no excess after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quiesce {
    pub lock: String,
    /// Where in the run (`end of phase A`, ...).
    pub label: String,
    pub start: u64,
    pub end: u64,
    /// Available permits read then (`None`: the key did not exist).
    pub available: Option<i64>,
    /// Permits held under ids then (expirable semaphores).
    pub acquired: Option<i64>,
    /// The count the parent wrote afterwards, if it had to.
    pub reset_to: Option<i64>,
}

/// A worker process's client had no background work at some instant in `[from, to]`
/// (`client.stats().queued_releases` read 0): every give-back it had queued before `from` (a
/// dropped guard's, an abandoned acquisition's) had finished by `to`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Idle {
    pub process: u32,
    pub from: u64,
    pub to: u64,
}

/// One line of a history file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Record {
    Section(Section),
    Attempt(Attempt),
    Fault(FaultRecord),
    Phase(Phase),
    Sample(Sample),
    Reinit(Reinit),
    Quiesce(Quiesce),
    Idle(Idle),
}
