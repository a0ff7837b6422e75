//! The stale write, refused. A fenced lock's holder A pauses past its lease, B takes the lock
//! with the next token, and both charge the same order in the database of
//! `examples/fenced_write/orders.rs` (SQLite), in every order their statements can come in.
//!
//! The invariant: an order is charged at most once (one `payments` row). Each test also runs its
//! interleaving without the guard — or with the fence checked only at write time — and shows the
//! double charge happen, so every check here can fail.
//!
//! A's pause is real time, not a mocked clock: A takes the lock with a short lease and then does
//! nothing until the lease has run out in Redis — B's `lock` can only return then — and A's
//! guard has reported the loss.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use redisson_lock::{Client, Config, Error, FencedGuard, LostReason, RFencedLock};

use crate::common::RedisServer;
use crate::orders::{Begin, Charge, Guard, Orders, Refusal};
use crate::TempDb;

/// The price of every order, in cents.
const AMOUNT: i64 = 4_200;
/// A's lease: it runs out while A does nothing.
const LEASE: Duration = Duration::from_millis(300);
/// B's lease: longer than anything B does.
const B_LEASE: Duration = Duration::from_secs(10);
const GUARDS: [Guard; 3] = [Guard::Unguarded, Guard::Fence, Guard::IdempotencyKey];
const PENDING: Begin = Begin::Pending { amount_cents: AMOUNT };

/// A's and B's services: a client each.
async fn services(s: &RedisServer) -> [Client; 2] {
    [
        s.client(Config::default()).await,
        s.client(Config::default()).await,
    ]
}

fn order_lock(c: &Client, order: i64) -> RFencedLock {
    c.fenced_lock(&format!("order:{order}")).unwrap()
}

/// The stall: A takes the order's lock with `lease` and starts on the order (pending); then A
/// does nothing while B waits for the lock and gets it once A's lease has run out in Redis, with
/// the next token. A's guard reports the loss meanwhile — to a task that was not running.
/// Returns (A's token, A's guard, B's token, B's guard).
async fn a_stalls_past_its_lease(
    services: &[Client; 2],
    orders_a: &Orders,
    order: i64,
    guard: Guard,
    lease: Duration,
) -> (u64, FencedGuard, u64, FencedGuard) {
    let (ta, ga) = order_lock(&services[0], order)
        .lock_with_lease_and_get_token(lease)
        .await
        .unwrap();
    assert_eq!(orders_a.begin(order, ta, guard).unwrap(), PENDING);
    let (tb, gb) = order_lock(&services[1], order)
        .lock_with_lease_and_get_token(B_LEASE)
        .await
        .unwrap();
    assert_eq!(tb, ta + 1, "one counter: B's token follows A's");
    let why = tokio::time::timeout(Duration::from_secs(5), ga.lost())
        .await
        .expect("A's guard reports the end of its lease");
    assert_eq!(why, LostReason::LeaseExpired);
    (ta, ga, tb, gb)
}

/// The workers of the order's payments, oldest first.
fn payers(orders: &Orders, order: i64) -> Vec<String> {
    orders
        .payments(order)
        .unwrap()
        .into_iter()
        .map(|p| p.worker)
        .collect()
}

fn duplicate(order: i64) -> Charge {
    Charge::Refused(Refusal::DuplicateRequest {
        request_id: format!("charge:order:{order}"),
    })
}

/// A pauses past its lease; B takes the lock, finds the order pending and charges it; then A
/// wakes and charges. A fence or an idempotency key refuses A's write; without a guard the order
/// is charged twice.
#[tokio::test]
async fn a_holder_paused_past_its_lease_is_refused_after_the_next_holder_wrote() {
    let s = RedisServer::start();
    let services = services(&s).await;
    let db = TempDb::new();
    let (mut orders_a, mut orders_b) = (db.open(), db.open());
    for (order, guard) in (1..).zip(GUARDS) {
        orders_a.add_order(order, AMOUNT).unwrap();
        let (ta, ga, tb, gb) = a_stalls_past_its_lease(&services, &orders_a, order, guard, LEASE).await;
        assert_eq!(orders_b.begin(order, tb, guard).unwrap(), PENDING);
        assert_eq!(
            orders_b.charge(order, AMOUNT, tb, "B", guard).unwrap(),
            Charge::Written
        );
        gb.unlock().await.unwrap();
        // A wakes up and writes what it was about to write
        let late = orders_a.charge(order, AMOUNT, ta, "A", guard).unwrap();
        assert!(
            matches!(ga.unlock().await, Err(Error::NotHeld { .. })),
            "A's lease ran out"
        );
        let paid = payers(&orders_a, order);
        match guard {
            Guard::Unguarded => {
                assert_eq!(late, Charge::Written, "without a guard the stale write lands");
                assert_eq!(paid, ["B", "A"], "the double charge");
            }
            Guard::Fence => {
                assert_eq!(
                    late,
                    Charge::Refused(Refusal::StaleToken { token: ta, fence: tb })
                );
                assert_eq!(paid, ["B"]);
                assert_eq!(orders_a.fence(order).unwrap(), tb);
            }
            Guard::IdempotencyKey => {
                assert_eq!(late, duplicate(order));
                assert_eq!(paid, ["B"]);
            }
        }
    }
}

/// A pauses past its lease; B takes the lock and starts on the order (pending); A wakes and
/// charges *before* B does; then B charges. With the fence, B's claim came first, so A is
/// refused and B charges; with an idempotency key A's charge is the one that lands and B's is
/// refused; without a guard both land. And the fence checked only at write time — B reading
/// without claiming — lets both through: A's token is the highest the row has seen when A writes.
/// That is why a holder claims the row before it reads it.
#[tokio::test]
async fn a_stale_write_between_the_next_holders_read_and_write_is_refused_once_it_claimed() {
    let s = RedisServer::start();
    let services = services(&s).await;
    let db = TempDb::new();
    let (mut orders_a, mut orders_b) = (db.open(), db.open());
    // (guard, whether B claims before it reads)
    let runs = [
        (Guard::Unguarded, false),
        (Guard::Fence, true),
        (Guard::IdempotencyKey, false),
        (Guard::Fence, false),
    ];
    for (order, (guard, claims)) in (1..).zip(runs) {
        orders_a.add_order(order, AMOUNT).unwrap();
        let (ta, ga, tb, gb) = a_stalls_past_its_lease(&services, &orders_a, order, guard, LEASE).await;
        let b_found = if claims {
            orders_b.begin(order, tb, guard).unwrap()
        } else {
            orders_b.read(order).unwrap()
        };
        assert_eq!(b_found, PENDING);
        let late = orders_a.charge(order, AMOUNT, ta, "A", guard).unwrap();
        let b_charge = orders_b.charge(order, AMOUNT, tb, "B", guard).unwrap();
        gb.unlock().await.unwrap();
        assert!(matches!(ga.unlock().await, Err(Error::NotHeld { .. })));
        let paid = payers(&orders_a, order);
        match (guard, claims) {
            (Guard::Fence, true) => {
                assert_eq!(
                    late,
                    Charge::Refused(Refusal::StaleToken { token: ta, fence: tb })
                );
                assert_eq!(b_charge, Charge::Written);
                assert_eq!(paid, ["B"]);
            }
            (Guard::IdempotencyKey, _) => {
                assert_eq!(late, Charge::Written, "the first charge of the operation");
                assert_eq!(b_charge, duplicate(order));
                assert_eq!(paid, ["A"], "charged once, by the stale holder: still once");
            }
            (Guard::Unguarded, _) | (Guard::Fence, false) => {
                assert_eq!((late, b_charge), (Charge::Written, Charge::Written));
                assert_eq!(
                    paid,
                    ["A", "B"],
                    "the double charge ({guard:?}, claims: {claims})"
                );
            }
        }
    }
}

/// A pauses past its lease and writes before B's first statement: to the database A's token is
/// still the newest (no one has shown it a newer one), so A's charge lands — the database cannot
/// tell a late holder that nobody followed yet from a current one. B, claiming and reading after
/// it, finds the order paid and charges nothing: the order is charged once under every guard.
#[tokio::test]
async fn a_stale_write_before_the_next_holder_starts_is_the_only_charge() {
    let s = RedisServer::start();
    let services = services(&s).await;
    let db = TempDb::new();
    let (mut orders_a, orders_b) = (db.open(), db.open());
    for (order, guard) in (1..).zip(GUARDS) {
        orders_a.add_order(order, AMOUNT).unwrap();
        let (ta, ga) = order_lock(&services[0], order)
            .lock_with_lease_and_get_token(LEASE)
            .await
            .unwrap();
        assert_eq!(orders_a.begin(order, ta, guard).unwrap(), PENDING);
        let why = tokio::time::timeout(Duration::from_secs(5), ga.lost())
            .await
            .expect("A's lease ends");
        assert_eq!(why, LostReason::LeaseExpired);
        assert_eq!(
            orders_a.charge(order, AMOUNT, ta, "A", guard).unwrap(),
            Charge::Written
        );
        let (tb, gb) = order_lock(&services[1], order)
            .lock_with_lease_and_get_token(B_LEASE)
            .await
            .unwrap();
        assert!(tb > ta);
        assert_eq!(orders_b.begin(order, tb, guard).unwrap(), Begin::Paid);
        gb.unlock().await.unwrap();
        assert_eq!(payers(&orders_a, order), ["A"], "{guard:?}");
    }
}

/// A's late charge and B's claim-read-charge race from two threads released together, 12 times
/// per guard. With the fence or an idempotency key the order is charged exactly once whichever
/// statement SQLite runs first; with the fence, A's charge lands only when it came before B's
/// claim, and then B finds the order paid. (The tests above show the same interleavings without
/// a guard charging twice.)
#[tokio::test]
async fn a_stale_write_racing_the_next_holder_charges_once() {
    let s = RedisServer::start();
    let services = services(&s).await;
    let db = TempDb::new();
    let orders_a = db.open();
    let mut order = 0;
    for guard in [Guard::Fence, Guard::IdempotencyKey] {
        let mut a_won = 0;
        for _ in 0..12 {
            order += 1;
            orders_a.add_order(order, AMOUNT).unwrap();
            let lease = Duration::from_millis(100);
            let (ta, ga, tb, gb) = a_stalls_past_its_lease(&services, &orders_a, order, guard, lease).await;
            let start = Arc::new(Barrier::new(2));
            let (path, go) = (db.path(), start.clone());
            let a = tokio::task::spawn_blocking(move || {
                let mut orders = Orders::open(&path).unwrap();
                go.wait();
                orders.charge(order, AMOUNT, ta, "A", guard).unwrap()
            });
            let (path, go) = (db.path(), start);
            let b = tokio::task::spawn_blocking(move || {
                let mut orders = Orders::open(&path).unwrap();
                go.wait();
                let found = orders.begin(order, tb, guard).unwrap();
                let charge =
                    (found == PENDING).then(|| orders.charge(order, AMOUNT, tb, "B", guard).unwrap());
                (found, charge)
            });
            let (a, (b_found, b_charge)) = (a.await.unwrap(), b.await.unwrap());
            gb.unlock().await.unwrap();
            drop(ga);
            let paid = payers(&orders_a, order);
            assert_eq!(
                paid.len(),
                1,
                "{guard:?} order {order}: A {a:?}, B found {b_found:?}, charged {b_charge:?}"
            );
            if a == Charge::Written {
                a_won += 1;
                assert_eq!(paid, ["A"]);
                if guard == Guard::Fence {
                    assert_eq!(b_found, Begin::Paid, "A's charge landed before B's claim");
                }
            } else {
                assert_eq!(paid, ["B"]);
                assert_eq!(b_charge, Some(Charge::Written));
            }
        }
        eprintln!("{guard:?}: the stale charge came first in {a_won} of 12 races");
    }
}

/// An idempotency key names the operation, not the attempt: the same order charged by A, then by
/// B (a second lock holder), then by A again (a retry after a lost reply) is charged once.
/// Request ids made per attempt guard nothing: B's charge of another order lands beside A's.
#[test]
fn an_idempotency_key_refuses_every_second_charge_of_the_operation() {
    let db = TempDb::new();
    let (mut a, mut b) = (db.open(), db.open());
    a.add_order(1, AMOUNT).unwrap();
    let key = Guard::IdempotencyKey;
    assert_eq!(a.charge(1, AMOUNT, 1, "A", key).unwrap(), Charge::Written);
    assert_eq!(b.charge(1, AMOUNT, 2, "B", key).unwrap(), duplicate(1));
    assert_eq!(a.charge(1, AMOUNT, 1, "A", key).unwrap(), duplicate(1));
    assert_eq!(payers(&a, 1), ["A"]);
    // one request id per attempt: both charges land
    a.add_order(2, AMOUNT).unwrap();
    let per_attempt = Guard::Unguarded;
    assert_eq!(a.charge(2, AMOUNT, 3, "A", per_attempt).unwrap(), Charge::Written);
    assert_eq!(b.charge(2, AMOUNT, 4, "B", per_attempt).unwrap(), Charge::Written);
    assert_eq!(payers(&a, 2), ["A", "B"]);
}
