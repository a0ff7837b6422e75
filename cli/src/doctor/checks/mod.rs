//! The state every check reads: what the server told us (`INFO`, its version, `CONFIG GET`), read
//! once, and how a command the server refused is worded ([`Refused`]).
//!
//! The checks themselves are `Doctor` methods in the submodules, one file per area.

mod acl;
mod connection;
mod features;
mod server;
mod tables;
mod topology;

use std::collections::HashMap;

use redis::aio::MultiplexedConnection;
use redis::{RedisError, Value};

/// A command the server refused, and how: denied by the ACL (`NOPERM`), unknown (renamed away
/// or disabled, as managed services do with `CONFIG`), or another error.
#[derive(Clone, Debug)]
pub(super) struct Refused {
    /// The command as a person types it: `CONFIG GET`, `INFO`, `CLUSTER INFO`...
    pub(super) command: &'static str,
    /// Why, in a few words (`denied to this user (NOPERM)`, ...).
    pub(super) why: String,
}

impl Refused {
    fn new(command: &'static str, e: &RedisError) -> Refused {
        Refused {
            command,
            why: reason(e),
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} refused: {}", self.command, self.why)
    }
}

/// What the server told us, read once.
pub(super) struct Doctor {
    conn: MultiplexedConnection,
    /// `host:port`, for the lines of a cluster's masters.
    addr: String,
    /// `INFO`, or why it could not be read.
    info: Result<HashMap<String, String>, Refused>,
    /// The version from `INFO` or `HELLO` (HELLO needs no permission).
    version: Option<String>,
    /// Valkey reports itself in `server_name`.
    server_name: String,
    /// `master` or `slave`, and the replicas of a master, from `INFO`, else from `ROLE`.
    role: Option<(String, Option<u64>)>,
}

impl Doctor {
    pub(super) async fn new(mut conn: MultiplexedConnection, addr: String) -> Doctor {
        let info = match redis::cmd("INFO").query_async::<String>(&mut conn).await {
            Ok(text) => Ok(parse_info(&text)),
            Err(e) => Err(Refused::new("INFO", &e)),
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
        let role = match &info {
            Ok(i) => i
                .get("role")
                .map(|r| (r.clone(), i.get("connected_slaves").and_then(|n| n.parse().ok()))),
            // ROLE is allowed where INFO is not, e.g. to an ACL user without +info
            Err(_) => match redis::cmd("ROLE").query_async::<Vec<Value>>(&mut conn).await {
                Ok(reply) => {
                    let role = reply
                        .first()
                        .and_then(|v| redis::from_redis_value_ref::<String>(v).ok());
                    let replicas = match reply.get(2) {
                        Some(Value::Array(r)) => Some(r.len() as u64),
                        _ => None,
                    };
                    role.map(|r| (r, replicas))
                }
                Err(_) => None,
            },
        };
        Doctor {
            conn,
            addr,
            info,
            version,
            server_name,
            role,
        }
    }

    pub(super) fn addr(&self) -> &str {
        &self.addr
    }

    fn info(&self, field: &str) -> Option<&str> {
        self.info.as_ref().ok()?.get(field).map(String::as_str)
    }

    /// Why `INFO` could not be read, if it could not.
    fn info_refused(&self) -> Option<&Refused> {
        self.info.as_ref().err()
    }

    fn info_reason(&self) -> String {
        match &self.info {
            Err(r) => r.to_string(),
            Ok(_) => "INFO lacks it".to_owned(),
        }
    }

    fn cluster_enabled(&self) -> Option<bool> {
        self.info("cluster_enabled").map(|v| v == "1")
    }

    /// Whether this node is a master (`INFO`'s role, else `ROLE`); `None` when neither answers.
    pub(super) fn is_master(&self) -> Option<bool> {
        self.role.as_ref().map(|(r, _)| r == "master")
    }

    /// `CONFIG GET param`: its value, or why it could not be read.
    async fn config(&mut self, param: &str) -> Result<String, Refused> {
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
                .ok_or_else(|| Refused {
                    command: "CONFIG GET",
                    why: format!("it returned nothing for {param}"),
                }),
            Err(e) => Err(Refused::new("CONFIG GET", &e)),
        }
    }

    fn replicas(&self) -> Option<u64> {
        self.role.as_ref().and_then(|(_, n)| *n)
    }
}

/// Whether a server error is an ACL denial.
fn is_noperm(e: &RedisError) -> bool {
    e.code() == Some("NOPERM")
}

/// Whether the server does not know the command (renamed away, disabled, or older).
fn is_unknown(e: &RedisError) -> bool {
    let t = e.to_string().to_ascii_lowercase();
    t.contains("unknown command") || t.contains("unknown subcommand")
}

/// A short reason for "could not read X".
fn reason(e: &RedisError) -> String {
    if is_noperm(e) {
        "denied to this user (NOPERM)".to_owned()
    } else if is_unknown(e) {
        "unknown command (renamed away or disabled by the server's configuration)".to_owned()
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
