//! What `inspect` and `watch` take a name for: a lock; a count (a plain integer: Redisson's
//! count-down latch or its semaphore, the key alone cannot tell which; see
//! `redisson_lock::inspect::inspect_latch`); or a semaphore, as the user says (`--semaphore`,
//! `--expirable-semaphore`) or as the keys tell (an integer beside a `{NAME}:timeout` sorted set
//! of held permits is a permit-expirable semaphore).

use clap::Args;
use redis::aio::ConnectionLike;
use redisson_lock::inspect::{self, LatchInfo, LockInfo};
use redisson_lock::Error;

use crate::semaphore::{semaphore_failure, Sem};
use crate::Failure;

/// How the user says what a name is; none of the flags: as far as the keys tell (see
/// [`view`]). At most one of them.
#[derive(Args, Debug, Clone, Copy, Default)]
#[group(multiple = false)]
pub(crate) struct AsKind {
    /// Take the name for a count (a count-down latch or a semaphore: an integer at the name),
    /// also when it is absent
    #[arg(long)]
    pub(crate) latch: bool,
    /// Take the name for a semaphore (Redisson's RSemaphore): available permits, TTL, waiters;
    /// the held permits too when its {NAME}:timeout set has some (then it is a
    /// permit-expirable one)
    #[arg(long)]
    pub(crate) semaphore: bool,
    /// Take the name for a permit-expirable semaphore (RPermitExpirableSemaphore): available
    /// permits, every permit held under an id with its lease, and the capacity, also when none
    /// is held
    #[arg(long)]
    pub(crate) expirable_semaphore: bool,
}

/// What a name holds, as `inspect` and `watch` show it.
pub(crate) enum View {
    /// A lock, or nothing (shown as "not locked").
    Lock(LockInfo),
    /// A count: a count-down latch or a semaphore.
    Count(LatchInfo),
    /// A semaphore.
    Semaphore(Sem),
}

/// What `name` holds, as `as_kind` says or, without a flag, as the keys tell:
///
/// * a lock hash (or nothing at all): the lock;
/// * an integer string beside a sorted set `{NAME}:timeout`: a permit-expirable semaphore (a
///   malformed set is an error, not a count);
/// * an integer string alone: a count;
/// * nothing at the name but a `{NAME}:timeout` set of permit ids: a permit-expirable semaphore
///   whose count was deleted or expired (a set that is not one is ignored: "not locked");
/// * a string that is not an integer, or another type: "not a lock".
pub(crate) async fn view<C>(conn: &mut C, name: &str, as_kind: AsKind) -> Result<View, Failure>
where
    C: ConnectionLike + Send,
{
    if as_kind.latch {
        return inspect::inspect_latch(conn, name)
            .await
            .map(View::Count)
            .map_err(count_failure);
    }
    if as_kind.semaphore || as_kind.expirable_semaphore {
        return semaphore(conn, name, as_kind.expirable_semaphore).await;
    }
    match inspect::inspect(conn, name).await {
        Ok(info) if info.kind.is_none() && has_leases(conn, name).await? => {
            match inspect::inspect_semaphore(conn, name).await {
                Ok(sem) => Ok(View::Semaphore(Sem::new(sem, true))),
                Err(Error::WrongType { .. } | Error::Protocol(_)) => Ok(View::Lock(info)),
                Err(e) => Err(e.into()),
            }
        }
        Ok(info) => Ok(View::Lock(info)),
        // only the name itself: a helper key of another type is a broken lock, not a count
        Err(Error::WrongType { key }) if key == name => match inspect::inspect_latch(conn, name).await {
            Ok(_) if has_leases(conn, name).await? => semaphore(conn, name, true).await,
            Ok(info) => Ok(View::Count(info)),
            Err(Error::WrongType { .. } | Error::Protocol(_)) => Err(Error::WrongType { key }.into()),
            Err(e) => Err(e.into()),
        },
        Err(e) => Err(e.into()),
    }
}

/// `name` read as a semaphore (`expirable`: shown as a permit-expirable one even when nothing is
/// held).
pub(crate) async fn semaphore<C>(conn: &mut C, name: &str, expirable: bool) -> Result<View, Failure>
where
    C: ConnectionLike + Send,
{
    inspect::inspect_semaphore(conn, name)
        .await
        .map(|info| View::Semaphore(Sem::new(info, expirable)))
        .map_err(|e| semaphore_failure(name, e))
}

/// Whether `{name}:timeout` is a sorted set: held permits of a permit-expirable semaphore.
async fn has_leases<C>(conn: &mut C, name: &str) -> Result<bool, Failure>
where
    C: ConnectionLike + Send,
{
    let t: String = redis::cmd("TYPE")
        .arg(inspect::semaphore_leases_key(name))
        .query_async(conn)
        .await?;
    Ok(t == "zset")
}

/// A failure of `inspect_latch`, said as one line.
pub(crate) fn count_failure(e: Error) -> Failure {
    match e {
        Error::WrongType { key } => Failure(format!(
            "key `{key}` is not a count (it holds another type of value)"
        )),
        // "`NAME` holds `TEXT`, not a count": "unexpected reply from redis" would mislead
        Error::Protocol(m) => Failure(m),
        other => other.into(),
    }
}
