//! TLS (feature `tls-rustls`) against real redis-servers with a TLS port: locks and wake-ups
//! over `rediss://`, each verification mode against a certificate it must accept and one it must
//! refuse, client certificates (`tls-auth-clients yes`), PEM and PKCS#12 stores, Redisson config
//! files with `ssl*` keys at the top level (4.x) and in the server section (3.x), a sentinel set
//! whose sentinels and master speak TLS, and a TLS cluster.

mod common;
#[path = "common/tls.rs"]
mod pki;

use std::time::{Duration, Instant};

use common::RedisServer;
use pki::{file_url, Pki, STORE_PASSWORD};
use redisson_lock::{Client, Config, Error, RedissonConfig, Tls, TlsVerify};

fn rediss(port: u16) -> String {
    format!("rediss://127.0.0.1:{port}/")
}

/// Short timeouts; waiters learn of an unlock only from its message (the batched check for
/// deleted locks and polling wait a minute), so a quick wake-up proves pub/sub over TLS.
fn quick() -> Config {
    Config::default()
        .with_connect_timeout(Duration::from_secs(3))
        .with_command_timeout(Duration::from_secs(2))
        .with_poll_interval(Duration::from_secs(60))
}

async fn connect(url: &str, tls: Tls) -> redisson_lock::Result<Client> {
    Client::builder().url(url).tls(tls).config(quick()).build().await
}

fn ca_tls(pki: &Pki) -> Tls {
    Tls::new().truststore_file(&pki.ca, None).unwrap()
}

/// Reads the lock hash over the plain port: what Redisson would see.
async fn holders(s: &RedisServer, key: &str) -> Vec<String> {
    let mut c = s.conn().await;
    redis::cmd("HKEYS").arg(key).query_async(&mut c).await.unwrap()
}

#[tokio::test]
async fn locks_and_wake_ups_work_over_tls() {
    let Some(pki) = Pki::for_test("locks_and_wake_ups_work_over_tls") else {
        return;
    };
    let (s, port) = pki.start_server(&pki.server, "no");
    let a = connect(&rediss(port), ca_tls(&pki))
        .await
        .expect("TLS with the test CA");
    let b = connect(&rediss(port), ca_tls(&pki)).await.unwrap();
    let g = a.lock("tls:order:1").unwrap().lock().await.unwrap();
    let fields = holders(&s, "tls:order:1").await;
    assert_eq!(fields.len(), 1);
    assert!(fields[0].starts_with(a.id()), "{fields:?}");
    // a waiter on the other client sleeps on the TLS pub/sub connection and is woken at unlock
    let lock_b = b.lock("tls:order:1").unwrap();
    let waiter = tokio::spawn(async move {
        let g = lock_b.lock().await.unwrap();
        let at = Instant::now();
        g.unlock().await.unwrap();
        at
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished(), "the lock is held: the waiter waits");
    let released = Instant::now();
    g.unlock().await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the unlock message reached the waiter over TLS")
        .unwrap();
    assert!(
        got.duration_since(released) < Duration::from_secs(2),
        "woken by the message, not by polling the 30 s TTL"
    );
    assert!(holders(&s, "tls:order:1").await.is_empty());
}

#[tokio::test]
async fn strict_checks_the_host_name_and_ca_only_does_not() {
    let Some(pki) = Pki::for_test("strict_checks_the_host_name_and_ca_only_does_not") else {
        return;
    };
    let (_s, port) = pki.start_server(&pki.wrong_host, "no");
    let strict = connect(&rediss(port), ca_tls(&pki)).await;
    assert!(
        strict.is_err(),
        "a certificate for other.example must not pass for 127.0.0.1"
    );
    let ca_only = connect(&rediss(port), ca_tls(&pki).with_verify(TlsVerify::CaOnly))
        .await
        .expect("CA_ONLY: the chain is trusted, the name is not checked");
    let g = ca_only.lock("tls:ca-only").unwrap().lock().await.unwrap();
    g.unlock().await.unwrap();
}

#[tokio::test]
async fn an_unknown_ca_passes_only_without_verification() {
    let Some(pki) = Pki::for_test("an_unknown_ca_passes_only_without_verification") else {
        return;
    };
    let (_s, port) = pki.start_server(&pki.foreign, "no");
    for verify in [TlsVerify::Strict, TlsVerify::CaOnly] {
        let r = connect(&rediss(port), ca_tls(&pki).with_verify(verify)).await;
        assert!(r.is_err(), "{verify:?} accepted a certificate of an unknown CA");
    }
    // the system's roots do not know the test CA either
    assert!(connect(&rediss(port), Tls::new()).await.is_err());
    let none = connect(&rediss(port), Tls::new().with_verify(TlsVerify::None))
        .await
        .expect("NONE accepts any certificate");
    let g = none.lock("tls:none").unwrap().lock().await.unwrap();
    g.unlock().await.unwrap();
}

#[tokio::test]
async fn client_certificates_from_pem_or_a_java_key_store() {
    let Some(pki) = Pki::for_test("client_certificates_from_pem_or_a_java_key_store") else {
        return;
    };
    let (_s, port) = pki.start_server(&pki.server, "yes");
    assert!(
        connect(&rediss(port), ca_tls(&pki)).await.is_err(),
        "the server requires a client certificate"
    );
    let pem = ca_tls(&pki)
        .client_identity_pem(
            std::fs::read(&pki.client.cert).unwrap(),
            std::fs::read(&pki.client.key).unwrap(),
        )
        .unwrap();
    let p12 = Tls::new()
        .truststore_file(&pki.truststore_p12, Some(STORE_PASSWORD))
        .unwrap()
        .keystore_file(&pki.keystore_p12, Some(STORE_PASSWORD))
        .unwrap();
    assert_eq!(p12.root_certificate_count(), Some(1));
    assert!(p12.has_client_identity());
    for (label, tls) in [("pem", pem), ("pkcs12", p12)] {
        let c = connect(&rediss(port), tls)
            .await
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let g = c
            .lock(&format!("tls:mtls:{label}"))
            .unwrap()
            .lock()
            .await
            .unwrap();
        g.unlock().await.unwrap();
    }
    let wrong = Tls::new().keystore_file(&pki.keystore_p12, Some("not-the-password"));
    assert!(matches!(wrong, Err(Error::InvalidArgument(_))), "{wrong:?}");
}

#[tokio::test]
async fn tls_settings_for_a_plain_address_are_refused() {
    let s = RedisServer::start();
    let e = connect(&s.url(), Tls::new()).await.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("rediss://")),
        "{e}"
    );
}

/// One Redisson file as a Java service has it: stores by `file:` URL, passwords, the mode.
#[tokio::test]
async fn redisson_files_with_ssl_keys_connect() {
    let Some(pki) = Pki::for_test("redisson_files_with_ssl_keys_connect") else {
        return;
    };
    let (_s, port) = pki.start_server(&pki.wrong_host, "yes");
    let dir = &pki.dir;
    // Redisson 4.x: ssl* at the top level
    let v4 = format!(
        "sslTruststore: {}\nsslTruststorePassword: {STORE_PASSWORD}\nsslKeystore: {}\n\
         sslKeystorePassword: {STORE_PASSWORD}\nsslKeystoreType: PKCS12\nsslVerificationMode: CA_ONLY\n\
         sslProtocols: [TLSv1.3, TLSv1.2]\nsingleServerConfig:\n  address: rediss://127.0.0.1:{port}\n",
        file_url(&pki.truststore_p12),
        file_url(&pki.keystore_p12),
    );
    // Redisson 3.x (3.41+ spelling of the mode is sslVerificationMode; older files say
    // sslEnableEndpointIdentification: false, which with a trust store checks the chain only)
    let v3 = format!(
        "singleServerConfig:\n  address: rediss://127.0.0.1:{port}\n  sslTruststore: file://{}\n  \
         sslTruststorePassword: {STORE_PASSWORD}\n  sslKeystore: {}\n  sslKeystorePassword: {STORE_PASSWORD}\n  \
         sslEnableEndpointIdentification: false\n",
        pki.truststore_p12.display(),
        file_url(&pki.keystore_p12),
    );
    for (label, text) in [("4.x", v4), ("3.x", v3)] {
        let path = dir.join(format!("redisson-{label}.yaml"));
        std::fs::write(&path, &text).unwrap();
        let parsed = RedissonConfig::from_path(&path).unwrap_or_else(|e| panic!("{label}: {e}"));
        let tls = parsed.tls().expect("rediss:// with ssl keys");
        assert_eq!(tls.verify(), TlsVerify::CaOnly, "{label}");
        assert!(tls.has_client_identity(), "{label}");
        let c = parsed.connect().await.unwrap_or_else(|e| panic!("{label}: {e}"));
        let g = c.lock("tls:from-file").unwrap().lock().await.unwrap();
        g.unlock().await.unwrap();
    }
    // STRICT (the default) refuses the certificate for another host name
    let strict = format!(
        "sslTruststore: {}\nsslTruststorePassword: {STORE_PASSWORD}\nsslKeystore: {}\nsslKeystorePassword: {STORE_PASSWORD}\n\
         singleServerConfig:\n  address: rediss://127.0.0.1:{port}\n",
        file_url(&pki.truststore_p12),
        file_url(&pki.keystore_p12),
    );
    let parsed = RedissonConfig::from_yaml_str(&strict).unwrap();
    assert!(parsed.connect().await.is_err());
}

/// Sentinels and master over TLS: the sentinels' `rediss://` scheme carries over to the
/// master (as in Redisson), with the same trust store and client certificate.
#[tokio::test]
async fn a_sentinel_set_over_tls() {
    let Some(pki) = Pki::for_test("a_sentinel_set_over_tls") else {
        return;
    };
    let (master, master_tls) = pki.start_server(&pki.server, "yes");
    let sentinel_tls = pki::free_port();
    let mut conf = format!(
        "tls-port {sentinel_tls}\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\n\
         tls-auth-clients yes\ntls-replication yes\n",
        pki.server.cert.display(),
        pki.server.key.display(),
        pki.ca.display()
    );
    // the sentinel reaches the master over TLS too, with its own certificate as the client one
    conf.push_str(&format!(
        "tls-client-cert-file {}\ntls-client-key-file {}\n",
        pki.client.cert.display(),
        pki.client.key.display()
    ));
    let sentinel = RedisServer::start_sentinel_with(master_tls, "tlsmaster", 1, &conf);
    let tls = Tls::new()
        .truststore_file(&pki.truststore_p12, Some(STORE_PASSWORD))
        .unwrap()
        .keystore_file(&pki.keystore_p12, Some(STORE_PASSWORD))
        .unwrap();
    let client = Client::builder()
        .sentinel([rediss(sentinel_tls)], "tlsmaster")
        .tls(tls)
        .config(quick())
        .build()
        .await
        .expect("sentinel over TLS, master over TLS");
    match client.connection() {
        redisson_lock::Connection::Sentinel(s) => {
            assert!(
                s.master_addr().contains(&master_tls.to_string()),
                "the master's TLS port: {}",
                s.master_addr()
            )
        }
        other => panic!("{other:?}"),
    }
    let g = client.lock("tls:sentinel").unwrap().lock().await.unwrap();
    assert_eq!(holders(&master, "tls:sentinel").await.len(), 1);
    g.unlock().await.unwrap();
    drop(sentinel);
}

/// A cluster whose nodes (and bus) speak TLS: seeds by `rediss://`, the slots' nodes reached over
/// TLS with the same settings, unlock messages through the cluster pub/sub connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_over_tls() {
    let Some(pki) = Pki::for_test("a_cluster_over_tls") else {
        return;
    };
    let ports: Vec<u16> = (0..3).map(|_| pki::free_port()).collect();
    let cluster = common::cluster::Cluster::start_with(3, 0, |i| {
        let mut a = pki.server_args(ports[i], &pki.server, "yes");
        a.extend(["--tls-cluster", "yes", "--tls-replication", "yes"].map(String::from));
        a.extend(
            [
                "--tls-client-cert-file",
                &pki.client.cert.display().to_string(),
                "--tls-client-key-file",
                &pki.client.key.display().to_string(),
            ]
            .map(|s| s.to_string()),
        );
        a
    })
    .await;
    let tls = || {
        Tls::new()
            .truststore_file(&pki.truststore_p12, Some(STORE_PASSWORD))
            .unwrap()
            .keystore_file(&pki.keystore_p12, Some(STORE_PASSWORD))
            .unwrap()
    };
    let seeds: Vec<String> = ports.iter().map(|p| rediss(*p)).collect();
    let build = |seeds: Vec<String>| {
        Client::builder()
            .cluster(seeds)
            .tls(tls())
            .config(quick())
            .build()
    };
    let a = build(seeds.clone()).await.expect("cluster over TLS");
    let b = build(seeds).await.unwrap();
    // keys on all three masters
    for k in 0..6 {
        let name = format!("tls:cluster:{k}");
        let g = a.lock(&name).unwrap().lock().await.unwrap();
        assert!(b.lock(&name).unwrap().try_lock().await.unwrap().is_none());
        let lock_b = b.lock(&name).unwrap();
        let waiter = tokio::spawn(async move { lock_b.lock().await.unwrap().unlock().await.unwrap() });
        tokio::time::sleep(Duration::from_millis(150)).await;
        g.unlock().await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken over the TLS cluster pub/sub")
            .unwrap();
    }
    // a plain seed with tls settings is refused
    let e = build(vec![cluster.urls()[0].clone()]).await.unwrap_err();
    assert!(e.to_string().contains("rediss://"), "{e}");
}
