//! A client built from a Redisson YAML / JSON file, against real redis-server processes: the
//! file's login, database and lock settings are the ones in effect.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::topology::{Topology, MASTER};
use common::RedisServer;
use redisson_lock::{Client, Connection, Error, RedissonConfig};

fn write_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("redisson-config-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

async fn pttl(server: &RedisServer, db: i64, key: &str) -> i64 {
    let mut c = redis::Client::open(format!("redis://:pw@127.0.0.1:{}/{db}", server.port))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    redis::cmd("PTTL").arg(key).query_async(&mut c).await.unwrap()
}

async fn pttl_db(port: u16, db: i64, key: &str) -> i64 {
    let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}/{db}"))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    redis::cmd("PTTL").arg(key).query_async(&mut c).await.unwrap()
}

#[tokio::test]
async fn single_server_yaml_file_sets_login_database_and_watchdog() {
    let server = RedisServer::start_with(&["--requirepass", "pw"]);
    let path = write_file(
        "single.yaml",
        &format!(
            "# the file a Java service gives Config.fromYAML\n\
             lockWatchdogTimeout: 6000\n\
             codec: !<org.redisson.codec.Kryo5Codec> {{}}\n\
             nameMapper: !<org.redisson.config.DefaultNameMapper> {{}}\n\
             singleServerConfig:\n  address: \"redis://127.0.0.1:${{RC_IT_PORT:-{}}}\"\n  password: pw\n  database: 3\n  timeout: 2000\n  connectionPoolSize: 8\n",
            server.port
        ),
    );
    let client = Client::from_redisson_config(&path).await.unwrap();
    assert_eq!(client.config().lock_watchdog_timeout(), Duration::from_secs(6));
    let guard = client.lock("rc:single").unwrap().lock().await.unwrap();
    // the lock is in database 3 with the watchdog's TTL from the file
    let ttl = pttl(&server, 3, "rc:single").await;
    assert!(ttl > 4000 && ttl <= 6000, "PTTL {ttl}");
    assert_eq!(pttl(&server, 0, "rc:single").await, -2, "not in database 0");
    guard.unlock().await.unwrap();
    assert_eq!(pttl(&server, 3, "rc:single").await, -2);
}

#[tokio::test]
async fn json_file_and_wrong_password_from_the_file() {
    let server = RedisServer::start_with(&["--requirepass", "pw"]);
    let good = write_file(
        "single.json",
        &format!(
            r#"{{"lockWatchdogTimeout": 4500, "singleServerConfig": {{"address": "redis://127.0.0.1:{}", "password": "pw"}}}}"#,
            server.port
        ),
    );
    let client = RedissonConfig::from_path(&good).unwrap().connect().await.unwrap();
    let guard = client.lock("rc:json").unwrap().lock().await.unwrap();
    let ttl = pttl(&server, 0, "rc:json").await;
    assert!(ttl > 3000 && ttl <= 4500, "PTTL {ttl}");
    guard.unlock().await.unwrap();

    let bad = write_file(
        "bad-password.json",
        &format!(
            r#"{{"singleServerConfig": {{"address": "redis://127.0.0.1:{}", "password": "nope", "connectTimeout": 2000, "retryAttempts": 0}}}}"#,
            server.port
        ),
    );
    match Client::from_redisson_config(&bad).await {
        Err(e @ Error::Connect { .. }) => {
            assert!(!e.to_string().contains("nope"), "never the password: {e}")
        }
        other => panic!("expected an auth failure, got {other:?}"),
    }
}

#[tokio::test]
async fn refused_file_never_connects() {
    let path = write_file(
        "custom-mapper.yaml",
        "nameMapper: !<com.acme.TenantNameMapper> {}\nsingleServerConfig:\n  address: redis://127.0.0.1:1\n",
    );
    match Client::from_redisson_config(&path).await {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("nameMapper"), "{m}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[tokio::test]
async fn sentinel_yaml_file_follows_the_sentinels() {
    let t = Topology::start().await;
    let addresses: Vec<String> = t
        .sentinels
        .iter()
        .map(|s| format!("  - \"redis://127.0.0.1:{}\"\n", s.port))
        .collect();
    let path = write_file(
        "sentinel.yaml",
        &format!(
            "lockWatchdogTimeout: 9000\nslavesSyncTimeout: 2000\nsentinelServersConfig:\n  sentinelAddresses:\n{}  masterName: \"{MASTER}\"\n  database: 1\n  scanInterval: 500\n  checkSentinelsList: false\n  readMode: \"MASTER\"\n",
            addresses.concat()
        ),
    );
    let parsed = RedissonConfig::from_path(&path).unwrap();
    assert_eq!(parsed.config().lock_watchdog_timeout(), Duration::from_secs(9));
    let client = parsed.connect().await.unwrap();
    match client.connection() {
        Connection::Sentinel(s) => assert!(
            s.master_addr().ends_with(&format!(":{}", t.nodes[0].port)),
            "master {}",
            s.master_addr()
        ),
        other => panic!("not a sentinel connection: {other:?}"),
    }
    let guard = client.lock("rc:sentinel").unwrap().lock().await.unwrap();
    // in the file's database on the master
    let ttl = pttl_db(t.nodes[0].port, 1, "rc:sentinel").await;
    assert!(ttl > 0 && ttl <= 9000, "master db 1 PTTL {ttl}");
    // Redisson's checkLockSyncedSlaves default (ReplicaSync::Required): the acquisition reached
    // a replica before it returned
    let mut on_replicas = 0;
    for replica in &t.nodes[1..] {
        if pttl_db(replica.port, 1, "rc:sentinel").await > 0 {
            on_replicas += 1;
        }
    }
    assert!(on_replicas >= 1, "no replica had the lock when lock() returned");
    guard.unlock().await.unwrap();
}
