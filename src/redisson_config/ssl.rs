//! Redisson's `ssl*` keys: the verification mode, the trust and key stores (`file:` URLs), the
//! protocol and cipher lists, merged across the top level and the server section into
//! [`Tls`](crate::Tls) settings.

use serde_norway::Value;

use super::values::untagged;
use super::values::{bad, boolean, string};
use crate::error::Result;

/// How strictly the server's certificate is checked, as the file spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SslVerify {
    Strict,
    CaOnly,
    None,
}

/// The `ssl*` keys of one place (the top level, Redisson 4.x; or a server section, 3.x and the
/// deprecated 4.x spelling), each with the key it came from (for errors).
#[derive(Clone, Default)]
pub(super) struct Ssl {
    verify: Option<(String, SslVerify)>,
    truststore: Option<(String, String)>,
    truststore_password: Option<String>,
    keystore: Option<(String, String)>,
    keystore_password: Option<String>,
    keystore_type: Option<(String, String)>,
    protocols: Option<(String, Vec<String>)>,
    ciphers: Option<String>,
    any: bool,
}

impl Ssl {
    /// Reads one `ssl*` key (`full` is how errors name it).
    pub(super) fn set(&mut self, full: &str, key: &str, v: &Value) -> Result<()> {
        self.any = true;
        let full_s = full.to_owned();
        match key {
            "sslVerificationMode" => {
                let s = string(full, v)?.unwrap_or_default();
                let mode = match s.as_str() {
                    "STRICT" => SslVerify::Strict,
                    "CA_ONLY" => SslVerify::CaOnly,
                    "NONE" => SslVerify::None,
                    _ => return Err(bad(full, format!("expected STRICT, CA_ONLY or NONE, got `{s}`"))),
                };
                self.verify = Some((full_s, mode));
            }
            // Redisson < 3.41 (deprecated since): true = STRICT, false = NONE
            "sslEnableEndpointIdentification" => {
                let mode = if boolean(full, v)? {
                    SslVerify::Strict
                } else {
                    SslVerify::None
                };
                // sslVerificationMode, where both are given, is the newer spelling: it wins
                if !self
                    .verify
                    .as_ref()
                    .is_some_and(|(k, _)| k.ends_with("sslVerificationMode"))
                {
                    self.verify = Some((full_s, mode));
                }
            }
            "sslTruststore" => self.truststore = string(full, v)?.map(|u| (full_s, u)),
            "sslTruststorePassword" => self.truststore_password = string(full, v)?,
            "sslKeystore" => self.keystore = string(full, v)?.map(|u| (full_s, u)),
            "sslKeystorePassword" => self.keystore_password = string(full, v)?,
            "sslKeystoreType" => self.keystore_type = string(full, v)?.map(|t| (full_s, t)),
            "sslProvider" => {
                let p = string(full, v)?.unwrap_or_default();
                if !matches!(p.as_str(), "JDK" | "OPENSSL") {
                    return Err(bad(full, format!("expected JDK or OPENSSL, got `{p}`")));
                }
                tracing::debug!(key = full, provider = %p, "redisson config: ssl provider ignored (rustls is used)");
            }
            "sslProtocols" => {
                let list = match untagged(v) {
                    Value::Null => Vec::new(),
                    Value::Sequence(items) => items
                        .iter()
                        .map(|i| string(full, i).map(Option::unwrap_or_default))
                        .collect::<Result<Vec<_>>>()?,
                    other => string(full, other)?
                        .unwrap_or_default()
                        .split(',')
                        .map(|p| p.trim().to_owned())
                        .filter(|p| !p.is_empty())
                        .collect(),
                };
                self.protocols = (!list.is_empty()).then_some((full_s, list));
            }
            "sslCiphers" => {
                if !matches!(untagged(v), Value::Null) {
                    self.ciphers = Some(full_s);
                }
            }
            _ => {
                // sslTrustManagerFactory / sslKeyManagerFactory are Java objects Redisson
                // itself skips in a file; anything else is unknown
                tracing::debug!(key = full, "redisson config: ignored");
            }
        }
        Ok(())
    }

    pub(super) fn is_empty(&self) -> bool {
        !self.any
    }

    /// Redisson 4.x merges the top level (`self`) over a server section's deprecated copies:
    /// a value given at the top wins; the verification mode of the section counts when the top
    /// level leaves it at its default (`STRICT`).
    pub(super) fn over(self, section: Ssl) -> Ssl {
        let verify = match (self.verify, section.verify) {
            (Some((_, SslVerify::Strict)), Some(s)) => Some(s),
            (top, s) => top.or(s),
        };
        Ssl {
            verify,
            truststore: self.truststore.or(section.truststore),
            truststore_password: self.truststore_password.or(section.truststore_password),
            keystore: self.keystore.or(section.keystore),
            keystore_password: self.keystore_password.or(section.keystore_password),
            keystore_type: self.keystore_type.or(section.keystore_type),
            protocols: self.protocols.or(section.protocols),
            ciphers: self.ciphers.or(section.ciphers),
            any: self.any || section.any,
        }
    }

    /// The TLS settings these keys describe (files are read now).
    #[cfg(feature = "tls-rustls")]
    pub(super) fn tls(&self) -> Result<Option<crate::Tls>> {
        if !self.any {
            return Ok(None);
        }
        if let Some((key, t)) = &self.keystore_type {
            match t.to_ascii_uppercase().as_str() {
                "PKCS12" | "PEM" => {}
                "JKS" | "JCEKS" => {
                    return Err(bad(
                        key,
                        format!(
                            "{t} stores cannot be read here; convert them to PKCS#12 (Java reads it too): \
                             keytool -importkeystore -srckeystore STORE -destkeystore STORE.p12 -deststoretype pkcs12"
                        ),
                    ))
                }
                _ => return Err(bad(key, format!("unsupported key store type `{t}` (PKCS12 or PEM)"))),
            }
        }
        if let Some((key, list)) = &self.protocols {
            let has = |p: &str| list.iter().any(|x| x.eq_ignore_ascii_case(p));
            match (has("TLSv1.2"), has("TLSv1.3")) {
                (false, false) => {
                    return Err(bad(
                        key,
                        format!("{list:?}: this client speaks TLS 1.2 and 1.3 only (rustls)"),
                    ))
                }
                (true, true) => {}
                _ => tracing::warn!(key = %key, protocols = ?list,
                    "redisson config: TLS versions cannot be narrowed here; rustls offers TLS 1.2 and 1.3 and the server picks"),
            }
        }
        if let Some(key) = &self.ciphers {
            tracing::warn!(key = %key, "redisson config: cipher suites are not configurable here; rustls uses its own (modern AEAD suites only)");
        }
        let mut tls = crate::Tls::new();
        if let Some((key, url)) = &self.truststore {
            let path = file_url(key, url)?;
            tls = tls
                .truststore_file(&path, self.truststore_password.as_deref())
                .map_err(|e| bad(key, e))?;
        }
        if let Some((key, url)) = &self.keystore {
            let path = file_url(key, url)?;
            tls = tls
                .keystore_file(&path, self.keystore_password.as_deref())
                .map_err(|e| bad(key, e))?;
        }
        let verify = match self.verify.as_ref().map(|(_, v)| *v) {
            None | Some(SslVerify::Strict) => crate::TlsVerify::Strict,
            Some(SslVerify::CaOnly) => crate::TlsVerify::CaOnly,
            // Redisson: NONE with a trust store still checks the chain against it
            Some(SslVerify::None) if self.truststore.is_some() => crate::TlsVerify::CaOnly,
            Some(SslVerify::None) => crate::TlsVerify::None,
        };
        Ok(Some(tls.with_verify(verify)))
    }
}

/// The local path of a Java `file:` URL (`file:/abs`, `file:///abs`, `file://localhost/abs`,
/// `file:relative` to the working directory, as the JVM reads them; `%XX` decoded).
#[cfg(feature = "tls-rustls")]
pub(super) fn file_url(key: &str, url: &str) -> Result<std::path::PathBuf> {
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once(':').filter(|(s, _)| s.len() > 1) else {
        return Err(bad(
            key,
            format!("`{url}` is not a URL; Redisson wants one like file:/etc/redis/truststore.p12 (and rejects a bare path too)"),
        ));
    };
    if !scheme.eq_ignore_ascii_case("file") {
        return Err(bad(
            key,
            format!("only file: URLs can be read here, not `{scheme}:` (a classpath: URL is not readable by Redisson either)"),
        ));
    }
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let (host, path) = after.split_at(after.find('/').unwrap_or(after.len()));
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Err(bad(key, format!("`{url}` names another host")));
            }
            path
        }
        None => rest,
    };
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let decoded =
        String::from_utf8(out).map_err(|_| bad(key, format!("`{url}` is not UTF-8 once decoded")))?;
    if decoded.is_empty() {
        return Err(bad(key, format!("`{url}` has no path")));
    }
    Ok(std::path::PathBuf::from(decoded))
}
