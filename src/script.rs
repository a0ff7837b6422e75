//! Our Lua scripts (one file per operation under `lua/`) and the runner that sends them.
//!
//! redis-rs's `ScriptInvocation::invoke_async` sends `EVALSHA` and, on `NOSCRIPT` (after a Redis
//! restart or `SCRIPT FLUSH`), loads the script and retries, so callers never see the flush.

use std::sync::LazyLock;
use std::time::Duration;

use redis::{FromRedisValue, Script, ScriptInvocation};

use crate::conn::Connection;
use crate::error::{Error, Result};

macro_rules! lua {
    ($name:ident, $path:literal) => {
        pub(crate) static $name: LazyLock<Script> = LazyLock::new(|| {
            Script::new(include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/lua/",
                $path,
                ".lua"
            )))
        });
    };
    // a script that starts with shared functions (`lua/<prelude>.lua`, in order)
    ($name:ident, $path:literal, with $($prelude:literal),+) => {
        pub(crate) static $name: LazyLock<Script> = LazyLock::new(|| {
            Script::new(concat!(
                $(
                    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/lua/", $prelude, ".lua")),
                    "\n",
                )+
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/lua/", $path, ".lua"))
            ))
        });
    };
}

lua!(RESOLVE_ACQUIRE, "common/resolve_acquire");
lua!(MISSING, "common/missing");
lua!(LOCK_ACQUIRE, "lock/acquire");
lua!(LOCK_UNLOCK, "lock/unlock", with "common/notify");
lua!(LOCK_FORCE_UNLOCK, "lock/force_unlock", with "common/lock_shape", "common/notify");
lua!(LOCK_RENEW_BATCH, "lock/renew_batch");
lua!(SPIN_UNLOCK, "spin/unlock");
lua!(SPIN_FORCE_UNLOCK, "spin/force_unlock", with "common/lock_shape");
lua!(FENCED_ACQUIRE, "fenced/acquire");
lua!(NON_REENTRANT_ACQUIRE, "non_reentrant/acquire");
lua!(FAIR_ACQUIRE, "fair/acquire", with "fair/purge");
lua!(FAIR_UNLOCK, "fair/unlock", with "fair/purge", "common/notify");
lua!(FAIR_FORCE_UNLOCK, "fair/force_unlock", with "common/lock_shape", "fair/purge", "common/notify");
lua!(FAIR_GIVE_UP, "fair/give_up");
lua!(RW_READ_ACQUIRE, "rw/read_acquire");
lua!(RW_WRITE_ACQUIRE, "rw/write_acquire");
lua!(RW_READ_UNLOCK, "rw/read_unlock", with "common/notify");
lua!(RW_WRITE_UNLOCK, "rw/write_unlock", with "common/notify");
lua!(RW_READ_FORCE_UNLOCK, "rw/read_force_unlock", with "common/lock_shape", "common/notify");
lua!(RW_WRITE_FORCE_UNLOCK, "rw/write_force_unlock", with "common/lock_shape", "common/notify");
lua!(RW_READ_IS_LOCKED, "rw/read_is_locked");
lua!(RW_READ_RENEW_BATCH, "rw/read_renew_batch");

/// Runs a script with the command timeout; `key` names the lock in errors.
pub(crate) async fn run<T: FromRedisValue>(
    conn: &Connection,
    timeout: Duration,
    key: &str,
    inv: &ScriptInvocation<'_>,
) -> Result<T> {
    let mut c = conn.clone();
    match tokio::time::timeout(timeout, inv.invoke_async::<T>(&mut c)).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Error::from_redis(key, e)),
        Err(_) => Err(Error::CommandTimeout(timeout)),
    }
}

/// Runs a plain command with the command timeout.
pub(crate) async fn cmd<T: FromRedisValue>(
    conn: &Connection,
    timeout: Duration,
    key: &str,
    cmd: &redis::Cmd,
) -> Result<T> {
    let mut c = conn.clone();
    match tokio::time::timeout(timeout, cmd.query_async::<T>(&mut c)).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Error::from_redis(key, e)),
        Err(_) => Err(Error::CommandTimeout(timeout)),
    }
}

/// Whether a read that failed this way should be tried once more: the connection broke (e.g.
/// "broken pipe" on the first command after a Redis restart, before the manager reconnected).
fn retry_read(e: &Error) -> bool {
    matches!(e, Error::Redis(r) if r.is_connection_dropped() || (r.is_io_error() && !r.is_timeout()))
}

/// Runs an idempotent read command, retried once when the connection had dropped.
pub(crate) async fn read<T: FromRedisValue>(
    conn: &Connection,
    timeout: Duration,
    key: &str,
    c: &redis::Cmd,
) -> Result<T> {
    match cmd(conn, timeout, key, c).await {
        Err(e) if retry_read(&e) => {
            tracing::debug!(key, error = %e, "read failed on a dropped connection; retrying once");
            cmd(conn, timeout, key, c).await
        }
        other => other,
    }
}

/// Runs a read-only script, retried once when the connection had dropped.
pub(crate) async fn run_read<T: FromRedisValue>(
    conn: &Connection,
    timeout: Duration,
    key: &str,
    inv: &ScriptInvocation<'_>,
) -> Result<T> {
    match run(conn, timeout, key, inv).await {
        Err(e) if retry_read(&e) => {
            tracing::debug!(key, error = %e, "read failed on a dropped connection; retrying once");
            run(conn, timeout, key, inv).await
        }
        other => other,
    }
}
