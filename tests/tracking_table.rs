//! The loss watch when the server's client-tracking table is smaller than the keys this client
//! holds (`tracking-table-max-keys`): Redis then drops tracked keys to make room, and pushes an
//! invalidation for each as if it had changed. Those pushes are false alarms: no hold may be
//! reported lost while its field is in Redis, the reads they cause must stay bounded (a read
//! evicts another key, whose push causes another read: without a bound, a loop), and a real
//! loss is still reported.

mod common;

use std::time::{Duration, Instant};

use common::{command_calls, init_tracing, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Config, LossSignal, LostReason};

const HOLDS: usize = 500;
const TABLE: &str = "50";
/// The window the reads are counted over.
const WINDOW: Duration = Duration::from_secs(10);

fn config() -> Config {
    // leased holds (no renewal): every HEXISTS counted is the loss watch's
    Config::default().with_command_timeout(Duration::from_secs(2))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tracking_table_smaller_than_the_holds_costs_bounded_reads_and_no_false_loss() {
    table_smaller_than_the_holds(&[]).await;
}

/// The same where `CONFIG` is refused (a managed service): the client cannot read the table's
/// limit, and tells a full table by `INFO`'s count of tracked keys falling short of its holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_tracking_table_is_told_without_config() {
    table_smaller_than_the_holds(&["--rename-command", "CONFIG", ""]).await;
}

async fn table_smaller_than_the_holds(extra: &[&str]) {
    init_tracing();
    let mut args = vec!["--tracking-table-max-keys", TABLE];
    args.extend(extra);
    let s = RedisServer::start_with(&args);
    let mut raw = s.conn().await;
    let c = s.client(config()).await;
    let mut held = Vec::with_capacity(HOLDS);
    for i in 0..HOLDS {
        let g = c
            .lock(&format!("tt:{i}"))
            .unwrap()
            .lock_with_lease(Duration::from_secs(600))
            .await
            .unwrap();
        held.push(g);
    }
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(&mut raw)
        .await
        .unwrap();
    let tracked = info
        .lines()
        .find_map(|l| l.strip_prefix("tracking_total_keys:"))
        .unwrap_or("?")
        .trim()
        .to_owned();
    // where the tracker tracked (no echo), a full table moves tracking to the pub/sub
    // connection, where evictions are pushed (the tracker's own reads' are not)
    common::eventually(
        Duration::from_secs(10),
        "tracking on the pub/sub connection",
        || {
            let c = c.clone();
            async move { c.stats().loss_signal == LossSignal::Tracking }
        },
    )
    .await;
    // the reads over a window, once the first reads of the new holds are done
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = command_calls(&mut raw, "hexists").await;
    let started = Instant::now();
    tokio::time::sleep(WINDOW).await;
    let reads = command_calls(&mut raw, "hexists").await - before;
    let per_second = reads as f64 / started.elapsed().as_secs_f64();
    println!(
        "{HOLDS} holds, tracking table of {TABLE} keys ({tracked} tracked): {reads} HEXISTS in {:?} ({per_second:.0}/s)",
        started.elapsed()
    );
    // bounded: a key reported again soon after a read that found it in place is read when a
    // quiet time ends, which doubles from 100 ms up to the renewal period (10 s): in this window
    // three or four reads per hold, depending on where the window falls (at 0.7, 1.5, 3.1 and
    // 6.3 s after the first), and a fifth for the few whose next eviction came after a calm
    // (twice their quiet), which starts their quiet over; one per renewal period later on
    // (measured on Valkey 9.1: 1,500 to 2,034). Far from the loop of a read per eviction
    // (~50,000 a second here)
    assert!(
        reads <= 5 * HOLDS as u64,
        "{reads} reads of {HOLDS} holds in {WINDOW:?}"
    );
    for (i, g) in held.iter().enumerate() {
        assert!(
            g.is_held(),
            "hold {i}: {:?} while its field is in Redis",
            g.state()
        );
    }
    // a real loss is still reported (within a renewal period, at worst)
    let _: () = raw.del("tt:7").await.unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(15), held[7].lost())
        .await
        .expect("the deleted hold is reported lost");
    assert_eq!(reason, LostReason::OwnerGone);
    for (i, g) in held.iter().enumerate() {
        if i != 7 {
            assert!(g.is_held(), "hold {i}: {:?}", g.state());
        }
    }
    c.shutdown().await.unwrap();
}

/// A burst of new holds is not a full table: while the watch still reads them (a few thousand
/// per round), the server tracks fewer keys than the client holds, and the once-a-second check
/// must not take that for evictions. Where held keys are tracked without the echo, the client
/// keeps doing so through the burst and after it, and the server ends up tracking every key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_new_holds_is_not_a_full_table() {
    use futures::StreamExt;
    init_tracing();
    let v = common::server_version();
    if !(v.valkey || (v.major, v.minor) >= (7, 2)) {
        common::skip_unsupported(
            "a_burst_of_new_holds_is_not_a_full_table",
            "held keys are tracked without the echo only where the server tracks the keys a script reads (7.2+)",
        );
        return;
    }
    const N: usize = 80_000;
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let c = s.client(Config::default()).await;
    assert_eq!(c.stats().loss_signal, LossSignal::TrackingWithoutEcho);
    let started = Instant::now();
    let held: Vec<_> = futures::stream::iter(0..N)
        .map(|i| {
            let lock = c.lock(&format!("burst:{i}")).unwrap();
            async move { lock.lock().await.unwrap() }
        })
        .buffer_unordered(256)
        .collect()
        .await;
    eprintln!("{N} holds taken in {:?}", started.elapsed());
    common::eventually(Duration::from_secs(60), "every held key tracked", || {
        let mut raw = raw.clone();
        async move {
            let info: String = redis::cmd("INFO")
                .arg("stats")
                .query_async(&mut raw)
                .await
                .unwrap();
            info.lines()
                .find_map(|l| l.strip_prefix("tracking_total_keys:"))
                .is_some_and(|n| n.trim() == N.to_string())
        }
    })
    .await;
    assert_eq!(
        c.stats().loss_signal,
        LossSignal::TrackingWithoutEcho,
        "the burst was taken for a full tracking table"
    );
    let _: () = raw.del(held[0].key()).await.unwrap();
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(5), held[0].lost())
            .await
            .ok(),
        Some(LostReason::OwnerGone)
    );
    drop(held);
    c.shutdown().await.unwrap();
}
