//! The crate's one error type.

use std::time::Duration;

use crate::lost::LostReason;

/// Everything that can go wrong with a lock operation.
///
/// The variants callers usually match on are [`Error::NotHeld`] (an unlock of a lock the owner
/// does not hold, e.g. because its lease ran out), [`Error::CommandTimeout`], [`Error::Lost`] and
/// [`Error::Redis`]. Bad input is reported as [`Error::InvalidArgument`] before anything is sent
/// to Redis, and a key of another type under a lock's name as [`Error::WrongType`]; in both cases
/// nothing in Redis is changed.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RLock) -> Result<(), redisson_lock::Error> {
/// use redisson_lock::Error;
///
/// let guard = lock.lock().await?;
/// match guard.unlock().await {
///     Ok(_) => {}
///     // the lease ran out (or someone force-unlocked) before we released: the work done
///     // under the lock may have overlapped with another holder's.
///     Err(Error::NotHeld { key, field }) => eprintln!("{key} was no longer held by {field}"),
///     Err(e) => return Err(e),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument was rejected before anything was sent (empty name, zero lease, bad URL...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The owner does not hold this lock (Java: `IllegalMonitorStateException`), or a
    /// permit-expirable semaphore's permit is not held (Java: `IllegalArgumentException`).
    /// Redis was not changed.
    #[error("`{key}` is not held by `{field}`")]
    NotHeld {
        /// The lock's (or semaphore's) Redis key.
        key: String,
        /// The owner field `<client id>:<owner id>` that tried to release, or the permit ids.
        field: String,
    },

    /// The lock was lost while held (lease ran out, force-unlocked, Redis restarted...).
    #[error("lock `{key}` held by `{field}` was lost: {reason}")]
    Lost {
        /// The lock's Redis key.
        key: String,
        /// The owner field that held it.
        field: String,
        /// Why the hold ended.
        reason: LostReason,
    },

    /// The key under the lock's name holds another Redis type (Redis `WRONGTYPE`). Nothing changed.
    #[error("key `{key}` holds a value of another type, not a lock")]
    WrongType {
        /// The offending key.
        key: String,
    },

    /// The operation cannot succeed by waiting, e.g. upgrading a read hold to a write hold.
    #[error("waiting for lock `{key}` would deadlock: {why}")]
    WouldDeadlock {
        /// The lock's Redis key.
        key: String,
        /// What the deadlock would be.
        why: &'static str,
    },

    /// The owner already holds this non-reentrant lock (Redisson's `NON_REENTRANT_REACQUIRE`,
    /// Java: `IllegalMonitorStateException`). Nothing changed.
    #[error("lock `{key}` is not reentrant and `{field}` already holds it")]
    AlreadyHeld {
        /// The lock's Redis key.
        key: String,
        /// The owner field that asked again.
        field: String,
    },

    /// What is under a lock's name is not a lock: a hash whose fields are not owner counts
    /// (an application's hash), or a lock whose fencing token counter is not an integer. Read
    /// by [`inspect`](crate::inspect); nothing was changed.
    #[error("`{key}` is not a lock: {why}")]
    NotALock {
        /// The key.
        key: String,
        /// What does not fit a lock (the field, the value).
        why: String,
    },

    /// A handle-level call that acts for the handle's owner (`unlock`, `is_held`,
    /// `hold_count`, ... without a guard) on a handle that has no fixed owner: each of its
    /// acquisitions gets a fresh one. Ask the guard, or give the handle an owner
    /// (`with_owner(id)`, `OwnerId::scope`).
    #[error("the handle for `{key}` has no fixed owner (each acquisition gets a fresh one): ask the guard (`guard.is_held()`, `guard.unlock()`), or give the handle an owner with `with_owner(id)` or `OwnerId::scope`")]
    NoOwner {
        /// The lock's key.
        key: String,
    },

    /// A count would leave the range this crate keeps it in, or Redis holds one outside it
    /// (written there by hand or by another client): a semaphore's or a count-down latch's
    /// count beyond ±[`MAX_PERMITS`](crate::MAX_PERMITS), a fencing token counter that is
    /// negative or has no token left below `i64::MAX`. Refused before anything was written.
    #[error("`{key}`: {detail}; nothing was written")]
    OutOfRange {
        /// The key holding the count.
        key: String,
        /// What the count is, or what it would become.
        detail: String,
    },

    /// No replica confirmed an acquisition within `replica_sync_timeout`
    /// ([`ReplicaSync::Required`](crate::ReplicaSync::Required)); the acquisition was undone.
    #[error("no replica of {wanted} confirmed the acquisition of lock `{key}` (WAIT); it was undone")]
    ReplicasNotSynced {
        /// The lock's Redis key.
        key: String,
        /// How many replicas were connected.
        wanted: u32,
    },

    /// A Redis command got no reply within the configured command timeout.
    #[error("redis command timed out after {0:?}")]
    CommandTimeout(Duration),

    /// The client (or its background runtime) has shut down.
    #[error("the lock client has shut down")]
    Shutdown,

    /// [`Client::shutdown`](crate::Client::shutdown) could not finish releasing within its
    /// bound (Redis unreachable or too slow): whatever Redis holds of these locks for this client
    /// expires with its TTL.
    #[error("shutdown left lock(s) {} unreleased ({cause}): they expire with their TTL", keys.join(", "))]
    Unreleased {
        /// The locks' Redis keys.
        keys: Vec<String>,
        /// What went wrong: the first failed release, or that the bound ran out.
        cause: String,
    },

    /// Redis answered something the lock protocol does not allow.
    #[error("unexpected reply from redis: {0}")]
    Protocol(String),

    /// An error from Redis or the connection to it.
    #[error(transparent)]
    Redis(#[from] redis::RedisError),

    /// The client could not reach Redis when it was built: the address it tried (its password
    /// hidden), and why.
    #[error("cannot connect to {address}: {source}")]
    Connect {
        /// The URL (or the cluster's node URLs) tried, without password.
        address: String,
        /// What the connection attempt failed with.
        source: redis::RedisError,
    },
}

/// `Result<T, Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Whether retrying the same operation later may succeed (connection trouble, timeouts, a
    /// node that is loading, down or — `READONLY` — no longer the master: the command did not
    /// run, and a Sentinel or Cluster client finds the new master before the retry).
    ///
    /// ```
    /// use redisson_lock::Error;
    /// assert!(Error::CommandTimeout(std::time::Duration::from_secs(1)).is_transient());
    /// assert!(!Error::InvalidArgument("x".into()).is_transient());
    /// ```
    pub fn is_transient(&self) -> bool {
        match self {
            Error::CommandTimeout(_) | Error::ReplicasNotSynced { .. } => true,
            Error::Redis(e) => {
                e.is_io_error()
                    || e.is_timeout()
                    || e.is_connection_dropped()
                    || e.is_connection_refusal()
                    || matches!(
                        e.kind(),
                        redis::ErrorKind::Server(
                            redis::ServerErrorKind::BusyLoading
                                | redis::ServerErrorKind::ReadOnly
                                | redis::ServerErrorKind::TryAgain
                                | redis::ServerErrorKind::MasterDown
                                | redis::ServerErrorKind::ClusterDown
                        ) | redis::ErrorKind::ClusterConnectionNotFound
                    )
                    || (e.code() == Some("ERR") && names_not_master(&e.to_string()))
            }
            _ => false,
        }
    }

    /// Whether a request that failed this way may still have run in Redis (its reply was lost
    /// or timed out, or the connection broke while it was in flight).
    pub(crate) fn is_ambiguous(&self) -> bool {
        match self {
            Error::CommandTimeout(_) => true,
            Error::Redis(e) => {
                (e.is_io_error() && !e.is_connection_refusal()) || e.kind() == redis::ErrorKind::Parse
            }
            _ => false,
        }
    }

    /// Whether Redis refused a write for lack of memory (`OOM`, `maxmemory` reached with a
    /// policy that cannot evict): the command did not run, and may succeed once memory is
    /// freed. Not [`is_transient`](Self::is_transient) (a caller's retry rarely waits long
    /// enough), but the writes that must happen (a semaphore's give-back) keep trying.
    pub(crate) fn is_oom(&self) -> bool {
        matches!(self, Error::Redis(e) if e.code() == Some("OOM") || e.to_string().contains("OOM command not allowed"))
    }

    /// Maps the error of a request on `key` sent with the command timeout `timeout`: a reply
    /// that did not come in time (the connection's own response timeout, which is the command
    /// timeout) is [`Error::CommandTimeout`]; otherwise as [`from_redis`](Self::from_redis).
    pub(crate) fn from_request(key: &str, e: redis::RedisError, timeout: Duration) -> Self {
        if e.is_timeout() {
            return Error::CommandTimeout(timeout);
        }
        Error::from_redis(key, e)
    }

    /// Maps a Redis error on `key`, turning `WRONGTYPE` into [`Error::WrongType`] and a script's
    /// range refusal into [`Error::OutOfRange`]. Error replies of one kind's scripts are mapped
    /// by that kind (the seam's `map_error`).
    pub(crate) fn from_redis(key: &str, e: redis::RedisError) -> Self {
        // the reply as Redis sent it: its code, then its text
        let text = match (e.code(), e.detail()) {
            (Some(code), Some(detail)) => format!("{code} {detail}"),
            _ => e.to_string(),
        };
        if let Some(detail) = out_of_range_detail(&text) {
            return Error::OutOfRange {
                key: key.to_owned(),
                detail,
            };
        }
        let wrong_type = e.code() == Some("WRONGTYPE") || text.contains("WRONGTYPE");
        if wrong_type {
            Error::WrongType { key: key.to_owned() }
        } else {
            Error::Redis(e)
        }
    }
}

/// The code a script's range refusal starts with (`lua/common/counter.lua`,
/// `lua/fenced/acquire.lua`).
const OUT_OF_RANGE: &str = "REDISSON_LOCK_OUT_OF_RANGE ";

/// What a script's range refusal says, when `message` is one: Redis 7 replies with the script's
/// code first and ` script: <sha>, on @user_script:<line>.` after it; Redis 6 with
/// `ERR Error running script ... : <code> <text>`.
fn out_of_range_detail(message: &str) -> Option<String> {
    let at = message.find(OUT_OF_RANGE)?;
    let rest = &message[at + OUT_OF_RANGE.len()..];
    let end = rest.find(" script: ").unwrap_or(rest.len());
    Some(rest[..end].trim_end().to_owned())
}

/// Whether an error message names a server that is not a writable master (`READONLY`, a
/// `MASTERDOWN` replica, a `LOADING` one): before Redis 7 a script whose call failed that way
/// replies `ERR Error running script ... -READONLY You can't write against a read only replica.`
pub(crate) fn names_not_master(message: &str) -> bool {
    ["READONLY You can't write", "-MASTERDOWN ", "-LOADING "]
        .iter()
        .any(|m| message.contains(m))
}

/// Whether the server refuses a command to this user for good: an ACL denial (`NOPERM`), or a
/// command it does not know (renamed away, or too new for it). What managed services answer to
/// admin commands; never a transient failure.
pub(crate) fn is_refusal(e: &redis::RedisError) -> bool {
    match e.code() {
        Some("NOPERM") => true,
        Some("ERR") => e.to_string().to_ascii_lowercase().contains("unknown"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::{ErrorKind, ServerErrorKind};

    fn server(kind: ServerErrorKind) -> Error {
        Error::Redis(redis::RedisError::from((ErrorKind::Server(kind), "reply")))
    }

    #[test]
    fn a_demoted_master_is_retried_and_not_ambiguous() {
        // READONLY: the script did not run; a retry goes to the new master
        let e = server(ServerErrorKind::ReadOnly);
        assert!(e.is_transient());
        assert!(!e.is_ambiguous());
        assert!(server(ServerErrorKind::MasterDown).is_transient());
        assert!(server(ServerErrorKind::BusyLoading).is_transient());
    }

    #[test]
    fn script_and_type_errors_are_final() {
        assert!(!server(ServerErrorKind::NoScript).is_transient());
        assert!(!Error::WrongType { key: "k".into() }.is_transient());
        assert!(!Error::InvalidArgument("x".into()).is_transient());
    }

    #[test]
    fn a_range_refusal_reads_the_same_on_every_server_version() {
        let v7 = "REDISSON_LOCK_OUT_OF_RANGE the count at s is 9007199254740992, beyond ±9007199254740991 script: 0a1b, on @user_script:12.";
        let v6 = "ERR Error running script (call to f_0a1b): @user_script:12: user_script:12: REDISSON_LOCK_OUT_OF_RANGE the count at s is 9007199254740992, beyond ±9007199254740991";
        // what Redis 7 replies to `error('...')` raised as text from a function
        let v7_text = "ERR user_script:12: REDISSON_LOCK_OUT_OF_RANGE the count at s is 9007199254740992, beyond ±9007199254740991 script: 0a1b, on @user_script:12.";
        for m in [v7, v6, v7_text] {
            let reply = redis::parse_redis_value(format!("-{m}\r\n").as_bytes()).unwrap();
            let e = reply.extract_error().unwrap_err();
            match Error::from_redis("s", e) {
                Error::OutOfRange { key, detail } => {
                    assert_eq!(key, "s");
                    assert_eq!(
                        detail,
                        "the count at s is 9007199254740992, beyond ±9007199254740991"
                    );
                }
                other => panic!("{m}: {other:?}"),
            }
        }
        assert!(!Error::OutOfRange {
            key: "s".into(),
            detail: "x".into()
        }
        .is_transient());
    }

    #[test]
    fn a_script_refused_by_a_replica_before_redis_7_is_transient() {
        let e = redis::RedisError::from((
            redis::ErrorKind::Server(ServerErrorKind::ResponseError),
            "Error running script (call to f_0): @user_script:60: @user_script: 60: -READONLY You can't write against a read only replica.",
        ));
        assert_eq!(e.code(), Some("ERR"), "{e:?}");
        assert!(Error::Redis(e).is_transient());
        assert!(!names_not_master("ERR unknown command"));
    }
}
