//! The bounded check `cargo test` runs: every model of `configs::ci()` is explored exhaustively
//! within its bounds; no `always` property may have a counterexample, and every `sometimes`
//! property that its bounds allow must be reached (so that "holds" is not vacuous).

use redisson_lock_model_check::configs;
use redisson_lock_model_check::properties::applies;
use redisson_lock_model_check::report::{check, model_section};

fn check_model(index: usize) {
    let cfg = &configs::ci()[index];
    let o = check(cfg, 1);
    let violated = o.violations();
    assert!(violated.is_empty(), "{}", model_section(&o));
    let unreached: Vec<_> = o.unreached().into_iter().filter(|n| applies(cfg, n)).collect();
    assert!(
        unreached.is_empty(),
        "never reached {unreached:?}\n{}",
        model_section(&o)
    );
    assert!(o.unique > 1000, "suspiciously small: {} states", o.unique);
}

#[test]
fn rlock_java_and_fresh_owner_with_a_data_loss() {
    check_model(0);
}

#[test]
fn rlock_pinned_reentrant_and_fresh_owner() {
    check_model(1);
}

#[test]
fn rlock_shutdown_and_crash() {
    check_model(2);
}

#[test]
fn fenced_java_and_fresh_owner_with_a_data_loss() {
    check_model(3);
}

#[test]
fn fair_fresh_and_java_waiter_with_a_crash() {
    check_model(4);
}

#[test]
fn read_write_writer_and_two_readers() {
    check_model(5);
}

#[test]
fn the_list_of_models_is_the_one_tested() {
    assert_eq!(configs::ci().len(), 6);
}
