//! Our Lua scripts (one file per operation under `lua/`) and the runner that sends them.
//!
//! redis-rs's `ScriptInvocation::invoke_async` sends `EVALSHA` and, on `NOSCRIPT` (after a Redis
//! restart or `SCRIPT FLUSH`), loads the script and retries, so callers never see the flush.

use std::sync::OnceLock;
use std::time::Duration;

use redis::{FromRedisValue, Script, ScriptInvocation};

use crate::conn::Connection;
use crate::error::{Error, Result};

/// One of our Lua scripts: its source (a kind's layout reads which commands it sends) and the
/// redis-rs [`Script`] (its SHA1, computed on first use) that sends it.
pub(crate) struct Lua {
    source: &'static str,
    script: OnceLock<Script>,
}

impl Lua {
    pub(crate) const fn new(source: &'static str) -> Lua {
        Lua {
            source,
            script: OnceLock::new(),
        }
    }

    /// The script's text, preludes included.
    pub(crate) fn source(&self) -> &'static str {
        self.source
    }
}

impl std::fmt::Debug for Lua {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lua({} bytes)", self.source.len())
    }
}

impl std::ops::Deref for Lua {
    type Target = Script;

    fn deref(&self) -> &Script {
        self.script.get_or_init(|| Script::new(self.source))
    }
}

/// `lua!(NAME, "dir/file")` declares the static script `lua/dir/file.lua`;
/// `lua!(NAME, "dir/file", with "dir/prelude", ...)` puts shared functions (`lua/<prelude>.lua`,
/// in order) before it. A kind declares its own scripts in its module.
macro_rules! lua {
    ($name:ident, $path:literal) => {
        pub(crate) static $name: $crate::script::Lua = $crate::script::Lua::new(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/lua/",
            $path,
            ".lua"
        )));
    };
    ($name:ident, $path:literal, with $($prelude:literal),+) => {
        pub(crate) static $name: $crate::script::Lua = $crate::script::Lua::new(concat!(
            $(
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/lua/", $prelude, ".lua")),
                "\n",
            )+
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/lua/", $path, ".lua"))
        ));
    };
}
pub(crate) use lua;

// the machinery's own scripts: settling an acquisition, the gone-key check, the two batched
// renewals (a kind's layout names the renewal it uses)
lua!(RESOLVE_ACQUIRE, "common/resolve_acquire");
lua!(RESOLVE_BY_FIELD, "common/resolve_by_field");
lua!(MISSING, "common/missing");
lua!(LOCK_RENEW_BATCH, "lock/renew_batch", with "common/extend_ttl");
lua!(TRACKING_PROBE, "common/tracking_probe");

/// The lock hash's own renewal (`lua/lock/renew_batch.lua`): every kind's unless it names another.
pub(crate) struct HashRenewal;

impl crate::kind::Renewal for HashRenewal {
    fn name(&self) -> &'static str {
        "lock hash"
    }

    fn renew(&self, ttl_ms: u64, locks: &[(&str, Vec<&str>)], track: bool) -> ScriptInvocation<'static> {
        let mut inv = LOCK_RENEW_BATCH.prepare_invoke();
        inv.arg(ttl_ms);
        for (key, fields) in locks {
            for field in fields {
                inv.key(*key).arg(*field);
            }
        }
        inv.arg(u8::from(track));
        inv
    }
}

/// The renewal of `kind`'s holds.
pub(crate) fn renewal_of(kind: &dyn crate::kind::Kind) -> &'static dyn crate::kind::Renewal {
    kind.renewal().unwrap_or(&HashRenewal)
}

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
        Ok(Err(e)) => Err(Error::from_request(key, e, timeout)),
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
        Ok(Err(e)) => Err(Error::from_request(key, e, timeout)),
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
