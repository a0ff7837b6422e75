//! TLS for `rediss://` addresses (feature `tls-rustls`): which certificate authorities to trust,
//! the client's own certificate for servers that require one (`tls-auth-clients yes`), and how
//! strictly the server's certificate is checked.
//!
//! Certificates come as PEM, or from the Java key stores a Redisson service already has
//! (PKCS#12, the JDK's default store type since Java 9), so one `redisson.yaml` with
//! `sslTruststore` / `sslKeystore` configures both services (see
//! [`RedissonConfig`](crate::RedissonConfig)). JKS stores are refused with the command that
//! converts them (`keytool -importkeystore ... -deststoretype pkcs12`).
//!
//! The connection itself is redis-rs over rustls (ring provider): TLS 1.2 and 1.3, the system's
//! root certificates when no trust store is given.

use std::path::Path;

use base64::Engine as _;
use redis::{ClientTlsConfig, ConnectionAddr, TlsCertificates};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::{Error, Result};

/// How the server's certificate is checked (Redisson's `sslVerificationMode`).
///
/// ```
/// use redisson_lock::{Tls, TlsVerify};
/// let tls = Tls::new().with_verify(TlsVerify::CaOnly);
/// assert_eq!(tls.verify(), TlsVerify::CaOnly);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsVerify {
    /// The chain must lead to a trusted root and the certificate must name the host connected
    /// to (DNS name or IP address). Redisson's `STRICT` (the default).
    #[default]
    Strict,
    /// The chain must lead to a trusted root; the host name is not checked. Redisson's
    /// `CA_ONLY` (and `NONE` with a trust store, which Redisson treats the same way).
    CaOnly,
    /// Nothing is checked: any certificate is accepted. Redisson's `NONE` without a trust store
    /// (and `sslEnableEndpointIdentification: false`). Encrypts, but does not authenticate the
    /// server.
    None,
}

/// TLS settings for `rediss://` connections: trusted roots, the client's certificate, and
/// [`TlsVerify`]. Give them to [`ClientBuilder::tls`](crate::ClientBuilder::tls); the address
/// decides whether TLS is used (`rediss://`), as in Redisson.
///
/// ```no_run
/// # async fn demo() -> redisson_lock::Result<()> {
/// use redisson_lock::{Client, Tls};
/// let tls = Tls::new()
///     .truststore_file("/etc/redis/truststore.p12", Some("changeit"))? // or a PEM file
///     .keystore_file("/etc/redis/client.p12", Some("changeit"))?;     // mutual TLS
/// let client = Client::builder().url("rediss://redis.internal:6380/").tls(tls).build().await?;
/// # let _ = client; Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct Tls {
    /// Trusted roots, PEM; `None`: the system's.
    roots: Option<Vec<u8>>,
    /// The client's certificate chain and key, PEM.
    identity: Option<(Vec<u8>, Vec<u8>)>,
    verify: TlsVerify,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("root_certificates", &self.roots.as_ref().map(|p| count_certs(p)))
            .field("client_identity", &self.identity.is_some())
            .field("verify", &self.verify)
            .finish()
    }
}

fn count_certs(pem: &[u8]) -> usize {
    CertificateDer::pem_slice_iter(pem).filter(|c| c.is_ok()).count()
}

/// What a key store file holds, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StoreFormat {
    Pem,
    Pkcs12,
    Jks,
    Jceks,
}

fn sniff(bytes: &[u8]) -> Option<StoreFormat> {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let b = &bytes[start..];
    if b.starts_with(b"-----BEGIN") {
        Some(StoreFormat::Pem)
    } else if bytes.starts_with(&[0xFE, 0xED, 0xFE, 0xED]) {
        Some(StoreFormat::Jks)
    } else if bytes.starts_with(&[0xCE, 0xCE, 0xCE, 0xCE]) {
        Some(StoreFormat::Jceks)
    } else if bytes.first() == Some(&0x30) {
        Some(StoreFormat::Pkcs12) // a DER SEQUENCE: PKCS#12's PFX
    } else {
        None
    }
}

fn bad(what: &str, msg: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("tls {what}: {msg}"))
}

fn pem_block(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut s = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        s.push_str(std::str::from_utf8(line).unwrap_or_default());
        s.push('\n');
    }
    s.push_str(&format!("-----END {label}-----\n"));
    s
}

/// The certificates of a PEM text (at least one, all well-formed).
fn pem_certs(what: &str, pem: &[u8]) -> Result<usize> {
    let mut n = 0;
    for c in CertificateDer::pem_slice_iter(pem) {
        c.map_err(|e| bad(what, format!("malformed PEM certificate: {e:?}")))?;
        n += 1;
    }
    if n == 0 {
        return Err(bad(what, "no `-----BEGIN CERTIFICATE-----` block"));
    }
    Ok(n)
}

fn jks_refused(what: &str, format: StoreFormat) -> Error {
    let kind = if format == StoreFormat::Jks {
        "JKS"
    } else {
        "JCEKS"
    };
    bad(
        what,
        format!(
            "a {kind} key store cannot be read here; convert it to PKCS#12 (which Java reads too): \
             keytool -importkeystore -srckeystore STORE -destkeystore STORE.p12 -deststoretype pkcs12"
        ),
    )
}

fn pkcs12(what: &str, bytes: &[u8], password: Option<&str>) -> Result<p12_keystore::KeyStore> {
    p12_keystore::KeyStore::from_pkcs12(
        bytes,
        password.unwrap_or(""),
        p12_keystore::Pkcs12ImportPolicy::Relaxed,
    )
    .map_err(|e| {
        bad(
            what,
            format!(
                "not a readable PKCS#12 store ({e}){}",
                if password.is_none() {
                    "; it may need its password"
                } else {
                    "; wrong password?"
                }
            ),
        )
    })
}

fn read(what: &str, path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| bad(what, format!("cannot read {}: {e}", path.display())))
}

impl Tls {
    /// Defaults: the system's root certificates, no client certificate, [`TlsVerify::Strict`].
    ///
    /// ```
    /// let tls = redisson_lock::Tls::new();
    /// assert_eq!(tls.verify(), redisson_lock::TlsVerify::Strict);
    /// ```
    pub fn new() -> Tls {
        Tls::default()
    }

    /// Trust these roots (PEM, one or more `CERTIFICATE` blocks) instead of the system's.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the text has no well-formed certificate.
    ///
    /// ```no_run
    /// let tls = redisson_lock::Tls::new().root_certificates_pem(std::fs::read("ca.pem").unwrap())?;
    /// # let _ = tls; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn root_certificates_pem(mut self, pem: impl Into<Vec<u8>>) -> Result<Tls> {
        let pem = pem.into();
        pem_certs("root certificates", &pem)?;
        self.roots = Some(pem);
        Ok(self)
    }

    /// Present this certificate chain (PEM, the client's certificate first) and private key
    /// (PEM: PKCS#8, PKCS#1 or SEC1) to servers that ask for one.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when either is malformed.
    ///
    /// ```no_run
    /// let tls = redisson_lock::Tls::new()
    ///     .client_identity_pem(std::fs::read("client.pem").unwrap(), std::fs::read("client.key").unwrap())?;
    /// # let _ = tls; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn client_identity_pem(
        mut self,
        cert_chain: impl Into<Vec<u8>>,
        key: impl Into<Vec<u8>>,
    ) -> Result<Tls> {
        let (cert_chain, key) = (cert_chain.into(), key.into());
        pem_certs("client certificate", &cert_chain)?;
        PrivateKeyDer::from_pem_slice(&key)
            .map_err(|e| bad("client key", format!("no well-formed PEM private key: {e:?}")))?;
        self.identity = Some((cert_chain, key));
        Ok(self)
    }

    /// Trust the certificates of this store: PEM, or PKCS#12 (a Java trust store: its
    /// certificate entries) opened with `password`. Redisson's `sslTruststore`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an unreadable store, a wrong password, a store without
    /// certificates, or a JKS/JCEKS store (convert it: the message says how).
    ///
    /// ```no_run
    /// let bytes = std::fs::read("truststore.p12").unwrap();
    /// let tls = redisson_lock::Tls::new().truststore(&bytes, Some("changeit"))?;
    /// # let _ = tls; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn truststore(self, bytes: &[u8], password: Option<&str>) -> Result<Tls> {
        const WHAT: &str = "trust store";
        match sniff(bytes) {
            Some(StoreFormat::Pem) => self.root_certificates_pem(bytes.to_vec()),
            Some(StoreFormat::Pkcs12) => {
                let store = pkcs12(WHAT, bytes, password)?;
                let mut pem = String::new();
                for (_, entry) in store.entries() {
                    if let p12_keystore::KeyStoreEntry::Certificate(c) = entry {
                        pem.push_str(&pem_block("CERTIFICATE", c.as_der()));
                    }
                }
                if pem.is_empty() {
                    return Err(bad(WHAT, "the PKCS#12 store has no certificate entries"));
                }
                self.root_certificates_pem(pem.into_bytes())
            }
            Some(f @ (StoreFormat::Jks | StoreFormat::Jceks)) => Err(jks_refused(WHAT, f)),
            None => Err(bad(WHAT, "neither PEM nor a PKCS#12 store")),
        }
    }

    /// Present the key and certificate chain of this store: PEM (certificates and a private
    /// key in one text), or PKCS#12 (a Java key store: its first private key entry) opened with
    /// `password`. Redisson's `sslKeystore` (Java uses the store password for the key too).
    ///
    /// # Errors
    ///
    /// As [`truststore`](Self::truststore); also when the store has no private key.
    ///
    /// ```no_run
    /// let bytes = std::fs::read("client.p12").unwrap();
    /// let tls = redisson_lock::Tls::new().keystore(&bytes, Some("changeit"))?;
    /// # let _ = tls; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn keystore(self, bytes: &[u8], password: Option<&str>) -> Result<Tls> {
        const WHAT: &str = "key store";
        match sniff(bytes) {
            Some(StoreFormat::Pem) => self.client_identity_pem(bytes.to_vec(), bytes.to_vec()),
            Some(StoreFormat::Pkcs12) => {
                let store = pkcs12(WHAT, bytes, password)?;
                let Some((_, chain)) = store.private_key_chain() else {
                    return Err(bad(WHAT, "the PKCS#12 store has no private key entry"));
                };
                if chain.certs().is_empty() {
                    return Err(bad(WHAT, "the private key entry has no certificate"));
                }
                let certs: String = chain
                    .certs()
                    .iter()
                    .map(|c| pem_block("CERTIFICATE", c.as_der()))
                    .collect();
                let key = pem_block("PRIVATE KEY", chain.key().as_der());
                self.client_identity_pem(certs.into_bytes(), key.into_bytes())
            }
            Some(f @ (StoreFormat::Jks | StoreFormat::Jceks)) => Err(jks_refused(WHAT, f)),
            None => Err(bad(WHAT, "neither PEM nor a PKCS#12 store")),
        }
    }

    /// [`truststore`](Self::truststore) read from a file.
    ///
    /// # Errors
    ///
    /// As [`truststore`](Self::truststore), and when the file cannot be read.
    ///
    /// ```no_run
    /// let tls = redisson_lock::Tls::new().truststore_file("ca.pem", None)?;
    /// # let _ = tls; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn truststore_file(self, path: impl AsRef<Path>, password: Option<&str>) -> Result<Tls> {
        let bytes = read("trust store", path.as_ref())?;
        self.truststore(&bytes, password)
    }

    /// [`keystore`](Self::keystore) read from a file.
    ///
    /// # Errors
    ///
    /// As [`keystore`](Self::keystore), and when the file cannot be read.
    ///
    /// ```no_run
    /// let tls = redisson_lock::Tls::new().keystore_file("client.p12", Some("changeit"))?;
    /// # let _ = tls; Ok::<(), redisson_lock::Error>(())
    /// ```
    pub fn keystore_file(self, path: impl AsRef<Path>, password: Option<&str>) -> Result<Tls> {
        let bytes = read("key store", path.as_ref())?;
        self.keystore(&bytes, password)
    }

    /// How the server's certificate is checked.
    ///
    /// ```
    /// let tls = redisson_lock::Tls::new().with_verify(redisson_lock::TlsVerify::None);
    /// # let _ = tls;
    /// ```
    pub fn with_verify(mut self, verify: TlsVerify) -> Tls {
        self.verify = verify;
        self
    }

    /// The verification mode.
    ///
    /// ```
    /// assert_eq!(redisson_lock::Tls::new().verify(), redisson_lock::TlsVerify::Strict);
    /// ```
    pub fn verify(&self) -> TlsVerify {
        self.verify
    }

    /// How many root certificates replace the system's (`None`: the system's are used).
    ///
    /// ```
    /// assert_eq!(redisson_lock::Tls::new().root_certificate_count(), None);
    /// ```
    pub fn root_certificate_count(&self) -> Option<usize> {
        self.roots.as_deref().map(count_certs)
    }

    /// Whether a client certificate is presented.
    ///
    /// ```
    /// assert!(!redisson_lock::Tls::new().has_client_identity());
    /// ```
    pub fn has_client_identity(&self) -> bool {
        self.identity.is_some()
    }

    pub(crate) fn certificates(&self) -> TlsCertificates {
        TlsCertificates {
            client_tls: self.identity.as_ref().map(|(cert, key)| ClientTlsConfig {
                client_cert: cert.clone(),
                client_key: key.clone(),
            }),
            root_cert: self.roots.clone(),
        }
    }

    /// Applies the verification mode to an address that already carries the certificates.
    pub(crate) fn apply(&self, addr: &mut ConnectionAddr) {
        match self.verify {
            TlsVerify::Strict => {}
            TlsVerify::CaOnly => addr.set_danger_accept_invalid_hostnames(true),
            TlsVerify::None => {
                if let ConnectionAddr::TcpTls { insecure, .. } = addr {
                    *insecure = true;
                }
            }
        }
    }

    /// A `redis::Client` for a `rediss://` URL (or connection info) with these settings.
    pub(crate) fn client(&self, info: redis::ConnectionInfo) -> Result<redis::Client> {
        if !matches!(info.addr(), ConnectionAddr::TcpTls { .. }) {
            return Err(Error::InvalidArgument(format!(
                "tls settings were given for {}, which is not a rediss:// address",
                info.addr()
            )));
        }
        let client =
            redis::Client::build_with_tls(info, self.certificates()).map_err(|e| bad("certificates", e))?;
        self.apply_verify(client)
    }

    /// `client` with this verification mode applied to its address.
    pub(crate) fn apply_verify(&self, client: redis::Client) -> Result<redis::Client> {
        if self.verify == TlsVerify::Strict {
            return Ok(client);
        }
        let info = client.get_connection_info().clone();
        let mut addr = info.addr().clone();
        self.apply(&mut addr);
        Ok(redis::Client::open(info.set_addr(addr))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_formats_are_told_apart_by_their_first_bytes() {
        assert_eq!(sniff(b"\n  -----BEGIN CERTIFICATE-----"), Some(StoreFormat::Pem));
        assert_eq!(sniff(&[0xFE, 0xED, 0xFE, 0xED, 0, 0]), Some(StoreFormat::Jks));
        assert_eq!(sniff(&[0xCE, 0xCE, 0xCE, 0xCE]), Some(StoreFormat::Jceks));
        assert_eq!(sniff(&[0x30, 0x82, 0x01]), Some(StoreFormat::Pkcs12));
        assert_eq!(sniff(b"hello"), None);
        let jks = Tls::new().truststore(&[0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2], Some("changeit"));
        let msg = jks.unwrap_err().to_string();
        assert!(
            msg.contains("JKS") && msg.contains("-deststoretype pkcs12"),
            "{msg}"
        );
        assert!(Tls::new().truststore(b"garbage", None).is_err());
        assert!(Tls::new()
            .root_certificates_pem("-----BEGIN NOTHING-----\n")
            .is_err());
        assert!(Tls::new()
            .client_identity_pem(
                "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                "no key"
            )
            .is_err());
    }

    #[test]
    fn pem_blocks_round_trip() {
        let der: Vec<u8> = (0..=255u8).cycle().take(700).collect();
        let pem = pem_block("CERTIFICATE", &der);
        assert!(pem.lines().all(|l| l.len() <= 64));
        let back: Vec<_> = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<std::result::Result<_, _>>()
            .unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].as_ref(), der.as_slice());
    }

    #[test]
    fn a_plain_address_with_tls_settings_is_refused() {
        let info = redis::IntoConnectionInfo::into_connection_info("redis://127.0.0.1:6379").unwrap();
        let e = Tls::new().client(info).unwrap_err();
        assert!(e.to_string().contains("not a rediss://"), "{e}");
    }

    #[test]
    fn verification_modes_change_the_address() {
        let info = redis::IntoConnectionInfo::into_connection_info("rediss://127.0.0.1:6380").unwrap();
        let insecure = |tls: Tls| match tls.client(info.clone()).unwrap().get_connection_info().addr() {
            ConnectionAddr::TcpTls { insecure, .. } => *insecure,
            other => panic!("{other:?}"),
        };
        assert!(!insecure(Tls::new()));
        assert!(!insecure(Tls::new().with_verify(TlsVerify::CaOnly)));
        assert!(insecure(Tls::new().with_verify(TlsVerify::None)));
    }
}
