//! A reply that does not come within the command timeout is `Error::CommandTimeout`, on every
//! path of the API: the acquisitions and reads of every lock kind, an unlock, and the
//! synchronizers' writes and reads. Redis is held still with `CLIENT PAUSE ... ALL` (it reads
//! the requests but runs none of them until the pause ends).

mod common;

use common::kept::Kept;
use std::time::Duration;

use common::kinds::{self, KINDS};
use common::{init_tracing, pause_all, RedisServer};
use redisson_lock::{Config, Error};

/// The command timeout of the client under test.
const CT: Duration = Duration::from_millis(300);

fn config() -> Config {
    Config::default()
        .with_command_timeout(CT)
        .with_retry_attempts(0)
        .with_retry_interval(Duration::from_millis(50))
}

/// `what` failed with `Error::CommandTimeout` of the client's command timeout (or of a longer
/// budget that contains it: a request sent with a replica `WAIT`).
fn timed_out<T: std::fmt::Debug>(what: &str, r: redisson_lock::Result<T>) {
    match r {
        Err(Error::CommandTimeout(d)) => assert!(d >= CT, "{what}: timed out after {d:?}"),
        other => panic!("{what}: expected Error::CommandTimeout, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_api_path_reports_a_missing_reply_as_command_timeout() {
    init_tracing();
    let s = RedisServer::start();
    let client = s.client(config()).await;
    // everything that should time out below is set up (and its scripts loaded) first
    let sem = client.semaphore("t:sem").unwrap();
    sem.try_set_permits(1).await.unwrap();
    sem.release(1).await.unwrap();
    sem.try_acquire(1).await.kept().unwrap();
    let pes = client.permit_expirable_semaphore("t:pes").unwrap();
    pes.try_set_permits(1).await.unwrap();
    let id = pes.try_acquire().await.kept().unwrap().expect("a permit");
    pes.release(id).await.unwrap();
    let latch = client.count_down_latch("t:latch").unwrap();
    latch.try_set_count(5).await.unwrap();
    latch.count_down().await.unwrap();
    for kind in KINDS {
        let g = kinds::open(kind, &client, &format!("t:warm:{kind}"))
            .lock()
            .await
            .unwrap();
        g.unlock().await.unwrap();
    }
    let held = client.lock("t:held").unwrap().lock().await.unwrap();

    let until = pause_all(&s, Duration::from_secs(30)).await;
    for kind in KINDS {
        let lock = kinds::open(kind, &client, &format!("t:{kind}"));
        timed_out(
            &format!("{kind}: try_lock_for"),
            lock.try_lock_for(Duration::ZERO).await.map(|g| g.is_some()),
        );
        timed_out(&format!("{kind}: is_locked"), lock.is_locked().await);
        timed_out(
            &format!("{kind}: remain_time_to_live"),
            lock.remain_time_to_live().await,
        );
    }
    timed_out(
        "fenced: get_token",
        client.fenced_lock("t:fenced").unwrap().get_token().await,
    );
    timed_out("unlock", held.unlock().await);
    timed_out("semaphore: try_acquire", sem.try_acquire(1).await.kept());
    timed_out("semaphore: available_permits", sem.available_permits().await);
    timed_out("semaphore: add_permits", sem.add_permits(1).await);
    timed_out("expirable semaphore: try_acquire", pes.try_acquire().await.kept());
    timed_out(
        "expirable semaphore: available_permits",
        pes.available_permits().await,
    );
    timed_out("latch: count_down", latch.count_down().await);
    timed_out("latch: count", latch.count().await);
    timed_out(
        "latch: try_set_count",
        client
            .count_down_latch("t:latch2")
            .unwrap()
            .try_set_count(1)
            .await,
    );
    assert!(
        std::time::Instant::now() < until,
        "every request above was sent while Redis was paused"
    );
}
