//! Each property bites: a mutant of the protocol (a runtime flag of the model) makes the checker
//! find a counterexample for the property it names.

use redisson_lock_model_check::configs::{mutants, Mutant};
use redisson_lock_model_check::properties::*;
use redisson_lock_model_check::report::{check_mutant, trace};
use redisson_lock_model_check::Mutation;

fn caught(mutation: Mutation, property: &str) {
    let all = mutants();
    let m: &Mutant = all
        .iter()
        .find(|m| m.cfg.mutation == mutation && m.breaks == property)
        .expect("no such mutant");
    let o = check_mutant(m, 1);
    let path = o
        .discovery(property)
        .unwrap_or_else(|| panic!("{}: no counterexample for {property:?}", m.cfg.name));
    assert!(!path.clone().into_actions().is_empty());
    eprintln!("{} breaks {property:?}:\n{}", m.cfg.name, trace(path));
}

#[test]
fn without_the_unlock_latch_a_retried_unlock_applies_twice() {
    caught(Mutation::NoUnlockLatch, UNLOCK_ONCE);
}

#[test]
fn without_the_unlock_latch_a_guard_loses_its_hold() {
    caught(Mutation::NoUnlockLatch, ONE_GUARD_ONE_HOLD);
}

#[test]
fn trusting_a_late_grant_lets_two_hold() {
    caught(Mutation::TrustLateGrant, MUTUAL_EXCLUSION);
}

#[test]
fn renewing_after_release_lets_two_hold() {
    caught(Mutation::RenewAfterRelease, MUTUAL_EXCLUSION);
}

#[test]
fn a_write_only_fence_check_lets_a_stale_token_write() {
    caught(Mutation::WriteOnlyFence, STALE_TOKEN_REFUSED);
}

#[test]
fn settling_without_a_marker_leaves_a_late_grant() {
    caught(Mutation::NoSettleMarker, LATE_GRANT_RELEASED);
}

#[test]
fn a_fair_queue_without_purge_keeps_a_dead_head() {
    caught(Mutation::FairNoPurge, FAIR_NO_DEAD_HEAD);
}

#[test]
fn every_mutant_is_tested() {
    assert_eq!(mutants().len(), 7);
}
