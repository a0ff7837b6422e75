use std::time::Duration;

use super::values::iso_duration;
use super::*;
use crate::config::{PublishMode, ReplicaSync};

fn yaml(text: &str) -> RedissonConfig {
    match RedissonConfig::loader().env(|_| None).from_yaml_str(text) {
        Ok(c) => c,
        Err(e) => panic!("{e}\n---\n{text}"),
    }
}

fn json(text: &str) -> RedissonConfig {
    match RedissonConfig::loader().env(|_| None).from_json_str(text) {
        Ok(c) => c,
        Err(e) => panic!("{e}\n---\n{text}"),
    }
}

fn refused(text: &str) -> String {
    match RedissonConfig::loader().env(|_| None).from_yaml_str(text) {
        Err(Error::InvalidArgument(m)) => m,
        Err(e) => panic!("expected InvalidArgument, got {e:?}"),
        Ok(c) => panic!("expected a refusal, got {c:?}"),
    }
}

fn url(c: &RedissonConfig) -> &str {
    match c.servers() {
        RedissonServers::Single { url } => url,
        other => panic!("not single: {other:?}"),
    }
}

const SINGLE: &str = "singleServerConfig:\n  address: \"redis://127.0.0.1:6379\"\n";

#[test]
fn defaults_are_redissons_and_single_server_never_waits_for_replicas() {
    let c = yaml(SINGLE);
    let d = Config::default();
    assert_eq!(c.config.lock_watchdog_timeout, d.lock_watchdog_timeout);
    assert_eq!(c.config.watchdog_batch_size, 100);
    assert_eq!(c.config.fair_lock_wait_timeout, Duration::from_secs(300));
    assert_eq!(c.config.command_timeout, Duration::from_secs(3));
    assert_eq!(c.config.retry_attempts, 4);
    assert_eq!(c.config.replica_sync, ReplicaSync::Off);
    assert_eq!(c.config.publish_mode, PublishMode::Auto);
    assert_eq!(url(&c), "redis://127.0.0.1:6379");
    assert_eq!(c.config.name_mapper.map("x"), "x");
}

#[test]
fn top_level_lock_settings_yaml_and_json() {
    let y = yaml(&format!(
        "lockWatchdogTimeout: 12000\nlockWatchdogBatchSize: 7\nfairLockWaitTimeout: 60000\nslavesSyncTimeout: 250\n{SINGLE}"
    ));
    let j = json(
        r#"{"lockWatchdogTimeout": 12000, "lockWatchdogBatchSize": 7, "fairLockWaitTimeout": 60000,
            "slavesSyncTimeout": 250, "singleServerConfig": {"address": "redis://127.0.0.1:6379"}}"#,
    );
    for c in [y, j] {
        assert_eq!(c.config.lock_watchdog_timeout, Duration::from_millis(12_000));
        assert_eq!(c.config.watchdog_batch_size, 7);
        assert_eq!(c.config.fair_lock_wait_timeout, Duration::from_millis(60_000));
        assert_eq!(c.config.replica_sync_timeout, Duration::from_millis(250));
    }
}

#[test]
fn single_server_settings_yaml_and_json() {
    let y = yaml(
        "singleServerConfig:\n  address: redis://10.0.0.1:6380\n  username: app\n  password: 's3:cr@t'\n  database: 3\n  clientName: svc\n  timeout: 1500\n  connectTimeout: 2500\n  retryAttempts: 2\n  retryInterval: 700\n  subscriptionTimeout: 4000\n  connectionPoolSize: 10\n",
    );
    let j = json(
        r#"{"singleServerConfig": {"address": "redis://10.0.0.1:6380", "username": "app", "password": "s3:cr@t",
            "database": 3, "clientName": "svc", "timeout": 1500, "connectTimeout": 2500, "retryAttempts": 2,
            "retryInterval": 700, "subscriptionTimeout": 4000, "connectionPoolSize": 10}}"#,
    );
    for c in [y, j] {
        assert_eq!(url(&c), "redis://app:s3%3Acr%40t@10.0.0.1:6380/3");
        assert_eq!(c.config.command_timeout, Duration::from_millis(1500));
        assert_eq!(c.config.connect_timeout, Duration::from_millis(2500));
        assert_eq!(c.config.retry_attempts, 2);
        assert_eq!(c.config.retry_interval, Duration::from_millis(700));
        assert_eq!(c.config.subscription_timeout, Duration::from_millis(4000));
    }
}

#[test]
fn url_login_is_decoded_by_redis_as_written() {
    let c = yaml("singleServerConfig:\n  address: redis://h:1\n  password: 'p@ss:w/rd'\n");
    let info = redis::IntoConnectionInfo::into_connection_info(url(&c)).unwrap();
    assert_eq!(info.redis_settings().password(), Some("p@ss:w/rd"));
}

#[test]
fn top_level_login_and_server_level_override() {
    let c = yaml("username: top\npassword: toppw\nsingleServerConfig:\n  address: redis://h:1\n");
    assert_eq!(url(&c), "redis://top:toppw@h:1");
    let c = yaml("password: toppw\nsingleServerConfig:\n  address: redis://h:1\n  password: own\n");
    assert_eq!(url(&c), "redis://:own@h:1");
}

#[test]
fn retry_delay_wins_over_retry_interval() {
    let c = yaml(
        "singleServerConfig:\n  address: redis://h:1\n  retryInterval: 700\n  retryDelay: !<org.redisson.config.ConstantDelay> {delay: PT0.25S}\n",
    );
    assert_eq!(c.config.retry_interval, Duration::from_millis(250));
    let c = yaml(
        "singleServerConfig:\n  address: redis://h:1\n  retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}\n",
    );
    assert_eq!(c.config.retry_interval, Duration::from_secs(2));
    let c = json(
        r#"{"singleServerConfig": {"address": "redis://h:1", "retryDelay": {"class": "org.redisson.config.ConstantDelay", "delay": "PT1M"}}}"#,
    );
    assert_eq!(c.config.retry_interval, Duration::from_secs(60));
    assert!(refused("singleServerConfig:\n  address: redis://h:1\n  retryDelay: !<org.redisson.config.ConstantDelay> {delay: soon}\n")
        .contains("singleServerConfig.retryDelay"));
}

#[test]
fn iso_durations() {
    assert_eq!(iso_duration("PT1.5S"), Some(Duration::from_millis(1500)));
    assert_eq!(iso_duration("PT1H2M3S"), Some(Duration::from_secs(3723)));
    assert_eq!(iso_duration("P1D"), Some(Duration::from_secs(86_400)));
    assert_eq!(iso_duration("PT"), None);
    assert_eq!(iso_duration("1S"), None);
    assert_eq!(iso_duration("PT5"), None);
}

#[test]
fn cluster_shape_and_sharded_subscription_mode() {
    for (mode, want) in [
        ("AUTO", PublishMode::Auto),
        ("ON", PublishMode::Sharded),
        ("OFF", PublishMode::Classic),
    ] {
        let y = yaml(&format!(
            "password: pw\nclusterServersConfig:\n  nodeAddresses:\n  - redis://10.0.0.1:7000\n  - redis://10.0.0.2:7000\n  scanInterval: 1000\n  shardedSubscriptionMode: {mode}\n  timeout: 900\n"
        ));
        let j = json(&format!(
            r#"{{"password": "pw", "clusterServersConfig": {{"nodeAddresses": ["redis://10.0.0.1:7000", "redis://10.0.0.2:7000"],
                "scanInterval": 1000, "shardedSubscriptionMode": "{mode}", "timeout": 900}}}}"#
        ));
        for c in [y, j] {
            assert_eq!(c.config.publish_mode, want);
            assert_eq!(c.config.command_timeout, Duration::from_millis(900));
            // Redisson's default checkLockSyncedSlaves: true
            assert_eq!(c.config.replica_sync, ReplicaSync::Required);
            assert_eq!(
                c.servers(),
                &RedissonServers::Cluster {
                    nodes: vec![
                        "redis://:pw@10.0.0.1:7000".into(),
                        "redis://:pw@10.0.0.2:7000".into()
                    ]
                }
            );
        }
    }
    assert!(refused(
        "clusterServersConfig:\n  nodeAddresses: [redis://h:1]\n  shardedSubscriptionMode: MAYBE\n"
    )
    .contains("clusterServersConfig.shardedSubscriptionMode"));
    assert!(
        refused("clusterServersConfig:\n  nodeAddresses: [redis://h:1]\n  database: 1\n")
            .contains("clusterServersConfig.database")
    );
    assert!(refused("clusterServersConfig:\n  nodeAddresses: [redis://h:1]\n  natMapper: !<org.redisson.config.HostNatMapper> {hostsMap: {}}\n")
        .contains("natMapper"));
    yaml("clusterServersConfig:\n  nodeAddresses: [redis://h:1]\n  natMapper: !<org.redisson.config.DefaultNatMapper> {}\n");
}

#[test]
fn sentinel_shape_yaml_and_json() {
    let y = yaml(
        "checkLockSyncedSlaves: true\nsentinelServersConfig:\n  sentinelAddresses:\n  - redis://127.0.0.1:26379\n  - redis://127.0.0.1:26380\n  masterName: locks\n  sentinelUsername: sen\n  sentinelPassword: spw\n  username: app\n  password: mpw\n  database: 2\n  scanInterval: 400\n  checkSentinelsList: false\n  readMode: MASTER\n",
    );
    let j = json(
        r#"{"checkLockSyncedSlaves": true, "sentinelServersConfig": {"sentinelAddresses": ["redis://127.0.0.1:26379", "redis://127.0.0.1:26380"],
            "masterName": "locks", "sentinelUsername": "sen", "sentinelPassword": "spw", "username": "app", "password": "mpw",
            "database": 2, "scanInterval": 400, "checkSentinelsList": false, "readMode": "MASTER"}}"#,
    );
    for c in [y, j] {
        assert_eq!(c.config.sentinel_scan_interval, Duration::from_millis(400));
        assert_eq!(c.config.replica_sync, ReplicaSync::Required);
        assert_eq!(
            c.servers(),
            &RedissonServers::Sentinel {
                sentinels: vec![
                    "redis://sen:spw@127.0.0.1:26379".into(),
                    "redis://sen:spw@127.0.0.1:26380".into()
                ],
                master_name: "locks".into(),
                username: Some("app".into()),
                password: Some("mpw".into()),
                database: 2,
            }
        );
    }
    assert!(
        refused("sentinelServersConfig:\n  sentinelAddresses: [redis://h:1]\n")
            .contains("sentinelServersConfig.masterName")
    );
}

#[test]
fn check_lock_synced_slaves_per_mode() {
    let sentinel = "sentinelServersConfig:\n  sentinelAddresses: [redis://h:1]\n  masterName: m\n";
    let ms = "masterSlaveServersConfig:\n  masterAddress: redis://m:1\n  slaveAddresses: [redis://s:1]\n";
    for body in [sentinel, ms] {
        assert_eq!(
            yaml(body).config.replica_sync,
            ReplicaSync::Required,
            "default true"
        );
        assert_eq!(
            yaml(&format!("checkLockSyncedSlaves: true\n{body}"))
                .config
                .replica_sync,
            ReplicaSync::Required
        );
        assert_eq!(
            yaml(&format!("checkLockSyncedSlaves: false\n{body}"))
                .config
                .replica_sync,
            ReplicaSync::BestEffort
        );
    }
    assert_eq!(
        yaml(&format!("checkLockSyncedSlaves: true\n{SINGLE}"))
            .config
            .replica_sync,
        ReplicaSync::Off
    );
    assert_eq!(json(r#"{"checkLockSyncedSlaves": false, "masterSlaveServersConfig": {"masterAddress": "redis://m:1"}}"#).config.replica_sync, ReplicaSync::BestEffort);
    assert_eq!(
        json(
            r#"{"checkLockSyncedSlaves": false, "clusterServersConfig": {"nodeAddresses": ["redis://c:1"]}}"#
        )
        .config
        .replica_sync,
        ReplicaSync::BestEffort
    );
}

#[test]
fn master_slave_connects_to_the_master() {
    let c = yaml("masterSlaveServersConfig:\n  masterAddress: redis://m:6379\n  slaveAddresses: [redis://s1:6379, redis://s2:6379]\n  database: 1\n  password: pw\n");
    assert_eq!(url(&c), "redis://:pw@m:6379/1");
    assert!(
        refused("masterSlaveServersConfig:\n  slaveAddresses: [redis://s1:6379]\n")
            .contains("masterSlaveServersConfig.masterAddress")
    );
}

#[test]
fn name_mapper_default_custom_and_registered() {
    let c = yaml(&format!(
        "nameMapper: !<org.redisson.config.DefaultNameMapper> {{}}\n{SINGLE}"
    ));
    assert_eq!(c.config.name_mapper.map("a"), "a");
    let m = refused(&format!(
        "nameMapper: !<com.acme.TenantMapper> {{prefix: x}}\n{SINGLE}"
    ));
    assert!(
        m.contains("nameMapper") && m.contains("com.acme.TenantMapper"),
        "{m}"
    );
    let m = refused("singleServerConfig:\n  address: redis://h:1\n  nameMapper: !!com.acme.Old {}\n");
    assert!(
        m.contains("singleServerConfig.nameMapper") && m.contains("com.acme.Old"),
        "{m}"
    );
    let json_custom = r#"{"nameMapper": {"class": "com.acme.TenantMapper"}, "singleServerConfig": {"address": "redis://h:1"}}"#;
    assert!(RedissonConfig::from_json_str(json_custom).is_err());
    let loader =
        RedissonConfig::loader().name_mapper_class("com.acme.TenantMapper", NameMapper::prefix("acme:"));
    let c = loader.from_json_str(json_custom).unwrap();
    assert_eq!(c.config.name_mapper.map("a"), "acme:a");
    let c = loader
        .from_yaml_str(&format!("nameMapper: !<com.acme.TenantMapper> {{}}\n{SINGLE}"))
        .unwrap();
    assert_eq!(c.config.name_mapper.map("a"), "acme:a");
}

#[test]
fn other_mappers_and_resolvers_must_be_defaults() {
    yaml(&format!(
        "commandMapper: !<org.redisson.config.DefaultCommandMapper> {{}}\ncredentialsResolver: !<org.redisson.client.DefaultCredentialsResolver> {{}}\n{SINGLE}"
    ));
    assert!(refused(&format!("commandMapper: !<com.acme.Renamer> {{}}\n{SINGLE}")).contains("commandMapper"));
    assert!(
        refused(&format!("credentialsResolver: !<com.acme.Vault> {{}}\n{SINGLE}"))
            .contains("credentialsResolver")
    );
}

#[test]
fn other_redisson_features_are_ignored_even_with_class_tags() {
    let c = yaml(&format!(
        "codec: !<org.redisson.codec.Kryo5Codec> {{}}\nthreads: 16\nnettyThreads: 32\ntransportMode: \"NIO\"\nreferenceEnabled: true\nkeepPubSubOrder: true\nuseScriptCache: true\nprotocol: RESP3\nnettyHook: !<org.redisson.client.DefaultNettyHook> {{}}\n{SINGLE}  connectionMinimumIdleSize: 24\n  subscriptionConnectionPoolSize: 50\n  idleConnectionTimeout: 10000\n  sslVerificationMode: STRICT\n  reconnectionDelay: !<org.redisson.config.EqualJitterDelay> {{baseDelay: PT0.1S, maxDelay: PT10S}}\n"
    ));
    assert_eq!(url(&c), "redis://127.0.0.1:6379");
}

#[test]
fn redisson_exported_yaml_is_accepted() {
    // the shape Redisson's Config.toYAML writes (4.x): quoted strings, class tags, durations
    let text = r#"---
singleServerConfig:
  idleConnectionTimeout: 10000
  connectTimeout: 10000
  timeout: 3000
  retryAttempts: 4
  retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}
  reconnectionDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT0.1S, maxDelay: PT10S}
  subscriptionsPerConnection: 5
  clientName: null
  address: "redis://127.0.0.1:6379"
  subscriptionConnectionMinimumIdleSize: 1
  subscriptionConnectionPoolSize: 50
  connectionMinimumIdleSize: 24
  connectionPoolSize: 64
  database: 0
  dnsMonitoringInterval: 5000
threads: 16
nettyThreads: 32
codec: !<org.redisson.codec.Kryo5Codec> {}
transportMode: "NIO"
lockWatchdogTimeout: 30000
checkLockSyncedSlaves: true
slavesSyncTimeout: 1000
nameMapper: !<org.redisson.config.DefaultNameMapper> {}
commandMapper: !<org.redisson.config.DefaultCommandMapper> {}
"#;
    let c = yaml(text);
    assert_eq!(c.config.retry_interval, Duration::from_secs(2));
    assert_eq!(url(&c), "redis://127.0.0.1:6379");
}

#[test]
fn bad_values_name_the_key() {
    for (text, key) in [
        (format!("lockWatchdogTimeout: 0\n{SINGLE}"), "lockWatchdogTimeout"),
        (
            format!("lockWatchdogTimeout: -5\n{SINGLE}"),
            "lockWatchdogTimeout",
        ),
        (
            format!("lockWatchdogTimeout: soon\n{SINGLE}"),
            "lockWatchdogTimeout",
        ),
        (
            format!("lockWatchdogBatchSize: 0\n{SINGLE}"),
            "lockWatchdogBatchSize",
        ),
        (
            format!("fairLockWaitTimeout: 10000000000000\n{SINGLE}"),
            "fairLockWaitTimeout",
        ),
        (
            format!("checkLockSyncedSlaves: maybe\n{SINGLE}"),
            "checkLockSyncedSlaves",
        ),
        (format!("{SINGLE}  timeout: 0\n"), "singleServerConfig.timeout"),
        (
            format!("{SINGLE}  retryAttempts: -1\n"),
            "singleServerConfig.retryAttempts",
        ),
        (
            "singleServerConfig:\n  address: 127.0.0.1:6379\n".into(),
            "singleServerConfig.address",
        ),
        (
            "singleServerConfig:\n  address: http://h:1\n".into(),
            "singleServerConfig.address",
        ),
        (
            "singleServerConfig:\n  address: redis://h:1\n  database: -1\n".into(),
            "singleServerConfig.address",
        ),
        (
            "replicatedServersConfig:\n  nodeAddresses: [redis://h:1]\n".into(),
            "replicatedServersConfig",
        ),
    ] {
        let m = refused(&text);
        assert!(m.contains(&format!("`{key}`")), "{key}: {m}");
    }
    assert!(
        refused(&format!("{SINGLE}  retryAttempts: 5000\n")).contains("`singleServerConfig.retryAttempts`")
    );
    assert!(refused(&format!("lockWatchdogTimeout: 2\n{SINGLE}")).contains("`lockWatchdogTimeout`"));
}

#[test]
fn missing_or_duplicate_server_sections() {
    assert!(refused("lockWatchdogTimeout: 1000\n").contains("no server section"));
    assert!(refused("singleServerConfig:\n  database: 1\n").contains("singleServerConfig.address"));
    assert!(refused("singleServerConfig:\n  address: redis://a:1\nclusterServersConfig:\n  nodeAddresses: [redis://b:1]\n")
        .contains("more than one"));
    assert!(refused("clusterServersConfig:\n  nodeAddresses: []\n")
        .contains("clusterServersConfig.nodeAddresses"));
}

#[test]
fn malformed_documents() {
    assert!(refused("singleServerConfig: [\n  address: x").contains("malformed"));
    assert!(refused("{\"singleServerConfig\": {\"address\": }").contains("malformed"));
    assert!(refused("- just\n- a list\n").contains("expected a mapping"));
}

#[test]
fn tls_addresses_follow_the_feature() {
    let r = RedissonConfig::loader()
        .env(|_| None)
        .from_yaml_str("singleServerConfig:\n  address: rediss://h:6380\n");
    if cfg!(feature = "tls-rustls") {
        assert_eq!(url(&r.unwrap()), "rediss://h:6380");
    } else {
        let m = format!("{}", r.unwrap_err());
        assert!(
            m.contains("singleServerConfig.address") && m.contains("tls-rustls"),
            "{m}"
        );
    }
    // valkey:// is an alias
    assert_eq!(
        url(&yaml("singleServerConfig:\n  address: valkey://h:1\n")),
        "redis://h:1"
    );
}

#[test]
fn env_substitution_as_redisson_does_it() {
    let env = |name: &str| match name {
        "HOST" => Some("10.1.2.3".to_string()),
        "redis.port" => Some("6390".to_string()),
        "EMPTY" => Some(String::new()),
        _ => None,
    };
    let sub = |t: &str| substitute_env(t, &env);
    assert_eq!(sub("${HOST}"), "10.1.2.3");
    assert_eq!(sub("${redis.port}"), "6390");
    assert_eq!(sub("${HOST:-x}"), "10.1.2.3");
    assert_eq!(sub("${NOPE:-127.0.0.1}"), "127.0.0.1");
    assert_eq!(sub("${NOPE}"), "${NOPE}", "unset without default stays");
    assert_eq!(sub("${EMPTY:-d}"), "", "set but empty wins over the default");
    assert_eq!(sub("${NOPE:-a}b}"), "ab}", "the default ends at the first brace");
    assert_eq!(sub("${NOPE:-}"), "${NOPE:-}", "an empty default does not match");
    assert_eq!(
        sub("${NOPE:-a:-b}"),
        "${NOPE:-a:-b}",
        "Java's split gives three parts: no default"
    );
    assert_eq!(sub("${BAD-NAME}"), "${BAD-NAME}");
    assert_eq!(sub("$HOST {HOST} ${HOST"), "$HOST {HOST} ${HOST");
    assert_eq!(sub("${HOST}:${HOST}/${NOPE:-0}"), "10.1.2.3:10.1.2.3/0");
    assert_eq!(sub("${NOPE:-a\n}"), "${NOPE:-a\n}", "no line breaks inside");
    assert_eq!(sub("héllo ${HOST} wörld"), "héllo 10.1.2.3 wörld");

    let c = RedissonConfig::loader()
        .env(env)
        .from_yaml_str("lockWatchdogTimeout: ${WD:-4500}\nsingleServerConfig:\n  address: \"redis://${HOST}:${redis.port}\"\n  password: ${PW:-secret}\n")
        .unwrap();
    assert_eq!(url(&c), "redis://:secret@10.1.2.3:6390");
    assert_eq!(c.config.lock_watchdog_timeout, Duration::from_millis(4500));
    // an unset variable without default ends up in the value, which is then refused by key
    let e = RedissonConfig::loader()
        .env(env)
        .from_yaml_str("lockWatchdogTimeout: ${WD}\nsingleServerConfig: {address: 'redis://h:1'}\n")
        .unwrap_err();
    assert!(
        e.to_string().contains("lockWatchdogTimeout") && e.to_string().contains("${WD}"),
        "{e}"
    );
}

#[test]
fn env_substitution_reads_the_process_environment() {
    // a name no other test uses
    std::env::set_var("REDISSON_LOCK_TEST_RC_WATCHDOG", "7000");
    let c = RedissonConfig::from_yaml_str(&format!(
        "lockWatchdogTimeout: ${{REDISSON_LOCK_TEST_RC_WATCHDOG}}\n{SINGLE}"
    ))
    .unwrap();
    assert_eq!(c.config.lock_watchdog_timeout, Duration::from_millis(7000));
}

#[test]
fn class_tags_are_rewritten_like_redisson() {
    assert_eq!(untag_classes("a: !<org.x.Y> {}"), "a: !org.x.Y {}");
    assert_eq!(untag_classes("a: !!org.x.Y {}"), "a: !org.x.Y {}");
    assert_eq!(untag_classes("a: !!str 5"), "a: !!str 5");
    assert_eq!(untag_classes("a: 'p!ss!<'"), "a: 'p!ss!<'");
}

#[test]
fn from_path_reads_files_and_names_them() {
    let dir = std::env::temp_dir().join(format!("rc-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let y = dir.join("redisson.yaml");
    std::fs::write(&y, format!("lockWatchdogTimeout: 9000\n{SINGLE}")).unwrap();
    assert_eq!(
        RedissonConfig::from_path(&y)
            .unwrap()
            .config
            .lock_watchdog_timeout,
        Duration::from_secs(9)
    );
    let j = dir.join("redisson.json");
    std::fs::write(
        &j,
        r#"{"lockWatchdogTimeout": 8000, "singleServerConfig": {"address": "redis://h:1"}}"#,
    )
    .unwrap();
    assert_eq!(
        RedissonConfig::from_path(&j)
            .unwrap()
            .config
            .lock_watchdog_timeout,
        Duration::from_secs(8)
    );
    let e = RedissonConfig::from_path(dir.join("missing.yaml")).unwrap_err();
    assert!(e.to_string().contains("missing.yaml"), "{e}");
    std::fs::write(&y, "lockWatchdogTimeout: 0\n").unwrap();
    assert!(RedissonConfig::from_path(&y)
        .unwrap_err()
        .to_string()
        .contains("redisson.yaml"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn debug_hides_passwords() {
    let c = yaml("singleServerConfig:\n  address: redis://h:1\n  password: hunter2\n");
    assert!(!format!("{c:?}").contains("hunter2"));
    let c = yaml("sentinelServersConfig:\n  sentinelAddresses: [redis://h:1]\n  masterName: m\n  password: hunter2\n  sentinelPassword: hunter3\n");
    let d = format!("{c:?}");
    assert!(!d.contains("hunter2") && !d.contains("hunter3"), "{d}");
}

#[test]
fn anchors_and_merge_keys_as_in_snakeyaml() {
    let c = yaml(
        "base: &base\n  timeout: 1200\n  password: pw\nsingleServerConfig:\n  <<: *base\n  address: redis://h:1\n",
    );
    assert_eq!(c.config.command_timeout, Duration::from_millis(1200));
    assert_eq!(url(&c), "redis://:pw@h:1");
}

/// Redisson's `ssl*` keys (feature `tls-rustls`), each in Redisson's own spelling, with real
/// stores written to a temporary directory.
#[cfg(feature = "tls-rustls")]
mod ssl;

#[test]
fn a_misspelt_address_is_named_with_the_key_it_meant() {
    let e = refused("singleServerConfig:\n  adress: \"redis://127.0.0.1:6379\"\n");
    assert!(e.contains("singleServerConfig.address"), "{e}");
    assert!(
        e.contains("the file has `adress`: did you mean `address`?"),
        "{e}"
    );
    let e = refused("clusterServersConfig:\n  nodeAdresses:\n  - \"redis://127.0.0.1:7000\"\n");
    assert!(e.contains("did you mean `nodeAddresses`?"), "{e}");
    // a key Redisson has and this crate ignores is no typo
    let c = yaml("singleServerConfig:\n  address: \"redis://127.0.0.1:6379\"\n  connectionPoolSize: 64\n");
    assert_eq!(url(&c), "redis://127.0.0.1:6379");
}
