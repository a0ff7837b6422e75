//! Single-machine fault scenarios (ids as in `docs/guarantees.md`, "Scenario ids in the tests")
//! that need a set-up of their own (the contention run in tests/faults/ covers the rest under
//! load): a paused holder process (F1, F2), a crash with AOF (F4), an unlock whose reply is late
//! (F6), a slow Redis (F14), many waiters on one lock (F15), many locks with a waiter each (F16),
//! eviction (F23).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{eventually, key_exists, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, Error, LeaseState, LostReason, Unlocked};

// ---- a holder in a process of its own, so that it can be paused with SIGSTOP ----

const HOLDER_ENV: &str = "SCENARIO_HOLDER";

/// A holder process: this test binary re-executed as `holder_process`, talking on stdin/stdout.
struct Holder {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Holder {
    /// Starts a holder that takes `lock` in watchdog mode (watchdog timeout `wd`).
    fn start(url: &str, lock: &str, wd: Duration) -> (Holder, String) {
        let exe = std::env::current_exe().unwrap();
        let mut child = Command::new(exe)
            .args([
                "--exact",
                "holder_process",
                "--nocapture",
                "--ignored",
                "--test-threads",
                "1",
            ])
            .env(HOLDER_ENV, format!("{url} {lock} {}", wd.as_millis()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // libtest may print `test holder_process ... ` on the same line first
                if let Some(at) = line.find("@@ ") {
                    if tx.send(line[at + 3..].to_owned()).is_err() {
                        break;
                    }
                }
            }
        });
        let mut h = Holder {
            child,
            stdin,
            lines: rx,
        };
        let held = h.next();
        let field = held
            .strip_prefix("HELD ")
            .unwrap_or_else(|| panic!("holder said {held:?}"))
            .to_owned();
        (h, field)
    }

    fn next(&mut self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the holder process answers")
    }

    fn ask(&mut self, cmd: &str) -> String {
        writeln!(self.stdin, "{cmd}").unwrap();
        self.stdin.flush().unwrap();
        self.next()
    }

    fn signal(&self, sig: libc::c_int) {
        let rc = unsafe { libc::kill(self.child.id() as i32, sig) };
        assert_eq!(rc, 0, "kill({sig}) failed");
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        self.signal(libc::SIGCONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The holder's side (ignored unless started by `Holder::start`).
#[test]
#[ignore = "a holder process started by the pause scenarios"]
fn holder_process() {
    let Ok(spec) = std::env::var(HOLDER_ENV) else {
        return;
    };
    let mut parts = spec.split(' ');
    let (url, lock, wd) = (
        parts.next().unwrap().to_owned(),
        parts.next().unwrap().to_owned(),
        parts.next().unwrap().parse::<u64>().unwrap(),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .try_init();
    }
    rt.block_on(async move {
        let config = Config::default().with_lock_watchdog_timeout(Duration::from_millis(wd));
        let client = Client::builder().url(url).config(config).build().await.unwrap();
        let mut guard = Some(client.lock(&lock).unwrap().lock().await.unwrap());
        println!("@@ HELD {}", guard.as_ref().unwrap().field());
        let stdin = tokio::io::BufReader::new(tokio::io::stdin());
        use tokio::io::AsyncBufReadExt;
        let mut lines = stdin.lines();
        while let Ok(Some(cmd)) = lines.next_line().await {
            let answer = match cmd.as_str() {
                "STATE" => format!("{:?}", guard.as_ref().map(|g| g.state())),
                // wait (a little) for the watchdog's verdict after a pause
                "LOST?" => {
                    let lost = guard.as_ref().unwrap().lost();
                    match tokio::time::timeout(Duration::from_millis(wd), lost).await {
                        Ok(r) => format!("LOST {r:?}"),
                        Err(_) => "HELD".to_owned(),
                    }
                }
                "UNLOCK" => match guard.take().unwrap().unlock().await {
                    Ok(u) => format!("{u:?}"),
                    Err(Error::NotHeld { .. }) => "NotHeld".to_owned(),
                    Err(e) => format!("error {e}"),
                },
                other => format!("unknown {other}"),
            };
            println!("@@ {answer}");
        }
    });
}

/// F1: the holder is paused longer than its lease. Waiters get the lock within lease + poll;
/// the holder, resumed, learns it lost the lock, its unlock is NotHeld and leaves the new
/// owner's hold alone.
#[tokio::test]
async fn f1_a_holder_paused_longer_than_its_lease() {
    let s = RedisServer::start();
    let wd = Duration::from_millis(1_500);
    let (mut holder, field) = Holder::start(&s.url(), "f1", wd);
    let client = s.client(Config::default().with_lock_watchdog_timeout(wd)).await;
    let mut raw = s.conn().await;
    let lock = client.lock("f1").unwrap();
    assert!(lock.try_lock().await.unwrap().is_none(), "the holder holds it");

    holder.signal(libc::SIGSTOP);
    let stopped = Instant::now();
    let mine = lock.lock().await.unwrap();
    let waited = stopped.elapsed();
    assert!(
        waited < wd + Duration::from_millis(1_000) + Duration::from_millis(500),
        "a waiter got in after {waited:?} (lease {wd:?} + poll interval)"
    );
    tokio::time::sleep((wd * 3 / 2).saturating_sub(waited)).await;
    holder.signal(libc::SIGCONT);

    let verdict = holder.ask("LOST?");
    assert!(
        verdict.starts_with("LOST"),
        "the resumed holder still trusts its hold: {verdict}"
    );
    assert_eq!(holder.ask("UNLOCK"), "NotHeld");
    let fields: Vec<String> = raw.hkeys("f1").await.unwrap();
    assert_eq!(
        fields,
        vec![mine.field().to_owned()],
        "the new owner's hold is intact"
    );
    assert_ne!(fields[0], field);
    assert_eq!(mine.unlock().await.unwrap(), Unlocked::Released);
}

/// Returns right after a renewal of `key`: when its TTL jumps back up (polled every 5 ms).
async fn just_renewed(raw: &mut redis::aio::MultiplexedConnection, key: &str) {
    let mut last: i64 = raw.pttl(key).await.unwrap();
    loop {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let now: i64 = raw.pttl(key).await.unwrap();
        if now > last + 100 {
            return;
        }
        last = now;
    }
}

/// F2: the holder is paused shorter than its lease (but longer than the renewal interval),
/// right after a renewal: no loss; the renewal after the resume keeps the lock.
#[tokio::test]
async fn f2_a_holder_paused_shorter_than_its_lease_keeps_it() {
    let s = RedisServer::start();
    // renewals every 2 s; the pause (2.5 s) misses one and leaves 3.5 s of TTL for the renewal
    // that runs on resume, a margin that holds on a loaded 2-core machine. The holder is often
    // stopped before it reads the reply of the renewal Redis just ran: it then resumes just
    // after the deadline its previous renewal gave it (trusted for 6 s less a 1.5 s margin), and
    // the reply it reads then must keep the hold (a renewal sent in time proves the hold lasted)
    let wd = Duration::from_millis(6_000);
    let (mut holder, field) = Holder::start(&s.url(), "f2", wd);
    let mut raw = s.conn().await;
    // pause right after a renewal
    just_renewed(&mut raw, "f2").await;
    holder.signal(libc::SIGSTOP);
    tokio::time::sleep(wd * 5 / 12).await;
    holder.signal(libc::SIGCONT);
    // the renewal missed during the pause runs at once: about 3.5 s of TTL are left, so a
    // renewal that came later than that would find the key gone and the holder would have lost
    // it (the bound is generous for a loaded machine; the check below is what matters)
    eventually(
        Duration::from_secs(5),
        "the resumed holder renewed its lock",
        || {
            let mut raw = raw.clone();
            async move { raw.pttl::<_, i64>("f2").await.unwrap() > 4_000 }
        },
    )
    .await;
    assert_eq!(holder.ask("STATE"), "Some(Held)");
    let f: Vec<String> = raw.hkeys("f2").await.unwrap();
    assert_eq!(f, vec![field]);
    assert_eq!(holder.ask("UNLOCK"), "Released");
    assert!(!key_exists(&mut raw, "f2").await);
}

/// S3: Redis stalls (SIGSTOP) right after a renewal and resumes shortly before the hold's trust
/// deadline, after the renewals sent into the stall timed out: the renewal queued when Redis
/// resumes keeps the hold. Renewals are sent again at once after a timeout, so one is always
/// queued during a stall; with a pause after each timeout, a stall ending in that pause was
/// noticed only at the deadline and cost the hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_that_ends_shortly_before_the_deadline_costs_no_hold() {
    let s = RedisServer::start();
    // watchdog 9 s: a round every 3 s; margin = the command timeout, 1.5 s, so a renewal is
    // trusted for 7.5 s from its sending (S). Rounds into the stall leave at S+3 and time out at
    // S+4.5; with a 0.75 s pause after a timeout the next would leave at S+5.25, time out at
    // S+6.75 and leave again at S+7.5, the deadline; sent at once they leave at S+4.5 and S+6,
    // and the last waits until S+7.5. The stall ends about S+7.1: in that gap, before the
    // deadline (0.35 s either way for a loaded machine).
    let config = Config::default()
        .with_lock_watchdog_timeout(Duration::from_secs(9))
        .with_command_timeout(Duration::from_millis(1_500))
        .with_loss_detection(redisson_lock::LossDetection::Renewal);
    let client = s.client(config).await;
    let g = client.lock("stall-end").unwrap().lock().await.unwrap();
    let mut raw = s.conn().await;
    just_renewed(&mut raw, "stall-end").await;
    let pid = common::faults::pid(&s.url()).await.unwrap();
    let stopped = common::faults::Stopped::new(pid).unwrap();
    tokio::time::sleep(Duration::from_millis(7_050)).await;
    drop(stopped);
    // past the deadline the stalled renewal gave (S+7.5), with room for a loaded machine
    let lost = tokio::time::timeout(Duration::from_secs(2), g.lost()).await;
    assert!(lost.is_err(), "the hold was reported lost: {lost:?}");
    assert_eq!(g.state(), LeaseState::Held);
    let ttl: i64 = raw.pttl("stall-end").await.unwrap();
    assert!(
        ttl > 1_000,
        "renewed after the stall (else gone by now): PTTL {ttl} ms"
    );
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
    client.shutdown().await.unwrap();
}

/// F4: Redis crashes (kill -9) and restarts with AOF (fsync always): the lock comes back with
/// its absolute expiry; the holder's renewal finds its field and goes on; a lock released
/// before the crash does not come back; nothing is counted twice.
#[tokio::test]
async fn f4_restart_with_aof_restores_holds() {
    let mut s = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let wd = Duration::from_millis(1_500);
    let client = s.client(Config::default().with_lock_watchdog_timeout(wd)).await;
    let kept = client.lock("f4:kept").unwrap().lock().await.unwrap();
    let gone = client.lock("f4:gone").unwrap().lock().await.unwrap();
    assert_eq!(gone.unlock().await.unwrap(), Unlocked::Released);
    s.restart(); // SIGKILL, then the same port, directory and arguments
    let mut raw = s.conn().await;
    let count: Option<String> = raw.hget("f4:kept", kept.field()).await.unwrap();
    assert_eq!(
        count.as_deref(),
        Some("1"),
        "restored from the AOF with its count"
    );
    assert!(
        !key_exists(&mut raw, "f4:gone").await,
        "a released lock does not reappear"
    );
    // several watchdog periods: renewal goes on after the reconnect
    tokio::time::sleep(wd * 2).await;
    assert!(kept.is_held(), "{:?}", kept.state());
    assert!(key_exists(&mut raw, "f4:kept").await);
    assert_eq!(kept.unlock().await.unwrap(), Unlocked::Released);
    assert!(!key_exists(&mut raw, "f4:kept").await);
}

/// F6: an unlock whose reply is late (Redis busy): its retries carry the same request id, so a
/// hold count of 2 goes to 1, not 0, and no false NotHeld is reported.
#[tokio::test]
async fn f6_an_unlock_retried_after_a_timeout_releases_once() {
    let s = RedisServer::start();
    let config = Config::default()
        .with_command_timeout(Duration::from_millis(300))
        .with_retry_interval(Duration::from_millis(100));
    let client = s.client(config).await;
    let mut raw = s.conn().await;
    let outer = client.lock("f6").unwrap().lock().await.unwrap();
    let inner = outer.reenter().await.unwrap();
    let field = outer.field().to_owned();
    let url = s.url();
    let busy =
        tokio::spawn(async move { common::faults::busy_script(&url, Duration::from_millis(1_200)).await });
    tokio::time::sleep(Duration::from_millis(100)).await; // let the script start
    assert_eq!(inner.unlock().await.unwrap(), Unlocked::Partial);
    busy.await.unwrap().unwrap();
    let count: Option<String> = raw.hget("f6", &field).await.unwrap();
    assert_eq!(count.as_deref(), Some("1"), "released once, not once per retry");
    assert!(outer.is_held());
    assert_eq!(outer.unlock().await.unwrap(), Unlocked::Released);
    eventually(Duration::from_secs(3), "the unlock latches are deleted", || {
        let mut raw = raw.clone();
        async move {
            let keys: Vec<String> = raw.keys("redisson_unlock_latch:*").await.unwrap();
            keys.is_empty()
        }
    })
    .await;
}

/// An unlock that Redis refuses for lack of memory (`maxmemory` reached, `noeviction`) did not
/// run: it is sent again, with the same request id, like every write the client repeats, and
/// lands once memory is freed within the caller's retries: released once, nothing half done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlock_refused_for_lack_of_memory_is_sent_again_and_releases_once() {
    let s = RedisServer::start();
    let config = Config::default()
        .with_command_timeout(Duration::from_millis(300))
        .with_retry_interval(Duration::from_millis(200))
        .with_retry_attempts(40);
    let client = s.client(config).await;
    let mut raw = s.conn().await;
    let outer = client.lock("oom-unlock").unwrap().lock().await.unwrap();
    let inner = outer.reenter().await.unwrap();
    let field = outer.field().to_owned();
    let oom_refusals = |raw: &redis::aio::MultiplexedConnection| {
        let mut raw = raw.clone();
        async move {
            let stats: String = redis::cmd("INFO")
                .arg("errorstats")
                .query_async(&mut raw)
                .await
                .unwrap();
            stats
                .lines()
                .find_map(|l| l.strip_prefix("errorstat_OOM:count="))
                .map_or(0, |n| n.trim().parse::<u64>().unwrap())
        }
    };
    let before = oom_refusals(&raw).await;
    for (k, v) in [("maxmemory-policy", "noeviction"), ("maxmemory", "1")] {
        let () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(k)
            .arg(v)
            .query_async(&mut raw)
            .await
            .unwrap();
    }
    let unlock = tokio::spawn(inner.unlock());
    eventually(Duration::from_secs(5), "Redis refused the unlock twice", || {
        let raw = raw.clone();
        async move { oom_refusals(&raw).await >= before + 2 }
    })
    .await;
    assert!(
        !unlock.is_finished(),
        "the unlock gave up while Redis refused it: {:?}",
        unlock.await
    );
    let count: Option<String> = raw.hget("oom-unlock", &field).await.unwrap();
    assert_eq!(
        count.as_deref(),
        Some("2"),
        "nothing is released while Redis refuses writes"
    );
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg("0")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(unlock.await.unwrap().unwrap(), Unlocked::Partial);
    let count: Option<String> = raw.hget("oom-unlock", &field).await.unwrap();
    assert_eq!(count.as_deref(), Some("1"), "released once, not once per copy");
    assert_eq!(outer.unlock().await.unwrap(), Unlocked::Released);
    assert!(!key_exists(&mut raw, "oom-unlock").await);
}

/// F14: writes paused longer than the lease: the holder reports the loss at its deadline
/// instead of silently working on; a timed wait honours its budget; nothing leaks afterwards.
#[tokio::test]
async fn f14_a_paused_redis_turns_into_a_reported_loss_and_bounded_waits() {
    let s = RedisServer::start();
    let wd = Duration::from_millis(1_500);
    let config = Config::default()
        .with_lock_watchdog_timeout(wd)
        .with_command_timeout(Duration::from_millis(300));
    let client = s.client(config).await;
    let g = client.lock("f14").unwrap().lock().await.unwrap();
    let other = client.lock("f14").unwrap();
    let url = s.url();
    let pause = tokio::spawn(async move {
        common::faults::client_pause(&url, Duration::from_millis(3_000), "WRITE").await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    let r = other.try_lock_for(Duration::from_millis(500)).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(500 + 300 + 400),
        "try_lock_for(500ms) took {took:?} while Redis was paused ({r:?})"
    );
    assert!(!matches!(r, Ok(Some(_))), "{r:?}");
    let reason = tokio::time::timeout(wd * 2, g.lost())
        .await
        .expect("the loss is reported at the deadline, not later");
    assert_eq!(reason, LostReason::RenewalFailed);
    assert_eq!(g.state(), LeaseState::Lost(LostReason::RenewalFailed));
    pause.await.unwrap().unwrap();
    assert!(matches!(g.unlock().await, Err(Error::NotHeld { .. })));
    // the lock expires in Redis within its lease after the pause; then it is free again
    let g2 = other
        .try_lock_for(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("free again");
    g2.unlock().await.unwrap();
    eventually(
        Duration::from_secs(5),
        "no subscription, hold or queued release is left",
        || {
            let c = client.clone();
            async move {
                let st = c.stats();
                st.channels == 0 && st.waiters == 0 && st.holds == 0 && st.queued_releases == 0
            }
        },
    )
    .await;
}

/// F15: many waiters on one lock in one process: one subscription, every release hands the
/// lock to a next waiter, nothing left afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f15_many_waiters_on_one_lock() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let raw = s.conn().await;
    let holder = client.lock("f15").unwrap().lock().await.unwrap();
    let n = 300;
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..n {
        let (lock, counter) = (client.lock("f15").unwrap(), counter.clone());
        tasks.push(tokio::spawn(async move {
            let g = lock.lock().await.unwrap();
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            g.unlock().await.unwrap()
        }));
    }
    eventually(Duration::from_secs(20), "every waiter subscribed", || {
        let c = client.clone();
        async move { c.stats().waiters == n }
    })
    .await;
    assert_eq!(
        client.stats().channels,
        1,
        "one subscription for all local waiters"
    );
    common::server_subscribers(
        &raw,
        "redisson_lock__channel:{f15}",
        1,
        "one server-side subscription",
    )
    .await;
    holder.unlock().await.unwrap();
    for t in tasks {
        assert_eq!(t.await.unwrap(), Unlocked::Released);
    }
    assert_eq!(counter.load(std::sync::atomic::Ordering::SeqCst), n);
    eventually(Duration::from_secs(5), "no subscription is left", || {
        let (c, mut raw) = (client.clone(), raw.clone());
        async move {
            let subs: Vec<(String, i64)> = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg("redisson_lock__channel:{f15}")
                .query_async(&mut raw)
                .await
                .unwrap();
            c.stats().channels == 0 && subs[0].1 == 0
        }
    })
    .await;
}

/// F16: thousands of distinct locks, each with a waiter: all waiters get their lock when the
/// holders release, and no subscription is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f16_many_locks_with_a_waiter_each() {
    let s = RedisServer::start();
    let holders = s.client(Config::default()).await;
    let waiters = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let n = 2_000;
    let mut held = Vec::new();
    for i in 0..n {
        held.push(holders.lock(&format!("f16:{i}")).unwrap().lock().await.unwrap());
    }
    assert_eq!(holders.stats().renewing, n);
    let mut tasks = Vec::new();
    for i in 0..n {
        let lock = waiters.lock(&format!("f16:{i}")).unwrap();
        tasks.push(tokio::spawn(async move {
            lock.lock().await.unwrap().unlock().await.unwrap()
        }));
    }
    eventually(Duration::from_secs(60), "every waiter subscribed", || {
        let c = waiters.clone();
        async move { c.stats().channels == n }
    })
    .await;
    for g in held {
        g.unlock().await.unwrap();
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), Unlocked::Released);
    }
    eventually(Duration::from_secs(20), "no subscription is left", || {
        let (c, mut raw) = (waiters.clone(), raw.clone());
        async move {
            let channels: Vec<String> = redis::cmd("PUBSUB")
                .arg("CHANNELS")
                .query_async(&mut raw)
                .await
                .unwrap();
            c.stats().channels == 0 && channels.is_empty()
        }
    })
    .await;
    assert_eq!(holders.stats().renewing, 0);
    let keys: Vec<String> = raw.keys("f16:*").await.unwrap();
    assert!(keys.is_empty());
}

/// F23: Redis evicts a held lock (memory full, `volatile-ttl`): renewal finds the field gone
/// and the holder is told; no silent split.
#[tokio::test]
async fn f23_an_evicted_lock_is_reported_lost() {
    let s = RedisServer::start();
    let wd = Duration::from_millis(1_500);
    let client = s.client(Config::default().with_lock_watchdog_timeout(wd)).await;
    let mut raw = s.conn().await;
    let g = client.lock("f23").unwrap().lock().await.unwrap();
    let used: String = redis::cmd("INFO")
        .arg("memory")
        .query_async(&mut raw)
        .await
        .unwrap();
    let used: u64 = used
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // `volatile-ttl` evicts the key with the shortest TTL first: the lock (1.5 s) before the
    // filler (1 h)
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("volatile-ttl")
        .query_async(&mut raw)
        .await
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(used + 2 * 1024 * 1024)
        .query_async(&mut raw)
        .await
        .unwrap();
    let junk = "x".repeat(16 * 1024);
    for i in 0..1_000 {
        let r: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("filler:{i}"))
            .arg(&junk)
            .arg("EX")
            .arg(3600)
            .query_async(&mut raw)
            .await;
        if r.is_err() || !key_exists(&mut raw, "f23").await {
            break;
        }
    }
    assert!(!key_exists(&mut raw, "f23").await, "the lock was evicted");
    let reason = tokio::time::timeout(wd * 2, g.lost())
        .await
        .expect("the loss is reported");
    assert_eq!(reason, LostReason::OwnerGone);
    assert!(matches!(g.unlock().await, Err(Error::NotHeld { .. })));
}
