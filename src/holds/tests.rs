//! The hold table's bookkeeping, without Redis.

use super::*;
use crate::kind::{Ctx, ReleaseArgs};
use redis::ScriptInvocation;

/// A kind that sends nothing (the table's bookkeeping needs only its label and channel).
pub(super) struct Dummy;
impl Kind for Dummy {
    fn label(&self) -> &'static str {
        "dummy"
    }
    fn write_channel(&self, out: &mut String, key: &str, _: &str) {
        out.push_str(key)
    }
    fn release(&self, _: &Ctx<'_>, _: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
        unreachable!()
    }
    fn force_release(&self, _: &Ctx<'_>) -> ScriptInvocation<'static> {
        unreachable!()
    }
}
pub(super) static DUMMY: Dummy = Dummy;

pub(super) fn holds() -> Arc<Holds> {
    Arc::new(Holds::new(
        &Config::default()
            .with_lock_watchdog_timeout(Duration::from_secs(30))
            .with_command_timeout(Duration::from_secs(1)),
    ))
}

/// One grant under `t` (the tests record several under one turn).
fn grant(h: &Holds, t: &Turn, expiry: Expiry, sent_at: Instant, need_ms: u64, count: i64) -> Arc<HoldRecord> {
    let g = NewHold {
        kind: &DUMMY,
        expiry,
        sent_at,
        need_ms,
        count,
    };
    match h.grant_in(&mut h.table.lock(), t, g, None) {
        Ok(record) => record,
        Err((_, plan, why)) => panic!("a live grant was recorded as late ({why:?}, {plan:?})"),
    }
}

/// A grant nobody will use: how it is to be released.
fn late(
    h: &Holds,
    t: &Turn,
    sent_at: Instant,
    count: i64,
    why: Option<LateWhy>,
) -> (Option<Arc<HoldRecord>>, ReleasePlan, LateWhy) {
    let g = NewHold {
        kind: &DUMMY,
        expiry: Expiry::Watchdog,
        sent_at,
        need_ms: 30_000,
        count,
    };
    match h.grant_in(&mut h.table.lock(), t, g, why) {
        Ok(_) => panic!("a late grant started a hold"),
        Err(late) => late,
    }
}

pub(super) fn names() -> (Arc<str>, Arc<str>) {
    ("k".into(), "c:1".into())
}

#[tokio::test]
async fn a_grant_gives_its_turn_back_to_the_next_operation_on_the_field() {
    let h = holds();
    let (k, f) = names();
    let t = h.turn(&k, &f, &DUMMY).await;
    assert_eq!(h.acquire_need(&t, 300), 300, "a fresh field: the own lease");
    // a second operation on the field (a re-entry of the same owner) waits for the turn
    let waiter = {
        let (h, k, f) = (h.clone(), k.clone(), f.clone());
        tokio::spawn(async move {
            let t = h.turn(&k, &f, &DUMMY).await;
            h.acquire_need(&t, 300)
        })
    };
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished(), "the turn is still taken");
    let g = NewHold {
        kind: &DUMMY,
        expiry: Expiry::Watchdog,
        sent_at: Instant::now(),
        need_ms: 30_000,
        count: 1,
    };
    let Recorded::Live(record) = h.grant_passing(t, g, false) else {
        panic!("a grant on an open table is live")
    };
    let need = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the grant woke the waiting operation")
        .expect("task");
    assert_eq!(need, 30_000, "the next turn plans against the live watchdog hold");
    assert_eq!(record.state(), LeaseState::Held);
    assert!(h
        .table
        .lock()
        .get(&k, &f)
        .is_some_and(|r| Arc::ptr_eq(r, &record)));
}

#[tokio::test]
async fn epochs_are_shared_and_final() {
    let h = holds();
    let (k, f) = names();
    let t = h.turn(&k, &f, &DUMMY).await;
    let now = Instant::now();
    let a = grant(&h, &t, Expiry::Watchdog, now, 30_000, 1);
    let b = grant(&h, &t, Expiry::Watchdog, now, 30_000, 2);
    assert!(Arc::ptr_eq(&a, &b), "a re-entry joins the epoch");
    // Redis says 1 where we expect 3: it lost the field; the epoch ends for both guards
    let c = grant(&h, &t, Expiry::Watchdog, now, 30_000, 1);
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!(a.state(), LeaseState::Lost(LostReason::OwnerGone));
    assert_eq!(c.state(), LeaseState::Held);
    // a guard of the ended epoch sends nothing
    assert_eq!(h.begin_release(&t, &a, Expiry::Watchdog), ReleasePlan::Stale);
    assert_eq!(
        h.begin_release(&t, &c, Expiry::Watchdog),
        ReleasePlan::Send {
            last: true,
            need_ms: 30_000
        }
    );
    assert_eq!(c.state(), LeaseState::Released);
    drop(t);
    assert_eq!(h.entries(), 0, "the table is empty again");
}

#[tokio::test]
async fn a_lapsed_epoch_is_never_revived() {
    let h = holds();
    let (k, f) = names();
    let t = h.turn(&k, &f, &DUMMY).await;
    let old = grant(&h, &t, Expiry::Watchdog, Instant::now(), 30_000, 1);
    old.lower_to(Instant::now(), LostReason::RenewalFailed);
    // nobody has read its state since its deadline passed; a new grant must not revive it
    let new = grant(&h, &t, Expiry::Watchdog, Instant::now(), 30_000, 2);
    assert!(!Arc::ptr_eq(&old, &new));
    assert_eq!(old.state(), LeaseState::Lost(LostReason::RenewalFailed));
    assert_eq!(new.state(), LeaseState::Held);
}

#[tokio::test]
async fn the_ttl_sent_covers_the_longest_live_hold() {
    let h = holds();
    let (k, f) = names();
    let t = h.turn(&k, &f, &DUMMY).await;
    assert_eq!(h.acquire_need(&t, 300), 300, "nothing held: the own lease");
    let now = Instant::now();
    let w = grant(&h, &t, Expiry::Watchdog, now, 30_000, 1);
    assert_eq!(
        h.acquire_need(&t, 300),
        30_000,
        "a short re-entry keeps the watchdog TTL"
    );
    let until = now + Duration::from_secs(100);
    let leased = Expiry::Leased {
        lease_ms: 100_000,
        until,
    };
    grant(&h, &t, leased, now, 100_000, 2);
    assert!(h.acquire_need(&t, 300) > 99_000);
    // releasing the watchdog hold re-applies what the leased hold still needs
    match h.begin_release(&t, &w, Expiry::Watchdog) {
        ReleasePlan::Send { last: false, need_ms } => assert!((99_000..=100_000).contains(&need_ms)),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.renewing(), 0, "no watchdog hold left: renewal stops");
    match h.begin_release(&t, &w, leased) {
        ReleasePlan::Send { last: true, .. } => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn turns_serialise_one_field_only() {
    let h = holds();
    let (k, f) = names();
    let t = h.turn(&k, &f, &DUMMY).await;
    let other: Arc<str> = "c:2".into();
    let _t2 = tokio::time::timeout(Duration::from_millis(100), h.turn(&k, &other, &DUMMY))
        .await
        .expect("another field's turn is free");
    let h2 = h.clone();
    let (k2, f2) = (k.clone(), f.clone());
    let waiter = tokio::spawn(async move {
        let _t = h2.turn(&k2, &f2, &DUMMY).await;
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiter.is_finished(), "the same field waits for the turn");
    drop(t);
    tokio::time::timeout(Duration::from_secs(1), waiter)
        .await
        .expect("released turn wakes the waiter")
        .unwrap();
}

#[tokio::test]
async fn a_turn_waiter_survives_a_new_epoch_record() {
    let h = holds();
    let (k, f) = names();
    let t = h.turn(&k, &f, &DUMMY).await;
    let old = grant(&h, &t, Expiry::Watchdog, Instant::now(), 30_000, 1);
    let h2 = h.clone();
    let (k2, f2) = (k.clone(), f.clone());
    let waiter = tokio::spawn(async move {
        let _t = h2.turn(&k2, &f2, &DUMMY).await;
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiter.is_finished());
    // the epoch ends (Redis lost the field) and a grant under the same turn starts a new
    // record: the waiter queued on the old one must still get the turn
    old.set(LeaseState::Lost(LostReason::OwnerGone));
    let new = grant(&h, &t, Expiry::Watchdog, Instant::now(), 30_000, 1);
    assert!(
        !Arc::ptr_eq(&old, &new),
        "an ended epoch's record is never reused"
    );
    assert_eq!(old.state(), LeaseState::Lost(LostReason::OwnerGone));
    assert_eq!(h.begin_release(&t, &old, Expiry::Watchdog), ReleasePlan::Stale);
    drop(t);
    tokio::time::timeout(Duration::from_secs(1), waiter)
        .await
        .expect("the turn moved to the new record with its waiters")
        .unwrap();
    assert_eq!(h.entries(), 1, "the live epoch keeps its record");
    assert_eq!(new.state(), LeaseState::Held);
}

#[test]
fn a_held_field_costs_one_small_record() {
    // the record (epoch, counts, turn) is one allocation; keep it small: it is most of the
    // client's memory per held lock (see the watchdog section of benches/REPORT.md)
    let record = std::mem::size_of::<HoldRecord>() + 2 * std::mem::size_of::<usize>();
    assert!(record <= 96, "record is {record} bytes");
    assert!(std::mem::size_of::<Owners>() <= 16);
}

#[tokio::test]
async fn close_ends_every_live_epoch() {
    let h = holds();
    let (k, f) = names();
    let t = h.turn(&k, &f, &DUMMY).await;
    let l = grant(&h, &t, Expiry::Watchdog, Instant::now(), 30_000, 1);
    drop(t);
    let rest = h.close();
    assert_eq!(rest.len(), 1);
    assert!(h.is_closed());
    assert_eq!(l.state(), LeaseState::Lost(LostReason::Shutdown));
    assert!(h.renewal_items().is_empty());
}

#[tokio::test]
async fn a_grant_nobody_will_use_is_released_and_starts_no_hold() {
    let h = holds();
    let (k, f) = names();
    let t = h.turn(&k, &f, &DUMMY).await;
    // its caller gave up, and the field has no live epoch: release everything the field has
    let (record, plan, why) = late(&h, &t, Instant::now(), 1, Some(LateWhy::Abandoned));
    assert!(record.is_none());
    assert_eq!(
        plan,
        ReleasePlan::Send {
            last: true,
            need_ms: 30_000
        }
    );
    assert_eq!(why, LateWhy::Abandoned);
    assert_eq!(h.renewing(), 0, "nothing is renewed");
    // its reply came after the hold's trusted time (sent 31 s ago with a 30 s TTL)
    let long_ago = Instant::now() - Duration::from_secs(31);
    let (_, plan, why) = late(&h, &t, long_ago, 1, None);
    assert_eq!(
        plan,
        ReleasePlan::Send {
            last: true,
            need_ms: 30_000
        }
    );
    assert_eq!(why, LateWhy::Expired(LostReason::RenewalFailed));
    // a late grant that joins a live epoch releases one hold and keeps what the others need
    let live = grant(&h, &t, Expiry::Watchdog, Instant::now(), 30_000, 1);
    let (record, plan, _) = late(&h, &t, Instant::now(), 2, Some(LateWhy::Abandoned));
    assert!(record.is_some_and(|l| Arc::ptr_eq(&l, &live)));
    assert_eq!(
        plan,
        ReleasePlan::Send {
            last: false,
            need_ms: 30_000
        }
    );
    assert_eq!(live.state(), LeaseState::Held, "the other hold is untouched");
    // ... even when it came back too late to trust: the live epoch covers the field
    assert!(matches!(grant_in_result(&h, &t, long_ago, 2), Ok(l) if Arc::ptr_eq(&l, &live)));
    // one that contradicts the live epoch's count ends it
    let (record, plan, _) = late(&h, &t, Instant::now(), 7, Some(LateWhy::Abandoned));
    assert!(record.is_none());
    assert_eq!(
        plan,
        ReleasePlan::Send {
            last: true,
            need_ms: 30_000
        }
    );
    assert_eq!(live.state(), LeaseState::Lost(LostReason::OwnerGone));
}

fn grant_in_result(h: &Holds, t: &Turn, sent_at: Instant, count: i64) -> Result<Arc<HoldRecord>, LateWhy> {
    let g = NewHold {
        kind: &DUMMY,
        expiry: Expiry::Watchdog,
        sent_at,
        need_ms: 30_000,
        count,
    };
    h.grant_in(&mut h.table.lock(), t, g, None)
        .map_err(|(_, _, why)| why)
}

#[tokio::test]
async fn a_closed_table_starts_no_acquisition_and_tells_when_nothing_is_in_flight() {
    let h = holds();
    let (k, f) = names();
    let in_flight = h.try_turn_to_acquire(&k, &f, &DUMMY).unwrap().expect("free");
    let other: Arc<str> = "c:2".into();
    // an acquisition waiting for a busy turn is stopped by the close
    let waiting = {
        let (h, k, f) = (h.clone(), k.clone(), f.clone());
        tokio::spawn(async move { h.turn_to_acquire(&k, &f, &DUMMY).await.map(drop) })
    };
    tokio::task::yield_now().await;
    assert!(h.close().is_empty());
    let r = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(r, Err(crate::Error::Shutdown)), "{r:?}");
    assert!(matches!(
        h.try_turn_to_acquire(&k, &other, &DUMMY),
        Err(crate::Error::Shutdown)
    ));
    // the attempt in flight lands granted: late, and its turn stays taken until released
    let g = NewHold {
        kind: &DUMMY,
        expiry: Expiry::Watchdog,
        sent_at: Instant::now(),
        need_ms: 30_000,
        count: 1,
    };
    let Recorded::Late(l) = h.grant_passing(in_flight, g, false) else {
        panic!("a grant after close is late")
    };
    assert_eq!(l.why, LateWhy::Closed);
    assert!(!h.is_idle());
    // a release may still take a turn
    let release = h.turn(&k, &other, &DUMMY).await;
    let idle = {
        let h = h.clone();
        tokio::spawn(async move { h.wait_idle().await })
    };
    drop(l);
    tokio::task::yield_now().await;
    assert!(!idle.is_finished(), "a release is still in flight");
    drop(release);
    tokio::time::timeout(Duration::from_secs(5), idle)
        .await
        .unwrap()
        .unwrap();
    assert!(h.is_idle());
    assert_eq!(h.entries(), 0);
}

/// The loss watch's view of the field's hold.
fn item(k: &Arc<str>, f: &Arc<str>, record: &Arc<HoldRecord>) -> RenewalItem {
    RenewalItem {
        key: k.clone(),
        field: f.clone(),
        record: record.clone(),
        renewal: crate::script::renewal_of(&DUMMY),
    }
}

#[tokio::test]
async fn a_hold_found_gone_during_this_clients_force_reports_what_the_force_did() {
    let h = holds();
    let (k, f) = names();
    // the force deleted the key: the loss watch saw it first, the force's reply decides
    let t = h.turn(&k, &f, &DUMMY).await;
    let a = grant(&h, &t, Expiry::Watchdog, Instant::now(), 30_000, 1);
    drop(t);
    let forcing = h.forcing(&k);
    assert!(
        !h.field_gone(&item(&k, &f, &a)),
        "ended by the force's outcome, not here"
    );
    assert_eq!(a.state(), LeaseState::Held, "not before the force's reply");
    forcing.deleted(|_| true);
    assert_eq!(a.state(), LeaseState::Lost(LostReason::ForceUnlocked));
    assert_eq!(h.entries(), 0);

    // the force deleted nothing (or failed, or was dropped): the field went for another reason
    let t = h.turn(&k, &f, &DUMMY).await;
    let b = grant(&h, &t, Expiry::Watchdog, Instant::now(), 30_000, 1);
    drop(t);
    let forcing = h.forcing(&k);
    h.owner_gone(&item(&k, &f, &b));
    assert_eq!(b.state(), LeaseState::Held);
    drop(forcing);
    assert_eq!(b.state(), LeaseState::Lost(LostReason::OwnerGone));
    assert_eq!(h.entries(), 0);

    // with no force in flight, a field found gone ends at once
    let t = h.turn(&k, &f, &DUMMY).await;
    let c = grant(&h, &t, Expiry::Watchdog, Instant::now(), 30_000, 1);
    drop(t);
    assert!(h.field_gone(&item(&k, &f, &c)));
    assert_eq!(c.state(), LeaseState::Lost(LostReason::OwnerGone));
}
