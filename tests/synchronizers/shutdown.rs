//! `Client::shutdown()` with the synchronizers' acquisitions in flight: Redis is stopped
//! (SIGSTOP), so every request waits, unread, in its socket and runs only when Redis continues,
//! after `shutdown()` was called. Shutdown waits for those attempts, and gives back what Redis
//! granted them: once it returns, every permit is available again and nothing of the client is
//! left in Redis; every caller got `Error::Shutdown`.

use crate::common::kept::Kept;
use std::time::Duration;

use crate::common::{self, eventually, faults, init_tracing, leftovers, RedisServer};
use redisson_lock::{Config, Error};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_gives_back_what_acquisitions_in_flight_were_granted() {
    init_tracing();
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let sem = c.semaphore("sd:sem").unwrap();
    let pes = c.permit_expirable_semaphore("sd:pes").unwrap();
    assert!(sem.try_set_permits(5).await.unwrap());
    assert!(pes.try_set_permits(3).await.unwrap());
    // the scripts are loaded (a first EVALSHA answered NOSCRIPT would be sent again)
    assert!(sem.try_acquire(1).await.kept().unwrap());
    sem.release(1).await.unwrap();
    let id = pes.try_acquire().await.kept().unwrap().expect("a permit");
    pes.release(id).await.unwrap();
    common::latches_deleted(&s).await;

    let pid = faults::pid(&s.url()).await.unwrap();
    let stopped = faults::Stopped::new(pid).unwrap();
    let mut tasks: Vec<(&str, tokio::task::JoinHandle<Result<(), Error>>)> = Vec::new();
    let mut waiting = 0;
    // one at a time, each seen in Redis' socket before the next is sent
    for what in [
        "acquire",
        "try_acquire_for",
        "expirable acquire",
        "expirable acquire_many",
    ] {
        let (sem, pes) = (sem.clone(), pes.clone());
        tasks.push((
            what,
            tokio::spawn(async move {
                match what {
                    "acquire" => sem.acquire(2).await.kept(),
                    "try_acquire_for" => sem
                        .try_acquire_for(1, Duration::from_secs(600))
                        .await
                        .kept()
                        .map(drop),
                    "expirable acquire" => pes.acquire().await.kept().map(|_| ()),
                    _ => pes
                        .acquire_many(2, Some(Duration::from_secs(600)))
                        .await
                        .kept()
                        .map(|_| ()),
                }
            }),
        ));
        eventually(
            Duration::from_secs(5),
            "the request waits in Redis' socket",
            || {
                let port = s.port;
                async move { common::bytes_waiting_at(port) > waiting }
            },
        )
        .await;
        waiting = common::bytes_waiting_at(s.port);
    }
    let shutdown = tokio::spawn({
        let c = c.clone();
        async move { c.shutdown().await }
    });
    // Redis stays stopped a while after shutdown() began (the reported case: granted ~1 s later)
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(stopped);
    shutdown.await.unwrap().expect("shutdown gave everything back");
    for (what, t) in tasks {
        assert!(t.is_finished(), "{what}: still running after shutdown returned");
        let r = t.await.unwrap();
        assert!(matches!(r, Err(Error::Shutdown)), "{what}: {r:?}");
    }
    let count: String = redis::cmd("GET")
        .arg("sd:sem")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(count, "5", "every permit of the semaphore is back");
    let count: String = redis::cmd("GET")
        .arg("sd:pes")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(count, "3", "every permit of the expirable semaphore is back");
    assert_eq!(
        leftovers(&mut raw).await,
        vec!["sd:pes".to_owned(), "sd:sem".to_owned()],
        "no lease, latch or record is left"
    );
}
