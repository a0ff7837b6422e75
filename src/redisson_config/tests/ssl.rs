use super::*;
use crate::redisson_config::ssl::file_url;
use crate::TlsVerify;

struct Stores {
    dir: std::path::PathBuf,
    ca_pem: std::path::PathBuf,
    trust_p12: std::path::PathBuf,
    key_p12: std::path::PathBuf,
    jks: std::path::PathBuf,
}

impl Drop for Stores {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn stores() -> Stores {
    let dir = std::env::temp_dir().join(format!(
        "redisson-lock-ssl-unit-{}-{}",
        std::process::id(),
        fastrand::u32(..)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = rcgen::generate_simple_self_signed(vec!["test-ca".to_string()]).unwrap();
    let client = rcgen::generate_simple_self_signed(vec!["client".to_string()]).unwrap();
    let ca_pem = dir.join("ca.pem");
    std::fs::write(&ca_pem, ca.cert.pem()).unwrap();
    let mut trust = p12_keystore::KeyStore::new();
    trust.add_entry(
        "ca",
        p12_keystore::KeyStoreEntry::Certificate(p12_keystore::Certificate::from_der(ca.cert.der()).unwrap()),
    );
    let trust_p12 = dir.join("trust store.p12"); // a space: file: URLs write it %20
    std::fs::write(&trust_p12, trust.writer("changeit").write().unwrap()).unwrap();
    let mut keys = p12_keystore::KeyStore::new();
    keys.add_entry(
        "client",
        p12_keystore::KeyStoreEntry::PrivateKeyChain(p12_keystore::PrivateKeyChain::new(
            b"1".to_vec(),
            p12_keystore::PrivateKey::from_der(&client.signing_key.serialize_der()).unwrap(),
            [p12_keystore::Certificate::from_der(client.cert.der()).unwrap()],
        )),
    );
    let key_p12 = dir.join("client.p12");
    std::fs::write(&key_p12, keys.writer("changeit").write().unwrap()).unwrap();
    let jks = dir.join("old.jks");
    std::fs::write(&jks, [0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2, 0, 0, 0, 0]).unwrap();
    Stores {
        dir,
        ca_pem,
        trust_p12,
        key_p12,
        jks,
    }
}

fn url_of(p: &std::path::Path) -> String {
    format!("file:{}", p.display().to_string().replace(' ', "%20"))
}

const TLS_SINGLE: &str = "singleServerConfig:\n  address: rediss://127.0.0.1:6380\n";

fn tls_of(text: &str) -> crate::Tls {
    yaml(text)
        .tls()
        .cloned()
        .unwrap_or_else(|| panic!("no tls from:\n{text}"))
}

#[test]
fn verification_mode_and_endpoint_identification() {
    for (value, want) in [
        ("STRICT", TlsVerify::Strict),
        ("CA_ONLY", TlsVerify::CaOnly),
        ("NONE", TlsVerify::None),
    ] {
        // 4.x top level, 3.x server section
        let top = tls_of(&format!("sslVerificationMode: {value}\n{TLS_SINGLE}"));
        let section = tls_of(&format!("{TLS_SINGLE}  sslVerificationMode: {value}\n"));
        assert_eq!((top.verify(), section.verify()), (want, want), "{value}");
    }
    // Redisson < 3.41: sslEnableEndpointIdentification
    let off = tls_of(&format!("{TLS_SINGLE}  sslEnableEndpointIdentification: false\n"));
    assert_eq!(off.verify(), TlsVerify::None);
    let on = tls_of(&format!("{TLS_SINGLE}  sslEnableEndpointIdentification: true\n"));
    assert_eq!(on.verify(), TlsVerify::Strict);
    // both given: sslVerificationMode (the newer key) wins, whatever the order
    let both = tls_of(&format!(
        "{TLS_SINGLE}  sslVerificationMode: CA_ONLY\n  sslEnableEndpointIdentification: false\n"
    ));
    assert_eq!(both.verify(), TlsVerify::CaOnly);
    let m = refused(&format!("sslVerificationMode: ca_only\n{TLS_SINGLE}"));
    assert!(m.contains("sslVerificationMode") && m.contains("CA_ONLY"), "{m}");
}

#[test]
fn stores_by_url_with_passwords_and_types() {
    let st = stores();
    let t = tls_of(&format!(
        "sslTruststore: {}\nsslTruststorePassword: changeit\nsslKeystore: {}\nsslKeystorePassword: changeit\nsslKeystoreType: PKCS12\n{TLS_SINGLE}",
        url_of(&st.trust_p12),
        url_of(&st.key_p12)
    ));
    assert_eq!(t.root_certificate_count(), Some(1));
    assert!(t.has_client_identity());
    // the URL forms a JVM reads: file:/abs, file:///abs, file://localhost/abs
    for form in ["file:", "file://", "file://localhost"] {
        let u = format!("{form}{}", st.ca_pem.display());
        let t = tls_of(&format!("sslTruststore: {u}\n{TLS_SINGLE}"));
        assert_eq!(t.root_certificate_count(), Some(1), "{u}");
    }
    // a PEM trust store, keystore type PEM
    let t = tls_of(&format!(
        "{TLS_SINGLE}  sslTruststore: {}\n  sslKeystoreType: pem\n",
        url_of(&st.ca_pem)
    ));
    assert_eq!(t.root_certificate_count(), Some(1));
    assert!(!t.has_client_identity());
    // wrong password, missing password: refused naming the key
    let m = refused(&format!(
        "sslKeystore: {}\nsslKeystorePassword: nope\n{TLS_SINGLE}",
        url_of(&st.key_p12)
    ));
    assert!(m.contains("sslKeystore") && m.contains("password"), "{m}");
    let m = refused(&format!("sslTruststore: {}\n{TLS_SINGLE}", url_of(&st.trust_p12)));
    assert!(m.contains("sslTruststore") && m.contains("password"), "{m}");
    // JKS stores and types: refused with the conversion command
    let m = refused(&format!("sslTruststore: {}\n{TLS_SINGLE}", url_of(&st.jks)));
    assert!(
        m.contains("sslTruststore") && m.contains("-deststoretype pkcs12"),
        "{m}"
    );
    let m = refused(&format!("sslKeystoreType: JKS\n{TLS_SINGLE}"));
    assert!(m.contains("sslKeystoreType") && m.contains("PKCS#12"), "{m}");
    assert!(refused(&format!("sslKeystoreType: BKS\n{TLS_SINGLE}")).contains("sslKeystoreType"));
    // a missing file names the key
    let m = refused(&format!("sslTruststore: file:/no/such/ts.p12\n{TLS_SINGLE}"));
    assert!(
        m.contains("sslTruststore") && m.contains("/no/such/ts.p12"),
        "{m}"
    );
}

#[test]
fn store_urls_that_redisson_cannot_read_either_are_refused() {
    for (u, says) in [
        ("/etc/ts.p12", "not a URL"),
        ("classpath:ts.p12", "only file:"),
        ("https://example.com/ts.p12", "only file:"),
        ("file://otherhost/ts.p12", "another host"),
    ] {
        let m = refused(&format!("sslTruststore: {u}\n{TLS_SINGLE}"));
        assert!(m.contains("sslTruststore") && m.contains(says), "{u}: {m}");
    }
    // relative file: URLs are relative to the working directory, as in the JVM
    assert_eq!(
        file_url("k", "file:certs/ts.p12").unwrap(),
        std::path::PathBuf::from("certs/ts.p12")
    );
    assert_eq!(
        file_url("k", "file:/a%20b/c%2Bd.p12").unwrap(),
        std::path::PathBuf::from("/a b/c+d.p12")
    );
}

#[test]
fn none_with_a_trust_store_still_checks_the_chain() {
    let st = stores();
    let t = tls_of(&format!(
        "sslVerificationMode: NONE\nsslTruststore: {}\n{TLS_SINGLE}",
        url_of(&st.ca_pem)
    ));
    assert_eq!(
        t.verify(),
        TlsVerify::CaOnly,
        "Redisson: NONE + truststore = CA_ONLY"
    );
    let t = tls_of(&format!("sslVerificationMode: NONE\n{TLS_SINGLE}"));
    assert_eq!(t.verify(), TlsVerify::None);
}

#[test]
fn the_top_level_wins_over_the_server_section_as_in_redisson_4() {
    let st = stores();
    // top-level store wins; the section's mode counts where the top level keeps STRICT
    let t = tls_of(&format!(
        "sslTruststore: {}\nsslVerificationMode: STRICT\nsingleServerConfig:\n  address: rediss://h:1\n  \
         sslTruststore: file:/no/such/file\n  sslVerificationMode: CA_ONLY\n",
        url_of(&st.ca_pem)
    ));
    assert_eq!(t.root_certificate_count(), Some(1));
    assert_eq!(t.verify(), TlsVerify::CaOnly);
    let t = tls_of(
        "sslVerificationMode: NONE\nsingleServerConfig:\n  address: rediss://h:1\n  sslVerificationMode: CA_ONLY\n",
    );
    assert_eq!(t.verify(), TlsVerify::None);
    // only in the section (Redisson 3.x): used
    let t = tls_of(&format!(
        "singleServerConfig:\n  address: rediss://h:1\n  sslTruststore: {}\n  sslTruststorePassword: changeit\n",
        url_of(&st.trust_p12)
    ));
    assert_eq!(t.root_certificate_count(), Some(1));
}

#[test]
fn provider_protocols_and_ciphers() {
    for p in ["JDK", "OPENSSL"] {
        tls_of(&format!("sslProvider: {p}\n{TLS_SINGLE}"));
    }
    assert!(refused(&format!("sslProvider: BORINGSSL\n{TLS_SINGLE}")).contains("sslProvider"));
    tls_of(&format!("sslProtocols: [TLSv1.2, TLSv1.3]\n{TLS_SINGLE}"));
    tls_of(&format!("{TLS_SINGLE}  sslProtocols:\n    - TLSv1.3\n"));
    tls_of(&format!("sslProtocols: TLSv1.2\n{TLS_SINGLE}"));
    let m = refused(&format!("sslProtocols: [TLSv1, TLSv1.1]\n{TLS_SINGLE}"));
    assert!(m.contains("sslProtocols") && m.contains("1.2 and 1.3"), "{m}");
    tls_of(&format!("sslCiphers: [TLS_AES_128_GCM_SHA256]\n{TLS_SINGLE}"));
    // Java-only objects Redisson skips in files
    tls_of(&format!("sslTrustManagerFactory: null\n{TLS_SINGLE}"));
}

#[test]
fn ssl_keys_do_nothing_for_plain_addresses() {
    let c = yaml(&format!(
        "sslVerificationMode: NONE\nsslTruststore: file:/no/such\n{SINGLE}"
    ));
    assert!(c.tls().is_none(), "redis:// ignores ssl settings, as in Redisson");
    // rediss:// without ssl keys: system roots, strict (no Tls needed)
    assert!(yaml(TLS_SINGLE).tls().is_none());
    // sentinels: any rediss:// address takes the ssl keys
    let c = yaml(
        "sslVerificationMode: CA_ONLY\nsentinelServersConfig:\n  masterName: m\n  sentinelAddresses: [rediss://h:26379]\n",
    );
    assert_eq!(c.tls().unwrap().verify(), TlsVerify::CaOnly);
    let c = yaml("sslVerificationMode: CA_ONLY\nclusterServersConfig:\n  nodeAddresses: [rediss://h:7000]\n");
    assert_eq!(c.tls().unwrap().verify(), TlsVerify::CaOnly);
}
