//! `redisson-lock doctor` against real redis-server processes: a misconfigured server (eviction,
//! no persistence, an ACL user without EVALSHA), a good one, one with a replica, and an
//! unreachable URL.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{eventually, RedisServer};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_redisson-lock");

/// The crate's minimal command rules (docs/operations.md, "ACL rules for the locks"; tests/acl.rs proves them).
const CRATE_COMMANDS: &str = "-@all +evalsha +script|load +publish +subscribe +unsubscribe +client|tracking \
     +hincrby +hexists +hget +hset +hdel +hlen +hgetall +hscan +type +pexpire +pttl +exists +del +get \
     +set +incr +rpush +lindex +lpop +lrange +lrem +zadd +zincrby +zrange +zrem +zscore";

/// The checks, in output order.
const CHECKS: [&str; 12] = [
    "version",
    "maxmemory-policy",
    "persistence",
    "replication",
    "cluster",
    "one-address",
    "round-trip",
    "clock",
    "loss-detection",
    "tracking-table",
    "features",
    "acl",
];

/// `doctor`'s exit codes: a check failed (unsafe); a check could not be made and none failed.
const UNSAFE: i32 = 4;
const UNCHECKED: i32 = 5;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The line of check `name` (exactly one).
    fn line(&self, name: &str) -> &str {
        let lines: Vec<&str> = self
            .stdout
            .lines()
            .filter(|l| {
                l.get(6..)
                    .is_some_and(|rest| rest.starts_with(&format!("{name}: ")))
            })
            .collect();
        assert_eq!(lines.len(), 1, "one `{name}` line expected in:\n{}", self.stdout);
        lines[0]
    }

    fn status(&self, name: &str) -> &str {
        self.line(name)[..4].trim()
    }
}

async fn doctor(url: &str, args: &[&str]) -> Run {
    let child = Command::new(BIN)
        .arg("--url")
        .arg(url)
        .arg("doctor")
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("REDIS_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run the redisson-lock binary");
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("doctor finishes within 60 s")
        .expect("wait for doctor");
    eprintln!(
        "doctor {args:?} on {url}: exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

async fn acl_setuser(s: &RedisServer, user: &str, rules: &str) {
    let mut admin = s.conn().await;
    let rules = &common::acl_rules(&mut admin, rules).await;
    let mut cmd = redis::cmd("ACL");
    cmd.arg("SETUSER").arg(user).arg("reset").arg("on").arg(">pw");
    for r in rules.split_whitespace() {
        cmd.arg(r);
    }
    let () = cmd.query_async(&mut admin).await.expect("ACL SETUSER");
}

/// Whether this server lets the doctor check an ACL user's permissions: `ACL DRYRUN` (Redis 7.0,
/// like `redis.acl_check_cmd` in scripts); without it the acl check can only warn.
async fn acl_checkable(s: &RedisServer) -> bool {
    let mut admin = s.conn().await;
    match redis::cmd("ACL")
        .arg("DRYRUN")
        .arg("default")
        .arg("PING")
        .query_async::<redis::Value>(&mut admin)
        .await
    {
        Ok(_) => true,
        Err(e) if common::is_unknown_command(&e) => false,
        Err(e) => panic!("ACL DRYRUN: {e}"),
    }
}

/// Whether the (authenticated) user of `url` may send `HELLO 3`: Redis 7.0 lets every user,
/// Redis 6 checks it against the user's ACL rules like any command.
async fn hello_allowed(url: &str) -> bool {
    let mut c = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .expect("connect as the ACL user");
    match redis::cmd("HELLO")
        .arg(3)
        .query_async::<redis::Value>(&mut c)
        .await
    {
        Ok(_) => true,
        Err(e) if e.code() == Some("NOPERM") || e.to_string().contains("NOPERM") => false,
        Err(e) => panic!("HELLO 3: {e}"),
    }
}

/// On a server without ACL DRYRUN: the acl line says it could not check (skip).
fn assert_acl_uncheckable(r: &Run, test: &str) {
    let acl = r.line("acl");
    assert!(
        acl.starts_with("skip") && acl.contains("could not check"),
        "{acl}"
    );
    common::skip_unsupported(test, &format!("no ACL DRYRUN: the acl check only warns ({acl})"));
}

/// Every check has exactly one line, in order, then the summary.
fn assert_shape(r: &Run) {
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), CHECKS.len() + 1, "{}", r.stdout);
    for (line, name) in lines.iter().zip(CHECKS) {
        assert!(
            ["ok    ", "warn  ", "FAIL  ", "skip  "]
                .iter()
                .any(|p| line.starts_with(p)),
            "status column: {line:?}"
        );
        assert!(
            line[6..].starts_with(&format!("{name}: ")),
            "{line:?} is not `{name}`"
        );
    }
}

/// (a) Eviction, no persistence and an ACL user without EVALSHA: three FAIL lines, exit 4.
#[tokio::test]
async fn misconfigured_server_fails_with_one_line_per_problem() {
    let s = RedisServer::start_with(&[
        "--maxmemory",
        "100mb",
        "--maxmemory-policy",
        "allkeys-lru",
        "--appendonly",
        "no",
        "--save",
        "",
    ]);
    // the crate's rules without EVALSHA, plus INFO (no CONFIG: the checks fall back to INFO)
    let rules = CRATE_COMMANDS.replace(" +evalsha", "");
    acl_setuser(&s, "app", &format!("~* &* {rules} +info")).await;
    let url = format!("redis://app:pw@127.0.0.1:{}/", s.port);
    let r = doctor(&url, &[]).await;
    assert_eq!(
        r.code,
        Some(UNSAFE),
        "stdout:\n{}\nstderr:\n{}",
        r.stdout,
        r.stderr
    );
    assert_shape(&r);

    let eviction = r.line("maxmemory-policy");
    assert_eq!(r.status("maxmemory-policy"), "FAIL", "{eviction}");
    assert!(eviction.contains("allkeys-lru evicts lock keys"), "{eviction}");
    assert!(eviction.contains("100mb"), "{eviction}");
    assert!(eviction.contains("set maxmemory-policy noeviction"), "{eviction}");

    let persistence = r.line("persistence");
    assert_eq!(r.status("persistence"), "FAIL", "{persistence}");
    assert!(persistence.contains("appendonly no"), "{persistence}");
    assert!(persistence.contains("set appendonly yes"), "{persistence}");

    let acl = r.line("acl");
    assert_eq!(r.status("acl"), "FAIL", "{acl}");
    assert!(
        acl.contains("`app`") && acl.to_lowercase().contains("evalsha"),
        "{acl}"
    );
    // only EVALSHA is missing: nothing else is blamed
    assert!(!acl.contains("+hset") && !acl.contains("+publish"), "{acl}");
    if !acl_checkable(&s).await {
        // (the doctor found EVALSHA denied by trying it; the rest needs ACL DRYRUN)
        assert!(acl.contains("could not be checked"), "{acl}");
        common::skip_unsupported(
            "misconfigured_server_fails_with_one_line_per_problem (its ACL DRYRUN checks)",
            "no ACL DRYRUN (ACL DRYRUN unknown)",
        );
        // the admin can read CONFIG: the RDB settings are named
        let r = doctor(&s.url(), &[]).await;
        assert!(r.line("persistence").contains("no RDB snapshots"), "{}", r.stdout);
        return;
    }

    // the same user checked by the admin with ACL DRYRUN, naming the exact rule
    let r = doctor(&s.url(), &["--acl-user", "app"]).await;
    assert_eq!(r.code, Some(UNSAFE), "{}{}", r.stdout, r.stderr);
    let acl = r.line("acl");
    assert!(acl.starts_with("FAIL") && acl.contains("lacks +evalsha"), "{acl}");
    assert!(acl.contains("ACL DRYRUN"), "{acl}");
    assert!(!acl.contains("+hset"), "{acl}");
    // the admin can read CONFIG: the RDB settings are named
    assert!(r.line("persistence").contains("no RDB snapshots"), "{}", r.stdout);

    // a narrower key pattern: the derived keys outside it are named
    acl_setuser(&s, "narrow", &format!("~lock:* &* {CRATE_COMMANDS}")).await;
    let r = doctor(&s.url(), &["--acl-user", "narrow", "--name", "lock:x"]).await;
    let acl = r.line("acl");
    let dryrun_acl = acl.to_owned();
    assert!(acl.starts_with("FAIL"), "{acl}");
    assert!(acl.contains("key redisson_lock_queue:{lock:x}"), "{acl}");
    assert!(!acl.contains("lacks"), "no command is missing: {acl}");
    // the same, found by the user itself (redis.acl_check_cmd, which gives no reason)
    let r = doctor(
        &format!("redis://narrow:pw@127.0.0.1:{}/", s.port),
        &["--name", "lock:x"],
    )
    .await;
    let acl = r.line("acl");
    assert!(
        acl.starts_with("FAIL") && acl.contains("redis.acl_check_cmd"),
        "{acl}"
    );
    let queue = "key redisson_lock_queue:{lock:x} (";
    let denied = acl
        .split_once(queue)
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(cmds, _)| cmds.split(' ').collect::<Vec<_>>())
        .unwrap_or_default();
    assert!(
        denied.contains(&"EVALSHA") && denied.contains(&"RPUSH") && denied.contains(&"LREM"),
        "the fair queue's commands are named: {acl}"
    );
    assert!(!acl.contains("lacks"), "no command is missing: {acl}");
    // both ways find the same denials
    let verdict = |l: &str| l.split(" — ").next().unwrap_or_default().to_owned();
    assert_eq!(verdict(acl), verdict(&dryrun_acl));
}

/// (b) noeviction, AOF on, the default user: exit 0, no FAIL line.
#[tokio::test]
async fn good_server_passes() {
    let s = RedisServer::start_with(&["--appendonly", "yes", "--maxmemory-policy", "noeviction"]);
    let r = doctor(&s.url(), &[]).await;
    assert_eq!(r.code, Some(0), "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert_shape(&r);
    assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);
    assert_eq!(r.status("maxmemory-policy"), "ok");
    assert!(
        r.line("persistence")
            .starts_with("ok    persistence: appendonly yes"),
        "{}",
        r.stdout
    );
    let checkable = acl_checkable(&s).await;
    if checkable {
        assert!(
            r.line("acl").starts_with("ok    acl: user `default`"),
            "{}",
            r.stdout
        );
    } else {
        assert_acl_uncheckable(&r, "good_server_passes (its acl checks)");
    }
    // the server's own version, whichever it is
    let v = common::server_version();
    assert!(
        r.line("version")
            .contains(&format!("{}.{}.{}", v.major, v.minor, v.patch)),
        "{v}: {}",
        r.stdout
    );
    assert!(
        r.stdout.lines().last().unwrap().starts_with("0 check(s) failed"),
        "{}",
        r.stdout
    );
    // the loss signal's path a lock client takes here: without the echo where the server tracks
    // only the keys a script reads (Redis 7.2+, Valkey), with it elsewhere
    let loss = r.line("loss-detection");
    assert!(loss.starts_with("ok    loss-detection: tracking"), "{loss}");
    if v.valkey || (v.major, v.minor) >= (7, 2) {
        assert!(loss.contains("without the echo"), "{v}: {loss}");
    } else {
        assert!(loss.contains("pushed back and read again"), "{v}: {loss}");
    }
    // each feature as the server answers it directly (never from the version string)
    let features = r.line("features");
    assert!(features.starts_with("ok    features: RESP3 yes"), "{features}");
    let mut raw = s.conn().await;
    let has = |r: redis::RedisResult<redis::Value>| if r.is_ok() { "yes" } else { "no" };
    let trackinginfo = has(redis::cmd("CLIENT")
        .arg("TRACKINGINFO")
        .query_async(&mut raw)
        .await);
    let sharded = has(redis::cmd("PUBSUB")
        .arg("SHARDNUMSUB")
        .query_async(&mut raw)
        .await);
    assert!(
        features.contains(&format!("CLIENT TRACKINGINFO {trackinginfo}")),
        "{features}"
    );
    assert!(
        features.contains(&format!("sharded pub/sub {sharded}")),
        "{features}"
    );

    // --json: one object per check
    let r = doctor(&s.url(), &["--json"]).await;
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let values: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let names: Vec<&str> = values.iter().filter_map(|v| v["check"].as_str()).collect();
    assert_eq!(names, CHECKS);
    assert!(
        values
            .iter()
            .all(|v| v["check"].is_null() || v["status"] != "fail"),
        "{}",
        r.stdout
    );
    assert_eq!(values.last().unwrap()["fail"], 0);

    // an ACL user with exactly the crate's rules is ok, and the checks it cannot read are
    // skipped, each naming the command refused (exit 5: could not check; nothing failed)
    acl_setuser(&s, "app", &format!("~* &* {CRATE_COMMANDS}")).await;
    let r = doctor(&format!("redis://app:pw@127.0.0.1:{}/", s.port), &[]).await;
    assert_eq!(r.code, Some(UNCHECKED), "{}{}", r.stdout, r.stderr);
    assert_shape(&r);
    if checkable {
        assert!(r.line("acl").starts_with("ok    acl: user `app`"), "{}", r.stdout);
        assert!(r.line("acl").contains("redis.acl_check_cmd"), "{}", r.stdout);
    } else {
        assert_acl_uncheckable(&r, "good_server_passes (its acl checks)");
    }
    let persistence = r.line("persistence");
    assert!(
        persistence.starts_with("skip")
            && persistence.contains("CONFIG GET refused: denied to this user (NOPERM)")
            && persistence.contains("INFO refused"),
        "{persistence}"
    );
    let clock = r.line("clock");
    assert!(
        clock.starts_with("skip") && clock.contains("TIME refused: denied"),
        "{clock}"
    );
    // the crate's rules run scripts with EVALSHA: so does the one-address probe
    assert!(r.line("one-address").starts_with("ok"), "{}", r.stdout);
    let summary = r.stdout.lines().last().unwrap();
    assert!(
        summary.contains("refused by the server: ")
            && summary.contains("CONFIG GET (skipped maxmemory-policy, persistence")
            && summary.contains("TIME (skipped clock)"),
        "{summary}"
    );
    // the crate's rules leave out what only a cluster client sends
    let features = r.line("features");
    assert!(features.starts_with("ok    features: RESP3 yes"), "{features}");
    if !hello_allowed(&format!("redis://app:pw@127.0.0.1:{}/", s.port)).await {
        // Redis < 7.0 checks a bare HELLO 3 against the user's rules; the client's connections
        // send HELLO 3 AUTH, which is allowed (this user's locks work: tests/acl.rs)
        assert!(features.contains("a bare HELLO 3 is denied"), "{features}");
    }
    assert!(
        features.contains("CLIENT TRACKINGINFO denied") || features.contains("CLIENT TRACKINGINFO no"),
        "{features}"
    );
}

/// volatile-* with no memory limit is a warning; a replica turns "no AOF" into a warning and
/// brings the min-replicas-to-write warning.
#[tokio::test]
async fn replica_and_volatile_policy_warn() {
    let master = RedisServer::start_with(&["--maxmemory-policy", "volatile-lru"]);
    let port = master.port.to_string();
    let _replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    let mut admin = master.conn().await;
    eventually(Duration::from_secs(20), "the replica is connected", || {
        let mut admin = admin.clone();
        async move {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query_async(&mut admin)
                .await
                .unwrap();
            info.contains("connected_slaves:1")
        }
    })
    .await;
    let r = doctor(&master.url(), &[]).await;
    assert_eq!(r.code, Some(0), "only warnings: {}{}", r.stdout, r.stderr);
    let eviction = r.line("maxmemory-policy");
    assert!(eviction.starts_with("warn"), "{eviction}");
    assert!(
        eviction.contains("every lock key has one") && eviction.contains("maxmemory is 0"),
        "{eviction}"
    );
    let persistence = r.line("persistence");
    assert!(
        persistence.starts_with("warn") && persistence.contains("1 replica(s)"),
        "{persistence}"
    );
    let replication = r.line("replication");
    assert!(
        replication.starts_with("warn") && replication.contains("min-replicas-to-write 0"),
        "{replication}"
    );
    assert!(replication.contains("WAIT"), "{replication}");

    // with a memory limit, volatile-lru fails; min-replicas-to-write 1 is ok
    for (k, v) in [("maxmemory", "50mb"), ("min-replicas-to-write", "1")] {
        let () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(k)
            .arg(v)
            .query_async(&mut admin)
            .await
            .unwrap();
    }
    let r = doctor(&master.url(), &[]).await;
    assert_eq!(r.code, Some(UNSAFE), "{}{}", r.stdout, r.stderr);
    assert!(r.line("maxmemory-policy").starts_with("FAIL"), "{}", r.stdout);
    assert!(r.line("replication").starts_with("ok"), "{}", r.stdout);
}

/// (c) Nothing listens there, or the URL is not one: a clear error, no check lines; exit 1 ("could
/// not connect", never the unsafe 4 or the could-not-check 5), exit 2 for a URL that is not one.
#[tokio::test]
async fn unreachable_or_malformed_url_is_a_clear_error() {
    // a port that was free a moment ago: nothing of ours listens on it
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://127.0.0.1:{port}/");
    let r = doctor(&url, &[]).await;
    assert_eq!(r.code, Some(1), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.starts_with(&format!(
            "redisson-lock: error: cannot connect to redis://127.0.0.1:{port}/"
        )),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);

    let r = doctor("localhost:6379", &[]).await;
    assert_eq!(r.code, Some(2), "a usage error: {}", r.stderr);
    assert!(r.stderr.contains("is not a redis URL"), "{}", r.stderr);

    // a wrong password: the error says so, and the password is not printed
    let s = RedisServer::start();
    acl_setuser(&s, "app", "~* +@all").await;
    let r = doctor(&format!("redis://app:wrong-secret@127.0.0.1:{}/", s.port), &[]).await;
    assert_eq!(r.code, Some(1), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("cannot connect to redis://***@127.0.0.1"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("wrong-secret"), "{}", r.stderr);
}

/// A cluster node: slots unassigned fail the cluster check; once one node serves all 16384
/// slots it is ok, and the ACL check covers sharded pub/sub.
#[tokio::test]
async fn cluster_state_is_checked() {
    let s = RedisServer::start_with(&["--cluster-enabled", "yes", "--appendonly", "yes"]);
    let r = doctor(&s.url(), &[]).await;
    assert_eq!(r.code, Some(UNSAFE), "{}{}", r.stdout, r.stderr);
    // no slot is served yet: the probe cannot run (the cluster line says why)
    let one = r.line("one-address");
    assert!(one.starts_with("skip") && one.contains("ClusterDown"), "{one}");
    let cluster = r.line("cluster");
    assert!(cluster.starts_with("FAIL"), "{cluster}");
    assert!(cluster.contains("0 of 16384 slots assigned"), "{cluster}");

    let mut admin = s.conn().await;
    // (ADDSLOTS, not ADDSLOTSRANGE: that needs Redis 7.0)
    let () = redis::cmd("CLUSTER")
        .arg("ADDSLOTS")
        .arg((0..16384).collect::<Vec<u16>>())
        .query_async(&mut admin)
        .await
        .unwrap();
    eventually(Duration::from_secs(20), "cluster_state ok", || {
        let mut admin = admin.clone();
        async move {
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query_async(&mut admin)
                .await
                .unwrap();
            info.contains("cluster_state:ok")
        }
    })
    .await;
    let r = doctor(&s.url(), &[]).await;
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(
        r.line("cluster")
            .contains("all 16384 slots covered by 1 master(s)"),
        "{}",
        r.stdout
    );
    assert!(r.line("version").contains("sharded pub/sub"), "{}", r.stdout);
    // one node owning every slot, reached by a plain URL: a cluster behind one address, found
    // by a script over two slots (answered CROSSSLOT)
    let one = r.line("one-address");
    assert!(
        one.starts_with("ok") && one.contains("cluster behind one address: calls grouped by slot"),
        "{one}"
    );
    assert!(one.contains("answered CROSSSLOT"), "{one}");

    // a user without the sharded pub/sub commands is told to add them
    if !acl_checkable(&s).await {
        let r = doctor(&s.url(), &[]).await;
        assert_acl_uncheckable(&r, "cluster_state_is_checked (its acl check)");
        return;
    }
    acl_setuser(&s, "app", &format!("~* &* {CRATE_COMMANDS}")).await;
    let r = doctor(&s.url(), &["--acl-user", "app"]).await;
    let acl = r.line("acl");
    assert!(
        acl.starts_with("FAIL")
            && acl.contains("lacks +pubsub|shardnumsub +ssubscribe +sunsubscribe")
            && acl.contains("+spublish"),
        "{acl}"
    );
}

/// A managed service: `CONFIG` and `DEBUG` renamed away, and a user denied the admin commands.
/// Its checks that need them are `skip` lines naming the command refused and how, the summary
/// names each refused command with the checks it skipped, and the exit code is 5 ("could not
/// check"), not 0 and not the 4 of an unsafe deployment. The admin, who may run `INFO`, sees the
/// eviction policy set at start-up from there: unsafe, exit 4 (a failed check outranks a skipped
/// one).
#[tokio::test]
async fn managed_service_separates_unsafe_from_could_not_check() {
    let s = RedisServer::start_with(&[
        "--rename-command",
        "CONFIG",
        "",
        "--rename-command",
        "DEBUG",
        "",
        "--maxmemory",
        "100mb",
        "--maxmemory-policy",
        "allkeys-lru",
        "--appendonly",
        "yes",
    ]);
    acl_setuser(
        &s,
        "ops",
        "~* &* +@all -config -debug -acl -info -cluster -client|list -client|kill -script|flush",
    )
    .await;
    let r = doctor(&format!("redis://ops:pw@127.0.0.1:{}/", s.port), &[]).await;
    assert_eq!(r.code, Some(UNCHECKED), "{}{}", r.stdout, r.stderr);
    assert_shape(&r);
    assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);
    let renamed = "CONFIG GET refused: unknown command (renamed away or disabled";
    let denied = "INFO refused: denied to this user (NOPERM)";
    for (check, needles) in [
        ("maxmemory-policy", &[renamed, denied][..]),
        ("persistence", &[renamed, denied]),
        (
            "cluster",
            &[denied, "CLUSTER INFO refused: denied to this user (NOPERM)"],
        ),
        ("tracking-table", &[renamed]),
    ] {
        let line = r.line(check);
        assert_eq!(r.status(check), "skip", "{line}");
        assert!(line.contains("could not check"), "{line}");
        for n in needles {
            assert!(line.contains(n), "{check} should say {n:?}: {line}");
        }
    }
    // what could be read another way was: the version from HELLO, the replicas from ROLE, the
    // ACL through a script (ACL DRYRUN denied)
    assert!(r.line("version").starts_with("ok"), "{}", r.stdout);
    assert!(
        r.line("replication")
            .starts_with("ok    replication: master without replicas"),
        "{}",
        r.stdout
    );
    assert!(
        r.line("acl").starts_with("ok") && r.line("acl").contains("redis.acl_check_cmd"),
        "{}",
        r.stdout
    );
    let summary = r.stdout.lines().last().unwrap();
    assert!(
        summary.starts_with("0 check(s) failed, 0 warning(s), 4 could not be checked"),
        "{summary}"
    );
    for part in [
        "CONFIG GET (skipped maxmemory-policy, persistence, tracking-table)",
        "INFO (skipped maxmemory-policy, persistence, cluster; read another way in replication)",
        "CLUSTER INFO (skipped cluster)",
    ] {
        assert!(summary.contains(part), "{part:?} in {summary}");
    }
    // the same in JSON: each check's refused commands, and the summary's map
    let r = doctor(&format!("redis://ops:pw@127.0.0.1:{}/", s.port), &["--json"]).await;
    assert_eq!(r.code, Some(UNCHECKED), "{}{}", r.stdout, r.stderr);
    let values: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let tracking = values.iter().find(|v| v["check"] == "tracking-table").unwrap();
    assert_eq!(tracking["status"], "skip", "{tracking}");
    assert_eq!(
        tracking["refused"],
        serde_json::json!(["CONFIG GET"]),
        "{tracking}"
    );
    let summary = values.last().unwrap();
    assert_eq!(summary["skip"], 4, "{summary}");
    assert_eq!(
        summary["refused"]["CONFIG GET"]["skipped"],
        serde_json::json!(["maxmemory-policy", "persistence", "tracking-table"]),
        "{summary}"
    );

    // the admin reads the policy from INFO: unsafe, whatever could not be checked
    let r = doctor(&s.url(), &[]).await;
    assert_eq!(r.code, Some(UNSAFE), "{}{}", r.stdout, r.stderr);
    let eviction = r.line("maxmemory-policy");
    assert!(
        eviction.starts_with("FAIL") && eviction.contains("allkeys-lru evicts lock keys"),
        "{eviction}"
    );
    assert_eq!(r.status("tracking-table"), "skip", "{}", r.stdout);
    assert!(r.line("persistence").starts_with("ok"), "{}", r.stdout);
}

/// The client-tracking table: smaller than the lock keys (or full) is a warning (Redis then drops
/// tracked keys, and the loss signal of those holds degrades to renewal); no limit is ok.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tracking_table_smaller_than_the_locks_warns() {
    let s = RedisServer::start_with(&[
        "--tracking-table-max-keys",
        "2",
        "--appendonly",
        "yes",
        "--maxmemory-policy",
        "noeviction",
    ]);
    let c = s.client(redisson_lock::Config::default()).await;
    let mut held = Vec::new();
    for i in 0..3 {
        held.push(c.lock(&format!("tt:{i}")).unwrap().lock().await.unwrap());
    }
    let r = doctor(&s.url(), &[]).await;
    assert_eq!(r.code, Some(0), "a warning only: {}{}", r.stdout, r.stderr);
    let line = r.line("tracking-table");
    assert!(
        line.starts_with("warn") && line.contains("tracking-table-max-keys 2"),
        "{line}"
    );
    assert!(line.contains("3 lock hash(es)"), "{line}");
    assert!(line.contains("degrades to the next renewal"), "{line}");

    let mut admin = s.conn().await;
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tracking-table-max-keys")
        .arg(0)
        .query_async(&mut admin)
        .await
        .unwrap();
    let r = doctor(&s.url(), &[]).await;
    let line = r.line("tracking-table");
    assert!(
        line.starts_with("ok") && line.contains("0 (no limit)") && line.contains("3 lock hash(es)"),
        "{line}"
    );
    for g in held {
        g.unlock().await.unwrap();
    }
}

/// `--map MAP`: the acl check probes the six objects of an entry of MAP (Redisson's
/// `{MAP}:<key hash>:<object>`), each with what its kind sends; `--synchronizers` adds the
/// synchronizers' keys to NAME's.
#[tokio::test]
async fn acl_checks_a_map_entrys_objects_and_the_synchronizers() {
    let s = RedisServer::start();
    if !acl_checkable(&s).await {
        common::skip_unsupported(
            "acl_checks_a_map_entrys_objects_and_the_synchronizers",
            "no ACL DRYRUN",
        );
        return;
    }
    // the entry's own names and every key Redisson derives from them
    acl_setuser(&s, "entries", "~{orders}:* ~redisson_* &* +@all").await;
    let r = doctor(&s.url(), &["--acl-user", "entries", "--map", "orders"]).await;
    let acl = r.line("acl");
    assert!(
        acl.starts_with("ok") && acl.contains("an entry of map `orders`"),
        "{acl}"
    );
    // the entry's names only: the fair queue, the latches and the channels used as keys are
    // outside it; the semaphore's lease set and the read holds' timeouts are inside
    acl_setuser(&s, "narrow", "~{orders}:* &* +@all").await;
    let r = doctor(&s.url(), &["--acl-user", "narrow", "--map", "orders"]).await;
    let acl = r.line("acl");
    assert!(
        acl.starts_with("FAIL") && acl.contains("an entry of map `orders`"),
        "{acl}"
    );
    assert!(
        acl.contains("key redisson_lock_queue:{orders}:AAAAAAAAAAAAAAAAAAAAAA:fairlock"),
        "{acl}"
    );
    assert!(
        acl.contains(
            "key redisson_countdownlatch__channel__{{orders}:AAAAAAAAAAAAAAAAAAAAAA:countdownlatch}"
        ),
        "the latch's channel, which its scripts take as a key: {acl}"
    );
    assert!(!acl.contains(":permitexpirablesemaphore:timeout"), "{acl}");
    assert!(!acl.contains("rwlock_timeout"), "{acl}");

    // a user whose rules fit the locks only (the permit-expirable semaphore's ZCARD and ZCOUNT
    // refused): only --synchronizers says so
    acl_setuser(
        &s,
        "locks",
        "~lock:* ~{lock:* ~redisson_* &* +@all -zcard -zcount",
    )
    .await;
    let r = doctor(&s.url(), &["--acl-user", "locks", "--name", "lock:x"]).await;
    assert!(r.line("acl").starts_with("ok"), "{}", r.line("acl"));
    let r = doctor(
        &s.url(),
        &["--acl-user", "locks", "--name", "lock:x", "--synchronizers"],
    )
    .await;
    let acl = r.line("acl");
    assert!(
        acl.starts_with("FAIL") && acl.contains("lacks +zcard +zcount"),
        "{acl}"
    );

    // every probe of every layout has a shape the server takes (a wrong arity is "could not
    // check", not "ok")
    acl_setuser(&s, "all", "~* &* +@all").await;
    let r = doctor(
        &s.url(),
        &[
            "--acl-user",
            "all",
            "--name",
            "lock:x",
            "--synchronizers",
            "--group",
        ],
    )
    .await;
    assert!(r.line("acl").starts_with("ok"), "{}", r.line("acl"));
    // the grouped lock reads its values with HMGET: only --group says a user lacks it
    acl_setuser(&s, "nohmget", "~lock:* ~{lock:* ~redisson_* &* +@all -hmget").await;
    let r = doctor(&s.url(), &["--acl-user", "nohmget", "--name", "lock:x"]).await;
    assert!(r.line("acl").starts_with("ok"), "{}", r.line("acl"));
    let r = doctor(
        &s.url(),
        &["--acl-user", "nohmget", "--name", "lock:x", "--group"],
    )
    .await;
    let acl = r.line("acl");
    assert!(acl.starts_with("FAIL") && acl.contains("lacks +hmget"), "{acl}");
}
