//! Turning a Redisson address (`redis://host:port`, `valkey://`, their TLS forms) and a login
//! into the redis URL this crate connects with.

use super::values::bad;
use crate::connect::redact;
use crate::error::Result;

/// Login and database to put into addresses.
#[derive(Default, Clone)]
pub(super) struct Auth {
    pub(super) username: Option<String>,
    pub(super) password: Option<String>,
}

/// Puts the login and database into a Redisson address (`redis://host:port`).
pub(super) fn url_with(key: &str, address: &str, auth: &Auth, database: Option<i64>) -> Result<String> {
    let address = address.trim();
    let (scheme, rest) = address.split_once("://").ok_or_else(|| {
        bad(
            key,
            format!(
                "`{}` has no scheme; Redisson wants redis:// or rediss://",
                redact(address)
            ),
        )
    })?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "redis" | "valkey" => "redis",
        "rediss" | "valkeys" => {
            if !cfg!(feature = "tls-rustls") {
                return Err(bad(
                    key,
                    format!(
                        "`{}` needs TLS: build redisson-lock with the `tls-rustls` feature",
                        redact(address)
                    ),
                ));
            }
            "rediss"
        }
        other => {
            return Err(bad(
                key,
                format!("unsupported scheme `{other}://` (redis://, rediss://, valkey://, valkeys://)"),
            ))
        }
    };
    // Redisson addresses are host:port; a login or path in them is kept unless the settings give one.
    let (userinfo, hostpart) = match rest.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, rest),
    };
    let (host, path) = match hostpart.split_once('/') {
        Some((h, p)) => (h, Some(p)),
        None => (hostpart, None),
    };
    if host.is_empty() {
        return Err(bad(key, format!("`{}` has no host", redact(address))));
    }
    let login = match (&auth.username, &auth.password) {
        (None, None) => userinfo.map(|u| format!("{u}@")).unwrap_or_default(),
        (u, p) => {
            let u = u.as_deref().map(encode).unwrap_or_default();
            match p {
                Some(p) => format!("{u}:{}@", encode(p)),
                None => format!("{u}@"),
            }
        }
    };
    let db = match database {
        Some(db) if db < 0 => return Err(bad(key, format!("database must not be negative, got {db}"))),
        Some(db) if db != 0 => format!("/{db}"),
        _ => path
            .filter(|p| !p.is_empty())
            .map(|p| format!("/{p}"))
            .unwrap_or_default(),
    };
    let url = format!("{scheme}://{login}{host}{db}");
    redis::IntoConnectionInfo::into_connection_info(url.as_str())
        .map_err(|e| bad(key, format!("`{}` is not a valid address: {e}", redact(address))))?;
    Ok(url)
}

/// Percent-encodes a URL userinfo part.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
