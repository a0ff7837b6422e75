//! The crate (and real Redisson) as a Redis ACL user with the minimal rule set of the README's
//! "Deployment checklist": every lock kind, watchdog renewal, force unlock and waiters woken by
//! pub/sub, with `ACL LOG` empty afterwards (no command was denied, not even one whose failure the
//! client swallows).
//!
//! * `crate_works_as_a_minimal_acl_user`: the rule set with `~*` / `&*`.
//! * `crate_works_with_key_patterns_narrowed_to_a_prefix`: the keys and channels narrowed to the
//!   lock-name prefix `acl:` and Redisson's derived namespaces; a lock outside the prefix is denied.
//! * `every_rule_is_needed` (`#[ignore]`d, slow): removes each rule in turn and shows what breaks.
//! * `redisson_works_as_the_same_user`: a Java worker (the compat-tests harness jar, real Redisson
//!   4.7.0) locks and unlocks as the restricted user, waking a Rust waiter and woken by one. The
//!   jar is `$REDISSON_HARNESS_JAR` (`scripts/test` sets it); without it (or a JDK) the test is
//!   skipped loudly, and with `CI=true` that is a failure.

mod common;

use common::kept::Kept;
use std::time::{Duration, Instant};

use common::java;
use common::{eventually, RedisServer};
use redisson_lock::{Client, Config, Error};

/// The crate's minimal command rules (README "Deployment checklist"), standalone / classic
/// pub/sub. A cluster with sharded pub/sub adds `+spublish +ssubscribe +sunsubscribe
/// +pubsub|shardnumsub` (not tested here: the tests run one standalone server).
const CRATE_COMMANDS: &str = "-@all +evalsha +script|load +publish +subscribe +unsubscribe +client|tracking \
     +hincrby +hexists +hget +hset +hdel +hlen +hgetall +hscan +type +pexpire +pttl +exists +del +get \
     +set +incr +rpush +lindex +lpop +lrange +lrem +zadd +zincrby +zrange +zrem +zscore";

/// `CRATE_COMMANDS`, and where the server tracks only the keys a script reads (Redis 7.2+,
/// Valkey: the client's probe at connect finds that out, and then tracks held keys on a connection
/// of the loss watch's own) what that takes: `CLIENT ID` of the pub/sub connection, `CLIENT TRACKINGINFO`
/// and `INFO stats` (its tracking table, checked once a second). Elsewhere the probe stops
/// before them.
fn crate_commands() -> String {
    let v = common::server_version();
    if v.valkey || (v.major, v.minor) >= (7, 2) {
        format!("{CRATE_COMMANDS} +client|id +client|trackinginfo +info")
    } else {
        CRATE_COMMANDS.to_owned()
    }
}

/// What Redisson (4.7.0, single server) needs on top of `CRATE_COMMANDS` and the lock keys:
/// `PING` (every new connection is pinged; denied, Redisson cannot start), `EVAL` (at start-up it
/// probes `EVAL "redis.call('get', KEYS[1]) redis.call('get', KEYS[2])" 2 test1 test2`; denied,
/// Redisson goes on, but ACL LOG records it, which this test does not accept). Its probe's keys
/// `test1` and `test2` are the crate's probe keys too, so the narrowed patterns grant them.
const REDISSON_EXTRA: &str = "+ping +eval";

/// Keys and channels narrowed to lock names starting with `acl:` (names without `{`), and the
/// two keys of the connect probe (`~`, not `%R~`: a script's declared keys need read and write
/// permission, though nothing reads or writes them).
const NARROW_PATTERNS: &str = "~acl:* ~redisson_lock__channel:{acl:* ~redisson_rwlock:{acl:* \
     ~redisson_unlock_latch:{acl:* ~redisson_lock_queue:{acl:* ~redisson_lock_timeout:{acl:* \
     ~redisson_lock_token:{acl:* ~{acl:*} ~{acl:*}:*:rwlock_timeout* ~test1 ~test2 ~redisson_lock_probe:* \
     &redisson_lock__channel:{acl:* &redisson_rwlock:{acl:*";

const USER: &str = "locker";
const PASSWORD: &str = "locker-secret";

/// How long a waiter may take to be woken by an unlock message: far below the poll interval.
const WAKE_LIMIT: Duration = Duration::from_secs(5);
/// Waiters re-poll this rarely, so a wake-up within `WAKE_LIMIT` came through pub/sub.
const POLL: Duration = Duration::from_secs(60);
/// Short, so the watchdog renews (every third of it) during the test.
const WATCHDOG: Duration = Duration::from_millis(1500);

/// `+client|setinfo` where the server takes the rule, else nothing. redis-rs names each
/// connection with `CLIENT SETINFO`; a user without the rule is refused (redis-rs ignores that)
/// and the refusal lands in `ACL LOG`, so README's ACL notes add it where it can be added: Redis
/// 6.x takes the rule without knowing the subcommand (the command then fails as unknown,
/// unlogged), 7.2+ and Valkey know it; 7.0 refuses the rule and the command alike.
async fn connection_naming_rule(admin: &mut redis::aio::MultiplexedConnection) -> &'static str {
    let probe = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("redisson-lock-setinfo-probe")
        .arg("+client|setinfo")
        .query_async::<()>(admin)
        .await;
    let _: redis::RedisResult<i64> = redis::cmd("ACL")
        .arg("DELUSER")
        .arg("redisson-lock-setinfo-probe")
        .query_async(admin)
        .await;
    match probe {
        Ok(()) => "+client|setinfo",
        Err(e) if e.to_string().contains("Unknown command") => "",
        Err(e) => panic!("ACL SETUSER probe +client|setinfo: {e}"),
    }
}

/// (Re)defines the user with exactly `rules` (after a reset), plus the connection-naming rule
/// where the server takes it ([`connection_naming_rule`]).
async fn set_user(admin: &mut redis::aio::MultiplexedConnection, rules: &str) {
    let naming = connection_naming_rule(admin).await;
    let rules = &format!("{} {naming}", common::acl_rules(admin, rules).await);
    let mut cmd = redis::cmd("ACL");
    cmd.arg("SETUSER")
        .arg(USER)
        .arg("reset")
        .arg("on")
        .arg(format!(">{PASSWORD}"));
    for r in rules.split_whitespace() {
        cmd.arg(r);
    }
    let () = cmd
        .query_async(admin)
        .await
        .unwrap_or_else(|e| panic!("ACL SETUSER {USER} {rules}: {e}"));
}

fn user_url(s: &RedisServer) -> String {
    format!("redis://{USER}:{PASSWORD}@127.0.0.1:{}/", s.port)
}

/// `ACL LOG` entries (denials) as `reason object (username)` lines, and resets the log.
async fn acl_log(admin: &mut redis::aio::MultiplexedConnection) -> Vec<String> {
    let entries: Vec<redis::Value> = redis::cmd("ACL")
        .arg("LOG")
        .query_async(admin)
        .await
        .expect("ACL LOG");
    let mut out = Vec::new();
    for e in entries {
        let map: std::collections::HashMap<String, redis::Value> =
            redis::from_redis_value(e).expect("ACL LOG entry");
        let text = |k: &str| {
            map.get(k)
                .and_then(|v| redis::from_redis_value_ref::<String>(v).ok())
                .unwrap_or_default()
        };
        let info = text("client-info");
        let cmd = info
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix("cmd="))
            .unwrap_or("?")
            .to_owned();
        out.push(format!(
            "{} {} (user {}, context {}, command {cmd})",
            text("reason"),
            text("object"),
            text("username"),
            text("context")
        ));
    }
    let () = redis::cmd("ACL")
        .arg("LOG")
        .arg("RESET")
        .query_async(admin)
        .await
        .expect("ACL LOG RESET");
    out
}

async fn user_client(s: &RedisServer) -> Result<Client, String> {
    let config = Config::default()
        .with_lock_watchdog_timeout(WATCHDOG)
        .with_poll_interval(POLL)
        .with_retry_attempts(0)
        .with_command_timeout(Duration::from_secs(5));
    Client::builder()
        .url(user_url(s))
        .config(config)
        .build()
        .await
        .map_err(|e| format!("connect as {USER}: {e}"))
}

fn step<T>(what: &str, r: Result<T, Error>) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

/// Runs `fut` (a waiter) to completion within `WAKE_LIMIT` after `release` ran.
async fn woken<T>(
    what: &str,
    task: tokio::task::JoinHandle<Result<T, Error>>,
    released_at: Instant,
) -> Result<T, String> {
    let r = tokio::time::timeout(WAKE_LIMIT, task)
        .await
        .map_err(|_| {
            format!("{what}: not woken within {WAKE_LIMIT:?} of the unlock (poll interval {POLL:?})")
        })?
        .map_err(|e| format!("{what}: task failed: {e}"))?;
    let v = step(what, r)?;
    let took = released_at.elapsed();
    if took >= WAKE_LIMIT {
        return Err(format!("{what}: woken only after {took:?}"));
    }
    Ok(v)
}

/// Waits until `client` has `n` waiters registered (subscribed, or queued) on its pub/sub;
/// Err with the waiter's own result when it ended instead.
async fn waiting<T>(
    client: &Client,
    n: usize,
    what: &str,
    task: &mut tokio::task::JoinHandle<Result<T, Error>>,
) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.stats().waiters < n {
        if task.is_finished() {
            return match task.await {
                Ok(Err(e)) => Err(format!("{what}: {e}")),
                Ok(Ok(_)) => Err(format!("{what}: acquired a lock that is held")),
                Err(e) => Err(format!("{what}: task failed: {e}")),
            };
        }
        if Instant::now() > deadline {
            return Err(format!("{what}: the waiter did not start waiting"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

/// `exercise`, failing the test with the ACL LOG when it fails.
async fn exercise_ok(s: &RedisServer, admin: &mut redis::aio::MultiplexedConnection, prefix: &str) {
    if let Err(e) = exercise(s, prefix).await {
        panic!("{e}\nACL LOG: {:#?}", acl_log(admin).await);
    }
}

/// Every lock kind as the user, names under `prefix`. Err names the first step that failed.
async fn exercise(s: &RedisServer, prefix: &str) -> Result<(), String> {
    let a = user_client(s).await?;
    let b = user_client(s).await?;
    let n = |x: &str| format!("{prefix}{x}");

    // RLock, watchdog renewal, a waiter woken by the unlock message
    let held = step("lock", a.lock(&n("lock")).unwrap().lock().await)?;
    let lock_b = b.lock(&n("lock")).unwrap();
    let mut waiter = tokio::spawn(async move { lock_b.lock().await });
    waiting(&b, 1, "lock waiter", &mut waiter).await?;
    // longer than the lease: only renewals keep the lock
    tokio::time::sleep(WATCHDOG * 2).await;
    if !held.is_held() || !step("is_locked", a.lock(&n("lock")).unwrap().is_locked().await)? {
        return Err("watchdog: the lock was not renewed".into());
    }
    step(
        "hold_count",
        a.lock(&n("lock"))
            .unwrap()
            .with_owner(held.owner())
            .hold_count()
            .await,
    )?;
    step(
        "remain_time_to_live",
        a.lock(&n("lock")).unwrap().remain_time_to_live().await,
    )?;
    step("unlock", held.unlock().await)?;
    let g = woken("lock waiter", waiter, Instant::now()).await?;
    step("unlock (b)", g.unlock().await)?;

    // read-write lock: a reader woken by the write unlock, then two readers
    let rw_a = a.read_write_lock(&n("rw")).unwrap();
    let w = step("write lock", rw_a.write_lock().lock().await)?;
    let rw_b = b.read_write_lock(&n("rw")).unwrap();
    let read_b = rw_b.read_lock();
    let mut reader = tokio::spawn(async move { read_b.lock().await });
    waiting(&b, 1, "read waiter", &mut reader).await?;
    step("write unlock", w.unlock().await)?;
    let r1 = woken("read waiter", reader, Instant::now()).await?;
    let r2 = step("second read lock", rw_a.read_lock().lock().await)?;
    tokio::time::sleep(WATCHDOG).await; // a read-lock renewal
    step("read unlock", r1.unlock().await)?;
    step("read unlock (2)", r2.unlock().await)?;
    step("write is_locked", rw_a.write_lock().is_locked().await)?;

    // fair lock: waiters queue up; one gives up with another behind it (its deadline moves
    // up), the head takes the lock (the others' deadlines move up), and the next one is woken
    // through its own channel
    let f = step("fair lock", a.fair_lock(&n("fair")).unwrap().lock().await)?;
    let fair_b = b.fair_lock(&n("fair")).unwrap();
    let mut head = tokio::spawn(async move { fair_b.lock().await });
    waiting(&b, 1, "fair head waiter", &mut head).await?;
    let fair_quitter = a.fair_lock(&n("fair")).unwrap();
    let mut quitter = tokio::spawn(async move { fair_quitter.try_lock_for(Duration::from_secs(1)).await });
    waiting(&a, 1, "fair waiter that gives up", &mut quitter).await?;
    let fair_next = b.fair_lock(&n("fair")).unwrap();
    let mut next = tokio::spawn(async move { fair_next.try_lock_for(Duration::from_secs(30)).await });
    waiting(&b, 2, "second fair waiter", &mut next).await?;
    let gave_up = tokio::time::timeout(Duration::from_secs(20), quitter)
        .await
        .map_err(|_| "fair try_lock_for did not return".to_owned())?
        .map_err(|e| format!("fair try_lock_for: {e}"))?;
    if step("fair try_lock_for", gave_up)?.is_some() {
        return Err("fair try_lock_for got a held lock".into());
    }
    step("fair unlock", f.unlock().await)?;
    let fg = woken("fair head waiter", head, Instant::now()).await?;
    step("fair unlock (head)", fg.unlock().await)?;
    match woken("second fair waiter", next, Instant::now()).await? {
        Some(g) => step("fair unlock (second)", g.unlock().await)?,
        None => return Err("the second fair waiter did not get the lock".into()),
    };
    let nrf = step(
        "non-reentrant fair lock",
        a.non_reentrant_fair_lock(&n("nrfair")).unwrap().lock().await,
    )?;
    step("non-reentrant fair unlock", nrf.unlock().await)?;

    // fenced lock: tokens grow
    let f1 = step("fenced lock", a.fenced_lock(&n("fenced")).unwrap().lock().await)?;
    let t1 = f1.token();
    step("fenced unlock", f1.unlock().await)?;
    let f2 = step(
        "fenced lock (b)",
        b.fenced_lock(&n("fenced")).unwrap().lock().await,
    )?;
    if f2.token() <= t1 {
        return Err(format!("fenced tokens did not grow: {t1} then {}", f2.token()));
    }
    step("fenced unlock (b)", f2.unlock().await)?;

    // spin lock (waits by polling, releases without a message)
    let sp = step("spin lock", a.spin_lock(&n("spin")).unwrap().lock().await)?;
    let spin_b = b.spin_lock(&n("spin")).unwrap();
    let spinner = tokio::spawn(async move { spin_b.try_lock_for(Duration::from_secs(20)).await });
    step("spin unlock", sp.unlock().await)?;
    let got = tokio::time::timeout(Duration::from_secs(20), spinner)
        .await
        .map_err(|_| "spin waiter: timed out".to_owned())?
        .map_err(|e| format!("spin waiter: {e}"))?;
    match step("spin waiter", got)? {
        Some(g) => step("spin unlock (b)", g.unlock().await)?,
        None => return Err("spin waiter did not get the lock".into()),
    };

    // non-reentrant lock
    let nr = step(
        "non-reentrant lock",
        a.non_reentrant_lock(&n("nr")).unwrap().lock().await,
    )?;
    step("non-reentrant unlock", nr.unlock().await)?;

    // multi-lock over three names
    let names = [n("m1"), n("m2"), n("m3")];
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let m = step("multi lock", a.multi_lock(&refs).unwrap().lock().await)?;
    step("multi unlock", m.unlock().await)?;

    // force unlock of a read lock with more readers than the shape check reads at once
    let many = a.read_write_lock(&n("many")).unwrap();
    let mut readers = Vec::new();
    for owner in 1..=130u64 {
        let r = many
            .read_lock()
            .with_owner(owner)
            .lock_with_lease(Duration::from_secs(60))
            .await;
        readers.push(step("one of 130 read locks", r)?);
    }
    if !step(
        "read force_unlock (130 readers)",
        b.read_write_lock(&n("many"))
            .unwrap()
            .read_lock()
            .force_unlock()
            .await,
    )? {
        return Err("read force_unlock found nothing to unlock".into());
    }
    drop(readers);

    // force unlock of a lock another client holds
    let victim = step("lock to force", a.lock(&n("forced")).unwrap().lock().await)?;
    if !step("force_unlock", b.lock(&n("forced")).unwrap().force_unlock().await)? {
        return Err("force_unlock found nothing to unlock".into());
    }
    drop(victim);
    let rwv = step("write lock to force", rw_a.write_lock().lock().await)?;
    step("write force_unlock", rw_b.write_lock().force_unlock().await)?;
    drop(rwv);
    let fv = step(
        "fair lock to force",
        a.fair_lock(&n("fair")).unwrap().lock().await,
    )?;
    step(
        "fair force_unlock",
        b.fair_lock(&n("fair")).unwrap().force_unlock().await,
    )?;
    drop(fv);

    step("shutdown a", a.shutdown().await)?;
    step("shutdown b", b.shutdown().await)?;
    Ok(())
}

async fn start() -> (RedisServer, redis::aio::MultiplexedConnection) {
    let s = RedisServer::start();
    let admin = s.conn().await;
    (s, admin)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crate_works_as_a_minimal_acl_user() {
    let (s, mut admin) = start().await;
    set_user(&mut admin, &format!("~* &* {}", crate_commands())).await;
    acl_log(&mut admin).await;
    let started = Instant::now();
    exercise_ok(&s, &mut admin, "acl:").await;
    let log = acl_log(&mut admin).await;
    assert!(log.is_empty(), "denied while running every lock kind: {log:#?}");
    eprintln!(
        "every lock kind as `{USER}` ({}): ok in {:?}",
        crate_commands(),
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crate_works_with_key_patterns_narrowed_to_a_prefix() {
    let (s, mut admin) = start().await;
    set_user(
        &mut admin,
        &format!("resetchannels {NARROW_PATTERNS} {}", crate_commands()),
    )
    .await;
    acl_log(&mut admin).await;
    exercise_ok(&s, &mut admin, "acl:").await;
    let log = acl_log(&mut admin).await;
    assert!(log.is_empty(), "denied while running every lock kind: {log:#?}");

    // the narrowing is real: a lock outside the prefix is refused
    let c = user_client(&s).await.unwrap();
    let err = c
        .lock("other:lock")
        .unwrap()
        .try_lock()
        .await
        .expect_err("a lock outside the prefix is denied");
    assert!(
        err.to_string().contains("NOPERM") || err.to_string().contains("permission"),
        "{err}"
    );
    let log = acl_log(&mut admin).await;
    assert!(!log.is_empty(), "the denial is in ACL LOG");
}

/// How many rules `every_rule_is_needed` checks at once, each on a server of its own (the
/// exercise mostly waits: renewals, wake-ups).
const RULES_AT_ONCE: usize = 4;

/// The exercise as a user with every rule of `rules` but the `i`th, on a server of its own:
/// how it went, and what `ACL LOG` recorded.
async fn without_rule(rules: &[&str], i: usize) -> (String, Vec<String>) {
    let (s, mut admin) = start().await;
    let rest: Vec<&str> = rules
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, r)| *r)
        .collect();
    set_user(&mut admin, &format!("~* &* -@all {}", rest.join(" "))).await;
    acl_log(&mut admin).await;
    let r = tokio::time::timeout(Duration::from_secs(60), exercise(&s, &format!("acl{i}:"))).await;
    let log = acl_log(&mut admin).await;
    let outcome = match r {
        Ok(Ok(())) => "ran".to_owned(),
        Ok(Err(e)) => format!("failed: {e}"),
        Err(_) => "hung (1 min)".to_owned(),
    };
    (outcome, log)
}

/// Takes each rule of `CRATE_COMMANDS` away in turn: the exercise must fail or be denied
/// something (ACL LOG). Slow (one full exercise per rule, `RULES_AT_ONCE` at a time):
/// `cargo test --test acl -- --ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow (one full exercise per ACL rule, 4 at a time, ~1 min): scripts/test runs it after the suite"]
async fn every_rule_is_needed() {
    let all = crate_commands();
    let rules: Vec<&str> = all.split_whitespace().filter(|r| *r != "-@all").collect();
    let mut unneeded = Vec::new();
    let indices: Vec<usize> = (0..rules.len()).collect();
    for batch in indices.chunks(RULES_AT_ONCE) {
        let results = futures::future::join_all(batch.iter().map(|&i| without_rule(&rules, i))).await;
        for (&i, (outcome, log)) in batch.iter().zip(results) {
            let denied: Vec<&String> = log.iter().take(2).collect();
            eprintln!(
                "without {}: {outcome}; ACL LOG {} entries {denied:?}",
                rules[i],
                log.len()
            );
            if outcome == "ran" && log.is_empty() {
                unneeded.push(rules[i]);
            }
        }
    }
    assert!(unneeded.is_empty(), "rules nothing needed: {unneeded:?}");
}

// ---------------------------------------------------------------------------------------------
// Java Redisson as the same user

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redisson_works_as_the_same_user() {
    let Some(h) = java::locate_or_skip("redisson_works_as_the_same_user") else {
        return;
    };
    let (s, mut admin) = start().await;
    // the narrowed keys and channels: Redisson's keys for `acl:*` locks are the same ones
    set_user(
        &mut admin,
        &format!(
            "resetchannels {NARROW_PATTERNS} {} {REDISSON_EXTRA}",
            crate_commands()
        ),
    )
    .await;
    acl_log(&mut admin).await;
    // Redisson reads user and password from the URL (no harness option needed)
    let url = user_url(&s);
    let watchdog_ms = WATCHDOG.as_millis().to_string();
    let (mut j, _) = h
        .start(&[
            "--url",
            &url,
            "--watchdog-ms",
            &watchdog_ms,
            "--exit-grace-ms",
            "2000",
        ])
        .await;
    let rust = user_client(&s).await.unwrap();
    let name = "acl:java";

    // Java holds (renewed by Redisson's watchdog past its 1.5 s lease), a Rust waiter is woken by
    // Java's unlock message
    j.expect_call("w1", &format!("lock {name}")).await;
    let lock = rust.lock(name).unwrap();
    let mut waiter = tokio::spawn(async move { lock.lock().await });
    waiting(&rust, 1, "rust waiter", &mut waiter).await.unwrap();
    tokio::time::sleep(WATCHDOG * 2).await;
    assert_eq!(
        j.expect_call("w1", &format!("isHeldByThread {name}")).await,
        true,
        "Redisson's watchdog renewed the lock as {USER}"
    );
    j.expect_call("w1", &format!("unlock {name}")).await;
    let g = woken("rust waiter woken by Java's unlock", waiter, Instant::now())
        .await
        .unwrap();

    // a Java waiter woken by the Rust unlock: Redisson waits for the unlock message or the
    // holder's TTL, so with a 60 s lease a wake-up within WAKE_LIMIT came from the message
    g.unlock().await.unwrap();
    let g = rust
        .lock(name)
        .unwrap()
        .lock_with_lease(Duration::from_secs(60))
        .await
        .unwrap();
    let seq = j
        .send("w2", &format!("tryLock {name} 30000"))
        .unwrap_or_else(|e| panic!("{e}"));
    let channel = format!("redisson_lock__channel:{{{name}}}");
    eventually(
        Duration::from_secs(20),
        "Java subscribed to the unlock channel",
        || {
            let mut admin = admin.clone();
            let channel = channel.clone();
            async move {
                let (_, n): (String, u64) = redis::cmd("PUBSUB")
                    .arg("NUMSUB")
                    .arg(&channel)
                    .query_async(&mut admin)
                    .await
                    .unwrap();
                n >= 1
            }
        },
    )
    .await;
    let unlocked_at = Instant::now();
    g.unlock().await.unwrap();
    let got = j
        .response(seq, Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("java tryLock as {USER}: {e}"));
    let took = unlocked_at.elapsed();
    assert_eq!(got, true, "Java's tryLock got the lock");
    assert!(
        took < WAKE_LIMIT,
        "Java woken {took:?} after the Rust unlock (lease 60 s)"
    );
    j.expect_call("w2", &format!("unlock {name}")).await;

    // Java's other kinds as the user (fair lock: list/zset commands; read-write; fenced)
    j.expect_call("w1", "fairLock acl:jfair").await;
    j.expect_call("w1", "fairUnlock acl:jfair").await;
    j.expect_call("w1", "readLock acl:jrw").await;
    j.expect_call("w1", "readUnlock acl:jrw").await;
    j.expect_call("w1", "writeLock acl:jrw").await;
    j.expect_call("w1", "writeUnlock acl:jrw").await;
    let token = j.expect_call("w1", "fencedLockAndGetToken acl:jfenced").await;
    assert!(token.as_u64().is_some_and(|t| t > 0), "fencing token {token}");
    j.expect_call("w1", "fencedUnlock acl:jfenced").await;

    j.call("ctl", "exit", Duration::from_secs(20))
        .await
        .unwrap_or_else(|e| panic!("java exit as {USER}: {e}"));
    let _ = j.wait(Duration::from_secs(20)).await;
    rust.shutdown().await.unwrap();
    let log = acl_log(&mut admin).await;
    assert!(log.is_empty(), "Redisson was denied: {log:#?}");
}

/// What the synchronizers (count-down latch, semaphores) need on top of `CRATE_COMMANDS`
/// (README "Deployment checklist").
const SYNCHRONIZER_COMMANDS: &str = "+decr +decrby +incrby +persist +zrangebyscore +zcard +zcount";

/// Every synchronizer operation as the user: latch, semaphore (with its guard) and
/// permit-expirable semaphore; with `wake`, a waiter woken by a message of each (the waiters
/// send nothing the other calls do not, so checking that a rule is needed skips them: a denied
/// release would leave each waiting out `WAKE_LIMIT`).
async fn exercise_synchronizers(s: &RedisServer, wake: bool) -> Result<(), String> {
    let c = user_client(s).await?;
    let latch = step("latch", c.count_down_latch("acl:latch"))?;
    step("latch try_set_count", latch.try_set_count(1).await)?;
    let w = wake.then(|| {
        let l = latch.clone();
        tokio::spawn(async move { l.wait_for(Duration::from_secs(30)).await })
    });
    let released = Instant::now();
    step("latch count_down", latch.count_down().await)?;
    if let Some(w) = w {
        woken("latch wait", w, released).await?;
    }
    step("latch delete", latch.delete().await)?;

    let sem = step("semaphore", c.semaphore("acl:sem"))?;
    step("semaphore try_set_permits", sem.try_set_permits(1).await)?;
    let g = step("semaphore acquire", sem.acquire(1).await)?;
    let w = wake.then(|| {
        let s = sem.clone();
        tokio::spawn(async move { s.try_acquire_for(1, Duration::from_secs(30)).await.kept() })
    });
    let released = Instant::now();
    step("semaphore guard release", g.release().await)?;
    if let Some(w) = w {
        woken("semaphore waiter", w, released).await?;
    } else {
        step("semaphore try_acquire", sem.try_acquire(1).await.kept())?;
    }
    step("semaphore release_if_exists", sem.release_if_exists(1).await)?;
    step("semaphore add_permits", sem.add_permits(1).await)?;
    step("semaphore drain_permits", sem.drain_permits().await)?;
    step("semaphore available_permits", sem.available_permits().await)?;

    let pes = step("expirable semaphore", c.permit_expirable_semaphore("acl:pes"))?;
    step("expirable try_set_permits", pes.try_set_permits(1).await)?;
    let id = step(
        "expirable acquire",
        pes.acquire_with_lease(Duration::from_secs(30)).await.kept(),
    )?;
    step(
        "expirable update_lease_time",
        pes.update_lease_time(id, None).await,
    )?;
    step("expirable lease_time", pes.lease_time(id).await)?;
    let w = wake.then(|| {
        let p = pes.clone();
        tokio::spawn(async move { p.acquire().await.kept() })
    });
    let released = Instant::now();
    step("expirable release", pes.release(id).await)?;
    let id = match w {
        Some(w) => woken("expirable waiter", w, released).await?,
        None => step("expirable acquire", pes.acquire().await.kept())?,
    };
    step("expirable release_many", pes.release_many(&[id]).await)?;
    step("expirable set_permits", pes.set_permits(3).await)?;
    step("expirable add_permits", pes.add_permits(1).await)?;
    step("expirable permits", pes.permits().await)?;
    step("expirable acquired_permits", pes.acquired_permits().await)?;
    step("shutdown", c.shutdown().await)?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn synchronizers_work_with_their_extra_rules_and_need_them() {
    let (s, mut admin) = start().await;
    set_user(
        &mut admin,
        &format!("~* &* {} {SYNCHRONIZER_COMMANDS}", crate_commands()),
    )
    .await;
    acl_log(&mut admin).await;
    exercise_synchronizers(&s, true).await.unwrap();
    let log = acl_log(&mut admin).await;
    assert!(log.is_empty(), "denied while running the synchronizers: {log:#?}");

    // each extra rule is needed by something
    for rule in SYNCHRONIZER_COMMANDS.split_whitespace() {
        let _: () = redis::cmd("FLUSHALL").query_async(&mut admin).await.unwrap();
        let rules: Vec<&str> = SYNCHRONIZER_COMMANDS
            .split_whitespace()
            .filter(|r| *r != rule)
            .collect();
        let rules = rules.join(" ");
        set_user(&mut admin, &format!("~* &* {} {rules}", crate_commands())).await;
        acl_log(&mut admin).await;
        let r = tokio::time::timeout(Duration::from_secs(60), exercise_synchronizers(&s, false)).await;
        let log = acl_log(&mut admin).await;
        assert!(
            !matches!(r, Ok(Ok(()))) || !log.is_empty(),
            "without {rule} the synchronizers still ran undenied: the rule is not needed"
        );
    }
}
