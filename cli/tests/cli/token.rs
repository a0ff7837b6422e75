//! `raise-token`: lifts a fenced lock's token counter so that the next token passes a floor,
//! never lowers it, and refuses absurd floors and a counter key of another type without
//! writing anything.

use redis::AsyncCommands;

use super::{assert_json_error, assert_one_line_error, json_lines, run};
use crate::common::RedisServer;

#[tokio::test]
async fn raise_token_lifts_the_counter_and_never_lowers_it() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let token_key = "redisson_lock_token:{order:7}";

    // no counter and a floor of 0: nothing to raise, nothing created
    let r = run(&s, &["raise-token", "order:7", "0"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("unchanged"), "{}", r.stdout);
    assert!(!raw.exists::<_, bool>(token_key).await.unwrap());

    // two grants: the counter is 2
    for _ in 0..2 {
        let r = run(&s, &["hold", "order:7", "--fenced", "--for", "0s"]).await;
        assert_eq!(r.code, Some(0), "{}", r.stderr);
    }
    let r = run(&s, &["raise-token", "order:7", "100"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.stdout.trim(),
        format!("raised {token_key} from 2 to 100: the next acquisition takes 101")
    );
    let counter: String = raw.get(token_key).await.unwrap();
    assert_eq!(counter, "100");
    let r = run(&s, &["--json", "hold", "order:7", "--fenced", "--for", "0s"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(json_lines(&r.stdout)[0]["token"].as_u64(), Some(101));

    // a lower floor changes nothing (the JSON says what it saw)
    let r = run(&s, &["--json", "raise-token", "order:7", "50"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["event"], "raise-token");
    assert_eq!(v["key"], token_key);
    assert_eq!(
        (v["floor"].as_u64(), v["before"].as_u64(), v["after"].as_u64()),
        (Some(50), Some(101), Some(101))
    );
    assert_eq!(v["raised"], false);
    let counter: String = raw.get(token_key).await.unwrap();
    assert_eq!(counter, "101");
}

#[tokio::test]
async fn raise_token_refuses_bad_floors_and_a_counter_of_another_type() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;

    for (floor, needle) in [
        ("-1", "must not be negative"),
        ("9223372036854775807", "must be at most 9223372036854775806"),
        ("9223372036854775808", "must be at most 9223372036854775806"),
        ("1.5", "is not a whole number"),
    ] {
        let r = run(&s, &["raise-token", "x", floor]).await;
        assert_one_line_error(&r, &format!("floor {floor}"), needle);
        let r = run(&s, &["--json", "raise-token", "x", floor]).await;
        assert_json_error(&r, &format!("floor {floor} (JSON)"), "invalid_argument", needle);
    }
    assert!(!raw.exists::<_, bool>("redisson_lock_token:{x}").await.unwrap());

    // a hash where the counter belongs: refused, left as it was
    let _: () = raw.hset("redisson_lock_token:{w}", "f", "1").await.unwrap();
    let r = run(&s, &["raise-token", "w", "10"]).await;
    assert_one_line_error(&r, "a counter of another type", "another type");
    let v: Vec<(String, String)> = raw.hgetall("redisson_lock_token:{w}").await.unwrap();
    assert_eq!(v, vec![("f".to_owned(), "1".to_owned())]);
}
