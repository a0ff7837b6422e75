//! The fault suite's history checker on made-up histories (no Redis, no processes): what counts
//! as an overlap, which losses explain one, how Java sections and partial or unexplained unlocks
//! are judged, and the history's JSON-lines round trip. The checker itself is
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
