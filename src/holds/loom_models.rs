//! Model checks (loom) of the turns: every interleaving of concurrent operations on one field,
//! and of shutdown, with the real table, records and `Notify` protocol.
//!
//! Redis is modelled by the field's hold count, changed only by a request, which is sent only
//! under the field's turn (as the core does). What must hold in every interleaving:
//! - a grant is planned against a known state: Redis' count is always the count the table
//!   expects (a contradiction would make the grant late or end the epoch as lost);
//! - shutdown's `wait_idle` returns only when nothing is in flight: Redis holds nothing then;
//! - a closed table wakes acquisitions waiting for a turn (a lost wake-up is a deadlock);
//! - when everyone is done, the table is empty and no turn is taken.
//!
//! Run by `scripts/test` (`LOOM_MAX_PREEMPTIONS` bounds the preemptions explored).

use loom::future::block_on;
use loom::sync::Mutex as LoomMutex;
use loom::thread;

use super::tests::{holds, names, DUMMY};
use super::*;
use crate::error::Error;

/// The field's hold count in Redis.
#[derive(Default)]
struct Redis(LoomMutex<i64>);

impl Redis {
    fn count(&self) -> i64 {
        *self.0.lock().expect("unpoisoned")
    }

    /// The grant script: one more hold; the new count.
    fn grant(&self) -> i64 {
        let mut c = self.0.lock().expect("unpoisoned");
        *c += 1;
        *c
    }

    /// The release script for `plan` (sent only for `Send`).
    fn release(&self, plan: &ReleasePlan) -> Option<Released> {
        let ReleasePlan::Send { last, .. } = plan else {
            return None;
        };
        let mut c = self.0.lock().expect("unpoisoned");
        if *last {
            *c = 0;
            return Some(Released::Gone);
        }
        *c -= 1;
        assert!(
            *c > 0,
            "a partial release was planned while Redis had only this hold"
        );
        Some(Released::StillHeld)
    }
}

/// One acquisition as the core makes it: the turn, the request, the grant recorded. `None`
/// when the table was closed (refused, or granted late and released at once).
async fn acquire(h: &Arc<Holds>, redis: &Redis) -> Option<Arc<HoldRecord>> {
    let (k, f) = names();
    let turn = match h.turn_to_acquire(&k, &f, &DUMMY).await {
        Ok(t) => t,
        Err(Error::Shutdown) => return None,
        Err(e) => panic!("a turn is refused only at shutdown: {e}"),
    };
    let need_ms = h.acquire_need(&turn, 30_000);
    let count = redis.grant();
    let g = NewHold {
        kind: &DUMMY,
        expiry: Expiry::Watchdog,
        sent_at: Instant::now(),
        need_ms,
        count,
    };
    match h.grant_passing(turn, g, false) {
        Recorded::Live(record) => Some(record),
        Recorded::Late(late) => {
            assert_eq!(
                late.why,
                LateWhy::Closed,
                "a grant planned against a known state is late only because of shutdown"
            );
            let outcome = redis.release(&late.plan).expect("a late grant is released");
            h.released(
                &late.turn,
                late.record.as_ref(),
                &late.plan,
                Instant::now(),
                outcome,
            );
            None
        }
    }
}

/// A guard's release: nothing is sent for an epoch that ended (shutdown releases those).
async fn release(h: &Arc<Holds>, redis: &Redis, record: &Arc<HoldRecord>) {
    let (k, f) = names();
    let turn = h.turn(&k, &f, &DUMMY).await;
    let plan = h.begin_release(&turn, record, Expiry::Watchdog);
    if let Some(outcome) = redis.release(&plan) {
        h.released(&turn, Some(record), &plan, Instant::now(), outcome);
    }
}

/// Acquires and releases once.
fn spawn_user(h: &Arc<Holds>, redis: &Arc<Redis>) -> thread::JoinHandle<()> {
    let (h, redis) = (h.clone(), redis.clone());
    thread::spawn(move || {
        block_on(async {
            if let Some(record) = acquire(&h, &redis).await {
                release(&h, &redis, &record).await;
            }
        })
    })
}

fn assert_empty(h: &Holds, redis: &Redis) {
    assert_eq!(redis.count(), 0, "every hold was released in Redis");
    assert!(h.is_idle(), "no turn is taken");
    assert_eq!(h.entries(), 0, "no record is left in the table");
}

#[test]
fn one_fields_requests_take_turns() {
    loom::model(|| {
        let h = holds();
        let redis = Arc::new(Redis::default());
        let users: Vec<_> = (0..2).map(|_| spawn_user(&h, &redis)).collect();
        for u in users {
            u.join().expect("user");
        }
        assert_empty(&h, &redis);
    });
}

#[test]
fn shutdown_waits_for_every_request_in_flight() {
    loom::model(|| {
        let h = holds();
        let redis = Arc::new(Redis::default());
        let user = spawn_user(&h, &redis);
        block_on(async {
            // the client's shutdown: close, release what is live, wait until nothing is in flight
            for r in h.close() {
                let turn = h.turn(&r.key, &r.field, r.kind).await;
                redis.release(&ReleasePlan::Send {
                    last: true,
                    need_ms: 30_000,
                });
                drop(turn);
            }
            h.wait_idle().await;
            assert_eq!(redis.count(), 0, "shutdown returned with a hold in Redis");
        });
        user.join().expect("user");
        assert_empty(&h, &redis);
    });
}

#[test]
fn closing_wakes_an_acquisition_waiting_for_a_turn() {
    loom::model(|| {
        let h = holds();
        let redis = Arc::new(Redis::default());
        let (k, f) = names();
        // a release in flight holds the field's turn until the waiting acquisition ended
        let turn = block_on(h.turn(&k, &f, &DUMMY));
        let user = spawn_user(&h, &redis);
        let closer = {
            let h = h.clone();
            thread::spawn(move || assert!(h.close().is_empty(), "nothing was held"))
        };
        // the acquisition ends while the turn is still taken: the close woke it
        user.join().expect("user");
        closer.join().expect("closer");
        drop(turn);
        block_on(h.wait_idle());
        assert_empty(&h, &redis);
    });
}
