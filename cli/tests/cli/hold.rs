//! `hold`: the Redisson hash it writes, releasing on Ctrl-C or after `--for`, giving up after
//! `--wait`, and the other lock kinds (`--write`, `--read`, `--fenced`, `--spin`,
//! `--non-reentrant`, `--fair`).

use std::time::{Duration, Instant};

use redis::AsyncCommands;
use redisson_lock::Config;

use super::{hgetall, json_lines, run, Spawned};
use crate::common::{eventually, uuid_field_regex, RedisServer};

#[tokio::test]
async fn hold_creates_the_redisson_hash_and_releases_on_ctrl_c() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;

    let mut hold = Spawned::start(&s, &["--json", "hold", "order:42"]);
    let acquired = hold.event(Duration::from_secs(20), "acquired").await;
    assert_eq!(acquired["name"], "order:42");
    let field = acquired["field"].as_str().expect("field").to_owned();
    assert!(uuid_field_regex().is_match(&field), "field {field:?}");
    assert!(acquired["ts_ms"].as_u64().is_some(), "{acquired}");

    let t: String = redis::cmd("TYPE")
        .arg("order:42")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(t, "hash");
    assert_eq!(
        hgetall(&mut raw, "order:42").await,
        vec![(field.clone(), "1".to_owned())]
    );
    let pttl: i64 = raw.pttl("order:42").await.unwrap();
    assert!(
        (25_000..=30_000).contains(&pttl),
        "PTTL in watchdog mode = {pttl}"
    );

    hold.signal("-INT");
    let released = hold.event(Duration::from_secs(20), "released").await;
    assert_eq!(released["field"], field.as_str());
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));
    let exists: i64 = raw.exists("order:42").await.unwrap();
    assert_eq!(exists, 0, "released on Ctrl-C");

    // --lease: no watchdog, the TTL is the lease; --for releases by itself.
    let r = run(&s, &["hold", "leased", "--lease", "5s", "--for", "300ms"]).await;
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("acquired leased"), "{}", r.stdout);
    assert!(r.stdout.contains("released leased"), "{}", r.stdout);

    let mut hold = Spawned::start(&s, &["hold", "leased2", "--lease", "5s", "--owner", "77"]);
    hold.line_where(Duration::from_secs(20), "acquired", |l| l.starts_with("acquired"))
        .await;
    let fields = hgetall(&mut raw, "leased2").await;
    assert_eq!(fields.len(), 1);
    assert!(
        fields[0].0.ends_with(":77"),
        "--owner 77 gives field {:?}",
        fields[0].0
    );
    let pttl: i64 = raw.pttl("leased2").await.unwrap();
    assert!((3_000..=5_000).contains(&pttl), "PTTL with --lease 5s = {pttl}");
    hold.signal("-TERM");
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));

    // --write / --read: the read-write lock's hash shape
    let mut w = Spawned::start(&s, &["--json", "hold", "doc", "--write", "--owner", "3"]);
    let acquired = w.event(Duration::from_secs(20), "acquired").await;
    let wfield = acquired["field"].as_str().unwrap().to_owned();
    assert!(wfield.ends_with(":3:write"), "{wfield}");
    assert_eq!(
        hgetall(&mut raw, "doc").await,
        vec![(wfield, "1".to_owned()), ("mode".to_owned(), "write".to_owned())]
    );
    w.signal("-INT");
    assert_eq!(w.exit_code(Duration::from_secs(20)).await, Some(0));
    let mut r = Spawned::start(&s, &["--json", "hold", "doc", "--read", "--owner", "4"]);
    let acquired = r.event(Duration::from_secs(20), "acquired").await;
    let rfield = acquired["field"].as_str().unwrap().to_owned();
    assert!(rfield.ends_with(":4"), "{rfield}");
    assert_eq!(
        hgetall(&mut raw, "doc").await,
        vec![
            (rfield.clone(), "1".to_owned()),
            ("mode".to_owned(), "read".to_owned())
        ]
    );
    let t: i64 = raw
        .pttl(format!("{{doc}}:{rfield}:rwlock_timeout:1"))
        .await
        .unwrap();
    assert!((25_000..=30_000).contains(&t), "read timeout key PTTL {t}");
    r.signal("-INT");
    assert_eq!(r.exit_code(Duration::from_secs(20)).await, Some(0));
    let exists: i64 = raw.exists("doc").await.unwrap();
    assert_eq!(exists, 0);
}

#[tokio::test]
async fn hold_wait_exits_3_when_not_acquired_in_time() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let g = c.lock("busy").unwrap().lock().await.unwrap();

    let started = Instant::now();
    let r = run(&s, &["hold", "busy", "--wait", "400ms"]).await;
    let took = started.elapsed();
    assert_eq!(r.code, Some(3), "stdout {} stderr {}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("not acquired"), "{}", r.stdout);
    assert!(took >= Duration::from_millis(400), "gave up after {took:?}");

    let r = run(&s, &["--json", "hold", "busy", "--wait", "100ms"]).await;
    assert_eq!(r.code, Some(3));
    assert_eq!(json_lines(&r.stdout)[0]["event"], "not-acquired");

    // Ctrl-C while still waiting: exit 130, nothing acquired
    let mut waiting = Spawned::start(&s, &["--json", "hold", "busy"]);
    let mut raw = s.conn().await;
    eventually(Duration::from_secs(20), "the waiting hold subscribes", || {
        let mut raw = raw.clone();
        async move {
            let v: Vec<(String, i64)> = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg("redisson_lock__channel:{busy}")
                .query_async(&mut raw)
                .await
                .unwrap();
            v[0].1 >= 1
        }
    })
    .await;
    waiting.signal("-INT");
    waiting.event(Duration::from_secs(20), "interrupted").await;
    assert_eq!(waiting.exit_code(Duration::from_secs(20)).await, Some(130));

    // still held by us, untouched
    assert_eq!(
        hgetall(&mut raw, "busy").await,
        vec![(g.field().to_owned(), "1".to_owned())]
    );
    g.unlock().await.unwrap();
    let r = run(&s, &["hold", "busy", "--wait", "2s", "--for", "10ms"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[tokio::test]
async fn hold_takes_the_other_kinds() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;

    // --fenced prints the token, and tokens grow
    let r = run(&s, &["hold", "fenced", "--fenced", "--for", "10ms"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("fencing token 1"), "{}", r.stdout);
    let r = run(&s, &["--json", "hold", "fenced", "--fenced", "--for", "10ms"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let acquired = &json_lines(&r.stdout)[0];
    assert_eq!(
        (acquired["side"].as_str(), acquired["token"].as_u64()),
        (Some("fenced"), Some(2))
    );
    let token: String = raw.get("redisson_lock_token:{fenced}").await.unwrap();
    assert_eq!(token, "2");

    // --spin: a waiting spin hold gets in by polling (nothing is published)
    let g = c.spin_lock("spun").unwrap().lock().await.unwrap();
    let mut waiting = Spawned::start(&s, &["--json", "hold", "spun", "--spin", "--for", "10ms"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    g.unlock().await.unwrap();
    let acquired = waiting.event(Duration::from_secs(20), "acquired").await;
    assert_eq!(acquired["side"], "spin");
    waiting.event(Duration::from_secs(20), "released").await;
    assert_eq!(waiting.exit_code(Duration::from_secs(20)).await, Some(0));

    // --non-reentrant: the CLI is another client (another client id), so our owner 9 is not its
    // owner 9: it waits like any other owner, and takes the lock once it is free
    let held = c.non_reentrant_lock("nr").unwrap().with_owner(9);
    let g = held.lock().await.unwrap();
    let field = g.field().to_owned();
    let (client_id, owner) = field.rsplit_once(':').unwrap();
    assert_eq!(client_id, c.id());
    let r = run(&s, &["hold", "nr", "--non-reentrant", "--wait", "100ms"]).await;
    assert_eq!(r.code, Some(3), "another client's owner just waits: {}", r.stderr);
    g.unlock().await.unwrap();
    let r = run(
        &s,
        &["hold", "nr", "--non-reentrant", "--owner", owner, "--for", "10ms"],
    )
    .await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);

    // at most one kind flag
    let r = run(&s, &["hold", "x", "--spin", "--fenced"]).await;
    assert_eq!(r.code, Some(2), "a usage error");
    assert!(r.stderr.contains("cannot be used with"), "{}", r.stderr);

    // --kind names every kind the library has; each hold is of that kind
    for kind in redisson_lock::AnyKind::ALL {
        let arg = kind.label().replace(' ', "-");
        let r = run(&s, &["--json", "hold", "kinds", "--kind", &arg, "--for", "10ms"]).await;
        assert_eq!(r.code, Some(0), "{arg}: {}", r.stderr);
        assert_eq!(json_lines(&r.stdout)[0]["side"], kind.label(), "{arg}");
    }
    let r = run(&s, &["hold", "x", "--kind", "mutex"]).await;
    assert_eq!(r.code, Some(2), "a usage error: {}", r.stderr);
    let help = run(&s, &["hold", "--help"]).await;
    assert!(
        help.stdout.contains("non-reentrant-fair"),
        "the values are listed: {}",
        help.stdout
    );
    let r = run(&s, &["hold", "x", "--kind", "fair", "--spin"]).await;
    assert_eq!(r.code, Some(2), "--kind and a kind flag: {}", r.stderr);
}

#[tokio::test]
async fn hold_fair_queues_and_leaves_the_queue_on_ctrl_c() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let raw = s.conn().await;
    let g = c.fair_lock("fq").unwrap().lock().await.unwrap();
    let mut waiting = Spawned::start(&s, &["--json", "hold", "fq", "--fair"]);
    eventually(Duration::from_secs(20), "the CLI waiter queued up", || {
        let mut raw = raw.clone();
        async move {
            let q: Vec<String> = raw.lrange("redisson_lock_queue:{fq}", 0, -1).await.unwrap();
            q.len() == 1
        }
    })
    .await;
    waiting.signal("-INT");
    waiting.event(Duration::from_secs(20), "interrupted").await;
    assert_eq!(waiting.exit_code(Duration::from_secs(20)).await, Some(130));
    let mut raw = raw;
    let q: Vec<String> = raw.lrange("redisson_lock_queue:{fq}", 0, -1).await.unwrap();
    assert!(
        q.is_empty(),
        "the interrupted waiter left the queue before exiting: {q:?}"
    );
    let z: Vec<String> = raw.zrange("redisson_lock_timeout:{fq}", 0, -1).await.unwrap();
    assert!(z.is_empty(), "{z:?}");
    g.unlock().await.unwrap();
    // served in order: a waiting CLI fair hold gets it when we release
    let g = c.fair_lock("fq").unwrap().lock().await.unwrap();
    let mut next = Spawned::start(&s, &["--json", "hold", "fq", "--fair", "--for", "10ms"]);
    eventually(Duration::from_secs(20), "queued", || {
        let mut raw = raw.clone();
        async move { raw.llen::<_, usize>("redisson_lock_queue:{fq}").await.unwrap() == 1 }
    })
    .await;
    g.unlock().await.unwrap();
    assert_eq!(
        next.event(Duration::from_secs(20), "acquired").await["side"],
        "fair"
    );
    assert_eq!(next.exit_code(Duration::from_secs(20)).await, Some(0));
}
