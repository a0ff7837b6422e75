//! Tokens across Redis restarts, as the database sees them. With persistence the counter
//! `redisson_lock_token:{N}` comes back and every new token is above every fence the database
//! stored. Without it the counter starts again at 1: the database refuses every new holder (safe,
//! but stuck) until `raise_token_to` lifts the counter past its highest fence.

use redis::AsyncCommands;
use redisson_lock::{Config, Error, RFencedLock};

use crate::common::RedisServer;
use crate::orders::{Begin, Charge, Guard, Orders, Refusal};
use crate::TempDb;

const AMOUNT: i64 = 4_200;

/// One holder's turn on `order`: lock (watchdog mode), claim and read, charge if pending,
/// unlock. Returns the token and what the charge did (`None`: the order was paid already).
async fn turn(lock: &RFencedLock, orders: &mut Orders, order: i64) -> (u64, Begin, Option<Charge>) {
    let (token, guard) = lock.lock_and_get_token().await.unwrap();
    let found = orders.begin(order, token, Guard::Fence).unwrap();
    let charge = match found {
        Begin::Pending { amount_cents } => Some(
            orders
                .charge(order, amount_cents, token, "rust", Guard::Fence)
                .unwrap(),
        ),
        Begin::Paid | Begin::Stale { .. } => None,
    };
    guard.unlock().await.unwrap();
    (token, found, charge)
}

/// AOF with `appendfsync always` and a SIGKILL, then RDB with a clean `SHUTDOWN SAVE`: after
/// each restart the next token is above the database's highest fence, so the next holder's
/// claim and charge are accepted. (RDB snapshots alone lose the increments since the last
/// snapshot on a crash: a SIGKILL there is the restart without persistence below.)
#[tokio::test]
async fn tokens_never_go_back_for_the_database_across_restarts_with_persistence() {
    let runs: [(&str, &[&str], bool); 2] = [
        ("aof", &["--appendonly", "yes", "--appendfsync", "always"], false),
        ("rdb", &["--save", "3600 1"], true),
    ];
    for (what, args, graceful) in runs {
        let mut s = RedisServer::start_with(args);
        let client = s.client(Config::default()).await;
        let lock = client.fenced_lock("order:pay").unwrap();
        let db = TempDb::new();
        let mut orders = db.open();
        let mut order = 0;
        for restart in 0..2 {
            for _ in 0..3 {
                order += 1;
                orders.add_order(order, AMOUNT).unwrap();
                let (_, _, charge) = turn(&lock, &mut orders, order).await;
                assert_eq!(charge, Some(Charge::Written), "{what}");
            }
            let highest = orders.highest_fence().unwrap();
            if graceful {
                let mut raw = s.conn().await;
                // the server exits while answering: the reply is lost, the snapshot written
                let _ = redis::cmd("SHUTDOWN")
                    .arg("SAVE")
                    .query_async::<()>(&mut raw)
                    .await;
            }
            s.restart();
            let mut raw = s.conn().await;
            let counter: Option<u64> = raw.get("redisson_lock_token:{order:pay}").await.unwrap();
            assert_eq!(
                counter,
                Some(highest),
                "{what}, restart {restart}: the counter came back"
            );
            // a new holder on an order the database has seen: its token is above every fence
            let (token, found, charge) = turn(&lock, &mut orders, 1).await;
            assert!(
                token > highest,
                "{what}: token {token} after fences up to {highest}"
            );
            assert_eq!(
                (found, charge),
                (Begin::Paid, None),
                "{what}: claimed, and paid already"
            );
            assert_eq!(orders.fence(1).unwrap(), token);
        }
        client.shutdown().await.unwrap();
    }
}

/// Without persistence the counter restarts at 1, below the fence the order stored: every new
/// holder's claim and charge is refused — Java's too, it reads the same counter — however many
/// come. `raise_token_to(highest fence)` ends it: the next token is above every fence, and the
/// database accepts the holder again.
#[tokio::test]
async fn a_counter_that_went_back_stalls_the_database_until_raised_past_its_fences() {
    let mut s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.fenced_lock("order:1").unwrap();
    let db = TempDb::new();
    let mut orders = db.open();
    orders.add_order(1, AMOUNT).unwrap();
    // five holders claim the order and give up (the payment provider is down): its fence is 5
    for _ in 0..5 {
        let (token, guard) = lock.lock_and_get_token().await.unwrap();
        assert_eq!(
            orders.begin(1, token, Guard::Fence).unwrap(),
            Begin::Pending { amount_cents: AMOUNT }
        );
        guard.unlock().await.unwrap();
    }
    let highest = orders.highest_fence().unwrap();
    assert_eq!(highest, 5);
    s.restart(); // the counter is gone
    for expected in 1..=2 {
        let (token, guard) = lock.lock_and_get_token().await.unwrap();
        assert_eq!(token, expected, "the counter started again");
        assert_eq!(
            orders.begin(1, token, Guard::Fence).unwrap(),
            Begin::Stale { fence: highest },
            "refused: the order has seen higher tokens"
        );
        assert_eq!(
            orders.charge(1, AMOUNT, token, "rust", Guard::Fence).unwrap(),
            Charge::Refused(Refusal::StaleToken {
                token,
                fence: highest
            })
        );
        guard.unlock().await.unwrap();
    }
    assert!(orders.payments(1).unwrap().is_empty(), "safe, but stuck");
    // the recovery: raise the counter past the database's highest fence
    assert_eq!(lock.raise_token_to(highest).await.unwrap(), highest);
    let (token, found, charge) = turn(&lock, &mut orders, 1).await;
    assert_eq!(token, highest + 1);
    assert_eq!(found, Begin::Pending { amount_cents: AMOUNT });
    assert_eq!(charge, Some(Charge::Written));
    client.shutdown().await.unwrap();
}

/// `raise_token_to` never lowers the counter and is idempotent; a floor of 0 creates nothing;
/// bad input and a key of another type are typed errors that leave Redis as it was.
#[tokio::test]
async fn raise_token_to_never_lowers_the_counter() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.fenced_lock("raise").unwrap();
    let counter = "redisson_lock_token:{raise}";
    assert_eq!(lock.raise_token_to(0).await.unwrap(), 0);
    assert!(
        !crate::common::key_exists(&mut raw, counter).await,
        "a floor of 0 writes nothing"
    );
    assert_eq!(lock.raise_token_to(41).await.unwrap(), 41);
    assert_eq!(lock.get_token().await.unwrap(), Some(41));
    assert_eq!(lock.raise_token_to(41).await.unwrap(), 41, "idempotent");
    assert_eq!(lock.raise_token_to(7).await.unwrap(), 41, "never lower");
    let (token, guard) = lock.lock_and_get_token().await.unwrap();
    assert_eq!(token, 42);
    guard.unlock().await.unwrap();
    assert_eq!(lock.raise_token_to(40).await.unwrap(), 42);
    assert_eq!(
        raw.pttl::<_, i64>(counter).await.unwrap(),
        -1,
        "no TTL, like INCR's"
    );
    // the largest floor that leaves a next token below i64::MAX; above it nothing is sent
    let max = i64::MAX as u64 - 1;
    assert!(matches!(
        lock.raise_token_to(max + 1).await,
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(lock.get_token().await.unwrap(), Some(42));
    assert_eq!(lock.raise_token_to(max).await.unwrap(), max);
    // a counter that is not one
    let other = client.fenced_lock("raise:hash").unwrap();
    let _: () = raw
        .hset("redisson_lock_token:{raise:hash}", "f", 1)
        .await
        .unwrap();
    match other.raise_token_to(5).await {
        Err(Error::WrongType { key }) => assert_eq!(key, "redisson_lock_token:{raise:hash}"),
        r => panic!("a hash under the counter's name: {r:?}"),
    }
    let text = client.fenced_lock("raise:text").unwrap();
    let _: () = raw.set("redisson_lock_token:{raise:text}", "abc").await.unwrap();
    assert!(matches!(text.raise_token_to(5).await, Err(Error::Redis(_))));
    let kept: String = raw.get("redisson_lock_token:{raise:text}").await.unwrap();
    assert_eq!(kept, "abc", "left as it was");
    client.shutdown().await.unwrap();
}
