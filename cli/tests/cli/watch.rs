//! `watch`: the unlock messages of every channel a lock may use, and the lock's state, printed
//! live.

use std::time::Duration;

use redis::AsyncCommands;
use redisson_lock::Config;

use super::Spawned;
use crate::common::RedisServer;

#[tokio::test]
async fn watch_prints_unlock_events_live() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let lock = c.lock("watched").unwrap();
    let g = lock.lock().await.unwrap();

    let mut w = Spawned::start(&s, &["--json", "watch", "watched", "--interval", "200ms"]);
    w.event(Duration::from_secs(20), "watching").await;
    let state = w.event(Duration::from_secs(20), "state").await;
    assert_eq!(state["holders"][0]["field"], g.field());

    g.unlock().await.unwrap();
    let m = w.event(Duration::from_secs(20), "message").await;
    assert_eq!(m["channel"], "redisson_lock__channel:{watched}");
    assert_eq!(m["message"], "0");
    assert_eq!(m["sharded"], false);
    let state = w.event(Duration::from_secs(20), "state").await;
    assert_eq!(state["locked"], false);

    // the read-write channel (a write unlock publishes 1)
    let rw = c.read_write_lock("watched").unwrap();
    let wg = rw.write_lock().lock().await.unwrap();
    wg.unlock().await.unwrap();
    let m = w.event(Duration::from_secs(20), "message").await;
    assert_eq!(m["channel"], "redisson_rwlock:{watched}");
    assert_eq!(m["message"], "1");

    // sharded pub/sub (what Redisson uses in a cluster) works on a standalone Redis 7 too
    let mut raw = s.conn().await;
    let spublish = redis::cmd("SPUBLISH")
        .arg("redisson_lock__channel:{watched}")
        .arg("0")
        .query_async::<i64>(&mut raw)
        .await;
    match spublish {
        Ok(_) => {
            let m = w.event(Duration::from_secs(20), "message").await;
            assert_eq!(m["sharded"], true);
            assert_eq!(m["message"], "0");
        }
        // Redis 6: no sharded pub/sub
        Err(e) if crate::common::is_unknown_command(&e) => crate::common::skip_unsupported(
            "watch_prints_unlock_events_live (its SPUBLISH check)",
            &format!("no sharded pub/sub: SPUBLISH: {e}"),
        ),
        Err(e) => panic!("SPUBLISH: {e}"),
    }

    // a fair lock's per-waiter channel (pattern subscription)
    let _: i64 = raw
        .publish("redisson_lock__channel:{watched}:abc:7", "0")
        .await
        .unwrap();
    let m = w.event(Duration::from_secs(20), "message").await;
    assert_eq!(m["channel"], "redisson_lock__channel:{watched}:abc:7");
    assert!(m["meaning"].as_str().unwrap().contains("abc:7"), "{m}");

    w.signal("-INT");
    assert_eq!(w.exit_code(Duration::from_secs(20)).await, Some(0));

    // human output
    let g = lock.lock().await.unwrap();
    let mut w = Spawned::start(&s, &["watch", "watched"]);
    w.line_where(Duration::from_secs(20), "the watching line", |l| {
        l.starts_with("watching watched")
    })
    .await;
    g.unlock().await.unwrap();
    let line = w
        .line_where(Duration::from_secs(20), "the unlock line", |l| {
            l.contains("message 0")
        })
        .await;
    assert!(
        line.contains("redisson_lock__channel:{watched}") && line.contains("unlock"),
        "{line}"
    );
}
