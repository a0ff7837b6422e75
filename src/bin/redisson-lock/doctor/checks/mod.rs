//! The state every check reads: what the server told us (`INFO`, its version, `CONFIG GET`), read
//! once, and how a read that failed is worded.
//!
//! The checks themselves are `Doctor` methods in the submodules, one file per area.

mod acl;
mod connection;
mod features;
mod server;
mod topology;

use std::collections::HashMap;

use redis::aio::MultiplexedConnection;
use redis::{RedisError, Value};

/// What the server told us, read once.
pub(super) struct Doctor {
    conn: MultiplexedConnection,
    /// `INFO`, or why it could not be read.
    info: Result<HashMap<String, String>, String>,
    /// The version from `INFO` or `HELLO` (HELLO needs no permission).
    version: Option<String>,
    /// Valkey reports itself in `server_name`.
    server_name: String,
}

impl Doctor {
    pub(super) async fn new(mut conn: MultiplexedConnection) -> Doctor {
        let info = match redis::cmd("INFO").query_async::<String>(&mut conn).await {
            Ok(text) => Ok(parse_info(&text)),
            Err(e) => Err(format!("INFO {}", reason(&e))),
        };
        let mut version = info.as_ref().ok().and_then(|i| {
            i.get("valkey_version")
                .or_else(|| i.get("redis_version"))
                .cloned()
        });
        let mut server_name = info
            .as_ref()
            .ok()
            .and_then(|i| i.get("server_name").cloned())
            .unwrap_or_else(|| "redis".to_owned());
        if version.is_none() {
            // HELLO (no protocol argument: stays on RESP2) is allowed to every user
            if let Ok(Value::Array(items)) = redis::cmd("HELLO").query_async::<Value>(&mut conn).await {
                let mut it = items.iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    let (Ok(k), Ok(v)) = (
                        redis::from_redis_value_ref::<String>(k),
                        redis::from_redis_value_ref::<String>(v),
                    ) else {
                        continue;
                    };
                    match k.as_str() {
                        "version" => version = Some(v),
                        "server" => server_name = v,
                        _ => {}
                    }
                }
            }
        }
        Doctor {
            conn,
            info,
            version,
            server_name,
        }
    }

    fn info(&self, field: &str) -> Option<&str> {
        self.info.as_ref().ok()?.get(field).map(String::as_str)
    }

    fn info_reason(&self) -> &str {
        self.info
            .as_ref()
            .err()
            .map(String::as_str)
            .unwrap_or("INFO lacks it")
    }

    fn cluster_enabled(&self) -> Option<bool> {
        self.info("cluster_enabled").map(|v| v == "1")
    }

    /// `CONFIG GET param`: its value, or why it could not be read.
    async fn config(&mut self, param: &str) -> Result<String, String> {
        let r: redis::RedisResult<Vec<String>> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(param)
            .query_async(&mut self.conn)
            .await;
        match r {
            Ok(kv) => kv
                .chunks(2)
                .find(|p| p.len() == 2 && p[0].eq_ignore_ascii_case(param))
                .map(|p| p[1].clone())
                .ok_or_else(|| format!("CONFIG GET {param} returned nothing")),
            Err(e) => Err(format!("CONFIG GET {param} {}", reason(&e))),
        }
    }

    fn replicas(&self) -> Option<u64> {
        self.info("connected_slaves").and_then(|n| n.parse().ok())
    }
}

/// Whether a server error is an ACL denial.
fn is_noperm(e: &RedisError) -> bool {
    e.code() == Some("NOPERM")
}

/// A short reason for "could not read X".
fn reason(e: &RedisError) -> String {
    if is_noperm(e) {
        "denied to this user (NOPERM)".to_owned()
    } else {
        format!("failed: {}", crate::one_line(&e.to_string()))
    }
}

/// `INFO` lines as a map (`# Section` headers and blank lines dropped).
fn parse_info(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// `7.0.15` → (7, 0, 15); missing parts are 0.
fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let mut parts = v.trim().split('.').map(|p| p.parse::<u32>());
    let major = parts.next()?.ok()?;
    let minor = parts.next().and_then(Result::ok).unwrap_or(0);
    let patch = parts.next().and_then(Result::ok).unwrap_or(0);
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("7.0.15"), Some((7, 0, 15)));
        assert_eq!(parse_version("2.4"), Some((2, 4, 0)));
        assert_eq!(parse_version("x"), None);
    }
}
