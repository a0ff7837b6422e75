//! Counterexamples of the protocol itself (no mutation), kept reproduced until the library
//! changes: when one of these stops being found, the protocol changed; re-check and move it.

use redisson_lock_model_check::configs::findings;
use redisson_lock_model_check::report::{check_mutant, trace};
use redisson_lock_model_check::Mutation;

#[test]
fn a_late_duplicate_of_a_fresh_owners_attempt_is_granted_after_the_release() {
    let f = &findings()[0];
    assert_eq!(f.cfg.mutation, Mutation::None);
    let o = check_mutant(f, 1);
    let path = o
        .discovery(f.breaks)
        .expect("the finding is no longer reproduced");
    eprintln!("{}:\n{}", f.cfg.name, trace(path));
}
