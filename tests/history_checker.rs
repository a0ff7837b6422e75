//! The fault suite's history checker on made-up histories (no Redis, no processes): what counts
//! as an overlap, which losses explain one, how Java sections and partial or unexplained unlocks
//! are judged (a step of the wall clock among the faults), semaphores' capacity (more permits held at once than the semaphore has, and which
//! data loss explains that) and re-creations, and the history's JSON-lines round trip. The checker itself is
//! `tests/common/history.rs`; `tests/faults/` runs it on real histories.

mod common;

use common::history::*;

const MS: u64 = 1_000_000;

fn sec(lock: &str, p: u32, start_ms: u64, end_ms: u64, unlock: UnlockResult) -> Section {
    Section {
        party: Party::Rust,
        lock: lock.into(),
        process: p,
        worker: 0,
        role: "hot".into(),
        method: "lock".into(),
        owner: format!("p{p}:1"),
        acquire_start: start_ms * MS - MS,
        start: start_ms * MS,
        end: end_ms * MS,
        unlock_done: end_ms * MS + MS,
        unlock,
        lost: None,
        sem: None,
    }
}

fn lost(mut s: Section, learned_ms: u64, reason: &str) -> Section {
    s.lost = Some(Loss {
        reason: reason.into(),
        learned: learned_ms * MS,
    });
    s
}

fn fault(kind: &str, from_ms: u64, to_ms: u64, data_loss: bool, target: Option<&str>) -> FaultRecord {
    FaultRecord {
        kind: kind.into(),
        detail: kind.into(),
        data_loss,
        target: target.map(Into::into),
        severs: false,
        start: from_ms * MS,
        end: to_ms * MS,
        error: None,
    }
}

fn hist(sections: Vec<Section>, faults: Vec<FaultRecord>) -> History {
    let mut h = History {
        sections,
        faults,
        phases: vec![
            Phase {
                name: "A".into(),
                data_loss: false,
                start: 0,
                end: 1_000 * MS,
            },
            Phase {
                name: "B".into(),
                data_loss: true,
                start: 1_000 * MS,
                end: 10_000 * MS,
            },
        ],
        ..History::default()
    };
    h.sort();
    h
}

#[test]
fn overlap_is_detected_and_named() {
    let h = hist(
        vec![
            sec("l", 1, 10, 20, UnlockResult::Released),
            sec("l", 2, 15, 25, UnlockResult::Released),
            sec("other", 3, 12, 22, UnlockResult::Released),
        ],
        vec![fault("sigstop", 5, 30, false, None)],
    );
    let o = check_overlaps(&h);
    assert_eq!(o.len(), 1, "{o:?}");
    assert_eq!(o[0].lock, "l");
    assert_eq!((o[0].from, o[0].to), (15 * MS, 20 * MS));
    assert!(o[0].explained_by.is_none());
    assert!(!o[0].data_loss_phase);
    let text = o[0].describe(&h);
    assert!(
        text.contains("p1/w0") && text.contains("p2/w0") && text.contains("sigstop"),
        "{text}"
    );
    assert!(text.contains("UNEXPLAINED"), "{text}");
}

#[test]
fn adjacent_and_nested_sections() {
    // adjacent: fine
    let h = hist(
        vec![
            sec("l", 1, 10, 20, UnlockResult::Released),
            sec("l", 2, 20, 30, UnlockResult::Released),
            sec("l", 1, 30, 31, UnlockResult::Released),
        ],
        vec![],
    );
    assert!(check_overlaps(&h).is_empty());
    // a short section inside a long one, after several others: found
    let h = hist(
        vec![
            sec("l", 1, 10, 100, UnlockResult::Released),
            sec("l", 2, 5, 8, UnlockResult::Released),
            sec("l", 3, 50, 51, UnlockResult::Released),
        ],
        vec![],
    );
    let o = check_overlaps(&h);
    assert_eq!(o.len(), 1, "{o:?}");
    assert_eq!(h.sections[o[0].a].process, 1);
    assert_eq!(h.sections[o[0].b].process, 3);
}

#[test]
fn a_loss_ends_the_section_when_learned() {
    // p1 learned at 14 that it lost the lock; p2 got it at 15: no overlap, though p1's
    // unlock came at 20
    let h = hist(
        vec![
            lost(sec("l", 1, 10, 20, UnlockResult::NotHeld), 14, "OwnerGone"),
            sec("l", 2, 15, 25, UnlockResult::Released),
        ],
        vec![],
    );
    assert!(check_overlaps(&h).is_empty());
    // learned too late: overlap
    let h = hist(
        vec![
            lost(sec("l", 1, 10, 20, UnlockResult::NotHeld), 18, "RenewalFailed"),
            sec("l", 2, 15, 25, UnlockResult::Released),
        ],
        vec![],
    );
    let o = check_overlaps(&h);
    assert_eq!(o.len(), 1);
    assert_eq!(o[0].to, 18 * MS);
}

#[test]
fn data_loss_explains_an_overlap_only_with_a_lost_hold() {
    // p1 holds from 1010; FLUSHALL at 1012; p2 gets the lock at 1013; p1's unlock: NotHeld
    let flush = fault("flushall", 1_012, 1_012, true, None);
    let h = hist(
        vec![
            sec("l", 1, 1_010, 1_020, UnlockResult::NotHeld),
            sec("l", 2, 1_013, 1_015, UnlockResult::Released),
        ],
        vec![flush.clone()],
    );
    let o = check_overlaps(&h);
    assert_eq!(o.len(), 1);
    assert_eq!(o[0].explained_by, Some(0));
    assert!(o[0].data_loss_phase);
    assert!(
        check_unlocks(&h, &Rules::default()).is_empty(),
        "NotHeld after data loss is fine"
    );
    // neither lost its hold: not explained
    let h = hist(
        vec![
            sec("l", 1, 1_010, 1_020, UnlockResult::Released),
            sec("l", 2, 1_013, 1_015, UnlockResult::Released),
        ],
        vec![flush.clone()],
    );
    assert_eq!(check_overlaps(&h)[0].explained_by, None);
    // the fault came after the second section began: not explained
    let h = hist(
        vec![
            sec("l", 1, 1_010, 1_020, UnlockResult::NotHeld),
            sec("l", 2, 1_011, 1_015, UnlockResult::Released),
        ],
        vec![flush],
    );
    assert_eq!(check_overlaps(&h)[0].explained_by, None);
    // a key of another type over *another* lock explains nothing here
    let h = hist(
        vec![
            sec("l", 1, 10, 20, UnlockResult::NotHeld),
            sec("l", 2, 13, 15, UnlockResult::Released),
        ],
        vec![fault("wrongtype-string", 12, 16, false, Some("victim"))],
    );
    assert_eq!(check_overlaps(&h)[0].explained_by, None);
}

/// A step of the machine's wall clock (by which Redis expires keys) is told from drift and
/// slewing; one forward by the erasing size or more explains overlaps and losses as a restart
/// would, in phase A too; a smaller one or a step back explains nothing.
#[test]
fn a_big_forward_clock_step_explains_like_data_loss_and_others_do_not() {
    use common::faults::step_record;
    let erasing = std::time::Duration::from_millis(500);
    let s = 1_000_000_000i128;
    assert!(
        step_record(s, 0, s + 2 * MS as i128, 5 * MS, erasing).is_none(),
        "2 ms of drift"
    );
    let forward = step_record(s, 12 * MS, s + 3 * s, 17 * MS, erasing).expect("a step of 3 s");
    assert!(
        forward.data_loss && forward.detail.contains("+3000 ms"),
        "{forward:?}"
    );
    let small = step_record(s, 12 * MS, s + 200 * MS as i128, 17 * MS, erasing).expect("200 ms");
    let back = step_record(s, 12 * MS, s - 3 * s, 17 * MS, erasing).expect("a step back of 3 s");
    assert!(!back.data_loss && back.detail.contains("-3000 ms"), "{back:?}");
    let held = |step: &FaultRecord| {
        hist(
            vec![
                lost(sec("l", 1, 10, 40, UnlockResult::NotHeld), 30, "OwnerGone"),
                sec("l", 2, 20, 35, UnlockResult::Released),
            ],
            vec![step.clone()],
        )
    };
    let h = held(&forward);
    assert_eq!(check_overlaps(&h)[0].explained_by, Some(0));
    assert!(check_losses(&h, &Rules::default()).is_empty());
    for step in [&small, &back] {
        let h = held(step);
        assert_eq!(check_overlaps(&h)[0].explained_by, None, "{step:?}");
        assert_eq!(check_losses(&h, &Rules::default()).len(), 1, "{step:?}");
    }
}

#[test]
fn partial_and_unexplained_unlocks_are_flagged() {
    let h = hist(
        vec![
            sec("l", 1, 10, 20, UnlockResult::Partial),
            sec("l", 1, 30, 40, UnlockResult::NotHeld),
            lost(sec("l", 1, 50, 60, UnlockResult::NotHeld), 55, "OwnerGone"),
            sec(
                "l",
                1,
                70,
                80,
                UnlockResult::Error {
                    message: "redis command timed out after 500ms".into(),
                },
            ),
            sec(
                "l",
                1,
                3_000,
                3_010,
                UnlockResult::Error {
                    message: "redis command timed out after 500ms".into(),
                },
            ),
            sec("l", 1, 4_000, 4_010, UnlockResult::Hung),
            sec("l", 1, 5_000, 5_010, UnlockResult::Released),
        ],
        // a pause around the first error's unlock; an earlier busy script over the Partial's acquire
        vec![
            fault("busy-script", 5, 12, false, None),
            fault("client-pause-all", 75, 85, false, None),
        ],
    );
    let p = check_unlocks(&h, &Rules::default());
    let what: Vec<(u64, &str)> = p
        .iter()
        .map(|u| {
            (
                h.sections[u.section].start / MS,
                h.sections[u.section].unlock.label(),
            )
        })
        .collect();
    assert_eq!(
        what,
        vec![
            (10, "partial"),
            (30, "not-held"),
            (3_000, "error"),
            (4_000, "hung")
        ],
        "{p:?}"
    );
    let partial = p[0].describe(&h);
    assert!(
        partial.contains("Partial") && partial.contains("busy-script"),
        "{partial}"
    );
}

#[test]
fn losses_need_a_fault_that_erased_the_lock() {
    let h = hist(
        vec![
            // the poisoned lock itself: explained
            lost(sec("victim", 1, 10, 20, UnlockResult::NotHeld), 15, "OwnerGone"),
            // another lock of the same client lost meanwhile (a whole renewal batch failed): flagged
            lost(
                sec("renew", 1, 5, 30, UnlockResult::Released),
                25,
                "RenewalFailed",
            ),
            // data loss: explained
            lost(
                sec("hot", 2, 1_010, 1_030, UnlockResult::NotHeld),
                1_020,
                "OwnerGone",
            ),
        ],
        vec![
            fault("wrongtype-string", 12, 16, false, Some("victim")),
            fault("kill9-restart", 1_015, 1_016, true, None),
        ],
    );
    let l = check_losses(&h, &Rules::default());
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!(h.sections[l[0].section].lock, "renew");
    let text = l[0].describe(&h);
    assert!(
        text.contains("wrongtype-string") && text.contains("RenewalFailed"),
        "{text}"
    );
}

/// A network fault that cut the client off within the trust window explains a signalled loss
/// and a `NotHeld` unlock (counted apart); one outside that window, or one that did not cut the
/// client off, explains nothing.
#[test]
fn an_outage_in_the_trust_window_explains_a_loss_and_a_not_held_unlock() {
    let mut outage = fault("net-stall-close", 100, 1_100, false, None);
    outage.severs = true;
    let latency = fault("net-latency", 5_000, 9_000, false, None);
    let h = hist(
        vec![
            // lost 1 s after the outage ended: inside the 3 s trust window
            lost(
                sec("long", 1, 50, 2_100, UnlockResult::Released),
                2_100,
                "RenewalFailed",
            ),
            // a release that began during the outage and found the hold expired
            sec("other", 2, 20, 900, UnlockResult::NotHeld),
            // lost while only latency was injected: unexplained
            lost(
                sec("renew", 1, 4_000, 8_000, UnlockResult::Released),
                8_000,
                "RenewalFailed",
            ),
        ],
        vec![outage, latency],
    );
    let losses = check_losses(&h, &Rules::default());
    assert_eq!(losses.len(), 2, "{losses:?}");
    let by_lock = |lock: &str| {
        losses
            .iter()
            .find(|l| h.sections[l.section].lock == lock)
            .unwrap()
    };
    assert_eq!(by_lock("long").severed, Some(0));
    assert_eq!(by_lock("renew").severed, None);
    let unlocks = check_unlocks(&h, &Rules::default());
    let not_held: Vec<_> = unlocks
        .iter()
        .filter(|u| h.sections[u.section].unlock == UnlockResult::NotHeld)
        .collect();
    assert_eq!(not_held.len(), 1, "{unlocks:?}");
    assert_eq!(not_held[0].severed, Some(0));
}

fn java(mut s: Section) -> Section {
    s.party = Party::Java;
    s.role = "java".into();
    s.owner = "6c6800ef-09e3-452a-b052-03a690b67e00:19".into();
    s
}

#[test]
fn java_sections_are_checked_for_overlap_only() {
    let h = hist(
        vec![
            sec("l", 1, 10, 20, UnlockResult::Released),
            java(sec("l", 3, 15, 25, UnlockResult::Released)),
            // Redisson's own unlock results are reported, not judged
            java(sec("l", 3, 30, 31, UnlockResult::Partial)),
            java(sec("l", 3, 40, 41, UnlockResult::NotHeld)),
            sec("l", 2, 50, 51, UnlockResult::Released),
        ],
        vec![],
    );
    let o = check_overlaps(&h);
    assert_eq!(o.len(), 1, "{o:?}");
    assert!(o[0].java_vs_rust(&h));
    assert_eq!(o[0].parties(&h), (Party::Rust, Party::Java));
    let text = o[0].describe(&h);
    assert!(text.contains("java/w0") && text.contains("p1/w0"), "{text}");
    assert!(check_unlocks(&h, &Rules::default()).is_empty());
    let s = summarize(&h);
    assert_eq!(s.sections, 2, "the summary's figures are Rust's");
    assert_eq!(s.by_party.get("java"), Some(&3));
    assert_eq!(s.by_party.get("rust"), Some(&2));
    let hand = handoffs(&h);
    assert_eq!(hand.between(Party::Rust, Party::Java), 1);
    assert_eq!(hand.between(Party::Java, Party::Rust), 1);
    assert_eq!(hand.min_gap_ns.get(&(Party::Java, Party::Rust)), Some(&(9 * MS)));
    // a Java section's JSON carries its party; a Rust one's does not
    let j = serde_json::to_string(&h.sections[1]).unwrap();
    assert!(j.contains(r#""party":"java""#), "{j}");
    assert!(!serde_json::to_string(&h.sections[0]).unwrap().contains("party"));
    let back: Section = serde_json::from_str(&j).unwrap();
    assert_eq!(back, h.sections[1]);
}

#[test]
fn history_round_trips_through_json_lines() {
    let dir = std::env::temp_dir().join(format!("faults-history-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("h.jsonl");
    let recs = vec![
        Record::Section(lost(
            sec("l", 1, 10, 20, UnlockResult::Error { message: "x".into() }),
            15,
            "OwnerGone",
        )),
        Record::Attempt(Attempt {
            lock: "l".into(),
            process: 1,
            worker: 2,
            role: "hot".into(),
            method: "try_lock_for".into(),
            start: 1,
            end: 2,
            wait_ms: Some(50),
            outcome: AttemptResult::NotAcquired,
            sem: None,
        }),
        Record::Fault(fault("flushall", 1, 2, true, None)),
        Record::Sample(Sample {
            time: 3,
            lock: "l".into(),
            pttl: -1,
            hlen: 1,
            problem: "key without TTL".into(),
        }),
    ];
    let w = HistoryWriter::create(&p);
    for r in &recs {
        w.record(r);
    }
    w.flush();
    let h = History::load(&[&p]);
    assert_eq!(h.sections.len(), 1);
    assert_eq!(Record::Section(h.sections[0].clone()), recs[0]);
    assert_eq!(Record::Attempt(h.attempts[0].clone()), recs[1]);
    assert_eq!(h.faults.len(), 1);
    assert_eq!(h.samples.len(), 1);
    let s = summarize(&h);
    assert_eq!(s.sections, 1);
    assert_eq!(s.by_unlock.get("error"), Some(&1));
    assert_eq!(s.attempts.get("not-acquired"), Some(&1));
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// Semaphores

/// A holding of `permits` permits of the semaphore `s` (capacity `cap`) by process `p`, acquire
/// call 1 ms before `start_ms`, released at `end_ms`.
fn permit(kind: SemKind, cap: u32, p: u32, start_ms: u64, end_ms: u64, permits: u32) -> Section {
    let mut s = sec("s", p, start_ms, end_ms, UnlockResult::Released);
    s.role = "sem".into();
    s.method = "acquire".into();
    s.sem = Some(Sem {
        kind,
        permits,
        capacity: cap,
    });
    s
}

fn plain(p: u32, start_ms: u64, end_ms: u64) -> Section {
    permit(SemKind::Semaphore, 2, p, start_ms, end_ms, 1)
}

fn expirable(p: u32, start_ms: u64, end_ms: u64) -> Section {
    permit(SemKind::Expirable, 2, p, start_ms, end_ms, 1)
}

#[test]
fn an_excess_is_found() {
    // capacity 2; three holders at once from 15 to 20, no fault
    let h = hist(
        vec![
            plain(1, 10, 30),
            plain(2, 12, 20),
            plain(3, 15, 25),
            plain(4, 40, 50),
        ],
        vec![fault("sigstop", 5, 8, false, None)],
    );
    let e = check_capacity(&h);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].lock, "s");
    assert_eq!((e[0].held, e[0].capacity), (3, 2));
    assert_eq!((e[0].from, e[0].to), (15 * MS, 20 * MS));
    assert_eq!(e[0].open.len(), 3);
    assert_eq!(
        h.sections[*e[0].open.last().unwrap()].process,
        3,
        "the last holder began it"
    );
    assert!(e[0].explained_by.is_none());
    assert!(!e[0].data_loss_phase);
    let text = e[0].describe(&h);
    assert!(
        text.contains("UNEXPLAINED")
            && text.contains("p1/w0")
            && text.contains("p3/w0")
            && text.contains("1 of 2 permits"),
        "{text}"
    );
    assert_eq!(max_held(&h).get("s"), Some(&(3, 15 * MS)));
    // a holding of two permits counts two
    let h = hist(
        vec![permit(SemKind::Semaphore, 2, 1, 10, 30, 2), plain(2, 12, 20)],
        vec![],
    );
    let e = check_capacity(&h);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].held, 3);
    // the lock checkers ignore permit holdings
    assert!(check_overlaps(&h).is_empty());
    assert!(handoffs(&h).count.is_empty());
    assert_eq!(
        summarize(&h).sections,
        0,
        "the lock figures count lock sections only"
    );
}

#[test]
fn exactly_n_at_once_is_fine() {
    let h = hist(
        vec![
            plain(1, 10, 30),
            plain(2, 12, 20),
            plain(3, 20, 35), // begins when p2 ends
            plain(4, 30, 40), // begins when p1 ends
            permit(SemKind::Semaphore, 2, 5, 40, 50, 2),
        ],
        vec![],
    );
    assert!(check_capacity(&h).is_empty(), "{:?}", check_capacity(&h));
    assert_eq!(max_held(&h).get("s").map(|m| m.0), Some(2));
    let f = semaphore_figures(&h, &[]);
    let f = &f["s"];
    assert_eq!((f.sections, f.permits, f.max_held, f.capacity), (5, 6, 2, 2));
    assert_eq!(f.full, 4, "holdings that took the last permit: {f:?}");
}

#[test]
fn holdings_that_touch_end_to_start_are_fine() {
    // capacity 1: each begins exactly when the previous one ends
    let h = hist(
        vec![
            permit(SemKind::Expirable, 1, 1, 10, 20, 1),
            permit(SemKind::Expirable, 1, 2, 20, 30, 1),
            permit(SemKind::Expirable, 1, 3, 30, 40, 1),
        ],
        vec![],
    );
    assert!(check_capacity(&h).is_empty(), "{:?}", check_capacity(&h));
    assert_eq!(max_held(&h).get("s").map(|m| m.0), Some(1));
}

#[test]
fn an_excess_across_a_flushall_is_explained() {
    // capacity 2: p1 took its permit at 1 010; FLUSHALL at 1 015 erases the count, which is set up
    // again at 2; p2 and p3 take both new permits while p1 still works
    let flush = fault("flushall", 1_015, 1_015, true, None);
    for kind in [SemKind::Semaphore, SemKind::Expirable] {
        let h = hist(
            vec![
                permit(kind, 2, 1, 1_010, 1_030, 1),
                permit(kind, 2, 2, 1_017, 1_025, 1),
                permit(kind, 2, 3, 1_018, 1_026, 1),
            ],
            vec![flush.clone()],
        );
        let e = check_capacity(&h);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].explained_by, Some(0), "{kind:?}: {e:?}");
        assert!(e[0].data_loss_phase);
        assert_eq!((e[0].older, e[0].fresh, e[0].stale), (1, 2, 0));
        assert!(e[0].describe(&h).contains("explained by flushall"));
    }
    // three holders all after the flush: not explained
    let h = hist(
        vec![
            expirable(1, 1_020, 1_030),
            expirable(2, 1_021, 1_025),
            expirable(3, 1_022, 1_026),
        ],
        vec![flush.clone()],
    );
    let e = check_capacity(&h);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].explained_by, None);
    // the flush came after the later holders' acquisitions: not explained
    let h = hist(
        vec![
            expirable(1, 1_010, 1_030),
            expirable(2, 1_012, 1_025),
            expirable(3, 1_013, 1_026),
        ],
        vec![fault("flushall", 1_020, 1_020, true, None)],
    );
    assert_eq!(check_capacity(&h)[0].explained_by, None);
    // a fault that lost no data explains nothing
    let h = hist(
        vec![
            expirable(1, 1_010, 1_030),
            expirable(2, 1_017, 1_025),
            expirable(3, 1_018, 1_026),
        ],
        vec![fault("client-kill-normal", 1_015, 1_015, false, None)],
    );
    assert_eq!(check_capacity(&h)[0].explained_by, None);
}

#[test]
fn a_plain_semaphore_may_count_a_permit_from_before_the_loss_again() {
    // p1 held a permit across the FLUSHALL and gave it back at 1 020, after the set-up: a
    // `Semaphore` adds it to the new count (3 available of 2), so three later holders at once are
    // explained; an expirable semaphore refuses the erased id's release, so they are not
    let flush = fault("flushall", 1_015, 1_015, true, None);
    for (kind, explained) in [(SemKind::Semaphore, true), (SemKind::Expirable, false)] {
        let h = hist(
            vec![
                permit(kind, 2, 1, 1_010, 1_020, 1),
                permit(kind, 2, 2, 1_030, 1_040, 1),
                permit(kind, 2, 3, 1_031, 1_040, 1),
                permit(kind, 2, 4, 1_032, 1_040, 1),
            ],
            vec![flush.clone()],
        );
        let e = check_capacity(&h);
        assert_eq!(e.len(), 1, "{kind:?}: {e:?}");
        assert_eq!(e[0].explained_by.is_some(), explained, "{kind:?}: {e:?}");
        assert_eq!(e[0].stale, u32::from(explained));
        // a quiescent check between the loss and the excess (which left the count at N) voids
        // the explanation
        let mut h = h;
        h.quiesces.push(Quiesce {
            lock: "s".into(),
            label: "pause".into(),
            start: 1_022 * MS,
            end: 1_023 * MS,
            available: Some(3),
            acquired: None,
            reset_to: Some(2),
        });
        assert_eq!(check_capacity(&h)[0].explained_by, None, "{kind:?}");
    }
    // an attempt from before the loss that the worker gave up may be granted and given back
    // after it: explained too
    let mut h = hist(
        vec![
            plain(2, 1_030, 1_040),
            plain(3, 1_031, 1_040),
            plain(4, 1_032, 1_040),
        ],
        vec![flush],
    );
    h.attempts.push(Attempt {
        lock: "s".into(),
        process: 1,
        worker: 0,
        role: "sem".into(),
        method: "acquire".into(),
        start: 1_005 * MS,
        end: 1_016 * MS,
        wait_ms: None,
        outcome: AttemptResult::GaveUp,
        sem: Some(Sem {
            kind: SemKind::Semaphore,
            permits: 1,
            capacity: 2,
        }),
    });
    assert_eq!(check_capacity(&h)[0].explained_by, Some(0));
    // ... unless the worker's background queue was seen empty after it and before the loss: the
    // give-back applied before the loss erased it
    h.idles.push(Idle {
        process: 1,
        from: 1_017 * MS,
        to: 1_017 * MS + 1,
    });
    assert_eq!(
        check_capacity(&h)[0].explained_by,
        Some(0),
        "that marker came after the loss"
    );
    h.attempts[0].end = 1_010 * MS;
    h.idles[0] = Idle {
        process: 1,
        from: 1_011 * MS,
        to: 1_012 * MS,
    };
    assert_eq!(check_capacity(&h)[0].explained_by, None);
    // (another process's marker says nothing about it)
    h.idles[0].process = 2;
    assert_eq!(check_capacity(&h)[0].explained_by, Some(0));
}

#[test]
fn a_semaphore_is_created_again_only_after_data_loss() {
    let reinit = |by: &str, at_ms: u64| Reinit {
        lock: "s".into(),
        by: by.into(),
        start: at_ms * MS,
        end: at_ms * MS + MS,
    };
    let mut h = hist(vec![], vec![fault("flushall", 1_015, 1_015, true, None)]);
    h.reinits = vec![
        reinit("parent", 1),
        reinit("p1/w9", 1_020),
        reinit("p2/w9", 1_030),
    ];
    let r = check_reinits(&h);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!((r[0].first, r[0].second), (1, 2));
    let text = r[0].describe(&h);
    assert!(text.contains("p1/w9") && text.contains("p2/w9"), "{text}");
    let f = semaphore_figures(&h, &[]);
    assert_eq!(f["s"].recreated, 2, "the parent's set-up is not counted");
}

#[test]
fn semaphore_records_round_trip_and_dropped_guards_are_no_unlock_problem() {
    let mut dropped = plain(1, 10, 20);
    dropped.unlock = UnlockResult::Dropped;
    let mut not_held = expirable(2, 30, 40);
    not_held.unlock = UnlockResult::NotHeld;
    let h = hist(vec![dropped.clone(), not_held], vec![]);
    let u = check_unlocks(&h, &Rules::default());
    assert_eq!(
        u.len(),
        1,
        "a release refused without data loss is flagged: {u:?}"
    );
    assert_eq!(h.sections[u[0].section].unlock, UnlockResult::NotHeld);

    let dir = std::env::temp_dir().join(format!("faults-history-sem-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("h.jsonl");
    let q = Quiesce {
        lock: "s".into(),
        label: "end of phase A".into(),
        start: 1,
        end: 2,
        available: Some(2),
        acquired: Some(0),
        reset_to: None,
    };
    let r = Reinit {
        lock: "s".into(),
        by: "parent".into(),
        start: 0,
        end: 1,
    };
    let w = HistoryWriter::create(&p);
    w.record(&Record::Section(dropped.clone()));
    w.record(&Record::Quiesce(q.clone()));
    w.record(&Record::Reinit(r.clone()));
    w.flush();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        text.contains(r#""sem":{"kind":"semaphore","permits":1,"capacity":2}"#),
        "{text}"
    );
    let back = History::load(&[&p]);
    assert_eq!(back.sections, vec![dropped]);
    assert_eq!(back.quiesces, vec![q]);
    assert_eq!(back.reinits, vec![r]);
    // a lock's section carries no `sem`
    assert!(!serde_json::to_string(&sec("l", 1, 1, 2, UnlockResult::Released))
        .unwrap()
        .contains("sem"));
    let _ = std::fs::remove_dir_all(&dir);
}
