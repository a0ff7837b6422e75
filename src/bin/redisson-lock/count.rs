//! Counts: what `inspect` and `watch` show of a name that holds a plain integer, Redisson's
//! count-down latch or its semaphore (the key alone cannot tell which; see
//! `redisson_lock::inspect::inspect_latch`).

use redis::aio::ConnectionLike;
use redisson_lock::inspect::{self, LatchInfo, LockInfo};
use redisson_lock::Error;

use crate::Failure;

/// What a name holds, as `inspect` and `watch` show it.
pub(crate) enum View {
    /// A lock, or nothing (shown as "not locked").
    Lock(LockInfo),
    /// A count: a count-down latch or a semaphore.
    Count(LatchInfo),
}

/// The lock under `name`; a count instead when `latch` asks for one, or when `name` holds a
/// string that is an integer. A string that is not an integer (and any other non-lock type)
/// fails as before: "not a lock".
pub(crate) async fn view<C>(conn: &mut C, name: &str, latch: bool) -> Result<View, Failure>
where
    C: ConnectionLike + Send,
{
    if latch {
        return inspect::inspect_latch(conn, name)
            .await
            .map(View::Count)
            .map_err(count_failure);
    }
    match inspect::inspect(conn, name).await {
        Ok(info) => Ok(View::Lock(info)),
        // only the name itself: a helper key of another type is a broken lock, not a count
        Err(Error::WrongType { key }) if key == name => match inspect::inspect_latch(conn, name).await {
            Ok(info) => Ok(View::Count(info)),
            Err(Error::WrongType { .. } | Error::Protocol(_)) => Err(Error::WrongType { key }.into()),
            Err(e) => Err(e.into()),
        },
        Err(e) => Err(e.into()),
    }
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

/// What the kind of a count is, as far as Redis tells.
pub(crate) const COUNT_KIND: &str = "count: a count-down latch or a semaphore";
