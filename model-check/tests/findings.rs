//! Counterexamples the checker found in the protocol itself (no mutation), kept as checks that
//! they stay fixed: each configuration once broke its property, and must not any more.

use redisson_lock_model_check::configs::findings;
use redisson_lock_model_check::report::{check_mutant, trace};
use redisson_lock_model_check::Mutation;

/// A connection layer that sends a fresh owner's attempt twice, one copy arriving after the
/// caller gave up, the attempt was settled as granted and that grant released: the copy found
/// no record (the field was gone) and took the lock again, for nobody. Settling now marks the
/// attempt's latch whether or not it was granted, so the copy changes nothing.
#[test]
fn a_late_duplicate_of_a_fresh_owners_attempt_changes_nothing_after_its_release() {
    let f = &findings()[0];
    assert_eq!(f.cfg.mutation, Mutation::None);
    let o = check_mutant(f, 1);
    if let Some(path) = o.discovery(f.breaks) {
        panic!("{} breaks `{}` again:\n{}", f.cfg.name, f.breaks, trace(path));
    }
}
