//! A throw-away PKI for TLS tests (rcgen): a CA, server and client certificates as PEM files and
//! as PKCS#12 stores (what a Java service keeps), and redis-servers with a TLS port.
//! Included with `#[path]` by the tests that need it (it needs rcgen and p12-keystore).
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

use super::RedisServer;

/// The password of the PKCS#12 stores.
pub const STORE_PASSWORD: &str = "changeit";

/// A certificate and its key, PEM files.
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Everything a TLS test needs, in a fresh directory (removed on drop).
pub struct Pki {
    pub dir: PathBuf,
    /// The CA's certificate (PEM).
    pub ca: PathBuf,
    /// Server certificate for 127.0.0.1 and localhost, signed by the CA.
    pub server: CertFiles,
    /// Server certificate for `other.example` only, signed by the CA.
    pub wrong_host: CertFiles,
    /// Server certificate for 127.0.0.1 signed by an unrelated CA.
    pub foreign: CertFiles,
    /// Client certificate (for `tls-auth-clients yes`), signed by the CA.
    pub client: CertFiles,
    /// PKCS#12 trust store with the CA certificate (password [`STORE_PASSWORD`]).
    pub truststore_p12: PathBuf,
    /// PKCS#12 key store with the client key and its chain (password [`STORE_PASSWORD`]).
    pub keystore_p12: PathBuf,
}

fn ca(name: &str) -> (CertificateParams, KeyPair, rcgen::Certificate) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    (params, key, cert)
}

fn leaf(names: &[&str], cn: &str, issuer: &Issuer<'_, KeyPair>) -> (KeyPair, rcgen::Certificate) {
    let mut params = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, issuer).unwrap();
    (key, cert)
}

fn write(dir: &Path, name: &str, data: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

impl Pki {
    /// A PKI for `test`, or `None` (the skip said, see [`super::skip_unsupported`]) where the
    /// test server was built without TLS, as some packaged builds are.
    pub fn for_test(test: &str) -> Option<Pki> {
        if let Some(answer) = server_lacks_tls() {
            crate::common::skip_unsupported(test, &format!("no TLS in this build: {answer}"));
            return None;
        }
        Some(Pki::new())
    }

    pub fn new() -> Pki {
        let dir = std::env::temp_dir().join(format!(
            "redisson-lock-pki-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let (ca_params, ca_key, ca_cert) = ca("redisson-lock test CA");
        let issuer = Issuer::new(ca_params, ca_key);
        let files = |name: &str, (key, cert): (KeyPair, rcgen::Certificate)| CertFiles {
            cert: write(&dir, &format!("{name}.pem"), cert.pem()),
            key: write(&dir, &format!("{name}.key"), key.serialize_pem()),
        };
        let server = files("server", leaf(&["127.0.0.1", "localhost"], "redis", &issuer));
        let wrong_host = files("wrong-host", leaf(&["other.example"], "other", &issuer));
        let (client_key, client_cert) = leaf(&["client.example"], "locks-client", &issuer);
        let (f_params, f_key, _) = ca("some other CA");
        let foreign_issuer = Issuer::new(f_params, f_key);
        let foreign = files("foreign", leaf(&["127.0.0.1"], "impostor", &foreign_issuer));

        let ca_path = write(&dir, "ca.pem", ca_cert.pem());
        let mut trust = p12_keystore::KeyStore::new();
        trust.add_entry(
            "ca",
            p12_keystore::KeyStoreEntry::Certificate(
                p12_keystore::Certificate::from_der(ca_cert.der()).unwrap(),
            ),
        );
        let truststore_p12 = write(
            &dir,
            "truststore.p12",
            trust.writer(STORE_PASSWORD).write().unwrap(),
        );
        let mut keys = p12_keystore::KeyStore::new();
        let chain = p12_keystore::PrivateKeyChain::new(
            b"client-key-1".to_vec(),
            p12_keystore::PrivateKey::from_der(&client_key.serialize_der()).unwrap(),
            [
                p12_keystore::Certificate::from_der(client_cert.der()).unwrap(),
                p12_keystore::Certificate::from_der(ca_cert.der()).unwrap(),
            ],
        );
        keys.add_entry("client", p12_keystore::KeyStoreEntry::PrivateKeyChain(chain));
        let keystore_p12 = write(&dir, "client.p12", keys.writer(STORE_PASSWORD).write().unwrap());
        let client = CertFiles {
            cert: write(&dir, "client.pem", client_cert.pem()),
            key: write(&dir, "client.key", client_key.serialize_pem()),
        };
        Pki {
            dir,
            ca: ca_path,
            server,
            wrong_host,
            foreign,
            client,
            truststore_p12,
            keystore_p12,
        }
    }

    /// The `redis-server` arguments of a TLS port with `cert`, trusting this CA for client
    /// certificates; `auth_clients`: `no`, `optional` or `yes`.
    pub fn server_args(&self, tls_port: u16, cert: &CertFiles, auth_clients: &str) -> Vec<String> {
        vec![
            "--tls-port".into(),
            tls_port.to_string(),
            "--tls-cert-file".into(),
            cert.cert.display().to_string(),
            "--tls-key-file".into(),
            cert.key.display().to_string(),
            "--tls-ca-cert-file".into(),
            self.ca.display().to_string(),
            "--tls-auth-clients".into(),
            auth_clients.into(),
        ]
    }

    /// A redis-server with a plain port (for raw assertions) and a TLS port serving `cert`.
    /// Returns the server and its TLS port.
    pub fn start_server(&self, cert: &CertFiles, auth_clients: &str) -> (RedisServer, u16) {
        self.start_server_with(cert, auth_clients, &[])
    }

    /// [`start_server`](Self::start_server) with more arguments.
    pub fn start_server_with(
        &self,
        cert: &CertFiles,
        auth_clients: &str,
        extra: &[&str],
    ) -> (RedisServer, u16) {
        let tls_port = free_port();
        let mut args = self.server_args(tls_port, cert, auth_clients);
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        (RedisServer::start_with(&args), tls_port)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `file:` URL of a path, as a Redisson config file names it.
pub fn file_url(p: &Path) -> String {
    format!("file:{}", p.display())
}

/// What the test server says when asked for a TLS port, where it was built without TLS; `None`
/// where it has TLS (it then exits on the missing certificate, or would serve). Asked once.
fn server_lacks_tls() -> Option<String> {
    static ANSWER: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ANSWER
        .get_or_init(|| {
            let log = std::env::temp_dir().join(format!("redisson-lock-tls-check-{}", std::process::id()));
            let out = std::fs::File::create(&log).expect("a log file for the TLS check");
            let missing = log.with_extension("missing");
            let mut child = std::process::Command::new(crate::common::redis_server_bin())
                .args([
                    "--port",
                    "0",
                    "--tls-port",
                    &free_port().to_string(),
                    "--bind",
                    "127.0.0.1",
                ])
                .arg("--tls-cert-file")
                .arg(&missing)
                .arg("--tls-key-file")
                .arg(&missing)
                .args(["--save", "", "--loglevel", "warning"])
                .stdout(out)
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("run redis-server for the TLS check");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while std::time::Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let _ = std::fs::remove_file(&log);
            text.lines()
                .find(|l| l.contains("Failed finding TLS support"))
                .map(|l| l.rsplit('#').next().unwrap_or(l).trim().to_owned())
        })
        .clone()
}
