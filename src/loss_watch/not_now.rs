//! Why the watch's own tracking cannot be turned on now: for good (the pub/sub connection tracks
//! from then on) or for the moment (tried again), as a failed call's error tells.

use crate::error::Error;

/// Why tracking on the watch's own connection cannot be turned on.
pub(super) enum NotNow {
    /// For good: the pub/sub connection tracks from now on.
    Unsupported(String),
    /// A call failed (a dropped connection, a timeout): tried again.
    Failed(Error),
}

/// A failed call: refused for good, or to be tried again.
pub(super) fn classify(what: &str, e: Error) -> NotNow {
    match &e {
        Error::Redis(r) if crate::error::is_refusal(r) || (r.code().is_some() && !e.is_transient()) => {
            NotNow::Unsupported(format!("{what} refused: {e}"))
        }
        Error::Protocol(_) => NotNow::Unsupported(format!("{what}: {e}")),
        _ => NotNow::Failed(e),
    }
}

/// `CLIENT TRACKING ... REDIRECT` refused because no connection has that id (any more).
pub(super) fn redirect_gone(e: &redis::RedisError) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    text.contains("redirect") && text.contains("does not exist")
}

/// Replies as servers send them, for the tests of the loss watch.
#[cfg(test)]
pub(super) mod fixtures {
    use redis::Value;

    /// An error reply with `text` (a code, then the message), as a server sends it.
    pub(crate) fn error_reply(text: &str) -> redis::RedisError {
        match redis::parse_redis_value(format!("-{text}\r\n").as_bytes()) {
            Ok(Value::ServerError(e)) => e.into(),
            other => panic!("not an error reply: {other:?}"),
        }
    }

    /// A `CLIENT TRACKINGINFO` reply as Redis 7 sends it (RESP3).
    pub(crate) fn trackinginfo(flags: &[&str], redirect: i64) -> Value {
        Value::Map(vec![
            (
                Value::BulkString(b"flags".to_vec()),
                Value::Set(
                    flags
                        .iter()
                        .map(|f| Value::BulkString(f.as_bytes().to_vec()))
                        .collect(),
                ),
            ),
            (Value::BulkString(b"redirect".to_vec()), Value::Int(redirect)),
            (Value::BulkString(b"prefixes".to_vec()), Value::Array(vec![])),
        ])
    }
}
