//! A managed Redis service: it refuses or renames the commands an operator uses (`CONFIG`,
//! `DEBUG`, `CLIENT` and its subcommands, `ACL`, `INFO`, `CLUSTER`, `SCRIPT FLUSH`), stood in for
//! here by `rename-command` and an ACL user denied the rest. Every lock kind and synchronizer
//! works there; what needs a refused command (the loss watch's `CLIENT TRACKING`, the replica
//! count's `INFO replication`) degrades with one warning, and nothing else is said or lost.

mod common;

use common::kept::Kept;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::kinds::{self, KINDS};
use common::RedisServer;
use redisson_lock::{Client, Config, ReplicaSync, Unlocked};

/// The admin's names for the renamed commands (the service's operator keeps them).
const RENAMED: [(&str, &str); 3] = [
    ("CONFIG", "config-admin-7f3a"),
    ("DEBUG", "debug-admin-7f3a"),
    ("CLIENT", "client-admin-7f3a"),
];

/// The application user's rules: everything a lock client needs, none of the admin commands.
const APP_RULES: &str =
    "on >app-secret ~* &* +@all -@admin -@dangerous -info -acl -cluster -script|flush -monitor";

/// Every WARN (and ERROR) line the crate logs, kept for the assertions.
#[derive(Clone, Default)]
struct Logged(Arc<Mutex<Vec<u8>>>);

impl Write for Logged {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        std::io::stderr().write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logged {
    fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_works_on_a_service_that_refuses_admin_commands_with_one_warning_per_feature() {
    let logged = Logged::default();
    let writer = logged.clone();
    tracing_subscriber::fmt()
        .with_env_filter("redisson_lock=warn")
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let mut args = Vec::new();
    for (cmd, to) in RENAMED {
        args.extend(["--rename-command", cmd, to]);
    }
    let s = RedisServer::start_with(&args);
    let mut admin = s.conn().await;
    let mut rules = common::acl_rules(&mut admin, APP_RULES).await;
    let set = |rules: String| {
        let mut admin = admin.clone();
        async move {
            redis::cmd("ACL")
                .arg("SETUSER")
                .arg("app")
                .arg(rules.split_whitespace().collect::<Vec<_>>())
                .query_async::<()>(&mut admin)
                .await
        }
    };
    // a subcommand can be taken away from Redis 7 on (6.x adds them only)
    let mut flush_refused = true;
    if let Err(e) = set(rules.clone()).await {
        assert!(e.to_string().contains("-script|flush"), "ACL SETUSER: {e}");
        common::skip_unsupported(
            "every_kind_works_on_a_service_that_refuses_admin_commands (SCRIPT FLUSH refused)",
            &format!("ACL SETUSER -script|flush: {e}"),
        );
        rules = rules.replace("-script|flush", "");
        flush_refused = false;
        set(rules.clone()).await.unwrap();
    }
    let url = format!("redis://app:app-secret@127.0.0.1:{}/", s.port);
    // what the service refuses, as the application user sees it
    let mut app = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    for cmd in [
        &["CONFIG", "GET", "maxmemory"][..],
        &["CLIENT", "LIST"],
        &["INFO"],
        &["ACL", "WHOAMI"],
        &["SCRIPT", "FLUSH"],
        &["DEBUG", "SLEEP", "0"],
    ] {
        if cmd[0] == "SCRIPT" && !flush_refused {
            continue;
        }
        let r: redis::RedisResult<redis::Value> =
            redis::cmd(cmd[0]).arg(&cmd[1..]).query_async(&mut app).await;
        assert!(r.is_err(), "{cmd:?} is refused: {r:?}");
    }

    let config = Config::default().with_lock_watchdog_timeout(Duration::from_secs(3));
    let c = Client::builder()
        .url(&url)
        .config(config.clone())
        .build()
        .await
        .unwrap();
    let other = Client::builder().url(&url).config(config).build().await.unwrap();
    // every kind at once: held past the watchdog timeout (renewed), released, its waiter woken
    let runs = KINDS.map(|kind| {
        let (c, other) = (c.clone(), other.clone());
        tokio::spawn(async move {
            let name = format!("managed:{kind}");
            let g = kinds::open(kind, &c, &name).lock().await.unwrap();
            let rival = kinds::rival(kind, &other, &name);
            let waiter = tokio::spawn(async move { rival.try_lock_for(Duration::from_secs(30)).await });
            tokio::time::sleep(Duration::from_millis(3_500)).await;
            assert!(g.is_held(), "{kind}: {:?}", g.state());
            let released = Instant::now();
            assert_eq!(g.unlock().await.unwrap(), Unlocked::Released, "{kind}");
            let won = waiter.await.unwrap().unwrap().expect("the waiter gets the lock");
            assert!(released.elapsed() < Duration::from_secs(5), "{kind}: woken");
            won.unlock().await.unwrap();
        })
    });
    for r in runs {
        r.await.unwrap();
    }
    // replica confirmation needs INFO to count the replicas: refused, said once, locks work
    let confirming = Client::builder()
        .url(&url)
        .config(Config::default().with_replica_sync(ReplicaSync::Required))
        .build()
        .await
        .unwrap();
    for i in 0..3 {
        let g = confirming
            .lock(&format!("managed:sync:{i}"))
            .unwrap()
            .lock()
            .await
            .unwrap();
        g.unlock().await.unwrap();
    }
    confirming.shutdown().await.unwrap();
    let sem = c.semaphore("managed:sem").unwrap();
    assert!(sem.try_set_permits(1).await.unwrap());
    let g = sem.acquire(1).await.unwrap();
    g.release().await.unwrap();
    let latch = c.count_down_latch("managed:latch").unwrap();
    assert!(latch.try_set_count(1).await.unwrap());
    latch.count_down().await.unwrap();
    assert!(latch.wait_for(Duration::from_secs(1)).await.unwrap());
    let pes = c.permit_expirable_semaphore("managed:pes").unwrap();
    assert!(pes.try_set_permits(1).await.unwrap());
    let id = pes.acquire().await.kept().unwrap();
    pes.release(id).await.unwrap();
    other.shutdown().await.unwrap();
    c.shutdown().await.unwrap();

    let warnings: Vec<String> = logged
        .lines()
        .into_iter()
        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
        .collect();
    eprintln!("warnings: {warnings:#?}");
    let tracking = warnings
        .iter()
        .filter(|l| l.contains("CLIENT TRACKING refused"))
        .count();
    // the two clients that ran a while each said it once; the third, shut down at once, may
    // have stopped before its loss watch asked
    assert!(
        (2..=3).contains(&tracking),
        "one warning per client for the loss watch: {warnings:#?}"
    );
    let info = warnings
        .iter()
        .filter(|l| l.contains("INFO replication refused"))
        .count();
    assert_eq!(info, 1, "one warning for the replica count: {warnings:#?}");
    assert_eq!(
        warnings.len(),
        tracking + info,
        "nothing else is worth a warning: {warnings:#?}"
    );
}
