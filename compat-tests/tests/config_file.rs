//! One Redisson YAML file configures both sides: Java Redisson loads it with `Config.fromYAML`
//! (the harness' `--config`), redisson-lock with `RedissonConfig::from_path`. The file's
//! `lockWatchdogTimeout` (5 s, not the harness' 30 s) is in effect on both sides, a Java holder
//! blocks a Rust `try_lock`, and a Rust unlock wakes a Java waiter at once (pub/sub, not TTL).
//! Real redis-server processes; a sentinel-shaped file too (1 master, 2 replicas, 3 sentinels),
//! and TLS files (a trust store made by Java's keytool, a client key store, mutual TLS) in
//! Redisson 4.x's spelling (top-level `ssl*`) and 3.x's (in the server section).

// Shared with the crate's own tests; not ours to format (rustfmt would follow the path).
#[rustfmt::skip]
#[path = "../../tests/common/mod.rs"]
mod common;
#[rustfmt::skip]
#[path = "../../tests/common/tls.rs"]
mod pki;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::topology::{Topology, MASTER};
use common::RedisServer;
use redisson_lock::{Client, RedissonConfig};
use redisson_lock_compat_tests::{crate_dir, on_path, Harness};

/// The file's watchdog; the harness is started with 30 s, which must not win.
const WATCHDOG_MS: i64 = 5_000;

/// The jar for `version`, or `None` (with a loud message) when Java or Maven is missing outside CI.
fn jar(version: &str) -> Option<PathBuf> {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if !(on_path("java") && on_path("mvn")) {
        assert!(
            !ci,
            "CI: java and mvn are required for the config-file interop test"
        );
        eprintln!("config-file interop: SKIPPED (no java/mvn on PATH; set CI=true to make this a failure)");
        return None;
    }
    let out = Command::new(crate_dir().join("build-harness.sh"))
        .arg(version)
        .output()
        .expect("run build-harness.sh");
    assert!(
        out.status.success(),
        "build-harness.sh {version} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).trim().into())
}

fn write_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("compat-config-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Both sides from `file`: Java holds, Rust is refused; Rust holds, Java waits and is woken.
async fn both_sides_share(jar: &Path, file: &Path, label: &str) {
    let java = Harness::start_with_config(jar, file, 30_000, Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{label}: Redisson from {}: {e}", file.display()));
    let rust: Client = RedissonConfig::from_path(file).unwrap().connect().await.unwrap();
    assert_eq!(
        rust.config().lock_watchdog_timeout().as_millis() as i64,
        WATCHDOG_MS
    );
    let limit = Duration::from_secs(10);

    // a Java holder (watchdog mode) blocks a Rust try_lock; its TTL is the file's watchdog
    let name = format!("cfg:{label}:java-holds");
    java.call("j1", "lock", &[&name], limit)
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    let ttl = java
        .call("j1", "remainTTL", &[&name], limit)
        .await
        .unwrap()
        .int()
        .unwrap();
    assert!(
        ttl > 0 && ttl <= WATCHDOG_MS,
        "{label}: Java's lock TTL {ttl} ms is not the file's watchdog"
    );
    assert!(
        rust.lock(&name).unwrap().try_lock().await.unwrap().is_none(),
        "{label}: Rust got a lock Java holds"
    );
    java.call("j1", "unlock", &[&name], limit)
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    let g = rust.lock(&name).unwrap().try_lock().await.unwrap();
    assert!(g.is_some(), "{label}: Rust cannot take the lock Java released");
    g.unwrap().unlock().await.unwrap();

    // a Rust holder (TTL from the file) and a Java waiter woken by the Rust unlock
    let name = format!("cfg:{label}:rust-holds");
    let guard = rust.lock(&name).unwrap().lock().await.unwrap();
    let ttl = java
        .call("j1", "remainTTL", &[&name], limit)
        .await
        .unwrap()
        .int()
        .unwrap();
    assert!(
        ttl > 0 && ttl <= WATCHDOG_MS,
        "{label}: Rust's lock TTL {ttl} ms is not the file's watchdog"
    );
    let mut waiter = java.send("j2", "lock", &[&name]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!waiter.is_done(), "{label}: Java got a lock Rust holds");
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let woke = waiter.wait(limit).await.unwrap();
    let took = released.elapsed();
    woke.into_ok().unwrap();
    // the holder's TTL was up to 5 s: a waiter that waited for it would take seconds
    assert!(
        took < Duration::from_millis(1_500),
        "{label}: the Java waiter took {took:?} after the Rust unlock"
    );
    java.call("j2", "unlock", &[&name], limit)
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    java.exit(limit).await.unwrap();
    rust.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_single_server_yaml_configures_java_and_rust() {
    let Some(jar) = jar("4.7.0") else { return };
    let server = RedisServer::start_with(&["--requirepass", "s3cret"]);
    let file = write_file(
        "single.yaml",
        &format!(
            "# one file for the Java service and the Rust service\n\
             lockWatchdogTimeout: {WATCHDOG_MS}\n\
             threads: 4\n\
             nettyThreads: 8\n\
             codec: !<org.redisson.codec.Kryo5Codec> {{}}\n\
             singleServerConfig:\n  address: \"redis://127.0.0.1:{}\"\n  password: \"${{COMPAT_CFG_PASSWORD:-s3cret}}\"\n  database: 2\n  connectionPoolSize: 8\n  connectionMinimumIdleSize: 1\n  subscriptionConnectionPoolSize: 2\n  subscriptionConnectionMinimumIdleSize: 1\n",
            server.port
        ),
    );
    both_sides_share(&jar, &file, "single").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sentinel_yaml_configures_java_and_rust() {
    let Some(jar) = jar("4.7.0") else { return };
    let t = Topology::start().await;
    let addresses: String = t
        .sentinels
        .iter()
        .map(|s| format!("  - \"redis://127.0.0.1:{}\"\n", s.port))
        .collect();
    let file = write_file(
        "sentinel.yaml",
        &format!(
            "lockWatchdogTimeout: {WATCHDOG_MS}\n\
             threads: 4\n\
             nettyThreads: 8\n\
             sentinelServersConfig:\n  sentinelAddresses:\n{addresses}  masterName: \"{MASTER}\"\n  scanInterval: 500\n  readMode: \"MASTER\"\n  masterConnectionPoolSize: 8\n  masterConnectionMinimumIdleSize: 1\n  slaveConnectionPoolSize: 8\n  slaveConnectionMinimumIdleSize: 1\n  subscriptionConnectionPoolSize: 2\n  subscriptionConnectionMinimumIdleSize: 1\n"
        ),
    );
    both_sides_share(&jar, &file, "sentinel").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_single_server_json_configures_java_and_rust() {
    let Some(jar) = jar("4.7.0") else { return };
    let server = RedisServer::start();
    // Redisson 4.x has no fromJSON: the harness (like a service) reads JSON with fromYAML
    let file = write_file(
        "single.json",
        &format!(
            r#"{{"lockWatchdogTimeout": {WATCHDOG_MS}, "threads": 4, "nettyThreads": 8,
  "singleServerConfig": {{"address": "redis://127.0.0.1:{}", "connectionPoolSize": 8,
    "connectionMinimumIdleSize": 1, "subscriptionConnectionPoolSize": 2, "subscriptionConnectionMinimumIdleSize": 1}}}}
"#,
            server.port
        ),
    );
    both_sides_share(&jar, &file, "json").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_cluster_yaml_configures_java_and_rust() {
    let Some(jar) = jar("4.7.0") else { return };
    let cluster = common::cluster::Cluster::start(3, 1).await;
    let addresses: String = cluster
        .urls()
        .iter()
        .map(|u| format!("  - \"{}\"\n", u.trim_end_matches('/')))
        .collect();
    let file = write_file(
        "cluster.yaml",
        &format!(
            "lockWatchdogTimeout: {WATCHDOG_MS}\n\
             threads: 4\n\
             nettyThreads: 8\n\
             clusterServersConfig:\n  nodeAddresses:\n{addresses}  readMode: \"MASTER\"\n  scanInterval: 1000\n  masterConnectionPoolSize: 8\n  masterConnectionMinimumIdleSize: 1\n  slaveConnectionPoolSize: 2\n  slaveConnectionMinimumIdleSize: 1\n  subscriptionConnectionPoolSize: 4\n  subscriptionConnectionMinimumIdleSize: 1\n"
        ),
    );
    both_sides_share(&jar, &file, "cluster").await;
}

/// A Java trust store as a Java team makes it: keytool imports the CA into PKCS#12.
fn keytool_truststore(pki: &pki::Pki) -> PathBuf {
    let out = pki.dir.join("keytool-truststore.p12");
    let status = Command::new("keytool")
        .args([
            "-importcert",
            "-noprompt",
            "-alias",
            "test-ca",
            "-storetype",
            "PKCS12",
        ])
        .arg("-file")
        .arg(&pki.ca)
        .arg("-keystore")
        .arg(&out)
        .args(["-storepass", pki::STORE_PASSWORD])
        .output()
        .expect("keytool (from the JDK) runs");
    assert!(
        status.status.success(),
        "keytool failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    out
}

/// Mutual TLS from one file: Redisson and the crate read the same keytool trust store and client
/// key store, checked strictly against a certificate for 127.0.0.1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tls_yaml_configures_java_and_rust() {
    for (version, top_level) in [("4.7.0", true), ("3.52.0", false)] {
        let Some(jar) = jar(version) else { return };
        let pki = pki::Pki::new();
        let (_server, tls_port) = pki.start_server(&pki.server, "yes");
        let truststore = keytool_truststore(&pki);
        let ssl = format!(
            "sslTruststore: \"{}\"\nsslTruststorePassword: \"{pw}\"\nsslKeystore: \"{}\"\nsslKeystorePassword: \"{pw}\"\nsslVerificationMode: \"STRICT\"\n",
            pki::file_url(&truststore),
            pki::file_url(&pki.keystore_p12),
            pw = pki::STORE_PASSWORD,
        );
        let indented: String = ssl.lines().map(|l| format!("  {l}\n")).collect();
        let (top, section) = if top_level {
            (ssl, String::new())
        } else {
            (String::new(), indented)
        };
        let file = write_file(
            &format!("tls-{version}.yaml"),
            &format!(
                "lockWatchdogTimeout: {WATCHDOG_MS}\nthreads: 4\nnettyThreads: 8\n{top}\
                 singleServerConfig:\n  address: \"rediss://127.0.0.1:{tls_port}\"\n  connectionPoolSize: 8\n  \
                 connectionMinimumIdleSize: 1\n  subscriptionConnectionPoolSize: 2\n  subscriptionConnectionMinimumIdleSize: 1\n{section}"
            ),
        );
        let parsed = RedissonConfig::from_path(&file).unwrap();
        let tls = parsed.tls().expect("the file's ssl keys");
        assert_eq!(tls.root_certificate_count(), Some(1), "the keytool store's CA");
        assert!(tls.has_client_identity());
        both_sides_share(&jar, &file, &format!("tls-{version}")).await;
    }
}
