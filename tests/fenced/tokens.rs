//! Tokens are integers end to end: exact past 2^53 (where a Lua number or an `f64` rounds) in
//! the grant's reply, in the record a lost reply is settled through, and in `raise_token_to`;
//! a counter with no next token (negative, set by hand; or at `i64::MAX`) refuses the
//! acquisition before anything is written, and the client shuts down clean.

use std::time::Duration;

use redis::AsyncCommands;
use redisson_lock::{Config, Error};

use crate::common::{self, RedisServer};

/// Tokens from a counter raised into the range where Lua's numbers are no longer exact: 2^53 − 1
/// (the last exact one, then two grants that would round to one number), and 10^14 + 2 (a
/// microsecond timestamp's size, where a Lua number prints with too few digits).
#[tokio::test]
async fn tokens_past_2_pow_53_are_distinct_and_exact() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    for (name, floor) in [
        ("big:a", (1u64 << 53) - 1),
        ("big:b", 100_000_000_000_002),
        ("big:c", i64::MAX as u64 - 3),
    ] {
        let lock = client.fenced_lock(name).unwrap();
        assert_eq!(lock.raise_token_to(floor).await.unwrap(), floor);
        let (t1, g1) = lock.lock_and_get_token().await.unwrap();
        let g2 = g1.reenter().await.unwrap();
        assert_eq!(
            (t1, g2.token()),
            (floor + 1, floor + 2),
            "{name}: one more each time, exactly"
        );
        let counter: String = raw.get(format!("redisson_lock_token:{{{name}}}")).await.unwrap();
        assert_eq!(
            counter,
            (floor + 2).to_string(),
            "{name}: the counter Redis keeps"
        );
        assert_eq!(lock.get_token().await.unwrap(), Some(floor + 2));
        g2.unlock().await.unwrap();
        g1.unlock().await.unwrap();
        // raising compares exactly too: one below the counter changes nothing, one above wins
        assert_eq!(lock.raise_token_to(floor + 1).await.unwrap(), floor + 2);
        if floor + 3 < i64::MAX as u64 {
            assert_eq!(lock.raise_token_to(floor + 3).await.unwrap(), floor + 3);
        }
    }
    client.shutdown().await.unwrap();
}

/// A grant whose reply is lost (Redis paused past the command timeout) is settled
/// through its record: with a counter at 10^14 and above, the settled token is the exact one,
/// above the previous holder's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_settled_through_its_record_is_exact() {
    let s = RedisServer::start();
    let config = Config::default()
        .with_command_timeout(Duration::from_secs(1))
        .with_retry_interval(Duration::from_millis(100));
    let client = s.client(config).await;
    let lock = client.fenced_lock("settled").unwrap();
    let floor = 100_000_000_000_340u64;
    lock.raise_token_to(floor).await.unwrap();
    let (before, g) = lock.lock_and_get_token().await.unwrap();
    assert_eq!(before, floor + 1);
    g.unlock().await.unwrap();
    // the next attempt's reply would come after the command timeout (1 s): it is settled by
    // asking Redis, which answers once the pause is over (at 1.5 s, within the ask's timeout)
    common::pause_all(&s, Duration::from_millis(1_500)).await;
    let (token, g) = lock.lock_and_get_token().await.unwrap();
    assert_eq!(token, floor + 2, "the token the settled grant took, to the digit");
    assert_eq!(lock.get_token().await.unwrap(), Some(floor + 2));
    g.unlock().await.unwrap();
    client.shutdown().await.unwrap();
}

/// A counter with no next token: negative (set by hand), at `i64::MAX`, or not an integer.
/// The acquisition is refused before anything is written (no hold, no latch, the counter as it
/// was), every kind of attempt alike, and shutdown has nothing to release.
#[tokio::test]
async fn a_counter_without_a_next_token_refuses_the_acquisition_and_writes_nothing() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    for (name, value, range) in [
        ("neg", "-4".to_owned(), true),
        ("full", i64::MAX.to_string(), true),
        ("text", "abc".to_owned(), false),
    ] {
        let counter = format!("redisson_lock_token:{{{name}}}");
        let _: () = raw.set(&counter, &value).await.unwrap();
        let lock = client.fenced_lock(name).unwrap();
        let tries = [
            lock.try_lock().await.map(|g| g.is_some()),
            lock.try_lock_for(Duration::from_millis(200))
                .await
                .map(|g| g.is_some()),
            lock.lock().await.map(|_| true),
        ];
        for r in tries {
            match (r, range) {
                (Err(Error::OutOfRange { detail, .. }), true) => {
                    assert!(
                        detail.contains(&counter) && detail.contains(&value),
                        "{name}: {detail}"
                    )
                }
                (Err(Error::Redis(e)), false) => {
                    assert!(e.to_string().contains("not an integer"), "{name}: {e}")
                }
                (other, _) => panic!("{name} = {value}: {other:?}"),
            }
        }
        assert!(
            !common::key_exists(&mut raw, name).await,
            "{name}: no hold was taken"
        );
        let kept: String = raw.get(&counter).await.unwrap();
        assert_eq!(kept, value, "{name}: the counter is left as it was");
    }
    // a negative counter is below every floor: raising it is the recovery
    let neg = client.fenced_lock("neg").unwrap();
    assert_eq!(neg.raise_token_to(10).await.unwrap(), 10);
    let (t, g) = neg.lock_and_get_token().await.unwrap();
    assert_eq!(t, 11);
    g.unlock().await.unwrap();
    let started = std::time::Instant::now();
    client.shutdown().await.expect("nothing to release");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "shutdown waited {:?}",
        started.elapsed()
    );
    let left = common::leftovers(&mut raw).await;
    assert_eq!(left, Vec::<String>::new(), "no hold, latch or record left");
}
